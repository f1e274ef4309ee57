// SPDX-License-Identifier: Apache-2.0
// The PostgreSQL trigger store (pg_store.hpp): API tokens, approvals of the browser handshake and
// browser sessions.
#include "triggers/pg_store_internal.hpp"

namespace enact::triggers {

using namespace pg_backend;

namespace {

/// Inserts token `t`; conflict when a token with its hash exists.
result<void> insert_token_row(connection& c, const token_record& t) {
  if (c.exec("INSERT INTO tokens (hash, user_id, client_name, created_at, expires_at, revoked) "
             "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
             t.hash, t.user_id, t.client_name, t.created_at, t.expires_at, t.revoked)
          .affected() == 0)
    return fail(store_errc::conflict, "token: a token with this hash exists");
  return {};
}

/// Inserts session `s`; conflict when a session with its hash exists.
result<void> insert_session_row(connection& c, const browser_session& s) {
  if (c.exec("INSERT INTO browser_sessions (hash, user_id, nonce, created_at, expires_at) "
             "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
             s.hash, s.user_id, s.nonce, s.created_at, s.expires_at)
          .affected() == 0)
    return fail(store_errc::conflict, "session: a session with this hash exists");
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// tokens and approvals

result<void> pg_store::insert_token(const token_record& t) {
  ENACT_TRY_VOID(check_text("token.user_id", t.user_id, 256));
  ENACT_TRY_VOID(check_text("token.client_name", t.client_name, 256));
  if (t.user_id.empty())
    return fail(store_errc::invalid_argument, "token.user_id: must not be empty");
  return impl_->once([&](connection& c) -> result<void> { return insert_token_row(c, t); });
}

result<token_record> pg_store::find_token(const hash256& hash) const {
  return impl_->once([&](connection& c) -> result<token_record> {
    rows q =
        c.exec("SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens WHERE hash = $1", hash);
    if (!q.next())
      return fail(store_errc::not_found, "token: unknown");
    return read_token(q);
  });
}

result<void> pg_store::revoke_token(const hash256& hash, std::string_view user_id) {
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("UPDATE tokens SET revoked = true WHERE hash = $1 AND user_id = $2", hash, user_id).affected() == 0)
      return fail(store_errc::not_found, "token: unknown");
    return {};
  });
}

result<std::vector<token_record>> pg_store::list_tokens(std::string_view user_id) const {
  return impl_->once([&](connection& c) -> result<std::vector<token_record>> {
    std::vector<token_record> out;
    rows q = c.exec(
        "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens "
        "WHERE user_id = $1 ORDER BY created_at DESC, hash",
        user_id);
    while (q.next())
      out.push_back(read_token(q));
    return out;
  });
}

#define APPROVAL_SELECT \
  "SELECT challenge, client_name, status, user_id, token_hash, created_at, expires_at FROM approvals "

result<void> pg_store::create_approval(const approval& a) {
  if (a.challenge.empty())
    return fail(store_errc::invalid_argument, "approval.challenge: must not be empty");
  ENACT_TRY_VOID(check_text("approval.challenge", a.challenge, 128));
  ENACT_TRY_VOID(check_text("approval.client_name", a.client_name, 256));
  return impl_->once([&](connection& c) -> result<void> {
    if (c.exec("INSERT INTO approvals (challenge, client_name, status, user_id, token_hash, "
               "created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
               a.challenge, a.client_name, to_string(a.status), a.user_id, a.token_hash, a.created_at, a.expires_at)
            .affected() == 0)
      return fail(store_errc::conflict, "approval: this challenge exists already");
    return {};
  });
}

result<approval> pg_store::get_approval(std::string_view challenge) const {
  return impl_->once([&](connection& c) -> result<approval> {
    rows q = c.exec(APPROVAL_SELECT "WHERE challenge = $1", challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    return read_approval(q);
  });
}

result<approval> pg_store::decide_approval(std::string_view challenge, std::string_view user_id, bool approve,
                                           time_point now) {
  if (user_id.empty())
    return fail(store_errc::invalid_argument, "approval: user_id must not be empty");
  return impl_->write([&](connection& c) -> result<approval> {
    const bool changed = c.exec(
                              "UPDATE approvals SET status = $1, user_id = $2 WHERE challenge = $3 AND status = "
                              "'pending' AND expires_at > $4",
                              approve ? "approved" : "denied", user_id, challenge, now)
                             .affected() == 1;
    rows q = c.exec(APPROVAL_SELECT "WHERE challenge = $1", challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    if (!changed)
      return fail(store_errc::conflict, "approval: decided already, or expired");
    return read_approval(q);
  });
}

result<token_record> pg_store::claim_approval(std::string_view challenge, const token_record& t, time_point now) {
  return impl_->write([&](connection& c) -> result<token_record> {
    std::optional<approval> a;
    {
      // Locked: two claims of one approval run one after the other; the second sees the hash.
      rows q = c.exec(APPROVAL_SELECT "WHERE challenge = $1 FOR UPDATE", challenge);
      if (!q.next())
        return fail(store_errc::not_found, "approval: unknown challenge");
      a = read_approval(q);
    }
    if (a->status != approval_status::approved || a->token_hash || a->expires_at <= now)
      return fail(store_errc::conflict, "approval: not approved, claimed already, or expired");
    if (a->user_id != t.user_id)
      return fail(store_errc::invalid_argument, "approval: the token must belong to the approver");
    ENACT_TRY_VOID(insert_token_row(c, t));
    c.exec("UPDATE approvals SET token_hash = $1 WHERE challenge = $2", t.hash, challenge);
    return t;
  });
}

// ---------------------------------------------------------------------------------------------
// browser sessions

result<void> pg_store::create_session(const browser_session& s) {
  ENACT_TRY_VOID(check_text("session.user_id", s.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", s.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    c.exec("DELETE FROM browser_sessions WHERE expires_at <= $1", s.created_at);
    return insert_session_row(c, s);
  });
}

result<browser_session> pg_store::find_session(const hash256& hash) const {
  return impl_->once([&](connection& c) -> result<browser_session> {
    rows q = c.exec("SELECT hash, user_id, nonce, created_at, expires_at FROM browser_sessions WHERE hash = $1", hash);
    if (!q.next())
      return fail(store_errc::not_found, "session: unknown");
    browser_session s;
    s.hash = q.fixed<32>(0);
    s.user_id = q.text(1);
    s.nonce = q.text(2);
    s.created_at = q.time(3);
    s.expires_at = q.time(4);
    return s;
  });
}

result<void> pg_store::sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,
                                       time_point now) {
  if (nonce.empty())
    return fail(store_errc::not_found, "session: no sign-in nonce");
  ENACT_TRY_VOID(check_text("session.user_id", signed_in.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", signed_in.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    // The DELETE is the single use: of two sign-ins with one nonce, the second deletes nothing.
    if (c.exec("DELETE FROM browser_sessions WHERE hash = $1 AND nonce = $2 AND expires_at > $3", pre, nonce, now)
            .affected() == 0)
      return fail(store_errc::not_found, "session: unknown or expired, or its nonce was used or differs");
    return insert_session_row(c, signed_in);
  });
}

result<void> pg_store::end_session(const hash256& hash) {
  return impl_->write([&](connection& c) -> result<void> {
    if (c.exec("DELETE FROM browser_sessions WHERE hash = $1", hash).affected() == 0)
      return fail(store_errc::not_found, "session: unknown");
    return {};
  });
}

}  // namespace enact::triggers
