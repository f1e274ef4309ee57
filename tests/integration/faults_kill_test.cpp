// SPDX-License-Identifier: Apache-2.0
// SIGKILL during concurrent writes and during a burst of action runs (faults_test.hpp).
#include "faults_test.hpp"

namespace enact::itest {

namespace {

// --- the write model of the SIGKILL-during-writes test -----------------------------------------

struct group_state {
  std::string name;
  std::string description;
  std::set<std::string> pkps;
  std::set<std::string> cids;
  friend bool operator==(const group_state&, const group_state&) = default;
};

group_state group_of(const json::value& g) {
  return group_state{s_of(g, "name"), s_of(g, "description"), string_set(g, "pkp_ids_permitted"),
                     string_set(g, "cid_hashes_permitted")};
}

enum class write_kind { add_group, create_wallet, add_usage_api_key, add_action, update_group, remove_group };

const char* path_of(write_kind k) {
  static constexpr const char* kPaths[] = {"/add_group",  "/create_wallet", "/add_usage_api_key",
                                           "/add_action", "/update_group",  "/remove_group"};  // write_kind's order
  return kPaths[static_cast<size_t>(k)];
}

struct write_request {
  write_kind kind;
  json::object body;
  uint64_t group = 0;  // update_group, remove_group
  std::string label;   // the name of what add_* creates (unique), or the hashed CID of add_action
};

/// One account's state as its writer knows it: what every acknowledged write (200) made it, plus
/// the one write in flight when the server died, whose outcome is unknown.
struct account_model {
  account_keys acct;
  std::map<uint64_t, group_state> groups;
  std::map<std::string, std::string> wallets;  // pkp id -> name
  std::map<std::string, std::string> keys;     // key hash -> name
  std::set<std::string> actions;               // hashed CIDs
  std::optional<write_request> in_flight;
  size_t applied = 0;  // writes applied: acknowledged, and the in-flight one once resolved
  size_t sent = 0;
  std::vector<std::string> failures;  // unexpected answers (checked on the main thread)
};

/// What a list of the account shows now.
struct observed_state {
  std::map<uint64_t, group_state> groups;
  std::map<std::string, std::string> wallets;
  std::map<std::string, std::string> keys;
  std::set<std::string> actions;
};

observed_state observe(http_client& c, const httplib::Headers& owner) {
  observed_state o;
  for (const auto& g : list_all(c, "/list_groups", owner))
    o.groups[g.at("group_id").to_number<uint64_t>()] = group_of(g);
  for (const auto& w : list_all(c, "/list_wallets", owner))
    o.wallets[s_of(w, "pkp_id")] = s_of(w, "name");
  for (const auto& k : list_all(c, "/list_api_keys", owner))
    o.keys[s_of(k, "hash")] = s_of(k, "name");
  for (const auto& a : list_all(c, "/list_actions", owner))
    o.actions.insert(s_of(a, "hashed_cid"));
  return o;
}

/// The next write of a random mix, valid for the model's acknowledged state.
write_request next_write(account_model& m, std::mt19937& rng, size_t n) {
  const auto pick = [&](size_t size) {
    return std::uniform_int_distribution<size_t>(0, size - 1)(rng);
  };
  const auto some_pkps = [&] {
    json::array a;
    for (const auto& [pkp, _] : m.wallets)
      if (pick(3) == 0)
        a.push_back(json::string(pkp));
    return a;
  };
  const auto some_cids = [&] {
    json::array a;
    for (int i = 0; i < 6; ++i)
      if (pick(3) == 0)
        a.push_back(json::string(keccak_hex("cid " + std::to_string(i))));
    return a;
  };
  const std::string label = "w" + std::to_string(n);
  const size_t roll = pick(100);
  if (roll < 20 || m.groups.empty())
    return {write_kind::add_group,
            {{"name", label},
             {"description", "d" + label},
             {"pkp_ids_permitted", some_pkps()},
             {"cid_hashes_permitted", some_cids()}},
            0,
            label};
  if (roll < 35)
    return {write_kind::create_wallet, {{"name", label}}, 0, label};
  if (roll < 50) {
    json::array exec;
    for (const auto& [id, _] : m.groups)
      if (pick(2) == 0)
        exec.push_back(id);
    return {write_kind::add_usage_api_key,
            {{"name", label}, {"can_create_groups", pick(2) == 0}, {"execute_in_groups", exec}},
            0,
            label};
  }
  if (roll < 65) {
    const std::string cid = cid_of_code("Enact.setResponse('" + label + "')");
    return {write_kind::add_action, {{"action_ipfs_cid", cid}, {"name", label}}, 0, hashed_cid_hex(cid)};
  }
  auto it = m.groups.begin();
  std::advance(it, static_cast<long>(pick(m.groups.size())));
  if (roll < 90)
    return {write_kind::update_group,
            {{"group_id", it->first},
             {"name", label},
             {"description", "u" + label},
             {"pkp_ids_permitted", some_pkps()},
             {"cid_hashes_permitted", some_cids()}},
            it->first,
            label};
  return {write_kind::remove_group, {{"group_id", it->first}}, it->first, label};
}

group_state requested_group(const write_request& w) {
  group_state g{std::string(w.body.at("name").as_string()), std::string(w.body.at("description").as_string()), {}, {}};
  for (const auto& p : w.body.at("pkp_ids_permitted").as_array())
    g.pkps.insert(std::string(p.as_string()));
  for (const auto& h : w.body.at("cid_hashes_permitted").as_array())
    g.cids.insert(std::string(h.as_string()));
  return g;
}

/// Applies an acknowledged write (its 200 answer) to the model; false when the answer does not
/// describe what was asked.
bool apply_ack(account_model& m, const write_request& w, const json::value& answer) {
  switch (w.kind) {
    case write_kind::add_group: {
      const uint64_t id = answer.at("group_id").to_number<uint64_t>();
      if (m.groups.contains(id) || group_of(answer) != requested_group(w))
        return false;
      m.groups[id] = group_of(answer);
      break;
    }
    case write_kind::update_group:
      if (answer.at("group_id").to_number<uint64_t>() != w.group || group_of(answer) != requested_group(w))
        return false;
      m.groups[w.group] = group_of(answer);
      break;
    case write_kind::remove_group:
      if (m.groups.erase(w.group) != 1)
        return false;
      break;
    case write_kind::create_wallet:
      m.wallets[s_of(answer, "pkp_id")] = w.label;
      break;
    case write_kind::add_usage_api_key:
      m.keys[s_of(answer, "hash")] = w.label;
      break;
    case write_kind::add_action:
      if (s_of(answer, "hashed_cid") != w.label)
        return false;
      m.actions.insert(w.label);
      break;
  }
  ++m.applied;
  return true;
}

/// The recovered state is the model's, or the model's with the in-flight write applied whole.
/// On success the model becomes the observed state (the in-flight write resolved).
void check_recovered(account_model& m, const observed_state& o) {
  INFO("account " << m.acct.api_key_hash << ", in flight: " << (m.in_flight ? path_of(m.in_flight->kind) : "nothing"));
  const std::optional<write_request>& f = m.in_flight;
  const auto is = [&](write_kind k) {
    return f && f->kind == k;
  };
  bool applied = false;

  // Groups: equal, except the one group the in-flight write touched.
  std::map<uint64_t, group_state> expect = m.groups;
  if (is(write_kind::add_group)) {
    std::vector<uint64_t> extra;
    for (const auto& [id, g] : o.groups)
      if (!m.groups.contains(id))
        extra.push_back(id);
    CHECK(extra.size() <= 1);
    if (extra.size() == 1) {
      CHECK(o.groups.at(extra[0]) == requested_group(*f));
      expect[extra[0]] = requested_group(*f);
      applied = true;
    }
  } else if (is(write_kind::update_group)) {
    REQUIRE(o.groups.contains(f->group));
    if (o.groups.at(f->group) != m.groups.at(f->group)) {
      CHECK(o.groups.at(f->group) == requested_group(*f));
      expect[f->group] = requested_group(*f);
      applied = true;
    }  // every update renames the group (labels are unique), so unchanged means not applied
  } else if (is(write_kind::remove_group)) {
    if (!o.groups.contains(f->group)) {
      expect.erase(f->group);
      applied = true;
    }
  }
  CHECK(o.groups == expect);

  // Wallets, keys and actions: the acknowledged ones, plus at most the in-flight one.
  const auto check_named = [&](const std::map<std::string, std::string>& acked,
                               const std::map<std::string, std::string>& seen, write_kind k) {
    std::map<std::string, std::string> extra;
    for (const auto& [id, name] : seen)
      if (!acked.contains(id))
        extra.emplace(id, name);
    for (const auto& [id, name] : acked) {
      INFO("acknowledged " << id << " (" << name << ")");
      CHECK(seen.contains(id));
      if (seen.contains(id))
        CHECK(seen.at(id) == name);
    }
    if (is(k)) {
      CHECK(extra.size() <= 1);
      if (extra.size() == 1) {
        CHECK(extra.begin()->second == f->label);
        applied = true;
      }
    } else {
      CHECK(extra.empty());
    }
  };
  check_named(m.wallets, o.wallets, write_kind::create_wallet);
  check_named(m.keys, o.keys, write_kind::add_usage_api_key);
  std::set<std::string> actions = m.actions;
  if (is(write_kind::add_action) && o.actions.contains(f->label)) {
    actions.insert(f->label);
    applied = true;
  }
  CHECK(o.actions == actions);

  m.groups = o.groups;
  m.wallets = o.wallets;
  m.keys = o.keys;
  m.actions = o.actions;
  if (applied)
    ++m.applied;
  m.in_flight.reset();
}

/// Runs writes of `m` until `count` were sent or the server stops answering; one request at a
/// time, so at most one is in flight when the server dies.
void write_until(account_model& m, int port, std::mt19937& rng, size_t count, std::atomic<size_t>& acked_total) {
  http_client c("127.0.0.1", port, true);
  while (m.sent < count) {
    write_request w = next_write(m, rng, m.sent);
    ++m.sent;
    const response r = c.post(path_of(w.kind), w.body, m.acct.auth());
    if (r.status == 0) {  // no answer: the server died with this write in flight
      m.in_flight = std::move(w);
      return;
    }
    if (r.status != 200 || !apply_ack(m, w, r.body)) {
      m.failures.push_back(std::string(path_of(w.kind)) + " " + json::serialize(w.body) + ": " + r.describe());
      return;
    }
    ++acked_total;
  }
}

}  // namespace

TEST_CASE("SIGKILL during 2,000 concurrent writes: acknowledged writes survive, none is partial") {
  const auto started = steady::now();
  constexpr size_t kThreads = 4;
  constexpr size_t kWritesPerThread = 500;  // 2,000 in all
  constexpr size_t kKillAfter = 900;        // acknowledged writes before the SIGKILL
  constexpr uint64_t kFunds = 5000;
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  // Every relayed write costs one credit, so the ledger's charges can be counted against writes.
  const std::vector<std::string> flags = {"--dev", "--write-surcharge", "1", "--new-accounts-per-minute", "0"};

  std::vector<account_model> models(kThreads);
  std::atomic<size_t> acked{0};
  // One writer thread an account, each writing until its model has sent kWritesPerThread, with
  // its own random sequence (seeded `seed` + its index, so each run of the test repeats it).
  std::vector<std::mt19937> rngs;
  const auto start_writers = [&](const server_process& srv, uint32_t seed) {
    rngs.clear();
    for (size_t i = 0; i < kThreads; ++i)
      rngs.emplace_back(static_cast<uint32_t>(seed + i));
    const int port = srv.port();
    std::vector<std::thread> writers;
    for (size_t i = 0; i < kThreads; ++i)
      writers.emplace_back([&, i, port] { write_until(models[i], port, rngs[i], kWritesPerThread, acked); });
    return writers;
  };
  {
    server_process srv(flags, data);
    {
      auto c = srv.client();
      for (size_t i = 0; i < kThreads; ++i) {
        models[i].acct = create_account(c, "writer " + std::to_string(i));
        REQUIRE(buy_credits(c, models[i].acct.auth(), kFunds) == kFunds);
      }
    }
    std::vector<std::thread> writers = start_writers(srv, 1000);
    while (acked.load() < kKillAfter &&
           std::any_of(models.begin(), models.end(), [](const account_model& m) { return m.failures.empty(); }))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sigkill(srv);
    for (auto& t : writers)
      t.join();
    for (const auto& m : models)
      for (const auto& f : m.failures)
        FAIL_CHECK("unexpected answer before the kill: " << f);
  }
  size_t in_flight = 0;
  for (const auto& m : models)
    in_flight += m.in_flight ? 1 : 0;
  std::printf("SIGKILL during writes: %zu acknowledged, %zu in flight at the kill\n", acked.load(), in_flight);
  CHECK(acked.load() >= kKillAfter);
  CHECK(acked.load() < kThreads * kWritesPerThread);

  // Restart on the same data directory: every acknowledged write is there, nothing partial.
  // The surcharge is held in the metering store before the write and debited after it
  // (core/credits.hpp), so a write the kill cut off between its commit and its debit is applied
  // free — never charged without being applied, never twice: per account at most the one write
  // in flight at the kill is free, and only when it was applied.
  std::vector<size_t> free_writes(kThreads, 0);
  {
    server_process srv(flags, data);
    auto c = srv.client();
    for (size_t i = 0; i < kThreads; ++i) {
      account_model& m = models[i];
      const size_t before = m.applied;
      check_recovered(m, observe(c, m.acct.auth()));
      const uint64_t charged = kFunds - balance_of(c, m.acct.auth());
      INFO("account " << m.acct.api_key_hash);
      CHECK(charged <= m.applied);
      CHECK(charged + (m.applied > before ? 1 : 0) >= m.applied);
      free_writes[i] = m.applied - charged;
    }
    CHECK(srv.stop().clean());
  }
  // The files of the stopped server: the ledger intact, its event log contiguous; in the metering
  // store, for each account one charge per charged write and the balance they leave.
  const auto check_files = [&] {
    sqlite_file ledger(data + "/ledger.sqlite");
    CHECK(ledger.one("PRAGMA integrity_check") == "ok");
    check_event_log_contiguous(ledger);
    sqlite_file metering(data + "/metering.sqlite");
    CHECK(metering.one("PRAGMA integrity_check") == "ok");
    for (size_t i = 0; i < kThreads; ++i) {
      const account_model& m = models[i];
      INFO("account " << m.acct.api_key_hash);
      const std::string account = "'" + m.acct.api_key_hash.substr(2) + "'";
      const auto r = metering.rows(
          "SELECT count(*), coalesce(sum(amount), 0) FROM metering_charges WHERE run_id LIKE 'write %' AND "
          "account = " +
          account);
      CHECK(as_u64(r[0][0]) == m.applied - free_writes[i]);  // one charge per charged write …
      CHECK(as_u64(r[0][1]) == m.applied - free_writes[i]);  // … of one credit
      CHECK(as_u64(metering.one("SELECT balance FROM metering_accounts WHERE account = " + account)) ==
            kFunds - (m.applied - free_writes[i]));
      // No hold is in the file: the embedded store keeps them in its process, and the write in
      // flight at the kill took its hold with it (docs/architecture.md §4).
      CHECK(as_u64(metering.one("SELECT count(*) FROM metering_reservations WHERE account = " + account)) == 0);
    }
  };
  check_files();

  // The recovered server carries on: the remaining writes, then the state is exactly the model.
  {
    server_process srv(flags, data);
    std::vector<std::thread> writers = start_writers(srv, 2000);
    for (auto& t : writers)
      t.join();
    auto c = srv.client();
    for (auto& m : models) {
      for (const auto& f : m.failures)
        FAIL_CHECK("unexpected answer after the restart: " << f);
      CHECK(m.sent == kWritesPerThread);
      CHECK(!m.in_flight);
      check_recovered(m, observe(c, m.acct.auth()));
      CHECK(balance_of(c, m.acct.auth()) == kFunds - (m.applied - free_writes[&m - models.data()]));
    }
    CHECK(srv.stop().clean());
  }
  check_files();
  std::printf("SIGKILL during writes: %zu writes in all, %.1f s\n", acked.load() + in_flight, seconds_since(started));
}

TEST_CASE("SIGKILL during a burst of action runs: charged only for runs that ran, none twice") {
  // run_action holds the price in the metering store, runs, and debits once the sandbox answered
  // (routes_run.cpp), each debit one charge row of the metering store. So a run the kill cuts off
  // is not charged (its hold expires), nor is a run refused because the pool was saturated; this
  // test checks:
  //   - no charge without its row: balance = paid − Σ charges, charge by charge;
  //   - every run answered 200 or 422 (charged_credits) has its debit: debits ≥ those answers;
  //   - debits beyond the answered runs ≤ the runs in flight at the kill (a run that finished and
  //     was debited just before the kill, its answer lost): runs refused 503 are never charged.
  const auto started = steady::now();
  constexpr size_t kThreads = 6;
  constexpr uint64_t kFunds = 3000;
  constexpr size_t kKillAfter = 120;  // answered runs before the SIGKILL
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  // A burst of one account's runs at once, on purpose: no per-account share (docs/protocol.md §6).
  const std::vector<std::string> flags = {"--dev", "--sandbox-workers", "4", "--account-concurrent-runs", "0"};

  account_keys acct;
  std::vector<std::string> cids;
  std::atomic<size_t> answered_charged{0}, in_flight{0}, unavailable{0}, sent{0};
  std::mutex failures_mu;
  std::vector<std::string> failures;
  {
    server_process srv(flags, data);
    {
      auto c = srv.client();
      acct = create_account(c, "runner");
      REQUIRE(buy_credits(c, acct.auth(), kFunds) == kFunds);
      const std::vector<std::string> codes = {
          "Enact.setResponse(1)",
          // Loops for a while (a few hundred milliseconds) so that the kill finds runs inside
          // the sandbox.
          "var x = 0; for (var i = 0; i < 250000; i++) { x = (x + i) % 1000003; } "
          "Enact.setResponse(x)",
          "throw new Error('fails inside the sandbox')",
      };
      json::array hashes;
      for (const auto& code : codes) {
        const response up = c.post("/upload_action", json::object{{"code", code}}, acct.auth());
        ITEST_REQUIRE_STATUS(up, 200);
        cids.push_back(s_of(up.body, "action_ipfs_cid"));
        hashes.push_back(json::string(s_of(up.body, "hashed_cid")));
      }
      ITEST_REQUIRE_STATUS(
          c.post("/add_group", json::object{{"name", "runs"}, {"cid_hashes_permitted", hashes}}, acct.auth()), 200);
    }
    std::vector<std::thread> runners;
    for (size_t t = 0; t < kThreads; ++t)
      runners.emplace_back([&, t] {
        http_client c("127.0.0.1", srv.port(), true);
        for (size_t n = 0;; ++n) {
          const std::string& cid = cids[(t + n) % cids.size()];
          ++sent;
          const response r = c.post("/run_action", json::object{{"action_ipfs_cid", cid}}, acct.auth());
          if (r.status == 0) {
            ++in_flight;
            return;
          }
          if (r.status == 200 && u_of(r.body, "charged_credits") == 1) {
            ++answered_charged;
          } else if (r.status == 422 && r.error_code() == "action_failed" &&
                     r.obj().at("error").at("details").at("charged_credits").to_number<int>() == 1) {
            ++answered_charged;
          } else if (r.status == 503 && r.error_code() == "unavailable") {
            ++unavailable;  // pool saturated: never ran, not charged
          } else {
            std::lock_guard lock(failures_mu);
            failures.push_back(r.describe());
            return;
          }
        }
      });
    while (answered_charged.load() < kKillAfter && failures.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::printf("SIGKILL during runs: the kill after %.1f s\n", seconds_since(started));
    // Some slow runs are inside the sandbox now; the kill takes the workers with it.
    const std::vector<pid_t> workers = children_of(srv.pid());
    CHECK(!workers.empty());
    sigkill(srv);
    for (auto& t : runners)
      t.join();
    for (const auto& f : failures)
      FAIL_CHECK("unexpected answer: " << f);
    const auto deadline = steady::now() + std::chrono::seconds(10);
    for (const pid_t w : workers) {
      while (!ended(w) && steady::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      CHECK_MESSAGE(ended(w), "sandbox worker " << w << " outlived the killed server");
    }
  }
  std::printf(
      "SIGKILL during runs: %zu sent, %zu answered and charged, %zu unavailable, %zu in "
      "flight at the kill\n",
      sent.load(), answered_charged.load(), unavailable.load(), in_flight.load());
  CHECK(in_flight.load() == kThreads);

  uint64_t balance_after = 0;
  {
    server_process srv(flags, data);
    auto c = srv.client();
    balance_after = balance_of(c, acct.auth());
    // The server runs again, and charges exactly one credit for a run.
    const response r = c.post("/run_action", json::object{{"action_ipfs_cid", cids[0]}}, acct.auth());
    ITEST_CHECK_STATUS(r, 200);
    CHECK(balance_of(c, acct.auth()) == balance_after - 1);
    CHECK(srv.stop().clean());
  }
  sqlite_file ledger(data + "/ledger.sqlite");
  CHECK(ledger.one("PRAGMA integrity_check") == "ok");
  check_event_log_contiguous(ledger);
  sqlite_file metering(data + "/metering.sqlite");
  CHECK(metering.one("PRAGMA integrity_check") == "ok");
  const std::string account = "'" + acct.api_key_hash.substr(2) + "'";
  const auto debits = metering.rows("SELECT amount FROM metering_charges WHERE account = " + account + " ORDER BY seq");
  REQUIRE(!debits.empty());
  // Charge by charge: one credit each, and together exactly what the balance lost.
  for (const auto& row : debits)
    CHECK(as_u64(row[0]) == 1);
  CHECK(as_u64(metering.one("SELECT balance FROM metering_accounts WHERE account = " + account)) ==
        kFunds - debits.size());
  const uint64_t charged = debits.size() - 1;  // less the run after the restart
  CHECK(balance_after == kFunds - charged);
  CHECK(charged >= answered_charged.load());
  CHECK(charged <= answered_charged.load() + in_flight.load());
  CHECK(charged <= sent.load() - unavailable.load());
  std::printf(
      "SIGKILL during runs: %llu charged (%lld debited but not answered before the kill), "
      "%.1f s\n",
      static_cast<unsigned long long>(charged),
      static_cast<long long>(charged) - static_cast<long long>(answered_charged.load()), seconds_since(started));
}

}  // namespace enact::itest
