// SPDX-License-Identifier: Apache-2.0
// The metering store's schema, version by version, in the dialect both databases share
// (session.hpp), and the integer reading of its rows.
#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "metering/session.hpp"

namespace enact::metering::sql {
int64_t rows::i64(size_t row, size_t col) const {
  const auto& v = data.at(row).at(col);
  if (!v)
    return 0;
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc{} || end != v->data() + v->size())
    throw std::runtime_error("metering: corrupt row: expected an integer, got '" + *v + "'");
  return n;
}

std::vector<std::string> schema(std::string_view seq_column) {
  std::string v1 = R"sql(
CREATE TABLE metering_accounts (
  account text PRIMARY KEY,
  balance bigint NOT NULL CHECK (balance >= 0)
);
CREATE TABLE metering_key_spending (
  account  text   NOT NULL,
  key_hash text   NOT NULL,
  spent    bigint NOT NULL CHECK (spent >= 0),
  PRIMARY KEY (account, key_hash)
);
CREATE TABLE metering_reservations (
  id         text   PRIMARY KEY,
  account    text   NOT NULL,
  key_hash   text   NOT NULL,
  amount     bigint NOT NULL CHECK (amount > 0),
  run_id     text   NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX metering_reservations_by_account ON metering_reservations(account, key_hash);
CREATE INDEX metering_reservations_by_expiry ON metering_reservations(expires_at);
CREATE TABLE metering_charges (
  seq      SEQ,
  account  text   NOT NULL,
  run_id   text   NOT NULL,
  key_hash text   NOT NULL,
  amount   bigint NOT NULL,
  at       bigint NOT NULL
);
CREATE INDEX metering_charges_by_account ON metering_charges(account, seq);
CREATE TABLE metering_payments (
  seq           SEQ,
  id            text   NOT NULL UNIQUE,
  account       text   NOT NULL,
  amount        bigint NOT NULL CHECK (amount > 0),
  provider      text   NOT NULL,
  created_at    bigint NOT NULL,
  credited_at   bigint,
  balance_after bigint NOT NULL DEFAULT 0
);
CREATE INDEX metering_payments_by_account ON metering_payments(account, seq);
)sql";
  for (size_t at = v1.find("SEQ"); at != std::string::npos; at = v1.find("SEQ", at))
    v1.replace(at, 3, seq_column);
  // v2: the answers kept for Idempotency-Keys (docs/protocol.md §0 "Idempotency"); status and
  // body are NULL while the claimed request runs.
  std::string v2 = R"sql(
CREATE TABLE metering_idempotency (
  account     text    NOT NULL,
  idem_key    text    NOT NULL,
  fingerprint text    NOT NULL,
  created_at  bigint  NOT NULL,
  lease_until bigint  NOT NULL,
  status      integer,
  body        text,
  PRIMARY KEY (account, idem_key)
);
CREATE INDEX metering_idempotency_by_age ON metering_idempotency(created_at);
)sql";
  // v3: who holds a claim (idempotency_request::owner), so that a takeover is a compare-and-set
  // on owner and lease and a claimant taken over can no longer answer or free the key.
  std::string v3 = "ALTER TABLE metering_idempotency ADD COLUMN owner text NOT NULL DEFAULT ''";
  // v4: the single-use values recorded by use_once (store.hpp), until they expire; the index
  // lets expire_nonces take its bounded batches without a scan of the table.
  std::string v4 = R"sql(
CREATE TABLE metering_nonces (
  id         text   PRIMARY KEY,
  expires_at bigint NOT NULL
);
CREATE INDEX metering_nonces_by_expiry ON metering_nonces(expires_at);
)sql";
  // v5: payments taken back (store.hpp reverse_payment), one row per event that changed a
  // payment's reversals, and the credits an account owes once a reversal passed its balance
  // (the balance itself stays non-negative, so the run path's checks are unchanged).
  std::string v5 = R"sql(
CREATE TABLE metering_reversals (
  seq        SEQ,
  event_id   text   NOT NULL UNIQUE,
  payment_id text   NOT NULL,
  account    text   NOT NULL,
  kind       text   NOT NULL,
  ref        text   NOT NULL,
  amount     bigint NOT NULL CHECK (amount >= 0),
  created_at bigint NOT NULL
);
CREATE INDEX metering_reversals_by_payment ON metering_reversals(payment_id, seq);
ALTER TABLE metering_accounts ADD COLUMN owed bigint NOT NULL DEFAULT 0 CHECK (owed >= 0);
)sql";
  for (size_t at = v5.find("SEQ"); at != std::string::npos; at = v5.find("SEQ", at))
    v5.replace(at, 3, seq_column);
  return {std::move(v1), std::move(v2), std::move(v3), std::move(v4), std::move(v5)};
}

}  // namespace enact::metering::sql
