// SPDX-License-Identifier: Apache-2.0
// Attack: an action runs in a sandbox that is weaker than it claims. Every isolation layer of a
// worker (empty environment, closed descriptors, its own network namespace, root dropped to
// nobody, rlimits, no_new_privs, the seccomp filter) is required: when one cannot be put in
// place, enact-server serves no run — POST /run_action answers 503 `unavailable` naming the
// layer and the opt-out, nothing is charged, one error line in the log names it, and GET /info
// says `"sandbox": {"enforced": true, "serving": false, "missing": [...]}` — unless the operator
// started it with --unsafe-allow-weak-sandbox (or `unsafe_allow_weak = true` in `[sandbox]`),
// which warns at start, shows in /info, and lets runs go on. Before this rule a worker that could
// not confine itself ran the action anyway and only the start line's `sandbox_isolation` told.
//
// The layer is made to fail on purpose through the sandbox's test hook (the server reads
// ENACT_TEST_SANDBOX_FAIL_LAYER only in builds with ENACT_SANDBOX_TEST_HOOKS, which the test
// suite's build has and a release build has not); tests/runtime/isolation_test.cpp covers every
// layer at the pool's level.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "steps.hpp"

namespace enact::itest {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kCode = "Enact.setResponse({ok: params.x + 1});\n";
constexpr std::string_view kOptOut = "--unsafe-allow-weak-sandbox";

/// ENACT_TEST_SANDBOX_FAIL_LAYER for the servers started while it lives (they inherit it).
class failing_layer {
 public:
  explicit failing_layer(const std::string& layer) { ::setenv("ENACT_TEST_SANDBOX_FAIL_LAYER", layer.c_str(), 1); }
  ~failing_layer() { ::unsetenv("ENACT_TEST_SANDBOX_FAIL_LAYER"); }
  failing_layer(const failing_layer&) = delete;
  failing_layer& operator=(const failing_layer&) = delete;
};

/// An account with credits, and kCode stored and listed in one of its groups.
struct runner {
  account_keys acct;
  std::string cid;
};

runner prepare(http_client& c) {
  runner r{create_account(c, "sandbox"), {}};
  buy_credits(c, r.acct.auth(), 500);
  const response up = c.post("/upload_action", json::object{{"code", kCode}}, r.acct.auth());
  ITEST_REQUIRE_STATUS(up, 200);
  r.cid = s_of(up.body, "action_ipfs_cid");
  const response g =
      c.post("/add_group",
             json::object{{"name", "g"},
                          {"pkp_ids_permitted", json::array{}},
                          {"cid_hashes_permitted", json::array{json::string(s_of(up.body, "hashed_cid"))}}},
             r.acct.auth());
  ITEST_REQUIRE_STATUS(g, 200);
  return r;
}

response run(http_client& c, const runner& r, int x) {
  return c.post("/run_action", json::object{{"action_ipfs_cid", r.cid}, {"params", json::object{{"x", x}}}},
                r.acct.auth());
}

std::vector<std::string> strings_of(const json::value& v) {
  std::vector<std::string> out;
  for (const auto& x : v.as_array())
    out.emplace_back(x.as_string());
  return out;
}

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

/// The log lines whose msg starts with `prefix`, once at least `n` are there (at most 10 s).
std::vector<json::object> lines_starting(const server_process& srv, std::string_view prefix, size_t n = 1) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::vector<json::object> out;
  do {
    out.clear();
    for (const auto& l : srv.log_lines())
      if (const auto* m = l.if_contains("msg");
          m != nullptr && m->is_string() && std::string_view(m->get_string()).starts_with(prefix))
        out.push_back(l);
    if (out.size() >= n)
      break;
    std::this_thread::sleep_for(10ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return out;
}

json::object sandbox_info(http_client& c) {
  const response info = c.request("GET", "/info");
  ITEST_REQUIRE_STATUS(info, 200);
  REQUIRE(info.obj().contains("sandbox"));
  return info.obj().at("sandbox").as_object();
}

}  // namespace

TEST_CASE("sandbox: a missing isolation layer stops every run with 503 naming it") {
  for (const std::string layer : {"seccomp", "network_namespace", "rlimits"}) {
    CAPTURE(layer);
    const failing_layer hook(layer);
    server_process srv({"--dev", "--sandbox-workers", "1"});
    http_client c = srv.client();
    const runner r = prepare(c);
    const uint64_t before = balance_of(c, r.acct.auth());

    for (int x = 0; x < 3; ++x) {
      const response refused = run(c, r, x);
      check_error(srv, refused, 503, "unavailable", "/core/v1/run_action");
      CHECK(refused.error_message().find(layer) != std::string::npos);
      CHECK(refused.error_message().find(kOptOut) != std::string::npos);
    }
    // Nothing ran, so nothing was charged.
    CHECK(balance_of(c, r.acct.auth()) == before);

    // One error line, at start, naming the layer; not one per refused run.
    const auto lines = lines_starting(srv, "sandbox isolation");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].at("level").as_string() == "error");
    CHECK(has(strings_of(lines[0].at("missing")), layer));
    CHECK(lines[0].at("opt_out").as_string() == kOptOut);

    const json::object sb = sandbox_info(c);
    CHECK(sb.at("enforced").as_bool());
    CHECK_FALSE(sb.at("serving").as_bool());
    CHECK(has(strings_of(sb.at("missing")), layer));
  }
}

TEST_CASE("sandbox: --unsafe-allow-weak-sandbox runs without the layer, warns and says so") {
  struct case_ {
    std::string layer;
    bool by_config_file;  // `unsafe_allow_weak = true` in [sandbox] instead of the flag
  };
  for (const case_& k : {case_{"seccomp", false}, case_{"network_namespace", false}, case_{"rlimits", true}}) {
    CAPTURE(k.layer);
    const failing_layer hook(k.layer);
    temp_dir conf;
    std::vector<std::string> flags = {"--dev", "--sandbox-workers", "1"};
    if (k.by_config_file) {
      const std::string path = conf.path() + "/enact.toml";
      std::ofstream(path) << "[sandbox]\nunsafe_allow_weak = true\n";
      flags.insert(flags.end(), {"--config", path});
    } else {
      flags.emplace_back(kOptOut);
    }
    server_process srv(flags);
    http_client c = srv.client();
    const runner r = prepare(c);
    const response ok = run(c, r, 41);
    ITEST_REQUIRE_STATUS(ok, 200);
    CHECK(ok.obj().at("response") == json::value(json::object{{"ok", 42}}));

    const auto lines = lines_starting(srv, "sandbox isolation");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].at("level").as_string() == "warn");
    CHECK(std::string_view(lines[0].at("msg").as_string()).find(kOptOut) != std::string_view::npos);
    CHECK(has(strings_of(lines[0].at("missing")), k.layer));

    const json::object sb = sandbox_info(c);
    CHECK_FALSE(sb.at("enforced").as_bool());
    CHECK(sb.at("serving").as_bool());
    CHECK(has(strings_of(sb.at("missing")), k.layer));
  }
}

TEST_CASE("sandbox: a fully confined server runs actions and says so in /info") {
  server_process srv({"--dev", "--sandbox-workers", "1"});
  http_client c = srv.client();
  const json::object sb = sandbox_info(c);
  CHECK(sb.at("enforced").as_bool());
  if (::geteuid() != 0) {
    // Without root the workers would keep the server's uid: refused, with the fix in the answer.
    CHECK(has(strings_of(sb.at("missing")), "dropped_privileges"));
    CHECK_FALSE(sb.at("serving").as_bool());
    return;
  }
  CHECK(sb.at("serving").as_bool());
  CHECK(sb.at("missing").as_array().empty());
  const runner r = prepare(c);
  ITEST_REQUIRE_STATUS(run(c, r, 1), 200);
  CHECK(lines_starting(srv, "sandbox isolation", 0).empty());
}

}  // namespace enact::itest
