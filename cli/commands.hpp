// SPDX-License-Identifier: Apache-2.0
// The subcommand table of the `enact` CLI.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace enact::cli {

struct command {
  std::string name;     // the command words, e.g. "typed-data hash"
  std::string usage;    // arguments after the name
  std::string summary;  // one line
  std::function<int(const std::vector<std::string>&)> run;
};

/// Every subcommand, in the order `enact --help` lists them.
std::vector<command> all_commands();

/// The `enact core …` commands (core_commands.cpp): the core service's API.
std::vector<command> core_commands();

/// The `enact chain …` commands (chain_commands.cpp): the permission registry on-chain.
std::vector<command> chain_commands();

/// The `enact attest …` commands (attest_commands.cpp): the client checks of a service's
/// attestation (docs/protocol.md §5).
std::vector<command> attest_commands();

/// The `enact triggers …` commands (trigger_commands.cpp): the trigger service's API.
std::vector<command> trigger_commands();

}  // namespace enact::cli
