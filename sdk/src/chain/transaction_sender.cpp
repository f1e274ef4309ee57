// SPDX-License-Identifier: Apache-2.0
// The transaction sender (client.hpp): nonces, fees, signing, resubmission and receipts over an
// rpc_client (client.cpp).
#include <boost/json.hpp>

#include <algorithm>
#include <mutex>
#include <thread>

#include "enact/chain/client.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "rpc_failure.hpp"

namespace enact::chain {

using detail::kRevertMarker;
using detail::nonce_taken;
using detail::nonce_too_low;
using detail::transient;
using std::chrono::milliseconds;

// =============================================================================================
// transaction_sender

struct transaction_sender::impl {
  std::shared_ptr<const rpc_client> client;
  Secret key;
  address from{};
  sender_options options;
  std::mutex mutex;
  std::optional<uint64_t> chain_id;
  std::optional<uint64_t> next_nonce;

  /// The chain id (fetched once), fees and gas limit of `req`; the nonce is assigned when sent.
  result<eip1559_tx> prepare(const tx_request& req) {
    const rpc_client& rpc = *client;
    eip1559_tx tx;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!chain_id) {
        ENACT_TRY(const uint64_t id, rpc.chain_id());
        chain_id = id;
      }
      tx.chain_id = *chain_id;
    }
    ENACT_TRY(const u256 priority, rpc.max_priority_fee_per_gas());
    ENACT_TRY(const u256 base_fee, latest_base_fee());
    tx.max_priority_fee_per_gas = priority;
    // Twice the base fee keeps the transaction includable through six full blocks of +12.5%.
    tx.max_fee_per_gas = u256{2} * base_fee + priority;
    tx.to = req.to;
    tx.value = req.value;
    tx.data = req.data;
    if (req.gas_limit) {
      tx.gas_limit = *req.gas_limit;
      return tx;
    }
    call_request estimate;
    estimate.from = from;
    estimate.to = req.to;
    estimate.data = req.data;
    if (req.value)
      estimate.value = req.value;
    auto gas = rpc.estimate_gas(estimate);
    if (!gas) {
      if (const std::optional<bytes> revert = revert_data(gas.err())) {
        const registry::registry_error re = registry::decode_revert(*revert);
        return fail(re.code, "eth_estimateGas: " + re.message + std::string(kRevertMarker) +
                                 codec::hex::encode_prefixed(*revert) + ")");
      }
      return std::move(gas).err();
    }
    const u256 limit = u256{*gas} * u256{100 + options.gas_margin_percent} / u256{100};
    tx.gas_limit = limit.fits_u64() ? static_cast<uint64_t>(limit) : UINT64_MAX;
    return tx;
  }

  result<u256> latest_base_fee() const {
    ENACT_TRY(const std::optional<block> latest, client->block_by_number(block_tag::latest()));
    if (!latest)
      return fail(rpc_errc::bad_response, "eth_getBlockByNumber: the node has no latest block");
    if (!latest->base_fee_per_gas)
      return fail(rpc_errc::bad_response, "eth_getBlockByNumber: the latest block has no baseFeePerGas (no EIP-1559)");
    return *latest->base_fee_per_gas;
  }

  /// Assigns the next nonce to `tx`, signs and sends it (serialised with other sends of this
  /// sender and, with shared_nonces, of every process sharing the lock).
  result<hash256> send_next(eip1559_tx& tx) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!options.shared_nonces)
      return send_locked(tx);
    return options.shared_nonces->exclusive(from, [&] {
      // Another process may have sent since this one last did: the node's count is the truth.
      next_nonce.reset();
      auto sent = send_locked(tx);
      next_nonce.reset();
      return sent;
    });
  }

  /// send_next with the locks held.
  result<hash256> send_locked(eip1559_tx& tx) {
    const rpc_client& rpc = *client;
    for (unsigned attempt = 0;; ++attempt) {
      if (!next_nonce) {
        ENACT_TRY(const uint64_t n, rpc.transaction_count(from, block_tag::pending()));
        next_nonce = n;
      }
      tx.nonce = *next_nonce;
      ENACT_TRY(const bytes raw, sign(tx, key));
      auto sent = rpc.send_raw_transaction(raw);
      if (sent) {
        ++*next_nonce;
        if (*sent != tx_hash(raw))
          return fail(rpc_errc::bad_response, "eth_sendRawTransaction: the node reports hash " +
                                                  codec::hex::encode_prefixed(*sent) + " for transaction " +
                                                  codec::hex::encode_prefixed(tx_hash(raw)));
        return *sent;
      }
      // Whatever happened, the local count may be wrong now (the node may even have taken the
      // transaction before the answer was lost): ask the node next time.
      next_nonce.reset();
      if (!nonce_taken(sent.err()) || attempt >= options.nonce_retries)
        return std::move(sent).err();
    }
  }

  /// Polls for the receipt of any of `hashes` until `deadline`: the receipt, nullopt at the
  /// deadline, or a non-transient error. The first question comes 1 ms after the call, then the
  /// pause doubles up to poll_interval (a local node mines within milliseconds).
  result<std::optional<receipt>> poll(std::span<const hash256> hashes, std::chrono::steady_clock::time_point deadline,
                                      std::optional<error>& last_error) const {
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
      for (const hash256& h : hashes) {
        auto r = client->transaction_receipt(h);
        if (r && r->has_value())
          return std::move(*r);
        // A node that is briefly unreachable while the transaction is pending is asked again.
        if (!r) {
          if (!transient(r.err()))
            return std::move(r).err();
          last_error = std::move(r).err();
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline)
        return std::optional<receipt>{};
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, options.poll_interval);
    }
  }
};

namespace {

/// How often a transaction awaiting its receipt checks whether its nonce was mined by another.
constexpr std::chrono::milliseconds kNonceCheckInterval{1000};

/// ceil(v × (1000 + kReplacementBumpPermille) / 1000): the least fee a replacement may offer.
u256 bumped(const u256& v) { return (v * u256{1000 + kReplacementBumpPermille} + u256{999}) / u256{1000}; }

bool node_message_has(const error& e, std::string_view needle) {
  if (e.code != rpc_errc::node_error)
    return false;
  std::string m = e.message;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find(needle) != std::string::npos;
}

error failed_receipt(const receipt& rc) {
  return fail(rpc_errc::tx_failed, "transaction " + codec::hex::encode_prefixed(rc.transaction_hash) +
                                       ": status 0 in block " + std::to_string(rc.block_number) + " (gas used " +
                                       std::to_string(rc.gas_used) + ")");
}

}  // namespace

transaction_sender::transaction_sender(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
transaction_sender::~transaction_sender() = default;
transaction_sender::transaction_sender(transaction_sender&&) noexcept = default;
transaction_sender& transaction_sender::operator=(transaction_sender&&) noexcept = default;

result<transaction_sender> transaction_sender::create(std::shared_ptr<const rpc_client> client, Secret private_key,
                                                      sender_options options) {
  ENACT_TRY(const crypto::secp256k1::public_key pub, crypto::secp256k1::public_key_of(private_key));
  auto p = std::make_unique<impl>();
  p->client = std::move(client);
  p->key = std::move(private_key);
  p->from = crypto::secp256k1::to_address(pub);
  p->options = options;
  return transaction_sender(std::move(p));
}

const address& transaction_sender::from() const { return impl_->from; }

result<hash256> transaction_sender::submit(const address& to, bytes_view data, const u256& value) {
  tx_request req;
  req.to = to;
  req.data.assign(data.begin(), data.end());
  req.value = value;
  return submit(req);
}

result<hash256> transaction_sender::submit(const tx_request& req) {
  ENACT_TRY(eip1559_tx tx, impl_->prepare(req));
  return impl_->send_next(tx);
}

result<receipt> transaction_sender::wait_for_receipt(const hash256& tx_hash) const {
  const impl& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + m.options.receipt_timeout;
  std::optional<error> last_error;
  ENACT_TRY(std::optional<receipt> r, m.poll(std::span(&tx_hash, 1), deadline, last_error));
  if (!r)
    return fail(rpc_errc::timeout, "receipt of " + codec::hex::encode_prefixed(tx_hash) + " not available after " +
                                       std::to_string(m.options.receipt_timeout.count()) + " ms" +
                                       (last_error ? " (last error: " + last_error->message + ")" : std::string()));
  if (!r->status)
    return failed_receipt(*r);
  return std::move(*r);
}

result<receipt> transaction_sender::send(const address& to, bytes_view data, const u256& value) {
  ENACT_TRY(const hash256 h, submit(to, data, value));
  return wait_for_receipt(h);
}

result<receipt> transaction_sender::send(const tx_request& req) {
  impl& m = *impl_;
  ENACT_TRY(eip1559_tx tx, m.prepare(req));
  ENACT_TRY(const hash256 first, m.send_next(tx));
  if (m.options.replace_after.count() <= 0)
    return wait_for_receipt(first);

  // The same nonce is sent again with higher fees while no receipt arrives; any of the
  // transactions sent may be the one mined, so all of them are watched.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + m.options.receipt_timeout;
  std::vector<hash256> sent = {first};
  std::optional<error> last_error;
  for (unsigned replacements = 0;;) {
    const bool may_replace = replacements < m.options.max_replacements;
    const auto round_end = may_replace ? std::min(deadline, clock::now() + m.options.replace_after) : deadline;
    std::optional<receipt> r;
    bool superseded = false;
    for (;;) {
      const auto check_at = std::min(round_end, clock::now() + kNonceCheckInterval);
      ENACT_TRY(std::optional<receipt> got, m.poll(sent, check_at, last_error));
      if (got) {
        r = std::move(got);
        break;
      }
      // Another transaction may hold this nonce now (a node that restarted without the one sent,
      // while the nonce was given out again): then none of ours can be mined, and waiting for
      // the deadline only delays the answer.
      auto mined = m.client->transaction_count(m.from, block_tag::latest());
      if (mined && *mined > tx.nonce) {
        ENACT_TRY(std::optional<receipt> last, m.poll(sent, clock::now(), last_error));
        if (last)
          r = std::move(last);
        else
          superseded = true;
        break;
      }
      if (clock::now() >= round_end)
        break;
    }
    if (superseded) {
      {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.next_nonce.reset();
      }
      return fail(rpc_errc::timeout, "nonce " + std::to_string(tx.nonce) + " was used by another transaction of " +
                                         codec::hex::encode_prefixed(m.from) + "; this one was not mined");
    }
    if (r) {
      if (!r->status)
        return failed_receipt(*r);
      return std::move(*r);
    }
    if (!may_replace || clock::now() >= deadline) {
      // The nonce may never be mined (a node that dropped the transaction): the next send asks
      // the node's pending count rather than leaving a gap.
      {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.next_nonce.reset();
      }
      std::string hashes;
      for (const hash256& h : sent)
        hashes += (hashes.empty() ? "" : ", ") + codec::hex::encode_prefixed(h);
      return fail(rpc_errc::timeout, "no receipt for nonce " + std::to_string(tx.nonce) + " (transactions " + hashes +
                                         ") after " + std::to_string(m.options.receipt_timeout.count()) + " ms" +
                                         (last_error ? " (last error: " + last_error->message + ")" : std::string()));
    }
    ++replacements;
    tx.max_priority_fee_per_gas = bumped(tx.max_priority_fee_per_gas);
    tx.max_fee_per_gas = bumped(tx.max_fee_per_gas);
    // A base fee that rose meanwhile is followed too, so the replacement stays includable.
    if (auto base = m.latest_base_fee(); base) {
      const u256 current = u256{2} * *base + tx.max_priority_fee_per_gas;
      if (tx.max_fee_per_gas < current)
        tx.max_fee_per_gas = current;
    }
    ENACT_TRY(const bytes raw, sign(tx, m.key));
    auto h = m.client->send_raw_transaction(raw);
    if (h) {
      sent.push_back(*h);
      continue;
    }
    // "nonce too low" / "already known": one of the transactions sent is mined or pooled, its
    // receipt is awaited; "underpriced": the next round bids higher; transport: ask again.
    last_error = std::move(h).err();
    if (!transient(*last_error) && !nonce_too_low(*last_error) && !node_message_has(*last_error, "underpriced") &&
        !node_message_has(*last_error, "already known") && !node_message_has(*last_error, "already imported"))
      return std::move(*last_error);
  }
}

result<receipt> transaction_sender::deploy(bytes_view init_code) {
  tx_request req;
  req.data.assign(init_code.begin(), init_code.end());
  ENACT_TRY(receipt r, send(req));
  if (!r.contract_address)
    return fail(rpc_errc::bad_response, "eth_getTransactionReceipt: the receipt of contract creation " +
                                            codec::hex::encode_prefixed(r.transaction_hash) +
                                            " has no contractAddress");
  return r;
}

}  // namespace enact::chain
