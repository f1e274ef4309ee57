// SPDX-License-Identifier: Apache-2.0
// Benchmarks of the SDK's hot paths. Each group has its baseline in the same binary, so figures
// are read as ratios measured in one run (see bench/run and docs/benchmarks.md):
//   - envelope verification against bare libsecp256k1 recovery plus the two keccak-256 calls any
//     verifier needs (the EIP-712 digest's outer hash and the public key's hash);
//   - CIDv0 / CIDv1 of a file against SHA-256 of the same bytes (the hash the CID is built on).
#include <benchmark/benchmark.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <cstring>
#include <string>

#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/crypto/sha2.hpp"
#include "enact/eip712/envelope.hpp"
#include "enact/eip712/typed_data.hpp"
#include "enact/ipfs/cid.hpp"

namespace {

constexpr uint64_t kChainId = 8453;
constexpr uint64_t kIssuedAt = 1800000000;

enact::Secret fixed_key() {
  auto raw =
      enact::codec::hex::decode_fixed<32>("0xb5d57e5d91b9c0444a8b06d2716d5b140f78c38d5af7f1ce06f57672e1261d14", "key");
  return enact::Secret(enact::bytes_view(raw->data(), raw->size()));
}

struct envelope_fixture {
  std::string typed_data_json;
  std::string signature_hex;
  enact::eip712::envelope::expectation want;
  enact::hash256 digest;
  std::array<uint8_t, 65> sig65;

  envelope_fixture() {
    auto env = enact::eip712::envelope::sign(enact::eip712::envelope::kind::add_usage_api_key, kChainId, fixed_key(),
                                             kIssuedAt)
                   .value();
    typed_data_json = boost::json::serialize(env.typed_data);
    signature_hex = env.signature;
    want = {enact::eip712::envelope::kind::add_usage_api_key, kChainId, kIssuedAt + 10};
    digest = enact::eip712::digest(enact::eip712::parse(typed_data_json).value()).value();
    auto sig = enact::codec::hex::decode(signature_hex).value();
    std::memcpy(sig65.data(), sig.data(), 65);
  }
};

const envelope_fixture& envelope_case() {
  static const envelope_fixture f;
  return f;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>((i * 31 + 7) & 0xff);
  return s;
}

// --- keccak ---------------------------------------------------------------------------------

/// `f` over state.range(0) bytes of pattern() per iteration, reported as bytes per second.
template <class F>
void bytes_per_second(benchmark::State& state, F f) {
  const std::string data = pattern(static_cast<size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(f(enact::as_bytes(data)));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void BM_keccak256(benchmark::State& state) {
  bytes_per_second(state, [](enact::bytes_view b) { return enact::crypto::keccak256(b); });
}
BENCHMARK(BM_keccak256)->Arg(32)->Arg(4096);

// --- envelope ---------------------------------------------------------------------------------

// Full server-side check: JSON parse, canonical types, domain, chainId, issuedAt, digest, recovery.
void BM_envelope_verify(benchmark::State& state) {
  const auto& f = envelope_case();
  for (auto _ : state) {
    auto signer = enact::eip712::envelope::verify(f.typed_data_json, f.signature_hex, f.want);
    if (!signer)
      state.SkipWithError("verify failed");
    benchmark::DoNotOptimize(signer);
  }
}
BENCHMARK(BM_envelope_verify);

// The EIP-712 digest of the envelope from its JSON text (parse + hashStruct + domain separator).
void BM_envelope_digest(benchmark::State& state) {
  const auto& f = envelope_case();
  for (auto _ : state) {
    auto td = enact::eip712::parse(f.typed_data_json);
    benchmark::DoNotOptimize(enact::eip712::digest(td.value()));
  }
}
BENCHMARK(BM_envelope_digest);

// Baseline: what any verifier must do at least, with libsecp256k1 called directly: the outer
// keccak of 0x1901 ‖ domainSeparator ‖ structHash, recovery, and the public key's keccak.
void BM_baseline_recover_keccak(benchmark::State& state) {
  const auto& f = envelope_case();
  secp256k1_context* ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  std::array<uint8_t, 66> preimage{0x19, 0x01};
  for (size_t i = 2; i < preimage.size(); ++i)
    preimage[i] = static_cast<uint8_t>(i);
  for (auto _ : state) {
    auto h = enact::crypto::keccak256(enact::bytes_view(preimage.data(), preimage.size()));
    benchmark::DoNotOptimize(h);
    secp256k1_ecdsa_recoverable_signature rsig;
    secp256k1_pubkey pub;
    std::array<uint8_t, 65> ser;
    size_t len = ser.size();
    if (!secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &rsig, f.sig65.data(), f.sig65[64] - 27) ||
        !secp256k1_ecdsa_recover(ctx, &pub, &rsig, f.digest.data()) ||
        !secp256k1_ec_pubkey_serialize(ctx, ser.data(), &len, &pub, SECP256K1_EC_UNCOMPRESSED)) {
      state.SkipWithError("recover failed");
      break;
    }
    benchmark::DoNotOptimize(enact::crypto::keccak256(enact::bytes_view(ser.data() + 1, 64)));
  }
  secp256k1_context_destroy(ctx);
}
BENCHMARK(BM_baseline_recover_keccak);

void BM_envelope_sign(benchmark::State& state) {
  const auto key = fixed_key();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        enact::eip712::envelope::sign(enact::eip712::envelope::kind::add_usage_api_key, kChainId, key, kIssuedAt));
}
BENCHMARK(BM_envelope_sign);

// --- ABI ---------------------------------------------------------------------------------------

// setUsageApiKey calldata, the registry write behind /add_usage_api_key.
void BM_abi_encode_setUsageApiKey(benchmark::State& state) {
  using enact::codec::abi::value;
  using namespace enact::literals;
  const std::string sig =
      "setUsageApiKey(uint256,uint256,uint256,uint256,string,string,"
      "(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))";
  const std::vector<value> groups{value::number(1_u256), value::number(2_u256), value::number(3_u256)};
  const std::vector<value> args{
      value::number(0x1234567890abcdef_u256),
      value::number(0xfedcba0987654321_u256),
      value::number(1900000000_u256),
      value::number(1000000_u256),
      value::text("ci deploy key"),
      value::text("used by the deploy pipeline"),
      value::list({value::boolean(true), value::boolean(false), value::boolean(true), value::list(groups),
                   value::list(groups), value::list({}), value::list(groups)})};
  for (auto _ : state)
    benchmark::DoNotOptimize(enact::codec::abi::encode_call(sig, args));
}
BENCHMARK(BM_abi_encode_setUsageApiKey);

// --- RLP ---------------------------------------------------------------------------------------

void BM_rlp_decode_tx_like(benchmark::State& state) {
  // An EIP-1559 transaction's field list: 12 items, one 4 KiB data field.
  using enact::codec::rlp::item;
  std::vector<item> fields;
  for (int i = 0; i < 7; ++i)
    fields.push_back(item::uint(static_cast<uint64_t>(1000 + i)));
  fields.push_back(item::string(enact::as_bytes(pattern(4096))));
  fields.push_back(item::list({}));
  for (int i = 0; i < 3; ++i)
    fields.push_back(item::string(enact::as_bytes(pattern(32))));
  const auto encoded = enact::codec::rlp::encode(item::list(std::move(fields)));
  for (auto _ : state)
    benchmark::DoNotOptimize(enact::codec::rlp::decode(encoded));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * encoded.size()));
}
BENCHMARK(BM_rlp_decode_tx_like);

// --- CIDs --------------------------------------------------------------------------------------

void BM_cid_v0(benchmark::State& state) {
  bytes_per_second(state, [](enact::bytes_view b) { return enact::ipfs::cid_v0_of(b); });
}
BENCHMARK(BM_cid_v0)->Arg(1024)->Arg(1 << 20);

void BM_cid_v1(benchmark::State& state) {
  bytes_per_second(state, [](enact::bytes_view b) { return enact::ipfs::cid_v1_of(b); });
}
BENCHMARK(BM_cid_v1)->Arg(1024)->Arg(1 << 20);

// Baseline: SHA-256 of the same bytes in one call.
void BM_baseline_sha256(benchmark::State& state) {
  bytes_per_second(state, [](enact::bytes_view b) { return enact::crypto::sha256(b); });
}
BENCHMARK(BM_baseline_sha256)->Arg(1024)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
