// SPDX-License-Identifier: Apache-2.0
// The scheduler on a manual clock (no test sleeps through a schedule): firing times and their
// scheduled_at, 5- and 6-field expressions, the 30-second minimum interval, a missed firing after
// downtime firing once, changes taking effect, 1,000 schedules firing in due order, and the
// scheduler thread waking for the clock.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "enact/client/api_error.hpp"
#include "enact/crypto/keccak.hpp"
#include "must.hpp"
#include "support.hpp"
#include "triggers/ids.hpp"
#include "triggers/scheduler.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/validate.hpp"

namespace enact::triggers::test {
namespace {

using namespace std::chrono_literals;
using std::chrono::sys_days;

time_point at(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
  return time_point{sys_days{std::chrono::year{y} / mo / d}.time_since_epoch() + std::chrono::hours(h) +
                    std::chrono::minutes(mi) + std::chrono::seconds(s)};
}

/// A store in a fresh temporary directory (synchronous NORMAL: these tests are about time).
struct fixture {
  fixture() {
    std::random_device rd;
    dir = std::filesystem::temp_directory_path() / ("enact-sched-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(dir);
    reopen();
  }
  ~fixture() {
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void reopen() {
    db.reset();
    sqlite_options o;
    o.synchronous_full = false;
    db = enact::test::must_ok(sqlite_store::open((dir / "triggers.sqlite").string(), o));
  }

  /// A schedule trigger of `cron`, with its first due time after the clock's now (what the API
  /// does at creation).
  std::string add(const std::string& cron, time_point now) {
    trigger t;
    t.id = new_trigger_id();
    t.owner = "alice";
    t.type = trigger_type::schedule;
    t.name = cron;
    t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
    t.sealed_usage_key = bytes{1};
    t.config = api::schedule_config{cron, "UTC"};
    t.max_runs_per_minute = kMaxRunsPerMinuteLimit;  // the run limits have a store suite case
    t.max_queued_runs = kMaxQueuedRunsLimit;
    t.created_at = t.updated_at = now;
    const auto s = cron::parse(cron).value();
    const auto first = cron::next_after(s, std::chrono::floor<std::chrono::seconds>(now)).value();
    REQUIRE(db->create_trigger(t, schedule_state{time_point(first), std::nullopt}).has_value());
    return t.id;
  }

  std::vector<run> runs_of(const std::string& trigger_id) {
    auto l = db->list_runs("alice", trigger_id, page{100, 0});
    REQUIRE(l.has_value());
    std::reverse(l->items.begin(), l->items.end());  // oldest first
    return l->items;
  }

  std::filesystem::path dir;
  std::unique_ptr<sqlite_store> db;
};

std::string scheduled_at(const run& r) { return std::string(r.params.as_object().at("scheduled_at").as_string()); }

/// Moves the clock in `step`s up to `total`, letting the scheduler fire after each.
void step_through(manual_clock& clk, scheduler& s, std::chrono::milliseconds total,
                  std::chrono::milliseconds step = 1s) {
  for (auto done = 0ms; done < total; done += step) {
    clk.advance(step);
    s.fire_due();
  }
}

}  // namespace

TEST_CASE("scheduler: */30 * * * * * fires twice in 70 s, at the planned times") {
  fixture f;
  manual_clock clk(at(2024, 5, 1, 0, 0, 5));
  const std::string id = f.add("*/30 * * * * *", clk.now());
  scheduler s(*f.db, clk);
  REQUIRE(s.load().has_value());
  CHECK(s.next_due() == at(2024, 5, 1, 0, 0, 30));
  step_through(clk, s, 70s, 250ms);
  const auto runs = f.runs_of(id);
  REQUIRE(runs.size() == 2);
  CHECK(scheduled_at(runs[0]) == "2024-05-01T00:00:30Z");
  CHECK(scheduled_at(runs[1]) == "2024-05-01T00:01:00Z");
  CHECK(runs[0].params ==
        json::value(json::object{
            {"source", "schedule"}, {"scheduled_at", "2024-05-01T00:00:30Z"}, {"cron", "*/30 * * * * *"}}));
  // Queued when the clock reached them (the first step at or after the planned time).
  CHECK(runs[0].queued_at == at(2024, 5, 1, 0, 0, 30));
  CHECK(runs[1].queued_at == at(2024, 5, 1, 0, 1, 0));
  CHECK(s.next_due() == at(2024, 5, 1, 0, 1, 30));
  const auto state = f.db->get_schedule(id)->value().state;
  REQUIRE(state);
  CHECK(state->next_due == at(2024, 5, 1, 0, 1, 30));
  CHECK(state->last_planned == at(2024, 5, 1, 0, 1, 0));
}

TEST_CASE("scheduler: 5-field expressions fire on minutes") {
  struct case_ {
    const char* cron;
    int seconds;  // simulated
    std::vector<std::string> fired;
  };
  // From 2024-05-01T00:00:05Z (a Wednesday).
  const case_ cases[] = {
      {"* * * * *", 130, {"2024-05-01T00:01:00Z", "2024-05-01T00:02:00Z"}},
      {"*/5 * * * *", 11 * 60, {"2024-05-01T00:05:00Z", "2024-05-01T00:10:00Z"}},
      {"0 0 * * THU", 2 * 86400, {"2024-05-02T00:00:00Z"}},
      {"@hourly", 7200, {"2024-05-01T01:00:00Z", "2024-05-01T02:00:00Z"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.cron);
    fixture f;
    manual_clock clk(at(2024, 5, 1, 0, 0, 5));
    const std::string id = f.add(c.cron, clk.now());
    scheduler s(*f.db, clk);
    REQUIRE(s.load().has_value());
    step_through(clk, s, std::chrono::seconds(c.seconds), 10s);
    const auto runs = f.runs_of(id);
    std::vector<std::string> got;
    for (const auto& r : runs)
      got.push_back(scheduled_at(r));
    CHECK(got == c.fired);
  }
}

TEST_CASE("schedule config: an interval under 30 s is refused") {
  struct case_ {
    const char* cron;
    bool ok;
  };
  const case_ cases[] = {
      {"*/30 * * * * *", true},                              // 30 s apart
      {"0,30 * * * * *", true},  {"* * * * *", true},        // 5-field: every minute
      {"@minutely", true},       {"*/10 * * * * *", false},  // 10 s
      {"0,20 * * * * *", false},                             // 20 s, then 40 s
      {"0,59 * * * * *", false},                             // 59 s, then 1 s across the minute
      {"* * * * * *", false},                                // every second
      {"@secondly", false},      {"*/29 * * * * *", false},  // 29 s at the top of the minute (58 → 0 is 2 s)
      {"0 0 * * *", true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.cron);
    const json::value cfg = json::object{{"cron", c.cron}};
    const auto out = validate_config(trigger_type::schedule, &cfg, {});
    CHECK(out.has_value() == c.ok);
    if (!out) {
      CHECK(out.code() == api_errc::invalid_request);
      CHECK(out.err().message.starts_with("config.cron: "));
    } else {
      CHECK(*out == api::trigger_config(api::schedule_config{c.cron, "UTC"}));
    }
  }
  struct bad {
    json::value config;
    const char* message_start;
  };
  const bad bads[] = {
      {json::object{}, "config.cron: required"},
      {json::object{{"cron", 5}}, "config.cron: required"},
      {json::object{{"cron", "61 * * * *"}}, "config.cron: "},
      {json::object{{"cron", "* * *"}}, "config.cron: "},
      {json::object{{"cron", "* * * * *"}, {"timezone", "Europe/Berlin"}}, "config.timezone: "},
      {json::object{{"cron", "* * * * *"}, {"tz", "UTC"}}, "config.tz: unknown field"},
      {json::value("* * * * *"), "config: expected an object"},
  };
  for (const auto& b : bads) {
    CAPTURE(json::serialize(b.config));
    const auto out = validate_config(trigger_type::schedule, &b.config, {});
    REQUIRE(!out);
    CHECK(out.code() == api_errc::invalid_request);
    CHECK(out.err().message.starts_with(b.message_start));
  }
}

TEST_CASE("scheduler: a firing missed while down fires once on restart") {
  fixture f;
  manual_clock clk(at(2024, 5, 1, 0, 0, 5));
  const std::string id = f.add("*/30 * * * * *", clk.now());
  {
    scheduler s(*f.db, clk);
    REQUIRE(s.load().has_value());
    step_through(clk, s, 26s);  // 00:00:31
    REQUIRE(f.runs_of(id).size() == 1);
  }
  // Down for ten minutes: twenty planned firings pass.
  clk.advance(10min);  // 00:10:31
  f.reopen();
  scheduler s(*f.db, clk);
  REQUIRE(s.load().has_value());
  CHECK(s.fire_due() == 1);
  CHECK(s.fire_due() == 0);
  auto runs = f.runs_of(id);
  REQUIRE(runs.size() == 2);
  CHECK(scheduled_at(runs[1]) == "2024-05-01T00:10:30Z");  // the latest planned time passed
  CHECK(s.next_due() == at(2024, 5, 1, 0, 11, 0));         // then back on schedule
  step_through(clk, s, 30s);                               // 00:11:01
  runs = f.runs_of(id);
  REQUIRE(runs.size() == 3);
  CHECK(scheduled_at(runs[2]) == "2024-05-01T00:11:00Z");
}

TEST_CASE("scheduler: latest_fire jumps over a long outage") {
  const auto s = cron::parse("*/30 * * * * *").value();
  const auto due = std::chrono::floor<std::chrono::seconds>(at(2024, 5, 1, 0, 0, 30));
  const auto now = std::chrono::floor<std::chrono::seconds>(at(2025, 5, 1, 12, 0, 44));
  CHECK(latest_fire(s, due, now) == std::chrono::floor<std::chrono::seconds>(at(2025, 5, 1, 12, 0, 30)));
  const auto yearly = cron::parse("0 0 1 1 *").value();
  CHECK(latest_fire(yearly, std::chrono::floor<std::chrono::seconds>(at(2020, 1, 1)), now) ==
        std::chrono::floor<std::chrono::seconds>(at(2025, 1, 1)));
  CHECK(latest_fire(s, due, due) == due);
}

TEST_CASE("scheduler: updates, disabling and deletion take effect") {
  fixture f;
  manual_clock clk(at(2024, 5, 1, 0, 0, 5));
  const std::string a = f.add("*/30 * * * * *", clk.now());
  const std::string b = f.add("*/30 * * * * *", clk.now());
  scheduler s(*f.db, clk);
  REQUIRE(s.load().has_value());
  CHECK(s.size() == 2);

  trigger_patch off;
  off.enabled = false;
  off.now = clk.now();
  REQUIRE(f.db->update_trigger("alice", a, off).has_value());
  s.refresh(a);
  REQUIRE(f.db->delete_trigger("alice", b).has_value());
  s.refresh(b);
  CHECK(s.size() == 0);
  step_through(clk, s, 60s);
  CHECK(f.runs_of(a).empty());

  // Re-enabled with a new cron, due from now.
  trigger_patch on;
  on.enabled = true;
  on.config = api::schedule_config{"0 * * * * *", "UTC"};
  on.schedule = schedule_state{at(2024, 5, 1, 0, 2, 0), std::nullopt};
  on.now = clk.now();
  REQUIRE(f.db->update_trigger("alice", a, on).has_value());
  s.refresh(a);
  CHECK(s.next_due() == at(2024, 5, 1, 0, 2, 0));
  step_through(clk, s, 60s);  // 00:02:05
  const auto runs = f.runs_of(a);
  REQUIRE(runs.size() == 1);
  CHECK(scheduled_at(runs[0]) == "2024-05-01T00:02:00Z");
  CHECK(runs[0].params.as_object().at("cron") == "0 * * * * *");
}

TEST_CASE("scheduler: 1,000 schedules fire in due order") {
  fixture f;
  manual_clock clk(at(2024, 4, 30, 23, 59, 59));
  // Daily at distinct times of day, created in an order unrelated to their times (7919 is
  // coprime to 86400, so i × 7919 mod 86400 is distinct for every i).
  constexpr int kCount = 1000;
  for (int i = 0; i < kCount; ++i) {
    const int t = (i * 7919) % 86400;
    f.add(std::to_string(t % 60) + " " + std::to_string(t / 60 % 60) + " " + std::to_string(t / 3600) + " * * *",
          clk.now());
  }
  scheduler s(*f.db, clk);
  REQUIRE(s.load().has_value());
  CHECK(s.size() == kCount);
  clk.advance(24h);
  CHECK(s.fire_due() == kCount);
  // Runs are leased oldest first, i.e. in the order they were queued.
  lease_request r;
  r.worker_id = "check";
  r.max_runs = kCount + 1;
  r.now = clk.now();
  const auto leased = f.db->lease_runs(r);
  REQUIRE(leased.has_value());
  REQUIRE(leased->size() == kCount);
  std::string previous;
  for (const auto& l : *leased) {
    const std::string when = scheduled_at(l.r);
    CHECK_MESSAGE(when > previous, when << " queued after " << previous);
    previous = when;
  }
  CHECK(s.next_due() > clk.now());
}

TEST_CASE("scheduler: the thread wakes when the clock reaches a due time") {
  fixture f;
  manual_clock clk(at(2024, 5, 1, 0, 0, 5));
  const std::string id = f.add("*/30 * * * * *", clk.now());
  std::atomic<int> woken{0};
  scheduler s(*f.db, clk, [&] { ++woken; });
  REQUIRE(s.load().has_value());
  s.start();
  clk.advance(30s);  // 00:00:35
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (f.runs_of(id).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  s.stop();
  const auto runs = f.runs_of(id);
  REQUIRE(runs.size() == 1);
  CHECK(scheduled_at(runs[0]) == "2024-05-01T00:00:30Z");
  CHECK(woken == 1);
}

}  // namespace enact::triggers::test
