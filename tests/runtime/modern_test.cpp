// SPDX-License-Identifier: Apache-2.0
// Actions as they are written today, on SpiderMonkey (docs/actions.md): the syntax Duktape's
// ES5.1 lacks, the action as the body of an async function (top-level await, the run ending
// when its promise settles), awaited Enact calls, and the limits inside async code. The cases
// that hold on both engines run on both.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "pool_fixture.hpp"

namespace rt = enact::runtime;
using namespace enact::runtime::test;

TEST_CASE("modern: every run starts in a fresh global, on either engine") {
  auto& p = shared_pool();
  for (int i = 0; i < 2 * static_cast<int>(p.size()); ++i)
    CHECK(run_ok(p, "var seen = typeof leaked; leaked = 1; Object.prototype.x = 1; Enact.setResponse(seen)")
              .response_json == R"("undefined")");
  CHECK(run_ok(p, "Enact.setResponse(({}).x === undefined)").response_json == "true");
}

TEST_CASE("modern: syntax beyond ES5.1 runs on SpiderMonkey") {
  if (on_duktape()) {
    MESSAGE("Duktape runs ES5.1: the syntax cases are SpiderMonkey's");
    const auto r = run_ok(shared_pool(), "let x = () => 1;");
    CHECK(r.failure == rt::failure_kind::exception);
    CHECK(r.message.rfind("SyntaxError", 0) == 0);
    return;
  }
  struct case_ {
    std::string_view code;
    std::string response;
  };
  const case_ cases[] = {
      {"let a = 1; const b = 2; { let a = 5; } Enact.setResponse(a + b)", "3"},
      {"const f = (x, y = 2) => x * y; Enact.setResponse([1, 2, 3].map(v => f(v)))", "[2,4,6]"},
      {"class A { #n; constructor(n) { this.#n = n; } get twice() { return this.#n * 2; } static of(n) { "
       "return new A(n); } } class B extends A {} Enact.setResponse(B.of(21).twice)",
       "42"},
      {"const who = 'world'; Enact.setResponse(`hello ${who}, ${1 + 1}`)", R"("hello world, 2")"},
      {"const {a, ...rest} = {a: 1, b: 2, c: 3}; const [x, , z] = [7, 8, 9]; "
       "Enact.setResponse({a, rest, x, z, o: params?.missing?.deep ?? 'none', s: [...'ab']})",
       R"({"a":1,"rest":{"b":2,"c":3},"x":7,"z":9,"o":"none","s":["a","b"]})"},
      // uint256 arithmetic with BigInt.
      {"Enact.setResponse(((1n << 256n) - 1n).toString(16))", "\"" + std::string(64, 'f') + "\""},
      {"Enact.setResponse((10n ** 18n * 1234n / 1000n).toString())", R"("1234000000000000000")"},
      {"const f = async x => x + 1; const g = async () => (await f(1)) + (await f(2)); "
       "Enact.setResponse(await g())",
       "5"},
      {"const r = await Promise.all([1, Promise.resolve(2), (async () => 3)()]); Enact.setResponse(r)", "[1,2,3]"},
      {"function* gen() { yield 1; yield 2; } Enact.setResponse([...gen()])", "[1,2]"},
      {"const m = new Map([[1, 'a']]); const s = new Set([1, 1, 2]); Enact.setResponse([m.get(1), s.size])",
       R"(["a",2])"},
      {"Enact.setResponse(Object.fromEntries([['k', [1, 2].includes(2)]]))", R"({"k":true})"},
      {"Enact.setResponse(new Date(0).getTimezoneOffset())", "0"},  // Date runs in UTC
  };
  for (const auto& c : cases) {
    CAPTURE(c.code);
    const auto r = run_ok(shared_pool(), c.code);
    CHECK(r.message == "");
    CHECK(r.failure == rt::failure_kind::none);
    CHECK(r.response_json == c.response);
  }
}

TEST_CASE("modern: the run ends when the action's promise settles") {
  if (on_duktape())
    return;  // Duktape has no promises
  auto& p = shared_pool();
  // Enact calls may be awaited: they answer at once, and await passes the value through.
  const auto awaited = run_ok(p,
                              "const a = await Enact.getAddress({pkpId: 'p1'});"
                              "const h = await Enact.sha256('abc');"
                              "Enact.setResponse([a.args.pkpId, h.slice(0, 10)])");
  CHECK(awaited.failure == rt::failure_kind::none);
  CHECK(awaited.response_json == R"(["p1","0xba7816bf"])");

  // Jobs queued and not awaited still run before the run ends.
  const auto queued = run_ok(p, "Promise.resolve(41).then(v => Enact.setResponse(v + 1));");
  CHECK(queued.failure == rt::failure_kind::none);
  CHECK(queued.response_json == "42");

  // A rejection is an exception carrying the stack of where it was thrown.
  const auto rejected = run_ok(p,
                               "await null;\n"
                               "async function inner() { await null; throw new TypeError('late'); }\n"
                               "await inner();\n");
  CHECK(rejected.failure == rt::failure_kind::exception);
  CHECK(rejected.message == "TypeError: late");
  CHECK(rejected.stack.find("inner@action.js:2") != std::string::npos);
  CHECK(rejected.stack.find("action.js:5") == std::string::npos);  // not the wrapper's own call
  CHECK(rejected.response_json.empty());

  const auto caught = run_ok(p,
                             "try { await Promise.reject(new Error('no')); } catch (e) {"
                             " Enact.setResponse(e.message); }");
  CHECK(caught.failure == rt::failure_kind::none);
  CHECK(caught.response_json == R"("no")");

  // Nothing can settle a promise nobody resolves: no timers, no outside events.
  const auto pending = run_ok(p, "Enact.setResponse(1); await new Promise(() => {});");
  CHECK(pending.failure == rt::failure_kind::exception);
  CHECK(pending.message.find("never settle") != std::string::npos);
  CHECK(pending.response_json.empty());

  // JSON has no BigInt: setResponse says so, as JSON.stringify would.
  const auto bigint = run_ok(p, "Enact.setResponse(1n)");
  CHECK(bigint.failure == rt::failure_kind::exception);
  CHECK(bigint.message.rfind("TypeError", 0) == 0);
}

TEST_CASE("modern: limits hold inside async code and promise jobs") {
  if (on_duktape())
    return;
  auto& p = shared_pool();
  const size_t restarts = p.restarts();
  const rt::limits lim = with_wall(300ms);
  const std::string_view loops[] = {
      "await null; while (true) {}",
      "(async () => { for (;;) await null; })();",  // a job queue that never empties
      "for (;;) { try { await null; while (true) {} } catch (e) {} finally { continue; } }",
  };
  for (const auto code : loops) {
    CAPTURE(code);
    const auto r = run_ok(p, code, "", &lim);
    CHECK(r.failure == rt::failure_kind::timeout);
    CHECK(r.run_time >= lim.wall);
  }
  const auto memory =
      run_ok(p, "const a = []; for (;;) { a.push({i: a.length}); if (a.length % 1000 === 0) await null; }");
  CHECK(memory.failure == rt::failure_kind::memory);
  const auto output = run_ok(p, "await null; Enact.setResponse('x'.repeat(2 << 20))");
  CHECK(output.failure == rt::failure_kind::output_too_large);
  CHECK(p.restarts() == restarts);
  CHECK(run_ok(p, "Enact.setResponse(await 'alive')").response_json == R"("alive")");
}
