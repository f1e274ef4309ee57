// SPDX-License-Identifier: Apache-2.0
#include "core/envelope_check.hpp"

#include <chrono>

#include "core/errors.hpp"
#include "metering/store.hpp"

namespace enact::core {

namespace env = eip712::envelope;

bool accepts_v1(env::kind k, const config& cfg) noexcept {
  return k == env::kind::create_wallet || k == env::kind::add_usage_api_key || cfg.accept_envelope_v1;
}

namespace {

env::expectation expectation_for(const config& cfg, env::kind k, const envelope_binding& binding) {
  const auto now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  env::expectation want{k, cfg.chain_id, now, cfg.envelope_max_skew, binding.expected_signer};
  want.verifying_contract = cfg.contract_address;
  want.accept_v1 = accepts_v1(k, cfg);
  want.account = binding.account;
  want.request = binding.request;
  return want;
}

/// Uses a version 2 envelope's nonce once (a version 1 envelope has none).
result<env::verified> use_nonce(const services& svc, const config& cfg, env::kind k, env::verified v) {
  if (!v.nonce)
    return v;
  if (svc.metering == nullptr)
    return fail(api_errc::unavailable, "no metering store to keep envelope nonces in");
  // Kept one second past the end of the envelope's window: after that issuedAt refuses it anyway.
  const auto expires_ms = static_cast<metering::millis>((v.issued_at + cfg.envelope_max_skew + 1) * 1000);
  ENACT_TRY(const bool first, svc.metering->use_once(env::nonce_id(k, v), expires_ms));
  if (!first)
    return fail(envelope_errc::replayed,
                "message.nonce: this envelope was used before; sign a new one (a fresh nonce) for each request");
  return v;
}

}  // namespace

result<env::verified> check_envelope(const services& svc, const config& cfg, env::kind k,
                                     const boost::json::value& typed_data, size_t serialized_size,
                                     std::string_view signature_hex, const envelope_binding& binding) {
  ENACT_TRY(auto v, env::check(typed_data, serialized_size, signature_hex, expectation_for(cfg, k, binding)));
  return use_nonce(svc, cfg, k, std::move(v));
}

result<env::verified> check_envelope(const services& svc, const config& cfg, env::kind k,
                                     std::string_view typed_data_json, std::string_view signature_hex,
                                     const envelope_binding& binding) {
  ENACT_TRY(auto v, env::check(typed_data_json, signature_hex, expectation_for(cfg, k, binding)));
  return use_nonce(svc, cfg, k, std::move(v));
}

}  // namespace enact::core
