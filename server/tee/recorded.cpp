// SPDX-License-Identifier: Apache-2.0
#include "tee/recorded.hpp"

#include <boost/json.hpp>

#include "tee/errors.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"

namespace enact::tee::detail {
namespace {

namespace json = boost::json;

// TDX quote v4: a 48-byte header, then the TD report body (tests/fixtures/tdx/README.md §3).
constexpr size_t kBody = 48;
constexpr size_t kBodySize = 584;
constexpr size_t kMrTd = 136;
constexpr size_t kRtmr0 = 328;
constexpr size_t kMeasurement = 48;

constexpr std::string_view kFixtureSource =
    "Dstack-TEE/dstack-examples@f9cc05ee808219bbcdd7ed4aa3fb340aedccb3a3 "
    "attestation/rtmr3-based/report.json";

error bad(std::string what) { return fail(tee_errc::failed, "recorded attestation fixture: " + std::move(what)); }

std::string simulated_vm_config() {
  return json::serialize(
      json::object{{"simulated", true},
                   {"note",
                    "This quote is a recorded fixture, not evidence about this machine: a real Intel TDX quote "
                    "and event log of another confidential VM, published as an example. This enact-server runs "
                    "the simulated TEE, whose keys live in a file of its data directory. The evidence "
                    "quote.json carries the same recorded quote, so the report_data inside that quote does "
                    "not match SHA-256(sha256sum.txt)."},
                   {"fixture", kFixtureSource}});
}

/// The payload (hex) of the first runtime event named `name`.
result<std::string> event_payload(const json::array& log, std::string_view name) {
  for (const auto& e : log) {
    const auto* o = e.if_object();
    if (o == nullptr)
      continue;
    const auto* ev = o->if_contains("event");
    const auto* payload = o->if_contains("event_payload");
    if (ev != nullptr && ev->is_string() && ev->get_string() == name && payload != nullptr && payload->is_string())
      return std::string(payload->get_string());
  }
  return bad("the event log has no '" + std::string(name) + "' event");
}

}  // namespace

result<recorded_attestation> load_recorded() {
  std::error_code ec;
  const json::value report = json::parse(recorded_report_file(), ec);
  if (ec || !report.is_object())
    return bad("report.json is not a JSON object");
  const auto* quote_hex = report.as_object().if_contains("quote");
  const auto* log_text = report.as_object().if_contains("event_log");
  if (quote_hex == nullptr || !quote_hex->is_string() || log_text == nullptr || !log_text->is_string())
    return bad("report.json lacks the quote or event_log string");
  auto quote = codec::hex::decode(quote_hex->get_string(), "quote");
  if (!quote)
    return bad(quote.err().message);
  if (quote->size() < kBody + kBodySize)
    return bad("the quote is shorter than a TD report");
  json::value log = json::parse(log_text->get_string(), ec);
  if (ec || !log.is_array())
    return bad("event_log is not a JSON array");

  const std::string_view compose = recorded_app_compose_file();
  const std::string compose_hash = codec::hex::encode(crypto::sha256(as_bytes(compose)));
  ENACT_TRY(const std::string logged_compose_hash, event_payload(log.as_array(), "compose-hash"));
  ENACT_TRY(const std::string app_id, event_payload(log.as_array(), "app-id"));
  if (logged_compose_hash != compose_hash)
    return bad("SHA-256 of app-compose.json differs from the compose-hash event");

  const auto measurement = [&](size_t offset) {
    return codec::hex::encode(bytes_view(*quote).subspan(kBody + offset, kMeasurement));
  };
  json::object tcb{{"mrtd", measurement(kMrTd)}};
  for (size_t i = 0; i < 4; ++i)
    tcb["rtmr" + std::to_string(i)] = measurement(kRtmr0 + i * kMeasurement);
  tcb["compose_hash"] = compose_hash;
  tcb["app_compose"] = compose;
  tcb["event_log"] = std::move(log);

  recorded_attestation r;
  r.quote.quote = std::move(*quote);
  r.quote.event_log = std::string(log_text->get_string());
  r.quote.vm_config = simulated_vm_config();
  r.info.app_id = app_id;
  r.info.compose_hash = compose_hash;
  r.info.tcb_info = json::serialize(tcb);
  r.info.vm_config = r.quote.vm_config;
  return r;
}

}  // namespace enact::tee::detail
