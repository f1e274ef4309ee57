// SPDX-License-Identifier: Apache-2.0
// One sandbox worker process as the pool sees it: spawned, asked for its ready report, killed.
// The pool (pool.cpp) decides what a report means; this file only starts, reads and reaps.
#pragma once

#include <string>

#include "runtime/runtime.hpp"

namespace enact::runtime {

/// A started worker: its pid and the server's end of its channel.
struct worker {
  int pid = -1;
  int fd = -1;
};

/// "killed by signal 9 (SIGKILL)", "exited with status 1", …
[[nodiscard]] std::string describe_exit(int status);

/// SIGKILL and reap; the exit description, or "" when it was already reaped elsewhere.
std::string kill_and_reap(worker& w);

/// Spawns `cfg.worker_path` with its channel as descriptor 3, an empty environment and every
/// signal at its default.
[[nodiscard]] result<worker> launch_worker(const pool_config& cfg, size_t address_space);

/// Reads the worker's ready report and checks each layer it claims against /proc; on failure the
/// worker is killed and reaped.
[[nodiscard]] result<isolation_report> read_ready_report(worker& w, const pool_config& cfg);

}  // namespace enact::runtime
