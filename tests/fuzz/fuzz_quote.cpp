// SPDX-License-Identifier: Apache-2.0
// The attestation parsers (attest/quote.hpp and its neighbours). The input's first byte selects
// what the rest is (its value modulo 7):
//   0  a binary quote         parse_quote, then verify_quote at a fixed time (PCK chain, X.509)
//   1  a hex quote            parse_quote_hex, which must agree with parse_quote of the bytes
//   2  attestation JSON       verify_attestation ({"quote", "event_log"})
//   3  a dstack event log     parse_event_log, replay
//   4  collateral JSON        parse_collateral
//   5  a DNS response         parse_caa_answer, parse_caa_issue_value of each record
//   6  /info JSON             parse_app_info, verify_app against its own event log; compose_images
// Never crashes; a parsed quote parses again from its `raw` bytes to the same quote, and its JSON
// form is built without throwing.
#include "enact/attest/app.hpp"
#include "enact/attest/network.hpp"
#include "enact/attest/quote.hpp"
#include "enact/codec/hex.hpp"
#include "fuzz.hpp"

using namespace enact;

namespace {

// 2025-06-01T00:00:00Z: inside the validity of the sample quotes' PCK chains, so the seeds reach
// the later checks.
constexpr int64_t kNow = 1748736000;

void check_quote(const attest::quote& q) {
  fuzz::require(q.td.has_value() != q.enclave.has_value(), "quote: exactly one body");
  fuzz::require(q.signed_size <= q.raw.size(), "quote: signed size beyond the raw bytes");
  const auto again = attest::parse_quote(q.raw);
  fuzz::require(again && attest::to_json(*again) == attest::to_json(q), "quote: parse_quote(q.raw) differs from q");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const bytes_view in = fuzz::view(data + 1, size - 1);
  const std::string_view text = fuzz::text(data + 1, size - 1);
  attest::quote_options options;
  options.now = kNow;
  switch (data[0] % 7) {
    case 0: {
      const auto q = attest::parse_quote(in);
      if (!q)
        break;
      check_quote(*q);
      const auto r = attest::verify_quote(in, options);
      fuzz::require(r.has_value(), "quote: verify_quote fails on a quote that parses");
      (void)attest::to_json(*r);
      break;
    }
    case 1: {
      const auto q = attest::parse_quote_hex(text);
      if (q)
        check_quote(*q);
      const auto digits = codec::hex::decode(text);
      if (digits) {
        const auto direct = attest::parse_quote(*digits);
        fuzz::require(direct.has_value() == q.has_value() && (!q || attest::to_json(*q) == attest::to_json(*direct)),
                      "quote: parse_quote_hex disagrees with parse_quote");
      }
      break;
    }
    case 2: {
      if (const auto r = attest::verify_attestation(text, options))
        (void)attest::to_json(*r);
      break;
    }
    case 3: {
      auto log = attest::parse_event_log(text);
      if (!log)
        break;
      const size_t events = log->events.size();
      const auto replayed = attest::replay(*log);
      fuzz::require(log->events.size() == events, "event log: replay changed the event count");
      fuzz::require(replayed.digests_computed <= events, "event log: more digests than events");
      break;
    }
    case 4:
      (void)attest::parse_collateral(text);
      break;
    case 5: {
      const auto records = attest::parse_caa_answer(in);
      if (!records)
        break;
      for (const auto& r : *records)
        (void)attest::parse_caa_issue_value(r.value);
      break;
    }
    default: {
      if (const auto info = attest::parse_app_info(text))
        (void)attest::to_json(attest::verify_app(*info, info->event_log_in_info.value_or(attest::event_log{})));
      (void)attest::compose_images(text);
      break;
    }
  }
  return 0;
}
