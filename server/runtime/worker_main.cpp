// SPDX-License-Identifier: Apache-2.0
// enact-worker: one sandbox process of the pool (runtime.hpp). Started once by the pool with an
// empty environment and its channel on descriptor 3; confines itself, warms up everything that
// initialises lazily (so the seccomp filter can be strict), reports ready, then runs one action
// per request frame until the channel closes. Each run gets a heap (Duktape) or realm
// (SpiderMonkey) created after the previous run ended, while the worker waited for the request.
//
//   enact-worker --parent <pid> --address-space <bytes> [--engine spidermonkey|duktape]
//                [--allow-weak-isolation]
//                [--fail-layer <layer>]   (test builds only: ENACT_SANDBOX_TEST_HOOKS)
//
// Every isolation layer is required: a worker that could not put one in place sends its report
// (the parent names the missing layers) and exits with kExitUnconfined before it reads a request,
// so no action ever runs partly confined, whatever the parent does with the report. Only
// --allow-weak-isolation (the operator's --unsafe-allow-weak-sandbox) lets it go on without.
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <cstring>
#include <string>
#include <string_view>

#include "runtime/channel.hpp"
#include "runtime/confinement.hpp"
#include "runtime/runtime.hpp"
#include "runtime/sandbox.hpp"
#include "runtime/spidermonkey.hpp"

namespace json = boost::json;
using namespace enact::runtime;

namespace {

constexpr int kFd = channel::kWorkerFd;

// Exit codes the parent may see in its logs; any exit means the worker is replaced.
constexpr int kExitUsage = 64;
constexpr int kExitEngine = 70;
constexpr int kExitProtocol = 76;
constexpr int kExitUnconfined = 77;

[[noreturn]] void leave(int code) { std::_Exit(code); }

void send(const std::string& frame) {
  if (channel::write_frame(kFd, frame) != channel::io::ok)
    leave(0);  // the parent is gone
}

std::string receive() {
  std::string frame;
  if (channel::read_frame(kFd, frame, channel::kMaxRequestBytes) != channel::io::ok)
    leave(0);
  return frame;
}

std::string done_frame(const sandbox::outcome& o) {
  json::object done;
  done["failure"] = to_string(o.failure);
  if (o.has_response)
    done["response"] = o.response_json;
  done["logs"] = o.logs;
  done["logs_truncated"] = o.logs_truncated;
  done["message"] = o.message;
  done["stack"] = o.stack;
  json::object frame;
  frame["done"] = std::move(done);
  frame["retire"] = o.retire;
  return json::serialize(frame);
}

void send_fatal(const sandbox::outcome& o) { (void)channel::write_frame(kFd, done_frame(o)); }

// A capability call: forward it and block for the answer.
sandbox::call_answer call_parent(std::string_view method, std::string_view args) {
  std::string frame = R"({"call":")";
  frame += method;  // one of sandbox::kCapabilities: no characters that need escaping
  frame += R"(","args":)";
  frame += args;
  frame += '}';
  send(frame);
  json::error_code ec;
  const json::value reply = json::parse(receive(), ec);
  const json::object* o = reply.if_object();
  if (ec || o == nullptr)
    leave(kExitProtocol);
  if (const json::value* ok = o->if_contains("ok"))
    return {true, json::serialize(*ok)};
  if (const json::value* err = o->if_contains("error"); err != nullptr && err->is_string()) {
    return {false, std::string(err->get_string())};
  }
  leave(kExitProtocol);
}

size_t size_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || (!v->is_uint64() && !v->is_int64()))
    leave(kExitProtocol);
  return static_cast<size_t>(v->to_number<uint64_t>());
}

sandbox::request parse_request(const std::string& frame) {
  json::error_code ec;
  const json::value v = json::parse(frame, ec);
  const json::object* top = v.if_object();
  const json::value* run = top != nullptr ? top->if_contains("run") : nullptr;
  const json::object* r = run != nullptr ? run->if_object() : nullptr;
  if (ec || r == nullptr)
    leave(kExitProtocol);
  const json::value* code = r->if_contains("code");
  const json::value* params = r->if_contains("params");
  if (code == nullptr || !code->is_string() || params == nullptr || !params->is_string()) {
    leave(kExitProtocol);
  }
  sandbox::request req;
  req.code = std::string(code->get_string());
  req.params_json = std::string(params->get_string());
  req.lim.wall = std::chrono::milliseconds(size_field(*r, "wall_ms"));
  req.lim.heap_bytes = size_field(*r, "heap_bytes");
  req.lim.output_bytes = size_field(*r, "output_bytes");
  req.lim.log_bytes = size_field(*r, "log_bytes");
  return req;
}

// One run in a heap or realm made for it on the spot.
sandbox::outcome run_once(action_engine engine, const sandbox::request& req, const sandbox::call_parent& parent) {
  if (engine == action_engine::duktape)
    return sandbox::run(req, parent, nullptr);
  return spidermonkey::run(spidermonkey::fresh_realm(), req, parent);
}

// Everything a run may touch that initialises itself on first use and would then need a system
// call the filter refuses: OpenSSL's configuration (sha256), Date, RegExp, JSON, errors with
// stacks, typed arrays, and a large allocation (malloc's first mmap); on SpiderMonkey also
// async functions, BigInt, classes and Intl's time zone data.
void warm_up(action_engine engine) {
  sandbox::request req;
  req.code = R"js(
    var d = new Date(0);
    d.toString(); d.toISOString(); d.toLocaleString(); d.getTimezoneOffset();
    Date.parse('2020-01-01T00:00:00Z'); Date.now(); Math.random();
    if (typeof performance !== 'undefined') performance.now();
    JSON.stringify(JSON.parse('{"a":[1,2,{"b":null}]}'));
    /a+(b)/.exec('aab'); 'x'.repeat(1 << 20).length;
    new Uint8Array(16); new ArrayBuffer(1 << 20);
    Enact.sha256('warm'); Enact.keccak256('0x00'); Enact.sha256(new Uint8Array(4));
    console.log('warm', {a: 1}, [1], null, undefined, 1.5);
    try { Enact.getAddress({pkpId: 'x'}); } catch (e) { String(e.stack); }
    try { null.x; } catch (e) { String(e.stack); }
    Enact.setResponse({ok: params.x + 1});
  )js";
  req.params_json = R"({"x":1})";
  const sandbox::call_answer refused{false, "warm-up"};
  const sandbox::call_parent parent = [&](std::string_view, std::string_view) {
    return refused;
  };
  (void)run_once(engine, req, parent);
  if (engine == action_engine::spidermonkey) {
    req.code = R"js(
      class A { #x = 1n; get x() { return this.#x ** 64n; } }
      const f = async (n) => `${n}:${new A().x}`;
      await f(1); await Promise.all([f(2), Promise.resolve(3)]);
      new Intl.DateTimeFormat('en-US').format(new Date(0)); new Date(0).toLocaleString('en-US');
      (1234.5).toLocaleString(); 'a'.localeCompare('b'); new BigInt64Array(2);
      try { await Promise.reject(new Error('x')); } catch (e) { String(e.stack); }
    )js";
    (void)run_once(engine, req, parent);
    spidermonkey::collect_garbage();
  }
}

json::object report_json(const isolation_report& r) {
  return json::object{{"empty_environment", r.empty_environment},
                      {"fds_closed", r.fds_closed},
                      {"network_namespace", r.network_namespace},
                      {"dropped_privileges", r.dropped_privileges},
                      {"rlimits", r.rlimits},
                      {"no_new_privs", r.no_new_privs},
                      {"seccomp", r.seccomp},
                      {"notes", r.notes}};
}

}  // namespace

int main(int argc, char** argv) {
  long long parent = 0;
  unsigned long long address_space = 0;
  bool allow_weak = false;
  std::string_view fail_layer;
  action_engine engine = action_engine::spidermonkey;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--allow-weak-isolation") {
      allow_weak = true;
      continue;
    }
    if (i + 1 >= argc)
      leave(kExitUsage);
    if (arg == "--parent") {
      parent = std::atoll(argv[++i]);
    } else if (arg == "--address-space") {
      address_space = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--engine") {
      if (!parse_action_engine(argv[++i], engine))
        leave(kExitUsage);
#if defined(ENACT_SANDBOX_TEST_HOOKS)
    } else if (arg == "--fail-layer") {
      fail_layer = argv[++i];
      if (std::find(std::begin(kIsolationLayers), std::end(kIsolationLayers), fail_layer) ==
          std::end(kIsolationLayers)) {
        leave(kExitUsage);
      }
#endif
    } else {
      leave(kExitUsage);
    }
  }
  if (parent <= 0 || address_space == 0)
    leave(kExitUsage);

  // Die with the pool: the signal is tied to the thread that started us (the pool's spawner),
  // and the check closes the race with a parent that died before the prctl.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != static_cast<pid_t>(parent))
    leave(0);

  // Large blocks straight from mmap and back on free, so an idle worker does not keep the
  // memory of its largest run (the dynamic threshold would otherwise grow to 32 MiB).
  ::mallopt(M_MMAP_THRESHOLD, 256 << 10);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 20);
  // One malloc arena for every thread: a thread's own arena grows with mprotect, which the
  // seccomp filter refuses.
  ::mallopt(M_ARENA_MAX, 1);

  isolation_report report;
  // SpiderMonkey starts its threads before RLIMIT_NPROC forbids them.
  const auto start_engine = [&] {
    std::string why;
    if (engine == action_engine::spidermonkey && !spidermonkey::start(why))
      leave(kExitEngine);
  };
  confinement::prepare(report, kFd, static_cast<size_t>(address_space), fail_layer, start_engine);
  warm_up(engine);
  const int pid = static_cast<int>(::getpid());
  confinement::lock_down(report, kFd, fail_layer);

  send(json::serialize(json::object{{"hello", json::object{{"pid", pid}, {"isolation", report_json(report)}}}}));
  if (!allow_weak && !missing_layers(report).empty())
    leave(kExitUnconfined);

  if (engine == action_engine::spidermonkey) {
    spidermonkey::fresh_realm next;
    for (;;) {
      const sandbox::request req = parse_request(receive());
      send(done_frame(spidermonkey::run(std::move(next), req, call_parent)));
      spidermonkey::collect_garbage();  // while the pool has nothing for us
      next = spidermonkey::fresh_realm();
    }
  }
  sandbox::fresh_heap next(send_fatal);
  for (;;) {
    const sandbox::request req = parse_request(receive());
    const sandbox::outcome o = sandbox::run_keeping_heap(next, req, call_parent);
    send(done_frame(o));
    if (o.retire)
      leave(0);
    // While the pool has nothing for us: the spent heap destroyed after the answer went out (it
    // costs several times a trivial run), then the next one created, never two heaps at once.
    { const sandbox::fresh_heap spent(std::move(next)); }
    next = sandbox::fresh_heap(send_fatal);
  }
}
