// SPDX-License-Identifier: Apache-2.0
// `enact chain` reads of the permission registry (docs/protocol.md §3): one account, its listings.
#include <boost/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chain_commands.hpp"
#include "cli.hpp"
#include "output.hpp"
#include "enact/address.hpp"
#include "enact/chain/registry.hpp"
#include "enact/chain/registry_client.hpp"

namespace enact::cli::chain_cmd {

namespace json = boost::json;
namespace reg = chain::registry;

// --- reads -------------------------------------------------------------------------------------

int account(const std::vector<std::string>& argv) {
  args a = parse_args(argv, {"account", "admin"});
  a.at_most(0);
  session s = connect(a, false);
  const hash256 h = account_of(a, s, true);
  emit(reg::result_to_json<reg::get_account_call>(take(s.registry->get_account(h))));
  return 0;
}

struct window {
  uint64_t offset = 0;
  uint64_t limit = 100;
};

window window_of(const args& a) {
  window w;
  if (auto v = a.get("offset"))
    w.offset = parse_u64(*v, "--offset");
  if (auto v = a.get("limit"))
    w.limit = parse_u64(*v, "--limit");
  return w;
}

template <class F>
int list(const std::vector<std::string>& argv, bool by_group, F&& read) {
  std::set<std::string> options = {"account", "admin", "offset", "limit"};
  if (by_group)
    options.insert("group");
  args a = parse_args(argv, options);
  a.at_most(0);
  const window w = window_of(a);
  std::optional<uint64_t> group;
  if (auto g = a.get("group"))
    group = parse_u64(*g, "--group");
  session s = connect(a, false);
  const hash256 h = account_of(a, s, true);
  emit(read(*s.registry, h, group, w));
  return 0;
}

int list_groups(const std::vector<std::string>& argv) {
  return list(argv, false, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t>, const window& w) {
    return reg::result_to_json<reg::list_groups_call>(take(rc.list_groups(h, w.offset, w.limit)));
  });
}

int list_keys(const std::vector<std::string>& argv) {
  return list(argv, false, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t>, const window& w) {
    return reg::result_to_json<reg::list_usage_api_keys_call>(take(rc.list_usage_api_keys(h, w.offset, w.limit)));
  });
}

/// The wallets the account's usage keys record (setUsageApiKey's wallet), all pages of them.
std::set<address> usage_key_wallets(chain::registry_client& rc, const hash256& account) {
  std::set<address> out;
  constexpr uint64_t kPage = 100;
  for (uint64_t offset = 0;; offset += kPage) {
    const auto page = take(rc.list_usage_api_keys(account, offset, kPage));
    for (const auto& k : page.items)
      if (k.wallet != address{})
        out.insert(k.wallet);
    if (page.items.size() < kPage || u256{offset + page.items.size()} >= page.total)
      return out;
  }
}

int list_wallets(const std::vector<std::string>& argv) {
  return list(argv, true, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t> g, const window& w) {
    const auto page =
        take(g ? rc.list_wallets_in_group(h, *g, w.offset, w.limit) : rc.list_wallets(h, w.offset, w.limit));
    json::value out = reg::result_to_json<reg::list_wallets_call>(page);
    // A usage key's wallet is registered like a PKP but never signs in a run (the service refuses
    // it, docs/protocol.md §1 "usage key by signature"): labelled from the wallets the account's
    // usage keys record, which is what `chain set-usage-key` writes for a minted key.
    const std::set<address> usage = usage_key_wallets(rc, h);
    json::array& items = out.as_object().at("items").as_array();
    for (size_t i = 0; i < items.size() && i < page.items.size(); ++i)
      items[i].as_object()["usageKeyWallet"] = usage.contains(page.items[i].wallet);
    return out;
  });
}

int list_actions(const std::vector<std::string>& argv) {
  return list(argv, true, [](chain::registry_client& rc, const hash256& h, std::optional<uint64_t> g, const window& w) {
    return reg::result_to_json<reg::list_actions_call>(
        take(g ? rc.list_actions_in_group(h, *g, w.offset, w.limit) : rc.list_actions(h, w.offset, w.limit)));
  });
}

}  // namespace enact::cli::chain_cmd
