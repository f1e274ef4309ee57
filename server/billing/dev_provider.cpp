// SPDX-License-Identifier: Apache-2.0
// The dev payment provider over SQLite (the storage kit). One connection guarded by a mutex; the
// check for an existing idempotency key and the insert run in one IMMEDIATE transaction, so two processes
// sharing the file cannot both create an intent for the same key either.
#include "billing/dev_provider.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include "billing/create_checks.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"
#include "storage/sqlite.hpp"

namespace enact::billing {

using storage::connection;
using storage::query;

namespace {

constexpr std::string_view kIdPrefix = "pi_dev_";
constexpr size_t kIdRandomBytes = 12;      // 24 hex digits
constexpr size_t kSecretRandomBytes = 16;  // 32 hex digits
constexpr std::string_view kCreatedStatus = "requires_payment_method";
constexpr std::string_view kSucceededStatus = "succeeded";
// Schema steps (storage::migrate, PRAGMA user_version); append, never edit. Step 1 creates the
// table only when missing: files of builds before versioning have it at version 0.
constexpr const char* kMigrations[] = {R"sql(
CREATE TABLE IF NOT EXISTS payment_intents (
  id              TEXT PRIMARY KEY,
  client_secret   TEXT NOT NULL,
  amount_cents    INTEGER NOT NULL,
  currency        TEXT NOT NULL,
  status          TEXT NOT NULL,
  account_ref     TEXT NOT NULL,
  idempotency_key TEXT UNIQUE,  -- NULL when the caller gave none
  created_at      INTEGER NOT NULL
);
)sql"};

[[nodiscard]] error store_error(const std::exception& e) {
  return fail(billing_errc::unavailable, "dev billing store: " + std::string(e.what()));
}

[[nodiscard]] std::string random_hex(size_t n) {
  std::array<uint8_t, 32> buf{};
  const std::span<uint8_t> out(buf.data(), n);
  crypto::random_bytes(out);
  return codec::hex::encode(out);
}

/// `pi_dev_` + 24 lowercase hex digits: the only ids this provider ever hands out.
[[nodiscard]] bool is_dev_intent_id(std::string_view id) noexcept {
  if (id.size() != kIdPrefix.size() + 2 * kIdRandomBytes || !id.starts_with(kIdPrefix))
    return false;
  for (const char c : id.substr(kIdPrefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

struct stored_intent {
  payment_intent intent;
  std::string account_ref;
};

#define ENACT_SELECT_INTENT \
  "SELECT id, client_secret, amount_cents, currency, status, account_ref FROM payment_intents "
constexpr const char* kSelectById = ENACT_SELECT_INTENT "WHERE id = ?1";
constexpr const char* kSelectByKey = ENACT_SELECT_INTENT "WHERE idempotency_key = ?1";
#undef ENACT_SELECT_INTENT

[[nodiscard]] stored_intent read_row(const query& q) {
  stored_intent s;
  s.intent.id = q.text(0);
  s.intent.client_secret = q.text(1);
  s.intent.amount_cents = q.u64(2);
  s.intent.currency = q.text(3);
  s.intent.status = q.text(4);
  s.account_ref = q.text(5);
  return s;
}

/// The intent the one-parameter `sql` selects with `value`, or nullopt.
[[nodiscard]] std::optional<stored_intent> find_by(connection& c, const char* sql, std::string_view value) {
  query q(c, sql);
  q.bind(value);
  if (!q.next())
    return std::nullopt;
  return read_row(q);
}

}  // namespace

result<std::unique_ptr<dev_provider>> dev_provider::open(const std::string& sqlite_path) {
  try {
    auto db = std::make_unique<connection>(sqlite_path);
    // WAL lets a second reader (an operator's sqlite3 shell) look without blocking the server.
    db->exec("PRAGMA journal_mode = WAL");
    storage::migrate(*db, kMigrations);
    return std::unique_ptr<dev_provider>(new dev_provider(std::move(db)));
  } catch (const std::exception& e) {
    return store_error(e);
  }
}

dev_provider::dev_provider(std::unique_ptr<connection> db) noexcept : db_(std::move(db)) {}
dev_provider::~dev_provider() = default;

result<payment_intent> dev_provider::create_intent(uint64_t amount_cents, std::string_view account_ref,
                                                   std::string_view idempotency_key) {
  ENACT_TRY_VOID(detail::check_create_request(amount_cents, account_ref, idempotency_key));

  const std::lock_guard lock(mutex_);
  try {
    storage::transaction tx(*db_);
    if (!idempotency_key.empty()) {
      if (auto existing = find_by(*db_, kSelectByKey, idempotency_key)) {
        // Stripe's rule: a key replays its first request and refuses different parameters.
        if (existing->intent.amount_cents != amount_cents || existing->account_ref != account_ref)
          return fail(billing_errc::provider_error, "idempotency_key: already used with different parameters");
        return std::move(existing->intent);
      }
    }

    payment_intent pi;
    pi.id = std::string(kIdPrefix) + random_hex(kIdRandomBytes);
    pi.client_secret = pi.id + "_secret_" + random_hex(kSecretRandomBytes);
    pi.amount_cents = amount_cents;
    pi.currency = "usd";
    pi.status = std::string(kCreatedStatus);
    const std::optional<std::string_view> key =
        idempotency_key.empty() ? std::nullopt : std::optional<std::string_view>(idempotency_key);
    query(*db_,
          "INSERT INTO payment_intents (id, client_secret, amount_cents, currency, status, "
          "account_ref, idempotency_key, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
        .bind(pi.id, pi.client_secret, amount_cents, pi.currency, pi.status, account_ref, key,
              std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()))
        .run();
    tx.commit();
    return pi;
  } catch (const std::exception& e) {
    return store_error(e);
  }
}

result<payment_intent> dev_provider::retrieve_intent(std::string_view id, bool confirm) {
  if (!is_dev_intent_id(id))
    return fail(billing_errc::unknown_intent, "payment_intent_id: not a dev payment intent id");

  const std::lock_guard lock(mutex_);
  try {
    if (confirm)
      query(*db_, "UPDATE payment_intents SET status = ?1 WHERE id = ?2 AND status = ?3")
          .bind(kSucceededStatus, id, kCreatedStatus)
          .run();
    auto found = find_by(*db_, kSelectById, id);
    if (!found)
      return fail(billing_errc::unknown_intent, "payment_intent_id: no such payment intent " + std::string(id));
    return std::move(found->intent);
  } catch (const std::exception& e) {
    return store_error(e);
  }
}

}  // namespace enact::billing
