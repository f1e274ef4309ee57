// SPDX-License-Identifier: Apache-2.0
// CIDs and the UnixFS file DAG of `ipfs add`. The layout follows the reference importer
// (ipfs-unixfs-importer, as used by ipfs-only-hash; the same bytes as kubo):
//  - the content is cut into 262144-byte chunks (one empty chunk for empty content);
//  - v0: each chunk becomes a dag-pb node whose Data is UnixFS {Type: File, Data: chunk,
//    filesize: len} (Data omitted when empty); v1: each chunk is a raw block;
//  - one chunk: that leaf is the root. Otherwise the leaves are grouped 174 at a time under
//    parents, the parents 174 at a time under grandparents, and so on until one node is left
//    (a last group of one still gets its own parent);
//  - a parent is PBNode {Links, Data} (links first, as go-ipfs writes it) with one PBLink
//    {Hash: child CID bytes, Name: "", Tsize: child's serialized size plus its descendants'} per
//    child, and Data = UnixFS {Type: File, filesize: total, blocksizes: each child's file bytes}.
#include "enact/ipfs/cid.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "enact/codec/base32.hpp"
#include "enact/codec/base58.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/sha2.hpp"

namespace enact::ipfs {

namespace {

constexpr uint8_t kSha256Length = 32;
// UnixFS Data.DataType (unixfs.proto).
constexpr uint8_t kUnixfsFile = 2;
// multiformats/unsigned-varint: at most 9 bytes (63 bits).
constexpr size_t kMaxVarintBytes = 9;

size_t varint_size(uint64_t v) noexcept {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

template <class Out>
void put_varint(Out& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

/// A fixed-capacity byte buffer for the small protobuf headers around a leaf chunk.
struct small_buffer {
  std::array<uint8_t, 40> data{};
  size_t size = 0;
  void push_back(uint8_t b) noexcept { data[size++] = b; }
  [[nodiscard]] bytes_view view() const noexcept { return {data.data(), size}; }
};

bytes sha256_multihash(const hash256& digest) {
  bytes mh{static_cast<uint8_t>(kMultihashSha256), kSha256Length};
  mh.insert(mh.end(), digest.begin(), digest.end());
  return mh;
}

/// A finished node of the file DAG, as its parent sees it.
struct dag_node {
  hash256 digest;
  uint64_t codec;      // kCodecRaw for v1 leaves, kCodecDagPb otherwise
  uint64_t tsize;      // serialized size of the node and all its descendants
  uint64_t file_size;  // file bytes under the node (its UnixFS filesize, or the raw length)
};

class dag_builder {
 public:
  explicit dag_builder(uint8_t version) : version_(version) {}

  dag_node leaf(bytes_view chunk) {
    const uint64_t n = chunk.size();
    if (version_ == 1)
      return {crypto::sha256(chunk), kCodecRaw, n, n};
    // PBNode{Data: UnixFS{Type: File, Data: chunk, filesize: n}}, hashed in three pieces so the
    // chunk is never copied.
    const uint64_t data_field = n == 0 ? 0 : 1 + varint_size(n) + n;
    const uint64_t unixfs_len = 2 + data_field + 1 + varint_size(n);
    small_buffer head;
    head.push_back(0x0a);  // PBNode.Data, length-delimited
    put_varint(head, unixfs_len);
    head.push_back(0x08);  // UnixFS.Type
    head.push_back(kUnixfsFile);
    if (n != 0) {
      head.push_back(0x12);  // UnixFS.Data
      put_varint(head, n);
    }
    small_buffer tail;
    tail.push_back(0x18);  // UnixFS.filesize
    put_varint(tail, n);
    hasher_.update(head.view()).update(chunk).update(tail.view());
    const uint64_t node_len = head.size + n + tail.size;
    return {hasher_.finalize(), kCodecDagPb, node_len, n};
  }

  dag_node parent(std::span<const dag_node> children) {
    uint64_t file_size = 0;
    uint64_t tsize = 0;
    unixfs_.clear();
    unixfs_.push_back(0x08);
    unixfs_.push_back(kUnixfsFile);
    for (const auto& c : children)
      file_size += c.file_size;
    unixfs_.push_back(0x18);  // filesize
    put_varint(unixfs_, file_size);
    for (const auto& c : children) {
      unixfs_.push_back(0x20);  // blocksizes, one unpacked entry per child
      put_varint(unixfs_, c.file_size);
    }
    node_.clear();
    for (const auto& c : children) {
      cid_bytes_.clear();
      if (version_ == 1) {
        put_varint(cid_bytes_, 1);
        put_varint(cid_bytes_, c.codec);
      }
      cid_bytes_.push_back(static_cast<uint8_t>(kMultihashSha256));
      cid_bytes_.push_back(kSha256Length);
      cid_bytes_.insert(cid_bytes_.end(), c.digest.begin(), c.digest.end());
      const size_t link_len = 1 + varint_size(cid_bytes_.size()) + cid_bytes_.size() + 2 + 1 + varint_size(c.tsize);
      node_.push_back(0x12);  // PBNode.Links
      put_varint(node_, link_len);
      node_.push_back(0x0a);  // PBLink.Hash
      put_varint(node_, cid_bytes_.size());
      node_.insert(node_.end(), cid_bytes_.begin(), cid_bytes_.end());
      node_.push_back(0x12);  // PBLink.Name = "" (written, as the reference importer does)
      node_.push_back(0x00);
      node_.push_back(0x18);  // PBLink.Tsize
      put_varint(node_, c.tsize);
      tsize += c.tsize;
    }
    node_.push_back(0x0a);  // PBNode.Data
    put_varint(node_, unixfs_.size());
    node_.insert(node_.end(), unixfs_.begin(), unixfs_.end());
    return {crypto::sha256(node_), kCodecDagPb, node_.size() + tsize, file_size};
  }

  dag_node build(bytes_view content) {
    if (content.size() <= kChunkSize)
      return leaf(content);
    std::vector<dag_node> level;
    level.reserve((content.size() + kChunkSize - 1) / kChunkSize);
    for (size_t off = 0; off < content.size(); off += kChunkSize)
      level.push_back(leaf(content.subspan(off, std::min(kChunkSize, content.size() - off))));
    while (level.size() > 1) {
      std::vector<dag_node> up;
      up.reserve((level.size() + kMaxLinksPerNode - 1) / kMaxLinksPerNode);
      for (size_t i = 0; i < level.size(); i += kMaxLinksPerNode) {
        const size_t n = std::min(kMaxLinksPerNode, level.size() - i);
        up.push_back(parent(std::span<const dag_node>(level).subspan(i, n)));
      }
      level = std::move(up);
    }
    return level.front();
  }

 private:
  uint8_t version_;
  crypto::sha256_hasher hasher_;
  bytes unixfs_;
  bytes node_;
  bytes cid_bytes_;
};

cid cid_of_file(bytes_view content, uint8_t version) {
  dag_builder b(version);
  const dag_node root = b.build(content);
  return cid{version, root.codec, sha256_multihash(root.digest)};
}

std::string hex_number(uint64_t v) {
  std::string s = "0x";
  if (v == 0)
    return s + "0";
  std::string digits;
  for (; v != 0; v >>= 4)
    digits.insert(digits.begin(), "0123456789abcdef"[v & 0xf]);
  return s + digits;
}

/// Reads an unsigned varint at `pos` (multiformats/unsigned-varint: minimal, at most 9 bytes).
result<uint64_t> read_varint(bytes_view data, size_t& pos, std::string_view what) {
  uint64_t v = 0;
  for (size_t i = 0; i < kMaxVarintBytes; ++i) {
    if (pos >= data.size())
      return fail(cid_errc::bad_varint, "cid: " + std::string(what) + ": truncated varint");
    const uint8_t b = data[pos++];
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      if (b == 0 && i > 0)
        return fail(cid_errc::bad_varint, "cid: " + std::string(what) + ": non-minimal varint encoding");
      return v;
    }
  }
  return fail(cid_errc::bad_varint, "cid: " + std::string(what) + ": varint longer than 9 bytes");
}

/// Checks a whole multihash: sha2-256, 32-byte digest, nothing after it.
result<void> check_multihash(bytes_view mh) {
  size_t pos = 0;
  ENACT_TRY(const uint64_t code, read_varint(mh, pos, "multihash code"));
  if (code != kMultihashSha256)
    return fail(cid_errc::unsupported_hash, "cid: multihash " + hex_number(code) + " is not sha2-256 (0x12)");
  ENACT_TRY(const uint64_t len, read_varint(mh, pos, "multihash length"));
  if (len != kSha256Length)
    return fail(cid_errc::bad_length, "cid: sha2-256 digest length " + std::to_string(len) + ", expected 32");
  if (mh.size() - pos != kSha256Length)
    return fail(cid_errc::bad_length, "cid: " + std::to_string(mh.size() - pos) + " digest bytes, expected 32");
  return {};
}

/// Binary CIDv1: version, codec, multihash.
result<cid> parse_v1_bytes(bytes_view data) {
  size_t pos = 0;
  ENACT_TRY(const uint64_t version, read_varint(data, pos, "version"));
  if (version != 1) {
    // CID spec: a multibase string never holds a CIDv0 (whose first byte is 0x12).
    if (version == kMultihashSha256)
      return fail(cid_errc::unsupported_version, "cid: a CIDv0 cannot be multibase-encoded; write it as Qm…");
    return fail(cid_errc::unsupported_version, "cid: version " + std::to_string(version) + " is not supported");
  }
  ENACT_TRY(const uint64_t codec, read_varint(data, pos, "codec"));
  if (codec != kCodecDagPb && codec != kCodecRaw)
    return fail(cid_errc::unsupported_codec,
                "cid: codec " + hex_number(codec) + " is neither dag-pb (0x70) nor raw (0x55)");
  const bytes_view mh = data.subspan(pos);
  ENACT_TRY_VOID(check_multihash(mh));
  return cid{1, codec, bytes(mh.begin(), mh.end())};
}

}  // namespace

std::string cid::to_string() const {
  if (version == 0)
    return codec::base58::encode(multihash);
  return "b" + codec::base32::encode_lower_nopad(to_bytes());
}

bytes cid::to_bytes() const {
  if (version == 0)
    return multihash;
  bytes out;
  out.reserve(2 + varint_size(codec) + multihash.size());
  put_varint(out, version);
  put_varint(out, codec);
  out.insert(out.end(), multihash.begin(), multihash.end());
  return out;
}

hash256 cid::digest() const noexcept {
  hash256 d{};
  const size_t n = std::min(d.size(), multihash.size());
  std::copy(multihash.end() - static_cast<std::ptrdiff_t>(n), multihash.end(),
            d.end() - static_cast<std::ptrdiff_t>(n));
  return d;
}

result<cid> from_bytes(bytes_view data) {
  if (data.size() == 2 + kSha256Length && data[0] == kMultihashSha256 && data[1] == kSha256Length)
    return cid{0, kCodecDagPb, bytes(data.begin(), data.end())};
  return parse_v1_bytes(data);
}

result<cid> parse(std::string_view text) {
  if (text.size() > kMaxCidLength)
    return fail(cid_errc::too_long,
                "cid: " + std::to_string(text.size()) + " characters, at most " + std::to_string(kMaxCidLength));
  if (text.empty())
    return fail(cid_errc::bad_multibase, "cid: empty");
  if (text.starts_with("Qm")) {
    // CIDv0: base58btc of a sha2-256 multihash, always 46 characters.
    if (text.size() != 46)
      return fail(cid_errc::bad_length, "cid: CIDv0 has 46 characters, got " + std::to_string(text.size()));
    auto mh = codec::base58::decode(text, "cid");
    if (!mh)
      return fail(cid_errc::bad_encoding, mh.err().message);
    ENACT_TRY_VOID(check_multihash(*mh));
    return cid{0, kCodecDagPb, std::move(*mh)};
  }
  const std::string_view body = text.substr(1);
  switch (text[0]) {
    case 'b': {
      auto raw = codec::base32::decode_lower_nopad(body, "cid");
      if (!raw)
        return fail(cid_errc::bad_encoding, raw.err().message);
      return parse_v1_bytes(*raw);
    }
    case 'z': {
      auto raw = codec::base58::decode(body, "cid");
      if (!raw)
        return fail(cid_errc::bad_encoding, raw.err().message);
      return parse_v1_bytes(*raw);
    }
    default: {
      const auto c = static_cast<uint8_t>(text[0]);
      const std::string shown = c > 0x20 && c < 0x7f ? "'" + std::string(1, text[0]) + "'" : hex_number(c);
      return fail(cid_errc::bad_multibase, "cid: unsupported multibase prefix " + shown + " (expected Qm…, b… or z…)");
    }
  }
}

cid cid_v0_of(bytes_view content) { return cid_of_file(content, 0); }
cid cid_v1_of(bytes_view content) { return cid_of_file(content, 1); }
std::string cid_of(bytes_view content) { return cid_v0_of(content).to_string(); }

hash256 hashed_cid(std::string_view cid_string) noexcept { return crypto::keccak256(cid_string); }

bool same_content(const cid& a, const cid& b) noexcept { return a.codec == b.codec && a.multihash == b.multihash; }

}  // namespace enact::ipfs
