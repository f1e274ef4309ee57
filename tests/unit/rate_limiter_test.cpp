// SPDX-License-Identifier: Apache-2.0
// The core's token-bucket table (server/core/rate_limiter.hpp): tokens and refills, all-or-nothing
// takes of several tokens, the bound on the table (least recently used buckets make room), and
// the client key of a per-address limit.
//
// Attack: a client that is being limited floods the table with distinct keys (each a fresh
// bucket), hoping the table is reset when it fills up, which gave every limited client a full
// bucket again. The table now evicts only its least recently used buckets.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/rate_limiter.hpp"

using enact::core::client_of;
using enact::core::rate_limiter;

TEST_CASE("a bucket grants its burst, then refuses with the wait, then refills") {
  rate_limiter l(1000, 5);
  REQUIRE(l.enabled());
  for (int i = 0; i < 5; ++i)
    CHECK(l.take("k") == 0);
  CHECK(l.take("k") >= 1);
  CHECK(l.take("other") == 0);                                 // buckets are per key
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // 20 tokens' worth, capped at 5
  for (int i = 0; i < 5; ++i)
    CHECK(l.take("k") == 0);
  CHECK(l.take("k") >= 1);
}

TEST_CASE("the wait is the time until a token is there, in whole seconds") {
  rate_limiter l(0.5, 1);  // a token every 2 s
  CHECK(l.take("k") == 0);
  const int wait = l.take("k");
  CHECK(wait >= 1);
  CHECK(wait <= 2);
  CHECK_FALSE(rate_limiter(0, 10).enabled());
}

TEST_CASE("several tokens are taken all at once or not at all") {
  rate_limiter l(0.001, 10);
  CHECK(l.take("k", 4) == 0);
  CHECK(l.take("k", 4) == 0);
  CHECK(l.take("k", 4) >= 1);  // 2 left: nothing taken
  CHECK(l.take("k", 2) == 0);  // the 2 are still there
  CHECK(l.take("k") >= 1);
  CHECK(l.take("fresh", 11) >= 1);  // over the burst: never granted
  CHECK(l.take("fresh", 10) == 0);  // and nothing was taken by the refusal
  CHECK(l.take("fresh", 0) == 0);
  CHECK(l.burst() == 10);
}

TEST_CASE("attack: a flood of distinct keys does not give a limited client fresh tokens") {
  // The attacker's own key is limited (no refill within the test); it then presents 150,000
  // distinct keys, more than the table holds, and keeps trying its own key meanwhile.
  rate_limiter l(0.0001, 3);
  const std::string mine = "attacker";
  for (int i = 0; i < 3; ++i)
    REQUIRE(l.take(mine) == 0);
  REQUIRE(l.take(mine) >= 1);
  int granted = 0;
  for (int i = 0; i < 150000; ++i) {
    (void)l.take("flood-" + std::to_string(i));
    if (i % 1000 == 999 && l.take(mine) == 0)
      ++granted;
  }
  CHECK(granted == 0);
  CHECK(l.take(mine) >= 1);
  CHECK(l.size() <= rate_limiter::kDefaultCapacity);
}

TEST_CASE("attack: a flood of distinct keys does not reset other limited clients") {
  rate_limiter l(0.0001, 2, 1000);
  for (const char* victim : {"a", "b"}) {
    REQUIRE(l.take(victim) == 0);
    REQUIRE(l.take(victim) == 0);
    REQUIRE(l.take(victim) >= 1);
  }
  for (int i = 0; i < 5000; ++i) {
    (void)l.take("flood-" + std::to_string(i));
    if (i % 100 == 0) {  // the limited clients keep calling, so their buckets stay recent
      CHECK(l.take("a") >= 1);
      CHECK(l.take("b") >= 1);
    }
  }
  CHECK(l.take("a") >= 1);
  CHECK(l.take("b") >= 1);
  CHECK(l.size() == 1000);
}

TEST_CASE("a full table evicts the least recently used bucket, one at a time") {
  rate_limiter l(0.0001, 1, 3);
  CHECK(l.capacity() == 3);
  CHECK(l.take("a") == 0);
  CHECK(l.take("b") == 0);
  CHECK(l.take("c") == 0);
  CHECK(l.take("a") >= 1);  // a is now the most recently used; b the least
  CHECK(l.take("d") == 0);  // evicts b only
  CHECK(l.size() == 3);
  CHECK(l.take("a") >= 1);  // kept: still limited
  CHECK(l.take("c") >= 1);  // kept
  CHECK(l.take("d") >= 1);  // kept
  CHECK(l.take("b") == 0);  // evicted, so new (and now it evicts a, the least recent)
  CHECK(l.size() == 3);
  CHECK(rate_limiter(1, 1, 0).capacity() == 1);
}

TEST_CASE("the client of a per-address limit: the IPv4 address, or the IPv6 /64") {
  CHECK(client_of("127.0.0.1") == "127.0.0.1");
  CHECK(client_of("::ffff:10.1.2.3") == "10.1.2.3");
  CHECK(client_of("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64");
  CHECK(client_of("2001:db8:1:2::1") == client_of("2001:db8:1:2:ffff::9"));
  CHECK(client_of("2001:db8:1:3::1") != client_of("2001:db8:1:2::1"));
  CHECK(client_of("::1") == "::/64");
  CHECK(client_of("not an address") == "not an address");
}
