// SPDX-License-Identifier: Apache-2.0
// Three enact-server instances as one service (docs/deployment.md "A fleet"): one PostgreSQL for
// the metering store and the trigger store, one anvil holding the registry (--ledger evm). Client
// threads send run_action calls and webhooks to all three at once, as a load balancer would; one
// instance is killed with SIGKILL mid-load and started again. Then, read back from the shared
// stores:
//   - no run free and none charged twice: every answered run_action (200) is in the usage history
//     exactly once at the run price, and the only charges no answer accounts for are runs whose
//     answer the kill cut off (at most one per request left without an answer);
//   - no balance below zero: the account funded for fewer runs than were sent ends with its
//     credits less exactly what it was charged, having been refused (402) the rest;
//   - no spending cap exceeded: a key whose cap (set on the registry) is below the load's demand
//     spends at most its cap;
//   - every acknowledged webhook (202) has one run, which succeeded, and the trigger's key was
//     charged once per successful run: nothing executed twice, nothing lost to the kill;
//   - every schedule fired once per due time during the test: no due time missing, none twice.
// The kill lands on requests in flight, whatever the timing of the load: it waits until slow runs
// sent to the victim hold their credits in the metering store and cannot have ended yet.
#include <doctest/doctest.h>

#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "fleet.hpp"
#include "triggers_test.hpp"

namespace enact::fleet_test {
namespace {

namespace reg = chain::registry;
using namespace itest;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr uint64_t kFunded = 100000;    // credits of the main account
constexpr uint64_t kShortFunded = 501;  // the short account: 250 runs, then 1 credit left
constexpr uint64_t kCap = 60;           // the capped key: 30 runs
constexpr size_t kSchedules = 3;        // schedule triggers, every 30 s
constexpr auto kLoad = 36s;             // load duration
constexpr auto kKillAt = 12s;           // SIGKILL of one instance, this far into the load
constexpr auto kDownFor = 2s;           // then started again after this long
constexpr size_t kVictim = 2;           // the instance killed
// Slow runs at the victim around the kill: the kill sends kSlowThreads of them at once and waits
// until kSlowInFlight hold their price in the metering store (the victim received them and
// reserved) while fewer than kSlowKillBy passed since they were sent (none can have ended: the
// action alone runs kSlowRun). A round that misses that is let finish and another is sent.
constexpr size_t kSlowThreads = 3;
constexpr size_t kSlowInFlight = 2;
constexpr auto kSlowRun = 600ms;
constexpr auto kSlowKillBy = 400ms;
constexpr auto kSlowRounds = 20s;  // the longest the kill waits for a round that lands

/// What one kind of call saw, over every thread that sent it.
struct tally {
  std::mutex mu;
  std::set<std::string> answered;  // X-Request-Id of each 200 (run_action) or run id of each 202 (webhook)
  size_t cut_off = 0;              // requests with no answer (the instance was killed under them)
  size_t refused_402 = 0;
  std::map<std::string, size_t> other;  // any other answer: status and code
  void record(const response& r, int ok_status, const std::string& id) {
    std::lock_guard lock(mu);
    if (r.status == ok_status)
      answered.insert(id);
    else if (r.status == 0)
      ++cut_off;
    else if (r.status == 402)
      ++refused_402;
    else
      ++other[std::to_string(r.status) + " " + r.error_code()];
  }
};

/// An action that runs kSlowRun of wall time (Date.now() is the clock the sandbox gives actions).
std::string slow_code() {
  return "var until = Date.now() + " + std::to_string(kSlowRun.count()) +
         ";\nwhile (Date.now() < until) {}\nEnact.setResponse({ok: true});\n";
}

/// Rounds of slow runs at the victim: the kill releases a round, each slow client sends one run.
struct slow_rounds {
  std::mutex mu;
  std::condition_variable cv;
  size_t round = 0;
  bool done = false;
  std::atomic<size_t> outstanding{0};  // runs of the last round not yet answered
  void release() {
    {
      std::lock_guard lock(mu);
      ++round;
      outstanding = kSlowThreads;
    }
    cv.notify_all();
  }
  void finish() {
    {
      std::lock_guard lock(mu);
      done = true;
    }
    cv.notify_all();
  }
  /// Waits for the round after `seen`; false once finished.
  bool next(size_t& seen) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done || round != seen; });
    seen = round;
    return !done;
  }
};

/// Sends `send` to instance `i` until `stop`, waiting while the instance is down.
template <class Send>
std::thread client_thread(const fleet& f, size_t i, const std::atomic<bool>& stop, Send send) {
  return std::thread([&f, i, &stop, send]() mutable {
    while (!stop) {
      const int port = f.port(i);
      if (port == 0) {
        std::this_thread::sleep_for(20ms);
        continue;
      }
      send(port);
    }
  });
}

/// A usage key's cap set on the registry by the test's own api payer (dev account 1), keeping
/// every other field the key has on chain.
void set_cap_on_chain(const fleet& f, const account_keys& acct, const usage_keys& key, uint64_t cap) {
  chain::rpc_options o;
  o.url = f.node().url();
  auto rpc = std::make_shared<chain::rpc_client>(o);
  const address registry = parse_address(f.registry()).value();
  const hash256 key_hash = codec::hex::decode_fixed<32>(key.hash).value();
  const auto current = rpc->call(registry, reg::encode(reg::get_usage_api_key_call{key_hash}));
  REQUIRE(current.has_value());
  const reg::usage_key_view k = reg::decode_result<reg::get_usage_api_key_call>(*current).value();
  reg::set_usage_api_key_with_wallet_call c;
  c.account_hash = codec::hex::decode_fixed<32>(acct.api_key_hash).value();
  c.usage_key_hash = key_hash;
  c.expiration = k.expiration;
  c.balance = u256{cap};
  c.name = k.name;
  c.description = k.description;
  c.permissions = k.permissions;
  c.wallet = k.wallet;
  auto sender = chain::transaction_sender::create(rpc, Secret(test::anvil_process::dev_private_keys()[1]));
  REQUIRE(sender.has_value());
  const auto sent = sender->send(registry, reg::encode(c));
  REQUIRE_MESSAGE(sent.has_value(), (sent ? "" : sent.err().message));
}

/// Unix seconds as RFC 3339 UTC without fraction, as a schedule's scheduled_at.
std::string rfc3339(int64_t t) {
  const time_t tt = static_cast<time_t>(t);
  tm parts{};
  gmtime_r(&tt, &parts);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buf;
}

/// The fleet's database name on the shared PostgreSQL server.
std::string database_name(const fleet& f) {
  const std::string& url = f.database();
  constexpr std::string_view scheme = "postgresql:///";
  return url.substr(scheme.size(), url.find('?') - scheme.size());
}

/// The credit holds of runs in flight (reserved, not yet settled) of a usage key, read from the
/// metering store's table (server/metering/operations.cpp).
size_t holds_of(const fleet& f, const usage_keys& key) {
  const std::string hash = codec::hex::encode(codec::hex::decode_fixed<32>(key.hash).value());
  return std::stoul(triggers::test::shared_postgres().query_value(
      database_name(f), "SELECT count(*) FROM metering_reservations WHERE key_hash = '" + hash + "'"));
}

/// The runs of trigger `id` (every page).
std::vector<json::object> runs_of(api_user& u, const std::string& id) {
  std::vector<json::object> out;
  for (uint64_t offset = 0;; offset += 100) {
    const response page = u.get("/api/triggers/" + id + "/runs?limit=100&offset=" + std::to_string(offset));
    REQUIRE_MESSAGE(page.status == 200, page.describe());
    const auto& items = page.obj().at("items").as_array();
    for (const auto& r : items)
      out.push_back(r.as_object());
    if (items.size() < 100)
      return out;
  }
}

bool finished(const std::vector<json::object>& runs) {
  return std::all_of(runs.begin(), runs.end(),
                     [](const json::object& r) { return r.at("status") == "success" || r.at("status") == "failed"; });
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// The usage history of an account: run id → charge, per key hash; a run id met twice fails.
struct charges {
  std::map<std::string, std::map<std::string, uint64_t>> by_key;  // key hash → run id → credits
  uint64_t total = 0;
};
charges charges_of(http_client& c, const account_keys& acct) {
  charges out;
  std::set<std::string> seen;
  for (const json::object& u : list_all(c, "/billing/usage", acct.auth())) {
    const std::string run_id(u.at("run_id").as_string());
    CHECK_MESSAGE(seen.insert(run_id).second, "run " << run_id << " charged twice");
    const uint64_t credits = u.at("charged_credits").to_number<uint64_t>();
    out.by_key[lower(std::string(u.at("key_hash").as_string()))][run_id] = credits;
    out.total += credits;
  }
  return out;
}

/// Every answered run of `t` charged once at the price; charges beyond the answers only for
/// requests the kill left unanswered.
void check_run_charges(const char* what, const tally& t, const std::map<std::string, uint64_t>& charged) {
  INFO(std::string(what));
  size_t free_runs = 0, wrong_price = 0;
  for (const std::string& id : t.answered) {
    const auto it = charged.find(id);
    if (it == charged.end())
      ++free_runs;
    else if (it->second != kRunPrice)
      ++wrong_price;
  }
  CHECK(free_runs == 0);
  CHECK(wrong_price == 0);
  const size_t unanswered = charged.size() - (t.answered.size() - free_runs);
  CHECK_MESSAGE(unanswered <= t.cut_off, unanswered << " charges without an answer, " << t.cut_off << " cut off");
  CHECK_MESSAGE(
      t.other.empty(), "unexpected answers: " << [&] {
        std::string s;
        for (const auto& [k, n] : t.other)
          s += k + " ×" + std::to_string(n) + "; ";
        return s;
      }());
}

uint64_t sum(const std::map<std::string, uint64_t>& m) {
  uint64_t s = 0;
  for (const auto& kv : m)
    s += kv.second;
  return s;
}

}  // namespace

TEST_CASE("fleet: three servers on one PostgreSQL and one chain; one killed mid-load; nothing lost, free or doubled") {
  fleet f(triggers::test::shared_postgres());
  f.start(0);
  http_client a = f.server(0).client();

  // The core side, written once through instance 0: an account with credits, the trivial action
  // in a group, and its usage keys (each load's charges are told apart by key); a second,
  // short-funded account.
  const std::string slow = slow_code();
  const core_side core = setup_core(a, {kTrivialCode, slow}, kFunded);
  const std::string cid = core.cids.at(std::string(kTrivialCode));
  const json::array execute{json::value(1)};
  const usage_keys free_key = create_usage_key(a, core.acct.auth(), json::object{{"execute_in_groups", execute}});
  const usage_keys capped_key = create_usage_key(a, core.acct.auth(), json::object{{"execute_in_groups", execute}});
  const usage_keys hook_key = core.key;
  const usage_keys schedule_key = create_usage_key(a, core.acct.auth(), json::object{{"execute_in_groups", execute}});
  const usage_keys slow_key = create_usage_key(a, core.acct.auth(), json::object{{"execute_in_groups", execute}});
  const core_side short_core = setup_core(a, {kTrivialCode}, kShortFunded);
  set_cap_on_chain(f, core.acct, capped_key, kCap);
  // The registry's logs reach instance 0's read cache within a second; the others start now and
  // read the chain afresh. Action code lives in the shared content store (--content-store
  // postgres): what was uploaded through instance 0 runs by CID on the others, never uploaded
  // there (docs/deployment.md "A fleet").
  std::this_thread::sleep_for(2s);
  f.start(1);
  f.start(2);
  // One chain for the fleet: every instance names the same chain id and registry, so a wallet's
  // envelope made for one is good on each (docs/protocol.md §1 "embedded chain" for the ledger
  // that is the server's own; here the node's).
  const chain_env chain = env_of(f.server(0));
  CHECK(chain.chain_id == 31337);
  for (size_t i = 1; i < 3; ++i) {
    const chain_env other = env_of(f.server(i));
    CHECK(other.chain_id == chain.chain_id);
    CHECK(other.registry == chain.registry);
  }

  // The trigger side: a token in the shared trigger store, one webhook trigger, the schedules.
  const finished_run issued = run_to_exit({"issue-token", "--trigger-store", f.database(), "--user", "fleet-operator"});
  REQUIRE_MESSAGE(issued.status.clean(), issued.stderr_text);
  const std::string token = issued.stdout_text.substr(0, 43);
  api_user ops(f.port(0), token);
  json::object hook = webhook_body(cid, hook_key.value);
  hook["max_runs_per_minute"] = 6000;
  hook["max_queued_runs"] = 10000;
  const response hook_created = ops.post("/api/triggers", hook);
  ITEST_REQUIRE_STATUS(hook_created, 201);
  const std::string hook_id = s_of(hook_created.body, "id");
  const int64_t schedules_from = unix_now();
  std::vector<std::string> schedule_ids;
  for (size_t s = 0; s < kSchedules; ++s) {
    const response r = ops.post("/api/triggers", json::object{{"type", "schedule"},
                                                              {"name", "every 30 s #" + std::to_string(s)},
                                                              {"action_ipfs_cid", cid},
                                                              {"usage_api_key", schedule_key.value},
                                                              {"config", {{"cron", "*/30 * * * * *"}}}});
    ITEST_REQUIRE_STATUS(r, 201);
    schedule_ids.push_back(s_of(r.body, "id"));
  }
  const int64_t schedules_created = unix_now() + 1;

  // Every instance answers each key before the load (its registry reads are current).
  for (size_t i = 0; i < fleet::kSize; ++i)
    for (const usage_keys* k : {&free_key, &capped_key, &short_core.key, &slow_key}) {
      const response r = call(f.port(i), "GET", "/core/v1/account", {}, k->auth());
      ITEST_REQUIRE_STATUS(r, 200);
    }

  // The load: per instance, two threads on the uncapped key, one on the capped key, one on the
  // short account's key and one sending webhooks; and the slow runs the kill sends to the victim.
  tally free_runs, capped_runs, short_runs, slow_runs, webhooks;
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  const std::string run_body = json::serialize(json::object{{"action_ipfs_cid", cid}, {"params", json::object{}}});
  const std::string slow_body =
      json::serialize(json::object{{"action_ipfs_cid", core.cids.at(slow)}, {"params", json::object{}}});
  const std::string short_body = json::serialize(
      json::object{{"action_ipfs_cid", short_core.cids.at(std::string(kTrivialCode))}, {"params", json::object{}}});
  auto runner = [](tally& t, const usage_keys& key, const std::string& body) {
    return [&t, &key, &body](int port) {
      const response r = call(port, "POST", "/core/v1/run_action", body, key.auth());
      t.record(r, 200, r.header("X-Request-Id"));
    };
  };
  // A run by CID on each instance that never received the code, counted with the load's runs.
  for (size_t i = 1; i < fleet::kSize; ++i)
    runner(free_runs, free_key, run_body)(f.port(i));
  REQUIRE_MESSAGE(free_runs.answered.size() == fleet::kSize - 1, "run_action by CID on instances 1 and 2 refused");
  // The slow action takes its time, by CID on the victim too; counted with the slow runs.
  const auto slow_sent = steady::now();
  runner(slow_runs, slow_key, slow_body)(f.port(kVictim));
  REQUIRE_MESSAGE(slow_runs.answered.size() == 1, "the slow run before the load was not answered 200");
  REQUIRE(steady::now() - slow_sent >= kSlowRun);
  slow_rounds rounds;
  for (size_t s = 0; s < kSlowThreads; ++s)
    clients.emplace_back([&] {
      for (size_t seen = 0; rounds.next(seen); --rounds.outstanding)
        if (const int port = f.port(kVictim); port != 0)
          runner(slow_runs, slow_key, slow_body)(port);
    });
  for (size_t i = 0; i < fleet::kSize; ++i) {
    clients.push_back(client_thread(f, i, stop, runner(free_runs, free_key, run_body)));
    clients.push_back(client_thread(f, i, stop, runner(free_runs, free_key, run_body)));
    clients.push_back(client_thread(f, i, stop, runner(capped_runs, capped_key, run_body)));
    clients.push_back(client_thread(f, i, stop, runner(short_runs, short_core.key, short_body)));
    clients.push_back(client_thread(f, i, stop, [&webhooks, &hook_id, i, n = 0](int port) mutable {
      const response r =
          call(port, "POST", "/webhook/" + hook_id, json::serialize(json::object{{"instance", i}, {"n", ++n}}));
      webhooks.record(r, 202, r.status == 202 ? s_of(r.body, "run_id") : std::string());
      std::this_thread::sleep_for(50ms);  // a steady stream the fleet drains, not a flood
    }));
  }
  const auto load_start = steady::now();
  std::this_thread::sleep_until(load_start + kKillAt);
  size_t held_at_kill = 0, slow_round = 0;
  for (const auto until = steady::now() + kSlowRounds; steady::now() < until;) {
    while (rounds.outstanding > 0 && steady::now() < until)  // the last round answered, its holds gone
      std::this_thread::sleep_for(10ms);
    const auto sent = steady::now();
    rounds.release();
    ++slow_round;
    size_t held = 0;
    while ((held = holds_of(f, slow_key)) < kSlowInFlight && steady::now() - sent < kSlowKillBy)
      std::this_thread::sleep_for(5ms);
    if (held >= kSlowInFlight && steady::now() - sent < kSlowKillBy) {
      held_at_kill = held;
      break;
    }
  }
  f.kill(kVictim);
  rounds.finish();
  std::this_thread::sleep_for(kDownFor);
  f.start(kVictim);
  std::this_thread::sleep_until(load_start + kLoad);
  stop = true;
  for (auto& t : clients)
    t.join();
  MESSAGE("slow runs at the victim: " << held_at_kill << " held in flight at the kill (round " << slow_round << "), "
                                      << slow_runs.cut_off << " cut off, " << slow_runs.answered.size() << " answered");
  MESSAGE("run_action answered: " << free_runs.answered.size() << " uncapped, " << capped_runs.answered.size()
                                  << " capped (" << capped_runs.refused_402 << " refused), "
                                  << short_runs.answered.size() << " short-funded (" << short_runs.refused_402
                                  << " refused); cut off by the kill: "
                                  << free_runs.cut_off + capped_runs.cut_off + short_runs.cut_off + slow_runs.cut_off
                                  << "; webhooks acknowledged: " << webhooks.answered.size() << ", cut off "
                                  << webhooks.cut_off);
  // The kill landed on runs in flight: those it found holding credits got no answer.
  REQUIRE_MESSAGE(held_at_kill >= kSlowInFlight,
                  "no round of slow runs was in flight at the victim within " << kSlowRounds.count() << " s");
  REQUIRE(slow_runs.cut_off >= held_at_kill);
  REQUIRE(free_runs.cut_off + capped_runs.cut_off + short_runs.cut_off + slow_runs.cut_off + webhooks.cut_off > 0);

  // How far the load got depends on the machine: on a slow or busy one it may end before the
  // short account is spent or the capped key reaches its cap. Spend them now, one run at a time
  // across the instances, so the refusals below are reached on any machine; these runs are
  // tallied with the load's and charged the same way.
  auto spend = [&](tally& t, const usage_keys& key, const std::string& body, uint64_t budget) {
    for (uint64_t n = 0; t.refused_402 == 0 && n <= budget / kRunPrice + 4; ++n)
      runner(t, key, body)(f.port(n % fleet::kSize));
  };
  spend(capped_runs, capped_key, run_body, kCap);
  spend(short_runs, short_core.key, short_body, kShortFunded);

  // Every webhook run finishes, and every schedule passes two due times after its creation.
  const int64_t due_until = std::max<int64_t>(unix_now(), (schedules_created / 30 + 2) * 30);
  std::vector<json::object> hook_runs;
  const auto deadline = steady::now() + 90s;
  for (;;) {
    hook_runs = runs_of(ops, hook_id);
    if ((finished(hook_runs) && unix_now() >= due_until + 3) || steady::now() > deadline)
      break;
    std::this_thread::sleep_for(500ms);
  }

  // Webhooks: each acknowledged one has its run, every run succeeded, and each success was
  // charged once (a run executed twice is charged twice).
  std::map<std::string, std::string> hook_status;
  for (const json::object& r : hook_runs)
    hook_status[std::string(r.at("id").as_string())] = std::string(r.at("status").as_string());
  size_t missing = 0, unsuccessful = 0;
  for (const std::string& id : webhooks.answered)
    missing += hook_status.contains(id) ? 0 : 1;
  for (const auto& [id, status] : hook_status)
    unsuccessful += status == "success" ? 0 : 1;
  CHECK(missing == 0);
  CHECK(unsuccessful == 0);
  CHECK(hook_status.size() >= webhooks.answered.size());
  CHECK(hook_status.size() <= webhooks.answered.size() + webhooks.cut_off);
  CHECK(webhooks.other.empty());

  // Schedules: one run per due time after creation, none twice, each succeeded.
  std::vector<std::vector<json::object>> schedule_runs;
  for (const std::string& id : schedule_ids) {
    const auto s_deadline = steady::now() + 30s;
    std::vector<json::object> runs;
    while ((runs = runs_of(ops, id), !finished(runs)) && steady::now() < s_deadline)
      std::this_thread::sleep_for(200ms);
    schedule_runs.push_back(runs);
  }
  size_t schedule_successes = 0;
  for (size_t s = 0; s < kSchedules; ++s) {
    INFO("schedule " << schedule_ids[s]);
    std::multiset<std::string> planned;
    for (const json::object& r : schedule_runs[s]) {
      planned.insert(std::string(r.at("params").at("scheduled_at").as_string()));
      CHECK(r.at("status") == "success");
      schedule_successes += r.at("status") == "success" ? 1 : 0;
    }
    for (const std::string& p : planned)
      CHECK_MESSAGE(planned.count(p) == 1, p << " fired " << planned.count(p) << " times");
    // Due times after the trigger surely existed, up to the last one that passed: each fired.
    for (int64_t due = (schedules_created / 30 + 1) * 30; due <= due_until; due += 30)
      CHECK_MESSAGE(planned.contains(rfc3339(due)), rfc3339(due) << " did not fire");
    // Nothing before the trigger existed.
    for (const std::string& p : planned)
      CHECK(p > rfc3339(schedules_from - 1));
  }

  // Charges, read from the shared metering store through instance 0.
  const charges main_charges = charges_of(a, core.acct);
  const charges short_charges = charges_of(a, short_core.acct);
  auto of_key = [](const charges& c, const usage_keys& k) {
    const auto it = c.by_key.find(lower(k.hash));
    return it == c.by_key.end() ? std::map<std::string, uint64_t>{} : it->second;
  };
  check_run_charges("uncapped key", free_runs, of_key(main_charges, free_key));
  check_run_charges("capped key", capped_runs, of_key(main_charges, capped_key));
  check_run_charges("short-funded account", short_runs, of_key(short_charges, short_core.key));
  check_run_charges("slow runs", slow_runs, of_key(main_charges, slow_key));
  const auto hook_charges = of_key(main_charges, hook_key);
  const auto schedule_charges = of_key(main_charges, schedule_key);
  CHECK(hook_charges.size() == hook_status.size() - unsuccessful);
  CHECK(sum(hook_charges) == kRunPrice * hook_charges.size());
  CHECK(schedule_charges.size() == schedule_successes);

  // No cap exceeded; the load reached it.
  CHECK(sum(of_key(main_charges, capped_key)) <= kCap);
  CHECK(capped_runs.refused_402 > 0);
  // Balances: what was paid in less what was charged, never below zero; the short account was
  // refused once it could not pay a run.
  CHECK(balance_of(a, core.acct.auth()) == kFunded - main_charges.total);
  CHECK(short_charges.total <= kShortFunded);
  CHECK(balance_of(a, short_core.acct.auth()) == kShortFunded - short_charges.total);
  CHECK(short_runs.refused_402 > 0);
  // The same balances on every instance.
  for (size_t i = 1; i < fleet::kSize; ++i) {
    http_client c("127.0.0.1", f.port(i));
    CHECK(balance_of(c, core.acct.auth()) == kFunded - main_charges.total);
  }

  // The shared code attacked where it is kept: a row changed in the database never runs on any
  // instance (500, nothing charged); uploading the code again repairs it.
  triggers::test::shared_postgres().exec(
      database_name(f),
      "UPDATE content_code SET code = convert_to('export default () => \"swapped\";', 'UTF8') WHERE cid = '" + cid +
          "'");
  const uint64_t before = balance_of(a, core.acct.auth());
  for (size_t i = 0; i < fleet::kSize; ++i) {
    const response r = call(f.port(i), "POST", "/core/v1/run_action", run_body, free_key.auth());
    ITEST_CHECK_STATUS(r, 500);
    CHECK(json::serialize(r.body).find("swapped") == std::string::npos);
  }
  CHECK(balance_of(a, core.acct.auth()) == before);
  const response again = call(f.port(1), "POST", "/core/v1/upload_action",
                              json::serialize(json::object{{"code", kTrivialCode}}), core.acct.auth());
  ITEST_REQUIRE_STATUS(again, 200);
  ITEST_CHECK_STATUS(call(f.port(2), "POST", "/core/v1/run_action", run_body, free_key.auth()), 200);
}

}  // namespace enact::fleet_test
