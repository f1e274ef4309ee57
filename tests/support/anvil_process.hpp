// SPDX-License-Identifier: Apache-2.0
// `enact::test::anvil_process`: the pinned anvil binary (Foundry's local EVM node, installed by
// `npm ci --prefix tests/anvil`) run as a child process for the chain tests (docs/architecture.md §4: the
// `evm` ledger's conformance run, the chain watcher, the SDK's chain module).
//
// Each instance is a fresh in-memory chain on its own loopback port, chosen by anvil itself
// (`--port 0`, read back from its "Listening on" line), so tests may start several at once. The
// constructor returns once the node answers `eth_chainId` with the requested chain id; the
// destructor stops it (SIGTERM, SIGKILL after a grace period) and reaps it. stop() and start()
// restart the node on the same port; with `keep_state` the chain (accounts, code, storage, blocks
// and receipts) survives the restart through anvil's `--state` file, which anvil writes when it
// exits on SIGTERM, so a node killed by SIGKILL after the grace period restarts from the last
// state written. Without `keep_state` every start is a fresh chain.
//
// The dev accounts are anvil's defaults (the mnemonic "test test ... junk", m/44'/60'/0'/0/i),
// 10000 ETH each: public test keys, never to hold anything of value.
//
// Errors (binary missing, node exits or does not answer within 30 s) throw std::runtime_error with
// the node's output. A node started from a thread is killed if that thread ends (PR_SET_PDEATHSIG),
// so a crashed test never leaves a node behind: keep fixtures on the thread that owns the test.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "enact/bytes.hpp"

namespace enact::test {

class anvil_process {
 public:
  static constexpr uint64_t kDefaultChainId = 31337;
  static constexpr size_t kDevAccounts = 10;
  using private_key = std::array<uint8_t, 32>;

  struct options {
    uint64_t chain_id = kDefaultChainId;
    /// The anvil executable; empty: ENACT_ANVIL_BIN (tests/support/CMakeLists.txt).
    std::string binary;
    /// Keep the chain across stop()/start() (anvil --state in this fixture's temp directory).
    bool keep_state = false;
    /// More command-line arguments (e.g. "--block-time", "1"; "--hardfork", "cancun").
    std::vector<std::string> extra_args;
  };

  /// Starts a node with `o`; throws std::runtime_error when it does not come up.
  explicit anvil_process(options o);
  /// Starts a node with the default options and `chain_id`.
  explicit anvil_process(uint64_t chain_id = kDefaultChainId);
  ~anvil_process();
  anvil_process(const anvil_process&) = delete;
  anvil_process& operator=(const anvil_process&) = delete;

  /// Starts the node again after stop(), on the same port (throws when it is taken meanwhile).
  /// No-op while running.
  void start();
  /// SIGTERM, then SIGKILL after 30 s; the process is reaped. No-op when stopped.
  void stop();
  /// Whether the last stop() ended with anvil exiting on SIGTERM (its --state file written), not
  /// with the SIGKILL after the grace period; a test of kept state checks it, so a node that was
  /// killed before it saved its chain fails as that and not as a lost write.
  [[nodiscard]] bool stopped_cleanly() const noexcept { return stopped_cleanly_; }
  [[nodiscard]] bool running() const { return pid_ > 0; }

  /// http://127.0.0.1:<port>
  [[nodiscard]] const std::string& url() const { return url_; }
  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] uint64_t chain_id() const { return options_.chain_id; }
  /// The node's output (stdout and stderr) since the last start.
  [[nodiscard]] std::string log_text() const;

  /// One JSON-RPC call; returns `result`, throws std::runtime_error on a transport error or an
  /// `error` answer (its message included).
  [[nodiscard]] boost::json::value rpc(std::string_view method, boost::json::array params = {}) const;

  /// Private keys of the dev accounts 0..9 (public test keys).
  [[nodiscard]] static const std::array<private_key, kDevAccounts>& dev_private_keys();
  /// Addresses of the dev accounts 0..9.
  [[nodiscard]] static const std::array<address, kDevAccounts>& dev_addresses();

 private:
  void launch(bool fixed_port);

  options options_;
  std::string dir_;  // mkdtemp directory: the log, the state file
  std::string log_path_;
  pid_t pid_ = -1;
  bool stopped_cleanly_ = true;
  uint16_t port_ = 0;
  std::string url_;
};

/// The creation bytecode a committed .bin file holds (0x-hex, as tests/attest/build.mjs and
/// tests/triggers/Emitter.build.mjs write it), without its line end; throws when it cannot be read.
[[nodiscard]] std::string creation_code(const std::string& bin_path);

}  // namespace enact::test
