// SPDX-License-Identifier: Apache-2.0
// The embedded chain's identity and its record (embedded_chain.hpp, docs/protocol.md §1
// "embedded chain"). The record is two lines, `chain_id <decimal>` and `registry <EIP-55
// address>`, written once through a temporary file and a rename, so a crash leaves either no
// record or a whole one.
#include "ledger/embedded_chain.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>

#include "enact/address.hpp"
#include "ledger/ledger.hpp"
#include "ledger/rpc_surface.hpp"
#include "storage/atomic_file.hpp"

namespace enact::ledger {
namespace {

constexpr const char* kRecord = "embedded-chain";
constexpr size_t kMaxRecordBytes = 256;

error refused(std::string message) { return fail(ledger_errc::invalid_argument, std::move(message)); }

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string text_of(const embedded_chain& c) {
  return "chain_id " + std::to_string(c.chain_id) + "\nregistry " + to_checksum_address(c.registry) + "\n";
}

std::string describe(const embedded_chain& c) {
  return "chain id " + std::to_string(c.chain_id) + " and registry " + to_checksum_address(c.registry);
}

/// `text` without its prefix `key` and a space, up to the newline that must end it.
std::optional<std::string_view> field(std::string_view& text, std::string_view key) {
  if (!text.starts_with(key) || text.size() <= key.size() || text[key.size()] != ' ')
    return std::nullopt;
  text.remove_prefix(key.size() + 1);
  const size_t end = text.find('\n');
  if (end == std::string_view::npos)
    return std::nullopt;
  const std::string_view value = text.substr(0, end);
  text.remove_prefix(end + 1);
  return value;
}

result<embedded_chain> parse_record(std::string_view text, const std::string& path) {
  const auto malformed = [&](std::string_view why) {
    return refused(path + " is malformed (" + std::string(why) +
                   "): it must be the two lines \"chain_id <decimal>\" and \"registry <0x address>\" this server "
                   "wrote at the directory's first start. Restore it from a backup, or delete it and start once with "
                   "--chain-id and --chain-contract-address set to the chain this directory's ledger was on (what "
                   "/core/v1/get_node_chain_config answered), which records them again");
  };
  const auto id_text = field(text, "chain_id");
  if (!id_text)
    return malformed("no chain_id line");
  const auto registry_text = field(text, "registry");
  if (!registry_text)
    return malformed("no registry line after chain_id");
  if (!text.empty())
    return malformed("text after the registry line");
  embedded_chain c;
  const char* end = id_text->data() + id_text->size();
  const auto [p, ec] = std::from_chars(id_text->data(), end, c.chain_id);
  if (ec != std::errc{} || p != end || id_text->starts_with('0') || c.chain_id > kMaxEmbeddedChainId)
    return malformed("chain_id is not a decimal number from 1 to 2^53 - 1");
  const auto registry = parse_address_strict(*registry_text, "registry");
  if (!registry)
    return malformed(registry.err().message);
  c.registry = *registry;
  if (c.registry == address{})
    return malformed("registry is the zero address");
  return c;
}

result<std::optional<embedded_chain>> read_record(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT)
      return std::optional<embedded_chain>{};
    return refused("cannot read " + path + ": " + std::strerror(errno));
  }
  char buf[kMaxRecordBytes + 1];
  size_t n = 0;
  while (n < sizeof buf) {
    const ssize_t got = ::read(fd, buf + n, sizeof buf - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return refused("cannot read " + path + ": " + why);
    }
    if (got == 0)
      break;
    n += static_cast<size_t>(got);
  }
  ::close(fd);
  if (n > kMaxRecordBytes)
    return refused(path + " is malformed (over " + std::to_string(kMaxRecordBytes) + " bytes)");
  ENACT_TRY(embedded_chain c, parse_record(std::string_view(buf, n), path));
  return std::optional<embedded_chain>(c);
}

/// Writes `c` to `path` so that a crash leaves no record or the whole one.
result<void> write_record(const std::string& path, const embedded_chain& c) {
  if (auto why = storage::write_file_atomically(path, as_bytes(text_of(c))))
    return refused(std::move(*why));
  return {};
}

}  // namespace

embedded_chain derive_embedded_chain(const hash256& identifier) noexcept {
  embedded_chain c;
  uint64_t head = 0;
  for (size_t i = 0; i < 8; ++i)
    head = (head << 8) | identifier[i];
  c.chain_id = kDerivedChainIdMin + head % kDerivedChainIdSpan;
  std::copy(identifier.end() - 20, identifier.end(), c.registry.begin());
  if (std::all_of(c.registry.begin(), c.registry.begin() + 18, [](uint8_t b) { return b == 0; }))
    c.registry[0] = 0x01;
  return c;
}

embedded_chain legacy_embedded_chain() { return {kLegacyChainId, embedded_registry_address()}; }

result<claimed_chain> claim_embedded_chain(const std::string& data_dir, const embedded_chain& derived,
                                           const chain_overrides& overrides) {
  const std::string path = data_dir + "/" + kRecord;
  if (overrides.chain_id && (*overrides.chain_id == 0 || *overrides.chain_id > kMaxEmbeddedChainId))
    return refused("chain id " + std::to_string(*overrides.chain_id) +
                   " (--chain-id, chain.chain_id): the embedded ledger's chain id must be 1 to 2^53 - 1");
  if (overrides.registry && *overrides.registry == address{})
    return refused(
        "registry address (--chain-contract-address, chain.contract_address): the embedded registry cannot be "
        "the zero address");
  ENACT_TRY(const std::optional<embedded_chain> recorded, read_record(path));
  if (recorded) {
    // docs/protocol.md §1 "embedded chain": the record is kept whatever the root derives now, and
    // an explicit setting must agree with it.
    if (overrides.chain_id && *overrides.chain_id != recorded->chain_id)
      return refused("chain id " + std::to_string(*overrides.chain_id) + " (--chain-id, chain.chain_id) contradicts " +
                     path + ", which records " + describe(*recorded) +
                     " for this data directory's ledger: its wallets' transactions and envelopes name that chain. "
                     "Drop the setting, or give it the recorded value");
    if (overrides.registry && *overrides.registry != recorded->registry)
      return refused("registry address " + to_checksum_address(*overrides.registry) +
                     " (--chain-contract-address, chain.contract_address) contradicts " + path + ", which records " +
                     describe(*recorded) +
                     " for this data directory's ledger. Drop the setting, or give it the recorded value");
    return claimed_chain{*recorded, "recorded"};
  }
  // No record. A ledger from before the record stays on the chain it is on: the one its /rpc
  // file was written for, else the pair every directory had then.
  const std::string rpc_file = data_dir + "/rpc.sqlite";
  std::optional<std::pair<uint64_t, address>> on_file;
  if (exists(rpc_file)) {
    auto read = chain_of_file(rpc_file);
    if (!read)
      return refused("cannot read the chain of " + rpc_file + ": " + read.err().message);
    on_file = *read;
  }
  claimed_chain claimed{derived, "derived"};
  if (on_file) {
    claimed = {{on_file->first, on_file->second}, "kept"};
    // The /rpc file refuses any other chain at open: say so before anything is recorded.
    if ((overrides.chain_id && *overrides.chain_id != claimed.chain.chain_id) ||
        (overrides.registry && *overrides.registry != claimed.chain.registry))
      return refused("the configured chain (--chain-id, --chain-contract-address) contradicts " + rpc_file +
                     ", which holds the ledger's chain of " + describe(claimed.chain) +
                     ". Drop the settings, or give them those values");
  } else if (exists(data_dir + "/ledger.sqlite")) {
    claimed = {legacy_embedded_chain(), "kept"};
  }
  if (overrides.chain_id || overrides.registry)
    claimed.source += " and configured";
  if (overrides.chain_id)
    claimed.chain.chain_id = *overrides.chain_id;
  if (overrides.registry)
    claimed.chain.registry = *overrides.registry;
  ENACT_TRY_VOID(write_record(path, claimed.chain));
  return claimed;
}

}  // namespace enact::ledger
