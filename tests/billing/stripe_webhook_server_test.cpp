// SPDX-License-Identifier: Apache-2.0
// POST /core/v1/billing/stripe/webhook end to end (docs/protocol.md §2 "Billing"): enact-server
// with Stripe at the local fixture, which signs its events with the endpoint secret. A succeeded
// payment is credited once whichever of the webhook and confirm_payment comes first; every attack
// answers its error and credits nothing: a bad signature, a stale timestamp, an unsigned body, a
// body edited after signing, a replayed delivery, an intent this server never created, another
// account's intent, an amount that differs from the one created; the events this server can never
// act on are answered 200 (Stripe would retry anything else for days) and change nothing. Refunds
// and disputes take the credits back once per event, and an account in debt cannot run until it
// pays. The endpoint secret never reaches the log.
#include <doctest/doctest.h>

#include <httplib.h>

#include <chrono>
#include <string>

#include "server_support.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using test::stripe_fixture;

constexpr const char* kWebhook = "/billing/stripe/webhook";

response deliver(http_client& c, const stripe_fixture::delivery& d) {
  return c.post_raw(kWebhook, d.body, {{"Stripe-Signature", d.signature}});
}

/// A payment intent of `cents` created through the server for `auth`, then paid at "Stripe".
std::string paid_intent(http_client& c, stripe_fixture& f, const httplib::Headers& auth, uint64_t cents) {
  const response r = c.post("/billing/create_payment_intent", json::object{{"amount_cents", cents}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  const std::string id = s_of(r.body, "payment_intent_id");
  REQUIRE(f.set_status(id, "succeeded"));
  return id;
}

/// Answered 200, as Stripe needs to stop delivering an event no retry can make acceptable, with
/// the reason, and nothing credited or taken back.
void check_ignored(const response& r) {
  ITEST_REQUIRE_STATUS(r, 200);
  CHECK(r.body.at("received").as_bool());
  CHECK_FALSE(r.body.at("credited").as_bool());
  REQUIRE(r.body.as_object().contains("ignored"));
  CHECK_FALSE(s_of(r.body, "ignored").empty());
  if (const auto* rev = r.body.as_object().if_contains("reversed"))
    CHECK_FALSE(rev->as_bool());
}

uint64_t owed_of(http_client& c, const httplib::Headers& auth) {
  const response r = c.get("/billing/balance", auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return u_of(r.body, "owed_credits");
}

/// The account's payment `id` as GET /billing/payments lists it.
json::object listed_payment(http_client& c, const httplib::Headers& auth, const std::string& id) {
  const response r = c.get("/billing/payments?page_size=100", auth);
  ITEST_REQUIRE_STATUS(r, 200);
  for (const auto& item : r.body.at("items").as_array())
    if (s_of(item, "payment_intent_id") == id)
      return item.as_object();
  FAIL("payment " << id << " not listed");
  return {};
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST_CASE("stripe webhook: a succeeded payment is credited once, whichever of webhook and confirm comes first") {
  stripe_fixture f;
  stripe_server s(f, std::string(stripe_fixture::kWebhookSecret));
  auto c = s.srv.client();
  const account_keys alice = create_account(c, "alice");

  // Webhook first: credited; its replay and the client's confirmation after it credit nothing.
  const std::string first = paid_intent(c, f, alice.auth(), 700);
  const auto d = f.event(first);
  const response ok = deliver(c, d);
  ITEST_REQUIRE_STATUS(ok, 200);
  CHECK(ok.body.at("received").as_bool());
  CHECK(ok.body.at("credited").as_bool());
  CHECK(s_of(ok.body, "payment_intent_id") == first);
  CHECK(balance_of(c, alice.auth()) == 700);
  const response replay = deliver(c, d);
  ITEST_REQUIRE_STATUS(replay, 200);
  CHECK_FALSE(replay.body.at("credited").as_bool());
  const response resent = deliver(c, f.event(first));  // Stripe's own retry: a new signature
  ITEST_REQUIRE_STATUS(resent, 200);
  CHECK_FALSE(resent.body.at("credited").as_bool());
  check_error_shape(c.post("/billing/confirm_payment", json::object{{"payment_intent_id", first}}, alice.auth()), 409,
                    "conflict");
  CHECK(balance_of(c, alice.auth()) == 700);

  // Confirmation first: the webhook after it credits nothing.
  const std::string second = paid_intent(c, f, alice.auth(), 500);
  const response confirmed =
      c.post("/billing/confirm_payment", json::object{{"payment_intent_id", second}}, alice.auth());
  ITEST_REQUIRE_STATUS(confirmed, 200);
  CHECK(u_of(confirmed.body, "balance_credits") == 1200);
  const response late = deliver(c, f.event(second));
  ITEST_REQUIRE_STATUS(late, 200);
  CHECK_FALSE(late.body.at("credited").as_bool());
  CHECK(balance_of(c, alice.auth()) == 1200);

  // Other event types are acknowledged and change nothing, even about an unpaid intent.
  const std::string open = paid_intent(c, f, alice.auth(), 900);
  const response other_type = deliver(c, f.event(open, "payment_intent.created"));
  ITEST_REQUIRE_STATUS(other_type, 200);
  CHECK_FALSE(other_type.body.at("credited").as_bool());
  CHECK(balance_of(c, alice.auth()) == 1200);

  // The payment history shows the credits.
  const response pays = c.get("/billing/payments?page_size=10", alice.auth());
  ITEST_REQUIRE_STATUS(pays, 200);
  CHECK(u_of(pays.body, "total") == 3);
  CHECK(s.srv.stop().clean());
  check_no_secret_logged(s.srv, {std::string(stripe_fixture::kWebhookSecret), f.secret_key()});
}

TEST_CASE("stripe webhook: forged, stale, unsigned, replayed and misdirected events credit nothing") {
  stripe_fixture f;
  stripe_server s(f, std::string(stripe_fixture::kWebhookSecret));
  auto c = s.srv.client();
  const account_keys alice = create_account(c, "alice");
  const account_keys bob = create_account(c, "bob");
  const std::string id = paid_intent(c, f, alice.auth(), 800);
  const auto genuine = f.event(id);

  // Signed with another secret.
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", 0, "whsec_attacker")), 401, "signature_invalid");
  // Unsigned: no header, or an empty one.
  check_error_shape(c.post_raw(kWebhook, genuine.body), 401, "signature_invalid");
  check_error_shape(c.post_raw(kWebhook, genuine.body, {{"Stripe-Signature", ""}}), 401, "signature_invalid");
  // Edited after signing: a larger amount in the genuine delivery.
  std::string edited = genuine.body;
  edited.replace(edited.find("\"amount\":800"), 12, "\"amount\":999");
  check_error_shape(deliver(c, {genuine.event_id, edited, genuine.signature}), 401, "signature_invalid");
  // A genuine delivery captured and replayed later than the tolerance, and one dated ahead.
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", unix_now() - 600)), 401, "signature_expired");
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", unix_now() + 600)), 401, "signature_expired");
  // Not JSON: refused before anything is read.
  check_error_shape(c.post_raw(kWebhook, "not json", {{"Stripe-Signature", genuine.signature}}), 400,
                    "invalid_request");
  CHECK(balance_of(c, alice.auth()) == 0);

  // Signed events that are not this server's to credit:
  // an intent created at Stripe by someone else (not recorded here),
  httplib::Client stripe(f.base_url());
  const auto foreign = stripe.Post("/v1/payment_intents", {{"Authorization", "Bearer " + f.secret_key()}},
                                   "amount=800&currency=usd&metadata[account]=" + alice.api_key_hash,
                                   "application/x-www-form-urlencoded");
  REQUIRE(foreign);
  REQUIRE(foreign->status == 200);
  const std::string foreign_id(json::parse(foreign->body).at("id").as_string());
  REQUIRE(f.set_status(foreign_id, "succeeded"));
  check_ignored(deliver(c, f.event(foreign_id)));
  // Alice's intent claimed for Bob (metadata.account names Bob), or for no account,
  check_ignored(
      deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret, [&](json::object& pi) {
        pi["metadata"] = json::object{{"account", bob.api_key_hash}};
      })));
  check_ignored(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                   [](json::object& pi) { pi["metadata"] = json::object{}; })));
  // an amount or currency that differs from the intent created,
  check_ignored(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                   [](json::object& pi) { pi["amount"] = 80000; })));
  check_ignored(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                   [](json::object& pi) { pi["currency"] = "eur"; })));
  // and a "succeeded" event whose intent is not succeeded.
  check_ignored(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                   [](json::object& pi) { pi["status"] = "processing"; })));
  CHECK(balance_of(c, alice.auth()) == 0);
  CHECK(balance_of(c, bob.auth()) == 0);

  // The genuine delivery still credits Alice, once; its replays credit nothing.
  const response ok = deliver(c, genuine);
  ITEST_REQUIRE_STATUS(ok, 200);
  CHECK(ok.body.at("credited").as_bool());
  for (int i = 0; i < 3; ++i) {
    const response again = deliver(c, genuine);
    ITEST_REQUIRE_STATUS(again, 200);
    CHECK_FALSE(again.body.at("credited").as_bool());
  }
  CHECK(balance_of(c, alice.auth()) == 800);
  CHECK(balance_of(c, bob.auth()) == 0);
  CHECK(s.srv.stop().clean());
  check_no_secret_logged(s.srv, {std::string(stripe_fixture::kWebhookSecret)});
}

TEST_CASE("stripe webhook: refunds, partial then full, take the credits back once, whatever the order of delivery") {
  stripe_fixture f;
  stripe_server s(f, std::string(stripe_fixture::kWebhookSecret));
  auto c = s.srv.client();
  const account_keys alice = create_account(c, "alice");
  const std::string id = paid_intent(c, f, alice.auth(), 1000);
  ITEST_REQUIRE_STATUS(deliver(c, f.event(id)), 200);
  CHECK(balance_of(c, alice.auth()) == 1000);

  f.refund(id, 300);
  const auto partial = f.charge_event(id);
  const response first = deliver(c, partial);
  ITEST_REQUIRE_STATUS(first, 200);
  CHECK(first.body.at("reversed").as_bool());
  CHECK(u_of(first.body, "reversed_cents") == 300);
  CHECK(s_of(first.body, "payment_intent_id") == id);
  CHECK(balance_of(c, alice.auth()) == 700);
  // Stripe's redelivery of the same event, and a second event with the same total: nothing more.
  CHECK_FALSE(deliver(c, partial).body.at("reversed").as_bool());
  CHECK_FALSE(deliver(c, f.charge_event(id)).body.at("reversed").as_bool());
  CHECK(balance_of(c, alice.auth()) == 700);

  f.refund(id, 700);
  ITEST_REQUIRE_STATUS(deliver(c, f.charge_event(id)), 200);
  CHECK(balance_of(c, alice.auth()) == 0);
  // The partial refund's event delivered late (Stripe does not order deliveries): no debit.
  const response late = deliver(c, partial);
  ITEST_REQUIRE_STATUS(late, 200);
  CHECK(balance_of(c, alice.auth()) == 0);
  CHECK(owed_of(c, alice.auth()) == 0);

  const json::object rec = listed_payment(c, alice.auth(), id);
  CHECK(rec.at("reversed_cents").to_number<uint64_t>() == 1000);
  const auto& reversals = rec.at("reversals").as_array();
  REQUIRE(reversals.size() == 2);
  CHECK(s_of(reversals[0], "kind") == "refund");
  CHECK(u_of(reversals[0], "amount_cents") == 300);
  CHECK(s_of(reversals[0], "event_id") == partial.event_id);
  CHECK(u_of(reversals[0], "created_at") > 0);
  CHECK(u_of(reversals[1], "amount_cents") == 700);

  // A refund of a charge this server never sold (another product on the same Stripe account),
  // and one in another currency: 200, ignored, nothing taken.
  httplib::Client stripe(f.base_url());
  const auto foreign = stripe.Post("/v1/payment_intents", {{"Authorization", "Bearer " + f.secret_key()}},
                                   "amount=900&currency=usd", "application/x-www-form-urlencoded");
  REQUIRE(foreign);
  const std::string foreign_id(json::parse(foreign->body).at("id").as_string());
  REQUIRE(f.set_status(foreign_id, "succeeded"));
  f.refund(foreign_id, 900);
  check_ignored(deliver(c, f.charge_event(foreign_id)));
  const std::string other = paid_intent(c, f, alice.auth(), 600);
  ITEST_REQUIRE_STATUS(deliver(c, f.event(other)), 200);
  f.refund(other, 100);
  check_ignored(deliver(c, f.charge_event(other, "charge.refunded", [](json::object& ch) { ch["currency"] = "eur"; })));
  CHECK(balance_of(c, alice.auth()) == 600);
  CHECK(s.srv.stop().clean());
  check_no_secret_logged(s.srv, {std::string(stripe_fixture::kWebhookSecret), f.secret_key()});
}

TEST_CASE("stripe webhook: a dispute takes spent credits back as a debt; no write runs until it is paid back") {
  stripe_fixture f;
  stripe_server s(f, std::string(stripe_fixture::kWebhookSecret), {"--write-surcharge", "400"});
  auto c = s.srv.client();
  const account_keys alice = create_account(c, "alice");
  const std::string id = paid_intent(c, f, alice.auth(), 500);
  ITEST_REQUIRE_STATUS(deliver(c, f.event(id)), 200);
  ITEST_REQUIRE_STATUS(c.post("/add_group", json::object{{"name", "g1"}}, alice.auth()), 200);
  CHECK(balance_of(c, alice.auth()) == 100);

  // The dispute names no payment intent: the server reads it from the charge at Stripe.
  const auto opened = f.dispute_event(id, "charge.dispute.created", "dp_alice1", 500, "needs_response",
                                      [](json::object& dp) { dp["payment_intent"] = nullptr; });
  const response r = deliver(c, opened);
  ITEST_REQUIRE_STATUS(r, 200);
  CHECK(r.body.at("reversed").as_bool());
  CHECK(s_of(r.body, "payment_intent_id") == id);
  CHECK(f.last_request()->path.starts_with("/v1/charges/ch_"));
  CHECK(balance_of(c, alice.auth()) == 0);
  CHECK(owed_of(c, alice.auth()) == 400);
  const response refused = c.post("/add_group", json::object{{"name", "g2"}}, alice.auth());
  check_error_shape(refused, 402, "insufficient_credits");
  CHECK(s_of(refused.body.at("error"), "message").find("owes 400") != std::string::npos);
  // Lost: the debit stays, once; an inquiry (warning_*) withdraws nothing.
  CHECK_FALSE(
      deliver(c, f.dispute_event(id, "charge.dispute.closed", "dp_alice1", 500, "lost")).body.at("reversed").as_bool());
  CHECK(owed_of(c, alice.auth()) == 400);
  check_ignored(deliver(c, f.dispute_event(id, "charge.dispute.created", "dp_inq", 500, "warning_needs_response")));
  // An inquiry on another payment that becomes a chargeback: funds_withdrawn debits it, once, and
  // funds_reinstated gives it back.
  const std::string inquired = paid_intent(c, f, alice.auth(), 600);
  ITEST_REQUIRE_STATUS(deliver(c, f.event(inquired)), 200);
  CHECK(owed_of(c, alice.auth()) == 0);
  CHECK(balance_of(c, alice.auth()) == 200);
  check_ignored(
      deliver(c, f.dispute_event(inquired, "charge.dispute.created", "dp_inq2", 600, "warning_needs_response")));
  CHECK(balance_of(c, alice.auth()) == 200);
  const auto withdrawn = f.dispute_event(inquired, "charge.dispute.funds_withdrawn", "dp_inq2", 600, "needs_response");
  CHECK(deliver(c, withdrawn).body.at("reversed").as_bool());
  CHECK_FALSE(deliver(c, withdrawn).body.at("reversed").as_bool());
  CHECK(balance_of(c, alice.auth()) == 0);
  CHECK(owed_of(c, alice.auth()) == 400);
  CHECK_FALSE(deliver(c, f.dispute_event(inquired, "charge.dispute.closed", "dp_inq2", 600, "lost"))
                  .body.at("reversed")
                  .as_bool());
  CHECK(owed_of(c, alice.auth()) == 400);

  // A payment pays the debt first: 500 leaves 100 to run with.
  const std::string back = paid_intent(c, f, alice.auth(), 500);
  ITEST_REQUIRE_STATUS(deliver(c, f.event(back)), 200);
  CHECK(owed_of(c, alice.auth()) == 0);
  CHECK(balance_of(c, alice.auth()) == 100);

  // A second payment disputed and won: the debit is given back, once.
  const std::string second = paid_intent(c, f, alice.auth(), 700);
  ITEST_REQUIRE_STATUS(deliver(c, f.event(second)), 200);
  ITEST_REQUIRE_STATUS(
      deliver(c, f.dispute_event(second, "charge.dispute.created", "dp_alice2", 700, "needs_response")), 200);
  CHECK(balance_of(c, alice.auth()) == 100);
  const auto won = f.dispute_event(second, "charge.dispute.closed", "dp_alice2", 700, "won");
  CHECK(deliver(c, won).body.at("reversed").as_bool());
  CHECK_FALSE(deliver(c, won).body.at("reversed").as_bool());
  CHECK(balance_of(c, alice.auth()) == 800);
  const json::object rec = listed_payment(c, alice.auth(), second);
  CHECK(rec.at("reversed_cents").to_number<uint64_t>() == 0);
  const auto& reversals = rec.at("reversals").as_array();
  REQUIRE(reversals.size() == 2);
  CHECK(s_of(reversals[0], "kind") == "dispute");
  CHECK(s_of(reversals[1], "kind") == "dispute_won");
  CHECK(u_of(reversals[1], "amount_cents") == 700);
  CHECK(s.srv.stop().clean());
}

TEST_CASE("stripe webhook: a Stripe secret key that Stripe refuses answers 503, not a client error") {
  stripe_fixture f;
  {
    // Stripe refuses the server's key (401): the operator's mistake, not the client's; 503.
    scoped_env key("STRIPE_SECRET_KEY", "sk_test_wrong_key_0000000000000000000");
    scoped_env webhook("STRIPE_WEBHOOK_SECRET", std::string(stripe_fixture::kWebhookSecret));
    server_process srv({"--stripe-api-base", f.base_url(), "--stripe-publishable-key", "pk_test_enact"});
    auto c = srv.client();
    const account_keys alice = create_account(c, "alice");
    check_error_shape(c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, alice.auth()), 503,
                      "unavailable");
    // A dispute naming no intent needs the charge from Stripe, which refuses the key: 503.
    httplib::Client stripe(f.base_url());
    const auto made = stripe.Post("/v1/payment_intents", {{"Authorization", "Bearer " + f.secret_key()}},
                                  "amount=900&currency=usd", "application/x-www-form-urlencoded");
    REQUIRE(made);
    const std::string id(json::parse(made->body).at("id").as_string());
    REQUIRE(f.set_status(id, "succeeded"));
    check_error_shape(deliver(c, f.dispute_event(id, "charge.dispute.created", "dp_1", 900, "needs_response",
                                                 [](json::object& dp) { dp["payment_intent"] = nullptr; })),
                      503, "unavailable");
    CHECK(srv.stop().clean());
    check_no_secret_logged(srv, {"sk_test_wrong_key_0000000000000000000"});
  }
}

TEST_CASE("stripe webhook: without an endpoint secret, or with the dev provider, there is no webhook") {
  stripe_fixture f;
  {
    stripe_server s(f, "");
    auto c = s.srv.client();
    const account_keys alice = create_account(c, "alice");
    const std::string id = paid_intent(c, f, alice.auth(), 600);
    check_error_shape(deliver(c, f.event(id)), 404, "not_found");
    CHECK(balance_of(c, alice.auth()) == 0);
  }
  server_process dev({"--dev"});
  auto c = dev.client();
  const account_keys alice = create_account(c, "alice");
  const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, alice.auth());
  ITEST_REQUIRE_STATUS(intent, 200);
  const std::string body = R"({"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"object":)"
                           R"("payment_intent","id":")" +
                           s_of(intent.body, "payment_intent_id") +
                           R"(","amount":500,"currency":"usd",)"
                           R"("status":"succeeded","metadata":{"account":")" +
                           alice.api_key_hash + R"("}}}})";
  check_error_shape(c.post_raw(kWebhook, body, {{"Stripe-Signature", "t=1,v1=00"}}), 404, "not_found");
  CHECK(balance_of(c, alice.auth()) == 0);
}

}  // namespace
}  // namespace enact::itest
