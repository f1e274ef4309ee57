// SPDX-License-Identifier: Apache-2.0
// `enact core` groups and PKP wallets (docs/cli.md).
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
#include "enact/ipfs/cid.hpp"

namespace enact::cli::core_cmd {

namespace json = boost::json;

// --- groups ------------------------------------------------------------------------------------

int groups_add(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "pkps", "cid-hashes"});
  a.at_most(0);
  api::new_group g;
  g.name = a.require("name");
  g.description = a.get("description");
  if (auto v = a.get("pkps"))
    g.pkp_ids_permitted = address_list(*v, "--pkps");
  if (auto v = a.get("cid-hashes"))
    g.cid_hashes_permitted = hashed_cid_list(*v, "--cid-hashes");
  emit(json::value_from(connect(a, true).add_group(g)));
  return 0;
}

int groups_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(0);
  emit(json::value_from(connect(a, true).list_groups(page_of(a))));
  return 0;
}

int groups_update(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description", "pkps", "cid-hashes"});
  a.at_most(1);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  std::optional<std::vector<address>> pkps;
  std::optional<std::vector<hash256>> cids;
  if (auto v = a.get("pkps"))
    pkps = address_list(*v, "--pkps");
  if (auto v = a.get("cid-hashes"))
    cids = hashed_cid_list(*v, "--cid-hashes");
  core_client c = connect(a, true);
  // update_group replaces every field; what is not given keeps its current value.
  api::group g;
  if (!a.get("name") || !a.get("description") || !pkps || !cids) {
    auto current = find_listed<api::group>([&](api::page_request p) { return c.list_groups(p); },
                                           [&](const api::group& x) { return x.group_id == id; });
    if (!current)
      throw input_error("GROUP_ID: no group " + std::to_string(id) + " in the account");
    g = std::move(*current);
  }
  g.group_id = id;
  if (auto v = a.get("name"))
    g.name = *v;
  if (auto v = a.get("description"))
    g.description = *v;
  if (pkps)
    g.pkp_ids_permitted = std::move(*pkps);
  if (cids)
    g.cid_hashes_permitted = std::move(*cids);
  emit(json::value_from(c.update_group(g)));
  return 0;
}

int groups_remove(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  emit(json::value_from(api::group_ref{connect(a, true).remove_group(id)}));
  return 0;
}

int groups_add_pkp(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const address pkp = address_arg(a.at(1, "PKP_ID"), "PKP_ID");
  emit(json::value_from(connect(a, true).add_pkp_to_group(id, pkp)));
  return 0;
}

int groups_remove_pkp(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const address pkp = address_arg(a.at(1, "PKP_ID"), "PKP_ID");
  emit(json::value_from(connect(a, true).remove_pkp_from_group(id, pkp)));
  return 0;
}

int groups_add_action(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const std::string& cid = a.at(1, "CID");
  if (auto c = ipfs::parse(cid); !c)
    throw usage_error("CID: " + c.err().message);
  emit(json::value_from(connect(a, true).add_action_to_group(id, cid)));
  return 0;
}

int groups_remove_action(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(2);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  const hash256 h = hashed_cid_arg(a.at(1, "HASHED_CID|CID"), "HASHED_CID");
  emit(json::value_from(connect(a, true).remove_action_from_group(id, h)));
  return 0;
}

// --- wallets -----------------------------------------------------------------------------------

int wallets_create(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description"});
  a.at_most(0);
  api::new_wallet w{a.require("name"), a.get("description")};
  emit(json::value_from(connect(a, true).create_wallet(w)));
  return 0;
}

int wallets_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(0);
  emit(json::value_from(connect(a, true).list_wallets(page_of(a))));
  return 0;
}

int wallets_list_in_group(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"page", "page-size"});
  a.at_most(1);
  const uint64_t id = id_arg(a, 0, "GROUP_ID");
  emit(json::value_from(connect(a, true).list_wallets_in_group(id, page_of(a))));
  return 0;
}

}  // namespace enact::cli::core_cmd
