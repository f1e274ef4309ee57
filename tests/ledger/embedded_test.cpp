// SPDX-License-Identifier: Apache-2.0
// The embedded (SQLite) ledger: the conformance suite on a database in a fresh temporary
// directory, and the behaviour that belongs to this backend alone (schema versions, the file).
#include <doctest/doctest.h>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "conformance.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/address.hpp"
#include "enact/pkp/pkp.hpp"
#include "ledger/embedded_chain.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/rpc_surface.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::ledger::test {
namespace {

using enact::test::must_ok;
using enact::test::temp_dir;

class embedded_backend final : public backend {
 public:
  explicit embedded_backend(std::vector<address> payers) : payers_(std::move(payers)) {}
  std::unique_ptr<permission_ledger> open() override {
    return enact::test::must_ok(embedded_ledger::open(db_path(), payers_));
  }
  [[nodiscard]] std::string db_path() const { return (dir_.path() / "ledger.sqlite").string(); }

 private:
  temp_dir dir_{"enact-ledger"};
  std::vector<address> payers_;
};

std::unique_ptr<backend> make_embedded(const std::vector<address>& payers) {
  return std::make_unique<embedded_backend>(payers);
}

/// Runs one SQL statement on the file directly (what another tool or an older build would do).
void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr);
  const std::string msg = sqlite3_errmsg(db);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, msg);
}

int64_t sql_int(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  const int64_t v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

std::string sql_text(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  std::string v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

/// A wallet's own account, as a wallet may create it (docs/protocol.md §3): unmanaged, canonical hash.
account sample_account() {
  account a;
  a.admin[0] = 0x10;
  a.hash = crypto::keccak256(bytes_view(a.admin));
  a.managed = false;
  a.name = "sample";
  return a;
}

}  // namespace

TEST_CASE("ledger conformance: embedded") { run_conformance(make_embedded); }

TEST_CASE("embedded ledger: schema version, WAL journal, no credits written") {
  embedded_backend be({});
  {
    auto l = be.open();
    REQUIRE(l->new_account(write_context{sample_account().admin}, sample_account()));
  }
  CHECK(sql_int(be.db_path(), "PRAGMA user_version") == embedded_ledger::kSchemaVersion);
  CHECK(sql_text(be.db_path(), "PRAGMA journal_mode") == "wal");
  CHECK(sql_int(be.db_path(), "SELECT COUNT(*) FROM events") == 1);
  // Credits are the metering store's: a write leaves the retired columns at their defaults.
  CHECK(sql_int(be.db_path(), "SELECT balance FROM accounts") == 0);
  CHECK(sql_int(be.db_path(), "SELECT charged_credits FROM events") == 0);
  CHECK(sql_int(be.db_path(), "SELECT COUNT(*) FROM payments") == 0);
  // Reopening a current database applies nothing and keeps the data.
  auto l = be.open();
  CHECK(l->get_account(sample_account().hash).has_value());
}

TEST_CASE("embedded ledger: a version 1 database is migrated, its group counts filled in") {
  // Version 2 keeps each account's group count (list_groups' total) in the accounts table. A
  // version 1 file — the column dropped, user_version set back — gets it counted on open.
  embedded_backend be({});
  const account a = sample_account();
  const write_context w{a.admin};
  {
    auto l = be.open();
    REQUIRE(l->new_account(w, a));
    for (const char* name : {"one", "two", "three"}) {
      group g;
      g.name = name;
      REQUIRE(l->add_group(w, a.hash, g));
    }
    REQUIRE(l->remove_group(w, a.hash, 2));
    CHECK(l->list_groups(a.hash, {1, 20}).value().total == 2);
  }
  sql(be.db_path(), "ALTER TABLE accounts DROP COLUMN group_count");
  sql(be.db_path(), "PRAGMA user_version = 1");
  auto l = be.open();
  CHECK(sql_int(be.db_path(), "PRAGMA user_version") == embedded_ledger::kSchemaVersion);
  const auto listed = l->list_groups(a.hash, {1, 20}).value();
  CHECK(listed.total == 2);
  CHECK(listed.items.size() == 2);
  // And kept from there on.
  group g;
  g.name = "four";
  REQUIRE(l->add_group(w, a.hash, g));
  CHECK(l->list_groups(a.hash, {1, 20}).value().total == 3);
  REQUIRE(l->remove_group(w, a.hash, 1));
  CHECK(l->list_groups(a.hash, {1, 1}).value().total == 2);
}

TEST_CASE("embedded ledger: a file of a version that kept credits opens, lists them, skips their events") {
  // Before the metering store the ledger kept balances (accounts.balance), payments and their
  // events (PaymentCredited, CreditsDebited) in this file; the rows stay in an old data directory.
  embedded_backend be({});
  const account a = sample_account();
  const write_context w{a.admin};
  {
    auto l = be.open();
    REQUIRE(l->new_account(w, a));
  }
  const std::string h = "x'" + codec::hex::encode(a.hash) + "'";
  const std::string data = "'{\"accountHash\":\"" + codec::hex::encode_prefixed(a.hash) + "\"}'";
  sql(be.db_path(),
      "INSERT INTO payments (account_id, intent_id, amount_cents, provider, credited, created_at) "
      "VALUES (1, 'pi_old', 900, 'dev', 1, 1)");
  sql(be.db_path(), "UPDATE accounts SET balance = 870");
  sql(be.db_path(), "INSERT INTO events (name, account, sender, data, created_at) VALUES ('PaymentCredited', " + h +
                        ", zeroblob(20), " + data + ", 1)");
  sql(be.db_path(),
      "INSERT INTO events (name, account, sender, data, charged_credits, created_at) VALUES "
      "('CreditsDebited', " +
          h + ", zeroblob(20), " + data + ", 0, 1)");
  auto l = be.open();
  auto* embedded = dynamic_cast<embedded_ledger*>(l.get());
  REQUIRE(embedded != nullptr);
  const auto balances = embedded->balances().value();
  REQUIRE(balances.size() == 1);
  CHECK(balances[0] == std::pair{a.hash, uint64_t{870}});
  // The event stream: the account's creation, then the next write, numbered after the old events.
  group g;
  g.name = "after";
  REQUIRE(l->add_group(w, a.hash, g));
  const auto events = l->events_after(0, 10).value();
  REQUIRE(events.size() == 2);
  CHECK(events[0].name == "AccountCreated");
  CHECK(events[0].sequence == 1);
  CHECK(events[1].name == "GroupAdded");
  CHECK(events[1].sequence == 4);
  CHECK(l->events_after(1, 1).value().at(0).sequence == 4);
  CHECK(l->events_after(4, 10).value().empty());
  // The old balance is left for the import to read; this version never changes it.
  CHECK(sql_int(be.db_path(), "SELECT balance FROM accounts") == 870);
}

TEST_CASE("embedded ledger: a database from a newer build is refused") {
  embedded_backend be({});
  { auto l = be.open(); }
  sql(be.db_path(), "PRAGMA user_version = " + std::to_string(embedded_ledger::kSchemaVersion + 1));
  const auto r = embedded_ledger::open(be.db_path(), {});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.code() == ledger_errc::storage);
  CHECK(r.err().message.find("newer") != std::string::npos);
  // The file is left as it was.
  CHECK(sql_int(be.db_path(), "PRAGMA user_version") == embedded_ledger::kSchemaVersion + 1);
}

TEST_CASE("embedded ledger: storage failures") {
  temp_dir dir{"enact-ledger"};
  struct case_ {
    const char* what;
    std::string path;
  };
  const std::string not_db = (dir.path() / "not-a-database").string();
  {
    std::ofstream f(not_db, std::ios::binary);
    f << std::string(4096, 'x');
  }
  const case_ cases[] = {
      {"a file that is not a database", not_db},
      {"a directory that does not exist", (dir.path() / "missing" / "ledger.sqlite").string()},
      {"a directory", dir.path().string()},
  };
  for (const case_& c : cases) {
    INFO(std::string(c.what));
    const auto r = embedded_ledger::open(c.path, {});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.code() == ledger_errc::storage);
    CHECK(r.err().message.rfind("sqlite: ", 0) == 0);
  }
}

TEST_CASE("embedded ledger: page bounds") {
  embedded_backend be({});
  auto l = be.open();
  const account a = sample_account();
  REQUIRE(l->new_account(write_context{a.admin}, a));
  CHECK(l->list_groups(a.hash, {0, 20}).code() == ledger_errc::invalid_argument);
  CHECK(l->list_wallets(a.hash, {1, 0}).code() == ledger_errc::invalid_argument);
  // A page far past the end is empty, with the total.
  const auto far = l->list_groups(a.hash, {UINT64_MAX, 100});
  REQUIRE(far.has_value());
  CHECK(far->items.empty());
  CHECK(far->total == 0);
}

// --- the embedded chain's identity (docs/protocol.md §1 "embedded chain") ----------------------

/// What the TEE gives for the purpose (tee::tee::server_identifier): keccak256 of the server key.
hash256 identifier_of(const Secret& root) {
  return crypto::keccak256(must_ok(pkp::server_key(root, kEmbeddedChainPurpose)).view());
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST_CASE("embedded chain: derived from the root, deterministic, in range") {
  // Computed apart from the SDK (node:crypto hkdfSync and ethers.keccak256) for the root of 32
  // bytes 0x42: the rule, not this implementation, fixes the value.
  const Secret root(bytes(32, 0x42));
  const embedded_chain c = derive_embedded_chain(identifier_of(root));
  CHECK(c.chain_id == 972535293234469u);
  CHECK(to_checksum_address(c.registry) == "0xE5cDdddd35F23B783C33878900a40C671197a725");
  CHECK(derive_embedded_chain(identifier_of(Secret(bytes(32, 0x42)))) == c);
  CHECK_FALSE(derive_embedded_chain(identifier_of(Secret(bytes(32, 0x43)))).chain_id == c.chain_id);
  CHECK_FALSE(derive_embedded_chain(identifier_of(Secret(bytes(32, 0x43)))).registry == c.registry);

  // The range's ends, and the low-address guard.
  hash256 zero{};
  const embedded_chain low = derive_embedded_chain(zero);
  CHECK(low.chain_id == kDerivedChainIdMin);
  CHECK(to_checksum_address(low.registry) == "0x0100000000000000000000000000000000000000");
  hash256 ones;
  ones.fill(0xff);
  CHECK(derive_embedded_chain(ones).chain_id == kDerivedChainIdMin + UINT64_MAX % kDerivedChainIdSpan);
  hash256 precompile{};
  precompile[31] = 0x09;
  CHECK(derive_embedded_chain(precompile).registry[0] == 0x01);
  hash256 just_above{};
  just_above[29] = 0x01;  // 0x…010000: above 0xffff, kept as it is
  CHECK(derive_embedded_chain(just_above).registry[0] == 0x00);

  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    hash256 id;
    for (auto& b : id)
      b = static_cast<uint8_t>(rng());
    const embedded_chain d = derive_embedded_chain(id);
    REQUIRE(d.chain_id >= uint64_t{1} << 32);
    REQUIRE(d.chain_id < (uint64_t{1} << 52) - (uint64_t{1} << 32));
    REQUIRE(d.chain_id <= 4503599627370476u);  // the largest chain id MetaMask accepts
  }
  CHECK(legacy_embedded_chain().chain_id == 31337);
  CHECK(legacy_embedded_chain().registry == embedded_registry_address());
}

TEST_CASE("embedded chain: the data directory's record") {
  const embedded_chain derived = derive_embedded_chain(identifier_of(Secret(bytes(32, 0x42))));
  const address other = derive_embedded_chain(identifier_of(Secret(bytes(32, 0x43)))).registry;
  {
    // A new directory records the derived pair, and keeps it whatever a later root derives.
    temp_dir dir{"enact-chain"};
    const std::string d = dir.path().string();
    const claimed_chain first = must_ok(claim_embedded_chain(d, derived, {}));
    CHECK(first.chain == derived);
    CHECK(first.source == "derived");
    CHECK(read_text(dir.path() / "embedded-chain") ==
          "chain_id 972535293234469\nregistry "
          "0xE5cDdddd35F23B783C33878900a40C671197a725\n");
    const embedded_chain elsewhere{5, other};
    const claimed_chain again = must_ok(claim_embedded_chain(d, elsewhere, {}));
    CHECK(again.chain == derived);
    CHECK(again.source == "recorded");
    // An explicit value equal to the record is fine; one that differs is refused.
    CHECK(must_ok(claim_embedded_chain(d, elsewhere, {derived.chain_id, derived.registry})).chain == derived);
    const auto wrong_id = claim_embedded_chain(d, derived, {derived.chain_id + 1, std::nullopt});
    REQUIRE_FALSE(wrong_id.has_value());
    CHECK(wrong_id.code() == ledger_errc::invalid_argument);
    CHECK(wrong_id.err().message.find("contradicts") != std::string::npos);
    CHECK(claim_embedded_chain(d, derived, {std::nullopt, other}).code() == ledger_errc::invalid_argument);
    // Nothing of the atomic write (storage/atomic_file.hpp) is left beside the record.
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
      CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  }
  {
    // A directory that holds a ledger but no record keeps the chain it is on: its /rpc file's,
    // which an earlier release wrote for 31337 unless configured otherwise.
    for (const embedded_chain& before : {legacy_embedded_chain(), embedded_chain{777, other}}) {
      temp_dir dir{"enact-chain"};
      const std::string d = dir.path().string();
      {
        auto book = must_ok(embedded_ledger::open(d + "/ledger.sqlite", {}));
        (void)must_ok(rpc_surface::open(*book, {before.chain_id, before.registry, d + "/rpc.sqlite"}));
      }
      const auto contradicted = claim_embedded_chain(d, derived, {before.chain_id + 1, std::nullopt});
      REQUIRE_FALSE(contradicted.has_value());
      CHECK(contradicted.err().message.find("rpc.sqlite") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(dir.path() / "embedded-chain"));
      const claimed_chain kept = must_ok(claim_embedded_chain(d, derived, {before.chain_id, std::nullopt}));
      CHECK(kept.chain == before);
      CHECK(kept.source == "kept and configured");
      CHECK(must_ok(claim_embedded_chain(d, derived, {})).chain == before);
    }
    {
      // An /rpc file that is no database is not taken for a chain.
      temp_dir dir{"enact-chain"};
      { std::ofstream(dir.path() / "rpc.sqlite") << std::string(4096, 'x'); }
      CHECK(claim_embedded_chain(dir.path().string(), derived, {}).code() == ledger_errc::invalid_argument);
      CHECK_FALSE(std::filesystem::exists(dir.path() / "embedded-chain"));
    }
    // With the ledger file alone, the former pair; explicit values replace its parts.
    {
      temp_dir dir{"enact-chain"};
      { std::ofstream(dir.path() / "ledger.sqlite") << ""; }
      const claimed_chain kept = must_ok(claim_embedded_chain(dir.path().string(), derived, {}));
      CHECK(kept.chain == legacy_embedded_chain());
      CHECK(kept.source == "kept");
    }
    temp_dir dir{"enact-chain"};
    { std::ofstream(dir.path() / "ledger.sqlite") << ""; }
    const claimed_chain configured = must_ok(claim_embedded_chain(dir.path().string(), derived, {7, std::nullopt}));
    CHECK(configured.chain == embedded_chain{7, embedded_registry_address()});
    CHECK(configured.source == "kept and configured");
    CHECK(must_ok(claim_embedded_chain(dir.path().string(), derived, {})).chain == configured.chain);
  }
  {
    // Explicit values out of range are refused before anything is written.
    temp_dir dir{"enact-chain"};
    const std::string d = dir.path().string();
    CHECK(claim_embedded_chain(d, derived, {0, std::nullopt}).code() == ledger_errc::invalid_argument);
    CHECK(claim_embedded_chain(d, derived, {uint64_t{1} << 53, std::nullopt}).code() == ledger_errc::invalid_argument);
    CHECK(claim_embedded_chain(d, derived, {std::nullopt, address{}}).code() == ledger_errc::invalid_argument);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "embedded-chain"));
    CHECK(must_ok(claim_embedded_chain(d, derived, {(uint64_t{1} << 53) - 1, std::nullopt})).chain.chain_id ==
          (uint64_t{1} << 53) - 1);
  }
  // A malformed record is refused, naming the file, and left as it is.
  const std::string registry = to_checksum_address(derived.registry);
  const std::string lower = "0x" + codec::hex::encode(derived.registry);
  const std::vector<std::string> malformed{
      std::string(),
      std::string("chain_id 5\n"),
      "registry " + registry + "\nchain_id 5\n",
      "chain_id 5\nregistry " + registry,
      "chain_id 5\nregistry " + registry + "\n\n",
      "chain_id 0\nregistry " + registry + "\n",
      "chain_id 05\nregistry " + registry + "\n",
      "chain_id -5\nregistry " + registry + "\n",
      "chain_id 5 \nregistry " + registry + "\n",
      "chain_id 9007199254740992\nregistry " + registry + "\n",
      "chain_id 5\nregistry 0x1234\n",
      "chain_id 5\nregistry 0x" + std::string(40, '0') + "\n",
      "chain_id 5\nregistry " + lower.substr(0, 2) + "A" + lower.substr(3) + "\n",  // a checksum that is wrong
      "chain_id  5\nregistry " + registry + "\n",
      "chain_id 5\r\nregistry " + registry + "\n",
      std::string(300, 'x')};
  for (const std::string& bad : malformed) {
    INFO(bad);
    temp_dir dir{"enact-chain"};
    { std::ofstream(dir.path() / "embedded-chain", std::ios::binary) << bad; }
    const auto r = claim_embedded_chain(dir.path().string(), derived, {});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.code() == ledger_errc::invalid_argument);
    CHECK(r.err().message.find("embedded-chain is malformed") != std::string::npos);
    CHECK(read_text(dir.path() / "embedded-chain") == bad);
  }
  {
    // Lowercase hex is read too (an operator may have typed it).
    temp_dir dir{"enact-chain"};
    { std::ofstream(dir.path() / "embedded-chain", std::ios::binary) << "chain_id 5\nregistry " << lower << "\n"; }
    CHECK(must_ok(claim_embedded_chain(dir.path().string(), derived, {})).chain == embedded_chain{5, derived.registry});
  }
}

}  // namespace enact::ledger::test
