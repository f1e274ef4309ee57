// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
const std::string kMillionA(1000000, 'a');
}

TEST_CASE("sha256 and sha384 match FIPS 180-2") {
  // FIPS 180-2 Appendix B.1-B.3 (SHA-256) and D.1-D.3 (SHA-384), with the empty message from
  // NIST's SHA examples; the two digests those do not list (SHA-384 of B.2's message, SHA-256 of
  // D.2's) computed with Python's hashlib.
  struct digests {
    std::string_view in;
    std::string_view sha256;
    std::string_view sha384;
  };
  const digests cases[] = {
      {""sv, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"sv,
       "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"sv},
      {"abc"sv, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"sv,
       "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"sv},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"sv,
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"sv,
       "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6b0455a8520bc4e6f5fe95b1fe3c8452b"sv},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"sv,
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"sv,
       "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039"sv},
      {kMillionA, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"sv,
       "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985"sv},
  };
  for (const auto& c : cases) {
    const std::string_view message = c.in.substr(0, 64);  // enough to tell the vectors apart
    CAPTURE(message);
    CHECK(codec::hex::encode(crypto::sha256(as_bytes(c.in))) == c.sha256);
    CHECK(codec::hex::encode(crypto::sha384(as_bytes(c.in))) == c.sha384);
  }
}

TEST_CASE("sha256_hasher equals the one-shot however the input is split") {
  const bytes_view all = as_bytes(kMillionA);
  const hash256 expected = crypto::sha256(all);
  crypto::sha256_hasher h;
  for (const size_t piece : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{4096}, all.size()}) {
    for (size_t off = 0; off < all.size(); off += piece)
      h.update(all.subspan(off, std::min(piece, all.size() - off)));
    CHECK_MESSAGE(h.finalize() == expected, piece);  // finalize resets for the next message
  }
  CHECK(h.update(as_bytes("ab")).update(as_bytes("")).update(as_bytes("c")).finalize() ==
        crypto::sha256(as_bytes("abc")));
  CHECK(h.finalize() == crypto::sha256({}));

  crypto::sha256_hasher moved(std::move(h));
  moved.update(as_bytes("abc"));
  crypto::sha256_hasher assigned;
  assigned = std::move(moved);
  CHECK(codec::hex::encode(assigned.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
