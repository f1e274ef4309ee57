// The dev payment provider over SQLite. One connection guarded by a mutex; the check for an
// existing idempotency key and the insert run in one IMMEDIATE transaction, so two processes
// sharing the file cannot both create an intent for the same key either.
#include "billing/dev_provider.hpp"

#include <sqlite3.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include "billing/create_checks.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/random.hpp"

namespace enact::billing {

namespace {

constexpr std::string_view kIdPrefix = "pi_dev_";
constexpr size_t kIdRandomBytes = 12;      // 24 hex digits
constexpr size_t kSecretRandomBytes = 16;  // 32 hex digits
constexpr std::string_view kCreatedStatus = "requires_payment_method";
constexpr std::string_view kSucceededStatus = "succeeded";
constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kSchema = R"sql(
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
)sql";

[[nodiscard]] error store_error(sqlite3* db, std::string_view what) {
  return fail(billing_errc::unavailable, "dev billing store: " + std::string(what) + ": " +
                                             (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

[[nodiscard]] std::string random_hex(size_t n) {
  std::array<uint8_t, 32> buf{};
  const std::span<uint8_t> out(buf.data(), n);
  random_bytes(out);
  return hex::encode(out);
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

/// A prepared statement, finalized on scope exit.
class statement {
 public:
  statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      stmt_ = nullptr;
  }
  ~statement() { sqlite3_finalize(stmt_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  [[nodiscard]] bool ok() const noexcept { return stmt_ != nullptr; }
  void bind(int i, std::string_view s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind_null(int i) { sqlite3_bind_null(stmt_, i); }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  [[nodiscard]] int step() { return sqlite3_step(stmt_); }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p != nullptr
               ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
               : std::string();
  }
  [[nodiscard]] int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

[[nodiscard]] result<void> exec(sqlite3* db, const char* sql, std::string_view what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return store_error(db, what);
  return {};
}

/// Rolls back an open transaction unless `commit()` succeeded.
class transaction {
 public:
  explicit transaction(sqlite3* db) : db_(db) {}
  ~transaction() {
    if (open_)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  [[nodiscard]] result<void> begin() {
    ENACT_TRY_VOID(exec(db_, "BEGIN IMMEDIATE", "begin"));
    open_ = true;
    return {};
  }
  [[nodiscard]] result<void> commit() {
    ENACT_TRY_VOID(exec(db_, "COMMIT", "commit"));
    open_ = false;
    return {};
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};

struct stored_intent {
  payment_intent intent;
  std::string account_ref;
};

#define ENACT_SELECT_INTENT \
  "SELECT id, client_secret, amount_cents, currency, status, account_ref FROM payment_intents "
constexpr const char* kSelectById = ENACT_SELECT_INTENT "WHERE id = ?1";
constexpr const char* kSelectByKey = ENACT_SELECT_INTENT "WHERE idempotency_key = ?1";
#undef ENACT_SELECT_INTENT

[[nodiscard]] stored_intent read_row(const statement& st) {
  stored_intent s;
  s.intent.id = st.text(0);
  s.intent.client_secret = st.text(1);
  s.intent.amount_cents = static_cast<uint64_t>(st.int64(2));
  s.intent.currency = st.text(3);
  s.intent.status = st.text(4);
  s.account_ref = st.text(5);
  return s;
}

/// The intent the one-parameter `sql` selects with `value`, or nullopt.
[[nodiscard]] result<std::optional<stored_intent>> find_by(sqlite3* db, const char* sql, std::string_view value) {
  statement st(db, sql);
  if (!st.ok())
    return store_error(db, "prepare select");
  st.bind(1, value);
  const int rc = st.step();
  if (rc == SQLITE_DONE)
    return std::optional<stored_intent>{};
  if (rc != SQLITE_ROW)
    return store_error(db, "select");
  return std::optional<stored_intent>{read_row(st)};
}

}  // namespace

result<std::unique_ptr<dev_provider>> dev_provider::open(const std::string& sqlite_path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(sqlite_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  // From here on the provider owns `db` (even a failed open allocates a handle to close).
  std::unique_ptr<dev_provider> p(new dev_provider(db));
  if (rc != SQLITE_OK)
    return store_error(db, "open " + sqlite_path);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // WAL lets a second reader (an operator's sqlite3 shell) look without blocking the server.
  ENACT_TRY_VOID(exec(db, "PRAGMA journal_mode = WAL", "enable WAL"));
  ENACT_TRY_VOID(exec(db, kSchema, "create schema"));
  return p;
}

dev_provider::~dev_provider() { sqlite3_close_v2(db_); }

result<payment_intent> dev_provider::create_intent(uint64_t amount_cents, std::string_view account_ref,
                                                   std::string_view idempotency_key) {
  ENACT_TRY_VOID(detail::check_create_request(amount_cents, account_ref, idempotency_key));

  const std::lock_guard lock(mutex_);
  transaction tx(db_);
  ENACT_TRY_VOID(tx.begin());

  if (!idempotency_key.empty()) {
    ENACT_TRY(auto existing, find_by(db_, kSelectByKey, idempotency_key));
    if (existing) {
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

  statement st(db_,
               "INSERT INTO payment_intents (id, client_secret, amount_cents, currency, status, "
               "account_ref, idempotency_key, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!st.ok())
    return store_error(db_, "prepare insert");
  st.bind(1, pi.id);
  st.bind(2, pi.client_secret);
  st.bind(3, static_cast<int64_t>(amount_cents));
  st.bind(4, pi.currency);
  st.bind(5, pi.status);
  st.bind(6, account_ref);
  if (idempotency_key.empty())
    st.bind_null(7);
  else
    st.bind(7, idempotency_key);
  st.bind(8, static_cast<int64_t>(
                 std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                     .count()));
  if (st.step() != SQLITE_DONE)
    return store_error(db_, "insert");
  ENACT_TRY_VOID(tx.commit());
  return pi;
}

result<payment_intent> dev_provider::retrieve_intent(std::string_view id, bool confirm) {
  if (!is_dev_intent_id(id))
    return fail(billing_errc::unknown_intent, "payment_intent_id: not a dev payment intent id");

  const std::lock_guard lock(mutex_);
  if (confirm) {
    statement st(db_, "UPDATE payment_intents SET status = ?1 WHERE id = ?2 AND status = ?3");
    if (!st.ok())
      return store_error(db_, "prepare update");
    st.bind(1, kSucceededStatus);
    st.bind(2, id);
    st.bind(3, kCreatedStatus);
    if (st.step() != SQLITE_DONE)
      return store_error(db_, "update");
  }
  ENACT_TRY(auto found, find_by(db_, kSelectById, id));
  if (!found)
    return fail(billing_errc::unknown_intent, "payment_intent_id: no such payment intent " + std::string(id));
  return std::move(found->intent);
}

}  // namespace enact::billing
