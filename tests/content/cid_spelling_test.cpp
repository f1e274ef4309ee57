// SPDX-License-Identifier: Apache-2.0
// The content store read through other spellings of a CID (docs/protocol.md §1, §2
// /get_action_code and /run_action by CID). Attacks: a CIDv1 naming another block over the same
// digest (raw codec) or the raw-leaf CID of the code reads nothing, though the store holds the
// code under the digest's dag-pb CIDv0; a file changed on disk is refused through every spelling;
// spellings the parser does not take (upper-case base32, a v0 with a changed character) read
// nothing. The dag-pb CIDv1 spellings (base32 and base58btc) name the same block and read it.
#include <doctest/doctest.h>

#include <fstream>

#include "cases.hpp"
#include "enact/codec/base58.hpp"
#include "support.hpp"

namespace enact::core::test {
namespace {

TEST_CASE("content store: only the dag-pb spellings of a CID read its code; a changed file is refused in every one") {
  enact::test::temp_dir dir("enact-content-cid");
  const content_store store = enact::test::must_ok(content_store::open(dir.path().string()));
  const bytes code = code_of("Enact.setResponse('the victim\\'s code');\n");
  const std::string v0 = MUST(store.put(code));
  const ipfs::cid parsed = MUST(ipfs::parse(v0));

  // The same block as CIDv1 (dag-pb), in base32 and in base58btc: the same code.
  const ipfs::cid v1{1, ipfs::kCodecDagPb, parsed.multihash};
  const std::string v1_base32 = v1.to_string();
  REQUIRE(v1_base32.front() == 'b');
  const std::string v1_base58 = "z" + codec::base58::encode(v1.to_bytes());
  for (const std::string& spelling : {v0, v1_base32, v1_base58}) {
    CAPTURE(spelling);
    const auto got = MUST(store.get(spelling));
    REQUIRE(got);
    CHECK(*got == code);
  }

  // Attack: another block over the same digest (the raw codec) is not this code.
  const ipfs::cid raw_same_digest{1, ipfs::kCodecRaw, parsed.multihash};
  CHECK_FALSE(MUST(store.get(raw_same_digest.to_string())));
  // Attack: the code's own raw-leaf CID (ipfs add --cid-version=1) names the code's bytes, not the
  // dag-pb block the store holds: the store does not answer it from the CIDv0's file.
  const ipfs::cid raw_leaf = ipfs::cid_v1_of(code);
  REQUIRE(raw_leaf.codec == ipfs::kCodecRaw);
  CHECK_FALSE(MUST(store.get(raw_leaf.to_string())));
  // Spellings the parser refuses read nothing: upper-case base32, a v0 with one character changed.
  std::string upper = v1_base32;
  for (char& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  CHECK_FALSE(store.get(upper));
  std::string bent = v0;
  bent[10] = bent[10] == 'a' ? 'b' : 'a';
  const auto bent_read = store.get(bent);
  CHECK((!bent_read || !*bent_read));

  // Attack: the file under the CIDv0 changed behind the server's back (another code planted):
  // refused whichever spelling asks for it.
  std::ofstream(dir.path() / "actions" / v0, std::ios::binary | std::ios::trunc) << "Enact.setResponse('planted');\n";
  for (const std::string& spelling : {v0, v1_base32, v1_base58}) {
    CAPTURE(spelling);
    CHECK_ERRC(store.get(spelling), api_errc::internal);
  }
  // Storing the code again repairs it, for every spelling.
  CHECK(MUST(store.put(code)) == v0);
  CHECK(*MUST(store.get(v1_base32)) == code);
}

}  // namespace
}  // namespace enact::core::test
