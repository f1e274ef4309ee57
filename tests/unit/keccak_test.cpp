// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string>
#include <string_view>

#include "enact/crypto/eip191.hpp"
#include "enact/crypto/keccak.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
/// Bytes 0, 1, 2, ... (mod 256), the multi-block inputs of the vectors below.
bytes pattern(size_t n) {
  bytes b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = static_cast<uint8_t>(i & 0xff);
  return b;
}
hash256 h256(std::string_view hex) { return codec::hex::decode_fixed<32>(hex).value(); }
}  // namespace

TEST_CASE("keccak256 of text matches known digests") {
  // "" and "abc": Keccak team's Keccak-256 (original padding) values, as listed by ethers v6
  // (keccak256) which computed the same; the pangram likewise computed by ethers v6 keccak256.
  const test::text_vector cases[] = {
      {""sv, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"sv},
      {"abc"sv, "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"sv},
      {"The quick brown fox jumps over the lazy dog"sv,
       "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15"sv},
  };
  for (const auto& c : cases) {
    CHECK_MESSAGE(crypto::keccak256(c.in) == h256(c.out), c.in);
    CHECK_MESSAGE(crypto::keccak256(as_bytes(c.in)) == h256(c.out), c.in);
  }
}

TEST_CASE("keccak256 across the 136-byte block boundary") {
  struct case_ {
    size_t n;
    std::string_view out;
  };
  // Computed with ethers v6 keccak256 over bytes i & 0xff, i = 0..n-1.
  const case_ cases[] = {
      {135, "cbdfd9dee5faad3818d6b06f95a219fd290b0e1706f6a82e5a595b9ce9faca62"sv},
      {136, "7ce759f1ab7f9ce437719970c26b0a66ff11fe3e38e17df89cf5d29c7d7f807e"sv},
      {137, "ac73d4fae68b8453f764007c1a20ce95994187861f0c3227a3a8e99a73a3b1db"sv},
      {200, "bfb0aa97863e797943cf7c33bb7e880bb4543f3d2703c0923c6901c2af57b890"sv},
      {272, "fdf2ec49e749960d3c8521a0219af8d03e30e2b3bf19bd16150ee0eaf133d66e"sv},
      {1000, "aca79e4146e30eb1c733f6d6060d72471c36ea4e01ebf45d7f4916249c2bbd82"sv},
  };
  for (const auto& c : cases) {
    const bytes in = pattern(c.n);
    CHECK_MESSAGE(crypto::keccak256(bytes_view(in)) == h256(c.out), c.n);

    // The streaming hasher gives the same digest whatever the piece sizes.
    for (const size_t piece : {size_t{1}, size_t{7}, size_t{135}, size_t{136}, size_t{137}}) {
      crypto::keccak256_hasher h;
      for (size_t at = 0; at < in.size(); at += piece)
        h.update(bytes_view(in).subspan(at, std::min(piece, in.size() - at)));
      CHECK_MESSAGE(h.finalize() == h256(c.out), c.n << " in pieces of " << piece);
    }
  }
}

TEST_CASE("keccak256_hasher resets after finalize") {
  crypto::keccak256_hasher h;
  h.update("abc"sv);
  CHECK(h.finalize() == crypto::keccak256("abc"sv));
  CHECK(h.finalize() == crypto::keccak256(""sv));
  h.update(as_bytes("ab"));
  h.update(bytes_view{});
  h.update("c"sv);
  CHECK(h.finalize() == crypto::keccak256("abc"sv));
}

TEST_CASE("EIP-191 personal message hash") {
  struct case_ {
    bytes message;
    std::string_view out;
  };
  // Computed with ethers v6 hashMessage.
  const case_ cases[] = {
      {bytes{}, "5f35dce98ba4fba25530a026ed80b2cecdaa31091ba4958b99b52ea1d068adad"sv},
      {bytes{'h', 'e', 'l', 'l', 'o'}, "50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750"sv},
      {pattern(200), "ed1031587d62758f5833eec2d79c4b107392423cff2f31ecc3dc4848e4557001"sv},
  };
  for (const auto& c : cases)
    CHECK(crypto::personal_message_hash(bytes_view(c.message)) == h256(c.out));
  CHECK(crypto::personal_message_hash("hello"sv) == h256(cases[1].out));
}
