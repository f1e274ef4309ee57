// SPDX-License-Identifier: Apache-2.0
// ECDSA over secp256k1 through libsecp256k1 (with its recovery module). One context is created
// on first use, randomised (side-channel blinding) and shared read-only by every thread, as the
// library recommends. Private-key bytes are handed to the library straight from the Secret's
// storage; any stack copy made here is wiped before returning.
#include "enact/crypto/secp256k1.hpp"

#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <algorithm>
#include <string>

#include "enact/crypto/keccak.hpp"
#include "enact/crypto/random.hpp"

namespace enact::crypto::secp256k1 {
namespace {

// Group order n and n/2, big-endian (SEC 2 §2.4.1).
constexpr std::array<uint8_t, 32> kOrder = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48,
                                            0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
constexpr std::array<uint8_t, 32> kHalfOrder = {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                0xff, 0xff, 0xff, 0xff, 0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4,
                                                0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0};

struct context_holder {
  secp256k1_context* ctx;
  context_holder() : ctx(secp256k1_context_create(SECP256K1_CONTEXT_NONE)) {
    std::array<uint8_t, 32> seed{};
    random_bytes(seed);
    // Randomisation blinds the signing computation against side channels. libsecp256k1 only
    // refuses it for its static context, which this is not; an unblinded context stays correct.
    if (secp256k1_context_randomize(ctx, seed.data()) != 1) {
    }
    detail::secure_wipe(seed.data(), seed.size());
  }
  ~context_holder() { secp256k1_context_destroy(ctx); }
  context_holder(const context_holder&) = delete;
  context_holder& operator=(const context_holder&) = delete;
};

const secp256k1_context* context() {
  static const context_holder holder;
  return holder.ctx;
}

bool is_zero(const std::array<uint8_t, 32>& x) noexcept {
  return std::all_of(x.begin(), x.end(), [](uint8_t b) { return b == 0; });
}

/// Big-endian comparison (signature components are public, so no constant-time need).
bool greater_or_equal(const std::array<uint8_t, 32>& a, const std::array<uint8_t, 32>& b) noexcept {
  return !std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}
bool greater(const std::array<uint8_t, 32>& a, const std::array<uint8_t, 32>& b) noexcept {
  return std::lexicographical_compare(b.begin(), b.end(), a.begin(), a.end());
}

result<void> check_components(const signature& sig) {
  if (sig.v > 1)
    return fail(secp256k1_errc::bad_recovery_id, "signature: recovery id must be 0 or 1, got " + std::to_string(sig.v));
  if (is_zero(sig.r) || greater_or_equal(sig.r, kOrder))
    return fail(secp256k1_errc::r_out_of_range, "signature: r is zero or not below the group order");
  if (is_zero(sig.s) || greater_or_equal(sig.s, kOrder))
    return fail(secp256k1_errc::s_out_of_range, "signature: s is zero or not below the group order");
  if (greater(sig.s, kHalfOrder))
    return fail(secp256k1_errc::high_s, "signature: s is above n/2 (malleable form, EIP-2)");
  return {};
}

result<void> check_private_key(const Secret& key) {
  if (!is_valid_private_key(key.view()))
    return fail(secp256k1_errc::invalid_private_key,
                "private key: must be 32 bytes, non-zero and below the group order");
  return {};
}

public_key serialize(const secp256k1_pubkey& pk) {
  std::array<uint8_t, 65> full{};
  size_t len = full.size();
  (void)secp256k1_ec_pubkey_serialize(context(), full.data(), &len, &pk, SECP256K1_EC_UNCOMPRESSED);
  public_key out;
  std::copy(full.begin() + 1, full.end(), out.begin());
  return out;
}

}  // namespace

std::array<uint8_t, 65> signature::to_bytes() const {
  std::array<uint8_t, 65> out{};
  std::copy(r.begin(), r.end(), out.begin());
  std::copy(s.begin(), s.end(), out.begin() + 32);
  out[64] = static_cast<uint8_t>(27 + v);
  return out;
}

result<signature> signature::from_bytes(bytes_view sig65) {
  if (sig65.size() != 65)
    return fail(secp256k1_errc::bad_signature_length,
                "signature: expected 65 bytes, got " + std::to_string(sig65.size()));
  const uint8_t v = sig65[64];
  if (v != 0 && v != 1 && v != 27 && v != 28)
    return fail(secp256k1_errc::bad_recovery_id, "signature: v must be 0, 1, 27 or 28, got " + std::to_string(v));
  signature sig;
  std::copy(sig65.begin(), sig65.begin() + 32, sig.r.begin());
  std::copy(sig65.begin() + 32, sig65.begin() + 64, sig.s.begin());
  sig.v = static_cast<uint8_t>(v >= 27 ? v - 27 : v);
  ENACT_TRY_VOID(check_components(sig));
  return sig;
}

bool is_valid_private_key(bytes_view key) noexcept {
  if (key.size() != 32)
    return false;
  try {
    return secp256k1_ec_seckey_verify(context(), key.data()) == 1;
  } catch (...) {
    // Creating the context needs the random generator; without it, no key is usable.
    return false;
  }
}

result<signature> sign(const hash256& digest, const Secret& private_key) {
  ENACT_TRY_VOID(check_private_key(private_key));
  secp256k1_ecdsa_recoverable_signature rsig;
  // nullptr nonce function = RFC 6979; libsecp256k1 always returns the low-s form.
  if (secp256k1_ecdsa_sign_recoverable(context(), &rsig, digest.data(), private_key.view().data(), nullptr, nullptr) !=
      1)
    return fail(secp256k1_errc::signing_failed, "sign: libsecp256k1 could not sign");
  std::array<uint8_t, 64> compact{};
  int recid = 0;
  (void)secp256k1_ecdsa_recoverable_signature_serialize_compact(context(), compact.data(), &recid, &rsig);
  signature sig;
  std::copy(compact.begin(), compact.begin() + 32, sig.r.begin());
  std::copy(compact.begin() + 32, compact.end(), sig.s.begin());
  sig.v = static_cast<uint8_t>(recid);
  return sig;
}

result<public_key> public_key_of(const Secret& private_key) {
  ENACT_TRY_VOID(check_private_key(private_key));
  secp256k1_pubkey pk;
  if (secp256k1_ec_pubkey_create(context(), &pk, private_key.view().data()) != 1)
    return fail(secp256k1_errc::invalid_private_key, "private key: rejected by libsecp256k1");
  return serialize(pk);
}

result<public_key> recover(const hash256& digest, const signature& sig) {
  ENACT_TRY_VOID(check_components(sig));
  std::array<uint8_t, 64> compact{};
  std::copy(sig.r.begin(), sig.r.end(), compact.begin());
  std::copy(sig.s.begin(), sig.s.end(), compact.begin() + 32);
  secp256k1_ecdsa_recoverable_signature rsig;
  if (secp256k1_ecdsa_recoverable_signature_parse_compact(context(), &rsig, compact.data(), sig.v) != 1)
    return fail(secp256k1_errc::r_out_of_range, "signature: r or s not below the group order");
  secp256k1_pubkey pk;
  if (secp256k1_ecdsa_recover(context(), &pk, &rsig, digest.data()) != 1)
    return fail(secp256k1_errc::recovery_failed, "signature: no public key recovers from this signature and digest");
  return serialize(pk);
}

result<address> recover_address(const hash256& digest, bytes_view sig65) {
  ENACT_TRY(const signature sig, signature::from_bytes(sig65));
  ENACT_TRY(const public_key pk, recover(digest, sig));
  return to_address(pk);
}

address to_address(const public_key& key) noexcept {
  const hash256 h = keccak256(bytes_view(key));
  address out;
  std::copy(h.begin() + 12, h.end(), out.begin());
  return out;
}

std::array<uint8_t, 33> compress(const public_key& key) noexcept {
  std::array<uint8_t, 33> out{};
  out[0] = static_cast<uint8_t>(0x02 | (key[63] & 1));
  std::copy(key.begin(), key.begin() + 32, out.begin() + 1);
  return out;
}

}  // namespace enact::crypto::secp256k1
