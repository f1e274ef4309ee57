// SPDX-License-Identifier: Apache-2.0
// `enact core` actions: their metadata and code on the service, and runs (docs/cli.md).
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

// --- actions -----------------------------------------------------------------------------------

int actions_add(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description"});
  a.at_most(1);
  api::new_action n;
  n.action_ipfs_cid = a.at(0, "CID");
  if (auto c = ipfs::parse(n.action_ipfs_cid); !c)
    throw usage_error("CID: " + c.err().message);
  n.name = a.require("name");
  n.description = a.get("description");
  emit(json::value_from(connect(a, true).add_action(n)));
  return 0;
}

int actions_upload(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string code = read_input(a.at(0, "FILE"));
  emit(json::value_from(connect(a, true).upload_action(code)));
  return 0;
}

int actions_code(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string cid = a.at(0, "CID");
  if (auto c = ipfs::parse(cid); !c)
    throw usage_error("CID: " + c.err().message);
  const api::action_code code = connect(a, true).get_action_code(cid);
  emit_document(json::value_from(code), code.code);
  return 0;
}

int actions_update(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"name", "description"});
  a.at_most(1);
  api::action_metadata m;
  m.hashed_cid = hashed_cid_arg(a.at(0, "HASHED_CID|CID"), "HASHED_CID");
  core_client c = connect(a, true);
  // update_action_metadata replaces both fields; one not given keeps its current value.
  if (!a.get("name") || !a.get("description")) {
    if (!a.get("name") && !a.get("description"))
      throw usage_error("nothing to update: give --name and/or --description");
    auto current = find_listed<api::action>([&](api::page_request p) { return c.list_actions(std::nullopt, p); },
                                            [&](const api::action& x) { return x.hashed_cid == m.hashed_cid; });
    if (!current)
      throw input_error("HASHED_CID: no such action in the account");
    m.name = current->name;
    m.description = current->description;
  }
  if (auto v = a.get("name"))
    m.name = *v;
  if (auto v = a.get("description"))
    m.description = *v;
  emit(json::value_from(c.update_action_metadata(m)));
  return 0;
}

int actions_delete(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const hash256 h = hashed_cid_arg(a.at(0, "HASHED_CID|CID"), "HASHED_CID");
  emit(json::value_from(api::action_ref{connect(a, true).delete_action(h)}));
  return 0;
}

int actions_list(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"group", "page", "page-size"});
  a.at_most(0);
  std::optional<uint64_t> group;
  if (auto g = a.get("group"))
    group = parse_u64(*g, "--group");
  emit(json::value_from(connect(a, true).list_actions(group, page_of(a))));
  return 0;
}

int run(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"cid", "code-file", "pkp", "params"});
  a.at_most(0);
  api::run_action_request r;
  if (a.get("cid").has_value() == a.get("code-file").has_value())
    throw usage_error("give exactly one of --cid CID and --code-file FILE");
  if (auto cid = a.get("cid"))
    r.action_ipfs_cid = *cid;
  if (auto file = a.get("code-file"))
    r.code = read_input(*file);
  if (auto pkp = a.get("pkp")) {
    auto addr = parse_address(*pkp, "--pkp");
    if (!addr)
      throw usage_error(addr.err().message);
    r.pkp_id = *addr;
  }
  if (auto params = a.get("params")) {
    std::error_code ec;
    auto v = json::parse(*params, ec);
    if (ec || !v.is_object())
      throw usage_error("--params: expected a JSON object, e.g. '{\"x\": 1}'");
    r.params = std::move(v.as_object());
  }
  const auto out = connect(a, true).run_action(r);
  json::object sigs;
  for (const auto& [name, sig] : out.signatures)
    sigs[name] = json::object{{"signature", codec::hex::encode_prefixed(sig.signature)},
                              {"r", codec::hex::encode_prefixed(sig.r)},
                              {"s", codec::hex::encode_prefixed(sig.s)},
                              {"v", sig.v},
                              {"public_key", codec::hex::encode_prefixed(sig.public_key)},
                              {"digest", codec::hex::encode_prefixed(sig.digest)}};
  emit(json::object{{"response", out.response},
                    {"logs", out.logs},
                    {"signatures", std::move(sigs)},
                    {"run_ms", out.run_ms},
                    {"charged_credits", out.charged_credits}});
  return 0;
}

}  // namespace enact::cli::core_cmd
