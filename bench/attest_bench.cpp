// SPDX-License-Identifier: Apache-2.0
// Benchmarks of TDX quote verification (enact::attest) on real dstack data
// (tests/fixtures/tdx: dstack/verifier-quote-report.json, a quote with its 28-event log, and
// dcap-qvl/tdx_quote_outdated_collateral.json, collateral for the same FMSPC), each paired with
// its floor: the ECDSA-P256 verifications the same verification performs, with the same keys and
// messages, called on OpenSSL directly with everything parsed beforehand. The ratio is the price
// of parsing, chain building, CRL lookups, JSON and replay around the signatures.
//   - BM_attest_verify_quote: quote signature, QE report signature, QE report data, PCK chain to
//     the Intel root, debug bit, RTMR replay of the event log;
//     floor BM_attest_floor_ecdsa: 4 verifications (quote, QE report, PCK leaf, PCK CA).
//   - BM_attest_verify_quote_collateral: the same plus TCB info and QE identity (chains,
//     signatures, CRLs, TCB matching); floor BM_attest_floor_ecdsa_collateral: the 9 distinct
//     signatures (the 4, the two signed JSON texts, the TCB signing certificate both are issued
//     under, the root CA and PCK CA CRLs). OpenSSL checks a CRL's signature each time a chain
//     uses it, so the verifier makes a few more.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <boost/json.hpp>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "attest/x509.hpp"  // the SDK's r ‖ s to DER conversion (sdk/src)
#include "enact/attest/quote.hpp"
#include "enact/codec/hex.hpp"

namespace {

using enact::attest::detail::ecdsa_der;

constexpr int64_t kNow = 1774003274;  // expectations.json cross-dstack-verifier-quote

std::string read(const std::string& rel) {
  std::ifstream f(std::string(ENACT_FIXTURES_DIR) + "/tdx/" + rel, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct one_verify {
  EVP_PKEY* key = nullptr;
  std::vector<uint8_t> message;
  std::vector<uint8_t> der_sig;
};

EVP_PKEY* raw_p256(const uint8_t* xy) {
  static const uint8_t kSpki[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
                                  0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04};
  std::vector<uint8_t> der(std::begin(kSpki), std::end(kSpki));
  der.insert(der.end(), xy, xy + 64);
  const unsigned char* p = der.data();
  return d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size()));
}

std::vector<X509*> pem_certs(const std::string& pem) {
  std::vector<X509*> out;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr))
    out.push_back(c);
  BIO_free(bio);
  return out;
}

/// The TBS bytes and signature of a certificate or CRL (`encode_tbs` and `signature` read them),
/// to be checked with the issuer's key.
template <class Signed, class EncodeTbs, class Signature>
one_verify signed_by(Signed* item, X509* issuer, EncodeTbs encode_tbs, Signature signature) {
  one_verify v;
  v.key = X509_get0_pubkey(issuer);
  unsigned char* tbs = nullptr;
  const int n = encode_tbs(item, &tbs);
  v.message.assign(tbs, tbs + n);
  OPENSSL_free(tbs);
  const ASN1_BIT_STRING* sig = signature(item);
  v.der_sig.assign(sig->data, sig->data + sig->length);
  return v;
}

one_verify cert_verify(X509* cert, X509* issuer) {
  return signed_by(cert, issuer, i2d_re_X509_tbs, [](X509* c) {
    const ASN1_BIT_STRING* sig = nullptr;
    X509_get0_signature(&sig, nullptr, c);
    return sig;
  });
}

one_verify crl_verify(X509_CRL* crl, X509* issuer) {
  return signed_by(crl, issuer, i2d_re_X509_CRL_tbs, [](X509_CRL* c) {
    const ASN1_BIT_STRING* sig = nullptr;
    X509_CRL_get0_signature(c, &sig, nullptr);
    return sig;
  });
}

struct fixture {
  std::vector<uint8_t> quote;
  enact::attest::event_log log;
  enact::attest::quote_collateral collateral;
  std::vector<one_verify> floor;             // without collateral
  std::vector<one_verify> floor_collateral;  // with collateral
  bool ok = false;

  fixture() {
    const std::string report = read("dstack/verifier-quote-report.json");
    const std::string coll = read("dcap-qvl/tdx_quote_outdated_collateral.json");
    if (report.empty() || coll.empty())
      return;
    const boost::json::value doc = boost::json::parse(report);
    quote = enact::codec::hex::decode(doc.at("quote").as_string()).value();
    log = enact::attest::event_log_from_json(doc.at("event_log")).value();
    collateral = enact::attest::parse_collateral(coll).value();
    const auto q = enact::attest::parse_quote(quote).value();

    std::vector<X509*> pck = pem_certs(q.pck_chain_pem);  // leaf, PCK CA, root
    EVP_PKEY* ak = raw_p256(q.attestation_key.data());
    const auto signed_data = q.signed_data();
    floor.push_back({ak, {signed_data.begin(), signed_data.end()}, ecdsa_der(q.signature)});
    floor.push_back({X509_get0_pubkey(pck[0]), q.qe_report_bytes, ecdsa_der(q.qe_report_signature)});
    floor.push_back(cert_verify(pck[0], pck[1]));
    floor.push_back(cert_verify(pck[1], pck[2]));

    floor_collateral = floor;
    std::vector<X509*> tcb = pem_certs(collateral.tcb_info_issuer_chain);  // signing cert, root
    std::vector<X509*> qe = pem_certs(collateral.qe_identity_issuer_chain);
    floor_collateral.push_back({X509_get0_pubkey(tcb[0]),
                                {collateral.tcb_info.begin(), collateral.tcb_info.end()},
                                ecdsa_der(collateral.tcb_info_signature)});
    floor_collateral.push_back({X509_get0_pubkey(qe[0]),
                                {collateral.qe_identity.begin(), collateral.qe_identity.end()},
                                ecdsa_der(collateral.qe_identity_signature)});
    floor_collateral.push_back(cert_verify(tcb[0], tcb[1]));  // the QE identity's chain too
    const unsigned char* p = collateral.root_ca_crl.data();
    X509_CRL* root_crl = d2i_X509_CRL(nullptr, &p, static_cast<long>(collateral.root_ca_crl.size()));
    p = collateral.pck_crl.data();
    X509_CRL* pck_crl = d2i_X509_CRL(nullptr, &p, static_cast<long>(collateral.pck_crl.size()));
    floor_collateral.push_back(crl_verify(root_crl, pck[2]));
    floor_collateral.push_back(crl_verify(pck_crl, pck[1]));
    ok = true;
  }
};

const fixture& data() {
  static const fixture f;
  return f;
}

bool verify_all(const std::vector<one_verify>& list, EVP_MD_CTX* ctx) {
  bool ok = true;
  for (const auto& v : list) {
    EVP_MD_CTX_reset(ctx);
    ok = ok && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, v.key) == 1 &&
         EVP_DigestVerify(ctx, v.der_sig.data(), v.der_sig.size(), v.message.data(), v.message.size()) == 1;
  }
  return ok;
}

/// The fixtures, or null (the benchmark skipped) when they are not there.
const fixture* loaded(benchmark::State& state) {
  const fixture& f = data();
  if (!f.ok) {
    state.SkipWithError("fixtures not found under ENACT_FIXTURES_DIR/tdx");
    return nullptr;
  }
  return &f;
}

/// verify_quote of the recorded quote at kNow, with the collateral or without it.
void verify_quote_loop(benchmark::State& state, bool with_collateral) {
  const fixture* f = loaded(state);
  if (f == nullptr)
    return;
  enact::attest::quote_options o;
  o.now = kNow;
  o.log = f->log;
  if (with_collateral)
    o.collateral = f->collateral;
  for (auto _ : state) {
    auto r = enact::attest::verify_quote(f->quote, o);
    if (!r || !r->passed()) {
      state.SkipWithError("verification failed");
      break;
    }
    benchmark::DoNotOptimize(r);
  }
}

/// The ECDSA verifications of `floor` alone, each pass.
void floor_loop(benchmark::State& state, std::vector<one_verify> fixture::*floor) {
  const fixture* f = loaded(state);
  if (f == nullptr)
    return;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  for (auto _ : state)
    if (!verify_all(f->*floor, ctx)) {
      state.SkipWithError("a floor verification failed");
      break;
    }
  EVP_MD_CTX_free(ctx);
}

void BM_attest_verify_quote(benchmark::State& state) { verify_quote_loop(state, false); }
BENCHMARK(BM_attest_verify_quote);

void BM_attest_floor_ecdsa(benchmark::State& state) { floor_loop(state, &fixture::floor); }
BENCHMARK(BM_attest_floor_ecdsa);

void BM_attest_verify_quote_collateral(benchmark::State& state) { verify_quote_loop(state, true); }
BENCHMARK(BM_attest_verify_quote_collateral);

void BM_attest_floor_ecdsa_collateral(benchmark::State& state) { floor_loop(state, &fixture::floor_collateral); }
BENCHMARK(BM_attest_floor_ecdsa_collateral);

}  // namespace

BENCHMARK_MAIN();
