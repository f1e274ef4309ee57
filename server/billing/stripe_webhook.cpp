// SPDX-License-Identifier: Apache-2.0
#include "billing/stripe_webhook.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>

#include <array>
#include <charconv>
#include <optional>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/secret.hpp"

namespace enact::billing {
namespace {

namespace json = boost::json;

[[nodiscard]] std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view{};
}

}  // namespace

std::string stripe_signature(std::string_view payload, bytes_view secret, int64_t timestamp) {
  const std::string signed_text = std::to_string(timestamp) + "." + std::string(payload);
  std::array<uint8_t, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac.data(), &len) == nullptr)
    return {};
  return codec::hex::encode(bytes_view(mac.data(), len));
}

result<void> verify_stripe_signature(std::string_view payload, std::string_view header, bytes_view secret, int64_t now,
                                     int64_t tolerance_s) {
  if (header.empty())
    return fail(billing_errc::signature_invalid, "Stripe-Signature: missing; the body is not signed");
  if (header.size() > kMaxSignatureHeader)
    return fail(billing_errc::signature_invalid, "Stripe-Signature: too long");
  std::optional<int64_t> t;
  std::vector<std::string_view> v1;
  for (size_t start = 0; start <= header.size();) {
    size_t end = header.find(',', start);
    if (end == std::string_view::npos)
      end = header.size();
    const std::string_view part = header.substr(start, end - start);
    start = end + 1;
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      continue;
    const std::string_view k = part.substr(0, eq);
    const std::string_view v = part.substr(eq + 1);
    if (k == "t") {
      int64_t n = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc{} || p != v.data() + v.size() || n <= 0 || t)
        return fail(billing_errc::signature_invalid, "Stripe-Signature: t is not one Unix timestamp");
      t = n;
    } else if (k == "v1") {
      v1.push_back(v);
    }
  }
  if (!t)
    return fail(billing_errc::signature_invalid, "Stripe-Signature: no timestamp (t=)");
  if (v1.empty())
    return fail(billing_errc::signature_invalid, "Stripe-Signature: no v1 signature");
  const std::string expected = stripe_signature(payload, secret, *t);
  if (expected.empty())
    return fail(billing_errc::signature_invalid, "Stripe-Signature: the signature could not be computed");
  bool match = false;
  for (const std::string_view candidate : v1)
    match |= candidate.size() == expected.size() && constant_time_equal(as_bytes(candidate), as_bytes(expected));
  if (!match)
    return fail(billing_errc::signature_invalid,
                "Stripe-Signature: no v1 signature matches the endpoint secret over this body");
  if (*t < now - tolerance_s || *t > now + tolerance_s)
    return fail(billing_errc::signature_expired, "Stripe-Signature: signed at " + std::to_string(*t) + ", more than " +
                                                     std::to_string(tolerance_s) + " s from this server's clock");
  return {};
}

result<webhook_event> parse_stripe_event(std::string_view payload) {
  std::error_code ec;
  const json::value v = json::parse(payload, ec);
  if (ec || !v.is_object())
    return fail(billing_errc::bad_event, "stripe event: not a JSON object");
  const json::object& o = v.get_object();
  webhook_event ev;
  ev.id = string_at(o, "id");
  ev.type = string_at(o, "type");
  if (ev.id.empty() || ev.type.empty())
    return fail(billing_errc::bad_event, "stripe event: id and type are required");
  const auto* data = o.if_contains("data");
  const json::value* object = data != nullptr && data->is_object() ? data->get_object().if_contains("object") : nullptr;
  if (object == nullptr || !object->is_object())
    return fail(billing_errc::bad_event, "stripe event: data.object is required");
  const json::object& obj = object->get_object();
  if (string_at(obj, "object") != "payment_intent")
    return ev;  // not about a payment intent: read no further
  payment_intent& pi = ev.intent;
  pi.id = string_at(obj, "id");
  pi.currency = string_at(obj, "currency");
  pi.status = string_at(obj, "status");
  const auto* amount = obj.if_contains("amount");
  if (pi.id.empty() || amount == nullptr || !(amount->is_uint64() || (amount->is_int64() && amount->get_int64() >= 0)))
    return fail(billing_errc::bad_event, "stripe event: the payment intent needs an id and a non-negative amount");
  pi.amount_cents = amount->is_uint64() ? amount->get_uint64() : static_cast<uint64_t>(amount->get_int64());
  if (const auto* md = obj.if_contains("metadata"); md != nullptr && md->is_object())
    ev.account_ref = string_at(md->get_object(), "account");
  return ev;
}

}  // namespace enact::billing
