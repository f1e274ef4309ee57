// SPDX-License-Identifier: Apache-2.0
// The evm permission ledger; what it does and why is in evm_ledger.hpp. This file holds the
// signers and opening the ledger; the state (views, writes, event index, poller) is in
// evm_state.hpp and the permission_ledger methods, in the interface's order, in evm_methods.cpp.
#include "ledger/evm_ledger.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "ledger/evm_state.hpp"
#include "ledger/evm_support.hpp"

namespace enact::ledger {

using namespace evm;  // NOLINT(google-build-using-namespace): the ledger's helpers

// =============================================================================================
// Signers

result<std::unique_ptr<key_signer>> key_signer::create(std::shared_ptr<const chain::rpc_client> client,
                                                       std::vector<Secret> keys, chain::sender_options options) {
  if (keys.empty())
    return fail(ledger_errc::invalid_argument, "key_signer: no keys");
  std::unique_ptr<key_signer> s(new key_signer());
  for (Secret& k : keys) {
    ENACT_TRY(chain::transaction_sender sender, chain::transaction_sender::create(client, std::move(k), options));
    const address from = sender.from();
    if (s->senders_.count(from) != 0)
      continue;
    s->order_.push_back(from);
    s->senders_.emplace(from, std::make_unique<chain::transaction_sender>(std::move(sender)));
  }
  return s;
}

bool key_signer::sends_as(const address& from) const { return senders_.count(from) != 0; }

std::vector<address> key_signer::addresses() const { return order_; }

result<chain::receipt> key_signer::send(const address& from, const address& to, bytes_view data, uint64_t gas_limit) {
  const auto it = senders_.find(from);
  if (it == senders_.end())
    return fail(ledger_errc::invalid_argument, "key_signer: no key for " + hx(from));
  chain::tx_request req;
  req.to = to;
  req.data.assign(data.begin(), data.end());
  req.gas_limit = gas_limit;
  return it->second->send(req);
}

impersonating_signer::impersonating_signer(std::shared_ptr<const chain::rpc_client> client)
    : impersonating_signer(std::move(client), options{}) {}

impersonating_signer::impersonating_signer(std::shared_ptr<const chain::rpc_client> client, options o)
    : client_(std::move(client)), options_(o) {}

result<chain::receipt> impersonating_signer::send(const address& from, const address& to, bytes_view data,
                                                  uint64_t gas_limit) {
  std::mutex* sender_mu = nullptr;
  bool fund = false;
  {
    std::lock_guard lock(mu_);
    auto& m = per_sender_[from];
    if (!m)
      m = std::make_unique<std::mutex>();
    sender_mu = m.get();
    fund = funded_.insert(from).second;
  }
  hash256 tx{};
  {
    // The node picks the nonce from its pool: two sends from one address at once would both
    // take the same one.
    std::lock_guard lock(*sender_mu);
    if (fund) {
      // 1000 ether: plenty for the tests' gas.
      const u256 wei = u256{1'000'000'000'000'000'000ULL} * u256{1000};
      auto funded = client_->call_method("anvil_setBalance", {chain::rpc::data(from), wei.to_hex()});
      if (!funded) {
        std::lock_guard relock(mu_);
        funded_.erase(from);
        return std::move(funded).err();
      }
    }
    boost::json::object t{{"from", chain::rpc::data(from)},
                          {"to", chain::rpc::data(to)},
                          {"data", chain::rpc::data(data)},
                          {"gas", chain::rpc::quantity(u256{gas_limit})}};
    ENACT_TRY(const boost::json::value h, client_->call_method("eth_sendTransaction", {t}));
    ENACT_TRY(tx, chain::rpc::parse_data_fixed<32>(h, "eth_sendTransaction.result"));
  }
  const auto deadline = steady::now() + options_.receipt_timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto r = client_->transaction_receipt(tx);
    if (r && r->has_value()) {
      if (!(*r)->status)
        return fail(rpc_errc::tx_failed,
                    "transaction " + hx(tx) + ": status 0 in block " + std::to_string((*r)->block_number));
      return std::move(**r);
    }
    if (!r && !transport_failure(r.err()))
      return std::move(r).err();
    if (steady::now() >= deadline)
      return fail(rpc_errc::timeout, "receipt of " + hx(tx) + " not available after " +
                                         std::to_string(options_.receipt_timeout.count()) + " ms");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, options_.poll_interval);
  }
}

// =============================================================================================
// open

result<std::unique_ptr<evm_ledger>> open_evm(evm_options options, std::vector<std::shared_ptr<tx_signer>> signers) {
  auto s = std::make_unique<evm_ledger::state>(std::move(options));
  evm_ledger::state& st = *s;
  st.signers = std::move(signers);
  chain::rpc_options ro;
  ro.url = st.opt.rpc_url;
  ro.timeout = st.opt.rpc_timeout;
  auto client = chain::rpc_client::create(ro);
  if (!client)
    return fail(ledger_errc::invalid_argument, "rpc_url: " + client.err().message);
  st.rpc = std::make_shared<chain::rpc_client>(std::move(*client));

  auto id = st.rpc->chain_id();
  if (!id)
    return st.node_failure(id.err());
  if (*id != st.opt.chain_id)
    return fail(ledger_errc::invalid_argument, "chain_id: the node at " + st.node + " is on chain " +
                                                   std::to_string(*id) + ", the ledger is configured for chain " +
                                                   std::to_string(st.opt.chain_id));
  auto head = st.rpc->block_number();
  if (!head)
    return st.node_failure(head.err());
  auto code = st.rpc->code(st.opt.registry);
  if (!code)
    return st.node_failure(code.err());
  if (code->empty())
    return fail(ledger_errc::invalid_argument, "registry " + hx(st.opt.registry) +
                                                   ": no contract at this address on chain " + std::to_string(*id) +
                                                   " (deploy one with `enact-server deploy-registry`)");
  const auto not_registry = [&](const std::string& why) {
    return fail(ledger_errc::invalid_argument,
                "registry " + hx(st.opt.registry) +
                    ": the contract there does not answer apiPayers() as the permission registry "
                    "does (" +
                    why + ")");
  };
  auto answer = st.rpc->call(st.opt.registry, reg::encode(reg::api_payers_call{}));
  if (!answer) {
    if (chain::registry_revert(answer.err()))
      return not_registry(answer.err().message);
    return st.node_failure(answer.err());
  }
  auto payers = reg::decode_result<reg::api_payers_call>(*answer);
  if (!payers)
    return not_registry(payers.err().message);
  st.payers = std::move(*payers);

  if (st.opt.deployment_block) {
    st.deployment_block = *st.opt.deployment_block;
  } else {
    // The first block with code at the address; a node that keeps no past state answers an
    // error, and numbering starts at block 0 (slower to index, same numbers).
    uint64_t lo = 0;
    uint64_t hi = *head;
    bool found = true;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      auto c = st.rpc->code(st.opt.registry, chain::block_tag::number(mid));
      if (!c) {
        found = false;
        break;
      }
      if (c->empty())
        lo = mid + 1;
      else
        hi = mid;
    }
    st.deployment_block = found ? lo : 0;
  }
  st.next_index_block = st.deployment_block;
  // The cache starts empty: logs before now need not invalidate anything.
  st.next_invalidate_block = *head + 1;

  std::unique_ptr<evm_ledger> l(new evm_ledger(std::move(s)));
  l->state_->poller = std::thread([st = l->state_.get()] { st->run_poller(); });
  return l;
}

evm_ledger::evm_ledger(std::unique_ptr<state> s) : state_(std::move(s)) {}

evm_ledger::~evm_ledger() {
  {
    std::lock_guard lock(state_->poll_mu);
    state_->stopping = true;
  }
  state_->poll_cv.notify_all();
  if (state_->poller.joinable())
    state_->poller.join();
}

const address& evm_ledger::registry() const { return state_->opt.registry; }

uint64_t evm_ledger::deployment_block() const { return state_->deployment_block; }

cache_stats evm_ledger::cache_statistics() const { return state_->cache.stats(); }

std::vector<address> evm_ledger::api_payers() const {
  std::lock_guard lock(state_->payers_mu);
  return state_->payers;
}

}  // namespace enact::ledger
