// SPDX-License-Identifier: Apache-2.0
// The worker pool (runtime.hpp). One spawner thread starts every worker, since PR_SET_PDEATHSIG
// ties a worker to the thread that started it; runs happen on the callers' threads, each owning one
// worker from dispatch to answer. Isolation is required, not hoped for: a worker lacking a layer
// turns the pool into one that refuses every run (docs/actions.md "Isolation is required").
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/channel.hpp"
#include "runtime/runtime.hpp"
#include "runtime/sandbox.hpp"
#include "runtime/utf8.hpp"
#include "runtime/worker_process.hpp"

namespace json = boost::json;

namespace enact::runtime {

namespace {

using clock = std::chrono::steady_clock;

// While the pool refuses runs for want of isolation, how often refused runs are logged.
constexpr auto kRefusalLogInterval = std::chrono::seconds(60);
constexpr unsigned kMaxReplacementShortfalls = 3;
// The operator's opt-out, named in the answer every refused run gets.
constexpr std::string_view kOptOut = "--unsafe-allow-weak-sandbox";

uint32_t mask_of(const std::vector<std::string>& layers) {
  uint32_t m = 0;
  for (const std::string& l : layers) {
    for (size_t i = 0; i < std::size(kIsolationLayers); ++i)
      if (kIsolationLayers[i] == l)
        m |= 1u << i;
  }
  return m;
}

std::vector<std::string> layers_of(uint32_t mask) {
  std::vector<std::string> out;
  for (size_t i = 0; i < std::size(kIsolationLayers); ++i)
    if ((mask & (1u << i)) != 0)
      out.emplace_back(kIsolationLayers[i]);
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items)
    out += (out.empty() ? "" : ", ") + i;
  return out;
}

json::array json_list(const std::vector<std::string>& items) {
  json::array out;
  for (const std::string& i : items)
    out.emplace_back(i);
  return out;
}

const json::string* string_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr ? v->if_string() : nullptr;
}

std::optional<failure_kind> parse_kind(std::string_view s) {
  for (const failure_kind k : {failure_kind::none, failure_kind::exception, failure_kind::timeout, failure_kind::memory,
                               failure_kind::output_too_large, failure_kind::crashed}) {
    if (to_string(k) == s)
      return k;
  }
  return std::nullopt;
}

bool valid(const limits& l) { return l.wall.count() > 0 && l.heap_bytes > 0 && l.output_bytes > 0 && l.log_bytes > 0; }

}  // namespace

class pool::impl {
 public:
  explicit impl(pool_config c) : cfg(std::move(c)) {}

  pool_config cfg;
  size_t address_space = 0;

  mutable std::mutex mu;
  std::condition_variable idle_cv;   // a worker became idle, the start finished, or stopping
  std::condition_variable spawn_cv;  // a slot needs a worker, or stopping
  std::vector<worker> workers;       // fixed size; a busy slot belongs to its runner
  // Longest idle first: a worker that has just answered is still creating its next heap.
  std::deque<size_t> idle;
  std::vector<size_t> dead;
  size_t restarts = 0;
  bool stopping = false;
  bool started = false;
  std::optional<error> start_error;
  isolation_report isolation;
  // Layers some worker since start lacked (bits in kIsolationLayers order).
  uint32_t missing_mask = 0;
  // Set once a worker lacked a required layer: every later run() gets this error.
  std::optional<error> refusal;
  // Replacement workers in a row that lacked a required layer. A replacement may meet a passing
  // shortage (a network namespace the kernel has not yet torn down, say): it is killed and
  // started again, and only kMaxReplacementShortfalls in a row make the pool refuse.
  unsigned replacement_shortfalls = 0;
  clock::time_point refusal_logged{};
  size_t refused_since_log = 0;
  std::thread spawner;

  // --- isolation ----------------------------------------------------------------------------

  void tell(std::string_view message, json::object fields) const {
    if (cfg.on_isolation)
      cfg.on_isolation(message, std::move(fields));
  }

  // The worker's report: accepted (nothing missing, or weak isolation allowed), or the pool
  // stops serving and the refusal is returned: the worker may not be used.
  std::optional<error> judge(const isolation_report& r) {
    const std::vector<std::string> missing = missing_layers(r);
    const uint32_t mask = mask_of(missing);
    bool refusing_now = false;
    bool weaker = false;
    std::optional<error> out;
    {
      const std::lock_guard lock(mu);
      isolation = r;
      // A replacement lacking a layer no worker lacked before (the start is reported whole).
      weaker = started && (mask & ~missing_mask) != 0;
      if (started && !cfg.allow_weak_isolation) {
        if (missing.empty()) {
          replacement_shortfalls = 0;
        } else if (++replacement_shortfalls < kMaxReplacementShortfalls) {
          // Not used, not yet a refusal: the spawner starts another after its pause.
          return error{make_error_code(runtime_errc::worker_start_failed),
                       "a replacement worker lacked isolation layers (" + joined(missing) + "); starting another"};
        }
      }
      missing_mask |= mask;
      if (!missing.empty() && !cfg.allow_weak_isolation) {
        if (!refusal) {
          refusal = error{make_error_code(runtime_errc::unconfined),
                          "the action sandbox serves no run: its workers cannot put these "
                          "isolation layers in place: " +
                              joined(layers_of(missing_mask)) +
                              " (the server log says why). Run enact-server as root on a host that "
                              "allows them (docs/actions.md), or start it with " +
                              std::string(kOptOut) + " to run actions without them"};
          refusal_logged = clock::now();
          refusing_now = true;
        }
        out = refusal;
      }
    }
    if (refusing_now) {
      idle_cv.notify_all();  // runs waiting for a worker get the refusal now
      tell("sandbox isolation incomplete: no action will run",
           {{"missing", json_list(missing)}, {"notes", r.notes}, {"opt_out", kOptOut}});
    } else if (weaker && cfg.allow_weak_isolation) {
      tell("sandbox isolation weakened: a new worker runs without more layers",
           {{"missing", json_list(missing)}, {"notes", r.notes}});
    }
    return out;
  }

  // With allow_weak_isolation, once the first workers are up: what they run without.
  void tell_not_enforced() {
    std::vector<std::string> missing;
    std::string notes;
    {
      const std::lock_guard lock(mu);
      missing = layers_of(missing_mask);
      notes = isolation.notes;
    }
    tell("sandbox isolation not enforced (" + std::string(kOptOut) +
             "): actions run without the layers a worker could not put in place",
         {{"missing", json_list(missing)}, {"notes", notes}});
  }

  // A run refused for want of isolation: logged at most once per kRefusalLogInterval.
  void note_refused_run() {
    size_t refused = 0;
    std::vector<std::string> missing;
    {
      const std::lock_guard lock(mu);
      ++refused_since_log;
      const auto now = clock::now();
      if (now - refusal_logged < kRefusalLogInterval)
        return;
      refusal_logged = now;
      refused = refused_since_log;
      refused_since_log = 0;
      missing = layers_of(missing_mask);
    }
    tell("sandbox isolation incomplete: runs refused",
         {{"missing", json_list(missing)}, {"refused_runs", refused}, {"opt_out", kOptOut}});
  }

  // --- spawning (spawner thread only) -----------------------------------------------------

  // The worker's ready report, judged; on failure the worker is killed and reaped.
  result<void> await_ready(worker& w) {
    ENACT_TRY(isolation_report report, read_ready_report(w, cfg));
    if (std::optional<error> refused = judge(report)) {
      kill_and_reap(w);  // it is exiting by itself; reap it
      return *refused;
    }
    return {};
  }

  result<worker> launch() { return launch_worker(cfg, address_space); }

  result<worker> spawn() {
    ENACT_TRY(worker w, launch());
    ENACT_TRY_VOID(await_ready(w));
    return w;
  }

  void spawner_loop() {
    // The first workers start side by side, then each is awaited.
    std::vector<worker> fresh;
    std::optional<error> failed;
    for (size_t i = 0; i < workers.size() && !failed; ++i) {
      auto w = launch();
      if (w)
        fresh.push_back(*w);
      else
        failed = w.err();
    }
    for (worker& w : fresh) {
      if (failed) {
        kill_and_reap(w);
      } else if (auto ready = await_ready(w); !ready) {
        failed = ready.err();
      }
    }
    // A worker that lacked a required layer is no failure to start: the pool starts, serving no
    // run, so the operator sees why in the answers and the log rather than a server that exits.
    const bool unconfined = failed && failed->code == runtime_errc::unconfined;
    // Said before start() returns, so the warning precedes anything the caller logs next.
    if (!failed && cfg.allow_weak_isolation)
      tell_not_enforced();
    {
      const std::lock_guard lock(mu);
      started = true;
      if (failed) {
        if (!unconfined)
          start_error = failed;
        for (worker& w : fresh)
          kill_and_reap(w);
      } else {
        for (size_t i = 0; i < fresh.size(); ++i) {
          workers[i] = fresh[i];
          idle.push_back(i);
        }
      }
    }
    idle_cv.notify_all();
    if (failed)
      return;

    std::unique_lock lock(mu);
    for (;;) {
      // Once runs are refused for want of isolation, no worker is started again.
      spawn_cv.wait(lock, [&] { return stopping || (!dead.empty() && !refusal); });
      if (stopping)
        return;
      const size_t idx = dead.back();
      dead.pop_back();
      lock.unlock();
      auto w = spawn();
      lock.lock();
      if (w) {
        workers[idx] = *w;
        idle.push_back(idx);
        idle_cv.notify_one();
      } else {
        // Try again shortly; runs keep using the remaining workers meanwhile.
        dead.push_back(idx);
        spawn_cv.wait_for(lock, std::chrono::seconds(1), [&] { return stopping; });
      }
    }
  }

  // --- dispatch ---------------------------------------------------------------------------

  // Kills the worker in `idx` and sends the slot for replacement. Returns how it ended.
  std::string retire(size_t idx) {
    worker w;
    {
      const std::lock_guard lock(mu);
      w = workers[idx];
      workers[idx] = worker{};
    }
    std::string how = kill_and_reap(w);
    {
      const std::lock_guard lock(mu);
      dead.push_back(idx);
      ++restarts;
    }
    spawn_cv.notify_one();
    return how;
  }

  void release(size_t idx) {
    {
      const std::lock_guard lock(mu);
      idle.push_back(idx);
    }
    idle_cv.notify_one();
  }

  result<size_t> acquire() {
    const auto until = clock::now() + cfg.queue_timeout;
    for (;;) {
      size_t idx;
      {
        std::unique_lock lock(mu);
        if (!idle_cv.wait_until(lock, until, [&] { return stopping || refusal || !idle.empty(); })) {
          return fail(runtime_errc::pool_saturated,
                      "no sandbox worker became free within " + std::to_string(cfg.queue_timeout.count()) + " ms");
        }
        if (stopping)
          return fail(runtime_errc::stopped, "the sandbox pool is stopping");
        if (refusal)
          return *refusal;
        idx = idle.front();
        idle.pop_front();
      }
      // An idle worker has nothing to say: readable or hung up means it died or went astray
      // while idle, so replace it rather than blame the next action for it.
      pollfd p{workers[idx].fd, POLLIN, 0};
      if (::poll(&p, 1, 0) == 0)
        return idx;
      retire(idx);
    }
  }

  result<run_result> execute(size_t idx, const std::string& request, const limits& lim, capability_handler& caps) {
    const int fd = workers[idx].fd;
    const auto start = clock::now();
    const auto until = start + lim.wall + cfg.kill_grace;
    // Escaping can grow text up to 6× (\u00XX); stack and message are capped by the worker.
    const size_t max_frame =
        6 * (lim.output_bytes + lim.log_bytes + sandbox::kMaxMessageBytes + sandbox::kMaxStackBytes) +
        channel::kMaxCallArgsBytes + (64u << 10);
    run_result res;
    const auto finish = [&] {
      res.run_time = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
      return res;
    };
    const auto lost = [&](channel::io st) -> result<run_result> {
      if (st == channel::io::too_large) {
        retire(idx);
        return fail(runtime_errc::protocol, "a sandbox worker sent an oversized frame");
      }
      const std::string how = retire(idx);
      if (st == channel::io::timeout) {
        res.failure = failure_kind::timeout;
        res.message = "the action did not finish within the wall-time limit of " + std::to_string(lim.wall.count()) +
                      " ms; its worker was killed";
      } else {
        res.failure = failure_kind::crashed;
        res.message = "the sandbox worker " + (how.empty() ? std::string("died") : how);
      }
      return finish();
    };
    const auto protocol = [&](const std::string& what) -> result<run_result> {
      retire(idx);
      return fail(runtime_errc::protocol, "sandbox worker: " + what);
    };

    caps.on_start(start + lim.wall);
    if (const channel::io st = channel::send_frame(fd, request, until); st != channel::io::ok) {
      return lost(st);
    }
    for (;;) {
      std::string frame;
      if (const channel::io st = channel::receive_frame(fd, frame, max_frame, until); st != channel::io::ok) {
        return lost(st);
      }
      json::error_code ec;
      const json::value v = json::parse(frame, ec);
      const json::object* msg = v.if_object();
      if (ec || msg == nullptr)
        return protocol("malformed frame");

      if (const json::string* method = string_field(*msg, "call")) {
        const json::value* args = msg->if_contains("args");
        if (!sandbox::is_call_method(*method) || args == nullptr || !args->is_object())
          return protocol("bad call frame");
        json::object answer;
        try {
          auto r = caps.call(*method, args->get_object());
          if (r)
            answer["ok"] = std::move(*r);
          else
            answer["error"] = r.err().message;
        } catch (const std::exception&) {
          answer["error"] = "internal error";
        }
        if (const channel::io st = channel::send_frame(fd, json::serialize(answer), until); st != channel::io::ok) {
          return lost(st);
        }
        continue;
      }

      const json::value* done_v = msg->if_contains("done");
      const json::object* done = done_v != nullptr ? done_v->if_object() : nullptr;
      if (done == nullptr)
        return protocol("unexpected frame");
      const json::string* kind = string_field(*done, "failure");
      const json::string* logs = string_field(*done, "logs");
      const json::string* message = string_field(*done, "message");
      const json::string* stack = string_field(*done, "stack");
      const json::value* truncated = done->if_contains("logs_truncated");
      const json::value* response = done->if_contains("response");
      const std::optional<failure_kind> k = kind != nullptr ? parse_kind(*kind) : std::optional<failure_kind>();
      if (!k || logs == nullptr || message == nullptr || stack == nullptr || truncated == nullptr ||
          !truncated->is_bool() || (response != nullptr && !response->is_string())) {
        return protocol("bad done frame");
      }
      res.failure = *k;
      if (response != nullptr)
        res.response_json = std::string(response->get_string());
      res.logs = std::string(*logs);
      res.logs_truncated = truncated->get_bool();
      res.message = std::string(*message);
      res.stack = std::string(*stack);
      finish();
      const json::value* retire_v = msg->if_contains("retire");
      if (retire_v != nullptr && retire_v->is_bool() && retire_v->get_bool()) {
        retire(idx);
      } else {
        release(idx);
      }
      return res;
    }
  }
};

pool::pool(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

pool::~pool() {
  {
    const std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->spawn_cv.notify_all();
  impl_->idle_cv.notify_all();
  if (impl_->spawner.joinable())
    impl_->spawner.join();
  for (worker& w : impl_->workers)
    kill_and_reap(w);
}

result<std::unique_ptr<pool>> pool::start(pool_config config) {
  if (config.worker_path.empty())
    config.worker_path = default_worker_path();
  if (::access(config.worker_path.c_str(), X_OK) != 0) {
    return fail(runtime_errc::worker_start_failed, "worker_path: " + config.worker_path + " is not an executable file");
  }
  if (!valid(config.defaults)) {
    return fail(runtime_errc::invalid_request, "defaults: every limit must be above zero");
  }
#if defined(ENACT_SANDBOX_TEST_HOOKS)
  if (config.fail_layer_for_tests.empty()) {
    if (const char* layer = std::getenv("ENACT_TEST_SANDBOX_FAIL_LAYER"); layer != nullptr)
      config.fail_layer_for_tests = layer;
  }
  if (!config.fail_layer_for_tests.empty() && std::find(std::begin(kIsolationLayers), std::end(kIsolationLayers),
                                                        config.fail_layer_for_tests) == std::end(kIsolationLayers)) {
    return fail(runtime_errc::invalid_request,
                "fail_layer_for_tests: " + config.fail_layer_for_tests + " is no isolation layer");
  }
#else
  if (!config.fail_layer_for_tests.empty()) {
    return fail(runtime_errc::invalid_request, "fail_layer_for_tests: this build has no sandbox test hooks");
  }
#endif
  if (config.size == 0)
    config.size = 2 * std::max(1u, std::thread::hardware_concurrency());
  auto p = std::make_unique<impl>(std::move(config));
  p->address_space =
      p->cfg.address_space_bytes != 0 ? p->cfg.address_space_bytes : p->cfg.defaults.heap_bytes + (512u << 20);
  p->workers.resize(p->cfg.size);
  impl* raw = p.get();
  p->spawner = std::thread([raw] { raw->spawner_loop(); });
  {
    std::unique_lock lock(raw->mu);
    raw->idle_cv.wait(lock, [&] { return raw->started; });
  }
  if (raw->start_error) {
    error e = *raw->start_error;
    raw->spawner.join();
    return e;
  }
  return std::unique_ptr<pool>(new pool(std::move(p)));
}

result<run_result> pool::run(std::string_view code, std::string_view params_json, capability_handler& caps,
                             const limits* override) {
  const limits& lim = override != nullptr ? *override : impl_->cfg.defaults;
  if (!valid(lim))
    return fail(runtime_errc::invalid_request, "limits: each must be above zero");
  if (const size_t bad = utf8::first_invalid(code); bad != std::string_view::npos) {
    return fail(runtime_errc::invalid_request, "code: not valid UTF-8 at byte " + std::to_string(bad));
  }
  if (!params_json.empty()) {
    json::error_code ec;
    (void)json::parse(params_json, ec);
    if (ec) {
      return fail(runtime_errc::invalid_request, "params: not valid JSON (" + ec.message() + ")");
    }
  }
  const std::string request = json::serialize(json::object{{"run", json::object{{"code", code},
                                                                                {"params", params_json},
                                                                                {"wall_ms", lim.wall.count()},
                                                                                {"heap_bytes", lim.heap_bytes},
                                                                                {"output_bytes", lim.output_bytes},
                                                                                {"log_bytes", lim.log_bytes}}}});
  if (request.size() > channel::kMaxRequestBytes) {
    return fail(runtime_errc::invalid_request,
                "code and params: over " + std::to_string(channel::kMaxRequestBytes) + " bytes");
  }
  const auto& on_run = impl_->cfg.on_run;
  const auto asked = clock::now();
  auto idx = impl_->acquire();
  const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - asked);
  if (!idx) {
    if (idx.code() == runtime_errc::unconfined)
      impl_->note_refused_run();
    if (on_run)
      on_run("sandbox run not started", {{"wait_us", waited.count()}, {"error", idx.err().message}});
    return idx.err();
  }
  const auto started = clock::now();
  auto out = impl_->execute(*idx, request, lim, caps);
  if (on_run) {
    // A run's own time when it ran; the time until the failure otherwise.
    const auto ran =
        out ? out->run_time : std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - started);
    on_run("sandbox run", {{"worker", *idx},
                           {"wait_us", waited.count()},
                           {"run_us", ran.count()},
                           {"code_bytes", code.size()},
                           {"outcome", out ? std::string(to_string(out->failure)) : "error: " + out.err().message}});
  }
  return out;
}

size_t pool::size() const { return impl_->workers.size(); }

size_t pool::restarts() const {
  const std::lock_guard lock(impl_->mu);
  return impl_->restarts;
}

std::vector<int> pool::worker_pids() const {
  const std::lock_guard lock(impl_->mu);
  std::vector<int> pids;
  for (const worker& w : impl_->workers) {
    if (w.pid > 0)
      pids.push_back(w.pid);
  }
  return pids;
}

isolation_report pool::isolation() const {
  const std::lock_guard lock(impl_->mu);
  return impl_->isolation;
}

isolation_status pool::isolation_state() const {
  const std::lock_guard lock(impl_->mu);
  return isolation_status{!impl_->cfg.allow_weak_isolation, !impl_->refusal, layers_of(impl_->missing_mask),
                          impl_->isolation.notes};
}

}  // namespace enact::runtime
