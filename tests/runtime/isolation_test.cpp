// SPDX-License-Identifier: Apache-2.0
// Isolation is required, not hoped for (docs/actions.md "What an action can and cannot reach"):
// a worker that cannot put one layer in place is made here on purpose, through the test hook
// pool_config::fail_layer_for_tests (built only with ENACT_SANDBOX_TEST_HOOKS), and then
//   - without allow_weak_isolation the pool starts but serves no run: every run() answers
//     runtime_errc::unconfined naming the layer and the operator's opt-out, at once (no wait for
//     a worker), on_isolation is told once, and no worker is left running;
//   - the worker itself exits after its report, before it reads a request, whatever its parent
//     does (the enact-worker binary driven directly over its channel);
//   - with allow_weak_isolation runs go on, on_isolation warns once naming the layer, and /proc
//     shows the layer really is missing.
#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/channel.hpp"
#include "proc_status.hpp"
#include "runtime/runtime.hpp"

namespace json = boost::json;
namespace rt = enact::runtime;
using namespace std::chrono_literals;

#if !defined(ENACT_SANDBOX_TEST_HOOKS)
TEST_CASE("isolation: skipped, this build has no sandbox test hooks") {
  MESSAGE("configure with -DENACT_SANDBOX_TEST_HOOKS=ON to run the isolation cases");
}
#else

namespace {

// What on_isolation was told.
struct told {
  std::mutex mu;
  std::vector<std::pair<std::string, json::object> > lines;

  void operator()(std::string_view message, json::object fields) {
    const std::lock_guard lock(mu);
    lines.emplace_back(std::string(message), std::move(fields));
  }
  std::vector<std::pair<std::string, json::object> > all() {
    const std::lock_guard lock(mu);
    return lines;
  }
};

rt::pool_config config_failing(std::string_view layer, bool allow_weak, told& sink) {
  rt::pool_config c;
  c.worker_path = ENACT_WORKER_PATH;
  c.size = 2;
  c.defaults.wall = 5000ms;
  c.queue_timeout = 3000ms;
  c.allow_weak_isolation = allow_weak;
  c.fail_layer_for_tests = std::string(layer);
  c.on_isolation = [&sink](std::string_view m, json::object f) {
    sink(m, std::move(f));
  };
  return c;
}

struct no_calls : rt::capability_handler {
  enact::result<json::value> call(std::string_view, const json::object&) override { return json::value(nullptr); }
};

std::vector<std::string> strings_of(const json::value& v) {
  std::vector<std::string> out;
  for (const auto& x : v.as_array())
    out.emplace_back(x.as_string());
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

using enact::runtime::test::read_proc;
using enact::runtime::test::status_field;

}  // namespace

TEST_CASE("isolation: a layer that cannot be put in place stops every run, naming it") {
  // Three layers that fail on real hosts (no CAP_SYS_ADMIN for a namespace, a container's
  // seccomp policy, a hard limit below ours), and the others for completeness.
  for (const std::string_view layer : rt::kIsolationLayers) {
    CAPTURE(layer);
    told sink;
    auto started = rt::pool::start(config_failing(layer, false, sink));
    // The pool starts: a server that exited would leave the operator guessing; one that answers
    // 503 naming the layer does not.
    REQUIRE_MESSAGE(started.has_value(), (started ? std::string() : started.err().message));
    auto& p = **started;

    const rt::isolation_status st = p.isolation_state();
    CHECK(st.enforced);
    CHECK_FALSE(st.serving);
    CHECK(contains(st.missing, layer));
    CHECK(st.notes.find(std::string(layer) + ": left out on purpose") != std::string::npos);
    CHECK(p.worker_pids().empty());  // each exited after its report, and was reaped

    no_calls caps;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = p.run("Enact.setResponse(1)", "", caps);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.code() == rt::runtime_errc::unconfined);
      CHECK(r.err().message.find(std::string(layer)) != std::string::npos);
      CHECK(r.err().message.find("--unsafe-allow-weak-sandbox") != std::string::npos);
      CHECK(std::chrono::steady_clock::now() - t0 < 1s);  // refused at once, not after a wait
    }
    CHECK(p.isolation().notes.find(std::string(layer)) != std::string::npos);

    // Told once at start, not once per refused run.
    const auto lines = sink.all();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].first.find("no action will run") != std::string::npos);
    CHECK(contains(strings_of(lines[0].second.at("missing")), layer));
    CHECK(lines[0].second.at("opt_out").as_string() == "--unsafe-allow-weak-sandbox");
  }
}

TEST_CASE("isolation: with allow_weak_isolation runs go on without the layer, and it is said") {
  for (const std::string_view layer : {"seccomp", "network_namespace", "rlimits"}) {
    CAPTURE(layer);
    told sink;
    auto started = rt::pool::start(config_failing(layer, true, sink));
    REQUIRE_MESSAGE(started.has_value(), (started ? std::string() : started.err().message));
    auto& p = **started;

    no_calls caps;
    auto r = p.run("Enact.setResponse({ok: params.x + 1})", R"({"x":1})", caps);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.err().message));
    CHECK(r->failure == rt::failure_kind::none);
    CHECK(r->response_json == R"({"ok":2})");

    const rt::isolation_status st = p.isolation_state();
    CHECK_FALSE(st.enforced);
    CHECK(st.serving);
    CHECK(contains(st.missing, layer));

    const auto lines = sink.all();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].first.find("not enforced") != std::string::npos);
    CHECK(contains(strings_of(lines[0].second.at("missing")), layer));

    // The layer really is missing in the running workers: the opt-out is no pretence.
    const std::vector<int> pids = p.worker_pids();
    REQUIRE(pids.size() == p.size());
    for (const int pid : pids) {
      CAPTURE(pid);
      if (layer == std::string_view("seccomp")) {
        CHECK(status_field(pid, "Seccomp") == "0");
      } else if (layer == std::string_view("network_namespace")) {
        CHECK(std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/net") ==
              std::filesystem::read_symlink("/proc/self/ns/net"));
      } else {
        // RLIMIT_NOFILE would be 4 (the channel is descriptor 3).
        CHECK(read_proc(pid, "limits").find("Max open files            4 ") == std::string::npos);
      }
    }
  }
}

TEST_CASE("isolation: fully confined workers serve, and allow_weak_isolation still says so") {
  if (::geteuid() != 0) {
    MESSAGE("not root: workers keep the server's uid, so full isolation needs root");
    return;
  }
  told strict_sink;
  rt::pool_config strict;
  strict.worker_path = ENACT_WORKER_PATH;
  strict.size = 1;
  strict.on_isolation = [&](std::string_view m, json::object f) {
    strict_sink(m, std::move(f));
  };
  auto p = rt::pool::start(strict);
  REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : p.err().message));
  const rt::isolation_status st = (*p)->isolation_state();
  CHECK(st.enforced);
  CHECK(st.serving);
  CHECK_MESSAGE(st.missing.empty(), "notes: " << st.notes);
  CHECK(strict_sink.all().empty());  // nothing to say

  // The opt-out warns at start even when nothing is missing: it is a setting to notice.
  told weak_sink;
  rt::pool_config weak = strict;
  weak.allow_weak_isolation = true;
  weak.on_isolation = [&](std::string_view m, json::object f) {
    weak_sink(m, std::move(f));
  };
  auto w = rt::pool::start(weak);
  REQUIRE(w.has_value());
  CHECK_FALSE((*w)->isolation_state().enforced);
  CHECK((*w)->isolation_state().missing.empty());
  const auto lines = weak_sink.all();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].second.at("missing").as_array().empty());
}

TEST_CASE("isolation: an unknown layer name is refused, not ignored") {
  told sink;
  auto p = rt::pool::start(config_failing("no_such_layer", false, sink));
  REQUIRE_FALSE(p.has_value());
  CHECK(p.code() == rt::runtime_errc::invalid_request);
}

// The worker does not rely on its parent: without --allow-weak-isolation it reports, then exits
// before it reads a request, so a parent that sent a run anyway gets no answer.
TEST_CASE("isolation: an unconfined worker exits after its report and runs nothing") {
  for (const bool allow_weak : {false, true}) {
    CAPTURE(allow_weak);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, sv[1], rt::channel::kWorkerFd);
    const std::string parent = std::to_string(::getpid());
    std::vector<std::string> args = {ENACT_WORKER_PATH,        "--parent",     parent,   "--address-space",
                                     std::to_string(1u << 30), "--fail-layer", "seccomp"};
    if (allow_weak)
      args.emplace_back("--allow-weak-isolation");
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    char* envp[] = {nullptr};
    pid_t pid = -1;
    REQUIRE(::posix_spawn(&pid, ENACT_WORKER_PATH, &actions, nullptr, argv.data(), envp) == 0);
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(sv[1]);
    const int fd = sv[0];

    std::string hello;
    REQUIRE(rt::channel::receive_frame(fd, hello, 64u << 10, std::chrono::steady_clock::now() + 10s) ==
            rt::channel::io::ok);
    const json::value h = json::parse(hello);
    CHECK_FALSE(h.at("hello").at("isolation").at("seccomp").as_bool());

    const std::string request = R"js({"run":{"code":"Enact.setResponse(7)","params":"","wall_ms":1000,)js"
                                R"js("heap_bytes":16777216,"output_bytes":65536,"log_bytes":4096}})js";
    (void)rt::channel::send_frame(fd, request, std::chrono::steady_clock::now() + 2s);
    std::string answer;
    const rt::channel::io st = rt::channel::receive_frame(fd, answer, 1u << 20, std::chrono::steady_clock::now() + 10s);
    if (allow_weak) {
      CHECK(st == rt::channel::io::ok);
      CHECK(answer.find(R"js("response":"7")js") != std::string::npos);
      ::close(fd);  // the worker leaves when its channel closes
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (!allow_weak) {
      CHECK(st != rt::channel::io::ok);  // no answer: it never ran the code
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 77);
      ::close(fd);
    }
  }
}

#endif  // ENACT_SANDBOX_TEST_HOOKS
