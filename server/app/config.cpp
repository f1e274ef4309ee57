// SPDX-License-Identifier: Apache-2.0
#include "app/config.hpp"

#include <boost/json.hpp>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "app/flag_table.hpp"
#include "app/apply_setting.hpp"
#include "app/setting_values.hpp"
#include "core/errors.hpp"

namespace enact::app {
namespace {

namespace json = boost::json;
using setting::usage;

/// One setting of a config file: its dotted name, its value, and where it stands (`file:line: name`
/// for TOML, `file: name` for JSON) for the messages.
struct file_entry {
  std::string name;
  json::value value;
  std::string what;
  size_t line = 0;  // TOML: the value's line, so settings apply (and fail) in file order
};

/// A TOML value as the JSON value the settings take; dates and times are no setting's value.
result<json::value> to_json(const toml::node& n, const std::string& what) {
  if (const auto* v = n.as_string())
    return json::value(v->get());
  if (const auto* v = n.as_integer())
    return json::value(v->get());
  if (const auto* v = n.as_boolean())
    return json::value(v->get());
  if (const auto* v = n.as_floating_point())
    return json::value(v->get());
  if (const auto* a = n.as_array()) {
    json::array out;
    for (const auto& e : *a) {
      ENACT_TRY(auto v, to_json(e, what));
      out.push_back(std::move(v));
    }
    return out;
  }
  if (const auto* t = n.as_table()) {
    json::object out;
    for (const auto& [k, v] : *t) {
      ENACT_TRY(auto inner, to_json(v, what));
      out[k.str()] = std::move(inner);
    }
    return out;
  }
  return usage(what + ": expected a string, an integer, true, false or an array, not a date or time");
}

/// The settings of a TOML file: top-level keys, and one level of tables (`[section]` or inline).
result<std::vector<file_entry>> toml_entries(const std::string& text, const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(text, std::string_view(path));
  } catch (const toml::parse_error& e) {
    std::string msg = path + ":" + std::to_string(e.source().begin.line) + ":" +
                      std::to_string(e.source().begin.column) + ": " + std::string(e.description());
    if (msg.find("key-value pair") != std::string::npos)
      msg += " (expected key = value)";
    return usage(std::move(msg));
  }
  std::vector<file_entry> out;
  const auto add = [&](std::string name, const toml::node& n) -> result<void> {
    std::string what = path + ":" + std::to_string(n.source().begin.line) + ": " + name;
    ENACT_TRY(auto v, to_json(n, what));
    out.push_back({std::move(name), std::move(v), std::move(what), n.source().begin.line});
    return {};
  };
  for (const auto& [key, node] : doc) {
    if (const auto* section = node.as_table()) {
      for (const auto& [inner, value] : *section)
        ENACT_TRY_VOID(add(std::string(key.str()) + "." + std::string(inner.str()), value));
    } else {
      ENACT_TRY_VOID(add(std::string(key.str()), node));
    }
  }
  // toml++ keeps a table's keys sorted; the file's order is the one its author sees.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

/// The settings of a JSON file: top-level members, and one level of objects.
result<std::vector<file_entry>> json_entries(const std::string& text, const std::string& path) {
  std::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object())
    return usage(path + ": not a JSON object" + (ec ? " (" + ec.message() + ")" : ""));
  std::vector<file_entry> out;
  for (const auto& kv : v.as_object()) {
    const std::string key(kv.key());
    if (kv.value().is_object()) {
      for (const auto& inner : kv.value().as_object()) {
        std::string name = key + "." + std::string(inner.key());
        out.push_back({name, inner.value(), path + ": " + name});
      }
    } else {
      out.push_back({key, kv.value(), path + ": " + key});
    }
  }
  return out;
}

/// Settings a flag may repeat (`--chain-rpc NAME=URL`); in a file they also take an array of
/// such strings.
bool repeatable(const std::string& name) { return name == "chain_rpc" || name == "chain_confirmations"; }

result<void> apply_file(settings& s, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return usage("--config: cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  ENACT_TRY(const auto entries, path.ends_with(".toml") ? toml_entries(ss.str(), path) : json_entries(ss.str(), path));
  for (const auto& e : entries) {
    if (e.value.is_array() && repeatable(e.name)) {
      for (const auto& item : e.value.as_array())
        ENACT_TRY_VOID(apply_setting(s, e.name, item, e.what));
    } else {
      ENACT_TRY_VOID(apply_setting(s, e.name, e.value, e.what));
    }
  }
  return {};
}

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

/// Whether `name` is among the arguments, alone or as `name=value`.
bool on_command_line(int argc, char** argv, std::string_view name) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == name || (a.starts_with(name) && a.size() > name.size() && a[name.size()] == '='))
      return true;
  }
  return false;
}

/// The environment variable that stands in for a flag: ENACT_ and its name in upper snake case.
std::string env_name(std::string_view flag) {
  std::string out = "ENACT_";
  for (const char c : flag.substr(flag.starts_with("--") ? 2 : 0))
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// The flag named after a setting's config key: `a.b_c` is `--a-b-c`, or `--b-c` when `b_c`
/// already begins with `a` (`chain.chain_id` is `--chain-id`, `sandbox.workers` is
/// `--sandbox-workers`, `chain.contract_address` is `--chain-contract-address`). The table's own
/// name, where it differs, stays accepted as an alias.
std::string key_flag(std::string_view setting) {
  if (const auto dot = setting.find('.'); dot != std::string_view::npos) {
    const auto section = setting.substr(0, dot);
    const auto rest = setting.substr(dot + 1);
    if (rest.starts_with(section) && rest.size() > section.size() && rest[section.size()] == '_')
      setting = rest;
  }
  std::string out = "--";
  for (const char c : setting)
    out += c == '.' || c == '_' ? '-' : c;
  return out;
}

/// A flag's names: the one its config key gives first, then the table's name when it differs.
struct flag_names {
  std::string primary;
  std::string alias;  // empty when the table's name is the key's
};
flag_names names_of(const char* table_name, const char* setting) {
  if (setting == nullptr)
    return {table_name, {}};
  std::string primary = key_flag(setting);
  if (primary == table_name)
    return {std::move(primary), {}};
  return {std::move(primary), table_name};
}

}  // namespace

std::string help_text() {
  std::string out =
      "usage: enact-server [options]\n\n"
      "Serves the enact core API (/core/v1) on its embedded defaults: SQLite ledger, simulated\n"
      "TEE, local content store; all state in the data directory.\n\noptions:\n";
  for (const auto& f : kFlags) {
    const auto names = names_of(f.name, f.setting);
    std::string name = names.primary;
    name.resize(std::max<size_t>(name.size() + 1, 28), ' ');
    out += "  " + name + f.help + (names.alias.empty() ? "" : " (also " + names.alias + ")") + "\n";
  }
  out +=
      "\nConfig file keys: listen, data_dir, content_store, dev, log_level, threads, cors_origins (an array), [chain] "
      "chain_id\n"
      "chain_name "
      "contract_address rpc_url, [ledger] backend cache, [billing] provider stripe_api_base stripe_publishable_key\n"
      "stripe_js_url stripe_secret_key write_surcharge_credits run_price_credits metering_store\n"
      "metering_store_pool metering_lock_timeout_seconds, [sandbox] workers\n"
      "run_timeout_ms run_heap_mib action_engine ipfs_gateway unsafe_allow_weak, [limits] max_body_bytes\n"
      "key_rate_per_second key_rate_burst new_accounts_per_ip_per_minute\n"
      "rpc_writes_per_ip_per_minute rpc_calls_per_ip_per_second rpc_max_batch rate_table_entries\n"
      "upload_quota_bytes upload_quota_count account_concurrent_runs account_run_seconds_per_minute, [http] "
      "max_header_bytes max_headers request_timeout_seconds\n"
      "max_connections_per_client, [tee] backend\n"
      "dstack_socket dstack_kms_root_key allow_unstable_keys evidence_dir, [triggers] enabled listen core_url workers "
      "retry_base_ms\n"
      "lease_ms public_url sync store webhook_requests_per_second webhook_burst run_retention_days\n"
      "max_triggers_per_user creations_per_minute disable_after_credit_failures, [chain_rpc] <chain> = URL.\n"
      "\nenact-server issue-token --data-dir DIR --user NAME prints a trigger API bearer token.\n"
      "enact-server deploy-registry --rpc-url URL --key-file FILE deploys a permission registry\n"
      "for this data directory's api payer (see its --help).\n"
      "enact-server config-reference prints this configuration as Markdown (docs/configuration.md).\n"
      "\nA flag is named after its config key (chain.contract_address: --chain-contract-address);\n"
      "the older names in parentheses stay accepted. Every flag also reads the environment variable\n"
      "ENACT_<NAME> (its name in upper snake case: ENACT_LISTEN, ENACT_DATA_DIR, ENACT_DEV=1, ...)\n"
      "when it is not given; a flag wins over its variable, the variable over the config file, the\n"
      "file over the default. STRIPE_SECRET_KEY sets the Stripe secret key.\n";
  return out;
}

std::string config_reference() {
  std::string out =
      "# enact-server configuration reference\n\n"
      "<!-- Generated by `enact-server config-reference` from the flag table of server/app/config.cpp;\n"
      "     ctest docs.config_reference fails when this file differs from its output. -->\n\n"
      "Every setting is a flag, an environment variable and a key of the config file (`--config FILE`:\n"
      "the flag is named after the key: `a.b_c` is `--a-b-c`, or `--b-c` when `b_c` already begins\n"
      "with `a`, so `contract_address` in `[chain]` is `--chain-contract-address` and `chain_id` in\n"
      "`[chain]` is `--chain-id`; an older flag name in parentheses, and its variable, stay accepted;\n"
      "JSON, or TOML when the name ends in `.toml`). A flag wins over its environment variable, which\n"
      "wins over the config file, which wins over the default; the file is read first, wherever\n"
      "`--config` appears. The environment variable of a flag is `ENACT_` and the flag's name in upper\n"
      "snake case (`--data-dir`: `ENACT_DATA_DIR`); an empty one counts as unset, and a switch takes\n"
      "`1`/`true` or `0`/`false` there. In the file a dotted key `a.b` is `b` under the section `[a]`\n"
      "(TOML) or the object `\"a\"` (JSON); values are strings, integers or `true`/`false`, and a\n"
      "repeatable flag's key (`chain_rpc`, `chain_confirmations`) also takes an array of its flag's\n"
      "values. TOML files are full TOML 1.0 (basic and literal strings with their escapes, arrays,\n"
      "inline tables, comments). A flag takes its value as the next argument or after `=`\n"
      "(`--listen=0.0.0.0:8080`). An unknown flag or key, or a value of the wrong type, is refused\n"
      "(exit 2), naming it (and its line in a TOML file).\n\n"
      "## Flags\n\n"
      "| flag | environment | config key | description |\n|---|---|---|---|\n";
  for (const auto& f : kFlags) {
    // Switches without a value have a boolean key of their own.
    std::string key = f.setting == nullptr ? "—" : file_form(f.setting);
    if (std::string_view(f.name) == "--dev")
      key = "`dev = true`";
    else if (std::string_view(f.name) == "--unsafe-allow-weak-sandbox")
      key = "`unsafe_allow_weak = true` in `[sandbox]`";
    else if (std::string_view(f.name) == "--tee-allow-unstable-keys")
      key = "`allow_unstable_keys = true` in `[tee]`";
    else if (std::string_view(f.name) == "--no-triggers")
      key = "`enabled = false` in `[triggers]`";
    const auto names = names_of(f.name, f.setting);
    const std::string_view name = names.primary;
    std::string env = name == "--help" || name == "--version" ? "—" : "`" + env_name(name) + "`";
    std::string shown = "`" + names.primary + "`";
    if (!names.alias.empty()) {
      shown += " (`" + names.alias + "`)";
      env += " (`" + env_name(names.alias) + "`)";
    }
    out += "| " + shown + " | " + env + " | " + key + " | " + cell(f.help) + " |\n";
  }
  out +=
      "\n## Config-file keys without a flag\n\n"
      "| config key | description |\n|---|---|\n";
  for (const auto& k : kFileOnlySettings)
    out += "| " + file_form(k.setting) + " | " + cell(k.help) + " |\n";
  out +=
      "\n## Environment\n\n"
      "| variable | description |\n|---|---|\n"
      "| `ENACT_<FLAG>` | each flag's value when the flag is not given (the table above) |\n"
      "| `STRIPE_SECRET_KEY` | Stripe secret key (overrides `stripe_secret_key` in `[billing]`) |\n"
      "| `STRIPE_WEBHOOK_SECRET` | signing secret of the Stripe webhook endpoint (overrides `stripe_webhook_secret` in "
      "`[billing]`) |\n"
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
  CLI::App app("enact-server", "enact-server");
  app.set_help_flag();
  app.add_flag("-h,--help", cl.help);
  app.add_flag("--version", cl.version);
  // Every flag of the table; one with an environment variable as its fallback. Values are kept as
  // text and applied below through the same setting names the config file uses.
  std::vector<std::string> configs;
  app.add_option("--config", configs)->allow_extra_args(false)->envname(env_name("--config"));
  struct given {
    const flag* f;
    flag_names names;
    CLI::Option* option;
  };
  std::vector<given> options;
  for (const auto& f : kFlags) {
    if (f.setting == nullptr)
      continue;
    auto names = names_of(f.name, f.setting);
    const std::string spec = names.alias.empty() ? names.primary : names.primary + "," + names.alias;
    auto* option = app.add_option(spec)
                       ->allow_extra_args(false)
                       ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                       ->envname(env_name(names.primary));
    options.push_back({&f, std::move(names), option});
  }
  bool dev = false;
  bool weak = false;
  bool unstable_keys = false;
  bool no_core = false;
  bool no_triggers = false;
  auto* dev_flag = app.add_flag("--dev", dev)->envname(env_name("--dev"));
  auto* weak_flag = app.add_flag("--unsafe-allow-weak-sandbox", weak)->envname(env_name("--unsafe-allow-weak-sandbox"));
  auto* unstable_keys_flag =
      app.add_flag("--tee-allow-unstable-keys", unstable_keys)->envname(env_name("--tee-allow-unstable-keys"));
  auto* no_core_flag = app.add_flag("--no-core", no_core)->envname(env_name("--no-core"));
  auto* no_triggers_flag = app.add_flag("--no-triggers", no_triggers)->envname(env_name("--no-triggers"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError&) {
    const auto extra = app.remaining();
    return usage("unknown option '" + (extra.empty() ? std::string() : extra.front()) + "' (see --help)");
  } catch (const CLI::ArgumentMismatch& e) {
    // "--listen: 1 required  missing": a flag at the end, or followed by another flag.
    const std::string what = e.what();
    return usage(what.substr(0, what.find(':')) + ": missing value");
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  if (cl.help || cl.version)
    return cl;
  // Precedence: a flag, else its environment variable (CLI11 reads it only for a flag not given),
  // else the config file, else the default.
  for (const auto& path : configs)
    ENACT_TRY_VOID(apply_file(cl.s, path));
  for (const auto& [f, names, option] : options) {
    // A value from the environment is named by its variable in a message.
    std::string what = option->get_envname();
    if (on_command_line(argc, argv, names.primary))
      what = names.primary;
    else if (!names.alias.empty() && on_command_line(argc, argv, names.alias))
      what = names.alias;
    for (const auto& value : option->results())
      ENACT_TRY_VOID(apply_setting(cl.s, f->setting, json::value(value), what));
    // The older name's variable, when neither the flag nor the key's variable is given.
    if (option->results().empty() && !names.alias.empty()) {
      const auto legacy = env_name(names.alias);
      if (const char* v = std::getenv(legacy.c_str()); v != nullptr && *v != '\0')
        ENACT_TRY_VOID(apply_setting(cl.s, f->setting, json::value(v), legacy));
    }
  }
  if (dev_flag->count() > 0)
    cl.s.dev = dev;
  if (weak_flag->count() > 0)
    cl.s.sandbox_allow_weak = weak;
  if (unstable_keys_flag->count() > 0)
    cl.s.tee_allow_unstable_keys = unstable_keys;
  if (no_core_flag->count() > 0)
    cl.s.no_core = no_core;
  if (no_triggers_flag->count() > 0)
    cl.s.triggers.enabled = !no_triggers;
  if (const char* secret = std::getenv("STRIPE_SECRET_KEY"); secret != nullptr && *secret != '\0')
    cl.s.stripe.secret_key = secret;
  if (const char* secret = std::getenv("STRIPE_WEBHOOK_SECRET"); secret != nullptr && *secret != '\0')
    cl.s.stripe.webhook_secret = secret;
  return cl;
}

}  // namespace enact::app
