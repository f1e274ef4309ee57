#include "cli.hpp"

#include <charconv>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "enact/codec/hex.hpp"
#include "enact/crypto/secp256k1.hpp"

namespace enact::cli {

args::args(std::vector<std::string> argv, std::set<std::string> options, std::set<std::string> flags) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      if (flags.count(name)) {
        if (inline_value)
          throw usage_error("--" + name + " takes no value");
        flags_.insert(name);
      } else if (options.count(name)) {
        if (inline_value) {
          options_[name] = *inline_value;
        } else {
          if (i + 1 >= argv.size())
            throw usage_error("--" + name + " needs a value");
          options_[name] = argv[++i];
        }
      } else {
        throw usage_error("unknown option --" + name);
      }
    } else {
      positional_.push_back(a);
    }
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

Secret read_key_file(const std::string& path) {
  std::string text = read_input(path);
  auto trim_begin = text.find_first_not_of(" \t\r\n");
  auto trim_end = text.find_last_not_of(" \t\r\n");
  std::string_view digits;
  if (trim_begin != std::string::npos)
    digits = std::string_view(text).substr(trim_begin, trim_end - trim_begin + 1);
  Secret key = Secret::of_size(32);
  auto ok = hex::decode_into(digits, key.mutable_view(), path);
  detail::secure_wipe(text.data(), text.size());
  if (!ok)
    throw input_error(ok.err().message + " (expected a 32-byte hex private key)");
  if (!secp256k1::is_valid_private_key(key.view()))
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

}  // namespace enact::cli
