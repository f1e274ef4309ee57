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

/// A field that is an id or the expanded object carrying it (Stripe's expandable fields).
[[nodiscard]] std::string_view id_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v != nullptr && v->is_object())
    return string_at(v->get_object(), "id");
  return string_at(o, key);
}

[[nodiscard]] std::optional<uint64_t> amount_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v != nullptr && v->is_uint64())
    return v->get_uint64();
  if (v != nullptr && v->is_int64() && v->get_int64() >= 0)
    return static_cast<uint64_t>(v->get_int64());
  return std::nullopt;
}

/// A charge (charge.refunded: its cumulative amount_refunded) or a dispute (charge.dispute.*: its
/// amount and status), with the payment intent when the object names it.
result<webhook_event> read_charge(webhook_event& ev, const json::object& obj, std::string_view kind) {
  charge_object& c = ev.charge;
  c.object = kind;
  c.id = string_at(obj, "id");
  c.charge = kind == "charge" ? c.id : std::string(id_at(obj, "charge"));
  c.payment_intent = id_at(obj, "payment_intent");
  c.currency = string_at(obj, "currency");
  c.status = string_at(obj, "status");
  const auto amount = amount_at(obj, kind == "charge" ? "amount_refunded" : "amount");
  if (c.id.empty() || c.charge.empty() || !amount)
    return fail(billing_errc::bad_event,
                "stripe event: the " + std::string(kind) + " needs an id, a charge and a " +
                    (kind == "charge" ? "non-negative amount_refunded" : "non-negative amount"));
  c.amount_cents = *amount;
  return ev;
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
  const std::string_view kind = string_at(obj, "object");
  // Read only for the events acted on: a charge.succeeded lacking a refund's fields is no error.
  if ((kind == "charge" && ev.type == "charge.refunded") ||
      (kind == "dispute" && ev.type.starts_with("charge.dispute.")))
    return read_charge(ev, obj, kind);
  if (kind != "payment_intent")
    return ev;  // neither a payment intent, a charge nor a dispute: read no further
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
