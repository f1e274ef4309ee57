// SPDX-License-Identifier: Apache-2.0
#include "fleet.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "enact/address.hpp"
#include "enact/chain/client.hpp"
#include "enact/chain/registry.hpp"
#include "enact/codec/hex.hpp"

namespace enact::fleet_test {

namespace fs = std::filesystem;
namespace reg = chain::registry;
using itest::finished_run;
using itest::run_to_exit;

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f)
    throw std::runtime_error("cannot write " + path);
}

}  // namespace

fleet::fleet(triggers::test::postgres_server& pg) : database_(pg.create_database()) {
  for (size_t i = 0; i < kSize; ++i)
    data_dirs_[i] = root_.path() + "/instance" + std::to_string(i);

  // The registry, deployed by dev account 0 for the api payer of instance 0's TEE root; dev
  // account 1 is a second api payer, through which the test writes what the API cannot (a usage
  // key's spending cap).
  const std::string key_file = root_.path() + "/deployer.key";
  write_file(key_file, codec::hex::encode_prefixed(test::anvil_process::dev_private_keys()[0]) + "\n");
  const finished_run deployed =
      run_to_exit({"deploy-registry", "--rpc-url", node_.url(), "--key-file", key_file, "--data-dir", data_dirs_[0],
                   "--api-payer", to_checksum_address(test::anvil_process::dev_addresses()[1])});
  if (!deployed.status.clean())
    throw std::runtime_error("deploy-registry failed: " + deployed.stderr_text);
  registry_ = deployed.stdout_text.substr(0, deployed.stdout_text.find('\n'));

  // The api payer pays the gas of the registry writes: the operator funds it.
  chain::rpc_options o;
  o.url = node_.url();
  const chain::rpc_client rpc(o);
  const auto payers = rpc.call(parse_address(registry_).value(), reg::encode(reg::api_payers_call{}));
  if (!payers)
    throw std::runtime_error("apiPayers(): " + payers.err().message);
  const std::vector<address> funded = reg::decode_result<reg::api_payers_call>(*payers).value();
  for (const address& a : funded)
    (void)node_.rpc("anvil_setBalance", {codec::hex::encode_prefixed(a), "0x3635c9adc5dea00000"});

  // One TEE root for the fleet: the same api payer everywhere, and usage keys sealed by one
  // instance unsealed by another.
  // The root key goes with the record of the key derivation it is used under.
  for (size_t i = 1; i < kSize; ++i) {
    fs::create_directories(data_dirs_[i]);
    fs::permissions(data_dirs_[i], fs::perms::owner_all, fs::perm_options::replace);
    for (const char* file : {"tee-root.key", "key-derivation"}) {
      fs::copy_file(data_dirs_[0] + "/" + file, data_dirs_[i] + "/" + file);
      fs::permissions(data_dirs_[i] + "/" + file, fs::perms::owner_read | fs::perms::owner_write,
                      fs::perm_options::replace);
    }
  }

  // A lease of 3 s: a run the killed instance held is taken by another within the test.
  config_path_ = root_.path() + "/fleet.toml";
  write_file(config_path_, "[triggers]\nlease_ms = 3000\n");
}

fleet::~fleet() {
  for (auto& s : servers_)
    if (s)
      (void)s->stop();
}

std::vector<std::string> fleet::flags() const {
  return {"--config", config_path_, "--dev", "--sandbox-workers", "2", "--ledger-backend", "evm", "--chain-rpc-url",
          node_.url(), "--chain-contract-address", registry_, "--chain-id", "31337", "--billing-metering-store",
          database_, "--triggers-store", database_, "--content-store", "postgres", "--billing-run-price-credits",
          std::to_string(kRunPrice), "--limits-key-rate-per-second", "0",
          // One account's runs overlap across the fleet on purpose (docs/protocol.md §6 "Fair share").
          "--limits-account-concurrent-runs", "0", "--triggers-webhook-requests-per-second", "0"};
}

void fleet::start(size_t i) {
  servers_[i] = std::make_unique<server_process>(flags(), data_dirs_[i]);
  ports_[i] = servers_[i]->port();
}

void fleet::kill(size_t i) {
  ports_[i] = 0;
  if (::kill(servers_[i]->pid(), SIGKILL) != 0)
    throw std::runtime_error("kill failed");
  (void)servers_[i]->stop();  // reaps it
}

}  // namespace enact::fleet_test
