// SPDX-License-Identifier: Apache-2.0
// The action sandbox end to end: a pool of real enact-worker processes, actions that behave and
// actions that break every limit, capability calls, killed and hung workers, and the workers'
// confinement as the kernel reports it in /proc.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pool_fixture.hpp"
#include "proc_status.hpp"
#include "runtime/runtime.hpp"

namespace json = boost::json;
namespace rt = enact::runtime;
using namespace std::chrono_literals;

namespace {

// Refuses every call, as the server does for a PKP the run may not use.
struct refusing_handler : rt::capability_handler {
  enact::result<json::value> call(std::string_view, const json::object& args) override {
    return enact::error{std::make_error_code(std::errc::permission_denied),
                        "pkp " + json::serialize(args.at("pkpId")) + " is not allowed"};
  }
};

struct throwing_handler : rt::capability_handler {
  enact::result<json::value> call(std::string_view, const json::object&) override {
    throw std::runtime_error("secret detail that must not reach the action");
  }
};

// Signals `started` on the first call, so a test knows the action is running in its worker.
struct start_signal : rt::capability_handler {
  std::promise<void> started;
  bool fired = false;
  enact::result<json::value> call(std::string_view, const json::object&) override {
    if (!fired) {
      fired = true;
      started.set_value();
    }
    return json::value(nullptr);
  }
};

using namespace enact::runtime::test;
using enact::runtime::test::read_proc;
using enact::runtime::test::status_field;

}  // namespace

namespace doctest {
template <>
struct StringMaker<rt::failure_kind> {
  static String convert(rt::failure_kind k) { return std::string(rt::to_string(k)).c_str(); }
};
}  // namespace doctest

TEST_CASE("runtime: a trivial action answers through setResponse") {
  const auto r = run_ok(shared_pool(), "Enact.setResponse({ok: params.x + 1})", R"({"x":41})");
  CHECK(r.failure == rt::failure_kind::none);
  CHECK(r.response_json == R"({"ok":42})");
  CHECK(r.logs.empty());
  CHECK(r.message.empty());
}

TEST_CASE("runtime: params and response values") {
  struct case_ {
    std::string_view code;
    std::string_view params;
    std::string_view response;  // JSON text; "" = setResponse never called
  };
  const case_ cases[] = {
      {"Enact.setResponse(params)", R"({"a":[1,2.5,null],"s":"h\u00e9llo"})", R"({"a":[1,2.5,null],"s":"héllo"})"},
      {"Enact.setResponse(params)", "", "{}"},
      {"Enact.setResponse(params)", R"("text")", R"("text")"},
      {"Enact.setResponse(typeof params.n)", R"({"n":1})", R"("number")"},
      {"var x = 1;", "", ""},
      {"Enact.setResponse(undefined)", "", "null"},
      {"Enact.setResponse(function () {})", "", "null"},
      {"Enact.setResponse(1); Enact.setResponse(2)", "", "2"},
      {"Enact.setResponse('\\ud83d\\ude00')", "", "\"\xF0\x9F\x98\x80\""},  // pair → UTF-8
      {"Enact.setResponse('a\\ud800b')", "",
       "\"a\xEF\xBF\xBD"
       "b\""},  // lone → U+FFFD
      {"Enact.setResponse(params.e)", R"({"e":"\ud83d\ude00"})", "\"\xF0\x9F\x98\x80\""},
      {"Enact.setResponse(new Date(0).getTimezoneOffset())", "", "0"},  // Date runs in UTC
      {"Enact.setResponse(new Date(86400000).toISOString())", "", R"("1970-01-02T00:00:00.000Z")"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.code);
    CAPTURE(c.params);
    const auto r = run_ok(shared_pool(), c.code, c.params);
    CHECK(r.failure == rt::failure_kind::none);
    CHECK(r.response_json == c.response);
  }
}

TEST_CASE("runtime: console.log is captured, and cut at the log limit") {
  const auto r = run_ok(shared_pool(),
                        "console.log('a', 1, {b: 2}, [1, 'x'], null, undefined, true);"
                        "console.error(new TypeError('t'));"
                        "console.log();");
  CHECK(r.failure == rt::failure_kind::none);
  CHECK(r.logs == "a 1 {\"b\":2} [1,\"x\"] null undefined true\nTypeError: t\n\n");
  CHECK_FALSE(r.logs_truncated);

  rt::limits lim;
  lim.log_bytes = 100;
  const auto cut = run_ok(shared_pool(),
                          "for (var i = 0; i < 50; i++) console.log('line ' + (100 + i));"
                          "Enact.setResponse('finished');",
                          "", &lim);
  CHECK(cut.failure == rt::failure_kind::none);  // truncation is not a failure
  CHECK(cut.response_json == R"("finished")");
  CHECK(cut.logs_truncated);
  // 11 whole lines of 9 bytes, the first byte of the 12th, then the marker.
  std::string expected;
  for (int i = 0; i < 11; ++i)
    expected += "line " + std::to_string(100 + i) + "\n";
  expected += "line 111\nline";
  expected.resize(100);
  CHECK(cut.logs == expected + std::string(rt::kLogTruncationMarker));
}

TEST_CASE("runtime: exceptions carry the message and a stack naming action.js") {
  const auto r = run_ok(shared_pool(),
                        "// line 1\n"
                        "function inner() {\n"
                        "  throw new Error('boom');\n"  // line 3
                        "}\n"
                        "function outer() { inner(); }\n"  // line 5
                        "outer();\n");
  CHECK(r.failure == rt::failure_kind::exception);
  CHECK(r.message == "Error: boom");
  CHECK(r.stack.find("action.js:3") != std::string::npos);
  CHECK(r.stack.find("action.js:5") != std::string::npos);
  CHECK(r.response_json.empty());

  struct case_ {
    std::string_view code;
    std::string_view message_prefix;
  };
  const case_ cases[] = {
      {"throw 'oops'", "oops"},
      {"var = ;", "SyntaxError"},
      {"null.x", "TypeError"},
      {"Enact.setResponse(1); undefinedName", "ReferenceError"},
      {"var o = {}; o.o = o; Enact.setResponse(o)", "TypeError"},  // cyclic JSON
      {"Enact.sha256(42)", "TypeError: Enact.sha256: expected a string"},
      {"Enact.keccak256('0xzz')", "TypeError: Enact.keccak256: invalid hex digit"},
      {"Enact.signEcdsa('not an object')", "TypeError: Enact.signEcdsa: expected an object"},
      {"Enact.getAddress([1])", "TypeError: Enact.getAddress: expected an object"},
      {"Enact.getAddress({big: 'x'.repeat(2 << 20)})", "RangeError: Enact.getAddress: the argument"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.code);
    const auto e = run_ok(shared_pool(), c.code);
    CHECK(e.failure == rt::failure_kind::exception);
    CHECK(e.message.rfind(c.message_prefix, 0) == 0);
    CHECK(e.response_json.empty());  // a failed run has no response, even if it set one
  }
}

TEST_CASE("runtime: an endless loop stops at the wall limit inside the heap") {
  auto& p = shared_pool();
  const size_t restarts = p.restarts();
  const rt::limits lim = with_wall(500ms);
  const std::string_view loops[] = {
      "while (true) {}",
      "for (;;) { try { while (true) {} } catch (e) {} }",  // the timeout cannot be caught
      "function f() { try { for (;;) {} } finally { for (;;) {} } } f();",
  };
  for (const auto code : loops) {
    CAPTURE(code);
    const auto r = run_ok(p, code, "", &lim);
    CHECK(r.failure == rt::failure_kind::timeout);
    CHECK(r.run_time >= lim.wall);
    CHECK(r.message.find("500 ms") != std::string::npos);
  }
  // Stopped by the deadline check, not by the parent's SIGKILL: no worker was replaced.
  CHECK(p.restarts() == restarts);
  CHECK(run_ok(p, "Enact.setResponse(1)").response_json == "1");
}

TEST_CASE("runtime: allocation bombs fail as memory and the worker survives") {
  auto& p = shared_pool();
  const size_t restarts = p.restarts();
  std::vector<std::string_view> bombs = {
      "var a = new Array(1 << 28); for (var i = 0; i < a.length; i++) a[i] = i;",
      "var a = []; while (true) a.push({i: a.length});",
      // Flat strings of 1 MiB: JSON.stringify copies what 'x'.repeat may build as a rope.
      "var a = []; while (true) a.push(JSON.stringify('x'.repeat(1 << 20) + a.length));",
      "new Uint8Array(1 << 30);",  // one 1 GiB request
  };
  // Doubling a string: Duktape copies it each time and runs out of heap; SpiderMonkey's ropes
  // share the halves, so its maximum string length (2^30 - 2) stops these first, with an
  // exception (below).
  const std::string_view string_bombs[] = {
      "var s = 'x'; while (true) s = s + s;",
      "'x'.repeat(1 << 30);",
      "var s = 'x'; try { while (true) s = s + s; } catch (e) { throw e; }",
  };
  if (on_duktape())
    bombs.insert(bombs.end(), std::begin(string_bombs), std::end(string_bombs));
  for (const auto code : bombs) {
    CAPTURE(code);
    const auto r = run_ok(p, code);
    CHECK(r.failure == rt::failure_kind::memory);
    CHECK(r.message.find("heap limit") != std::string::npos);
  }
  if (!on_duktape()) {
    for (const auto code : string_bombs) {
      CAPTURE(code);
      const auto r = run_ok(p, code);
      CHECK(r.failure == rt::failure_kind::exception);
      CHECK((r.message.starts_with("InternalError: allocation size overflow") || r.message.starts_with("RangeError")));
    }
  }
  CHECK(p.restarts() == restarts);
  // Caught and recovered from, a refused allocation is not a failure.
  const auto recovered = run_ok(p,
                                "var got = 'nothing'; try { new Uint8Array(1 << 30); } catch (e) {"
                                " got = String(e); } Enact.setResponse(got);");
  CHECK(recovered.failure == rt::failure_kind::none);
  CHECK(recovered.response_json == (on_duktape() ? R"("Error: alloc failed")" : R"("out of memory")"));
}

TEST_CASE("runtime: a response over the output limit fails as output_too_large") {
  auto& p = shared_pool();
  const auto big = run_ok(p, "Enact.setResponse('x'.repeat(10 << 20))");
  CHECK(big.failure == rt::failure_kind::output_too_large);
  CHECK(big.response_json.empty());
  // Catching the error does not undo it.
  const auto caught = run_ok(p,
                             "try { Enact.setResponse('x'.repeat(10 << 20)); } catch (e) {} "
                             "Enact.setResponse(1);");
  CHECK(caught.failure == rt::failure_kind::output_too_large);

  rt::limits lim;
  lim.output_bytes = 10;
  struct case_ {
    std::string_view code;
    rt::failure_kind kind;
  };
  const case_ edges[] = {
      {"Enact.setResponse('12345678')", rt::failure_kind::none},  // "12345678" = 10 bytes
      {"Enact.setResponse('123456789')", rt::failure_kind::output_too_large},
      {"Enact.setResponse('\\u00e9\\u00e9\\u00e9\\u00e9')", rt::failure_kind::none},  // 10 bytes
      {"Enact.setResponse('\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9')", rt::failure_kind::output_too_large},
  };
  for (const auto& c : edges) {
    CAPTURE(c.code);
    CHECK(run_ok(p, c.code, "", &lim).failure == c.kind);
  }
}

TEST_CASE("runtime: deep recursion fails cleanly as an exception") {
  auto& p = shared_pool();
  const size_t restarts = p.restarts();
  const std::vector<int> pids = p.worker_pids();
  const std::string nested = std::string(5000, '(') + "1" + std::string(5000, ')');
  std::vector<std::string> cases = {
      "function f(n) { return f(n + 1) + 1; } f(0);",
      "function g(n) { return [n].map(g); } g(0);",  // through native calls
      "var a = []; for (var i = 0; i < 100000; i++) a = [a]; JSON.stringify(a);",
      "eval(" + std::string("'") + nested + "');",  // the compiler's own recursion limit
  };
  // SpiderMonkey's JSON.parse does not recurse: the deep array is parsed.
  if (on_duktape())
    cases.emplace_back("var s = ''; for (var i = 0; i < 100000; i++) s = '[' + s + ']'; JSON.parse(s);");
  // The error each engine throws for it.
  const std::string_view error = on_duktape() ? "RangeError" : "InternalError: too much recursion";
  for (const auto& code : cases) {
    CAPTURE(code.substr(0, 80));
    const auto r = run_ok(p, code);
    CHECK(r.failure == rt::failure_kind::exception);
    CHECK(r.message.rfind(error, 0) == 0);
  }
  CHECK(p.restarts() == restarts);
  CHECK(p.worker_pids() == pids);
  CHECK(run_ok(p, "Enact.setResponse('alive')").response_json == R"("alive")");
}

TEST_CASE("runtime: capability calls round-trip through the handler") {
  auto& p = shared_pool();
  const std::string_view methods[] = {"signEcdsa", "signMessage", "getAddress", "encrypt", "decrypt"};
  for (const auto method : methods) {
    CAPTURE(method);
    echo_handler caps;
    const std::string code =
        "Enact.setResponse(Enact." + std::string(method) + "({pkpId: '0xabc', digest: '0x01', n: [1, 2]}))";
    auto r = p.run(code, "", caps);
    REQUIRE(r.has_value());
    CHECK(r->failure == rt::failure_kind::none);
    CHECK(json::parse(r->response_json) == json::parse(R"({"method":")" + std::string(method) +
                                                       R"(","args":{"pkpId":"0xabc","digest":"0x01","n":[1,2]}})"));
    CHECK(caps.methods == std::vector<std::string>{std::string(method)});
  }

  // Several calls in one run, interleaved with work.
  echo_handler caps;
  auto many = p.run(
      "var out = [];"
      "for (var i = 0; i < 20; i++) out.push(Enact.getAddress({pkpId: 'p' + i}).args.pkpId);"
      "Enact.setResponse(out.join(','));",
      "", caps);
  REQUIRE(many.has_value());
  CHECK(many->response_json == R"("p0,p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14,p15,p16,)"
                               R"(p17,p18,p19")");
  CHECK(caps.methods.size() == 20);

  // A refusal becomes an Error the action can catch.
  refusing_handler refuse;
  auto refused = p.run(
      "try { Enact.signMessage({pkpId: '0x1', message: 'hi'}); Enact.setResponse('signed'); }"
      "catch (e) { Enact.setResponse([e instanceof Error, e.message]); }",
      "", refuse);
  REQUIRE(refused.has_value());
  CHECK(refused->failure == rt::failure_kind::none);
  CHECK(refused->response_json == R"([true,"pkp \"0x1\" is not allowed"])");

  // Uncaught, it fails the run as an exception with a stack into the action.
  auto uncaught = p.run("\n\nEnact.decrypt({pkpId: 7, ciphertext: 'x'});", "", refuse);
  REQUIRE(uncaught.has_value());
  CHECK(uncaught->failure == rt::failure_kind::exception);
  CHECK(uncaught->message == "Error: pkp 7 is not allowed");
  CHECK(uncaught->stack.find("action.js:3") != std::string::npos);

  // A handler that throws: the action sees only "internal error".
  throwing_handler thrower;
  auto thrown = p.run("try { Enact.encrypt({pkpId: 1}); } catch (e) { Enact.setResponse(e.message); }", "", thrower);
  REQUIRE(thrown.has_value());
  CHECK(thrown->response_json == R"("internal error")");
}

TEST_CASE("runtime: sha256 and keccak256 in the worker") {
  struct case_ {
    std::string_view code;
    std::string_view digest;  // source: FIPS 180-2 "abc" vector; Keccak-256 of empty input
  };
  const case_ cases[] = {
      {"Enact.sha256('abc')", "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"Enact.sha256('0x616263')", "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"Enact.sha256(new Uint8Array([0x61, 0x62, 0x63]))",
       "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"Enact.keccak256('')", "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
      {"Enact.keccak256('0x')", "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
      {"Enact.keccak256(new Uint8Array(0).buffer)",
       "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
      // crypto::keccak256("hello world"), as ethers' id("hello world")
      {"Enact.keccak256('hello world')", "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.code);
    const auto r = run_ok(shared_pool(), "Enact.setResponse(" + std::string(c.code) + ")");
    CHECK(r.failure == rt::failure_kind::none);
    CHECK(r.response_json == "\"" + std::string(c.digest) + "\"");
  }
}

TEST_CASE("runtime: the action sees only the engine's builtins, params, Enact and console") {
  const auto r = run_ok(shared_pool(),
                        "var g = Function('return this')();"
                        "var names = Object.getOwnPropertyNames(g);"
                        "var absent = ['require', 'print', 'alert', 'process', 'fetch', "
                        "'XMLHttpRequest', 'setTimeout', 'module', 'exports'].filter("
                        "  function (n) { return names.indexOf(n) >= 0; });"
                        "Enact.setResponse = null; console.log = null;"
                        "Enact.setResponse({absent: absent, frozen: Object.isFrozen(Enact),"
                        "  ours: ['params', 'Enact', 'console'].every("
                        "    function (n) { return names.indexOf(n) >= 0; })});");
  CHECK(r.failure == rt::failure_kind::none);
  CHECK(r.response_json == R"({"absent":[],"frozen":true,"ours":true})");
}

TEST_CASE("runtime: a worker killed mid-run fails the run as crashed and is replaced") {
  auto p = start(config(1));
  REQUIRE(p->worker_pids().size() == 1);
  const int victim = p->worker_pids()[0];

  start_signal caps;
  auto started = caps.started.get_future();
  std::future<enact::result<rt::run_result>> running = std::async(
      std::launch::async, [&] { return p->run("Enact.getAddress({pkpId: 'x'}); while (true) {}", "", caps); });
  started.wait();
  REQUIRE(::kill(victim, SIGKILL) == 0);
  auto r = running.get();
  REQUIRE(r.has_value());
  CHECK(r->failure == rt::failure_kind::crashed);
  CHECK(r->message.find("SIGKILL") != std::string::npos);
  CHECK(p->restarts() == 1);

  for (int i = 0; i < 3; ++i) {
    CHECK(run_ok(*p, "Enact.setResponse(params.i)", "{\"i\":" + std::to_string(i) + "}").response_json ==
          std::to_string(i));
  }
  REQUIRE(p->worker_pids().size() == 1);
  CHECK(p->worker_pids()[0] != victim);
}

TEST_CASE("runtime: a hung worker is killed at wall + grace and replaced") {
  auto c = config(1);
  c.kill_grace = 200ms;
  auto p = start(c);
  const int victim = p->worker_pids().at(0);

  start_signal caps;
  auto started = caps.started.get_future();
  const rt::limits lim = with_wall(500ms);
  std::future<enact::result<rt::run_result>> running = std::async(
      std::launch::async, [&] { return p->run("Enact.getAddress({pkpId: 'x'}); while (true) {}", "", caps, &lim); });
  started.wait();
  REQUIRE(::kill(victim, SIGSTOP) == 0);  // frozen: its own deadline check never runs
  auto r = running.get();
  REQUIRE(r.has_value());
  CHECK(r->failure == rt::failure_kind::timeout);
  CHECK(r->message.find("its worker was killed") != std::string::npos);
  CHECK(p->restarts() == 1);
  CHECK(run_ok(*p, "Enact.setResponse(true)").response_json == "true");
  CHECK(p->worker_pids().at(0) != victim);
}

TEST_CASE("runtime: an idle worker that died is replaced before it takes a run") {
  auto p = start(config(1));
  const int victim = p->worker_pids().at(0);
  REQUIRE(::kill(victim, SIGKILL) == 0);
  // Wait until it is a zombie (dead, not yet reaped by the pool) whose every thread has exited
  // (a SpiderMonkey worker has several, and the channel closes with the last): the next run
  // must notice.
  while (read_proc(victim, "stat").find(") Z ") == std::string::npos || status_field(victim, "Threads") != "1") {
    std::this_thread::sleep_for(1ms);
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    CHECK(run_ok(*p, "Enact.setResponse(1)").failure == rt::failure_kind::none);
  }
  CHECK(p->restarts() == 1);
}

TEST_CASE("runtime: 50 good runs on 8 threads succeed while a bad run loops") {
  auto& p = shared_pool();
  const rt::limits bad_limits = with_wall(3000ms);
  std::future<enact::result<rt::run_result>> bad = std::async(std::launch::async, [&] {
    echo_handler caps;
    return p.run("while (true) {}", "", caps, &bad_limits);
  });

  std::atomic<int> next{0}, good{0};
  std::vector<std::string> failures;
  std::mutex failures_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < 50; i = next++) {
        echo_handler caps;
        auto r = p.run(
            "Enact.setResponse({ok: params.x + 1, a: Enact.getAddress({pkpId: 'k'})"
            ".method})",
            "{\"x\":" + std::to_string(i) + "}", caps);
        const std::string want = "{\"ok\":" + std::to_string(i + 1) + ",\"a\":\"getAddress\"}";
        if (r && r->failure == rt::failure_kind::none && r->response_json == want) {
          ++good;
        } else {
          const std::lock_guard lock(failures_mu);
          failures.push_back(r ? r->message + " " + r->response_json : r.err().message);
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(good == 50);
  CHECK(failures.empty());
  auto b = bad.get();
  REQUIRE(b.has_value());
  CHECK(b->failure == rt::failure_kind::timeout);
}

TEST_CASE("runtime: workers run confined") {
  auto& p = shared_pool();
  const rt::isolation_report iso = p.isolation();
  MESSAGE("isolation: env=" << iso.empty_environment << " fds=" << iso.fds_closed << " netns=" << iso.network_namespace
                            << " nobody=" << iso.dropped_privileges << " rlimits=" << iso.rlimits
                            << " nnp=" << iso.no_new_privs << " seccomp=" << iso.seccomp << " notes=" << iso.notes);
  CHECK(iso.empty_environment);
  CHECK(iso.fds_closed);
  CHECK(iso.rlimits);
  // As root (CI, the reference deployment) every layer is required and in place, or the pool
  // would serve nothing.
  const rt::isolation_status st = p.isolation_state();
  CHECK(st.serving);
  if (::geteuid() == 0) {
    CHECK(st.enforced);
    CHECK(rt::missing_layers(iso).empty());
    CHECK(iso.network_namespace);
    CHECK(iso.dropped_privileges);
    CHECK(iso.no_new_privs);
    CHECK(iso.seccomp);
  }
  const std::vector<int> pids = p.worker_pids();
  REQUIRE(pids.size() == p.size());
  for (const int pid : pids) {
    CAPTURE(pid);
    // The environment the worker was started with, as the kernel keeps it: empty.
    CHECK(std::filesystem::exists("/proc/" + std::to_string(pid) + "/environ"));
    CHECK(read_proc(pid, "environ").empty());
    if (iso.no_new_privs)
      CHECK(status_field(pid, "NoNewPrivs") == "1");
    if (iso.seccomp)
      CHECK(status_field(pid, "Seccomp") == "2");
    if (iso.dropped_privileges)
      CHECK(status_field(pid, "Uid").rfind("65534", 0) == 0);
    // Only the channel is open.
    std::vector<std::string> fds;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
      fds.push_back(e.path().filename().string());
    }
    CHECK(fds == std::vector<std::string>{"3"});
    if (iso.network_namespace) {
      CHECK(std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/net") !=
            std::filesystem::read_symlink("/proc/self/ns/net"));
    }
    const std::string limits = read_proc(pid, "limits");
    CHECK(limits.find("Max core file size        0") != std::string::npos);
    if (iso.rlimits) {
      // One descriptor past the channel, no processes, no file writes (limits of /proc's table).
      CHECK(limits.find("Max open files            4 ") != std::string::npos);
      CHECK(limits.find("Max processes             0 ") != std::string::npos);
      CHECK(limits.find("Max file size             0 ") != std::string::npos);
    }
  }
}

TEST_CASE("runtime: bad requests and saturation are errors of the pool, not of the action") {
  auto& p = shared_pool();
  echo_handler caps;
  auto bad_params = p.run("Enact.setResponse(1)", "{not json", caps);
  REQUIRE_FALSE(bad_params.has_value());
  CHECK(bad_params.code() == rt::runtime_errc::invalid_request);
  CHECK(bad_params.err().message.rfind("params:", 0) == 0);

  auto bad_code = p.run("Enact.setResponse('\xC3(')", "", caps);
  REQUIRE_FALSE(bad_code.has_value());
  CHECK(bad_code.code() == rt::runtime_errc::invalid_request);
  CHECK(bad_code.err().message == "code: not valid UTF-8 at byte 19");

  rt::limits zero;
  zero.heap_bytes = 0;
  auto bad_limits = p.run("1", "", caps, &zero);
  REQUIRE_FALSE(bad_limits.has_value());
  CHECK(bad_limits.code() == rt::runtime_errc::invalid_request);

  auto c = config(1);
  c.worker_path = "/nonexistent/enact-worker";
  auto missing = rt::pool::start(c);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.code() == rt::runtime_errc::worker_start_failed);

  auto not_worker = config(1);
  not_worker.worker_path = "/bin/true";  // starts, never reports ready
  auto silent = rt::pool::start(not_worker);
  REQUIRE_FALSE(silent.has_value());
  CHECK(silent.code() == rt::runtime_errc::worker_start_failed);

  // One worker, busy: a second caller waits queue_timeout, then gets pool_saturated.
  auto one = config(1);
  one.queue_timeout = 100ms;
  auto small = start(one);
  start_signal busy;
  auto started = busy.started.get_future();
  const rt::limits lim = with_wall(1500ms);
  auto running = std::async(std::launch::async,
                            [&] { return small->run("Enact.getAddress({}); while (true) {}", "", busy, &lim); });
  started.wait();
  auto refused = small->run("Enact.setResponse(1)", "", caps);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.code() == rt::runtime_errc::pool_saturated);
  CHECK(running.get()->failure == rt::failure_kind::timeout);
  CHECK(run_ok(*small, "Enact.setResponse(2)").response_json == "2");
}
