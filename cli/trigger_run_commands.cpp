// SPDX-License-Identifier: Apache-2.0
// `enact triggers` runs: listing and following them, one run, and firing a webhook (docs/protocol.md §4).
#include <chrono>
#include <limits>
#include <thread>

#include <boost/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli.hpp"
#include "output.hpp"
#include "trigger_commands.hpp"

namespace enact::cli::trigger_cmd {

namespace json = boost::json;

int runs(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"limit", "offset", "interval", "max", "timeout"}, {"follow"});
  a.at_most(1);
  const std::string& id = a.at(0, "TRIGGER_ID");
  trigger_client c = connect(a);
  if (!a.has("follow")) {
    const auto l = with_hint([&] { return c.runs(id, limit_of(a), offset_of(a)); });
    emit(json::value_from(l));
    return 0;
  }
  // --follow: prints each run once it has finished, oldest first, until --max runs were printed
  // or --timeout seconds passed (both optional: without them it runs until interrupted). The
  // service pushes nothing, so the newest runs are polled every --interval seconds (default 1).
  const auto interval =
      std::chrono::milliseconds(a.get("interval") ? parse_u64(*a.get("interval"), "--interval") * 1000 : 1000);
  // Without --max, as many runs as a uint64_t counts: no limit that a follower could reach. A plain
  // count rather than an optional, which GCC could not prove engaged where it is read.
  const uint64_t max = a.get("max") ? parse_u64(*a.get("max"), "--max") : std::numeric_limits<uint64_t>::max();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (auto t = a.get("timeout"))
    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(parse_u64(*t, "--timeout"));
  std::set<std::string> printed;
  // Runs present before following began and already finished are history, not news.
  for (const auto& r : with_hint([&] { return c.runs(id, 100, 0); }).items)
    if (r.finished())
      printed.insert(r.id);
  uint64_t shown = 0;
  for (;;) {
    const auto l = with_hint([&] { return c.runs(id, 100, 0); });
    for (auto it = l.items.rbegin(); it != l.items.rend(); ++it) {
      if (!it->finished() || printed.count(it->id) != 0)
        continue;
      printed.insert(it->id);
      emit_item(json::value_from(*it));
      if (++shown >= max)
        return 0;
    }
    if (deadline && std::chrono::steady_clock::now() >= *deadline)
      return 0;
    std::this_thread::sleep_for(interval);
  }
}

int run_cmd(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"wait"});
  a.at_most(1);
  const std::string& id = a.at(0, "RUN_ID");
  trigger_client c = connect(a);
  if (auto w = a.get("wait"))
    emit(
        json::value_from(with_hint([&] { return c.wait_for_run(id, std::chrono::seconds(parse_u64(*w, "--wait"))); })));
  else
    emit(json::value_from(with_hint([&] { return c.get_run(id); })));
  return 0;
}

int fire_webhook(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"data", "content-type", "header", "wait"});
  a.at_most(1);
  const std::string& id = a.at(0, "TRIGGER_ID");
  client::webhook_request w;
  const std::string data = a.get("data").value_or("{}");
  w.body = data.size() > 1 && data.front() == '@' ? read_input(data.substr(1)) : data;
  w.content_type = a.get("content-type").value_or("application/json");
  if (auto h = a.get("header")) {
    const auto colon = h->find(':');
    if (colon == std::string::npos || colon == 0)
      throw usage_error("--header: expected 'Name: value'");
    w.headers.emplace_back(h->substr(0, colon), trim(h->substr(colon + 1)));
  }
  // The webhook is public: no token is needed to fire it, only the trigger's id.
  std::optional<saved_login> saved;
  try {
    saved = read_saved();
  } catch (const input_error&) {
  }
  trigger_client c = make_client(url_of(a, saved), {});
  const std::string run_id = c.fire_webhook(id, w);
  if (auto wait = a.get("wait")) {
    trigger_client authed = connect(a);
    emit(json::value_from(
        with_hint([&] { return authed.wait_for_run(run_id, std::chrono::seconds(parse_u64(*wait, "--wait"))); })));
    return 0;
  }
  emit_value("run_id", run_id);
  return 0;
}

}  // namespace enact::cli::trigger_cmd
