// SPDX-License-Identifier: Apache-2.0
// The SDK's typed core client against the real enact-server: one session from account creation
// to billing, every call through enact::client::core_client, and the server's errors arriving as
// enact::api_error with the API code, the status and the response's request id.
#include <doctest/doctest.h>

#include <string>

#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/base64.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/pkp/pkp.hpp"
#include "client_support.hpp"
#include "server_process.hpp"

using namespace enact;
using enact::client::core_client;
using enact::itest::expect_api_error;
using enact::itest::options_for;

TEST_CASE("a session through the SDK client") {
  itest::server_process server({"--dev"});
  core_client anonymous(options_for(server.port()));

  // Public utility.
  const auto chain = anonymous.get_node_chain_config();
  // docs/protocol.md §1 "embedded chain": this deployment's own, derived from its TEE root.
  CHECK(chain.chain_id >= (uint64_t{1} << 32));
  CHECK(chain.chain_id < (uint64_t{1} << 52) - (uint64_t{1} << 32));
  CHECK(chain.chain_name == "enact-embedded");
  const auto payers = anonymous.get_api_payers();
  REQUIRE(payers.size() == 1);
  CHECK(anonymous.get_admin_api_payer() == payers[0]);
  const std::string code = "Enact.setResponse({ok: params.x + 1});";
  CHECK(anonymous.get_svc_action_ipfs_id(code) == ipfs::cid_of(as_bytes(code)));

  // Account: the key is a secp256k1 key whose address is the admin wallet.
  auto created = anonymous.new_account({"client session", std::string("through the SDK"), {}});
  const std::string key_text(as_chars(created.api_key.view()));
  CHECK(created.api_key_hash == crypto::keccak256(std::string_view(key_text)));
  core_client owner(options_for(server.port()), created.api_key.clone());
  const auto info = owner.account();
  CHECK(info.api_key_hash == created.api_key_hash);
  CHECK(info.admin_wallet_address == created.wallet_address);
  CHECK(info.key.kind == scopes::key_kind::account);
  CHECK(info.managed);

  // A usage key that may create groups and wallets and manage everything everywhere.
  client::usage_key_spec spec;
  spec.name = "ops";
  spec.permissions.can_create_groups = true;
  spec.permissions.can_create_pkps = true;
  spec.permissions.manage_ipfs_ids_in_groups = {0};
  spec.permissions.add_pkp_to_groups = {0};
  auto usage = owner.add_usage_api_key(spec);
  const auto listed = owner.list_api_keys();
  REQUIRE(listed.total == 1);
  CHECK(listed.items[0].hash == usage.hash);
  CHECK(listed.items[0].permissions == spec.permissions);
  core_client ops(options_for(server.port()), usage.usage_api_key.clone());

  // Groups, wallets, actions.
  const auto g = ops.add_group({"signers", std::string("payout signers"), {}, {}});
  CHECK(g.group_id >= 1);
  const auto w = ops.create_wallet({"payout", {}});
  CHECK(w.derivation_path == pkp::api_mode_path(created.api_key_hash, 0));
  CHECK(ops.add_pkp_to_group(g.group_id, w.pkp_id).pkp_ids_permitted == std::vector<address>{w.pkp_id});
  const auto uploaded = ops.upload_action(code);
  CHECK(uploaded.action_ipfs_cid == ipfs::cid_of(as_bytes(code)));
  const auto a = ops.add_action({uploaded.action_ipfs_cid, "increment", {}});
  CHECK(a.hashed_cid == ipfs::hashed_cid(uploaded.action_ipfs_cid));
  const auto with_action = ops.add_action_to_group(g.group_id, uploaded.action_ipfs_cid);
  CHECK(with_action.cid_hashes_permitted == std::vector<hash256>{a.hashed_cid});
  CHECK(ops.list_actions(g.group_id).total == 1);
  CHECK(ops.list_wallets_in_group(g.group_id).items.at(0).pkp_id == w.pkp_id);
  // get_group answers the group as it stands; another account sees no group of that id, and an
  // id that was never made is not found either.
  const auto fetched = ops.get_group(g.group_id);
  CHECK(fetched.name == "signers");
  CHECK(fetched.pkp_ids_permitted == std::vector<address>{w.pkp_id});
  CHECK(fetched.cid_hashes_permitted == std::vector<hash256>{a.hashed_cid});
  CHECK(expect_api_error([&] { (void)ops.get_group(g.group_id + 1000); }).status() == 404);
  {
    const auto stranger = core_client(options_for(server.port())).new_account({"stranger", {}, {}});
    core_client other(options_for(server.port()), stranger.api_key.clone());
    const auto refused = expect_api_error([&] { (void)other.get_group(g.group_id); });
    CHECK(refused.status() == 404);
    CHECK(refused.errc() == api_errc::not_found);
  }

  // The usage key lacks group:delete: forbidden, named, with the request id of the response.
  const auto denied = expect_api_error([&] { (void)ops.remove_group(g.group_id); });
  CHECK(denied.errc() == api_errc::forbidden);
  CHECK(denied.status() == 403);
  CHECK(denied.message().find("group:delete") != std::string::npos);
  CHECK(denied.request_id().size() == 16);
  CHECK(ops.list_groups().total == 1);

  // Billing with the dev provider, by key and by a wallet signature of the admin wallet.
  CHECK(owner.balance().balance_credits == 0);
  const auto intent = owner.create_payment_intent(700);
  CHECK(owner.confirm_payment(intent.payment_intent_id) == 700);
  const auto twice = expect_api_error([&] { (void)owner.confirm_payment(intent.payment_intent_id); });
  CHECK(twice.errc() == api_errc::conflict);
  const auto too_small = expect_api_error([&] { (void)owner.create_payment_intent(499); });
  CHECK(too_small.errc() == api_errc::invalid_request);
  const Secret admin_key(codec::base64::decode(key_text).value());
  const auto now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  const auto proof =
      eip712::envelope::sign_billing({chain.chain_id, chain.contract_address}, admin_key, now,
                                     eip712::envelope::bind_request("GET", "/core/v1/billing/balance", ""))
          .value();
  CHECK(anonymous.balance(proof).balance_credits == 700);

  // Removing the usage key: its very next request is unauthenticated.
  owner.remove_usage_api_key(usage.usage_api_key);
  const auto gone = expect_api_error([&] { (void)ops.list_groups(); });
  CHECK(gone.errc() == api_errc::unauthenticated);
  CHECK(gone.status() == 401);

  CHECK(server.stop().clean());
}
