// SPDX-License-Identifier: Apache-2.0
// A fleet of enact-server processes as docs/deployment.md "A fleet" lays it out: one PostgreSQL
// database holding the metering store and the trigger store of every instance, one chain node
// (anvil) holding the permission registry (--ledger evm), and every instance started from the
// same TEE root, so each derives the same api payer and unseals the usage keys the others sealed
// (docs/architecture.md §4). The test drives the instances as a load balancer would.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "anvil_process.hpp"
#include "postgres_fixture.hpp"
#include "server_process.hpp"

namespace enact::fleet_test {

using enact::itest::server_process;
using enact::itest::temp_dir;

/// The run price every instance charges (--run-price): not 1, so a charge of the wrong size shows.
inline constexpr uint64_t kRunPrice = 2;

class fleet {
 public:
  static constexpr size_t kSize = 3;

  /// anvil, a fresh database on `pg`, a registry deployed for the shared TEE root's api payer
  /// (with anvil's dev account 1 as a second api payer, the test's own hand on the registry), and
  /// kSize data directories holding that root. No instance runs yet.
  explicit fleet(triggers::test::postgres_server& pg);
  ~fleet();
  fleet(const fleet&) = delete;
  fleet& operator=(const fleet&) = delete;

  /// Starts instance `i` (again, after kill) on its data directory.
  void start(size_t i);
  /// SIGKILL to instance `i`, reaped; its port reads 0 until start(i).
  void kill(size_t i);
  /// The loopback port of instance `i`, 0 while it is down (read from any thread).
  [[nodiscard]] int port(size_t i) const { return ports_[i].load(); }
  [[nodiscard]] server_process& server(size_t i) { return *servers_[i]; }

  [[nodiscard]] const test::anvil_process& node() const { return node_; }
  [[nodiscard]] const std::string& database() const { return database_; }
  [[nodiscard]] const std::string& registry() const { return registry_; }
  [[nodiscard]] const std::string& data_dir(size_t i) const { return data_dirs_[i]; }
  /// The flags every instance runs with (besides --listen and --data-dir).
  [[nodiscard]] std::vector<std::string> flags() const;

 private:
  test::anvil_process node_;
  std::string database_;
  temp_dir root_;
  std::array<std::string, kSize> data_dirs_;
  std::string registry_;
  std::string config_path_;
  std::array<std::unique_ptr<server_process>, kSize> servers_;
  std::array<std::atomic<int>, kSize> ports_{};
};

}  // namespace enact::fleet_test
