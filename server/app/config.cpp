#include "app/config.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"
#include "enact/crypto/address.hpp"

namespace enact::app {
namespace {

namespace json = boost::json;

error usage(std::string msg) { return fail(api_errc::invalid_request, std::move(msg)); }

/// Reads the TOML subset: `[section]`, `key = "string" | integer | true | false`, `#` comments.
result<json::object> parse_toml(const std::string& text, const std::string& file) {
  json::object root;
  json::object* section = &root;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto where = file + ":" + std::to_string(n) + ": ";
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    std::string t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    if (t.front() == '[') {
      if (t.back() != ']' || t.size() < 3)
        return usage(where + "bad section header");
      auto& v = root[trim(t.substr(1, t.size() - 2))];
      if (!v.is_object())
        v = json::object{};
      section = &v.as_object();
      continue;
    }
    const auto eq = t.find('=');
    if (eq == std::string::npos)
      return usage(where + "expected key = value");
    const std::string key = trim(t.substr(0, eq));
    std::string value = trim(t.substr(eq + 1));
    if (!value.empty() && value.front() == '"') {
      const auto close = value.find('"', 1);
      if (close == std::string::npos)
        return usage(where + "unterminated string");
      const std::string rest = trim(value.substr(close + 1));
      if (!rest.empty() && rest[0] != '#')
        return usage(where + "text after the string");
      (*section)[key] = value.substr(1, close - 1);
    } else {
      if (const auto hash = value.find('#'); hash != std::string::npos)
        value = trim(value.substr(0, hash));
      if (value == "true" || value == "false") {
        (*section)[key] = value == "true";
      } else {
        int64_t i = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), i);
        if (ec != std::errc{} || end != value.data() + value.size())
          return usage(where + key + ": expected a string, an integer, true or false");
        (*section)[key] = i;
      }
    }
  }
  return root;
}

result<void> set_listen(settings& s, const std::string& v, const std::string& what) {
  const auto colon = v.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const auto [end, ec] = std::from_chars(v.data() + colon + 1, v.data() + v.size(), port);
    if (ec != std::errc{} || end != v.data() + v.size())
      port = -1;
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535)
    return usage(what + ": expected HOST:PORT (e.g. 127.0.0.1:8080), got '" + v + "'");
  s.listen_host = v.substr(0, colon);
  s.listen_port = port;
  return {};
}

template <class T>
result<T> number(const json::value& v, const std::string& what) {
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<T>(v.get_int64());
  if (v.is_uint64())
    return static_cast<T>(v.get_uint64());
  if (v.is_string()) {
    T n{};
    const auto& t = v.get_string();
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec == std::errc{} && end == t.data() + t.size())
      return n;
  }
  return usage(what + ": expected a non-negative integer");
}

result<bool> boolean(const json::value& v, const std::string& what) {
  if (v.is_bool())
    return v.get_bool();
  if (v.is_string() && (v.get_string() == "true" || v.get_string() == "false"))
    return v.get_string() == "true";
  return usage(what + ": expected true or false");
}

result<std::string> text(const json::value& v, const std::string& what) {
  if (!v.is_string())
    return usage(what + ": expected a string");
  return std::string(v.get_string());
}

/// Applies one setting by its dotted name ("billing.provider"); the same names serve the config
/// file and the flags.
result<void> apply(settings& s, const std::string& key, const json::value& v, const std::string& what) {
  if (key == "listen") {
    ENACT_TRY(auto t, text(v, what));
    return set_listen(s, t, what);
  }
  if (key == "data_dir") {
    ENACT_TRY(s.data_dir, text(v, what));
    return {};
  }
  if (key == "dev") {
    ENACT_TRY(s.dev, boolean(v, what));
    return {};
  }
  if (key == "log_level") {
    ENACT_TRY(s.log_level, text(v, what));
    if (s.log_level != "debug" && s.log_level != "info" && s.log_level != "warn" && s.log_level != "error")
      return usage(what + ": expected debug, info, warn or error");
    return {};
  }
  if (key == "threads") {
    ENACT_TRY(s.threads, number<int>(v, what));
    return {};
  }
  if (key == "chain.chain_id") {
    ENACT_TRY(s.core.chain_id, number<uint64_t>(v, what));
    return {};
  }
  if (key == "chain.chain_name") {
    ENACT_TRY(s.core.chain_name, text(v, what));
    return {};
  }
  if (key == "chain.rpc_url") {
    ENACT_TRY(s.rpc_url, text(v, what));
    return {};
  }
  if (key == "ledger.backend") {
    ENACT_TRY(s.ledger, text(v, what));
    if (s.ledger != "embedded" && s.ledger != "evm")
      return usage(what + ": expected embedded or evm");
    return {};
  }
  if (key == "ledger.cache") {
    if (v.is_string() && (v.get_string() == "on" || v.get_string() == "off")) {
      s.ledger_cache = v.get_string() == "on";
      return {};
    }
    auto b = boolean(v, what);
    if (!b)
      return usage(what + ": expected on or off");
    s.ledger_cache = *b;
    return {};
  }
  if (key == "chain.contract_address") {
    ENACT_TRY(auto t, text(v, what));
    auto a = parse_address(t, what);
    if (!a)
      return usage(a.err().message);
    s.core.contract_address = *a;
    return {};
  }
  if (key == "billing.provider") {
    ENACT_TRY(s.billing, text(v, what));
    if (s.billing != "auto" && s.billing != "dev" && s.billing != "stripe" && s.billing != "none")
      return usage(what + ": expected auto, dev, stripe or none");
    return {};
  }
  if (key == "billing.stripe_api_base") {
    ENACT_TRY(s.stripe.api_base, text(v, what));
    return {};
  }
  if (key == "billing.stripe_publishable_key") {
    ENACT_TRY(s.stripe.publishable_key, text(v, what));
    return {};
  }
  if (key == "billing.stripe_secret_key") {
    ENACT_TRY(s.stripe.secret_key, text(v, what));
    return {};
  }
  if (key == "billing.write_surcharge_credits") {
    ENACT_TRY(s.core.write_surcharge_credits, number<uint64_t>(v, what));
    return {};
  }
  if (key == "billing.run_price_credits") {
    ENACT_TRY(s.core.run_price_credits, number<uint64_t>(v, what));
    return {};
  }
  if (key == "sandbox.workers") {
    ENACT_TRY(s.sandbox_workers, number<size_t>(v, what));
    return {};
  }
  if (key == "sandbox.run_timeout_ms") {
    ENACT_TRY(s.run_timeout_ms, number<uint64_t>(v, what));
    if (s.run_timeout_ms == 0)
      return usage(what + ": must be positive");
    return {};
  }
  if (key == "sandbox.run_heap_mib") {
    ENACT_TRY(s.run_heap_mib, number<uint64_t>(v, what));
    if (s.run_heap_mib == 0 || s.run_heap_mib > 4096)
      return usage(what + ": expected 1 to 4096");
    return {};
  }
  if (key == "tee.backend") {
    ENACT_TRY(s.tee, text(v, what));
    if (s.tee != "simulated" && s.tee != "dstack")
      return usage(what + ": expected simulated or dstack");
    return {};
  }
  if (key == "tee.dstack_socket") {
    ENACT_TRY(s.dstack_socket, text(v, what));
    return {};
  }
  if (key == "tee.evidence_dir") {
    ENACT_TRY(s.evidence_dir, text(v, what));
    return {};
  }
  if (key == "sandbox.unsafe_allow_weak") {
    ENACT_TRY(s.sandbox_allow_weak, boolean(v, what));
    return {};
  }
  if (key == "sandbox.ipfs_gateway") {
    ENACT_TRY(s.core.ipfs_gateway, text(v, what));
    return {};
  }
  if (key == "limits.max_body_bytes") {
    ENACT_TRY(s.core.max_body_bytes, number<size_t>(v, what));
    return {};
  }
  if (key == "limits.key_rate_per_second") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.key_rate_per_second = double(n);
    return {};
  }
  if (key == "limits.key_rate_burst") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.key_rate_burst = double(n);
    return {};
  }
  if (key == "limits.new_accounts_per_ip_per_minute") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.new_account_per_ip_per_minute = double(n);
    return {};
  }
  if (key == "limits.rpc_writes_per_ip_per_minute") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.rpc_writes_per_ip_per_minute = double(n);
    return {};
  }
  if (key == "limits.rpc_calls_per_ip_per_second") {
    ENACT_TRY(auto n, number<uint64_t>(v, what));
    s.core.rpc_calls_per_ip_per_second = double(n);
    return {};
  }
  if (key == "limits.rpc_max_batch") {
    ENACT_TRY(s.core.rpc_max_batch, number<size_t>(v, what));
    if (s.core.rpc_max_batch == 0 || s.core.rpc_max_batch > 1000)
      return usage(what + ": expected 1 to 1000");
    return {};
  }
  if (key == "limits.rate_table_entries") {
    ENACT_TRY(s.core.rate_table_entries, number<size_t>(v, what));
    if (s.core.rate_table_entries == 0)
      return usage(what + ": must be positive");
    return {};
  }
  if (key == "limits.upload_quota_bytes") {
    ENACT_TRY(s.core.upload_quota_bytes, number<uint64_t>(v, what));
    return {};
  }
  if (key == "limits.upload_quota_count") {
    ENACT_TRY(s.core.upload_quota_count, number<uint64_t>(v, what));
    return {};
  }
  if (auto r = triggers::apply_setting(s.triggers, key, v, what))
    return *r;
  return usage(what + ": unknown setting");
}

result<void> apply_file(settings& s, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return usage("--config: cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  json::object doc;
  if (path.ends_with(".toml")) {
    ENACT_TRY(doc, parse_toml(ss.str(), path));
  } else {
    std::error_code ec;
    auto v = json::parse(ss.str(), ec);
    if (ec || !v.is_object())
      return usage(path + ": not a JSON object" + (ec ? " (" + ec.message() + ")" : ""));
    doc = std::move(v.as_object());
  }
  for (const auto& kv : doc) {
    const std::string key(kv.key());
    if (kv.value().is_object()) {
      for (const auto& inner : kv.value().as_object()) {
        const std::string name = key + "." + std::string(inner.key());
        ENACT_TRY_VOID(apply(s, name, inner.value(), path + ": " + name));
      }
    } else {
      ENACT_TRY_VOID(apply(s, key, kv.value(), path + ": " + key));
    }
  }
  return {};
}

struct flag {
  const char* name;
  const char* setting;  // dotted setting name; nullptr for --dev/--help/--version/--config
  const char* help;
};
constexpr flag kFlags[] = {
    {"--listen", "listen", "HOST:PORT to serve on (default 127.0.0.1:8080)"},
    {"--data-dir", "data_dir", "state directory: ledger, TEE root key, content store (default ./enact-data)"},
    {"--config", nullptr, "FILE (.json, or .toml) with the settings below; flags override it"},
    {"--dev", nullptr, "development mode: enables the dev payment provider (marked \"mode\": \"dev\")"},
    {"--billing", "billing.provider", "auto | dev | stripe | none (auto: dev with --dev, stripe with a secret key)"},
    {"--stripe-api-base", "billing.stripe_api_base", "Stripe API base URL (default https://api.stripe.com)"},
    {"--stripe-publishable-key", "billing.stripe_publishable_key",
     "Stripe publishable key (the secret key comes from STRIPE_SECRET_KEY)"},
    {"--write-surcharge", "billing.write_surcharge_credits", "credits debited per relayed ledger write (default 0)"},
    {"--run-price", "billing.run_price_credits", "credits per run-action call (default 1)"},
    {"--chain-id", "chain.chain_id",
     "chain id of the registry (default 31337; checked against the node with --ledger evm)"},
    {"--ledger", "ledger.backend", "embedded | evm: the permission ledger (default embedded)"},
    {"--rpc-url", "chain.rpc_url", "JSON-RPC endpoint of the node holding the registry (--ledger evm)"},
    {"--registry-address", "chain.contract_address",
     "address of the permission registry (--ledger evm; enact-server deploy-registry)"},
    {"--ledger-cache", "ledger.cache", "on | off: cache registry reads, invalidated by its events (default on)"},
    {"--chain-name", "chain.chain_name", "chain name reported by /get_node_chain_config"},
    {"--key-rate", "limits.key_rate_per_second",
     "requests per second per API key, and per admin wallet for X-Wallet-Auth; over it: 429 with Retry-After (default "
     "200; 0: unlimited)"},
    {"--new-accounts-per-minute", "limits.new_accounts_per_ip_per_minute",
     "account creations per client IP (IPv6: per /64) per minute, and calls of each *_with_signature minting route; "
     "over it: 429 with Retry-After (default 60; 0: unlimited)"},
    {"--rpc-calls-per-second", "limits.rpc_calls_per_ip_per_second",
     "eth_call and eth_estimateGas at /rpc per client IP (IPv6: per /64) per second, each of a batch counted, with ten "
     "seconds' worth as the burst: both execute a call, writes included, and roll it back; over it: HTTP 429 with "
     "Retry-After and JSON-RPC error -32005 (default 100; 0: unlimited)"},
    {"--rpc-writes-per-minute", "limits.rpc_writes_per_ip_per_minute",
     "eth_sendRawTransaction at /rpc per client IP (IPv6: per /64) per minute, each write of a batch counted; over it: "
     "HTTP 429 with Retry-After and JSON-RPC error -32005 (default 120; 0: unlimited)"},
    {"--upload-quota-bytes", "limits.upload_quota_bytes",
     "total bytes of distinct action code one account may store with /upload_action; over it: 403 forbidden (default "
     "67108864; 0: unlimited)"},
    {"--upload-quota-count", "limits.upload_quota_count",
     "distinct action codes one account may store with /upload_action; over it: 403 forbidden (default 1000; 0: "
     "unlimited)"},
    {"--sandbox-workers", "sandbox.workers", "action sandbox worker processes (default 2 per core)"},
    {"--run-timeout-ms", "sandbox.run_timeout_ms", "wall-clock limit per action run (default 10000)"},
    {"--run-heap-mib", "sandbox.run_heap_mib", "heap limit per action run in MiB (default 64)"},
    {"--unsafe-allow-weak-sandbox", nullptr,
     "UNSAFE: run actions even when a sandbox worker cannot put every isolation layer in place (default: refuse every "
     "run with 503; docs/actions.md)"},
    {"--ipfs-gateway", "sandbox.ipfs_gateway", "IPFS HTTP gateway for code not in the content store (default: off)"},
    {"--tee", "tee.backend", "simulated | dstack: where PKP keys and quotes come from (default simulated)"},
    {"--dstack-socket", "tee.dstack_socket", "dstack guest agent socket (default /var/run/dstack.sock)"},
    {"--evidence-dir", "tee.evidence_dir", "evidence files to serve under /evidences/ (default: a development set)"},
    {"--threads", "threads", "HTTP worker threads, one per open connection (default max(64, 16 per core))"},
    {"--log-level", "log_level", "debug | info | warn | error (default info)"},
    {"--no-core", nullptr, "serve only the trigger service, against the core at --core-url"},
    {"--no-triggers", nullptr, "serve only the core API: no trigger routes, scheduler or workers"},
    {"--triggers-listen", "triggers.listen", "HOST:PORT for the trigger service alone (default: the core's listener)"},
    {"--core-url", "triggers.core_url", "core service the trigger workers call (default: this server's listener)"},
    {"--trigger-workers", "triggers.workers", "threads running trigger runs (default 4)"},
    {"--trigger-retry-base-ms", "triggers.retry_base_ms",
     "backoff before a run's second attempt, doubled after (default 1000)"},
    {"--trigger-sync", "triggers.sync", "full | normal: SQLite synchronous mode of triggers.sqlite (default full)"},
    {"--trigger-store", "triggers.store",
     "URL: postgres://… to share triggers and runs between instances (default: triggers.sqlite in the data dir)"},
    {"--triggers-public-url", "triggers.public_url",
     "public base URL of the trigger service: base of the webhook URLs, and the only domain its wallet sign-in "
     "accepts; required when it listens on an address other than loopback (default: webhook URLs from Host, sign-in on "
     "the loopback listen address only)"},
    {"--webhook-rate", "triggers.webhook_requests_per_second",
     "POST /webhook/<id> requests per second per client address; over it: 429 with Retry-After (default 20; 0: "
     "unlimited)"},
    {"--chain-rpc", "chain_rpc", "NAME=URL: JSON-RPC endpoint for chain-event triggers (repeatable)"},
    {"--chain-confirmations", "chain_confirmations",
     "NAME=N: blocks a chain-event log waits below the head, unless its trigger sets confirmations (default 0; "
     "repeatable)"},
    {"--help", nullptr, "this text"},
    {"--version", nullptr, "print the version"},
};

/// Config-file settings that no flag sets (a secret that does not belong on a command line, and
/// tuning rarely changed), for the reference; the flag-less flags' keys too.
struct file_setting {
  const char* setting;
  const char* help;
};
constexpr file_setting kFileOnlySettings[] = {
    {"billing.stripe_secret_key", "Stripe secret key; the STRIPE_SECRET_KEY environment variable overrides it"},
    {"limits.max_body_bytes", "largest request body accepted, in bytes (default 1048576)"},
    {"limits.key_rate_burst",
     "token-bucket burst per API key and per X-Wallet-Auth wallet (default: twice the --key-rate; at least the "
     "--key-rate)"},
    {"limits.rpc_max_batch",
     "requests one JSON-RPC batch at /rpc may hold; a larger batch is refused whole with error -32600, and once a "
     "batch's answer passes 16 MiB its remaining requests are answered with error -32005 (default 100, at most 1000)"},
    {"limits.rate_table_entries",
     "buckets each rate-limit table keeps (per key, per wallet, per client IP and route); when full, the least "
     "recently used is evicted (default 100000)"},
    {"triggers.lease_ms",
     "how long a trigger worker holds a run before another may take it (default 30000, at least 1000)"},
    {"triggers.webhook_burst",
     "webhook requests one client address may send at once before --webhook-rate applies (default 200)"},
    {"chain_rpc.<NAME>", "URL: JSON-RPC endpoint of chain NAME, as --chain-rpc NAME=URL"},
    {"chain_confirmations.<NAME>", "N: confirmations on chain NAME, as --chain-confirmations NAME=N"},
};

/// `a.b` as the config file spells it: `b` under `[a]`.
std::string file_form(const std::string& setting) {
  const auto dot = setting.find('.');
  if (dot == std::string::npos)
    return "`" + setting + "`";
  return "`" + setting.substr(dot + 1) + "` in `[" + setting.substr(0, dot) + "]`";
}

/// Escapes the one character that would break a Markdown table cell.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string help_text() {
  std::string out =
      "usage: enact-server [options]\n\n"
      "Serves the enact core API (/core/v1) on its embedded defaults: SQLite ledger, simulated\n"
      "TEE, local content store; all state in the data directory.\n\noptions:\n";
  for (const auto& f : kFlags) {
    std::string name = f.name;
    name.resize(28, ' ');
    out += "  " + name + f.help + "\n";
  }
  out +=
      "\nConfig file keys: listen, data_dir, dev, log_level, threads, [chain] chain_id chain_name\n"
      "contract_address rpc_url, [ledger] backend cache, [billing] provider stripe_api_base stripe_publishable_key\n"
      "stripe_secret_key write_surcharge_credits run_price_credits, [sandbox] workers\n"
      "run_timeout_ms run_heap_mib ipfs_gateway unsafe_allow_weak, [limits] max_body_bytes\n"
      "key_rate_per_second key_rate_burst new_accounts_per_ip_per_minute\n"
      "rpc_writes_per_ip_per_minute rpc_calls_per_ip_per_second rpc_max_batch rate_table_entries\n"
      "upload_quota_bytes upload_quota_count, [tee] backend\n"
      "dstack_socket evidence_dir, [triggers] enabled listen core_url workers retry_base_ms\n"
      "lease_ms public_url sync store webhook_requests_per_second webhook_burst, [chain_rpc] <chain> = URL.\n"
      "\nenact-server issue-token --data-dir DIR --user NAME prints a trigger API bearer token.\n"
      "enact-server deploy-registry --rpc-url URL --key-file FILE deploys a permission registry\n"
      "for this data directory's api payer (see its --help).\n"
      "enact-server config-reference prints this configuration as Markdown (docs/configuration.md).\n";
  return out;
}

std::string config_reference() {
  std::string out =
      "# enact-server configuration reference\n\n"
      "<!-- Generated by `enact-server config-reference` from the flag table of server/app/config.cpp;\n"
      "     ctest docs.config_reference fails when this file differs from its output. -->\n\n"
      "Every setting is a flag and a key of the config file (`--config FILE`: JSON, or TOML when the\n"
      "name ends in `.toml`). The file is read first, wherever `--config` appears, and flags override\n"
      "it. In the file a dotted key `a.b` is `b` under the section `[a]` (TOML) or the object `\"a\"`\n"
      "(JSON); values are strings, integers or `true`/`false`. A flag takes its value as the next\n"
      "argument or after `=` (`--listen=0.0.0.0:8080`). An unknown flag or key is refused (exit 2),\n"
      "naming it.\n\n"
      "## Flags\n\n"
      "| flag | config key | description |\n|---|---|---|\n";
  for (const auto& f : kFlags) {
    // Switches without a value have a boolean key of their own.
    std::string key = f.setting == nullptr ? "—" : file_form(f.setting);
    if (std::string_view(f.name) == "--dev")
      key = "`dev = true`";
    else if (std::string_view(f.name) == "--unsafe-allow-weak-sandbox")
      key = "`unsafe_allow_weak = true` in `[sandbox]`";
    else if (std::string_view(f.name) == "--no-triggers")
      key = "`enabled = false` in `[triggers]`";
    out += "| `" + std::string(f.name) + "` | " + key + " | " + cell(f.help) + " |\n";
  }
  out +=
      "\n## Config-file keys without a flag\n\n"
      "| config key | description |\n|---|---|\n";
  for (const auto& k : kFileOnlySettings)
    out += "| " + file_form(k.setting) + " | " + cell(k.help) + " |\n";
  out +=
      "\n## Environment\n\n"
      "| variable | description |\n|---|---|\n"
      "| `STRIPE_SECRET_KEY` | Stripe secret key (overrides `stripe_secret_key` in `[billing]`) |\n"
      "\n## Subcommands\n\n"
      "| command | description |\n|---|---|\n"
      "| `enact-server issue-token --data-dir DIR --user NAME [--client NAME]` | prints a bearer token for the trigger "
      "API (`/api/…`) and exits |\n"
      "| `enact-server deploy-registry --rpc-url URL --key-file FILE` | deploys a permission registry for this data "
      "directory's api payer (see its `--help`) |\n"
      "| `enact-server config-reference` | prints this reference |\n";
  return out;
}

result<command_line> parse_command_line(int argc, char** argv) {
  command_line cl;
  std::vector<std::string> args(argv + 1, argv + argc);
  // The config file first, so flags override it wherever they appear.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" || args[i].starts_with("--config=")) {
      std::string path;
      if (args[i] == "--config") {
        if (i + 1 >= args.size())
          return usage("--config: missing FILE");
        path = args[i + 1];
      } else {
        path = args[i].substr(9);
      }
      ENACT_TRY_VOID(apply_file(cl.s, path));
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); name.starts_with("--") && eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "--help" || name == "-h") {
      cl.help = true;
      continue;
    }
    if (name == "--version") {
      cl.version = true;
      continue;
    }
    if (name == "--dev") {
      cl.s.dev = true;
      continue;
    }
    if (name == "--unsafe-allow-weak-sandbox") {
      cl.s.sandbox_allow_weak = true;
      continue;
    }
    if (name == "--no-core") {
      cl.s.no_core = true;
      continue;
    }
    if (name == "--no-triggers") {
      cl.s.triggers.enabled = false;
      continue;
    }
    if (name == "--config") {
      if (!inline_value)
        ++i;
      continue;
    }
    const flag* f = nullptr;
    for (const auto& candidate : kFlags)
      if (name == candidate.name && candidate.setting != nullptr)
        f = &candidate;
    if (f == nullptr)
      return usage("unknown option '" + args[i] + "' (see --help)");
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= args.size())
        return usage(name + ": missing value");
      value = args[++i];
    }
    ENACT_TRY_VOID(apply(cl.s, f->setting, json::value(value), name));
  }
  if (const char* secret = std::getenv("STRIPE_SECRET_KEY"); secret != nullptr && *secret != '\0')
    cl.s.stripe.secret_key = secret;
  return cl;
}

}  // namespace enact::app
