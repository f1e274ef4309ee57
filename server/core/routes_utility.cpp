// SPDX-License-Identifier: Apache-2.0
// Public utility endpoints (docs/protocol.md §2 "Public utility"): no authentication.
#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/address.hpp"
#include "enact/ipfs/cid.hpp"
#include "billing/payment_provider.hpp"

namespace enact::core {
namespace {

namespace s = schema;

result<json::value> chain_config(const request_context& c) {
  return json::value_from(api::chain_config{c.cfg.chain_id, c.cfg.contract_address, c.cfg.chain_name});
}

result<json::value> api_payers(const request_context& c) {
  json::array a;
  for (const auto& p : c.svc.ledger->api_payers())
    a.push_back(json::string(to_checksum_address(p)));
  return json::object{{"api_payers", std::move(a)}};
}

result<json::value> admin_api_payer(const request_context& c) {
  return json::object{{"admin_api_payer", to_checksum_address(c.svc.api_payer)}};
}

result<json::value> svc_action_ipfs_id(const request_context& c) {
  const auto& code = c.body.as_string();
  if (code.size() > c.cfg.max_action_code_bytes)
    return fail(api_errc::payload_too_large, "body: " + std::to_string(code.size()) + " bytes of code, at most " +
                                                 std::to_string(c.cfg.max_action_code_bytes));
  return json::object{{"action_ipfs_cid", ipfs::cid_of(as_bytes(std::string_view(code)))}};
}

result<json::value> stripe_config(const request_context& c) {
  if (c.svc.payments == nullptr)
    return fail(api_errc::unavailable,
                "no payment provider configured (start with --dev for the dev provider, or "
                "configure stripe)");
  json::object out{{"publishable_key", c.svc.payments->publishable_key()}};
  if (c.svc.payments->mode() == "dev")
    out["mode"] = "dev";
  return out;
}

}  // namespace

void add_utility_routes(std::vector<route>& out) {
  out.push_back(route{"GET",
                      "/get_node_chain_config",
                      "getNodeChainConfig",
                      "utility",
                      "The chain of the permission registry (no RPC URL).",
                      auth_kind::none,
                      false,
                      {},
                      {},
                      s::object({{"chain_id", s::integer(), true},
                                 {"contract_address", s::address(), true},
                                 {"chain_name", s::string(), true}}),
                      chain_config});
  out.push_back(route{"GET",
                      "/get_api_payers",
                      "getApiPayers",
                      "utility",
                      "Addresses that relay API-mode writes to the registry.",
                      auth_kind::none,
                      false,
                      {},
                      {},
                      s::object({{"api_payers", s::array(s::address()), true}}),
                      api_payers});
  out.push_back(route{"GET",
                      "/get_admin_api_payer",
                      "getAdminApiPayer",
                      "utility",
                      "The api_payer that creates accounts.",
                      auth_kind::none,
                      false,
                      {},
                      {},
                      s::object({{"admin_api_payer", s::address(), true}}),
                      admin_api_payer});
  route cid{"POST",
            "/get_svc_action_ipfs_id",
            "getSvcActionIpfsId",
            "utility",
            "The IPFS CID (CIDv0, as `ipfs add` computes it) of action code sent as a JSON string.",
            auth_kind::none,
            false,
            {},
            json::object{{"type", "string"}, {"description", "the action's JavaScript source"}},
            s::object({{"action_ipfs_cid", s::string(), true}}),
            svc_action_ipfs_id};
  cid.body_is_json_string = true;
  out.push_back(std::move(cid));
  out.push_back(route{"GET",
                      "/billing/stripe_config",
                      "getStripeConfig",
                      "billing",
                      "The payment provider's publishable key (\"mode\": \"dev\" with the dev "
                      "provider).",
                      auth_kind::none,
                      false,
                      {},
                      {},
                      s::object({{"publishable_key", s::string(), true},
                                 {"mode", s::string("\"dev\" when the dev provider is active")}}),
                      stripe_config});
}

}  // namespace enact::core
