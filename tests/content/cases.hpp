// SPDX-License-Identifier: Apache-2.0
// What every content store backend does alike (core/content_store.hpp), run on the local store and
// on PostgreSQL.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "core/content_store.hpp"
#include "core/errors.hpp"
#include "enact/ipfs/cid.hpp"
#include "must.hpp"

namespace enact::core::test {

inline bytes code_of(const std::string& text) { return bytes(text.begin(), text.end()); }

/// Round trip by CIDv0 and CIDv1, absent CIDs, repeated uploads counted once, quotas.
inline void check_basics(const content_store& store) {
  const bytes code = code_of("export default () => 42;");
  const std::string cid = MUST(store.put(code));
  CHECK(cid == ipfs::cid_of(code));
  CHECK(MUST(store.put(code)) == cid);  // again: fine
  auto got = MUST(store.get(cid));
  REQUIRE(got);
  CHECK(*got == code);
  // A CIDv1 (dag-pb) names the same code.
  const auto v0 = MUST(ipfs::parse(cid));
  const ipfs::cid v1{1, ipfs::kCodecDagPb, v0.multihash};
  auto by_v1 = MUST(store.get(v1.to_string()));
  REQUIRE(by_v1);
  CHECK(*by_v1 == code);
  CHECK_FALSE(MUST(store.get(ipfs::cid_of(code_of("never stored")))));
  CHECK_FALSE(store.get("not a cid"));

  const hash256 account{9};
  const upload_quota quota{.max_bytes = 100, .max_count = 2};
  CHECK(MUST(store.put_for(account, code, quota)) == cid);
  CHECK(MUST(store.put_for(account, code, quota)) == cid);  // stored before: free
  auto used = MUST(store.usage(account));
  CHECK(used.count == 1);
  CHECK(used.bytes == code.size());
  const bytes second = code_of("export default () => 43;");
  (void)MUST(store.put_for(account, second, quota));
  CHECK_ERRC(store.put_for(account, code_of("export default () => 44;"), quota), api_errc::forbidden);
  CHECK(MUST(store.usage(account)).count == 2);
  // Bytes: 24 + 24 of 100 used; 60 more is refused, and nothing of it is stored.
  const bytes big(60, 'x');
  CHECK_ERRC(store.put_for(hash256{10}, bytes(101, 'y'), quota), api_errc::forbidden);
  CHECK_FALSE(MUST(store.get(ipfs::cid_of(bytes(101, 'y')))));
  CHECK_ERRC(store.put_for(account, big, {.max_bytes = 100, .max_count = 0}), api_errc::forbidden);
  CHECK(MUST(store.usage(hash256{11})).count == 0);
}

}  // namespace enact::core::test
