// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "enact/crypto/random.hpp"
#include "enact/secret.hpp"

using namespace enact;

// A Secret cannot be copied implicitly, printed, or turned into a string.
static_assert(!std::is_copy_constructible_v<Secret>);
static_assert(!std::is_copy_assignable_v<Secret>);
static_assert(std::is_nothrow_move_constructible_v<Secret>);
static_assert(std::is_nothrow_move_assignable_v<Secret>);
static_assert(!std::is_convertible_v<Secret, std::string>);
static_assert(!std::is_constructible_v<std::string, Secret>);
static_assert(!std::is_convertible_v<bytes_view, Secret>, "construction from bytes is explicit");
template <class T>
concept streamable = requires(std::ostream& os, const T& t) {
  os << t;
};
static_assert(!streamable<Secret>);

namespace {
bool all_zero(bytes_view b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}
}  // namespace

TEST_CASE("Secret holds, clones and moves its bytes") {
  const bytes raw{1, 2, 3, 4};
  Secret a{bytes_view(raw)};
  CHECK(a.size() == 4);
  CHECK(!a.empty());
  CHECK(bytes(a.view().begin(), a.view().end()) == raw);

  Secret b = a.clone();
  CHECK(b == a);
  b.mutable_view()[0] = 9;  // the clone is independent
  CHECK(a.view()[0] == 1);
  CHECK(b != a);

  Secret c = std::move(a);
  CHECK(c.size() == 4);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  CHECK(a.view().empty());

  c = std::move(b);
  CHECK(c.view()[0] == 9);
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move)

  const Secret z = Secret::of_size(16);
  CHECK(z.size() == 16);
  CHECK(all_zero(z.view()));
  CHECK(Secret().empty());
  CHECK(Secret::of_size(0).empty());
}

TEST_CASE("Secret equality compares contents and sizes") {
  struct case_ {
    bytes a, b;
    bool equal;
  };
  const case_ cases[] = {
      {{}, {}, true},
      {{1, 2, 3}, {1, 2, 3}, true},
      {{1, 2, 3}, {1, 2, 4}, false},
      {{0, 2, 3}, {1, 2, 3}, false},
      {{1, 2, 3}, {1, 2}, false},
      {{0}, {}, false},
  };
  for (const auto& c : cases) {
    CHECK((Secret(bytes_view(c.a)) == Secret(bytes_view(c.b))) == c.equal);
    CHECK(constant_time_equal(c.a, c.b) == c.equal);
  }
}

TEST_CASE("wipe_on_exit zeroes its buffer however the scope is left") {
  std::string text = "a key service's answer";
  bytes raw{1, 2, 3, 4};
  {
    const wipe_on_exit wipe_text(text);
    const wipe_on_exit wipe_raw(raw);
    CHECK(text == "a key service's answer");
  }
  CHECK(text == std::string(22, '\0'));
  CHECK(raw == bytes(4, 0));
  std::string thrown = "left by an exception";
  try {
    const wipe_on_exit wipe(thrown);
    throw std::runtime_error("out");
  } catch (const std::runtime_error&) {
  }
  CHECK(thrown == std::string(20, '\0'));
}

TEST_CASE("secure_wipe zeroes a buffer") {
  bytes buf{1, 2, 3, 4, 5};
  detail::secure_wipe(buf.data(), buf.size());
  CHECK(all_zero(buf));
  detail::secure_wipe(nullptr, 0);  // no-op
}

TEST_CASE("random bytes come from the generator") {
  // A generator that wrote nothing, or repeated itself, would fail these (chance of a false
  // failure: 2^-256 per comparison).
  bytes a(32), b(32);
  crypto::random_bytes(a);
  crypto::random_bytes(b);
  CHECK(!all_zero(a));
  CHECK(a != b);
  crypto::random_bytes(std::span<uint8_t>{});  // empty request is fine

  const Secret s = crypto::random_secret(32);
  CHECK(s.size() == 32);
  CHECK(!all_zero(s.view()));
  CHECK(s != crypto::random_secret(32));
  CHECK(crypto::random_secret(0).empty());
}
