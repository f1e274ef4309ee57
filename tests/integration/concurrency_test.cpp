// SPDX-License-Identifier: Apache-2.0
// Concurrent clients against one server. Two client threads each send 500 mixed writes to one
// account at the same time (write surcharge 1 credit, credits bought first); afterwards every row
// a thread saw succeed is there exactly once and nothing else is, wallet derivation indexes are
// contiguous and their paths distinct, the balance is what was bought minus one credit per
// successful write, and the server logged exactly one line per request. Racing confirmations of
// one payment intent credit it once; racing wallet creations all succeed at contiguous indexes;
// racing writes on a short balance stop exactly where it runs out, never below zero.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "steps.hpp"

namespace enact::itest {
namespace {

constexpr int kThreads = 2;
constexpr int kWritesPerThread = 500;
constexpr uint64_t kBought = 1500;

/// What one thread saw succeed.
struct thread_record {
  std::map<uint64_t, std::string> groups;  // live group id -> last name written
  std::map<uint64_t, std::set<std::string>> group_pkps, group_cids;
  std::set<std::string> actions;               // hashed CIDs registered
  std::map<std::string, std::string> wallets;  // pkp id -> derivation path
  uint64_t writes_ok = 0;
  uint64_t requests = 0;
  std::vector<std::string> request_ids;
  std::vector<std::string> failures;  // unexpected answers
};

void run_writer(int port, int t, const httplib::Headers& auth, thread_record& rec) {
  http_client c("127.0.0.1", port, /*keep_alive=*/true);
  const std::string tag = "t" + std::to_string(t);
  std::string last_cid, last_pkp;
  const auto send = [&](const std::string& path, const json::object& body) {
    const response r = c.post(path, body, auth);
    ++rec.requests;
    rec.request_ids.push_back(r.header("X-Request-Id"));
    if (r.status == 200)
      ++rec.writes_ok;
    else
      rec.failures.push_back(path + ": " + r.describe());
    return r;
  };
  const auto newest_group = [&]() -> std::optional<uint64_t> {
    if (rec.groups.empty())
      return std::nullopt;
    return rec.groups.rbegin()->first;
  };
  for (int i = 0; i < kWritesPerThread; ++i) {
    const std::string name = tag + "-" + std::to_string(i);
    const int op = i % 8;
    const auto g = newest_group();
    if (op == 0 || op == 7 || !g) {
      const response r = send("/add_group", json::object{{"name", name}});
      if (r.status == 200)
        rec.groups[u_of(r.body, "group_id")] = name;
    } else if (op == 1) {
      json::array pkps, cids;
      for (const auto& p : rec.group_pkps[*g])
        pkps.push_back(json::string(p));
      for (const auto& h : rec.group_cids[*g])
        cids.push_back(json::string(h));
      const response r = send("/update_group", json::object{{"group_id", *g},
                                                            {"name", name + "-upd"},
                                                            {"description", "updated"},
                                                            {"pkp_ids_permitted", pkps},
                                                            {"cid_hashes_permitted", cids}});
      if (r.status == 200)
        rec.groups[*g] = name + "-upd";
    } else if (op == 2) {
      last_cid = cid_of_code("// " + name + "\nEnact.setResponse(1);");
      const response r = send("/add_action", json::object{{"action_ipfs_cid", last_cid}, {"name", name}});
      if (r.status == 200)
        rec.actions.insert(s_of(r.body, "hashed_cid"));
    } else if (op == 3) {
      const response r = send("/add_action_to_group", json::object{{"group_id", *g}, {"action_ipfs_cid", last_cid}});
      if (r.status == 200)
        rec.group_cids[*g].insert(hashed_cid_hex(last_cid));
    } else if (op == 4) {
      const response r = send("/create_wallet", json::object{{"name", name}});
      if (r.status == 200) {
        last_pkp = s_of(r.body, "pkp_id");
        rec.wallets[last_pkp] = s_of(r.body, "derivation_path");
      }
    } else if (op == 5) {
      const response r = send("/add_pkp_to_group", json::object{{"group_id", *g}, {"pkp_id", last_pkp}});
      if (r.status == 200)
        rec.group_pkps[*g].insert(last_pkp);
    } else if (op == 6) {
      // Remove the oldest of this thread's groups (keeping the newest for the next steps).
      const uint64_t oldest = rec.groups.begin()->first;
      if (oldest == *g) {
        const response r = send("/add_group", json::object{{"name", name}});
        if (r.status == 200)
          rec.groups[u_of(r.body, "group_id")] = name;
      } else {
        const response r = send("/remove_group", json::object{{"group_id", oldest}});
        if (r.status == 200) {
          rec.groups.erase(oldest);
          rec.group_pkps.erase(oldest);
          rec.group_cids.erase(oldest);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("two threads of mixed writes on one account: no lost or duplicated rows") {
  // 1,000 writes of one key as fast as two threads go: over the per-key limit of the defaults.
  server_process srv({"--dev", "--write-surcharge", "1", "--key-rate", "0"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "busy");
  CHECK(buy_credits(c, acct.auth(), kBought) == kBought);
  // One thread writes with the account key, the other with a usage key holding every scope (its
  // creation is one more write).
  const usage_keys uk = create_usage_key(c, acct.auth(),
                                         {{"name", "writer"},
                                          {"can_create_groups", true},
                                          {"can_delete_groups", true},
                                          {"can_create_pkps", true},
                                          {"manage_ipfs_ids_in_groups", json::array{0}},
                                          {"add_pkp_to_groups", json::array{0}},
                                          {"remove_pkp_from_groups", json::array{0}}});
  const uint64_t setup_requests = 4, setup_writes = 1;

  std::vector<thread_record> recs(kThreads);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back(run_writer, srv.port(), t, t == 0 ? acct.auth() : uk.auth(), std::ref(recs[t]));
    for (auto& th : threads)
      th.join();
  }

  uint64_t requests = setup_requests, writes_ok = setup_writes;
  std::set<std::string> ids;
  for (const auto& r : recs) {
    CHECK(r.requests == kWritesPerThread);
    for (const auto& f : r.failures)
      FAIL_CHECK("unexpected answer: " << f);
    requests += r.requests;
    writes_ok += r.writes_ok;
    for (const auto& id : r.request_ids) {
      CHECK(!id.empty());
      CHECK(ids.insert(id).second);  // request ids are unique
    }
  }

  // One log line per request, before any further request is made (the log is written
  // asynchronously: wait until the lines of every request so far are there).
  {
    const auto lines = srv.await_request_count(requests);
    std::map<std::string, int> per_id;
    for (const auto& l : lines)
      ++per_id[std::string(l.at("request_id").as_string())];
    CHECK(lines.size() == requests);
    for (const auto& id : ids)
      CHECK_MESSAGE(per_id[id] == 1, "request " << id);
  }

  CHECK(balance_of(c, acct.auth()) == kBought - writes_ok);

  // Groups: exactly the live ones of both threads, with their last names and sets.
  std::map<uint64_t, const thread_record*> owner_of;
  for (const auto& r : recs)
    for (const auto& [id, name] : r.groups)
      CHECK_MESSAGE(owner_of.emplace(id, &r).second, "group id " << id << " given to both threads");
  const auto groups = list_all(c, "/list_groups", acct.auth());
  CHECK(groups.size() == owner_of.size());
  std::set<uint64_t> listed_ids;
  for (const auto& g : groups) {
    const uint64_t id = g.at("group_id").to_number<uint64_t>();
    CHECK_MESSAGE(listed_ids.insert(id).second, "group " << id << " listed twice");
    const auto it = owner_of.find(id);
    if (it == owner_of.end()) {
      FAIL_CHECK("group " << id << " listed but not created (or removed)");
      continue;
    }
    const thread_record& r = *it->second;
    CHECK(g.at("name").as_string() == r.groups.at(id));
    const auto pkps = r.group_pkps.find(id);
    CHECK(string_set(g, "pkp_ids_permitted") == (pkps == r.group_pkps.end() ? std::set<std::string>{} : pkps->second));
    const auto cids = r.group_cids.find(id);
    CHECK(string_set(g, "cid_hashes_permitted") ==
          (cids == r.group_cids.end() ? std::set<std::string>{} : cids->second));
  }

  // Actions: each registered once.
  std::set<std::string> expected_actions;
  for (const auto& r : recs)
    expected_actions.insert(r.actions.begin(), r.actions.end());
  const auto actions = list_all(c, "/list_actions", acct.auth());
  CHECK(actions.size() == expected_actions.size());
  std::set<std::string> listed_actions;
  for (const auto& a : actions)
    listed_actions.insert(std::string(a.at("hashed_cid").as_string()));
  CHECK(listed_actions == expected_actions);

  // Wallets: distinct paths at contiguous indexes 0..n-1, as each thread was told.
  std::map<std::string, std::string> expected_wallets;
  for (const auto& r : recs)
    for (const auto& [pkp, path] : r.wallets)
      CHECK_MESSAGE(expected_wallets.emplace(pkp, path).second, "wallet " << pkp << " given to both threads");
  const auto wallets = list_all(c, "/list_wallets", acct.auth());
  CHECK(wallets.size() == expected_wallets.size());
  std::set<std::string> paths, want_paths;
  for (const auto& w : wallets) {
    const std::string pkp(w.at("pkp_id").as_string());
    const std::string path(w.at("derivation_path").as_string());
    CHECK(paths.insert(path).second);
    const auto it = expected_wallets.find(pkp);
    if (it == expected_wallets.end())
      FAIL_CHECK("wallet " << pkp << " listed but never created");
    else
      CHECK(it->second == path);
  }
  for (uint64_t i = 0; i < expected_wallets.size(); ++i)
    want_paths.insert(api_path_hex(acct.api_key_hash, i));
  CHECK(paths == want_paths);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, uk.value});
}

}  // namespace enact::itest

namespace enact::itest {
namespace {

/// `clients` keep-alive connections to `srv` at once, each making `calls` calls of
/// `call(connection, client_index)`; returns when all are done.
template <class Call>
void from_parallel_clients(const server_process& srv, int clients, int calls, Call call) {
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t)
    threads.emplace_back([&, t] {
      http_client mine("127.0.0.1", srv.port(), /*keep_alive=*/true);
      for (int i = 0; i < calls; ++i)
        call(mine, t);
    });
  for (auto& th : threads)
    th.join();
}

}  // namespace

TEST_CASE("racing confirmations of one payment intent credit it exactly once") {
  server_process srv({"--dev"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "racer");
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    const uint64_t before = balance_of(c, acct.auth());
    const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, acct.auth());
    ITEST_REQUIRE_STATUS(intent, 200);
    const json::object body{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}};
    constexpr int kRacers = 8;
    std::vector<int> statuses(kRacers);
    std::vector<std::thread> threads;
    for (int t = 0; t < kRacers; ++t)
      threads.emplace_back([&, t] {
        http_client mine("127.0.0.1", srv.port());
        statuses[t] = mine.post("/billing/confirm_payment", body, acct.auth()).status;
      });
    for (auto& th : threads)
      th.join();
    CHECK(std::count(statuses.begin(), statuses.end(), 200) == 1);
    CHECK(std::count(statuses.begin(), statuses.end(), 409) == kRacers - 1);
    CHECK(balance_of(c, acct.auth()) == before + 500);
  }
  CHECK(srv.stop().clean());
}

TEST_CASE("concurrent wallet creation: contiguous derivation indexes, no failures") {
  server_process srv;
  auto c = srv.client();
  const account_keys acct = create_account(c, "wallets");
  constexpr int kThreads = 8, kEach = 25;
  std::vector<std::vector<std::string>> paths(kThreads);
  std::vector<std::vector<std::string>> failures(kThreads);
  from_parallel_clients(srv, kThreads, kEach, [&](http_client& mine, int t) {
    const response r = mine.post("/create_wallet", json::object{{"name", "w"}}, acct.auth());
    if (r.status == 200)
      paths[t].push_back(s_of(r.body, "derivation_path"));
    else
      failures[t].push_back(r.describe());
  });
  std::set<std::string> got, want;
  for (int t = 0; t < kThreads; ++t) {
    for (const auto& f : failures[t])
      FAIL_CHECK("create_wallet failed: " << f);
    for (const auto& p : paths[t])
      CHECK(got.insert(p).second);
  }
  for (uint64_t i = 0; i < kThreads * kEach; ++i)
    want.insert(api_path_hex(acct.api_key_hash, i));
  CHECK(got == want);
  CHECK(list_all(c, "/list_wallets", acct.auth()).size() == kThreads * kEach);
  CHECK(srv.stop().clean());
}

TEST_CASE("racing writes on a short balance: exactly as many succeed as it covers") {
  server_process srv({"--dev", "--write-surcharge", "7"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "short");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);  // covers 71 writes of 7, leaves 3
  constexpr int kThreads = 8, kEach = 12;          // 96 attempts
  std::vector<int> ok(kThreads, 0), refused(kThreads, 0), other(kThreads, 0);
  from_parallel_clients(srv, kThreads, kEach, [&](http_client& mine, int t) {
    const response r = mine.post("/add_group", json::object{{"name", "g"}}, acct.auth());
    if (r.status == 200)
      ++ok[t];
    else if (r.status == 402 && r.error_code() == "insufficient_credits")
      ++refused[t];
    else
      ++other[t];
  });
  int oks = 0, refusals = 0, others = 0;
  for (int t = 0; t < kThreads; ++t) {
    oks += ok[t];
    refusals += refused[t];
    others += other[t];
  }
  CHECK(oks == 71);
  CHECK(refusals == kThreads * kEach - 71);
  CHECK(others == 0);
  CHECK(balance_of(c, acct.auth()) == 3);
  CHECK(list_all(c, "/list_groups", acct.auth()).size() == 71);
  CHECK(srv.stop().clean());
}

}  // namespace enact::itest
