// SPDX-License-Identifier: Apache-2.0
// `enact core` billing and the public facts of the service (docs/cli.md).
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

// --- billing -----------------------------------------------------------------------------------

/// The admin wallet's key of --wallet-key-file: each billing request is then sent with a version 2
/// BillingAuth the client signs for exactly that request (docs/protocol.md §2), instead of the API key.
std::optional<Secret> wallet_key(const args& a) {
  auto path = a.get("wallet-key-file");
  if (!path)
    return std::nullopt;
  return read_key_file(*path);
}

int billing_balance(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"wallet-key-file"});
  a.at_most(0);
  const auto key = wallet_key(a);
  core_client c = connect(a, !key);
  emit(json::value_from(key ? c.balance(*key) : c.balance()));
  return 0;
}

int billing_create_intent(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"amount-cents", "wallet-key-file"});
  a.at_most(0);
  const uint64_t amount = parse_u64(a.require("amount-cents"), "--amount-cents");
  const auto key = wallet_key(a);
  core_client c = connect(a, !key);
  const auto intent = key ? c.create_payment_intent(amount, *key) : c.create_payment_intent(amount);
  // What a person pays with (docs/cli.md): Stripe.js takes the client secret together with the
  // publishable key; the payment is credited by Stripe's webhook, or by `billing confirm`.
  const auto provider = c.get_stripe_config();
  json::object o = json::value_from(intent).as_object();
  o["publishable_key"] = provider.publishable_key;
  const std::string confirm = "enact core billing confirm " + intent.payment_intent_id +
                              (key ? " --wallet-key-file " + *a.get("wallet-key-file") : std::string());
  if (provider.mode == "dev")
    o["next"] = "The dev provider takes no card: run " + confirm + " to credit it.";
  else
    o["next"] =
        "Pay it with Stripe.js: mount the Payment Element with this client_secret and publishable_key and call "
        "stripe.confirmPayment (the dashboard's Account page does so for the intents it creates). Once Stripe "
        "reports it succeeded the webhook credits it; to credit it at once, run " +
        confirm;
  emit(o);
  return 0;
}

int billing_confirm(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"wallet-key-file"});
  a.at_most(1);
  const std::string& id = a.at(0, "PAYMENT_INTENT_ID");
  const auto key = wallet_key(a);
  core_client c = connect(a, !key);
  json::object o;
  o["balance_credits"] = key ? c.confirm_payment(id, *key) : c.confirm_payment(id);
  emit(o);
  return 0;
}

int billing_stripe_config(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  emit(json::value_from(connect(a, false).get_stripe_config()));
  return 0;
}

// --- public utility ----------------------------------------------------------------------------

int chain_config(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  emit(json::value_from(connect(a, false).get_node_chain_config()));
  return 0;
}

int api_payers(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(0);
  core_client c = connect(a, false);
  json::array list;
  for (const address& p : c.get_api_payers())
    list.emplace_back(to_checksum_address(p));
  json::object o;
  o["api_payers"] = std::move(list);
  o["admin_api_payer"] = to_checksum_address(c.get_admin_api_payer());
  emit(o);
  return 0;
}

int server_cid(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {});
  a.at_most(1);
  const std::string code = read_input(a.at(0, "FILE"));
  json::object o;
  o["action_ipfs_cid"] = connect(a, false).get_svc_action_ipfs_id(code);
  emit(o);
  return 0;
}

}  // namespace enact::cli::core_cmd
