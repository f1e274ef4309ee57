// SPDX-License-Identifier: Apache-2.0
// The metering store's run path on SQLite (docs/benchmarks.md "Credits"): one run's writes, a
// hold (`reserve`) then its charge (`settle`), from 1 and 8 threads on one account, against a
// baseline of bare SQLite on the same disk from the same threads: the run's two writes as two
// durable commits of one small row each (an INSERT in its own IMMEDIATE transaction, synchronous
// FULL), which is what the writes cost with neither batching nor holds left unflushed. Beside
// them, the write a wallet-proof envelope adds: the first use of its nonce (`use_once`). The
// store's cases count the committer's commits per iteration (commits_per_op).
#include <benchmark/benchmark.h>

#include <sqlite3.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>

#include "metering/sqlite_store.hpp"

namespace {

namespace fs = std::filesystem;
using namespace enact::metering;

std::string scratch(const char* name) {
  const fs::path dir = fs::temp_directory_path() / ("enact-metering-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(p.string() + suffix);
  return p.string();
}

struct funded_store {
  std::unique_ptr<store> s;
  account_hash account{};
  key_hash key{};

  funded_store() {
    auto opened = open_sqlite(scratch("metering.sqlite"));
    if (!opened)
      throw std::runtime_error(opened.err().message);
    s = std::move(*opened);
    account[0] = 1;
    key[0] = 2;
    payment p;
    p.id = "pi_bench";
    p.account = account;
    p.amount_cents = uint64_t{1} << 50;
    p.provider = "dev";
    if (!s->record_payment(p) || !s->credit_payment(account, p.id))
      throw std::runtime_error("cannot fund the account");
  }
};

funded_store* shared_store = nullptr;
std::mutex setup_mu;

/// CPU seconds the whole process used so far (every thread, user and kernel: the fsyncs' and
/// writes' kernel work included), so that a figure survives a busy machine better than wall time.
double process_cpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// Sets the counter commits_per_op: the shared store's commits (its committer's transactions) per
/// iteration of all threads. Read by thread 0 alone, which made the store before its loop.
class commit_meter {
 public:
  explicit commit_meter(benchmark::State& state) : state_(state), start_(batches()) {}
  void finish() {
    if (state_.thread_index() != 0)
      return;
    const double total = static_cast<double>(state_.iterations()) * state_.threads();
    state_.counters["commits_per_op"] = total > 0 ? static_cast<double>(batches() - start_) / total : 0;
  }

 private:
  [[nodiscard]] uint64_t batches() const {
    if (state_.thread_index() != 0)
      return 0;
    const auto st = sqlite_commit_stats(*shared_store->s);
    return st ? st->batches : 0;
  }
  benchmark::State& state_;
  uint64_t start_;
};

/// Sets the counter cpu_us: the process's CPU per iteration of all threads, in microseconds.
class cpu_meter {
 public:
  explicit cpu_meter(benchmark::State& state) : state_(state), start_(process_cpu()) {}
  void finish() {
    if (state_.thread_index() != 0)
      return;
    const double total = static_cast<double>(state_.iterations()) * state_.threads();
    state_.counters["cpu_us"] = total > 0 ? (process_cpu() - start_) * 1e6 / total : 0;
  }

 private:
  benchmark::State& state_;
  double start_;
};

void BM_reserve_settle(benchmark::State& state) {
  if (state.thread_index() == 0) {
    std::lock_guard lock(setup_mu);
    shared_store = new funded_store();
  }
  // Google Benchmark starts the timed loops of all threads together, after every setup above.
  cpu_meter cpu(state);
  commit_meter commits(state);
  for (auto _ : state) {
    reserve_request q;
    q.account = shared_store->account;
    q.key = shared_store->key;
    q.amount = 3;
    q.key_cap = 0;
    q.run_id = "run";
    auto r = shared_store->s->reserve(q);
    if (!r) {
      state.SkipWithError(r.err().message.c_str());
      break;
    }
    auto done = shared_store->s->settle(q.account, r->id, 3);
    if (!done) {
      state.SkipWithError(done.err().message.c_str());
      break;
    }
  }
  cpu.finish();
  commits.finish();
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete shared_store;
    shared_store = nullptr;
  }
}
BENCHMARK(BM_reserve_settle)->Threads(1)->Threads(8)->UseRealTime();

/// A wallet-proof envelope's nonce, first used (store::use_once): a fresh id per iteration, kept
/// for the envelope's window. The ids count up per thread, so no two iterations share one.
void BM_use_once(benchmark::State& state) {
  if (state.thread_index() == 0) {
    std::lock_guard lock(setup_mu);
    shared_store = new funded_store();
  }
  cpu_meter cpu(state);
  commit_meter commits(state);
  enact::hash256 id{};
  id[0] = static_cast<uint8_t>(state.thread_index());
  uint64_t n = 0;
  for (auto _ : state) {
    ++n;
    for (size_t i = 0; i < 8; ++i)
      id[31 - i] = static_cast<uint8_t>(n >> (8 * i));
    auto first = shared_store->s->use_once(id, system_now() + 660'000);
    if (!first || !*first) {
      state.SkipWithError(first ? "a fresh nonce was taken for a replay" : first.err().message.c_str());
      break;
    }
  }
  cpu.finish();
  commits.finish();
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete shared_store;
    shared_store = nullptr;
  }
}
BENCHMARK(BM_use_once)->Threads(1)->Threads(8)->UseRealTime();

/// The baseline: two durable one-row commits per run (the run's two writes), serialized by a mutex
/// as SQLite's one writer is.
sqlite3* baseline_db = nullptr;
std::mutex baseline_mu;

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err != nullptr ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error(m);
  }
}

void BM_baseline_two_commits(benchmark::State& state) {
  if (state.thread_index() == 0) {
    std::lock_guard lock(setup_mu);
    if (sqlite3_open(scratch("baseline.sqlite").c_str(), &baseline_db) != SQLITE_OK)
      throw std::runtime_error("cannot open the baseline's file");
    exec(baseline_db, "PRAGMA journal_mode = WAL");
    exec(baseline_db, "PRAGMA synchronous = FULL");
    exec(baseline_db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)");
  }
  cpu_meter cpu(state);
  for (auto _ : state) {
    for (int i = 0; i < 2; ++i) {
      std::lock_guard lock(baseline_mu);
      exec(baseline_db, "BEGIN IMMEDIATE; INSERT INTO t (v) VALUES (1); COMMIT");
    }
  }
  cpu.finish();
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    sqlite3_close(baseline_db);
    baseline_db = nullptr;
  }
}
BENCHMARK(BM_baseline_two_commits)->Threads(1)->Threads(8)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
