// SPDX-License-Identifier: Apache-2.0
// `enact triggers login`, `logout` and `whoami`: the bearer token kept in `<config>/triggers.json`
// (mode 0600, in a 0700 directory), as docs/cli.md describes it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
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
namespace fs = std::filesystem;

namespace {

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

fs::path config_dir() {
  if (const char* d = std::getenv("ENACT_CONFIG_DIR"); d != nullptr && *d != '\0')
    return d;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0')
    return fs::path(x) / "enact";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return fs::path(h) / ".config" / "enact";
  throw input_error("no configuration directory: set ENACT_CONFIG_DIR or HOME");
}

/// old one, so that no moment exists at which the token is readable by others or half written.
void write_saved(const std::string& url, const Secret& token) {
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

}  // namespace

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

fs::path token_path() { return config_dir() / "triggers.json"; }

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
    out.token = Secret(as_bytes(t->get_string()));
  wipe_strings(v);
  return out;
}

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
  Secret token;
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
    token = Secret(as_bytes(t));
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

}  // namespace enact::cli::trigger_cmd
