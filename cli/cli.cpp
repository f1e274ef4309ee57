// SPDX-License-Identifier: Apache-2.0
#include "cli.hpp"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <charconv>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keystore.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::cli {

args::args(std::vector<std::string> argv, std::set<std::string> options, std::set<std::string> flags) {
  // A switch given a value is a usage error, not a value CLI11 would read as true or false.
  for (const auto& a : argv) {
    const auto eq = a.find('=');
    if (a.starts_with("--") && eq != std::string::npos && flags.count(a.substr(2, eq - 2)) != 0)
      throw usage_error(a.substr(0, eq) + " takes no value");
  }
  CLI::App app;
  app.set_help_flag();  // --help is answered by main before a subcommand runs
  // Everything that is not a known option stays, in order, in remaining(): the positionals and
  // any unknown --option, refused below.
  app.allow_extras();
  std::map<std::string, std::string> values;
  for (const auto& name : options)
    app.add_option("--" + name, values[name])->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::map<std::string, bool> switches;
  for (const auto& name : flags)
    app.add_flag("--" + name, switches[name]);
  std::reverse(argv.begin(), argv.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(argv);
  } catch (const CLI::ArgumentMismatch& e) {
    // "--name: 1 required TEXT missing": an option at the end, or followed by another option.
    const std::string what = e.what();
    throw usage_error(what.substr(0, what.find(':')) + " needs a value");
  } catch (const CLI::ParseError& e) {
    throw usage_error(e.what());
  }
  for (const auto& a : app.remaining()) {
    if (a.size() > 2 && a.starts_with("--"))
      throw usage_error("unknown option " + a.substr(0, a.find('=')));
    positional_.push_back(a);
  }
  for (const auto& name : options) {
    if (app.get_option("--" + name)->count() > 0)
      options_[name] = values[name];
  }
  for (const auto& [name, on] : switches) {
    if (app.get_option("--" + name)->count() > 0)
      flags_.insert(name);
  }
}

const std::string& args::at(size_t i, std::string_view what) const {
  if (i >= positional_.size())
    throw usage_error("missing " + std::string(what));
  return positional_[i];
}

std::optional<std::string> args::get(const std::string& name) const {
  auto it = options_.find(name);
  if (it == options_.end())
    return std::nullopt;
  return it->second;
}

const std::string& args::require(const std::string& name) const {
  auto it = options_.find(name);
  if (it == options_.end())
    throw usage_error("missing --" + name);
  return it->second;
}

void args::at_most(size_t n) const {
  if (positional_.size() > n)
    throw usage_error("unexpected argument '" + positional_[n] + "'");
}

std::string read_input(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw input_error(path + ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad())
    throw input_error(path + ": read failed");
  return ss.str();
}

namespace {

std::string trimmed_line_end(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text;
}

}  // namespace

std::string keystore_password(const std::string& path) {
  if (const char* file = std::getenv("ENACT_KEYSTORE_PASSWORD_FILE"); file != nullptr && *file != '\0') {
    std::string text = read_input(file);
    std::string pw = trimmed_line_end(text);
    detail::secure_wipe(text.data(), text.size());
    return pw;
  }
  for (const char* name : {"ENACT_KEYSTORE_PASSWORD", "ETH_PASSWORD"})
    if (const char* pw = std::getenv(name); pw != nullptr)
      return pw;
  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (tty < 0)
    throw input_error(path +
                      ": a keystore file needs its password: set ENACT_KEYSTORE_PASSWORD_FILE (a file holding "
                      "it) or ENACT_KEYSTORE_PASSWORD, or run on a terminal to be asked");
  termios old{};
  const bool is_term = ::tcgetattr(tty, &old) == 0;
  if (is_term) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(tty, TCSAFLUSH, &quiet);
  }
  const std::string prompt = "Password for " + path + ": ";
  (void)!::write(tty, prompt.data(), prompt.size());
  std::string pw;
  char c = 0;
  while (::read(tty, &c, 1) == 1 && c != '\n')
    pw += c;
  if (is_term)
    ::tcsetattr(tty, TCSAFLUSH, &old);
  (void)!::write(tty, "\n", 1);
  ::close(tty);
  return trimmed_line_end(std::move(pw));
}

Secret read_api_key_file(const std::string& path) {
  std::string text = read_input(path);
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    detail::secure_wipe(text.data(), text.size());
    throw input_error(path + ": empty key file");
  }
  Secret key(as_bytes(std::string_view(text).substr(begin, end - begin + 1)));
  detail::secure_wipe(text.data(), text.size());
  return key;
}

Secret read_key_file(const std::string& path) {
  std::string text = read_input(path);
  auto trim_begin = text.find_first_not_of(" \t\r\n");
  auto trim_end = text.find_last_not_of(" \t\r\n");
  std::string_view digits;
  if (trim_begin != std::string::npos)
    digits = std::string_view(text).substr(trim_begin, trim_end - trim_begin + 1);
  if (!digits.empty() && digits.front() == '{') {
    // A Web3 Secret Storage keystore (geth, cast wallet, eth-account, ethers).
    std::string pw = keystore_password(path);
    auto key = crypto::keystore::decrypt(digits, pw);
    detail::secure_wipe(pw.data(), pw.size());
    detail::secure_wipe(text.data(), text.size());
    if (!key)
      throw input_error(path + ": " + key.err().message);
    return std::move(*key);
  }
  Secret key = Secret::of_size(32);
  auto ok = codec::hex::decode_into(digits, key.mutable_view(), path);
  detail::secure_wipe(text.data(), text.size());
  if (!ok)
    throw input_error(ok.err().message + " (expected a 32-byte hex private key or a keystore file)");
  if (!crypto::secp256k1::is_valid_private_key(key.view()))
    throw input_error(path + ": not a valid secp256k1 private key");
  return key;
}

uint64_t parse_u64(std::string_view text, std::string_view what) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty())
    throw usage_error(std::string(what) + ": expected a non-negative integer, got '" + std::string(text) + "'");
  return v;
}

key_file::key_file(std::string path, std::string lost) : path_(std::move(path)), lost_(std::move(lost)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd_ < 0)
    throw input_error(path_ + ": cannot create (exists already, or no permission)");
}

key_file::~key_file() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
}

void key_file::write(const Secret& key) {
  std::string text(as_chars(key.view()));
  text += '\n';
  const bool ok = ::write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  detail::secure_wipe(text.data(), text.size());
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  if (!ok || !closed) {
    ::unlink(path_.c_str());
    throw input_error(path_ + ": write failed; " + lost_);
  }
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    if (comma > start)
      out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<uint64_t> group_ids(const std::string& text, std::string_view what) {
  return parse_list(
      text, [&](const std::string& item) { return item == "all" ? scopes::kAllGroups : parse_u64(item, what); });
}

scopes::permission_set permissions_of(const args& a) {
  scopes::permission_set p;
  p.can_create_groups = a.has("can-create-groups");
  p.can_delete_groups = a.has("can-delete-groups");
  p.can_create_pkps = a.has("can-create-pkps");
  const auto ids = [&](const char* option, std::vector<uint64_t>& out) {
    if (auto v = a.get(option))
      out = group_ids(*v, std::string("--") + option);
  };
  ids("manage-ipfs-ids-in-groups", p.manage_ipfs_ids_in_groups);
  ids("add-pkp-to-groups", p.add_pkp_to_groups);
  ids("remove-pkp-from-groups", p.remove_pkp_from_groups);
  ids("execute-in-groups", p.execute_in_groups);
  return p;
}

}  // namespace enact::cli
