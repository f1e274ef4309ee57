// SPDX-License-Identifier: Apache-2.0
// The evm ledger (server/ledger/evm_ledger.hpp) on anvil: the conformance suite unchanged, each
// case on a freshly deployed registry of one anvil shared by this binary (--auto-impersonate, so
// the suite's made-up senders can write); then what belongs to this backend alone: the
// registry's code as the SDK ships it, key_signer nonces under concurrent writers and across a
// restart of the ledger object, replacement of a stuck transaction, a node that stops and comes
// back, cache invalidation by another writer, each registry revert as its ledger_errc, 64-bit
// clamping of direct on-chain writes, and the checks at open.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "anvil_process.hpp"
#include "conformance.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/evm_ledger.hpp"
#include "must.hpp"
#include "support.hpp"
#include "tagged_values.hpp"

namespace enact::ledger::test {
namespace {

namespace reg = chain::registry;
using enact::test::anvil_process;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

template <size_t N>
std::string hx(const std::array<uint8_t, N>& v) {
  return codec::hex::encode_prefixed(v);
}

using enact::test::must_ok;

Secret dev_key(size_t i) { return Secret(anvil_process::dev_private_keys().at(i)); }
const address& dev_address(size_t i) { return anvil_process::dev_addresses().at(i); }

std::shared_ptr<chain::rpc_client> client_of(const anvil_process& node) {
  chain::rpc_options o;
  o.url = node.url();
  o.timeout = milliseconds(5000);
  return std::make_shared<chain::rpc_client>(o);
}

/// One anvil for the whole binary, accepting transactions from any sender.
anvil_process& shared_node() {
  static const std::unique_ptr<anvil_process> node = [] {
    anvil_process::options o;
    o.extra_args = {"--auto-impersonate"};
    return std::make_unique<anvil_process>(o);
  }();
  return *node;
}

struct deployment {
  address registry{};
  uint64_t block = 0;
};

/// Deploys a fresh registry with `payers` from dev account `deployer` (its owner).
deployment deploy(const anvil_process& node, const std::vector<address>& payers, size_t deployer = 0) {
  auto sender = chain::transaction_sender::create(client_of(node), dev_key(deployer));
  REQUIRE(sender.has_value());
  auto r = sender->deploy(reg::deployment_data(payers));
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.err().message));
  REQUIRE(r->contract_address.has_value());
  return {*r->contract_address, r->block_number};
}

evm_options options_for(const anvil_process& node, const deployment& d) {
  evm_options o;
  o.rpc_url = node.url();
  o.registry = d.registry;
  o.chain_id = node.chain_id();
  o.deployment_block = d.block;
  o.event_poll_interval = milliseconds(200);
  return o;
}

std::unique_ptr<evm_ledger> open_ok(evm_options o, std::vector<std::shared_ptr<tx_signer>> s) {
  return must_ok(open_evm(std::move(o), std::move(s)));
}

std::shared_ptr<tx_signer> impersonator(const anvil_process& node) {
  return std::make_shared<impersonating_signer>(client_of(node));
}

std::shared_ptr<key_signer> keys(const anvil_process& node, std::vector<size_t> dev, chain::sender_options so = {}) {
  std::vector<Secret> k;
  for (size_t i : dev)
    k.push_back(dev_key(i));
  auto s = key_signer::create(client_of(node), std::move(k), so);
  REQUIRE(s.has_value());
  return std::shared_ptr<key_signer>(std::move(s).value());
}

/// The conformance backend: a fresh registry on the shared node per case.
class evm_backend final : public backend {
 public:
  explicit evm_backend(const std::vector<address>& payers) : node_(shared_node()), deployed_(deploy(node_, payers)) {}
  std::unique_ptr<permission_ledger> open() override {
    return open_ok(options_for(node_, deployed_), {impersonator(node_)});
  }

 private:
  anvil_process& node_;
  deployment deployed_;
};

std::unique_ptr<backend> make_evm(const std::vector<address>& payers) { return std::make_unique<evm_backend>(payers); }

// --- records for the evm-only cases ------------------------------------------------------------

using enact::test::addr;
using enact::test::h256;

account managed_account(uint8_t n) {
  account a;
  a.hash = h256(0x10, n);
  a.admin = addr(0x10, n);
  a.managed = true;
  a.name = "evm account " + std::to_string(n);
  return a;
}

group named_group(const std::string& name) {
  group g;
  g.name = name;
  return g;
}

uint64_t nonce_of(const anvil_process& node, const address& a) {
  return std::stoull(std::string(node.rpc("eth_getTransactionCount", {hx(a), "latest"}).as_string()), nullptr, 16);
}

u256 quantity(const boost::json::value& v) { return u256::from_hex(v.as_string()).value(); }

/// Sends `data` to `to` as `from` with eth_sendTransaction (the node impersonates `from`) and
/// waits for the receipt: a direct on-chain write, as a ChainSecured wallet makes it.
void send_as(const anvil_process& node, const address& from, const address& to, const bytes& data) {
  (void)node.rpc("anvil_setBalance", {hx(from), "0x3635c9adc5dea00000"});
  const boost::json::object tx = {{"from", hx(from)}, {"to", hx(to)}, {"data", codec::hex::encode_prefixed(data)}};
  const boost::json::value h = node.rpc("eth_sendTransaction", {tx});
  for (int i = 0; i < 2000; ++i) {
    const boost::json::value r = node.rpc("eth_getTransactionReceipt", {h});
    if (!r.is_null()) {
      REQUIRE(r.at("status").as_string() == "0x1");
      return;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  FAIL("no receipt for " << boost::json::serialize(h));
}

}  // namespace

TEST_CASE("ledger conformance: evm on anvil") { run_conformance(make_evm); }

TEST_CASE("evm ledger: the SDK's registry code is what the node runs after deployment") {
  anvil_process& node = shared_node();
  const std::vector<address> payers = {addr(0xA0), addr(0xA1)};
  const deployment d = deploy(node, payers, 0);
  const auto rpc = client_of(node);
  CHECK(must_ok(rpc->code(d.registry)) == reg::runtime_code());
  CHECK(reg::compiler_version().rfind("0.8.", 0) == 0);
  CHECK(reg::deployment_data(payers).size() == reg::creation_code().size() + 4 * 32);
  const bytes owner = must_ok(rpc->call(d.registry, reg::encode(reg::owner_call{})));
  CHECK(must_ok(reg::decode_result<reg::owner_call>(owner)) == dev_address(0));
  auto l = open_ok(options_for(node, d), {impersonator(node)});
  CHECK(l->api_payers() == payers);
  CHECK(l->deployment_block() == d.block);
  // Without the deployment block the ledger finds it.
  evm_options o = options_for(node, d);
  o.deployment_block.reset();
  CHECK(open_ok(o, {impersonator(node)})->deployment_block() == d.block);
}

TEST_CASE("evm ledger: open checks the chain id, the code at the address and the node") {
  anvil_process& node = shared_node();
  const deployment d = deploy(node, {addr(0xA0)});
  // A contract that answers every call with the word 42: code, but no registry.
  auto sender = chain::transaction_sender::create(client_of(node), dev_key(0));
  REQUIRE(sender.has_value());
  const bytes answer42 = codec::hex::decode("600a600c600039600a6000f3602a60005260206000f3").value();
  const address other = must_ok(sender->deploy(answer42)).contract_address.value();
  struct case_ {
    const char* what;
    std::function<void(evm_options&)> spoil;
    ledger_errc want;
    const char* message;
  };
  const case_ cases[] = {
      {"another chain id", [](evm_options& o) { o.chain_id = 1; }, ledger_errc::invalid_argument, "chain_id"},
      {"no code at the address", [](evm_options& o) { o.registry = addr(0x77); }, ledger_errc::invalid_argument,
       "no contract"},
      {"code that is not a registry", [&](evm_options& o) { o.registry = other; }, ledger_errc::invalid_argument,
       "does not answer apiPayers()"},
      {"a node that does not answer", [](evm_options& o) { o.rpc_url = "http://127.0.0.1:1"; }, ledger_errc::storage,
       "unreachable"},
      {"a URL that is not http", [](evm_options& o) { o.rpc_url = "ftp://x"; }, ledger_errc::invalid_argument,
       "rpc_url"},
  };
  for (const case_& c : cases) {
    INFO(std::string(c.what));
    evm_options o = options_for(node, d);
    c.spoil(o);
    const auto r = open_evm(o, {impersonator(node)});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.code() == c.want);
    CHECK(r.err().message.find(c.message) != std::string::npos);
  }
}

TEST_CASE("evm ledger: each registry revert is its ledger_errc") {
  anvil_process& node = shared_node();
  const address payer = addr(0xA0);
  const deployment d = deploy(node, {payer});
  auto l = open_ok(options_for(node, d), {impersonator(node)});
  const write_context w{payer};
  const account a = managed_account(1);
  REQUIRE(l->new_account(w, a));
  account u = managed_account(2);
  u.managed = false;
  u.hash = crypto::keccak256(bytes_view(u.admin));  // a wallet's own account (docs/protocol.md §3)
  REQUIRE(l->new_account(write_context{u.admin}, u));
  usage_key key;
  key.hash = h256(0x40);
  key.account = a.hash;
  key.name = "k";
  REQUIRE(l->set_usage_key(w, key));
  wallet wl;
  wl.pkp_id = addr(0x30);
  wl.name = "w";
  REQUIRE(l->register_wallet(w, a.hash, wl));

  struct case_ {
    ledger_errc want;
    const char* registry_error;
    std::function<std::error_code()> run;
  };
  const case_ cases[] = {
      {ledger_errc::not_admin, "NotAdmin(",
       [&] {
         return l->add_group(write_context{addr(0xEE)}, a.hash, named_group("g")).code();
       }},
      {ledger_errc::relay_not_allowed, "RelayNotAllowed(",
       [&] {
         return l->add_group(w, u.hash, named_group("g")).code();
       }},
      {ledger_errc::already_unmanaged, "AlreadyUnmanaged(",
       [&] {
         return l->convert_to_chain_secured(write_context{u.admin}, u.hash, addr(0x51)).code();
       }},
      {ledger_errc::unknown_account, "UnknownAccount(",
       [&] {
         return l->add_group(w, h256(0xFF), named_group("g")).code();
       }},
      {ledger_errc::unknown_usage_key, "UnknownUsageKey(",
       [&] {
         return l->remove_usage_key(w, a.hash, h256(0x99)).code();
       }},
      {ledger_errc::unknown_group, "UnknownGroup(",
       [&] {
         return l->remove_group(w, a.hash, 42).code();
       }},
      {ledger_errc::unknown_wallet, "UnknownWallet(",
       [&] {
         group g = named_group("g");
         g.pkps = {addr(0x66)};
         return l->add_group(w, a.hash, g).code();
       }},
      {ledger_errc::unknown_action, "UnknownAction(",
       [&] {
         return l->delete_action(w, a.hash, h256(0x12)).code();
       }},
      {ledger_errc::duplicate, "Duplicate(",
       [&] {
         return l->new_account(w, a).code();
       }},
      {ledger_errc::invalid_argument, "InvalidArgument(",
       [&] {
         return l->add_group(w, a.hash, named_group("")).code();
       }},
      // Identity rules (docs/protocol.md §3).
      {ledger_errc::hash_not_canonical, "AccountHashNotCanonical(",
       [&] {
         account v = managed_account(3);
         v.managed = false;
         return l->new_account(write_context{v.admin}, v).code();
       }},
      {ledger_errc::managed_not_allowed, "ManagedNotAllowed(",
       [&] {
         const account v = managed_account(3);
         return l->new_account(write_context{v.admin}, v).code();
       }},
      {ledger_errc::hash_is_usage_key, "HashIsUsageKey(",
       [&] {
         account v = managed_account(3);
         v.hash = key.hash;
         return l->new_account(w, v).code();
       }},
      {ledger_errc::hash_is_account, "HashIsAccount(",
       [&] {
         usage_key k = key;
         k.hash = u.hash;
         return l->set_usage_key(w, k).code();
       }},
      {ledger_errc::usage_key_of_another_account, "UsageKeyOfAnotherAccount(",
       [&] {
         usage_key k = key;
         k.account = u.hash;
         return l->set_usage_key(write_context{u.admin}, k).code();
       }},
      // Conversion consent: the admin converts only to itself.
      {ledger_errc::new_admin_not_sender, "NewAdminNotSender(",
       [&] {
         return l->convert_to_chain_secured(write_context{a.admin}, a.hash, addr(0x51)).code();
       }},
  };
  const uint64_t block = std::stoull(std::string(node.rpc("eth_blockNumber").as_string()), nullptr, 16);
  for (const case_& c : cases) {
    INFO(std::string(c.registry_error));
    CHECK(c.run() == c.want);
  }
  // The identity refusals name the registry error and its arguments.
  account squat = managed_account(3);
  squat.managed = false;
  const auto refused = l->new_account(write_context{squat.admin}, squat);
  CHECK(refused.err().message.find("AccountHashNotCanonical(apiKeyHash=" + hx(squat.hash)) != std::string::npos);
  const auto handed = l->convert_to_chain_secured(write_context{a.admin}, a.hash, addr(0x51));
  CHECK(handed.err().message.find("NewAdminNotSender(accountHash=" + hx(a.hash) + ", newAdmin=" + hx(addr(0x51))) !=
        std::string::npos);
  // A refused write is refused by the estimate: nothing reached a block.
  CHECK(std::stoull(std::string(node.rpc("eth_blockNumber").as_string()), nullptr, 16) == block);
  // The message carries the registry's error and its arguments.
  const auto r = l->remove_group(w, a.hash, 42);
  CHECK(r.err().message.find("UnknownGroup(accountHash=" + hx(a.hash)) != std::string::npos);
  // A read's revert maps the same way.
  CHECK(l->get_group(a.hash, 42).code() == ledger_errc::unknown_group);
}

TEST_CASE("evm ledger: a sender without a signer is refused before the chain") {
  anvil_process& node = shared_node();
  const deployment d = deploy(node, {dev_address(1)});
  auto l = open_ok(options_for(node, d), {keys(node, {1})});
  const account a = managed_account(1);
  REQUIRE(l->new_account(write_context{dev_address(1)}, a));
  const uint64_t nonce = nonce_of(node, dev_address(1));
  const auto r = l->add_group(write_context{a.admin}, a.hash, named_group("g"));
  CHECK(r.code() == ledger_errc::invalid_argument);
  CHECK(r.err().message.find("no signer") != std::string::npos);
  CHECK(nonce_of(node, dev_address(1)) == nonce);
}

TEST_CASE("evm ledger: key_signer nonces under 8 concurrent writers on two keys") {
  anvil_process& node = shared_node();
  const std::vector<address> payers = {dev_address(1), dev_address(2)};
  const deployment d = deploy(node, payers);
  auto l = open_ok(options_for(node, d), {keys(node, {1, 2})});
  const account a = managed_account(1);
  REQUIRE(l->new_account(write_context{payers[0]}, a));
  const uint64_t start = l->events_after(0, 100).value().size();
  const uint64_t nonce0 = nonce_of(node, payers[0]);
  const uint64_t nonce1 = nonce_of(node, payers[1]);

  constexpr int kThreads = 8;
  constexpr int kWrites = 12;
  std::atomic<int> failures{0};
  std::mutex mu;
  std::string first_failure;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        const auto r = l->add_group(write_context{payers[t % 2]}, a.hash,
                                    named_group("g" + std::to_string(t) + "-" + std::to_string(i)));
        if (!r && failures.fetch_add(1) == 0) {
          std::lock_guard lock(mu);
          first_failure = r.err().message;
        }
      }
    });
  for (std::thread& t : threads)
    t.join();
  INFO("first failure: ", first_failure);
  CHECK(failures.load() == 0);
  const std::vector<group> gs = l->all_groups(a.hash).value();
  CHECK(gs.size() == kThreads * kWrites);
  std::set<group_id> ids;
  for (const group& g : gs)
    ids.insert(g.id);
  CHECK(ids.size() == kThreads * kWrites);
  // Every write one transaction, each key's nonces used without a gap or a repeat.
  CHECK(nonce_of(node, payers[0]) == nonce0 + kThreads * kWrites / 2);
  CHECK(nonce_of(node, payers[1]) == nonce1 + kThreads * kWrites / 2);
  const std::vector<event> events = l->events_after(start, 1000).value();
  REQUIRE(events.size() == kThreads * kWrites);
  std::map<std::string, int> by_sender;
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(events[i].sequence == start + 1 + i);
    ++by_sender[hx(events[i].sender)];
  }
  CHECK(by_sender[hx(payers[0])] == kThreads * kWrites / 2);
  CHECK(by_sender[hx(payers[1])] == kThreads * kWrites / 2);
}

TEST_CASE("evm ledger: a reopened ledger continues from the node's nonce") {
  anvil_process& node = shared_node();
  const deployment d = deploy(node, {dev_address(3)});
  const account a = managed_account(1);
  {
    auto l = open_ok(options_for(node, d), {keys(node, {3})});
    REQUIRE(l->new_account(write_context{dev_address(3)}, a));
    REQUIRE(l->add_group(write_context{dev_address(3)}, a.hash, named_group("one")));
  }
  // Someone else spends the key's next nonce meanwhile (another instance, a wallet tool).
  auto other = chain::transaction_sender::create(client_of(node), dev_key(3));
  REQUIRE(other.has_value());
  REQUIRE(other->send(dev_address(4), bytes{}, u256{1}).has_value());

  auto l = open_ok(options_for(node, d), {keys(node, {3})});
  CHECK(l->add_group(write_context{dev_address(3)}, a.hash, named_group("two")).value().id == 2);
  // The events of the first object's writes: senders read back from the chain.
  const std::vector<event> events = l->events_after(0, 10).value();
  REQUIRE(events.size() == 3);
  CHECK(events[0].name == "AccountCreated");
  for (const event& e : events) {
    CHECK(e.sender == dev_address(3));
    CHECK(e.created_at > 0);
  }
}

TEST_CASE("evm ledger: a transaction stuck in the pool is replaced with a higher fee") {
  anvil_process node;
  const deployment d = deploy(node, {dev_address(1)});
  chain::sender_options so;
  so.replace_after = milliseconds(300);
  so.max_replacements = 2;
  so.receipt_timeout = milliseconds(60000);
  auto l = open_ok(options_for(node, d), {keys(node, {1}, so)});
  const account a = managed_account(1);
  REQUIRE(l->new_account(write_context{dev_address(1)}, a));
  const uint64_t nonce = nonce_of(node, dev_address(1));

  (void)node.rpc("evm_setAutomine", {false});
  result<group> added = fail(ledger_errc::storage, "not run");
  std::thread writer([&] { added = l->add_group(write_context{dev_address(1)}, a.hash, named_group("late")); });
  // The pool's transaction for this nonce: first the original, then a replacement.
  const auto pooled = [&]() -> std::optional<boost::json::object> {
    const boost::json::value pool = node.rpc("txpool_content");
    const auto* by_sender = pool.at("pending").as_object().if_contains(hx(dev_address(1)));
    if (by_sender == nullptr) {
      for (const auto& kv : pool.at("pending").as_object())
        if (codec::hex::decode_prefixed(kv.key()).value() == bytes(dev_address(1).begin(), dev_address(1).end()))
          by_sender = &kv.value();
    }
    if (by_sender == nullptr)
      return std::nullopt;
    const auto* tx = by_sender->as_object().if_contains(std::to_string(nonce));
    if (tx == nullptr)
      return std::nullopt;
    return tx->as_object();
  };
  std::optional<boost::json::object> first;
  std::optional<boost::json::object> replacement;
  const auto deadline = steady::now() + std::chrono::seconds(30);
  while (steady::now() < deadline && !replacement) {
    const auto tx = pooled();
    if (tx && !first)
      first = tx;
    else if (tx && first && tx->at("hash") != first->at("hash"))
      replacement = tx;
    std::this_thread::sleep_for(milliseconds(20));
  }
  (void)node.rpc("evm_mine");
  writer.join();
  (void)node.rpc("evm_setAutomine", {true});
  REQUIRE(first.has_value());
  REQUIRE(replacement.has_value());
  REQUIRE_MESSAGE(added.has_value(), (added ? "" : added.err().message));
  CHECK(added->id == 1);
  CHECK(nonce_of(node, dev_address(1)) == nonce + 1);
  // What was mined is a replacement: at least 12.5 % more on both fees than the original.
  const boost::json::value block = node.rpc("eth_getBlockByNumber", {"latest", true});
  const auto& txs = block.at("transactions").as_array();
  REQUIRE(txs.size() == 1);
  const boost::json::value& mined = txs[0];
  CHECK(mined.at("hash") != first->at("hash"));
  CHECK(quantity(mined.at("nonce")) == u256{nonce});
  CHECK(quantity(mined.at("maxPriorityFeePerGas")) * u256{8} >= quantity(first->at("maxPriorityFeePerGas")) * u256{9});
  CHECK(quantity(mined.at("maxFeePerGas")) * u256{8} >= quantity(first->at("maxFeePerGas")) * u256{9});
  CHECK(node.rpc("eth_getTransactionReceipt", {first->at("hash")}).is_null());
  CHECK(l->all_groups(a.hash).value().size() == 1);
}

TEST_CASE("evm ledger: a stopped node answers storage; the same object recovers on restart") {
  anvil_process::options no;
  no.keep_state = true;
  anvil_process node(no);
  const deployment d = deploy(node, {dev_address(1)});
  evm_options o = options_for(node, d);
  o.rpc_timeout = milliseconds(2000);
  o.event_poll_interval = milliseconds(100);
  auto l = open_ok(o, {keys(node, {1})});
  const write_context w{dev_address(1)};
  const account a = managed_account(1);
  REQUIRE(l->new_account(w, a));
  REQUIRE(l->add_group(w, a.hash, named_group("before")));
  REQUIRE(l->all_groups(a.hash).value().size() == 1);  // cached now

  node.stop();
  const auto t0 = steady::now();
  const auto written = l->add_group(w, a.hash, named_group("while down"));
  const auto write_took = steady::now() - t0;
  CHECK(written.code() == ledger_errc::storage);
  CHECK(written.err().message.find("unreachable") != std::string::npos);
  // Refused by the first request (the estimate), not after waiting for a receipt.
  CHECK(write_took < milliseconds(60000));
  CHECK(l->get_account(h256(0x10, 9)).code() == ledger_errc::storage);
  CHECK(l->events_after(0, 10).code() == ledger_errc::storage);
  // Once the poller misses the node, cached answers are not served either.
  std::error_code cached_read;
  const auto deadline = steady::now() + std::chrono::seconds(20);
  while (steady::now() < deadline && !cached_read) {
    cached_read = l->all_groups(a.hash).code();
    std::this_thread::sleep_for(milliseconds(50));
  }
  CHECK(cached_read == ledger_errc::storage);

  node.start();
  const auto after = l->add_group(w, a.hash, named_group("after"));
  REQUIRE_MESSAGE(after.has_value(), (after ? "" : after.err().message));
  CHECK(after->id == 2);
  CHECK(l->all_groups(a.hash).value().size() == 2);
  const std::vector<event> events = l->events_after(0, 10).value();
  REQUIRE(events.size() == 3);
  CHECK(events[2].name == "GroupAdded");
  CHECK(events[2].sequence == 3);
}

TEST_CASE("evm ledger: a write through another ledger object reaches this one's cache") {
  anvil_process& node = shared_node();
  const address payer = addr(0xA0);
  const deployment d = deploy(node, {payer});
  evm_options o = options_for(node, d);
  o.event_poll_interval = milliseconds(100);
  auto reader = open_ok(o, {impersonator(node)});
  auto writer = open_ok(o, {impersonator(node)});
  const account a = managed_account(1);
  REQUIRE(writer->new_account(write_context{payer}, a));
  REQUIRE(writer->add_group(write_context{payer}, a.hash, named_group("one")));

  // events_after brings the reader up to the head: every log so far has invalidated.
  REQUIRE(reader->events_after(0, 10).has_value());
  REQUIRE(reader->all_groups(a.hash).value().size() == 1);
  const cache_stats before = reader->cache_statistics();
  REQUIRE(reader->all_groups(a.hash).value().size() == 1);
  CHECK(reader->cache_statistics().hits == before.hits + 1);  // served from the cache

  REQUIRE(writer->add_group(write_context{payer}, a.hash, named_group("two")));
  size_t seen = 1;
  const auto deadline = steady::now() + std::chrono::seconds(20);
  while (steady::now() < deadline && seen != 2) {
    seen = reader->all_groups(a.hash).value().size();
    std::this_thread::sleep_for(milliseconds(20));
  }
  CHECK(seen == 2);
  CHECK(reader->cache_statistics().invalidations > before.invalidations);
  // A log of another account leaves this account's entries.
  REQUIRE(reader->all_groups(a.hash).value().size() == 2);
  const account b = managed_account(2);
  REQUIRE(writer->new_account(write_context{payer}, b));
  REQUIRE(reader->events_after(0, 10).has_value());
  const uint64_t hits = reader->cache_statistics().hits;
  REQUIRE(reader->all_groups(a.hash).value().size() == 2);
  CHECK(reader->cache_statistics().hits == hits + 1);

  // With the cache off every read asks the node.
  o.cache = false;
  auto uncached = open_ok(o, {impersonator(node)});
  REQUIRE(uncached->all_groups(a.hash).value().size() == 2);
  REQUIRE(uncached->all_groups(a.hash).value().size() == 2);
  CHECK(uncached->cache_statistics().hits == 0);
  CHECK(uncached->cache_statistics().entries == 0);
}

TEST_CASE("evm ledger: direct on-chain writes above 64 bits are clamped; their events are read") {
  anvil_process& node = shared_node();
  const address payer = addr(0xA0);
  const deployment d = deploy(node, {payer});
  auto l = open_ok(options_for(node, d), {impersonator(node)});
  account a = managed_account(1);
  a.managed = false;  // a ChainSecured account: its admin writes on-chain itself
  a.hash = crypto::keccak256(bytes_view(a.admin));
  REQUIRE(l->new_account(write_context{a.admin}, a));
  reg::set_usage_api_key_call k;
  k.account_hash = a.hash;
  k.usage_key_hash = h256(0x40);
  k.expiration = u256{1} << 70;
  k.balance = u256::max();
  k.name = "direct";
  k.permissions.execute_in_groups = {0};
  send_as(node, a.admin, d.registry, reg::encode(k));

  const usage_key got = l->find_usage_key(k.usage_key_hash).value();
  CHECK(got.expiration == UINT64_MAX);
  CHECK(got.balance == UINT64_MAX);
  CHECK(got.wallet == address{});
  CHECK(got.permissions.execute_in_groups == std::vector<group_id>{0});
  const std::vector<event> events = l->events_after(0, 10).value();
  REQUIRE(events.size() == 2);
  CHECK(events[1].name == "UsageApiKeySet");
  CHECK(events[1].sender == a.admin);
  // The event keeps the full value: a counter above 64 bits as a decimal string.
  CHECK(events[1].data.at("expiration").as_string() == (u256{1} << 70).to_string());
}

}  // namespace enact::ledger::test
