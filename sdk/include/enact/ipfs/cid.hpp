// SPDX-License-Identifier: Apache-2.0
// IPFS content identifiers for action code (docs/protocol.md §1 "CID of action code", "hashed_cid"): the
// `cid` value type with its string and binary forms, a strict parser, and the CIDs that `ipfs add`
// computes for a file with default settings — CIDv0 over a balanced UnixFS dag-pb DAG of 256 KiB
// chunks with at most 174 links per node — and with `--cid-version=1` (raw leaves, base32).
// Only sha2-256 multihashes and the dag-pb and raw codecs are supported: they are all an action
// CID can be, and the only ones the SDK can verify content against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class cid_errc {
  bad_multibase = 1,
  bad_encoding,
  bad_varint,
  unsupported_version,
  unsupported_codec,
  unsupported_hash,
  bad_length,
  too_long,
};

namespace detail {
inline const std::error_category& cid_category() noexcept {
  static const errc_category<cid_errc> c(
      "enact.cid",
      {"", "unsupported multibase prefix", "invalid base58 or base32 text", "invalid varint", "unsupported CID version",
       "unsupported codec", "unsupported multihash", "wrong length", "CID too long"});
  return c;
}
}  // namespace detail
inline std::error_code make_error_code(cid_errc e) noexcept { return {static_cast<int>(e), detail::cid_category()}; }

}  // namespace enact
ENACT_ERRC_ENUM(enact::cid_errc)

namespace enact::ipfs {

/// Multicodec codes (https://github.com/multiformats/multicodec/blob/master/table.csv).
inline constexpr uint64_t kCodecDagPb = 0x70;
inline constexpr uint64_t kCodecRaw = 0x55;
inline constexpr uint64_t kMultihashSha256 = 0x12;
/// The importer defaults of `ipfs add`: fixed-size chunker, balanced layout.
inline constexpr size_t kChunkSize = 262144;
inline constexpr size_t kMaxLinksPerNode = 174;
/// Longest CID string `parse` looks at; a sha2-256 CID is 46 (v0) to 59 (v1 base32) characters.
inline constexpr size_t kMaxCidLength = 256;

/// A content identifier. `multihash` is the whole multihash: code, digest length, digest.
struct cid {
  uint8_t version = 1;
  uint64_t codec = kCodecRaw;
  bytes multihash;

  /// v0: base58btc of the multihash (`Qm…`); v1: multibase base32 lower (`b…`).
  [[nodiscard]] std::string to_string() const;
  /// Binary form: v0 is the bare multihash; v1 is varint(1) ‖ varint(codec) ‖ multihash.
  [[nodiscard]] bytes to_bytes() const;
  /// The 32-byte sha2-256 digest (the last 32 bytes of the multihash).
  [[nodiscard]] hash256 digest() const noexcept;

  friend bool operator==(const cid&, const cid&) = default;
};

/// Parses a CID string: v0 (`Qm…`, 46 base58btc characters, sha2-256), or v1 in multibase base32
/// lower (`b…`) or base58btc (`z…`). Varints must be canonical and at most 9 bytes; the codec must
/// be dag-pb or raw and the multihash sha2-256 with a 32-byte digest, with nothing after it.
[[nodiscard]] result<cid> parse(std::string_view text);
/// Parses the binary form (to_bytes()): a bare sha2-256 multihash is v0, anything else v1.
[[nodiscard]] result<cid> from_bytes(bytes_view data);

/// The CID `ipfs add` gives `content` with default settings (v0, dag-pb leaves).
[[nodiscard]] cid cid_v0_of(bytes_view content);
/// The CID `ipfs add --cid-version=1` gives `content` (raw leaves; a one-chunk file is the raw
/// block itself).
[[nodiscard]] cid cid_v1_of(bytes_view content);
/// cid_v0_of(content).to_string(): the action CID of docs/protocol.md §1.
[[nodiscard]] std::string cid_of(bytes_view content);

/// keccak256 of the UTF-8 bytes of the CID string, exactly as written (docs/protocol.md §1 `hashed_cid`).
[[nodiscard]] hash256 hashed_cid(std::string_view cid_string) noexcept;

/// True when both name the same block: same codec and multihash, whatever the version (a v0 CID
/// and its v1 dag-pb form).
[[nodiscard]] bool same_content(const cid& a, const cid& b) noexcept;

}  // namespace enact::ipfs
