// SPDX-License-Identifier: Apache-2.0
// The SQLite trigger store (sqlite_store.hpp): API tokens, approvals of the browser handshake and
// browser sessions.
#include "triggers/sqlite_store_internal.hpp"

namespace enact::triggers {

using namespace sqlite_backend;

namespace {

/// Inserts token `t`; conflict when a token with its hash exists.
result<void> insert_token_row(connection& c, const token_record& t) {
  query(c,
        "INSERT INTO tokens (hash, user_id, client_name, created_at, expires_at, revoked) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .bind(t.hash, t.user_id, t.client_name, t.created_at, t.expires_at, t.revoked)
      .run();
  if (c.changes() == 0)
    return fail(store_errc::conflict, "token: a token with this hash exists");
  return {};
}

/// Inserts session `s`; conflict when a session with its hash exists.
result<void> insert_session_row(connection& c, const browser_session& s) {
  query(c,
        "INSERT INTO browser_sessions (hash, user_id, nonce, created_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .bind(s.hash, s.user_id, s.nonce, s.created_at, s.expires_at)
      .run();
  if (c.changes() == 0)
    return fail(store_errc::conflict, "session: a session with this hash exists");
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// tokens and approvals

result<void> sqlite_store::insert_token(const token_record& t) {
  ENACT_TRY_VOID(check_text("token.user_id", t.user_id, 256));
  ENACT_TRY_VOID(check_text("token.client_name", t.client_name, 256));
  if (t.user_id.empty())
    return fail(store_errc::invalid_argument, "token.user_id: must not be empty");
  return impl_->write([&](connection& c) -> result<void> { return insert_token_row(c, t); });
}

result<token_record> sqlite_store::find_token(const hash256& hash) const {
  return impl_->read([&](connection& c) -> result<token_record> {
    query q(c, "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens WHERE hash = ?");
    q.bind(hash);
    if (!q.next())
      return fail(store_errc::not_found, "token: unknown");
    return read_token(q);
  });
}

result<void> sqlite_store::revoke_token(const hash256& hash, std::string_view user_id) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "UPDATE tokens SET revoked = 1 WHERE hash = ? AND user_id = ?").bind(hash, user_id).run();
    if (c.changes() == 0)
      return fail(store_errc::not_found, "token: unknown");
    return {};
  });
}

result<std::vector<token_record>> sqlite_store::list_tokens(std::string_view user_id) const {
  return impl_->read([&](connection& c) -> result<std::vector<token_record>> {
    std::vector<token_record> out;
    query q(c,
            "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens "
            "WHERE user_id = ? ORDER BY created_at DESC, hash");
    q.bind(user_id);
    while (q.next())
      out.push_back(read_token(q));
    return out;
  });
}

#define APPROVAL_SELECT \
  "SELECT challenge, client_name, status, user_id, token_hash, created_at, expires_at FROM approvals "

result<void> sqlite_store::create_approval(const approval& a) {
  if (a.challenge.empty())
    return fail(store_errc::invalid_argument, "approval.challenge: must not be empty");
  ENACT_TRY_VOID(check_text("approval.challenge", a.challenge, 128));
  ENACT_TRY_VOID(check_text("approval.client_name", a.client_name, 256));
  return impl_->write([&](connection& c) -> result<void> {
    query(c,
          "INSERT INTO approvals (challenge, client_name, status, user_id, token_hash, created_at, "
          "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(a.challenge, a.client_name, to_string(a.status), a.user_id, a.token_hash, a.created_at, a.expires_at)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::conflict, "approval: this challenge exists already");
    return {};
  });
}

result<approval> sqlite_store::get_approval(std::string_view challenge) const {
  return impl_->read([&](connection& c) -> result<approval> {
    query q(c, APPROVAL_SELECT "WHERE challenge = ?");
    q.bind(challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    return read_approval(q);
  });
}

result<approval> sqlite_store::decide_approval(std::string_view challenge, std::string_view user_id, bool approve,
                                               time_point now) {
  if (user_id.empty())
    return fail(store_errc::invalid_argument, "approval: user_id must not be empty");
  return impl_->write([&](connection& c) -> result<approval> {
    query(c,
          "UPDATE approvals SET status = ?, user_id = ? WHERE challenge = ? AND status = "
          "'pending' AND expires_at > ?")
        .bind(approve ? "approved" : "denied", user_id, challenge, now)
        .run();
    const bool changed = c.changes() == 1;
    query q(c, APPROVAL_SELECT "WHERE challenge = ?");
    q.bind(challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    if (!changed)
      return fail(store_errc::conflict, "approval: decided already, or expired");
    return read_approval(q);
  });
}

result<token_record> sqlite_store::claim_approval(std::string_view challenge, const token_record& t, time_point now) {
  return impl_->write([&](connection& c) -> result<token_record> {
    std::optional<approval> a;
    {
      query q(c, APPROVAL_SELECT "WHERE challenge = ?");
      q.bind(challenge);
      if (!q.next())
        return fail(store_errc::not_found, "approval: unknown challenge");
      a = read_approval(q);
    }
    if (a->status != approval_status::approved || a->token_hash || a->expires_at <= now)
      return fail(store_errc::conflict, "approval: not approved, claimed already, or expired");
    if (a->user_id != t.user_id)
      return fail(store_errc::invalid_argument, "approval: the token must belong to the approver");
    ENACT_TRY_VOID(insert_token_row(c, t));
    query(c, "UPDATE approvals SET token_hash = ? WHERE challenge = ?").bind(t.hash, challenge).run();
    return t;
  });
}

// ---------------------------------------------------------------------------------------------
// browser sessions

result<void> sqlite_store::create_session(const browser_session& s) {
  ENACT_TRY_VOID(check_text("session.user_id", s.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", s.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM browser_sessions WHERE expires_at <= ?").bind(s.created_at).run();
    return insert_session_row(c, s);
  });
}

result<browser_session> sqlite_store::find_session(const hash256& hash) const {
  return impl_->read([&](connection& c) -> result<browser_session> {
    query q(c, "SELECT hash, user_id, nonce, created_at, expires_at FROM browser_sessions WHERE hash = ?");
    q.bind(hash);
    if (!q.next())
      return fail(store_errc::not_found, "session: unknown");
    return read_session(q);
  });
}

result<void> sqlite_store::sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,
                                           time_point now) {
  if (nonce.empty())
    return fail(store_errc::not_found, "session: no sign-in nonce");
  ENACT_TRY_VOID(check_text("session.user_id", signed_in.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", signed_in.nonce, 128));
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM browser_sessions WHERE hash = ? AND nonce = ? AND expires_at > ?")
        .bind(pre, nonce, now)
        .run();
    if (c.changes() == 0)
      return fail(store_errc::not_found, "session: unknown or expired, or its nonce was used or differs");
    return insert_session_row(c, signed_in);
  });
}

result<void> sqlite_store::end_session(const hash256& hash) {
  return impl_->write([&](connection& c) -> result<void> {
    query(c, "DELETE FROM browser_sessions WHERE hash = ?").bind(hash).run();
    if (c.changes() == 0)
      return fail(store_errc::not_found, "session: unknown");
    return {};
  });
}

}  // namespace enact::triggers
