// SPDX-License-Identifier: Apache-2.0
// The content store in PostgreSQL (core/pg_content_store.hpp) on a throwaway server
// (tests/triggers' postgres_fixture): what the local store does, and what a fleet needs: code
// stored through one server is read through another, a row changed in the database is refused
// (and repaired by storing the code again), the size cap holds on write and on read, and servers
// uploading for one account at once never pass its quota.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cases.hpp"
#include "core/pg_content_store.hpp"
#include "enact/codec/hex.hpp"
#include "postgres_fixture.hpp"

namespace enact::core::test {
namespace {

using triggers::test::shared_postgres;

/// The database a fixture URL names (postgresql:///NAME?host=…).
std::string db_name(const std::string& url) {
  const size_t at = std::string_view("postgresql:///").size();
  return url.substr(at, url.find('?') - at);
}

content_store open_on(const std::string& url, pg_content_options o = {}) {
  return enact::test::must_ok(open_postgres_content_store(url, o));
}

TEST_CASE("postgres content store: round trip, repeated uploads, quotas") {
  check_basics(open_on(shared_postgres().create_database()));
}

TEST_CASE("postgres content store: code stored through one server runs on another") {
  const std::string url = shared_postgres().create_database();
  const content_store a = open_on(url);
  const content_store b = open_on(url);  // the schema exists: opened, not created again
  const bytes code = code_of("export default (x) => x + 1;");
  const std::string cid = MUST(a.put_for(hash256{1}, code, {}));
  auto got = MUST(b.get(cid));
  REQUIRE(got);
  CHECK(*got == code);
  // The upload record is shared too: the account's quota counts what it stored anywhere.
  CHECK(MUST(b.usage(hash256{1})).count == 1);
  CHECK(MUST(b.put_for(hash256{1}, code, {.max_bytes = 0, .max_count = 1})) == cid);
  CHECK(shared_postgres().query_value(db_name(url), "SELECT COUNT(*) FROM content_code") == "1");
}

TEST_CASE("postgres content store: a row changed in the database never runs; storing the code again repairs it") {
  const std::string url = shared_postgres().create_database();
  const std::string db = db_name(url);
  const content_store store = open_on(url);
  const bytes code = code_of("export default () => 'the audited code';");
  const std::string cid = MUST(store.put(code));
  const std::string evil = codec::hex::encode(code_of("export default () => 'steal the keys';"));
  shared_postgres().exec(db, "UPDATE content_code SET code = decode('" + evil + "', 'hex') WHERE cid = '" + cid + "'");
  CHECK_ERRC(store.get(cid), api_errc::internal);
  CHECK_ERRC(open_on(url).get(cid), api_errc::internal);  // another server: the same refusal
  // Uploading the code again (what a client does after the refusal) puts the right bytes back.
  CHECK(MUST(store.put_for(hash256{2}, code, {})) == cid);
  auto got = MUST(store.get(cid));
  REQUIRE(got);
  CHECK(*got == code);
  // A row moved under another CID is refused the same way.
  const bytes other = code_of("export default () => 'other';");
  const std::string other_cid = MUST(store.put(other));
  shared_postgres().exec(db, "UPDATE content_code SET code = (SELECT code FROM content_code WHERE cid = '" + cid +
                                 "') WHERE cid = '" + other_cid + "'");
  CHECK_ERRC(store.get(other_cid), api_errc::internal);
}

TEST_CASE("postgres content store: the size cap holds on write and on read") {
  const std::string url = shared_postgres().create_database();
  const std::string db = db_name(url);
  const content_store store = open_on(url, {.pool_size = 2, .max_code_bytes = 64});
  CHECK_ERRC(store.put(bytes(65, 'a')), api_errc::invalid_request);
  CHECK_ERRC(store.put_for(hash256{3}, bytes(65, 'a'), {}), api_errc::invalid_request);
  CHECK(MUST(store.usage(hash256{3})).count == 0);
  const bytes code(64, 'b');
  const std::string cid = MUST(store.put(code));
  // A row grown in the database past the cap is not read into memory.
  shared_postgres().exec(db, "UPDATE content_code SET code = code || code WHERE cid = '" + cid + "'");
  CHECK_ERRC(store.get(cid), api_errc::unavailable);
}

TEST_CASE("postgres content store: servers uploading for one account at once never pass its quota") {
  const std::string url = shared_postgres().create_database();
  const content_store a = open_on(url);
  const content_store b = open_on(url);
  const hash256 account{4};
  const upload_quota quota{.max_bytes = 0, .max_count = 5};
  std::atomic<int> stored{0};
  std::vector<std::thread> servers;
  for (int s = 0; s < 4; ++s)
    servers.emplace_back([&, s] {
      const content_store& store = s % 2 == 0 ? a : b;
      for (int i = 0; i < 6; ++i)
        if (store.put_for(account, code_of("export default () => " + std::to_string(s * 100 + i) + ";"), quota))
          ++stored;
    });
  for (auto& t : servers)
    t.join();
  CHECK(stored == 5);
  CHECK(MUST(a.usage(account)).count == 5);
  // The same first upload of one CID from many servers at once: all succeed, one row.
  const bytes same = code_of("export default () => 'same';");
  std::atomic<int> ok{0};
  servers.clear();
  for (int s = 0; s < 4; ++s)
    servers.emplace_back([&, s] {
      if ((s % 2 == 0 ? a : b).put_for(hash256{static_cast<uint8_t>(20 + s)}, same, {}))
        ++ok;
    });
  for (auto& t : servers)
    t.join();
  CHECK(ok == 4);
}

TEST_CASE("postgres content store: an unreachable database is unavailable, its password never told") {
  auto r = open_postgres_content_store("postgres://enact:hunter2-secret@127.0.0.1:1/none");
  CHECK_ERRC(r, api_errc::unavailable);
  if (!r)
    CHECK(r.err().message.find("hunter2-secret") == std::string::npos);
}

TEST_CASE("postgres content store: an upload waiting on a stuck server's lock fails after the lock timeout") {
  // Another session holds the account's upload lock in a transaction it never ends (a server
  // stuck mid-upload): an upload for that account fails as unavailable after the lock timeout
  // (60 s by default; 3 s here) instead of hanging its request; other accounts are not held up.
  const std::string url = shared_postgres().create_database();
  const content_store store = open_on(url, {.lock_timeout_seconds = 3});
  const hash256 account{7};
  PGconn* stuck = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(stuck) == CONNECTION_OK);
  auto exec = [&](const std::string& sql) {
    PGresult* r = PQexec(stuck, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    PQclear(r);
    REQUIRE((st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK));
  };
  exec("BEGIN");
  exec("SELECT pg_advisory_xact_lock(" + std::to_string(0x656e6163) + ", hashtext('" + codec::hex::encode(account) +
       "'))");
  const auto start = std::chrono::steady_clock::now();
  CHECK_ERRC(store.put_for(account, code_of("export default () => 'held';"), {}), api_errc::unavailable);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= std::chrono::milliseconds(2900));
  CHECK(waited < std::chrono::seconds(30));
  // Another account uploads at once meanwhile.
  CHECK(store.put_for(hash256{8}, code_of("export default () => 'free';"), {}));
  exec("COMMIT");
  PQfinish(stuck);
  CHECK(store.put_for(account, code_of("export default () => 'held';"), {}));
}

}  // namespace
}  // namespace enact::core::test
