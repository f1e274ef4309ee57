// SPDX-License-Identifier: Apache-2.0
// Small argument and I/O layer shared by the `enact` CLI's subcommands: positional arguments and
// `--name value` options, files or stdin ("-"), key files, and the two failure kinds (usage errors
// exit 2, bad input exits 1), each reported as one line on stderr.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "enact/secret.hpp"
#include "enact/scopes/scopes.hpp"

namespace enact::cli {

/// Wrong arguments: exit code 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Bad input or a failed operation: exit code 1.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class args {
 public:
  /// Splits argv into positionals and options. `flags` take no value; `options` take one.
  args(std::vector<std::string> argv, std::set<std::string> options, std::set<std::string> flags);

  [[nodiscard]] size_t count() const { return positional_.size(); }
  /// The i-th positional argument; usage_error naming `what` when absent.
  [[nodiscard]] const std::string& at(size_t i, std::string_view what) const;
  [[nodiscard]] const std::vector<std::string>& positionals() const { return positional_; }
  [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
  [[nodiscard]] const std::string& require(const std::string& name) const;
  [[nodiscard]] bool has(const std::string& flag) const { return flags_.count(flag) != 0; }
  /// usage_error when there are more than `n` positionals.
  void at_most(size_t n) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> options_;
  std::set<std::string> flags_;
};

/// A new file for a key value, mode 0600, created before the request that issues the key so that
/// an unusable path fails before anything was issued. Never overwrites; removed again when nothing
/// was written to it.
class key_file {
 public:
  /// `lost` ends the error of a failed write (what became of the key).
  key_file(std::string path, std::string lost);
  key_file(const key_file&) = delete;
  key_file& operator=(const key_file&) = delete;
  ~key_file();
  /// Writes the key and a newline, closes the file and wipes the copy it wrote from.
  void write(const Secret& key);

 private:
  std::string path_;
  std::string lost_;
  int fd_ = -1;
};

/// Whole content of a file, or of stdin for "-".
[[nodiscard]] std::string read_input(const std::string& path);
/// A 32-byte secp256k1 private key from a file holding 64 hex digits (optional 0x, surrounding
/// whitespace allowed) or a Web3 Secret Storage keystore (JSON; its password from
/// ENACT_KEYSTORE_PASSWORD_FILE, ENACT_KEYSTORE_PASSWORD or ETH_PASSWORD, else asked on the
/// terminal). The file's bytes and the password are wiped after use.
[[nodiscard]] Secret read_key_file(const std::string& path);
/// An API or usage key kept as its base64 text in a file (surrounding whitespace ignored); the
/// file's bytes are wiped after use.
[[nodiscard]] Secret read_api_key_file(const std::string& path);
/// The password of the keystore file `path`: ENACT_KEYSTORE_PASSWORD_FILE (a file holding it), then
/// ENACT_KEYSTORE_PASSWORD or ETH_PASSWORD (foundry's name), then a prompt on the terminal with the
/// echo off. Never from an argument, where other users could read it in the process list.
[[nodiscard]] std::string keystore_password(const std::string& path);
/// Parses a non-negative decimal integer option.
[[nodiscard]] uint64_t parse_u64(std::string_view text, std::string_view what);
/// The non-empty items of a comma-separated list.
[[nodiscard]] std::vector<std::string> split_list(const std::string& text);
/// Each item of a comma-separated list, parsed by `item(text)`.
template <class F>
[[nodiscard]] auto parse_list(const std::string& text, F&& item) {
  std::vector<decltype(item(std::string()))> out;
  for (const std::string& s : split_list(text))
    out.push_back(item(s));
  return out;
}
/// Comma-separated group ids; "all" is the wildcard 0.
[[nodiscard]] std::vector<uint64_t> group_ids(const std::string& text, std::string_view what);
/// A usage key's permissions from the flags --can-create-groups, --can-delete-groups,
/// --can-create-pkps and the group-id lists --manage-ipfs-ids-in-groups, --add-pkp-to-groups,
/// --remove-pkp-from-groups and --execute-in-groups.
[[nodiscard]] scopes::permission_set permissions_of(const args& a);

}  // namespace enact::cli
