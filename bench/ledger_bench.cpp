// SPDX-License-Identifier: Apache-2.0
// Permission-ledger read latency (docs/architecture.md §4 "Permission ledger"): the three reads on the
// request path of every authenticated call and run — get_account, find_usage_key (the credential
// lookup) and all_groups (the execution rule) — on the evm ledger against anvil with its cache on
// and off, judged against the embedded (SQLite) ledger holding the same state, in one run.
// Both ledgers hold one account with a usage key and 10 groups of 2 PKPs and 2 CID hashes each.
// The evm figures with the cache off are eth_call round trips to a local node over loopback
// HTTP; a remote node adds its network latency to each of them and nothing to the cached reads.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "anvil_process.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "ledger/embedded_ledger.hpp"
#include "ledger/evm_ledger.hpp"
#include "tagged_values.hpp"

namespace {

using namespace enact;
using enact::test::anvil_process;

constexpr int kGroups = 10;

using enact::test::addr;
using enact::test::h256;

template <class T>
T ok(result<T> r, const char* what) {
  if (!r)
    throw std::runtime_error(std::string(what) + ": " + r.err().message);
  return std::move(r).value();
}
void ok(const result<void>& r, const char* what) {
  if (!r)
    throw std::runtime_error(std::string(what) + ": " + r.err().message);
}

const ledger::account_hash kAccount = h256(0x10, 1);
const hash256 kKey = h256(0x40, 1);

/// The state every ledger of the benchmark holds, written through `l` as `payer`.
void populate(ledger::permission_ledger& l, const address& payer) {
  const ledger::write_context w{payer};
  ledger::account a;
  a.hash = kAccount;
  a.admin = addr(0x10, 1);
  a.name = "bench";
  ok(l.new_account(w, a), "new_account");
  for (uint8_t i = 0; i < 2 * kGroups; ++i) {
    ledger::wallet wl;
    wl.pkp_id = addr(0x30, i);
    wl.derivation_path = h256(0x30, i);
    wl.name = "w" + std::to_string(i);
    ok(l.register_wallet(w, kAccount, wl), "register_wallet");
  }
  for (uint8_t i = 0; i < kGroups; ++i) {
    ledger::group g;
    g.name = "g" + std::to_string(i);
    g.pkps = {addr(0x30, static_cast<uint8_t>(2 * i)), addr(0x30, static_cast<uint8_t>(2 * i + 1))};
    g.cid_hashes = {h256(0x50, static_cast<uint8_t>(2 * i)), h256(0x50, static_cast<uint8_t>(2 * i + 1))};
    (void)ok(l.add_group(w, kAccount, g), "add_group");
  }
  ledger::usage_key k;
  k.hash = kKey;
  k.account = kAccount;
  k.name = "key";
  k.permissions.execute_in_groups = {0};
  ok(l.set_usage_key(w, k), "set_usage_key");
}

/// The node, the registry and the three ledgers, made on first use and kept for the run.
struct environment {
  std::filesystem::path dir;
  std::unique_ptr<anvil_process> node;
  std::unique_ptr<ledger::embedded_ledger> embedded;
  std::unique_ptr<ledger::evm_ledger> evm_cached;
  std::unique_ptr<ledger::evm_ledger> evm_uncached;

  environment() {
    std::random_device rd;
    dir = std::filesystem::temp_directory_path() / ("enact-ledger-bench-" + std::to_string(rd()));
    std::filesystem::create_directories(dir);
    const address payer = anvil_process::dev_addresses()[1];
    embedded = ok(ledger::embedded_ledger::open((dir / "ledger.sqlite").string(), {payer}), "embedded_ledger::open");
    populate(*embedded, payer);

    node = std::make_unique<anvil_process>();
    chain::rpc_options ro;
    ro.url = node->url();
    auto rpc = std::make_shared<chain::rpc_client>(ro);
    auto deployer =
        ok(chain::transaction_sender::create(rpc, Secret(anvil_process::dev_private_keys()[0])), "transaction_sender");
    const chain::receipt deployed =
        ok(deployer.deploy(chain::registry::deployment_data(std::vector<address>{payer})), "deploy");
    std::vector<Secret> keys;
    keys.emplace_back(anvil_process::dev_private_keys()[1]);
    std::shared_ptr<ledger::tx_signer> signer(ok(ledger::key_signer::create(rpc, std::move(keys)), "key_signer"));
    ledger::evm_options o;
    o.rpc_url = node->url();
    o.registry = *deployed.contract_address;
    o.chain_id = node->chain_id();
    o.deployment_block = deployed.block_number;
    evm_cached = ok(ledger::open_evm(o, {signer}), "open_evm");
    o.cache = false;
    evm_uncached = ok(ledger::open_evm(o, {signer}), "open_evm");
    populate(*evm_cached, payer);
  }
  ~environment() {
    evm_cached.reset();
    evm_uncached.reset();
    embedded.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

environment& env() {
  static environment e;
  return e;
}

enum class backend { embedded, evm_cached, evm_uncached };

const ledger::permission_ledger& ledger_of(backend b) {
  switch (b) {
    case backend::embedded:
      return *env().embedded;
    case backend::evm_cached:
      return *env().evm_cached;
    case backend::evm_uncached:
      return *env().evm_uncached;
  }
  throw std::logic_error("backend");
}

template <class F>
void run(benchmark::State& state, backend b, F read) {
  const ledger::permission_ledger& l = ledger_of(b);
  ok(read(l), "warm-up read");
  for (auto _ : state) {
    auto r = read(l);
    if (!r) {
      state.SkipWithError(r.err().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
}

void get_account(benchmark::State& state, backend b) {
  run(state, b, [](const ledger::permission_ledger& l) { return l.get_account(kAccount); });
}
void find_usage_key(benchmark::State& state, backend b) {
  run(state, b, [](const ledger::permission_ledger& l) { return l.find_usage_key(kKey); });
}
void all_groups(benchmark::State& state, backend b) {
  run(state, b, [](const ledger::permission_ledger& l) { return l.all_groups(kAccount); });
}

BENCHMARK_CAPTURE(get_account, embedded, backend::embedded);
BENCHMARK_CAPTURE(get_account, evm_cache_on, backend::evm_cached);
BENCHMARK_CAPTURE(get_account, evm_cache_off, backend::evm_uncached);
BENCHMARK_CAPTURE(find_usage_key, embedded, backend::embedded);
BENCHMARK_CAPTURE(find_usage_key, evm_cache_on, backend::evm_cached);
BENCHMARK_CAPTURE(find_usage_key, evm_cache_off, backend::evm_uncached);
BENCHMARK_CAPTURE(all_groups, embedded, backend::embedded);
BENCHMARK_CAPTURE(all_groups, evm_cache_on, backend::evm_cached);
BENCHMARK_CAPTURE(all_groups, evm_cache_off, backend::evm_uncached);

}  // namespace

BENCHMARK_MAIN();
