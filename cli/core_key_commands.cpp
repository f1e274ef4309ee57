// SPDX-License-Identifier: Apache-2.0
// `enact core` accounts and usage keys (docs/cli.md). Key values the service returns are printed
// once, or written 0600 with --key-out.
#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "core_commands.hpp"
#include "output.hpp"
#include "enact/api/core.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace enact::cli::core_cmd {

namespace json = boost::json;

// --- accounts and keys -------------------------------------------------------------------------

int new_account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "email", "key-out"});
  a.at_most(0);
  api::new_account_request r;
  r.name = a.require("name");
  r.description = a.get("description");
  r.email = a.get("email");
  core_client c = connect(a, false);
  std::optional<key_file> out;
  if (auto path = a.get("key-out"))
    out.emplace(*path, "the key is lost, remove it on the service");
  api::new_account_response created = c.new_account(r);
  json::object o;
  o["wallet_address"] = to_checksum_address(created.wallet_address);
  o["api_key_hash"] = codec::hex::encode_prefixed(created.api_key_hash);
  if (out) {
    out->write(created.api_key);
    o["key_file"] = *a.get("key-out");
    emit(o);
  } else {
    emit_with_key(std::move(o), "api_key", created.api_key);
  }
  return 0;
}

int account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  emit(json::value_from(connect(a, true).account()));
  return 0;
}

const std::set<std::string> kSpecOptions = {"name",
                                            "description",
                                            "expiration",
                                            "manage-ipfs-ids-in-groups",
                                            "add-pkp-to-groups",
                                            "remove-pkp-from-groups",
                                            "execute-in-groups"};
const std::set<std::string> kSpecFlags = {"can-create-groups", "can-delete-groups", "can-create-pkps"};

std::set<std::string> plus(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

api::usage_key_spec spec_of(const args& a) {
  api::usage_key_spec s;
  s.name = a.require("name");
  s.description = a.get("description");
  if (auto e = a.get("expiration"))
    s.expiration = parse_u64(*e, "--expiration");
  s.permissions = permissions_of(a);
  return s;
}

int keys_add(const std::vector<std::string>& argv) {
  args a = parse_args(argv, plus(kSpecOptions, {"key-out"}), kSpecFlags);
  a.at_most(0);
  const api::usage_key_spec spec = spec_of(a);
  core_client c = connect(a, true);
  std::optional<key_file> out;
  if (auto path = a.get("key-out"))
    out.emplace(*path, "the key is lost, remove it on the service");
  api::new_usage_key k = c.add_usage_api_key(spec);
  json::object o;
  o["hash"] = codec::hex::encode_prefixed(k.hash);
  o["wallet_address"] = to_checksum_address(k.wallet_address);
  if (out) {
    out->write(k.usage_api_key);
    o["key_file"] = *a.get("key-out");
    emit(o);
  } else {
    emit_with_key(std::move(o), "usage_api_key", k.usage_api_key);
  }
  return 0;
}

int keys_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(0);
  emit(json::value_from(connect(a, true).list_api_keys(page_of(a))));
  return 0;
}

json::object hash_line(const hash256& h) {
  json::object o;
  o["hash"] = codec::hex::encode_prefixed(h);
  return o;
}

int keys_update(const std::vector<std::string>& argv) {
  args a = parse_args(argv, plus(kSpecOptions, {"usage-key-file"}), kSpecFlags);
  a.at_most(0);
  const Secret usage = read_api_key_file(a.require("usage-key-file"));
  const api::usage_key_spec spec = spec_of(a);
  emit(hash_line(connect(a, true).update_usage_api_key(usage, spec)));
  return 0;
}

int keys_update_metadata(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"usage-key-file", "name", "description"});
  a.at_most(0);
  const Secret usage = read_api_key_file(a.require("usage-key-file"));
  const std::string name = a.require("name");
  const std::string description = a.get("description").value_or("");
  emit(hash_line(connect(a, true).update_usage_api_key_metadata(usage, name, description)));
  return 0;
}

int keys_remove(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"usage-key-file"});
  a.at_most(0);
  const Secret usage = read_api_key_file(a.require("usage-key-file"));
  emit(hash_line(connect(a, true).remove_usage_api_key(usage)));
  return 0;
}

}  // namespace enact::cli::core_cmd
