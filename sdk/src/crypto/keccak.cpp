// SPDX-License-Identifier: Apache-2.0
// Keccak-f[1600] and the Keccak-256 sponge (rate 136, original padding 0x01 ... 0x80).
// The permutation keeps the 25 lanes in local variables and runs two rounds per loop iteration
// (state A -> E -> A), so no lane is copied between rounds; theta, rho, pi and chi are fused per
// output row. Lane names follow the Keccak team's reference code: A<row><column>, rows b g k m s
// (y = 0..4), columns a e i o u (x = 0..4).
#include "enact/crypto/keccak.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace enact::crypto {
namespace {

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL, 0x000000000000808bULL,
    0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL, 0x0000000000000088ULL,
    0x0000000080008009ULL, 0x000000008000000aULL, 0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

inline uint64_t rol(uint64_t x, int n) noexcept { return std::rotl(x, n); }

inline uint64_t load_le64(const uint8_t* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big)
    v = __builtin_bswap64(v);
  return v;
}

inline void store_le64(uint8_t* p, uint64_t v) noexcept {
  if constexpr (std::endian::native == std::endian::big)
    v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

// One round reading lanes S.. and writing lanes D..: theta column parities, then for each output
// row the five lanes it gathers (rho rotation + pi position), then chi; iota on lane 0.
#define ENACT_KECCAK_ROUND(S, D, rc)                           \
  do {                                                         \
    const uint64_t Ca = S##ba ^ S##ga ^ S##ka ^ S##ma ^ S##sa; \
    const uint64_t Ce = S##be ^ S##ge ^ S##ke ^ S##me ^ S##se; \
    const uint64_t Ci = S##bi ^ S##gi ^ S##ki ^ S##mi ^ S##si; \
    const uint64_t Co = S##bo ^ S##go ^ S##ko ^ S##mo ^ S##so; \
    const uint64_t Cu = S##bu ^ S##gu ^ S##ku ^ S##mu ^ S##su; \
    const uint64_t Da = Cu ^ rol(Ce, 1);                       \
    const uint64_t De = Ca ^ rol(Ci, 1);                       \
    const uint64_t Di = Ce ^ rol(Co, 1);                       \
    const uint64_t Do = Ci ^ rol(Cu, 1);                       \
    const uint64_t Du = Co ^ rol(Ca, 1);                       \
    uint64_t Ba, Be, Bi, Bo, Bu;                               \
    Ba = S##ba ^ Da;                                           \
    Be = rol(S##ge ^ De, 44);                                  \
    Bi = rol(S##ki ^ Di, 43);                                  \
    Bo = rol(S##mo ^ Do, 21);                                  \
    Bu = rol(S##su ^ Du, 14);                                  \
    D##ba = Ba ^ (~Be & Bi) ^ (rc);                            \
    D##be = Be ^ (~Bi & Bo);                                   \
    D##bi = Bi ^ (~Bo & Bu);                                   \
    D##bo = Bo ^ (~Bu & Ba);                                   \
    D##bu = Bu ^ (~Ba & Be);                                   \
    Ba = rol(S##bo ^ Do, 28);                                  \
    Be = rol(S##gu ^ Du, 20);                                  \
    Bi = rol(S##ka ^ Da, 3);                                   \
    Bo = rol(S##me ^ De, 45);                                  \
    Bu = rol(S##si ^ Di, 61);                                  \
    D##ga = Ba ^ (~Be & Bi);                                   \
    D##ge = Be ^ (~Bi & Bo);                                   \
    D##gi = Bi ^ (~Bo & Bu);                                   \
    D##go = Bo ^ (~Bu & Ba);                                   \
    D##gu = Bu ^ (~Ba & Be);                                   \
    Ba = rol(S##be ^ De, 1);                                   \
    Be = rol(S##gi ^ Di, 6);                                   \
    Bi = rol(S##ko ^ Do, 25);                                  \
    Bo = rol(S##mu ^ Du, 8);                                   \
    Bu = rol(S##sa ^ Da, 18);                                  \
    D##ka = Ba ^ (~Be & Bi);                                   \
    D##ke = Be ^ (~Bi & Bo);                                   \
    D##ki = Bi ^ (~Bo & Bu);                                   \
    D##ko = Bo ^ (~Bu & Ba);                                   \
    D##ku = Bu ^ (~Ba & Be);                                   \
    Ba = rol(S##bu ^ Du, 27);                                  \
    Be = rol(S##ga ^ Da, 36);                                  \
    Bi = rol(S##ke ^ De, 10);                                  \
    Bo = rol(S##mi ^ Di, 15);                                  \
    Bu = rol(S##so ^ Do, 56);                                  \
    D##ma = Ba ^ (~Be & Bi);                                   \
    D##me = Be ^ (~Bi & Bo);                                   \
    D##mi = Bi ^ (~Bo & Bu);                                   \
    D##mo = Bo ^ (~Bu & Ba);                                   \
    D##mu = Bu ^ (~Ba & Be);                                   \
    Ba = rol(S##bi ^ Di, 62);                                  \
    Be = rol(S##go ^ Do, 55);                                  \
    Bi = rol(S##ku ^ Du, 39);                                  \
    Bo = rol(S##ma ^ Da, 41);                                  \
    Bu = rol(S##se ^ De, 2);                                   \
    D##sa = Ba ^ (~Be & Bi);                                   \
    D##se = Be ^ (~Bi & Bo);                                   \
    D##si = Bi ^ (~Bo & Bu);                                   \
    D##so = Bo ^ (~Bu & Ba);                                   \
    D##su = Bu ^ (~Ba & Be);                                   \
  } while (0)

void keccak_f1600(uint64_t st[25]) noexcept {
  uint64_t Aba = st[0], Abe = st[1], Abi = st[2], Abo = st[3], Abu = st[4];
  uint64_t Aga = st[5], Age = st[6], Agi = st[7], Ago = st[8], Agu = st[9];
  uint64_t Aka = st[10], Ake = st[11], Aki = st[12], Ako = st[13], Aku = st[14];
  uint64_t Ama = st[15], Ame = st[16], Ami = st[17], Amo = st[18], Amu = st[19];
  uint64_t Asa = st[20], Ase = st[21], Asi = st[22], Aso = st[23], Asu = st[24];
  uint64_t Eba, Ebe, Ebi, Ebo, Ebu, Ega, Ege, Egi, Ego, Egu, Eka, Eke, Eki, Eko, Eku;
  uint64_t Ema, Eme, Emi, Emo, Emu, Esa, Ese, Esi, Eso, Esu;

  for (int round = 0; round < 24; round += 2) {
    ENACT_KECCAK_ROUND(A, E, kRoundConstants[round]);
    ENACT_KECCAK_ROUND(E, A, kRoundConstants[round + 1]);
  }

  st[0] = Aba, st[1] = Abe, st[2] = Abi, st[3] = Abo, st[4] = Abu;
  st[5] = Aga, st[6] = Age, st[7] = Agi, st[8] = Ago, st[9] = Agu;
  st[10] = Aka, st[11] = Ake, st[12] = Aki, st[13] = Ako, st[14] = Aku;
  st[15] = Ama, st[16] = Ame, st[17] = Ami, st[18] = Amo, st[19] = Amu;
  st[20] = Asa, st[21] = Ase, st[22] = Asi, st[23] = Aso, st[24] = Asu;
}

#undef ENACT_KECCAK_ROUND

constexpr size_t kRate = keccak256_hasher::kRate;
constexpr size_t kRateLanes = kRate / 8;

inline void absorb_block(uint64_t st[25], const uint8_t* block) noexcept {
  for (size_t i = 0; i < kRateLanes; ++i)
    st[i] ^= load_le64(block + 8 * i);
  keccak_f1600(st);
}

/// Pads the final partial block (`len` < kRate bytes), absorbs it and squeezes 32 bytes.
inline hash256 absorb_last_and_squeeze(uint64_t st[25], const uint8_t* tail, size_t len) noexcept {
  uint8_t block[kRate] = {};
  if (len != 0)
    std::memcpy(block, tail, len);
  block[len] ^= 0x01;  // Keccak (pre-FIPS 202) domain/padding byte
  block[kRate - 1] ^= 0x80;
  absorb_block(st, block);
  hash256 out;
  for (size_t i = 0; i < 4; ++i)
    store_le64(out.data() + 8 * i, st[i]);
  return out;
}

}  // namespace

hash256 keccak256(bytes_view data) noexcept {
  uint64_t st[25] = {};
  const uint8_t* p = data.data();
  size_t n = data.size();
  for (; n >= kRate; n -= kRate, p += kRate)
    absorb_block(st, p);
  return absorb_last_and_squeeze(st, p, n);
}

hash256 keccak256(std::string_view text) noexcept { return keccak256(as_bytes(text)); }

void keccak256_hasher::update(bytes_view data) noexcept {
  const uint8_t* p = data.data();
  size_t n = data.size();
  if (n == 0)
    return;  // an empty view may carry a null pointer, which memcpy must not see
  if (buffered_ != 0) {
    const size_t take = std::min(n, kRate - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    n -= take;
    if (buffered_ < kRate)
      return;
    absorb_block(state_, buffer_);
    buffered_ = 0;
  }
  for (; n >= kRate; n -= kRate, p += kRate)
    absorb_block(state_, p);
  if (n != 0) {
    std::memcpy(buffer_, p, n);
    buffered_ = n;
  }
}

hash256 keccak256_hasher::finalize() noexcept {
  const hash256 out = absorb_last_and_squeeze(state_, buffer_, buffered_);
  *this = keccak256_hasher{};
  return out;
}

}  // namespace enact::crypto
