// SPDX-License-Identifier: Apache-2.0
// Stripe webhook verification (server/billing/stripe_webhook.hpp) against deliveries the local
// Stripe fixture signs: a genuine delivery passes, and each forgery is refused with its own code —
// no header, a wrong secret, an edited body, a stale or future timestamp, a malformed header;
// several v1 entries (a secret being rolled) pass when one matches. stripe_provider::verify_webhook
// reads the event, and refuses everything without an endpoint secret. The fixture signs as this
// verifier computes, so the last case checks both against headers and verdicts made by Stripe's
// own Node library (tests/vectors/stripe_webhook.json).
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <chrono>
#include <string>

#include "billing/dev_provider.hpp"
#include "billing/stripe_provider.hpp"
#include "billing/stripe_webhook.hpp"
#include "enact/secret.hpp"
#include "stripe_fixture.hpp"
#include "support.hpp"

using namespace enact;
using namespace enact::billing;
using enact::test::stripe_fixture;

namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bytes_view secret_of(std::string_view s = stripe_fixture::kWebhookSecret) { return as_bytes(s); }

std::unique_ptr<stripe_provider> provider(const stripe_fixture& f, std::string_view webhook_secret) {
  stripe_config cfg;
  cfg.api_base = f.base_url();
  cfg.secret_key = Secret(as_bytes(f.secret_key()));
  cfg.publishable_key = "pk_test_enact";
  cfg.webhook_secret = Secret(as_bytes(webhook_secret));
  auto p = stripe_provider::create(std::move(cfg));
  REQUIRE_MESSAGE(p, (p ? "" : p.err().message));
  return std::move(p).value();
}

std::string intent_of(stripe_fixture& f, uint64_t cents, const std::string& account) {
  auto p = provider(f, stripe_fixture::kWebhookSecret);
  auto pi = p->create_intent(cents, account, "");
  REQUIRE_MESSAGE(pi, (pi ? "" : pi.err().message));
  REQUIRE(f.set_status(pi->id, "succeeded"));
  return pi->id;
}

}  // namespace

TEST_CASE("stripe webhook: a genuine delivery passes; every forgery is refused with its code") {
  stripe_fixture f;
  const std::string id = intent_of(f, 700, "0xabc");
  const auto d = f.event(id);
  const int64_t now = unix_now();
  CHECK(verify_stripe_signature(d.body, d.signature, secret_of(), now, 300));
  // The fixture's signature is the check's own computation.
  const int64_t t = std::stoll(d.signature.substr(2, d.signature.find(',') - 2));
  CHECK(d.signature.ends_with(stripe_signature(d.body, secret_of(), t)));

  const auto code_of = [&](std::string_view body, std::string_view header, int64_t at = 0) {
    auto r = verify_stripe_signature(body, header, secret_of(), at == 0 ? now : at, 300);
    REQUIRE_FALSE(r);
    return r.code();
  };
  // Unsigned, and headers that carry no usable signature.
  CHECK(code_of(d.body, "") == billing_errc::signature_invalid);
  CHECK(code_of(d.body, "t=" + std::to_string(now)) == billing_errc::signature_invalid);
  CHECK(code_of(d.body, d.signature.substr(d.signature.find(',') + 1)) == billing_errc::signature_invalid);
  CHECK(code_of(d.body, "t=abc,v1=" + std::string(64, '0')) == billing_errc::signature_invalid);
  CHECK(code_of(d.body, "t=1,t=2," + d.signature.substr(d.signature.find(',') + 1)) == billing_errc::signature_invalid);
  CHECK(code_of(d.body, d.signature + std::string(5000, 'x')) == billing_errc::signature_invalid);
  // Signed with another secret; v0 (Stripe's test scheme) counts for nothing.
  const auto other = f.event(id, "payment_intent.succeeded", 0, "whsec_someone_else");
  CHECK(code_of(other.body, other.signature) == billing_errc::signature_invalid);
  CHECK(code_of(d.body, "t=" + std::to_string(t) + ",v0=" + stripe_signature(d.body, secret_of(), t)) ==
        billing_errc::signature_invalid);
  // The body edited after signing (a larger amount), or the timestamp moved: no longer signed.
  std::string edited = d.body;
  edited.replace(edited.find("\"amount\":700"), 12, "\"amount\":900");
  CHECK(code_of(edited, d.signature) == billing_errc::signature_invalid);
  CHECK(code_of(d.body, "t=" + std::to_string(t + 1) + d.signature.substr(d.signature.find(','))) ==
        billing_errc::signature_invalid);
  // Stale or from the future beyond the tolerance: expired, though genuine.
  const auto stale = f.event(id, "payment_intent.succeeded", now - 301);
  CHECK(code_of(stale.body, stale.signature) == billing_errc::signature_expired);
  const auto future = f.event(id, "payment_intent.succeeded", now + 301);
  CHECK(code_of(future.body, future.signature) == billing_errc::signature_expired);
  const auto edge = f.event(id, "payment_intent.succeeded", now - 300);
  CHECK(verify_stripe_signature(edge.body, edge.signature, secret_of(), now, 300));
  // Several v1 entries while the secret is rolled: one matching is enough, in any position.
  const std::string rolled =
      "t=" + std::to_string(t) + ",v1=" + std::string(64, 'a') + d.signature.substr(d.signature.find(',')) + ",v0=00";
  CHECK(verify_stripe_signature(d.body, rolled, secret_of(), now, 300));
  // A v1 that is a prefix of the right one is not it.
  CHECK(code_of(d.body, d.signature.substr(0, d.signature.size() - 2)) == billing_errc::signature_invalid);
}

TEST_CASE("stripe webhook: the event is read from the verified body") {
  stripe_fixture f;
  const std::string id = intent_of(f, 1200, "0x01");
  const auto d = f.event(id);
  const auto ev = parse_stripe_event(d.body);
  REQUIRE_MESSAGE(ev, (ev ? "" : ev.err().message));
  CHECK(ev->id == d.event_id);
  CHECK(ev->type == "payment_intent.succeeded");
  CHECK(ev->intent.id == id);
  CHECK(ev->intent.amount_cents == 1200);
  CHECK(ev->intent.currency == "usd");
  CHECK(ev->intent.status == "succeeded");
  CHECK(ev->account_ref == "0x01");
  CHECK_FALSE(parse_stripe_event("[]"));
  CHECK(parse_stripe_event("{\"id\":\"evt_1\"}").code() == billing_errc::bad_event);
  CHECK(parse_stripe_event(R"({"id":"evt_1","type":"x","data":{"object":{"object":"payment_intent","amount":-1,)"
                           R"("id":"pi_1"}}})")
            .code() == billing_errc::bad_event);
  // An event about another kind of object is read without an intent.
  const auto charge = parse_stripe_event(R"({"id":"evt_2","type":"charge.succeeded","data":{"object":{"object":)"
                                         R"("charge","id":"ch_1","amount":5}}})");
  REQUIRE(charge);
  CHECK(charge->intent.id.empty());
  // A refund event whose charge lacks amount_refunded is unreadable.
  CHECK(parse_stripe_event(R"({"id":"evt_3","type":"charge.refunded","data":{"object":{"object":)"
                           R"("charge","id":"ch_1","amount":5}}})")
            .code() == billing_errc::bad_event);

  auto p = provider(f, stripe_fixture::kWebhookSecret);
  const auto verified = p->verify_webhook(d.body, d.signature);
  REQUIRE_MESSAGE(verified, (verified ? "" : verified.err().message));
  CHECK(verified->intent.id == id);
  CHECK(p->verify_webhook(d.body, "").code() == billing_errc::signature_invalid);
  // Without an endpoint secret every delivery is refused, signed or not; so by the dev provider.
  auto no_secret = provider(f, "");
  CHECK(no_secret->verify_webhook(d.body, d.signature).code() == billing_errc::no_webhook);
  enact::test::temp_dir dir("enact-billing-webhook");
  auto dev = dev_provider::open((dir.path() / "dev.sqlite").string());
  REQUIRE(dev);
  CHECK((*dev)->verify_webhook(d.body, d.signature).code() == billing_errc::no_webhook);
  // A secret with a space is refused at configuration.
  stripe_config bad;
  bad.api_base = f.base_url();
  bad.secret_key = Secret(as_bytes(f.secret_key()));
  bad.publishable_key = "pk";
  bad.webhook_secret = Secret(as_bytes(std::string_view("whsec bad")));
  CHECK_FALSE(stripe_provider::create(std::move(bad)));
}

// tests/vectors/stripe_webhook.json: headers made by Stripe's Node library
// (webhooks.generateTestHeaderString) and judged by its verifier at a fixed receipt time; enact's
// verifier gives the same verdict for each, and reads each event as the library's types shape it.
TEST_CASE("stripe webhook: Stripe's own library's signatures and verdicts (tests/vectors/stripe_webhook.json)") {
  const auto doc = boost::json::parse(test::read_file(test::source_path("tests/vectors/stripe_webhook.json")));
  const auto& sigs = doc.at("signatures").as_array();
  REQUIRE(sigs.size() >= 10);
  for (const auto& v : sigs) {
    const auto& o = v.as_object();
    const std::string name(o.at("name").as_string());
    const std::string verdict(o.at("verdict").as_string());
    CAPTURE(name);
    const auto r = verify_stripe_signature(
        o.at("payload").as_string(), o.at("header").as_string(), as_bytes(std::string_view(o.at("secret").as_string())),
        o.at("received_at").to_number<int64_t>(), o.at("tolerance").to_number<int64_t>());
    if (verdict == "ok") {
      CHECK_MESSAGE(r, (r ? "" : r.err().message));
    } else {
      REQUIRE_FALSE(r);
      CHECK(r.code() ==
            (verdict == "signature_expired" ? billing_errc::signature_expired : billing_errc::signature_invalid));
    }
  }
  const auto& events = doc.at("events").as_array();
  REQUIRE(events.size() >= 6);
  for (const auto& v : events) {
    const auto& o = v.as_object();
    CAPTURE(std::string(o.at("name").as_string()));
    const auto secret = std::string_view("whsec_enact_vectors_0000000000000000000000");
    const auto& header = o.at("header").as_string();
    const int64_t t = std::stoll(std::string(std::string_view(header).substr(2, header.find(',') - 2)));
    REQUIRE(verify_stripe_signature(o.at("payload").as_string(), header, as_bytes(secret), t, 300));
    const auto ev = parse_stripe_event(o.at("payload").as_string());
    REQUIRE_MESSAGE(ev, (ev ? "" : ev.err().message));
    CHECK(ev->id == o.at("event_id").as_string());
    CHECK(ev->type == o.at("type").as_string());
    const std::string object(o.at("object").as_string());
    if (object == "payment_intent") {
      CHECK(ev->intent.id == o.at("id").as_string());
      CHECK(ev->intent.amount_cents == o.at("amount_cents").to_number<uint64_t>());
      CHECK(ev->intent.status == o.at("status").as_string());
      CHECK(ev->account_ref == o.at("account").as_string());
    } else {
      CHECK(ev->charge.object == object);
      CHECK(ev->charge.id == o.at("id").as_string());
      CHECK(ev->charge.charge == o.at("charge").as_string());
      CHECK(ev->charge.payment_intent == o.at("payment_intent").as_string());
      CHECK(ev->charge.amount_cents == o.at("amount_cents").to_number<uint64_t>());
      CHECK(ev->charge.currency == "usd");
      if (const auto* st = o.if_contains("status"))
        CHECK(ev->charge.status == st->as_string());
    }
  }
}
