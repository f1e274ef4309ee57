// SPDX-License-Identifier: Apache-2.0
// `enact triggers …`: the trigger service (docs/protocol.md §4, docs/triggers.md) from the command line,
// through enact::client::trigger_client.
//
// Where the service is: --url, else $ENACT_TRIGGERS_URL, else the URL of the last login, else
// $ENACT_URL, else http://127.0.0.1:8080. The bearer token comes from $ENACT_TRIGGERS_TOKEN, else
// from the file `triggers login` wrote: `<config>/triggers.json` (mode 0600, in a 0700 directory),
// where <config> is $ENACT_CONFIG_DIR, else $XDG_CONFIG_HOME/enact, else ~/.config/enact. A
// trigger's usage key comes from --usage-key-file FILE, else $ENACT_USAGE_KEY. Neither the token
// nor a usage key is ever accepted on the command line (other users can read the process list,
// and the shell history keeps it) nor printed.
//
// Output through output.hpp: readable text, or with --json one JSON line per object (`runs --follow`:
// one line per finished run). A failed call prints `enact triggers …: <code>: <message>`, exit 1.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "enact/client/trigger_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::cli {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using client::trigger_client;

constexpr std::string_view kDefaultUrl = "http://127.0.0.1:8080";
constexpr std::string_view kLoginHint = "run `enact triggers login` (or set ENACT_TRIGGERS_TOKEN)";

// --- config: where the token is kept ----------------------------------------------------------

/// Overwrites every string of a JSON tree that held the token.
void wipe_strings(json::value& v) noexcept {
  if (v.is_string()) {
    json::string& s = v.get_string();
    detail::secure_wipe(s.data(), s.size());
  } else if (v.is_object()) {
    for (auto& kv : v.get_object())
      wipe_strings(kv.value());
  }
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

fs::path config_dir() {
  if (const char* d = std::getenv("ENACT_CONFIG_DIR"); d != nullptr && *d != '\0')
    return d;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0')
    return fs::path(x) / "enact";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return fs::path(h) / ".config" / "enact";
  throw input_error("no configuration directory: set ENACT_CONFIG_DIR or HOME");
}

fs::path token_path() { return config_dir() / "triggers.json"; }

/// What `triggers login` stored.
struct saved_login {
  std::string url;
  secret token;
};

std::optional<saved_login> read_saved() {
  const fs::path p = token_path();
  std::error_code ec;
  if (!fs::exists(p, ec))
    return std::nullopt;
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    throw input_error(p.string() + ": readable by others (mode " + mode + "); chmod 600 it or log in again");
  }
  std::string text = read_input(p.string());
  boost::system::error_code jec;
  json::value v = json::parse(text, jec);
  detail::secure_wipe(text.data(), text.size());
  if (jec || !v.is_object())
    throw input_error(p.string() + ": not the JSON `triggers login` writes; log in again");
  saved_login out;
  const json::object& o = v.get_object();
  if (const auto* u = o.if_contains("url"); u && u->is_string())
    out.url = u->get_string();
  if (const auto* t = o.if_contains("token"); t && t->is_string())
    out.token = secret(as_bytes(t->get_string()));
  wipe_strings(v);
  return out;
}

/// Writes the login file: a temporary file created 0600 in a 0700 directory, renamed over the
/// old one, so that no moment exists at which the token is readable by others or half written.
void write_saved(const std::string& url, const secret& token) {
  const fs::path dir = config_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw input_error(dir.string() + ": cannot create (" + ec.message() + ")");
  ::chmod(dir.c_str(), 0700);
  const fs::path final_path = token_path();
  const fs::path tmp = dir / ("triggers.json.tmp" + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  if (fd < 0)
    throw input_error(tmp.string() + ": cannot create");
  json::object o{{"url", url}, {"token", as_chars(token.view())}};
  std::string text = json::serialize(o) + "\n";
  json::value v = std::move(o);
  wipe_strings(v);
  const bool ok = ::fchmod(fd, 0600) == 0 &&
                  ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  detail::secure_wipe(text.data(), text.size());
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw input_error(final_path.string() + ": write failed");
  }
}

// --- arguments
// -------------------------------------------------------------------------------------

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

args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags = {}) {
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

client::client_options options_for(const std::string& url) {
  client::client_options o;
  o.base_url = url;
  return o;
}

trigger_client make_client(const std::string& url, secret token) {
  try {
    return trigger_client(options_for(url), std::move(token));
  } catch (const api_error& e) {
    throw usage_error("--url: " + e.message());
  }
}

/// A client with the token of $ENACT_TRIGGERS_TOKEN or of the login file.
trigger_client connect(const args& a) {
  std::optional<saved_login> saved = read_saved();
  secret token;
  if (const char* e = std::getenv("ENACT_TRIGGERS_TOKEN"); e != nullptr && !trim(e).empty()) {
    std::string t = trim(e);
    token = secret(as_bytes(t));
    detail::secure_wipe(t.data(), t.size());
  } else if (saved && !saved->token.empty()) {
    token = saved->token.clone();
  } else {
    throw input_error(std::string("not logged in: ") + std::string(kLoginHint));
  }
  return make_client(url_of(a, saved), std::move(token));
}

/// Runs `f`; an unauthenticated answer gets the hint how to log in.
template <class F>
auto with_hint(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const api_error& e) {
    if (e.errc() == api_errc::unauthenticated)
      throw input_error(std::string(e.what()) + " (" + std::string(kLoginHint) + ")");
    throw;
  }
}

secret usage_key_of(const args& a) {
  std::string text;
  if (auto path = a.get("usage-key-file"))
    text = read_input(*path);
  else if (const char* e = std::getenv("ENACT_USAGE_KEY"); e != nullptr)
    text = e;
  std::string key = trim(text);
  detail::secure_wipe(text.data(), text.size());
  if (key.empty())
    throw usage_error("a usage key is needed: pass --usage-key-file FILE or set ENACT_USAGE_KEY");
  secret s(as_bytes(key));
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

/// A topic filter: topics (0x + 64 hex) or addresses (0x + 40 hex, left-padded to 32 bytes as
/// an indexed address is), separated by commas; "any" matches anything.
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

/// A trigger as the renderer shows it: its JSON form (output.hpp).
void print_trigger(const client::trigger& t) { emit(json::value_from(t)); }

// --- commands ----------------------------------------------------------------------------------

int login(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"client", "token", "timeout"});
  a.at_most(0);
  std::optional<saved_login> saved;
  try {
    saved = read_saved();
  } catch (const input_error&) {
    // A broken or loose file is replaced by this login.
  }
  const std::string url = url_of(a, saved);
  trigger_client c = make_client(url, {});
  secret token;
  if (auto source = a.get("token")) {
    // A token from `enact-server issue-token`: `-` reads it from stdin, `@FILE` from a file.
    std::string text;
    if (*source == "-")
      text = read_input("-");
    else if (source->size() > 1 && source->front() == '@')
      text = read_input(source->substr(1));
    else
      throw usage_error(
          "--token: give '-' (read stdin) or '@FILE'; a token is not accepted on the command line "
          "(other users can read it in the process list, and it stays in the shell history)");
    std::string t = trim(text);
    detail::secure_wipe(text.data(), text.size());
    if (t.empty())
      throw input_error("--token: empty");
    token = secret(as_bytes(t));
    detail::secure_wipe(t.data(), t.size());
    c.set_token(token.clone());
  } else {
    const std::string name = a.get("client").value_or("enact-cli");
    client::pending_login p = c.start_login(name);
    std::fprintf(stderr, "Open this URL and approve the client '%s':\n\n  %s\n\nWaiting for approval...\n",
                 name.c_str(), p.authorize_url.c_str());
    std::fflush(stderr);
    client::login_options o;
    if (auto t = a.get("timeout"))
      o.timeout = std::chrono::seconds(parse_u64(*t, "--timeout"));
    token = c.finish_login(p, o);
  }
  // Checked before it is stored: a mistyped or revoked token is not kept.
  const client::token_info who = with_hint([&] { return c.me(); });
  write_saved(url, token);
  emit(json::object{{"user_id", who.user_id},
                    {"token_expires_at", who.token_expires_at},
                    {"url", url},
                    {"config_file", token_path().string()}});
  return 0;
}

int logout(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  std::error_code ec;
  const bool removed = fs::remove(token_path(), ec);
  if (ec)
    throw input_error(token_path().string() + ": " + ec.message());
  // The token stays valid on the service until it expires or is revoked.
  emit(json::object{{"removed", removed}});
  return 0;
}

int whoami(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  trigger_client c = connect(a);
  const client::token_info who = with_hint([&] { return c.me(); });
  emit(json::value_from(who));
  return 0;
}

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
  const std::optional<uint64_t> max =
      a.get("max") ? std::optional<uint64_t>(parse_u64(*a.get("max"), "--max")) : std::nullopt;
  const auto deadline = a.get("timeout")
                            ? std::optional(std::chrono::steady_clock::now() +
                                            std::chrono::seconds(parse_u64(*a.get("timeout"), "--timeout")))
                            : std::nullopt;
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
      if (max && ++shown >= *max)
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

}  // namespace

std::vector<command> trigger_commands() {
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
