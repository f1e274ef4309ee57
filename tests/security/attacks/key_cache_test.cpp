// SPDX-License-Identifier: Apache-2.0
// The owning-account check remembered (server/core/key_cache.hpp; docs/architecture.md): an
// entry of one account never answers for another (a (wallet, path) pair copied into another
// account is refused there whether the owner's entry is cached or not), and no caller grows the
// cache past its capacity, however many wallets it lists or runs.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/key_cache.hpp"
#include "enact/pkp/pkp.hpp"
#include "tee/tee.hpp"

namespace enact::core {
namespace {

struct simulated {
  std::filesystem::path dir;
  std::unique_ptr<tee::tee> t;
  simulated() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "enact-key-cache-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    auto opened = tee::open_simulated(dir.string());
    REQUIRE(opened);
    t = std::move(*opened);
  }
  ~simulated() { std::filesystem::remove_all(dir); }
};

hash256 filled(uint8_t b) {
  hash256 h{};
  h.fill(b);
  return h;
}

std::string solana_of(const tee::tee& t, const hash256& account, const hash256& path) {
  return pkp::solana_address(t.ed25519_public_key(account, path).value());
}

TEST_CASE("a victim's cached (path, wallet) never answers for another account") {
  simulated s;
  const hash256 victim = filled(0x11), thief = filled(0x22), path = filled(0x33);
  const address wallet = s.t->wallet_address(victim, path).value();
  const std::string victim_solana = solana_of(*s.t, victim, path);

  SUBCASE("the victim's entry cached first") {
    key_cache cache;
    CHECK(cache.solana_address(*s.t, victim, path, wallet).value() == victim_solana);
    CHECK(cache.owns(*s.t, victim, path, wallet).value());
    CHECK_FALSE(cache.owns(*s.t, thief, path, wallet).value());
    CHECK_FALSE(cache.solana_address(*s.t, thief, path, wallet).value().has_value());
  }
  SUBCASE("the thief's entry cached first") {
    key_cache cache;
    CHECK_FALSE(cache.solana_address(*s.t, thief, path, wallet).value().has_value());
    CHECK_FALSE(cache.owns(*s.t, thief, path, wallet).value());
    CHECK(cache.owns(*s.t, victim, path, wallet).value());
    CHECK(cache.solana_address(*s.t, victim, path, wallet).value() == victim_solana);
    CHECK_FALSE(cache.solana_address(*s.t, thief, path, wallet).value().has_value());
  }
  SUBCASE("a minted wallet remembered for its owner only") {
    key_cache cache;
    cache.remember(*s.t, victim, path, wallet, victim_solana);
    CHECK(cache.solana_address(*s.t, victim, path, wallet).value() == victim_solana);
    CHECK_FALSE(cache.owns(*s.t, thief, path, wallet).value());
    CHECK_FALSE(cache.solana_address(*s.t, thief, path, wallet).value().has_value());
  }
  SUBCASE("another TEE's root key is another entry") {
    simulated other;
    key_cache cache;
    CHECK(cache.owns(*s.t, victim, path, wallet).value());
    CHECK_FALSE(cache.owns(*other.t, victim, path, wallet).value());
  }
}

TEST_CASE("no caller grows the cache past its capacity") {
  simulated s;
  key_cache cache(16);
  const hash256 account = filled(0x44);
  // A client listing or running ever new (path, wallet) pairs: owned or not, each is an entry.
  for (unsigned i = 0; i < 500; ++i) {
    hash256 path{};
    path[0] = static_cast<uint8_t>(i);
    path[1] = static_cast<uint8_t>(i >> 8);
    address wallet{};
    wallet[0] = static_cast<uint8_t>(i);
    CHECK_FALSE(cache.owns(*s.t, account, path, wallet).value());
    CHECK(cache.size() <= cache.capacity());
  }
  CHECK(cache.size() == 16);
  // An entry used recently stays; after eviction an entry is derived again, with the same answer.
  const hash256 path = filled(0x55);
  const address wallet = s.t->wallet_address(account, path).value();
  const std::string solana = solana_of(*s.t, account, path);
  CHECK(cache.solana_address(*s.t, account, path, wallet).value() == solana);
  for (unsigned i = 0; i < 40; ++i) {
    hash256 other{};
    other[2] = static_cast<uint8_t>(i + 1);
    CHECK_FALSE(cache.owns(*s.t, account, other, wallet).value());
    if (i % 4 == 0)
      CHECK(cache.owns(*s.t, account, path, wallet).value());
  }
  CHECK(cache.size() == 16);
  CHECK(cache.solana_address(*s.t, account, path, wallet).value() == solana);
}

TEST_CASE("concurrent lookups of two accounts keep their answers apart") {
  simulated s;
  key_cache cache(8);
  const hash256 victim = filled(0x66), thief = filled(0x77);
  std::vector<hash256> paths;
  std::vector<address> wallets;
  for (uint8_t i = 0; i < 12; ++i) {
    paths.push_back(filled(static_cast<uint8_t>(0x80 + i)));
    wallets.push_back(s.t->wallet_address(victim, paths.back()).value());
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int round = 0; round < 30; ++round)
        for (size_t i = 0; i < paths.size(); ++i) {
          const bool as_victim = (round + k + static_cast<int>(i)) % 2 == 0;
          const auto owned = cache.owns(*s.t, as_victim ? victim : thief, paths[i], wallets[i]);
          if (!owned || *owned != as_victim)
            ++wrong;
        }
    });
  for (auto& th : threads)
    th.join();
  CHECK(wrong.load() == 0);
  CHECK(cache.size() <= 8);
}

}  // namespace
}  // namespace enact::core
