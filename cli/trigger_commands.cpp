// SPDX-License-Identifier: Apache-2.0
// `enact triggers …`: the trigger service (docs/protocol.md §4, docs/triggers.md) through
// enact::client::trigger_client, as docs/cli.md describes it. Neither the token nor a usage key is
// ever taken from the command line (other users can read the process list) nor printed.
#include <boost/json.hpp>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "trigger_commands.hpp"
#include "enact/client/trigger_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::cli {
namespace trigger_cmd {

namespace json = boost::json;

// --- arguments ---------------------------------------------------------------------------------

namespace {

constexpr std::string_view kDefaultUrl = "http://127.0.0.1:8080";

/// Options that would put a credential on the command line; refused with the reason.
void refuse_secrets_in_argv(const std::vector<std::string>& argv) {
  struct refused {
    std::string_view option;
    std::string_view instead;
  };
  static constexpr refused kRefused[] = {
      {"--usage-key", "pass --usage-key-file FILE or set ENACT_USAGE_KEY"},
      {"--usage-api-key", "pass --usage-key-file FILE or set ENACT_USAGE_KEY"},
      {"--key", "pass --usage-key-file FILE or set ENACT_USAGE_KEY"},
      {"--api-key", "pass --usage-key-file FILE or set ENACT_USAGE_KEY"},
  };
  for (const std::string& a : argv)
    for (const refused& r : kRefused)
      if (a == r.option || a.rfind(std::string(r.option) + "=", 0) == 0)
        throw usage_error(std::string(r.option) +
                          ": keys are not accepted on the command line (other users can read them "
                          "in the process list, and they stay in the shell history); " +
                          std::string(r.instead));
}

client::client_options options_for(const std::string& url) {
  client::client_options o;
  o.base_url = url;
  return o;
}

}  // namespace

args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags) {
  refuse_secrets_in_argv(argv);
  options.insert("url");
  return args(argv, std::move(options), std::move(flags));
}

std::string url_of(const args& a, const std::optional<saved_login>& saved) {
  if (auto u = a.get("url"))
    return *u;
  if (const char* e = std::getenv("ENACT_TRIGGERS_URL"); e != nullptr && *e != '\0')
    return e;
  if (saved && !saved->url.empty())
    return saved->url;
  if (const char* e = std::getenv("ENACT_URL"); e != nullptr && *e != '\0')
    return e;
  return std::string(kDefaultUrl);
}

trigger_client make_client(const std::string& url, Secret token) {
  try {
    return trigger_client(options_for(url), std::move(token));
  } catch (const api_error& e) {
    throw usage_error("--url: " + e.message());
  }
}

trigger_client connect(const args& a) {
  std::optional<saved_login> saved = read_saved();
  Secret token;
  if (const char* e = std::getenv("ENACT_TRIGGERS_TOKEN"); e != nullptr && !trim(e).empty()) {
    std::string t = trim(e);
    token = Secret(as_bytes(t));
    detail::secure_wipe(t.data(), t.size());
  } else if (saved && !saved->token.empty()) {
    token = saved->token.clone();
  } else {
    throw input_error(std::string("not logged in: ") + std::string(kLoginHint));
  }
  return make_client(url_of(a, saved), std::move(token));
}

Secret usage_key_of(const args& a) {
  std::string text;
  if (auto path = a.get("usage-key-file"))
    text = read_input(*path);
  else if (const char* e = std::getenv("ENACT_USAGE_KEY"); e != nullptr)
    text = e;
  std::string key = trim(text);
  detail::secure_wipe(text.data(), text.size());
  if (key.empty())
    throw usage_error("a usage key is needed: pass --usage-key-file FILE or set ENACT_USAGE_KEY");
  Secret s(as_bytes(key));
  detail::secure_wipe(key.data(), key.size());
  return s;
}

uint32_t limit_of(const args& a) {
  if (auto l = a.get("limit")) {
    const uint64_t n = parse_u64(*l, "--limit");
    if (n < 1 || n > 100)
      throw usage_error("--limit: expected 1 to 100");
    return static_cast<uint32_t>(n);
  }
  return 20;
}

uint64_t offset_of(const args& a) {
  if (auto o = a.get("offset"))
    return parse_u64(*o, "--offset");
  return 0;
}

std::vector<hash256> topic_filter_arg(const std::string& text, std::string_view what) {
  if (text == "any")
    return {};
  std::vector<hash256> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    const std::string item = text.substr(start, comma - start);
    if (item.size() == 42) {
      auto a = parse_address(item, what);
      if (!a)
        throw usage_error(a.err().message);
      hash256 h{};
      std::copy(a->begin(), a->end(), h.begin() + 12);
      out.push_back(h);
    } else {
      auto h = codec::hex::decode_fixed<32>(item, what);
      if (!h || !codec::hex::detail::has_prefix(item))
        throw usage_error(std::string(what) +
                          ": expected 0x + 64 hex digits, an address, a comma-separated list of "
                          "them, or 'any'");
      out.push_back(*h);
    }
    start = comma + 1;
  }
  return out;
}

// --- output ----------------------------------------------------------------------------------

void print_trigger(const client::trigger& t) { emit(json::value_from(t)); }

}  // namespace trigger_cmd

std::vector<command> trigger_commands() {
  using namespace trigger_cmd;
  const std::string g = " [--url URL] [--json]";
  return {
      {"triggers login", "[--client NAME] [--token -|@FILE] [--timeout S]" + g,
       "get a token (approval in the browser, or one from `enact-server issue-token`) and keep it "
       "0600 in the config dir",
       login},
      {"triggers logout", "[--json]", "forget the stored token", logout},
      {"triggers whoami", g.substr(1), "the user the stored token belongs to", whoami},
      {"triggers create",
       "webhook|schedule|chain-event --name N --action CID [--usage-key-file F] [--pkp ADDR] "
       "[--disabled] [--cron EXPR] [--chain C --contract ADDR --event SIG [--topic1 T,..] "
       "[--topic2 ..] [--topic3 ..] [--start-block N] [--confirmations N]] "
       "[--max-runs-per-minute N] [--max-queued-runs N]" +
           g,
       "create a trigger (the usage key from --usage-key-file or $ENACT_USAGE_KEY)", create},
      {"triggers list", "[--limit N] [--offset N]" + g, "your triggers, oldest first", list},
      {"triggers get", "TRIGGER_ID" + g, "one trigger", get},
      {"triggers update",
       "TRIGGER_ID [--name N] [--action CID] [--pkp ADDR | --no-pkp] [--cron EXPR] "
       "[--usage-key-file F] [--max-runs-per-minute N] [--max-queued-runs N]" +
           g,
       "change a trigger; fields not given keep their value", update},
      {"triggers enable", "TRIGGER_ID" + g, "enable a trigger", enable},
      {"triggers disable", "TRIGGER_ID" + g, "disable a trigger", disable},
      {"triggers delete", "TRIGGER_ID" + g, "delete a trigger and its runs", remove},
      {"triggers runs", "TRIGGER_ID [--limit N] [--offset N] [--follow [--max N] [--timeout S] [--interval S]]" + g,
       "a trigger's runs, newest first; --follow prints each new run once it finished", runs},
      {"triggers run", "RUN_ID [--wait S]" + g, "one run; --wait polls until it finished", run_cmd},
      {"triggers fire-webhook", "TRIGGER_ID [--data JSON|@FILE] [--content-type T] [--header 'N: V'] [--wait S]" + g,
       "POST to the trigger's webhook; prints the run id (with --wait, the finished run)", fire_webhook},
  };
}

}  // namespace enact::cli
