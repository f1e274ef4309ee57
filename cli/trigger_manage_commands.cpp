// SPDX-License-Identifier: Apache-2.0
// `enact triggers` create, list, get, enable, disable, update and remove (docs/protocol.md §4).
#include <limits>

#include <boost/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli.hpp"
#include "enact/address.hpp"
#include "output.hpp"
#include "trigger_commands.hpp"

namespace enact::cli::trigger_cmd {

namespace json = boost::json;

const std::set<std::string> kCreateOptions = {
    "name",           "action", "pkp",    "usage-key-file", "cron",        "chain",         "contract",
    "event",          "topic1", "topic2", "topic3",         "start-block", "confirmations", "max-runs-per-minute",
    "max-queued-runs"};

/// --max-runs-per-minute and --max-queued-runs (the service checks their range).
template <class Fields>
void read_limits(const args& a, Fields& f) {
  const auto limit = [&](const char* flag) -> std::optional<uint32_t> {
    const auto v = a.get(flag);
    if (!v)
      return std::nullopt;
    const uint64_t n = parse_u64(*v, std::string("--") + flag);
    if (n == 0 || n > std::numeric_limits<uint32_t>::max())
      throw usage_error(std::string("--") + flag + ": expected a positive integer");
    return static_cast<uint32_t>(n);
  };
  f.max_runs_per_minute = limit("max-runs-per-minute");
  f.max_queued_runs = limit("max-queued-runs");
}

int create(const std::vector<std::string>& argv) {
  args a = parse_args(argv, kCreateOptions, {"disabled"});
  a.at_most(1);
  const std::string& type = a.at(0, "TYPE (webhook, schedule or chain-event)");
  client::new_trigger t;
  t.name = a.require("name");
  t.enabled = !a.has("disabled");
  t.action_ipfs_cid = a.require("action");
  if (auto p = a.get("pkp")) {
    auto addr = parse_address(*p, "--pkp");
    if (!addr)
      throw usage_error(addr.err().message);
    t.pkp_id = *addr;
  }
  const auto only = [&](std::initializer_list<const char*> allowed) {
    for (const char* o :
         {"cron", "chain", "contract", "event", "topic1", "topic2", "topic3", "start-block", "confirmations"}) {
      if (!a.get(o))
        continue;
      bool ok = false;
      for (const char* x : allowed)
        ok = ok || std::string_view(x) == o;
      if (!ok)
        throw usage_error(std::string("--") + o + " does not apply to a " + type + " trigger");
    }
  };
  if (type == "webhook") {
    only({});
    t.config = client::webhook_config{};
  } else if (type == "schedule") {
    only({"cron"});
    t.config = client::schedule_config{a.require("cron"), "UTC"};
  } else if (type == "chain-event") {
    only({"chain", "contract", "event", "topic1", "topic2", "topic3", "start-block", "confirmations"});
    client::chain_event_config e;
    e.chain = a.require("chain");
    auto contract = parse_address(a.require("contract"), "--contract");
    if (!contract)
      throw usage_error(contract.err().message);
    e.contract = *contract;
    e.event = a.require("event");
    if (auto sb = a.get("start-block"))
      e.start_block = parse_u64(*sb, "--start-block");
    if (auto n = a.get("confirmations"))
      e.confirmations = static_cast<uint32_t>(parse_u64(*n, "--confirmations"));
    // --topicN filters the N-th indexed parameter; those before the last given one match any.
    int last = 0;
    for (int i = 1; i <= 3; ++i)
      if (a.get("topic" + std::to_string(i)))
        last = i;
    for (int i = 1; i <= last; ++i) {
      const std::string opt = "topic" + std::to_string(i);
      e.topic_filters.push_back(a.get(opt) ? topic_filter_arg(*a.get(opt), "--" + opt) : std::vector<hash256>{});
    }
    t.config = std::move(e);
  } else {
    throw usage_error("TYPE: expected webhook, schedule or chain-event (got '" + type + "')");
  }
  read_limits(a, t);
  t.usage_api_key = usage_key_of(a);
  trigger_client c = connect(a);
  print_trigger(with_hint([&] { return c.create(t); }));
  return 0;
}

int list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"limit", "offset"});
  a.at_most(0);
  trigger_client c = connect(a);
  const auto l = with_hint([&] { return c.list(limit_of(a), offset_of(a)); });
  emit(json::value_from(l));
  return 0;
}

/// A command taking one trigger id: get, enable, disable.
template <class F>
int on_trigger(const std::vector<std::string>& argv, F&& f) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string& id = a.at(0, "TRIGGER_ID");
  trigger_client c = connect(a);
  print_trigger(with_hint([&] { return f(c, id); }));
  return 0;
}

int get(const std::vector<std::string>& argv) {
  return on_trigger(argv, [](trigger_client& c, const std::string& id) { return c.get(id); });
}
int enable(const std::vector<std::string>& argv) {
  return on_trigger(argv, [](trigger_client& c, const std::string& id) { return c.enable(id); });
}
int disable(const std::vector<std::string>& argv) {
  return on_trigger(argv, [](trigger_client& c, const std::string& id) { return c.disable(id); });
}

int update(const std::vector<std::string>& argv) {
  args a = parse_args(
      argv, {"name", "action", "pkp", "usage-key-file", "cron", "max-runs-per-minute", "max-queued-runs"}, {"no-pkp"});
  a.at_most(1);
  const std::string& id = a.at(0, "TRIGGER_ID");
  client::trigger_patch p;
  p.name = a.get("name");
  p.action_ipfs_cid = a.get("action");
  if (a.has("no-pkp")) {
    p.pkp_id = std::optional<address>{};
  } else if (auto pkp = a.get("pkp")) {
    auto addr = parse_address(*pkp, "--pkp");
    if (!addr)
      throw usage_error(addr.err().message);
    p.pkp_id = std::optional<address>(*addr);
  }
  if (auto cron = a.get("cron"))
    p.config = client::schedule_config{*cron, "UTC"};
  if (a.get("usage-key-file"))
    p.usage_api_key = usage_key_of(a);
  read_limits(a, p);
  trigger_client c = connect(a);
  print_trigger(with_hint([&] { return c.update(id, p); }));
  return 0;
}

int remove(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string& id = a.at(0, "TRIGGER_ID");
  trigger_client c = connect(a);
  with_hint([&] {
    c.remove(id);
    return 0;
  });
  emit(json::object{{"deleted", id}});
  return 0;
}

}  // namespace enact::cli::trigger_cmd
