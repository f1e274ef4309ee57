// SPDX-License-Identifier: Apache-2.0
// The payment providers of docs/protocol.md §2 "Billing": the dev provider over a temp SQLite file, and the
// Stripe provider against the local Stripe fixture (stripe_fixture.hpp).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <httplib.h>

#include <boost/json.hpp>

#include "billing/dev_provider.hpp"
#include "billing/stripe_provider.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "stripe_fixture.hpp"
#include "support.hpp"

using namespace enact;
using namespace enact::billing;
using namespace std::string_literals;
using namespace std::string_view_literals;
using enact::test::stripe_fixture;

namespace {

using enact::test::temp_dir;

std::unique_ptr<dev_provider> open_dev(const std::string& path) {
  auto p = dev_provider::open(path);
  REQUIRE_MESSAGE(p, (p ? "" : p.err().message));
  return std::move(p).value();
}

bool is_lower_hex(std::string_view s) { return s.find_first_not_of("0123456789abcdef") == std::string_view::npos; }

std::unique_ptr<stripe_provider> open_stripe(std::string api_base, std::string_view secret_key, int timeout_ms = 5000) {
  stripe_config cfg;
  cfg.api_base = std::move(api_base);
  cfg.secret_key = Secret(as_bytes(secret_key));
  cfg.publishable_key = "pk_test_enact";
  cfg.timeout_ms = timeout_ms;
  auto p = stripe_provider::create(std::move(cfg));
  REQUIRE_MESSAGE(p, (p ? "" : p.err().message));
  return std::move(p).value();
}

std::unique_ptr<stripe_provider> open_stripe(const stripe_fixture& f) {
  return open_stripe(f.base_url(), f.secret_key());
}

/// A loopback socket in a given state, closed on destruction: bound only (connections to it are
/// refused) or listening but never accepting (connections succeed, answers never come).
class idle_socket {
 public:
  explicit idle_socket(bool listening) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    port_ = enact::test::bind_loopback(fd_);
    REQUIRE(port_ > 0);
    if (listening)
      REQUIRE(::listen(fd_, 16) == 0);
  }
  ~idle_socket() { ::close(fd_); }
  idle_socket(const idle_socket&) = delete;
  idle_socket& operator=(const idle_socket&) = delete;
  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// dev provider

TEST_CASE("dev provider: create, then confirm moves the intent to succeeded") {
  temp_dir dir{"enact-billing"};
  auto dev = open_dev(dir.file("billing.sqlite"));
  CHECK(dev->mode() == "dev");
  CHECK(dev->publishable_key() == "pk_dev_enact");

  auto pi = dev->create_intent(500, "ab01", "key-1");
  REQUIRE(pi);
  CHECK(pi->id.size() == "pi_dev_"sv.size() + 24);
  CHECK(pi->id.starts_with("pi_dev_"));
  CHECK(is_lower_hex(pi->id.substr(7)));
  CHECK(pi->client_secret.starts_with(pi->id + "_secret_"));
  CHECK(pi->client_secret.size() > pi->id.size() + "_secret_"sv.size());
  CHECK(pi->amount_cents == 500);
  CHECK(pi->currency == "usd");
  CHECK(pi->status == "requires_payment_method");

  auto seen = dev->retrieve_intent(pi->id, false);
  REQUIRE(seen);
  CHECK(seen->status == "requires_payment_method");
  CHECK(seen->client_secret == pi->client_secret);

  auto confirmed = dev->retrieve_intent(pi->id, true);
  REQUIRE(confirmed);
  CHECK(confirmed->status == "succeeded");
  CHECK(confirmed->amount_cents == 500);
  // Confirming again (a retried confirm) leaves it succeeded; crediting once is the ledger's job.
  CHECK(dev->retrieve_intent(pi->id, true)->status == "succeeded");
  CHECK(dev->retrieve_intent(pi->id, false)->status == "succeeded");

  auto other = dev->create_intent(700, "ab01", "key-2");
  REQUIRE(other);
  CHECK(other->id != pi->id);
  CHECK(other->client_secret != pi->client_secret);
  CHECK(dev->retrieve_intent(other->id, false)->status == "requires_payment_method");
}

TEST_CASE("dev provider: amounts outside the accepted range are invalid_amount") {
  temp_dir dir{"enact-billing"};
  auto dev = open_dev(dir.file("billing.sqlite"));
  struct case_ {
    uint64_t amount;
    bool ok;
  };
  // Bounds: core-api spec "Limits" (minimum 500) and Stripe's USD maximum.
  const case_ cases[] = {
      {0, false},
      {1, false},
      {kMinAmountCents - 1, false},
      {kMinAmountCents, true},
      {kMinAmountCents + 1, true},
      {kMaxAmountCents, true},
      {kMaxAmountCents + 1, false},
      {std::numeric_limits<uint64_t>::max(), false},
  };
  for (const auto& c : cases) {
    auto r = dev->create_intent(c.amount, "ab01", "");
    CHECK_MESSAGE(bool(r) == c.ok, c.amount);
    if (!c.ok)
      CHECK_MESSAGE(r.code() == billing_errc::invalid_amount, c.amount);
    if (c.ok)
      CHECK(r->amount_cents == c.amount);
  }
}

TEST_CASE("dev provider: an idempotency key returns the same intent") {
  temp_dir dir{"enact-billing"};
  auto dev = open_dev(dir.file("billing.sqlite"));
  auto a = dev->create_intent(1000, "ab01", "idem-1");
  auto b = dev->create_intent(1000, "ab01", "idem-1");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->id == b->id);
  CHECK(a->client_secret == b->client_secret);

  // The replay reports the intent as it is now, like a retrieve.
  REQUIRE(dev->retrieve_intent(a->id, true));
  CHECK(dev->create_intent(1000, "ab01", "idem-1")->status == "succeeded");

  // Without a key every create is new.
  auto c = dev->create_intent(1000, "ab01", "");
  auto d = dev->create_intent(1000, "ab01", "");
  REQUIRE(c);
  REQUIRE(d);
  CHECK(c->id != d->id);
  CHECK(c->id != a->id);

  // A key reused with other parameters is refused, as Stripe refuses it.
  CHECK(dev->create_intent(2000, "ab01", "idem-1").code() == billing_errc::provider_error);
  CHECK(dev->create_intent(1000, "cd02", "idem-1").code() == billing_errc::provider_error);
  // A key that could not travel in an HTTP header is refused before anything is stored.
  CHECK(dev->create_intent(1000, "ab01", "bad\r\nkey").code() == billing_errc::provider_error);
  CHECK(dev->create_intent(1000, "ab01", std::string(256, 'k')).code() == billing_errc::provider_error);
}

TEST_CASE("dev provider: concurrent creates with one key make one intent") {
  temp_dir dir{"enact-billing"};
  auto dev = open_dev(dir.file("billing.sqlite"));
  constexpr int kThreads = 8;
  std::vector<std::string> ids(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      auto r = dev->create_intent(900, "ab01", "shared-key");
      if (r)
        ids[i] = r->id;
    });
  for (auto& t : threads)
    t.join();
  for (const auto& id : ids) {
    CHECK(!id.empty());
    CHECK(id == ids[0]);
  }
}

TEST_CASE("dev provider: intents survive closing and reopening the store") {
  temp_dir dir{"enact-billing"};
  const std::string path = dir.file("billing.sqlite");
  payment_intent pending;
  payment_intent paid;
  {
    auto dev = open_dev(path);
    pending = dev->create_intent(500, "ab01", "persist-1").value();
    paid = dev->create_intent(800, "ab01", "persist-2").value();
    REQUIRE(dev->retrieve_intent(paid.id, true)->status == "succeeded");
  }
  auto dev = open_dev(path);
  auto p = dev->retrieve_intent(pending.id, false);
  REQUIRE(p);
  CHECK(p->status == "requires_payment_method");
  CHECK(p->amount_cents == 500);
  CHECK(p->client_secret == pending.client_secret);
  auto q = dev->retrieve_intent(paid.id, false);
  REQUIRE(q);
  CHECK(q->status == "succeeded");
  CHECK(q->amount_cents == 800);
  // The idempotency key still leads to the same intent.
  CHECK(dev->create_intent(500, "ab01", "persist-1")->id == pending.id);
  // A pending intent can be confirmed after the restart.
  CHECK(dev->retrieve_intent(pending.id, true)->status == "succeeded");
}

TEST_CASE("dev provider: unknown and malformed ids are unknown_intent") {
  temp_dir dir{"enact-billing"};
  auto dev = open_dev(dir.file("billing.sqlite"));
  REQUIRE(dev->create_intent(500, "ab01", ""));
  const std::string cases[] = {
      "pi_dev_000000000000000000000000",  // well formed, never created
      "",
      "pi_dev_",
      "pi_dev_00000000000000000000000",    // 23 digits
      "pi_dev_0000000000000000000000000",  // 25 digits
      "pi_dev_00000000000000000000000A",   // upper case
      "pi_dev_00000000000000000000000g",
      "pi_000000000000000000000000",
      "PI_DEV_000000000000000000000000",
      "pi_dev_000000000000000000000000' OR '1'='1",
  };
  for (const auto& id : cases) {
    CHECK_MESSAGE(dev->retrieve_intent(id, false).code() == billing_errc::unknown_intent, id);
    CHECK_MESSAGE(dev->retrieve_intent(id, true).code() == billing_errc::unknown_intent, id);
  }
}

TEST_CASE("dev provider: a store that cannot be opened is unavailable") {
  temp_dir dir{"enact-billing"};
  auto r = dev_provider::open(dir.file("missing-dir/billing.sqlite"));
  REQUIRE(!r);
  CHECK(r.code() == billing_errc::unavailable);
}

// ---------------------------------------------------------------------------------------------
// stripe provider against the local fixture

TEST_CASE("stripe provider: configuration is checked before any request") {
  struct case_ {
    std::string_view api_base;
    std::string_view secret;
    std::string_view publishable;
    int timeout_ms;
  };
  const case_ bad[] = {
      {"", "sk_test_x", "pk_test_x", 1000},
      {"ftp://api.stripe.com", "sk_test_x", "pk_test_x", 1000},
      {"api.stripe.com", "sk_test_x", "pk_test_x", 1000},
      {"https://", "sk_test_x", "pk_test_x", 1000},
      {"https://api.stripe.com/v?x=1", "sk_test_x", "pk_test_x", 1000},
      {"https://user@api.stripe.com", "sk_test_x", "pk_test_x", 1000},
      {"https://api.stripe.com", "", "pk_test_x", 1000},
      {"https://api.stripe.com", "sk test", "pk_test_x", 1000},
      {"https://api.stripe.com", "sk_test_x\n", "pk_test_x", 1000},
      {"https://api.stripe.com", "sk_test_x", "", 1000},
      {"https://api.stripe.com", "sk_test_x", "pk_test_x", 0},
  };
  for (const auto& c : bad) {
    stripe_config cfg;
    cfg.api_base = c.api_base;
    cfg.secret_key = Secret(as_bytes(c.secret));
    cfg.publishable_key = c.publishable;
    cfg.timeout_ms = c.timeout_ms;
    auto r = stripe_provider::create(std::move(cfg));
    CHECK_MESSAGE(r.code() == std::errc::invalid_argument, c.api_base);
    // A refused secret never appears in the message.
    if (!r && !c.secret.empty())
      CHECK(r.err().message.find(c.secret) == std::string::npos);
  }
  auto ok = open_stripe("https://api.stripe.com", "sk_test_x");
  CHECK(ok->mode() == "stripe");
  CHECK(ok->publishable_key() == "pk_test_enact");
}

TEST_CASE("stripe provider: create sends the form Stripe expects") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  // Characters that form encoding must escape survive into the metadata unchanged.
  const std::string account = "ab01 &x=y+z/%[]";
  auto pi = stripe->create_intent(1234, account, "create-1");
  REQUIRE_MESSAGE(pi, (pi ? "" : pi.err().message));
  CHECK(pi->id.starts_with("pi_"));
  CHECK(pi->client_secret.starts_with(pi->id + "_secret_"));
  CHECK(pi->amount_cents == 1234);
  CHECK(pi->currency == "usd");
  CHECK(pi->status == "requires_payment_method");

  const auto req = fx.last_request();
  REQUIRE(req);
  CHECK(req->method == "POST");
  CHECK(req->path == "/v1/payment_intents");
  CHECK(req->content_type.starts_with("application/x-www-form-urlencoded"));
  CHECK(req->idempotency_key == "create-1");
  CHECK(req->stripe_version == stripe_provider::kApiVersion);
  const std::map<std::string, std::string> expected{
      {"amount", "1234"},
      {"currency", "usd"},
      {"metadata[account]", account},
      {"automatic_payment_methods[enabled]", "true"},
  };
  CHECK(req->form == expected);

  const auto stored = fx.find_intent(pi->id);
  REQUIRE(stored);
  CHECK(stored->amount == 1234);
  CHECK(stored->metadata.at("account") == account);
  CHECK(stored->automatic_payment_methods == true);
  CHECK(stored->client_secret == pi->client_secret);
  CHECK(fx.requests() == 1);
}

TEST_CASE("stripe provider: retrieve reports the status Stripe has") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  auto pi = stripe->create_intent(500, "ab01", "status-1");
  REQUIRE(pi);

  struct case_ {
    std::string_view set;  // "" leaves the status as created
    bool confirm;
  };
  // confirm is ignored: only the customer's payment changes a Stripe intent.
  const case_ steps[] = {{"", false},          {"", true},        {"processing", false}, {"requires_action", true},
                         {"succeeded", false}, {"canceled", true}};
  std::string expected = "requires_payment_method";
  for (const auto& s : steps) {
    if (!s.set.empty()) {
      REQUIRE(fx.set_status(pi->id, s.set));
      expected = s.set;
    }
    auto got = stripe->retrieve_intent(pi->id, s.confirm);
    REQUIRE_MESSAGE(got, (got ? "" : got.err().message));
    CHECK(got->id == pi->id);
    CHECK(got->status == expected);
    CHECK(got->amount_cents == 500);
    CHECK(fx.last_request()->method == "GET");
    CHECK(fx.last_request()->path == "/v1/payment_intents/" + pi->id);
  }
}

TEST_CASE("stripe provider: the same idempotency key returns the same intent") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  auto a = stripe->create_intent(2500, "ab01", "idem-1");
  auto b = stripe->create_intent(2500, "ab01", "idem-1");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->id == b->id);
  CHECK(a->client_secret == b->client_secret);
  CHECK(fx.intent_count() == 1);

  auto c = stripe->create_intent(2500, "ab01", "idem-2");
  REQUIRE(c);
  CHECK(c->id != a->id);
  CHECK(fx.intent_count() == 2);

  // Stripe refuses a key reused with other parameters.
  auto d = stripe->create_intent(3000, "ab01", "idem-1");
  CHECK(d.code() == billing_errc::provider_error);
  CHECK(fx.intent_count() == 2);

  // No key: a fresh one per call, so two calls are two intents.
  auto e = stripe->create_intent(2500, "ab01", "");
  REQUIRE(e);
  CHECK(fx.last_request()->idempotency_key.starts_with("enact-"));
  auto f = stripe->create_intent(2500, "ab01", "");
  REQUIRE(f);
  CHECK(e->id != f->id);
}

// The operator's key, not the client's request, is wrong: unavailable (503 at the routes), so a
// client is not told its request conflicts (issue 35).
TEST_CASE("stripe provider: a wrong secret key is unavailable, not retried, and is not echoed") {
  stripe_fixture fx;
  const std::string wrong = "sk_test_wrong_key_0123456789abcdef";
  auto stripe = open_stripe(fx.base_url(), wrong);
  auto created = stripe->create_intent(500, "ab01", "k");
  REQUIRE(!created);
  CHECK(created.code() == billing_errc::unavailable);
  CHECK(created.err().message.find("Invalid API Key") != std::string::npos);
  CHECK(created.err().message.find(wrong) == std::string::npos);

  auto read = stripe->retrieve_intent("pi_000000000000000000000000", false);
  CHECK(read.code() == billing_errc::unavailable);
  CHECK(fx.intent_count() == 0);
  CHECK(fx.requests() == 2);  // refusals are not retried

  // Should an error message ever quote the key, it is cut out.
  auto good = open_stripe(fx);
  fx.fail_next(
      1, 400,
      R"({"error": {"type": "invalid_request_error", "message": "key )" + fx.secret_key() + R"( is restricted"}})");
  auto quoted = good->retrieve_intent("pi_000000000000000000000000", false);
  REQUIRE(!quoted);
  CHECK(quoted.code() == billing_errc::provider_error);
  CHECK(quoted.err().message.find(fx.secret_key()) == std::string::npos);
  CHECK(quoted.err().message.find("key [redacted] is restricted") != std::string::npos);
}

TEST_CASE("stripe provider: an unknown id is unknown_intent") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  auto r = stripe->retrieve_intent("pi_000000000000000000000000", false);
  CHECK(r.code() == billing_errc::unknown_intent);
  CHECK(fx.requests() == 1);
}

TEST_CASE("stripe provider: a malformed id is unknown_intent without a request") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  const std::string cases[] = {
      "",
      "pi_",
      "ch_3MmlLrLkdIwHu7ix0snN0B15",
      "pi_abc/def",
      "pi_../../v1/charges",
      "pi_abc?expand[]=customer",
      "pi_abc#x",
      "pi_abc def",
      "pi_abc%2F",
      "pi_abc\r\nX-Injected: 1",
      "pi_\xc3\xa9",
      "pi_" + std::string(300, 'a'),
  };
  for (const auto& id : cases)
    CHECK_MESSAGE(stripe->retrieve_intent(id, false).code() == billing_errc::unknown_intent, id);
  CHECK(fx.requests() == 0);
}

TEST_CASE("stripe provider: transient failures are retried, then reported as unavailable") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  auto pi = stripe->create_intent(500, "ab01", "retry-create-0");
  REQUIRE(pi);
  size_t before = fx.requests();

  SUBCASE("a 503 then success: the GET succeeds on its second attempt") {
    fx.fail_next(1, 503);
    auto r = stripe->retrieve_intent(pi->id, false);
    REQUIRE_MESSAGE(r, (r ? "" : r.err().message));
    CHECK(r->id == pi->id);
    CHECK(fx.requests() == before + 2);
  }
  SUBCASE("two 500s then success: the last allowed retry succeeds") {
    fx.fail_next(2, 500);
    CHECK(stripe->retrieve_intent(pi->id, false));
    CHECK(fx.requests() == before + 3);
  }
  SUBCASE("a 502 then success: the POST is retried with the same Idempotency-Key") {
    fx.fail_next(1, 502);
    auto r = stripe->create_intent(700, "ab01", "retry-create-1");
    REQUIRE_MESSAGE(r, (r ? "" : r.err().message));
    CHECK(fx.requests() == before + 2);
    CHECK(fx.last_request()->idempotency_key == "retry-create-1");
    CHECK(fx.intent_count() == 2);
  }
  SUBCASE("a 429 then success") {
    fx.fail_next(1, 429,
                 R"({"error": {"type": "invalid_request_error", "code": "rate_limit",)"
                 R"( "message": "Too many requests"}})");
    CHECK(stripe->retrieve_intent(pi->id, false));
    CHECK(fx.requests() == before + 2);
  }
  SUBCASE("persistent 5xx: three attempts, then unavailable") {
    fx.fail_next(100, 500);
    CHECK(stripe->retrieve_intent(pi->id, false).code() == billing_errc::unavailable);
    CHECK(fx.requests() == before + 3);
    CHECK(stripe->create_intent(500, "ab01", "retry-create-2").code() == billing_errc::unavailable);
    CHECK(fx.requests() == before + 6);
    CHECK(fx.intent_count() == 1);
  }
  SUBCASE("a 400 is not retried") {
    fx.fail_next(100, 400,
                 R"({"error": {"type": "invalid_request_error", "code": "parameter_invalid_integer",)"
                 R"( "message": "Invalid integer: x"}})");
    auto r = stripe->retrieve_intent(pi->id, false);
    CHECK(r.code() == billing_errc::provider_error);
    CHECK(r.err().message.find("Invalid integer: x") != std::string::npos);
    CHECK(fx.requests() == before + 1);
  }
}

TEST_CASE("stripe provider: unreadable answers are bad_response and not retried") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  auto pi = stripe->create_intent(500, "ab01", "bad-0");
  REQUIRE(pi);
  const std::string intent_json = R"({"id": ")" + pi->id + R"(", "object": "payment_intent",)";
  const std::string bodies[] = {
      "<html>Bad gateway</html>",
      "",
      "[]",
      "{}",
      R"({"id": ")" + pi->id + R"("})",
      R"({"id": "ch_1", "object": "charge", "amount": 500, "currency": "usd", "status": "succeeded"})",
      intent_json + R"( "amount": "500", "currency": "usd", "status": "succeeded"})",
      intent_json + R"( "amount": -5, "currency": "usd", "status": "succeeded"})",
      intent_json + R"( "amount": 500, "currency": "usd"})",
      intent_json + R"( "amount": 500, "status": "succeeded"})",
      intent_json + R"( "amount": 500, "currency": "usd", "status": "succeeded")",
      // Well formed, but another intent than the one asked for.
      std::string(R"({"id": "pi_other", "object": "payment_intent", "amount": 500,)") +
          R"( "currency": "usd", "status": "succeeded"})",
  };
  for (const auto& body : bodies) {
    const size_t before = fx.requests();
    fx.fail_next(1, 200, body);
    CHECK_MESSAGE(stripe->retrieve_intent(pi->id, false).code() == billing_errc::bad_response, body);
    CHECK(fx.requests() == before + 1);
  }
  // A create answered with an intent for another amount is not that payment.
  fx.fail_next(1, 200,
               R"({"id": "pi_x1", "object": "payment_intent", "amount": 1, )"
               R"("currency": "usd", "status": "requires_payment_method", )"
               R"("client_secret": "pi_x1_secret_y"})");
  CHECK(stripe->create_intent(500, "ab01", "bad-1").code() == billing_errc::bad_response);
  // The same body with the right id is readable: the cases above fail for their own reasons.
  fx.fail_next(1, 200, intent_json + R"( "amount": 500, "currency": "usd", "status": "succeeded"})");
  CHECK(stripe->retrieve_intent(pi->id, false)->status == "succeeded");
}

TEST_CASE("stripe provider: a 404 that is not resource_missing is provider_error") {
  stripe_fixture fx;
  // A path prefix the fixture does not serve: Stripe's "Unrecognized request URL" 404.
  auto stripe = open_stripe(fx.base_url() + "/not-stripe/", fx.secret_key());
  CHECK(stripe->retrieve_intent("pi_000000000000000000000000", false).code() == billing_errc::provider_error);
  CHECK(fx.last_request()->path == "/not-stripe/v1/payment_intents/pi_000000000000000000000000");
  CHECK(fx.requests() == 1);
}

TEST_CASE("stripe provider: an unreachable or silent API is unavailable") {
  SUBCASE("connection refused") {
    idle_socket closed(false);
    auto stripe = open_stripe(closed.base_url(), stripe_fixture::kSecretKey, 500);
    CHECK(stripe->retrieve_intent("pi_000000000000000000000000", false).code() == billing_errc::unavailable);
    CHECK(stripe->create_intent(500, "ab01", "k").code() == billing_errc::unavailable);
  }
  SUBCASE("accepted, never answered: read timeout") {
    idle_socket silent(true);
    auto stripe = open_stripe(silent.base_url(), stripe_fixture::kSecretKey, 200);
    CHECK(stripe->retrieve_intent("pi_000000000000000000000000", false).code() == billing_errc::unavailable);
  }
}

TEST_CASE("stripe provider: an https base speaks TLS") {
  // The fixture speaks plain HTTP, so a TLS handshake with it fails before any request is read:
  // proof that https:// selects the TLS client, whose certificate checks stay on.
  stripe_fixture fx;
  auto stripe = open_stripe("https://127.0.0.1:" + std::to_string(fx.port()), fx.secret_key(), 1000);
  auto r = stripe->retrieve_intent("pi_000000000000000000000000", false);
  CHECK(r.code() == billing_errc::unavailable);
  CHECK(fx.requests() == 0);
}

TEST_CASE("stripe provider: amount bounds are checked before any request") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  CHECK(stripe->create_intent(kMinAmountCents - 1, "ab01", "k").code() == billing_errc::invalid_amount);
  CHECK(stripe->create_intent(kMaxAmountCents + 1, "ab01", "k").code() == billing_errc::invalid_amount);
  CHECK(fx.requests() == 0);
  CHECK(stripe->create_intent(kMaxAmountCents, "ab01", "k"));
}

TEST_CASE("stripe provider: concurrent calls share the provider safely") {
  stripe_fixture fx;
  auto stripe = open_stripe(fx);
  constexpr int kThreads = 6;
  constexpr int kCalls = 10;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        auto pi = stripe->create_intent(500 + i, "ab01", "thread-" + std::to_string(t) + "-" + std::to_string(i));
        if (pi && stripe->retrieve_intent(pi->id, false))
          ++ok[t];
      }
    });
  for (auto& th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    CHECK(ok[t] == kCalls);
  CHECK(fx.intent_count() == kThreads * kCalls);
}

TEST_CASE("stripe fixture: refuses what Stripe refuses") {
  // The fixture's own checks, so that the provider tests can trust its 200s; a raw client sends
  // the forms the provider never would.
  stripe_fixture fx;
  httplib::Client http(fx.base_url());
  const httplib::Headers auth{{"Authorization", "Bearer " + fx.secret_key()}};
  const auto form = "application/x-www-form-urlencoded";
  struct case_ {
    std::string_view body;
    int status;
    std::string_view code;  // error.code, "" when Stripe gives none
  };
  // Codes and messages as Stripe's test mode answers them (docs.stripe.com/error-codes).
  const case_ cases[] = {
      {"currency=usd", 400, "parameter_missing"},
      {"amount=500", 400, "parameter_missing"},
      {"amount=abc&currency=usd", 400, "parameter_invalid_integer"},
      {"amount=-5&currency=usd", 400, "parameter_invalid_integer"},
      {"amount=49&currency=usd", 400, "amount_too_small"},
      {"amount=100000000&currency=usd", 400, "amount_too_large"},
      {"amount=500&currency=usd&colour=red", 400, "parameter_unknown"},
      {"amount=500&currency=usd&automatic_payment_method%5Benabled%5D=true", 400, "parameter_unknown"},
      {"amount=500&currency=eur", 400, ""},
      {"amount=500&currency=usd&automatic_payment_methods%5Benabled%5D=yes", 400, ""},
      {"amount=500&currency=usd", 200, ""},
      {"amount=500&currency=usd&metadata%5Baccount%5D=ab&automatic_payment_methods%5Benabled%5D="
       "true",
       200, ""},
  };
  for (const auto& c : cases) {
    auto res = http.Post("/v1/payment_intents", auth, std::string(c.body), form);
    REQUIRE(res);
    CHECK_MESSAGE(res->status == c.status, c.body);
    if (c.status != 200) {
      const auto v = boost::json::parse(res->body);
      const auto& e = v.at("error").as_object();
      CHECK(e.at("type") == "invalid_request_error");
      const auto* code = e.if_contains("code");
      CHECK_MESSAGE((code != nullptr ? std::string(code->as_string()) : "") == c.code, c.body);
    }
  }
  CHECK(fx.intent_count() == 2);

  // Authentication: missing or wrong key.
  auto none = http.Get("/v1/payment_intents/pi_x");
  REQUIRE(none);
  CHECK(none->status == 401);
  auto wrong = http.Get("/v1/payment_intents/pi_x", {{"Authorization", "Bearer sk_test_nope"}});
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  auto missing = http.Get("/v1/payment_intents/pi_x", auth);
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(boost::json::parse(missing->body).at("error").at("code") == "resource_missing");

  // Idempotency: a replay is marked, another form under the same key is refused.
  const httplib::Headers keyed{{"Authorization", "Bearer " + fx.secret_key()}, {"Idempotency-Key", "fx-key"}};
  auto first = http.Post("/v1/payment_intents", keyed, "amount=600&currency=usd", form);
  auto again = http.Post("/v1/payment_intents", keyed, "amount=600&currency=usd", form);
  auto other = http.Post("/v1/payment_intents", keyed, "amount=700&currency=usd", form);
  REQUIRE(first);
  REQUIRE(again);
  REQUIRE(other);
  CHECK(first->status == 200);
  CHECK(again->body == first->body);
  CHECK(again->get_header_value("Idempotent-Replayed") == "true");
  CHECK(other->status == 400);
  CHECK(boost::json::parse(other->body).at("error").at("type") == "idempotency_error");
  CHECK(fx.intent_count() == 3);

  CHECK_FALSE(fx.set_status("pi_unknown", "succeeded"));
  CHECK(fx.requests() == std::size(cases) + 6);
}
