// SPDX-License-Identifier: Apache-2.0
// The trigger scheduler at scale: N schedule triggers in a SQLite trigger store (synchronous FULL
// by default, as enact-server runs it), the scheduler's index built from the store, then the
// scheduler thread run on the system clock for a while. Reports the cost of the index (time to
// load, resident memory it added) and the firing lateness — from a firing's planned time to the
// commit of its queued run — at p50, p99 and max, with commits and writes of the store.
//
//   enact_scheduler_bench [--schedules N] [--seconds S] [--pattern hourly|minute|burst]
//                         [--sync full|normal] [--threads T] [--lead S]
//
// Every trigger's first due time is its first fire time after a start time --lead seconds
// (default 90) after the bench began, by which the triggers are created and the index loaded;
// the scheduler thread starts then, so what is measured is the steady state, not the catch-up
// of firings that fell due while 100,000 triggers were being written.
//
// Patterns (every trigger a 6-field cron):
//   hourly  "S M * * * *" with (M, S) spread over the hour: N/3600 firings a second (the shape of
//           real schedules: many triggers, each rarely)
//   minute  "S * * * * *" with S spread over the minute: N/60 firings a second
//   burst   "0 * * * * *" for every trigger: all N due in the same second, once a minute
// The store and the load generator share the machine's cores with nothing else of the server.
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "enact/cron/cron.hpp"
#include "triggers/clock.hpp"
#include "triggers/ids.hpp"
#include "triggers/scheduler.hpp"
#include "triggers/sqlite_store.hpp"

namespace {

using namespace enact;
using namespace enact::triggers;
namespace fs = std::filesystem;

long rss_kib() {
  std::ifstream f("/proc/self/statm");
  long pages_total = 0;
  long pages_resident = 0;
  f >> pages_total >> pages_resident;
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

std::string cron_of(const std::string& pattern, size_t i) {
  if (pattern == "minute")
    return std::to_string(i % 60) + " * * * * *";
  if (pattern == "burst")
    return "0 * * * * *";
  const size_t t = (i * 7919) % 3600;  // 7919 is coprime to 3600: every second of the hour used
  return std::to_string(t % 60) + " " + std::to_string(t / 60) + " * * * *";
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "enact_scheduler_bench: %s\nusage: enact_scheduler_bench [--schedules N] "
               "[--seconds S] [--pattern hourly|minute|burst] [--sync full|normal] [--threads T] "
               "[--lead S]\n",
               msg);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 100000;
  int seconds = 70;
  std::string pattern = "hourly";
  bool sync_full = true;
  size_t threads = 16;
  int lead = 90;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      usage(("missing value after " + a).c_str());
    const std::string v = argv[++i];
    if (a == "--schedules")
      n = std::stoul(v);
    else if (a == "--seconds")
      seconds = std::stoi(v);
    else if (a == "--pattern" && (v == "hourly" || v == "minute" || v == "burst"))
      pattern = v;
    else if (a == "--sync" && (v == "full" || v == "normal"))
      sync_full = v == "full";
    else if (a == "--lead")
      lead = std::stoi(v);
    else if (a == "--threads")
      threads = std::max<size_t>(1, std::stoul(v));
    else
      usage(("bad argument " + a + " " + v).c_str());
  }

  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("enact-sched-bench-" + std::to_string(rd()));
  fs::create_directories(dir);
  sqlite_options so;
  so.synchronous_full = sync_full;
  auto opened = sqlite_store::open((dir / "triggers.sqlite").string(), so);
  if (!opened) {
    std::fprintf(stderr, "store: %s\n", opened.err().message.c_str());
    return 1;
  }
  sqlite_store& db = **opened;
  system_clock clk;

  // 1. N triggers, created from several threads (their writes share group commits).
  const auto t0 = std::chrono::steady_clock::now();
  const auto go = std::chrono::ceil<std::chrono::seconds>(clk.now() + std::chrono::seconds(lead));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> creators;
  for (size_t k = 0; k < threads; ++k)
    creators.emplace_back([&] {
      for (size_t i = next++; i < n && !failed; i = next++) {
        trigger t;
        t.id = new_trigger_id();
        t.owner = "bench";
        t.type = trigger_type::schedule;
        t.name = "s" + std::to_string(i);
        t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
        t.sealed_usage_key = bytes(60, 0x5a);
        const std::string expr = cron_of(pattern, i);
        t.config = enact::api::schedule_config{expr, "UTC"};
        t.created_at = t.updated_at = clk.now();
        const auto s = cron::parse(expr).value();
        const auto first = cron::next_after(s, go - std::chrono::seconds(1)).value();
        if (auto r = db.create_trigger(t, schedule_state{time_point(first), std::nullopt}); !r) {
          std::fprintf(stderr, "create: %s\n", r.err().message.c_str());
          failed = true;
        }
      }
    });
  for (auto& t : creators)
    t.join();
  if (failed)
    return 1;
  const double create_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // 2. The index.
  const long rss_before = rss_kib();
  std::vector<double> lateness_ms;
  lateness_ms.reserve(std::max<size_t>(n * 2, 1 << 16));
  scheduler sched(db, clk);
  // Firings planned before the scheduler thread started (while the triggers were being created
  // and the index loaded) are the one-time catch-up of missed firings, not lateness: not counted.
  time_point started{};
  size_t catch_up = 0;
  sched.set_observer([&](time_point planned, time_point committed) {
    if (planned < started) {
      ++catch_up;
      return;
    }
    lateness_ms.push_back(std::chrono::duration<double, std::milli>(committed - planned).count());
  });
  const auto t1 = std::chrono::steady_clock::now();
  if (auto r = sched.load(); !r) {
    std::fprintf(stderr, "load: %s\n", r.err().message.c_str());
    return 1;
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const long rss_after = rss_kib();
  const auto stats_before = db.stats();

  // 3. Firing on the system clock.
  started = std::max(go, std::chrono::ceil<std::chrono::seconds>(clk.now()));
  if (clk.now() < go)
    std::this_thread::sleep_until(std::chrono::system_clock::time_point(go - std::chrono::milliseconds(200)));
  sched.start();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  sched.stop();
  const auto stats_after = db.stats();

  std::vector<double> l = lateness_ms;  // the scheduler thread has stopped
  std::sort(l.begin(), l.end());
  const auto pct = [&](double p) {
    if (l.empty())
      return 0.0;
    return l[std::min(l.size() - 1, static_cast<size_t>(p * static_cast<double>(l.size())))];
  };
  const uint64_t commits = stats_after.commits - stats_before.commits;
  const uint64_t writes = stats_after.writes - stats_before.writes;
  std::printf(
      "schedules %zu (%s, synchronous %s): created in %.1f s; index loaded in %.2f s, +%.1f MiB "
      "resident (%.0f B per schedule)\n"
      "fired %zu in %d s (and %zu catch-up firings planned before the start): lateness p50 %.1f "
      "ms, p99 %.1f ms, max %.1f ms; %llu commits for %llu writes\n",
      n, pattern.c_str(), sync_full ? "FULL" : "NORMAL", create_s, load_s,
      static_cast<double>(rss_after - rss_before) / 1024.0,
      n ? static_cast<double>(rss_after - rss_before) * 1024.0 / static_cast<double>(n) : 0.0, l.size(), seconds,
      catch_up, pct(0.50), pct(0.99), l.empty() ? 0.0 : l.back(), static_cast<unsigned long long>(commits),
      static_cast<unsigned long long>(writes));
  std::printf(
      "{\"schedules\":%zu,\"pattern\":\"%s\",\"sync_full\":%s,\"load_s\":%.3f,\"index_kib\":%ld,"
      "\"fired\":%zu,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f,\"commits\":%llu}\n",
      n, pattern.c_str(), sync_full ? "true" : "false", load_s, rss_after - rss_before, l.size(), pct(0.50), pct(0.99),
      l.empty() ? 0.0 : l.back(), static_cast<unsigned long long>(commits));
  opened->reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}
