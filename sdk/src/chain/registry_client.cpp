// SPDX-License-Identifier: Apache-2.0
// The registry client: calldata from the registry bindings, transactions through the sender,
// reverts classified with registry::decode_revert.
#include "enact/chain/registry_client.hpp"

#include "enact/pkp/pkp.hpp"

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"

namespace enact::chain {

namespace reg = registry;

namespace {

constexpr std::string_view kRevertMarker = " (revert data ";

/// `function: ` + the registry error + the revert data, with the registry_errc as the code.
error registry_failure(std::string_view function, std::string_view what, const bytes& revert) {
  const reg::registry_error re = reg::decode_revert(revert);
  std::string message = std::string(function) + ": ";
  if (!what.empty())
    message += std::string(what) + ": ";
  message += re.message.empty() ? std::string("reverted") : re.message;
  message += std::string(kRevertMarker) + codec::hex::encode_prefixed(revert) + ")";
  return error{make_error_code(re.code), std::move(message)};
}

error with_function(std::string_view function, error e) {
  e.message = std::string(function) + ": " + e.message;
  return e;
}

}  // namespace

hash256 chain_secured_account_hash(const address& admin) { return pkp::canonical_account_hash(admin); }

registry_client::registry_client(std::shared_ptr<const rpc_client> rpc, address registry)
    : rpc_(std::move(rpc)), registry_(registry) {}

registry_client::registry_client(std::shared_ptr<const rpc_client> rpc, address registry,
                                 std::shared_ptr<transaction_sender> sender)
    : rpc_(std::move(rpc)), registry_(registry), sender_(std::move(sender)) {}

result<registry_client> registry_client::create(std::shared_ptr<const rpc_client> rpc, address registry,
                                                Secret owner_key, sender_options options) {
  ENACT_TRY(transaction_sender s, transaction_sender::create(rpc, std::move(owner_key), options));
  return registry_client(std::move(rpc), registry, std::make_shared<transaction_sender>(std::move(s)));
}

std::optional<address> registry_client::sender_address() const {
  if (!sender_)
    return std::nullopt;
  return sender_->from();
}

// --- writes -----------------------------------------------------------------------------------

result<receipt> registry_client::send(const reg::call& c) { return send_with(c, std::nullopt); }

result<receipt> registry_client::send(const reg::call& c, uint64_t gas_limit) { return send_with(c, gas_limit); }

result<receipt> registry_client::send_with(const reg::call& c, std::optional<uint64_t> gas) {
  const std::string_view function = reg::function_name(c);
  if (!sender_)
    return error{std::make_error_code(std::errc::operation_not_permitted),
                 std::string(function) + ": this registry client has no sender (writes need the owner's key)"};
  const bytes data = reg::encode(c);
  tx_request tx;
  tx.to = registry_;
  tx.data = data;
  tx.gas_limit = gas;
  auto sent = sender_->send(tx);
  if (sent)
    return std::move(*sent);
  error e = std::move(sent).err();
  // Refused during estimation: the sender already classified the revert.
  if (e.code.category() == enact::detail::registry_category())
    return with_function(function, std::move(e));
  if (e.code != rpc_errc::tx_failed)
    return with_function(function, std::move(e));
  // Mined with status 0: receipts carry no reason, so the call is replayed on the latest state.
  call_request replay;
  replay.from = sender_->from();
  replay.to = registry_;
  replay.data = data;
  auto again = rpc_->call(replay);
  if (!again)
    if (const std::optional<bytes> revert = revert_data(again.err()))
      return registry_failure(function, e.message, *revert);
  return with_function(function, std::move(e));
}

result<account_created> registry_client::new_account(std::string_view name, std::string_view description,
                                                     std::string_view email) {
  if (!sender_)
    return error{std::make_error_code(std::errc::operation_not_permitted),
                 "newAccount: this registry client has no sender (writes need the owner's key)"};
  reg::new_account_call c;
  c.admin = sender_->from();
  c.api_key_hash = chain_secured_account_hash(c.admin);
  c.managed = false;
  c.name = std::string(name);
  c.description = std::string(description);
  c.email = std::string(email);
  ENACT_TRY(receipt r, send(c));
  return account_created{c.api_key_hash, std::move(r)};
}

result<receipt> registry_client::convert_to_chain_secured(const hash256& account, const address& new_admin) {
  return send(reg::convert_to_chain_secured_call{account, new_admin});
}

result<receipt> registry_client::register_wallet_derivation(const hash256& account, const address& wallet,
                                                            const hash256& derivation_path, std::string_view name,
                                                            std::string_view description) {
  return send(reg::register_wallet_derivation_call{account, wallet, derivation_path, std::string(name),
                                                   std::string(description)});
}

result<receipt> registry_client::set_usage_api_key(const hash256& account, const hash256& usage_key_hash,
                                                   const u256& expiration, const u256& balance, std::string_view name,
                                                   std::string_view description,
                                                   const scopes::permission_set& permissions) {
  return send(reg::set_usage_api_key_call{account, usage_key_hash, expiration, balance, std::string(name),
                                          std::string(description), permissions});
}

result<receipt> registry_client::set_usage_api_key(const hash256& account, const hash256& usage_key_hash,
                                                   const u256& expiration, const u256& balance, std::string_view name,
                                                   std::string_view description,
                                                   const scopes::permission_set& permissions, const address& wallet) {
  return send(reg::set_usage_api_key_with_wallet_call{account, usage_key_hash, expiration, balance, std::string(name),
                                                      std::string(description), permissions, wallet});
}

result<receipt> registry_client::update_usage_api_key_metadata(const hash256& account, const hash256& usage_key_hash,
                                                               std::string_view name, std::string_view description) {
  return send(
      reg::update_usage_api_key_metadata_call{account, usage_key_hash, std::string(name), std::string(description)});
}

result<receipt> registry_client::remove_usage_api_key(const hash256& account, const hash256& usage_key_hash) {
  return send(reg::remove_usage_api_key_call{account, usage_key_hash});
}

result<group_added> registry_client::add_group(const hash256& account, std::string_view name,
                                               std::string_view description, const std::vector<address>& pkp_ids,
                                               const std::vector<hash256>& cid_hashes) {
  ENACT_TRY(receipt r,
            send(reg::add_group_call{account, std::string(name), std::string(description), pkp_ids, cid_hashes}));
  for (const log_entry& l : r.logs) {
    if (l.address != registry_ || l.topics.empty() || l.topics.front() != reg::topic0<reg::group_added_event>())
      continue;
    auto decoded = reg::decode_log(l.topics, l.data);
    if (!decoded)
      return with_function("addGroup", std::move(decoded).err());
    if (decoded->account_hash != account)
      continue;
    const auto& e = std::get<reg::group_added_event>(decoded->value);
    return group_added{e.group_id, std::move(r)};
  }
  return fail(rpc_errc::bad_response, "addGroup: the receipt of transaction " +
                                          codec::hex::encode_prefixed(r.transaction_hash) +
                                          " has no GroupAdded log of the registry");
}

result<receipt> registry_client::update_group(const hash256& account, scopes::group_id group, std::string_view name,
                                              std::string_view description, const std::vector<address>& pkp_ids,
                                              const std::vector<hash256>& cid_hashes) {
  return send(reg::update_group_call{account, group, std::string(name), std::string(description), pkp_ids, cid_hashes});
}

result<receipt> registry_client::remove_group(const hash256& account, scopes::group_id group) {
  return send(reg::remove_group_call{account, group});
}

result<receipt> registry_client::add_pkp_to_group(const hash256& account, scopes::group_id group,
                                                  const address& pkp_id) {
  return send(reg::add_pkp_to_group_call{account, group, pkp_id});
}

result<receipt> registry_client::remove_pkp_from_group(const hash256& account, scopes::group_id group,
                                                       const address& pkp_id) {
  return send(reg::remove_pkp_from_group_call{account, group, pkp_id});
}

result<receipt> registry_client::add_action(const hash256& account, std::string_view cid, std::string_view name,
                                            std::string_view description) {
  return send(reg::add_action_call{account, crypto::keccak256(cid), std::string(cid), std::string(name),
                                   std::string(description)});
}

result<receipt> registry_client::add_action_to_group(const hash256& account, scopes::group_id group,
                                                     const hash256& hashed_cid) {
  return send(reg::add_action_to_group_call{account, group, hashed_cid});
}

result<receipt> registry_client::remove_action_from_group(const hash256& account, scopes::group_id group,
                                                          const hash256& hashed_cid) {
  return send(reg::remove_action_from_group_call{account, group, hashed_cid});
}

result<receipt> registry_client::update_action_metadata(const hash256& account, const hash256& hashed_cid,
                                                        std::string_view name, std::string_view description) {
  return send(reg::update_action_metadata_call{account, hashed_cid, std::string(name), std::string(description)});
}

result<receipt> registry_client::delete_action(const hash256& account, const hash256& hashed_cid) {
  return send(reg::delete_action_call{account, hashed_cid});
}

// --- reads ------------------------------------------------------------------------------------

result<bytes> registry_client::call_data(std::string_view function, const bytes& data) const {
  call_request c;
  if (sender_)
    c.from = sender_->from();
  c.to = registry_;
  c.data = data;
  auto out = rpc_->call(c);
  if (out)
    return std::move(*out);
  if (const std::optional<bytes> revert = revert_data(out.err()))
    return registry_failure(function, {}, *revert);
  return with_function(function, std::move(out).err());
}

result<address> registry_client::owner() const { return view(reg::owner_call{}); }

result<std::vector<address>> registry_client::api_payers() const { return view(reg::api_payers_call{}); }

result<bool> registry_client::is_api_payer(const address& who) const { return view(reg::is_api_payer_call{who}); }

result<reg::account_view> registry_client::get_account(const hash256& account) const {
  return view(reg::get_account_call{account});
}

result<reg::account_view> registry_client::account_by_admin(const address& admin) const {
  return view(reg::account_by_admin_call{admin});
}

result<reg::usage_key_view> registry_client::get_usage_api_key(const hash256& usage_key_hash) const {
  return view(reg::get_usage_api_key_call{usage_key_hash});
}

result<reg::list_page<reg::usage_key_view>> registry_client::list_usage_api_keys(const hash256& account,
                                                                                 uint64_t offset,
                                                                                 uint64_t limit) const {
  return view(reg::list_usage_api_keys_call{account, offset, limit});
}

result<reg::group_view> registry_client::get_group(const hash256& account, scopes::group_id group) const {
  return view(reg::get_group_call{account, group});
}

result<reg::list_page<reg::group_view>> registry_client::list_groups(const hash256& account, uint64_t offset,
                                                                     uint64_t limit) const {
  return view(reg::list_groups_call{account, offset, limit});
}

result<reg::wallet_view> registry_client::get_wallet(const hash256& account, const address& wallet) const {
  return view(reg::get_wallet_call{account, wallet});
}

result<reg::list_page<reg::wallet_view>> registry_client::list_wallets(const hash256& account, uint64_t offset,
                                                                       uint64_t limit) const {
  return view(reg::list_wallets_call{account, offset, limit});
}

result<reg::list_page<reg::wallet_view>> registry_client::list_wallets_in_group(const hash256& account,
                                                                                scopes::group_id group, uint64_t offset,
                                                                                uint64_t limit) const {
  return view(reg::list_wallets_in_group_call{account, group, offset, limit});
}

result<reg::action_view> registry_client::get_action(const hash256& account, const hash256& hashed_cid) const {
  return view(reg::get_action_call{account, hashed_cid});
}

result<reg::list_page<reg::action_view>> registry_client::list_actions(const hash256& account, uint64_t offset,
                                                                       uint64_t limit) const {
  return view(reg::list_actions_call{account, offset, limit});
}

result<reg::list_page<reg::action_view>> registry_client::list_actions_in_group(const hash256& account,
                                                                                scopes::group_id group, uint64_t offset,
                                                                                uint64_t limit) const {
  return view(reg::list_actions_in_group_call{account, group, offset, limit});
}

}  // namespace enact::chain
