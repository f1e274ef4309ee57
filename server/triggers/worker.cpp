// SPDX-License-Identifier: Apache-2.0
#include "triggers/worker.hpp"

#include <random>

#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "triggers/seal.hpp"

namespace enact::triggers {

using std::chrono::milliseconds;

milliseconds retry_backoff(milliseconds base, uint32_t attempts, milliseconds cap) {
  const uint32_t doublings = std::min<uint32_t>(attempts > 0 ? attempts - 1 : 0, 30);
  const int64_t full = std::min<int64_t>(cap.count(), base.count() << doublings);
  if (full <= 1)
    return milliseconds(std::max<int64_t>(full, 0));
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<int64_t> pick(full / 2, full);
  return milliseconds(pick(rng));
}

/// One worker thread's connection to the core.
class run_context {
 public:
  run_context(const worker_config& cfg, std::string worker_id) : worker_id(std::move(worker_id)) {
    client::client_options o;
    o.base_url = cfg.core_url;
    o.read_timeout = cfg.core_timeout;
    o.max_retries = 0;  // the worker's own retry rule applies (and run_action is a POST anyway)
    o.user_agent = "enact-triggers/0.1";
    core = std::make_unique<client::core_client>(o);
  }
  std::string worker_id;
  std::unique_ptr<client::core_client> core;
};

run_workers::run_workers(store& s, const tee::tee& t, const clock& c, worker_config cfg, event_sink log)
    : store_(s), tee_(t), clock_(c), cfg_(std::move(cfg)), log_(std::move(log)) {
  if (cfg_.instance_id.empty()) {
    std::array<uint8_t, 6> b{};
    crypto::random_bytes(b);
    cfg_.instance_id = codec::hex::encode(b);
  }
  cfg_.max_attempts = std::max<uint32_t>(1, cfg_.max_attempts);
}

run_workers::~run_workers() { stop(); }

void run_workers::report(severity level, std::string_view msg, json::object fields) const {
  if (log_)
    log_(level, msg, std::move(fields));
}

void run_workers::start() {
  std::lock_guard lock(mu_);
  if (!threads_.empty() || cfg_.threads == 0)
    return;
  stopping_ = false;
  for (size_t i = 0; i < cfg_.threads; ++i)
    threads_.emplace_back([this, i] { work(i); });
  renewer_ = std::thread([this] { renew_leases(); });
}

void run_workers::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  wake_renewer_.notify_all();
  for (auto& t : threads_)
    if (t.joinable())
      t.join();
  if (renewer_.joinable())
    renewer_.join();
  std::lock_guard lock(mu_);
  threads_.clear();
}

void run_workers::notify() {
  {
    std::lock_guard lock(mu_);
    ++signals_;
  }
  wake_.notify_one();
}

void run_workers::work(size_t index) {
  std::unique_ptr<run_context> ctx;
  const std::string worker_id = cfg_.instance_id + "/" + std::to_string(index);
  try {
    ctx = std::make_unique<run_context>(cfg_, worker_id);
  } catch (const std::exception& e) {
    report(severity::error, "run worker cannot reach the core service; not started",
           {{"worker", worker_id}, {"detail", e.what()}});
    return;
  }
  for (;;) {
    uint64_t seen = 0;
    {
      std::lock_guard lock(mu_);
      if (stopping_)
        return;
      seen = signals_;
    }
    lease_request req;
    req.worker_id = worker_id;
    req.max_runs = 1;
    req.duration = cfg_.lease;
    req.now = clock_.now();
    req.max_attempts = cfg_.max_attempts;
    auto leased = store_.lease_runs(req);
    if (leased && !leased->empty()) {
      execute(*ctx, leased->front());
      continue;
    }
    time_point deadline = clock_.now() + cfg_.idle_poll;
    if (!leased) {
      report(severity::warn, "leasing runs failed; retrying",
             {{"worker", worker_id}, {"detail", leased.err().message}});
      deadline = clock_.now() + std::chrono::seconds(1);
    } else if (auto w = store_.next_run_wakeup(); w && *w) {
      deadline = std::max(std::min(deadline, **w), clock_.now() + milliseconds(10));
    }
    std::unique_lock lock(mu_);
    if (stopping_)
      return;
    if (signals_ == seen)
      clock_.wait_until(lock, wake_, deadline);
  }
}

void run_workers::renew_leases() {
  const auto every = std::max(milliseconds(10), cfg_.lease / 3);
  std::unique_lock lock(mu_);
  while (!stopping_) {
    clock_.wait_until(lock, wake_renewer_, clock_.now() + every);
    if (stopping_)
      return;
    std::vector<lease_ref> held;
    for (const auto& kv : in_flight_)
      held.push_back(kv.second);
    lock.unlock();
    for (const auto& l : held)
      if (auto r = store_.renew_lease(l, clock_.now() + cfg_.lease); !r && r.code() != store_errc::lease_lost)
        report(severity::warn, "lease renewal failed", {{"run_id", l.run_id}, {"detail", r.err().message}});
    lock.lock();
  }
}

bool run_workers::wait_unless_stopping(milliseconds wait) {
  std::unique_lock lock(mu_);
  const time_point until = clock_.now() + wait;
  while (!stopping_ && clock_.now() < until)
    clock_.wait_until(lock, wake_renewer_, until);
  return !stopping_;
}

namespace {

/// Failures worth another attempt: the core or the path to it is overloaded or down.
bool transient(const api_error& e) {
  const int s = e.status();
  if (s >= 500 || s == 429)
    return true;
  return s == 0 && (e.errc() == api_errc::connection_failed || e.errc() == api_errc::timeout ||
                    e.errc() == api_errc::bad_response);
}

run_error error_of(const api_error& e) {
  run_error r{e.code_name(), e.message(), std::nullopt};
  if (e.errc() == api_errc::action_failed && e.details().is_object())
    if (const auto* st = e.details().as_object().if_contains("stack"); st && st->is_string())
      r.stack = std::string(st->get_string());
  return r;
}

}  // namespace

void run_workers::execute(run_context& ctx, leased_run& l) {
  const lease_ref ref{l.r.id, ctx.worker_id, l.r.attempts};
  {
    std::lock_guard lock(mu_);
    in_flight_[ref.run_id] = ref;
  }
  const auto started = std::chrono::steady_clock::now();
  report(severity::debug, "run leased",
         {{"run_id", ref.run_id},
          {"trigger_id", l.r.trigger_id},
          {"worker", ctx.worker_id},
          {"attempt", ref.attempt},
          {"queued_ms", std::chrono::duration_cast<milliseconds>(clock_.now() - l.r.queued_at).count()}});
  std::optional<json::value> response;
  std::optional<run_error> failure;
  bool retry = false;
  std::optional<std::chrono::seconds> retry_after;

  auto key = unseal_usage_key(tee_, l.sealed_usage_key);
  if (!key) {
    failure = run_error{"internal", "the trigger's usage key cannot be unsealed by this server's TEE", std::nullopt};
  } else {
    ctx.core->set_api_key(std::move(*key));
    client::run_action_request req;
    req.action_ipfs_cid = l.action_cid;
    req.pkp_id = l.pkp_id;
    if (l.r.params.is_object())
      req.params = l.r.params.get_object();
    // The run id is the Idempotency-Key, the same for each attempt of the run: an attempt whose
    // answer was lost (the connection cut, the core killed after it ran) is answered again by the
    // core instead of run and charged a second time. A 409 with Retry-After is an earlier attempt
    // still leased on the core: waited for (not an attempt, not a failure) within core_timeout.
    const auto give_up = std::chrono::steady_clock::now() + cfg_.core_timeout;
    for (;;) {
      failure.reset();
      retry = false;
      retry_after.reset();
      try {
        response = ctx.core->run_action(req, ref.run_id).response;
      } catch (const api_error& e) {
        failure = error_of(e);
        retry = transient(e);
        retry_after = e.retry_after();
        if (e.status() == 409 && e.errc() == api_errc::conflict && retry_after) {
          retry = true;  // if the wait below ends, a later attempt asks again
          const auto wait = std::max<milliseconds>(*retry_after, milliseconds(1000));
          if (std::chrono::steady_clock::now() + wait < give_up && wait_unless_stopping(wait)) {
            report(severity::debug, "run in progress on the core; waiting",
                   {{"run_id", ref.run_id}, {"retry_after_s", retry_after->count()}});
            continue;
          }
        }
      } catch (const std::exception& e) {
        failure = run_error{"internal", std::string("calling the core service: ") + e.what(), std::nullopt};
      }
      break;
    }
    ctx.core->set_api_key(Secret{});  // the previous key is wiped as it is replaced
  }

  const time_point now = clock_.now();
  result<void> written;
  std::string_view outcome;
  if (response) {
    written = store_.complete_run(ref, *response, now);
    outcome = "success";
  } else if (retry && l.r.attempts < cfg_.max_attempts) {
    auto wait = retry_backoff(cfg_.retry_base, l.r.attempts, cfg_.retry_cap);
    if (retry_after)
      wait = std::min(cfg_.retry_cap, std::max(wait, std::chrono::duration_cast<milliseconds>(*retry_after)));
    written = store_.retry_run_later(ref, *failure, now + wait);
    outcome = "retry";
    report(severity::debug, "run retry scheduled",
           {{"run_id", ref.run_id},
            {"attempt", ref.attempt},
            {"backoff_ms", wait.count()},
            {"retry_after_honoured", retry_after.has_value()},
            {"error", failure->code}});
  } else {
    auto failed = store_.fail_run(ref, *failure, now, cfg_.disable_after_credit_failures);
    if (failed && *failed)
      report(severity::warn, "schedule trigger disabled: its runs failed in a row for lack of credits",
             {{"trigger_id", l.r.trigger_id},
              {"run_id", ref.run_id},
              {"owner", l.owner},
              {"failures", cfg_.disable_after_credit_failures}});
    written = failed ? result<void>{} : result<void>(failed.err());
    outcome = "failed";
  }
  {
    std::lock_guard lock(mu_);
    in_flight_.erase(ref.run_id);
  }
  if (!written)
    report(severity::warn,
           written.code() == store_errc::lease_lost ? "run outcome dropped: the lease was lost"
                                                    : "run outcome not recorded",
           {{"run_id", ref.run_id}, {"detail", written.err().message}});
  json::object line{
      {"run_id", ref.run_id},
      {"trigger_id", l.r.trigger_id},
      {"outcome", outcome},
      {"attempt", ref.attempt},
      {"latency_ms", std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started).count()}};
  if (failure)
    line["error"] = failure->code;
  report(severity::info, "run attempt", std::move(line));
  if (outcome == "retry")
    notify();  // an idle worker recomputes its wakeup for the retry time
}

}  // namespace enact::triggers
