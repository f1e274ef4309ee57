// SPDX-License-Identifier: Apache-2.0
// Billing (docs/protocol.md §2 "Billing"): balance, payment intents, confirmation, and the usage and
// payment histories. Authenticated by a key or by an X-Wallet-Auth envelope of the account's admin
// wallet. Balances and payments live in the metering store (server/metering), not in the ledger.
#include <httplib.h>

#include "billing/payment_provider.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/idempotency.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "metering/store.hpp"

namespace enact::core {
namespace {

namespace s = schema;

result<billing::payment_provider*> provider(const request_context& c) {
  if (c.svc.payments == nullptr)
    return fail(api_errc::unavailable,
                "no payment provider configured (start with --dev for the dev provider, or "
                "configure stripe)");
  return c.svc.payments;
}

result<metering::store*> meter(const request_context& c) {
  if (c.svc.metering == nullptr)
    return fail(api_errc::unavailable, "no metering store configured: balances and payments are not kept");
  return c.svc.metering;
}

/// The key the payment provider deduplicates this request's intent by. Under an Idempotency-Key,
/// one derived from the account and that key, so that a request run again under the key (its
/// first server died, or its claim's lease ran out while the provider call was slow and a retry
/// took it over) gets the intent the first run created, not a second one; hashed so the provider
/// never sees the client's key, and with the account so two accounts' keys never meet there.
/// Otherwise the request's own id: one request, one intent.
std::string provider_key(const request_context& c) {
  if (c.idempotent == nullptr)
    return c.request_id;
  std::string text = "enact/payment-intent/v1\n" + codec::hex::encode(c.who->account.hash) + "\n";
  text += c.http.get_header_value(std::string(kIdempotencyHeader));
  return "enact-" + codec::hex::encode(crypto::keccak256(std::string_view(text)));
}

void mark_dev(json::object& o, const billing::payment_provider* p) {
  if (p != nullptr && p->mode() == "dev")
    o["mode"] = "dev";
}

result<json::value> balance(const request_context& c) {
  ENACT_TRY(auto* m, meter(c));
  ENACT_TRY(const uint64_t credits, m->balance(c.who->account.hash));
  ENACT_TRY(const uint64_t owed, m->owed(c.who->account.hash));
  json::object out{{"balance_credits", credits}, {"owed_credits", owed}, {"currency", "usd_cents"}};
  mark_dev(out, c.svc.payments);
  return out;
}

result<json::value> create_payment_intent(const request_context& c) {
  ENACT_TRY(auto* p, provider(c));
  ENACT_TRY(auto* m, meter(c));
  const auto& amount_v = c.body.at("amount_cents");
  const uint64_t amount = amount_v.to_number<uint64_t>();
  if (amount < billing::kMinAmountCents)
    return fail(api_errc::invalid_request,
                "body.amount_cents: at least " + std::to_string(billing::kMinAmountCents) + " (5 US dollars)");
  if (amount > billing::kMaxAmountCents)
    return fail(api_errc::invalid_request, "body.amount_cents: at most " + std::to_string(billing::kMaxAmountCents));
  const std::string account_ref = codec::hex::encode_prefixed(c.who->account.hash);
  ENACT_TRY(const auto intent, p->create_intent(amount, account_ref, provider_key(c)));
  metering::payment rec;
  rec.id = intent.id;
  rec.account = c.who->account.hash;
  rec.amount_cents = intent.amount_cents;
  rec.provider = std::string(p->mode());
  if (auto recorded = m->record_payment(rec); !recorded) {
    // The same intent recorded already: this request runs again under its Idempotency-Key
    // (provider_key); the intent is this account's, and answered again.
    if (c.idempotent == nullptr || recorded.code() != metering::metering_errc::duplicate_payment)
      return recorded.err();
    ENACT_TRY_VOID(m->get_payment(c.who->account.hash, intent.id));
  }
  json::object out{
      {"payment_intent_id", intent.id}, {"client_secret", intent.client_secret}, {"amount_cents", intent.amount_cents}};
  mark_dev(out, p);
  return out;
}

result<json::value> confirm_payment(const request_context& c) {
  ENACT_TRY(auto* p, provider(c));
  ENACT_TRY(auto* m, meter(c));
  const std::string id(c.body.at("payment_intent_id").as_string());
  // The intent must be one this account created here; another account's id is not found.
  ENACT_TRY(const auto rec, m->get_payment(c.who->account.hash, id));
  if (rec.credited)
    return fail(api_errc::conflict, "payment intent " + id + " was credited already");
  ENACT_TRY(const auto intent, p->retrieve_intent(id, true));
  if (intent.status != "succeeded")
    return fail(api_errc::conflict,
                "payment intent " + id + " has status " + intent.status + ", not succeeded; nothing credited");
  if (intent.amount_cents != rec.amount_cents)
    return fail(api_errc::conflict, "payment intent " + id + ": amount differs from the one created");
  // Credited once per intent: of two confirms racing past the check above, the second answers 409.
  ENACT_TRY(const metering::credit_result credited, m->credit_payment(c.who->account.hash, id));
  if (!credited.credited_now)
    return fail(api_errc::conflict, "payment intent " + id + " was credited already");
  json::object out{{"balance_credits", credited.balance}};
  mark_dev(out, p);
  return out;
}

/// An event this server can never act on (docs/protocol.md §2 "Billing", the webhook's answers):
/// answered 200 so that Stripe stops delivering it, with the reason in the answer and the log.
json::object ignored(const request_context& c, json::object out, const billing::webhook_event& ev, std::string reason) {
  if (c.svc.log != nullptr)
    c.svc.log->warn("stripe webhook event ignored",
                    {{"event", ev.id}, {"type", ev.type}, {"reason", reason}, {"request_id", c.request_id}});
  out["ignored"] = std::move(reason);
  return out;
}

/// payment_intent.succeeded: credits the intent's account once, exactly as confirm_payment does
/// (the metering store credits a payment id once, so of the two the second credits nothing).
result<json::value> intent_succeeded(const request_context& c, metering::store& m, const billing::webhook_event& ev,
                                     json::object out) {
  const std::string& id = ev.intent.id;
  if (id.empty())
    return ignored(c, std::move(out), ev, "not about a payment intent");
  out["payment_intent_id"] = id;
  if (ev.intent.status != "succeeded")
    return ignored(c, std::move(out), ev, "payment intent " + id + " has status " + ev.intent.status);
  // The intent names its account (metadata.account, set when this server created it); the
  // payment must be that account's, recorded here with the Stripe provider. Anything else is an
  // intent of another product on the same Stripe account, or a forged metadata.
  auto account = codec::hex::decode_fixed<32>(ev.account_ref, "metadata.account");
  if (!account || !ev.account_ref.starts_with("0x"))
    return ignored(c, std::move(out), ev, "payment intent " + id + " was not created by this server");
  auto rec = m.get_payment(*account, id);
  if (!rec && rec.code() == metering::metering_errc::unknown_payment)
    return ignored(c, std::move(out), ev, "payment intent " + id + " was not created by this server for its account");
  ENACT_TRY_VOID(rec);
  if (rec->provider != "stripe")
    return ignored(c, std::move(out), ev, "payment intent " + id + " is not a Stripe payment");
  if (ev.intent.amount_cents != rec->amount_cents || ev.intent.currency != "usd")
    return ignored(c, std::move(out), ev, "payment intent " + id + ": amount differs from the one created");
  ENACT_TRY(const metering::credit_result credited, m.credit_payment(*account, id));
  out["credited"] = credited.credited_now;
  return out;
}

/// charge.refunded, charge.dispute.created/closed/funds_withdrawn/funds_reinstated: the payment taken back, or
/// a won dispute's amount given back, through metering::store::reverse_payment (idempotent by
/// event id; a refund debits only the increase of the charge's cumulative amount_refunded).
result<json::value> charge_reversed(const request_context& c, metering::store& m, const billing::webhook_event& ev,
                                    json::object out) {
  const billing::charge_object& ch = ev.charge;
  const bool refund = ev.type == "charge.refunded";
  if (ch.object != (refund ? "charge" : "dispute"))
    return ignored(c, std::move(out), ev, "data.object is not a " + std::string(refund ? "charge" : "dispute"));
  metering::reversal_request q;
  q.event_id = ev.id;
  q.provider = "stripe";
  q.ref = refund ? ch.charge : ch.id;
  q.amount_cents = ch.amount_cents;
  if (refund) {
    q.kind = metering::reversal_kind::refund;
  } else if (ev.type == "charge.dispute.funds_withdrawn") {
    // An inquiry that became a chargeback: Stripe withdraws the funds now, not when it closes.
    q.kind = metering::reversal_kind::dispute;
  } else if (ev.type == "charge.dispute.funds_reinstated") {
    q.kind = metering::reversal_kind::dispute_won;
  } else if (ch.status.starts_with("warning_")) {
    // An inquiry: Stripe withdraws nothing, and none is owed back.
    return ignored(c, std::move(out), ev,
                   "dispute " + ch.id + " is an inquiry (" + ch.status + "): no funds withdrawn");
  } else if (ev.type == "charge.dispute.created" || ch.status == "lost") {
    q.kind = metering::reversal_kind::dispute;  // a lost dispute keeps (or, first seen, takes) its debit
  } else if (ch.status == "won") {
    q.kind = metering::reversal_kind::dispute_won;
  } else {
    return ignored(c, std::move(out), ev, "dispute " + ch.id + " closed with status " + ch.status);
  }
  if (ch.currency != "usd")
    return ignored(c, std::move(out), ev, ch.object + " " + ch.id + " is in " + ch.currency + ", not usd");
  q.payment_id = ch.payment_intent;
  if (q.payment_id.empty()) {
    auto intent = c.svc.payments->charge_intent(ch.charge);
    if (!intent && intent.code() == billing_errc::unknown_intent)
      return ignored(c, std::move(out), ev, "charge " + ch.charge + " is unknown to Stripe");
    ENACT_TRY_VOID(intent);  // Stripe unreachable: a retry can fix it
    if (intent->empty())
      return ignored(c, std::move(out), ev, "charge " + ch.charge + " has no payment intent");
    q.payment_id = std::move(*intent);
  }
  out["payment_intent_id"] = q.payment_id;
  auto reversed = m.reverse_payment(q);
  if (!reversed && (reversed.code() == metering::metering_errc::unknown_payment ||
                    reversed.code() == metering::metering_errc::invalid_argument))
    return ignored(c, std::move(out), ev, reversed.err().message);
  ENACT_TRY_VOID(reversed);  // the store unavailable: a retry can fix it
  out["reversed"] = reversed->applied_now;
  out["reversed_cents"] = reversed->reversed_cents;
  return out;
}

/// POST /billing/stripe/webhook: Stripe's word that a payment succeeded or was taken back. The
/// delivery is verified with the endpoint secret (billing/stripe_webhook.hpp) before anything is
/// read. Only what a retry could fix answers an error (docs/protocol.md §2 "Billing"): a bad
/// signature, an unreadable body, the store or Stripe unavailable; events this server can never
/// act on are answered 200 and logged, and other event types acknowledged, as Stripe asks, so
/// that it stops delivering them.
result<json::value> stripe_webhook(const request_context& c) {
  if (c.svc.payments == nullptr || c.svc.payments->mode() != "stripe")
    return fail(api_errc::not_found, "no Stripe webhook endpoint is configured on this server");
  ENACT_TRY(auto* m, meter(c));
  ENACT_TRY(const billing::webhook_event ev,
            c.svc.payments->verify_webhook(c.http.body, c.http.get_header_value("Stripe-Signature")));
  json::object out{{"received", true}, {"credited", false}};
  if (ev.type == "payment_intent.succeeded")
    return intent_succeeded(c, *m, ev, std::move(out));
  if (ev.type == "charge.refunded" || ev.type == "charge.dispute.created" || ev.type == "charge.dispute.closed" ||
      ev.type == "charge.dispute.funds_withdrawn" || ev.type == "charge.dispute.funds_reinstated")
    return charge_reversed(c, *m, ev, std::move(out));
  return out;
}

uint64_t seconds(metering::millis t) { return t > 0 ? static_cast<uint64_t>(t / 1000) : 0; }

result<json::value> usage(const request_context& c) {
  ENACT_TRY(auto* m, meter(c));
  ENACT_TRY(const auto p, read_page(c.http));
  ENACT_TRY(const auto records, m->usage(c.who->account.hash, p));
  return page_answer<api::usage_charge>(records, p, [](const metering::usage_record& r) {
    return api::usage_charge{r.run_id, r.key, r.amount, seconds(r.at)};
  });
}

result<json::value> payments(const request_context& c) {
  ENACT_TRY(auto* m, meter(c));
  ENACT_TRY(const auto p, read_page(c.http));
  ENACT_TRY(const auto records, m->payments(c.who->account.hash, p));
  return page_answer<api::payment_record>(records, p, [](const metering::payment& r) {
    api::payment_record out{r.id,       r.amount_cents,        r.provider,
                            r.credited, seconds(r.created_at), seconds(r.credited_at.value_or(0))};
    out.reversed_cents = r.reversed_cents;
    for (const metering::reversal& x : r.reversals)
      out.reversals.push_back(api::payment_reversal{std::string(metering::to_string(x.kind)), x.amount_cents,
                                                    x.event_id, seconds(x.created_at)});
    return out;
  });
}

}  // namespace

void add_billing_routes(std::vector<route>& out) {
  const json::object mode = s::string("\"dev\" when the dev payment provider answered");
  out.push_back(route{
      "GET",
      "/billing/balance",
      "getBalance",
      "billing",
      "The account's credit balance (1 credit = 1 US cent).",
      auth_kind::billing,
      false,
      {},
      {},
      s::object(
          {{"balance_credits", s::integer(), true},
           {"owed_credits",
            s::integer("credits refunds and disputes took back beyond the balance; no run until paid back"), true},
           {"currency", s::string("usd_cents"), true},
           {"mode", mode}}),
      balance});
  out.push_back(route{"POST",
                      "/billing/create_payment_intent",
                      "createPaymentIntent",
                      "billing",
                      "Start a card payment of at least 500 cents.",
                      auth_kind::billing,
                      true,
                      {},
                      s::object({{"amount_cents", s::integer("US cents, at least 500", 0), true}}),
                      s::object({{"payment_intent_id", s::string(), true},
                                 {"client_secret", s::string(), true},
                                 {"amount_cents", s::integer(), true},
                                 {"mode", mode}}),
                      create_payment_intent});
  out.back().idempotent = true;
  out.push_back(route{"POST",
                      "/billing/confirm_payment",
                      "confirmPayment",
                      "billing",
                      "Credit the account once the payment succeeded (once per intent: a second "
                      "confirm is 409).",
                      auth_kind::billing,
                      true,
                      {},
                      s::object({{"payment_intent_id", s::string("", 255), true}}),
                      s::object({{"balance_credits", s::integer(), true}, {"mode", mode}}),
                      confirm_payment});
  out.back().idempotent = true;
  json::object webhook_errors{
      {"400", "invalid_request: the signed body is not a Stripe event"},
      {"401",
       "signature_invalid: no Stripe-Signature, or none of its v1 signatures matches the endpoint secret over "
       "this body; signature_expired: signed more than 300 s from the server's clock"},
      {"404", "not_found: no webhook endpoint configured"},
      {"503", "unavailable: the metering store or Stripe could not be reached; Stripe retries the delivery"}};
  out.push_back(route{"POST",
                      "/billing/stripe/webhook",
                      "stripeWebhook",
                      "billing",
                      "Stripe's webhook endpoint: verified by its Stripe-Signature with the endpoint secret; "
                      "payment_intent.succeeded credits the payment once; charge.refunded, charge.dispute.created "
                      "and charge.dispute.closed take it back or give a won dispute's amount back, once per event. "
                      "Events this server can never act on answer 200 with `ignored`; other event types are "
                      "acknowledged and ignored.",
                      auth_kind::none,
                      false,
                      {},
                      json::object{{"type", "object"}, {"description", "a Stripe event, as Stripe signed it"}},
                      s::object({{"received", s::boolean(), true},
                                 {"credited", s::boolean("whether this delivery credited the payment"), true},
                                 {"payment_intent_id", s::string()},
                                 {"reversed", s::boolean("whether this delivery changed the payment's reversals")},
                                 {"reversed_cents", s::integer("the payment's total taken back after it")},
                                 {"ignored", s::string("why the event changes nothing and will not")}}),
                      stripe_webhook,
                      0,
                      false,
                      false,
                      std::move(webhook_errors)});
  out.push_back(route{"GET",
                      "/billing/usage",
                      "getBillingUsage",
                      "billing",
                      "The account's settled charges, newest first: each run (by its request id) and each "
                      "relayed write's surcharge, with the key that paid.",
                      auth_kind::billing,
                      false,
                      {},
                      {},
                      s::ref("UsageChargePage"),
                      usage});
  out.push_back(route{"GET",
                      "/billing/payments",
                      "getBillingPayments",
                      "billing",
                      "The account's payment intents, newest first, credited or still open.",
                      auth_kind::billing,
                      false,
                      {},
                      {},
                      s::ref("PaymentRecordPage"),
                      payments});
}

}  // namespace enact::core
