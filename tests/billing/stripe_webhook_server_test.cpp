// SPDX-License-Identifier: Apache-2.0
// POST /core/v1/billing/stripe/webhook end to end (docs/protocol.md §2 "Billing"): enact-server
// with Stripe at the local fixture, which signs its events with the endpoint secret. A succeeded
// payment is credited once whichever of the webhook and confirm_payment comes first; every attack
// answers its error and credits nothing: a bad signature, a stale timestamp, an unsigned body, a
// body edited after signing, a replayed delivery, an intent this server never created, another
// account's intent, an amount that differs from the one created. The endpoint secret never
// reaches the log.
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
  check_error_shape(deliver(c, f.event(foreign_id)), 404, "not_found");
  // Alice's intent claimed for Bob (metadata.account names Bob), or for no account,
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                       [&](json::object& pi) {
                                         pi["metadata"] = json::object{{"account", bob.api_key_hash}};
                                       })),
                    404, "not_found");
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                       [](json::object& pi) { pi["metadata"] = json::object{}; })),
                    404, "not_found");
  // an amount or currency that differs from the intent created,
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                       [](json::object& pi) { pi["amount"] = 80000; })),
                    409, "conflict");
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                       [](json::object& pi) { pi["currency"] = "eur"; })),
                    409, "conflict");
  // and a "succeeded" event whose intent is not succeeded.
  check_error_shape(deliver(c, f.event(id, "payment_intent.succeeded", 0, stripe_fixture::kWebhookSecret,
                                       [](json::object& pi) { pi["status"] = "processing"; })),
                    400, "invalid_request");
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
