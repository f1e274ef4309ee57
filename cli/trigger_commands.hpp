// SPDX-License-Identifier: Apache-2.0
// What the `enact triggers …` command files share: where the service and the token are, the
// arguments, and the commands that trigger_commands() lists.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "cli.hpp"
#include "enact/client/trigger_client.hpp"

namespace enact::cli::trigger_cmd {

using client::trigger_client;

inline constexpr std::string_view kLoginHint = "run `enact triggers login` (or set ENACT_TRIGGERS_TOKEN)";

// --- the login file (trigger_login_commands.cpp) ------------------------------------------------

std::string trim(std::string_view s);

/// `<config>/triggers.json`, where `triggers login` keeps the token.
std::filesystem::path token_path();

/// What `triggers login` stored.
struct saved_login {
  std::string url;
  Secret token;
};
/// The login file's content; nullopt when there is none, input_error when it cannot be used.
std::optional<saved_login> read_saved();

// --- arguments (trigger_commands.cpp) --------------------------------------------------------------

/// A trigger command's arguments: its own options and flags, plus --url. A usage key on the
/// command line is refused with the reason.
args parse_args(const std::vector<std::string>& argv, std::set<std::string> options, std::set<std::string> flags = {});

/// --url, else $ENACT_TRIGGERS_URL, else the URL of the last login, else $ENACT_URL, else the default.
std::string url_of(const args& a, const std::optional<saved_login>& saved);

trigger_client make_client(const std::string& url, Secret token);

/// A client with the token of $ENACT_TRIGGERS_TOKEN or of the login file.
trigger_client connect(const args& a);

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

/// --usage-key-file, else $ENACT_USAGE_KEY.
Secret usage_key_of(const args& a);
uint32_t limit_of(const args& a);
uint64_t offset_of(const args& a);

/// A topic filter: topics (0x + 64 hex) or addresses (0x + 40 hex, left-padded to 32 bytes as
/// an indexed address is), separated by commas; "any" matches anything.
std::vector<hash256> topic_filter_arg(const std::string& text, std::string_view what);

/// A trigger as the renderer shows it: its JSON form (output.hpp).
void print_trigger(const client::trigger& t);

using command_fn = int(const std::vector<std::string>&);

// trigger_login_commands.cpp
command_fn login, logout, whoami;
// trigger_manage_commands.cpp
command_fn create, list, get, enable, disable, update, remove;
// trigger_run_commands.cpp
command_fn runs, run_cmd, fire_webhook;

}  // namespace enact::cli::trigger_cmd
