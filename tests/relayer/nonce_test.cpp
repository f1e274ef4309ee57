// SPDX-License-Identifier: Apache-2.0
// The fleet's nonce lock (server/ledger/pg_nonce_lock.hpp) on a throwaway PostgreSQL, and two
// transaction senders of one key (two servers relaying with one api payer) writing at once on an
// anvil that mines a block a second, so transactions wait in its pool where a second transaction of
// one nonce would meet the first.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "anvil_process.hpp"
#include "enact/chain/client.hpp"
#include "enact/secret.hpp"
#include "ledger/ledger.hpp"
#include "ledger/pg_nonce_lock.hpp"
#include "must.hpp"
#include "postgres_fixture.hpp"

namespace enact::ledger::test {
namespace {

using enact::test::anvil_process;
using triggers::test::shared_postgres;
using namespace std::chrono_literals;

std::string db_name(const std::string& url) {
  const size_t at = std::string_view("postgresql:///").size();
  return url.substr(at, url.find('?') - at);
}

/// Advisory locks of this lock's kind held now in `db` (granted).
int held(const std::string& db) {
  return std::stoi(shared_postgres().query_value(
      db, "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 1852796515"));
}

TEST_CASE("nonce lock: one holder at a time across lock objects (servers); released whatever the send answered") {
  const std::string url = shared_postgres().create_database();
  auto a = pg_nonce_lock(url);
  auto b = pg_nonce_lock(url);
  const address payer{1};
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::atomic<int> runs{0};
  std::vector<std::thread> servers;
  for (int s = 0; s < 4; ++s)
    servers.emplace_back([&, s] {
      chain::nonce_lock& lock = s % 2 == 0 ? *a : *b;
      for (int i = 0; i < 10; ++i) {
        auto r = lock.exclusive(payer, [&]() -> result<hash256> {
          const int now = ++inside;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          std::this_thread::sleep_for(2ms);
          --inside;
          ++runs;
          if (i % 3 == 0)
            return fail(rpc_errc::node_error, "refused");  // a failed send releases it too
          return hash256{static_cast<uint8_t>(i)};
        });
        CHECK((r || r.code() == rpc_errc::node_error));
      }
    });
  for (auto& t : servers)
    t.join();
  CHECK(runs == 40);
  CHECK(most == 1);
  CHECK(held(db_name(url)) == 0);
  // Another address is another lock: it does not wait for the first.
  std::atomic<bool> other_ran{false};
  auto outer = a->exclusive(payer, [&]() -> result<hash256> {
    auto inner = b->exclusive(address{2}, [&]() -> result<hash256> {
      other_ran = true;
      return hash256{};
    });
    return inner;
  });
  CHECK(outer);
  CHECK(other_ran);
}

TEST_CASE("nonce lock: a holder that dies releases it; a holder that hangs is waited for at most `wait`") {
  const std::string url = shared_postgres().create_database();
  const std::string db = db_name(url);
  auto dying = pg_nonce_lock(url);
  auto next = pg_nonce_lock(url, {.pool_size = 1, .wait = 300ms});
  const address payer{3};
  std::atomic<bool> holding{false};
  std::atomic<bool> release{false};
  std::thread holder([&] {
    (void)dying->exclusive(payer, [&]() -> result<hash256> {
      holding = true;
      while (!release)
        std::this_thread::sleep_for(5ms);
      return hash256{};
    });
  });
  while (!holding)
    std::this_thread::sleep_for(5ms);
  // Held: the next server gives up after its wait, as unavailable, without running its send.
  bool ran = false;
  const auto start = std::chrono::steady_clock::now();
  auto r = next->exclusive(payer, [&]() -> result<hash256> {
    ran = true;
    return hash256{};
  });
  CHECK_ERRC(r, ledger_errc::storage);
  CHECK_FALSE(ran);
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  // The holder's session ends (its server was killed): the lock is free at once.
  shared_postgres().exec(db,
                         "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = "
                         "1852796515");
  auto after = next->exclusive(payer, [&]() -> result<hash256> {
    ran = true;
    return hash256{};
  });
  CHECK(after);
  CHECK(ran);
  release = true;
  holder.join();
}

TEST_CASE("two servers relaying with one key at once on a chain: every write mined, none lost, no gap after a death") {
  anvil_process node(anvil_process::options{.extra_args = {"--block-time", "1"}});
  const std::string url = shared_postgres().create_database();
  const std::string db = db_name(url);
  const auto& key = anvil_process::dev_private_keys()[1];
  const address from = anvil_process::dev_addresses()[1];

  struct server {
    std::shared_ptr<chain::nonce_lock> lock;
    std::unique_ptr<chain::transaction_sender> sender;
  };
  auto start_server = [&](const std::string& db_url) {
    chain::rpc_options ro;
    ro.url = node.url();
    auto client = std::make_shared<chain::rpc_client>(enact::test::must_ok(chain::rpc_client::create(ro)));
    chain::sender_options so;
    so.receipt_timeout = 60s;
    so.poll_interval = 100ms;
    // No retry on a taken nonce: under the lock no send ever meets one (without it, these
    // senders' stale counts collide within the first writes).
    so.nonce_retries = 0;
    so.shared_nonces = pg_nonce_lock(db_url);
    server s{so.shared_nonces, nullptr};
    s.sender = std::make_unique<chain::transaction_sender>(
        enact::test::must_ok(chain::transaction_sender::create(client, Secret(bytes(key.begin(), key.end())), so)));
    return s;
  };
  std::vector<server> servers;
  servers.push_back(start_server(url));
  servers.push_back(start_server(url));

  // Each write carries its own number, so a write lost to a replacement would be missing below.
  constexpr int kThreads = 6;
  constexpr int kWrites = 4;
  std::mutex mu;
  std::set<std::string> mined;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  const address to = anvil_process::dev_addresses()[7];
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      chain::transaction_sender& sender = *servers[static_cast<size_t>(t % 2)].sender;
      for (int i = 0; i < kWrites; ++i) {
        const std::string tag = "write " + std::to_string(t) + "." + std::to_string(i);
        chain::tx_request req;
        req.to = to;
        req.data.assign(tag.begin(), tag.end());
        req.gas_limit = 100000;
        auto r = sender.send(req);
        std::lock_guard lock(mu);
        if (r && r->status)
          mined.insert(tag);
        else
          failures.push_back(tag + ": " + (r ? std::string("status 0") : r.err().message));
      }
    });
  for (auto& t : threads)
    t.join();
  for (const auto& f : failures)
    MESSAGE(f);
  CHECK(failures.empty());
  CHECK(mined.size() == size_t{kThreads * kWrites});
  const auto count = node.rpc("eth_getTransactionCount", {chain::rpc::data(from), "latest"});
  CHECK(count.as_string() == u256{uint64_t{kThreads * kWrites}}.to_hex());

  // A server dies holding the lock after reading the next nonce and before sending it: the lock
  // goes with its session, and the nonce it read is the next server's, with no gap left behind.
  std::atomic<bool> read_nonce{false};
  std::thread dying([&] {
    (void)servers[0].lock->exclusive(from, [&]() -> result<hash256> {
      (void)node.rpc("eth_getTransactionCount", {chain::rpc::data(from), "pending"});
      read_nonce = true;
      std::this_thread::sleep_for(3s);  // killed meanwhile
      return fail(rpc_errc::unreachable, "killed");
    });
  });
  while (!read_nonce)
    std::this_thread::sleep_for(5ms);
  shared_postgres().exec(db,
                         "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = "
                         "1852796515");
  for (int i = 0; i < 2; ++i) {
    chain::tx_request req;
    req.to = to;
    req.gas_limit = 100000;
    auto r = servers[1].sender->send(req);
    CHECK_MESSAGE(r, (r ? "" : r.err().message));
  }
  dying.join();
  const auto after = node.rpc("eth_getTransactionCount", {chain::rpc::data(from), "latest"});
  CHECK(after.as_string() == u256{uint64_t{kThreads * kWrites + 2}}.to_hex());
}

}  // namespace
}  // namespace enact::ledger::test
