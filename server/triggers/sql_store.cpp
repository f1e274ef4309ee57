// SPDX-License-Identifier: Apache-2.0
// The trigger store's body over SQL (sql_store.hpp): the trigger records, API tokens, approvals of
// the browser handshake and browser sessions; runs, schedules and chain logs are in
// sql_store_runs.cpp.
#include "triggers/sql_store.hpp"

#include "triggers/sql_store_internal.hpp"

namespace enact::triggers {

using namespace store_rows;
using sql::connection;
using sql::cursor;

namespace sql {

std::optional<trigger> load_trigger(connection& c, std::string_view id, bool lock) {
  cursor q = lock ? c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = $1 FOR UPDATE", id)
                  : c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.id = $1", id);
  if (!q.next())
    return std::nullopt;
  return read_trigger(q);
}

}  // namespace sql

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

/// A chain-event config's start_block; nullopt for other configs or when it has none.
std::optional<uint64_t> chain_start_block(const api::trigger_config& config) {
  const auto* chain = std::get_if<api::chain_event_config>(&config);
  return chain != nullptr ? chain->start_block : std::nullopt;
}

#define APPROVAL_SELECT \
  "SELECT challenge, client_name, status, user_id, token_hash, created_at, expires_at FROM approvals "

}  // namespace

// ---------------------------------------------------------------------------------------------
// triggers

result<trigger> sql_store::create_trigger(const trigger& t, const std::optional<schedule_state>& s,
                                          uint64_t max_per_owner) {
  ENACT_TRY_VOID(check_new_trigger(t));
  const std::string config = config_text(t.config);
  return write([&](connection& c) -> result<trigger> {
    if (max_per_owner > 0) {
      lock_owner(c, t.owner);
      // At most the limit of them are counted (the triggers_by_owner index).
      cursor n =
          c.exec("SELECT COUNT(*) FROM (SELECT 1 FROM triggers WHERE owner = $1 LIMIT $2) o", t.owner, max_per_owner);
      if (n.next() && n.u64(0) >= max_per_owner)
        return fail(store_errc::limit_reached,
                    "the user has " + std::to_string(max_per_owner) + " triggers, the most one user may have");
    }
    const auto inserted =
        c.exec(
             "INSERT INTO triggers (id, owner, type, name, enabled, action_cid, pkp_id, "
             "sealed_usage_key, usage_key_hash, config, created_at, updated_at, max_runs_per_minute, "
             "max_queued_runs) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
             "ON CONFLICT (id) DO NOTHING",
             t.id, t.owner, to_string(t.type), t.name, t.enabled, t.action_cid, t.pkp_id, t.sealed_usage_key,
             t.usage_key_hash, config, t.created_at, t.updated_at, t.max_runs_per_minute, t.max_queued_runs)
            .affected();
    if (inserted == 0)
      return fail(store_errc::conflict, "trigger " + t.id + ": exists already");
    if (s)
      c.exec("INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3)", t.id, s->next_due,
             s->last_planned);
    trigger made = t;  // as stored: the service has not disabled it
    made.disabled_reason.reset();
    made.credit_failures = 0;
    return made;
  });
}

result<trigger> sql_store::get_trigger(std::string_view owner, std::string_view id) const {
  return read([&](connection& c) -> result<trigger> {
    auto t = sql::load_trigger(c, id);
    if (!t || t->owner != owner)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<trigger> sql_store::find_trigger(std::string_view id) const {
  return read([&](connection& c) -> result<trigger> {
    auto t = sql::load_trigger(c, id);
    if (!t)
      return no_trigger(id);
    return std::move(*t);
  });
}

result<listing<trigger>> sql_store::list_triggers(std::string_view owner, page p) const {
  return read([&](connection& c) -> result<listing<trigger>> {
    cursor n = c.exec("SELECT COUNT(*) FROM triggers WHERE owner = $1", owner);
    cursor q = c.exec("SELECT " TRIGGER_COLUMNS "FROM triggers t WHERE t.owner = $1 ORDER BY t.seq LIMIT $2 OFFSET $3",
                      owner, p.limit, p.offset);
    return read_listing<trigger>(n, q, [](const cursor& row) { return read_trigger(row); });
  });
}

result<trigger> sql_store::update_trigger(std::string_view owner, std::string_view id, const trigger_patch& patch) {
  ENACT_TRY_VOID(check_patch(patch));
  return write([&](connection& c) -> result<trigger> {
    auto t = sql::load_trigger(c, id, true);
    if (!t || t->owner != owner)
      return no_trigger(id);
    const std::optional<uint64_t> start_before = chain_start_block(t->config);
    apply_patch(*t, patch);
    c.exec(
        "UPDATE triggers SET name = $1, enabled = $2, config = $3, action_cid = $4, pkp_id = $5, "
        "sealed_usage_key = $6, usage_key_hash = $7, updated_at = $8, max_runs_per_minute = $9, "
        "max_queued_runs = $10, disabled_reason = $11, credit_failures = $12 WHERE id = $13",
        t->name, t->enabled, config_text(t->config), t->action_cid, t->pkp_id, t->sealed_usage_key, t->usage_key_hash,
        t->updated_at, t->max_runs_per_minute, t->max_queued_runs, t->disabled_reason, t->credit_failures, t->id);
    if (patch.schedule)
      c.exec(
          "INSERT INTO schedule_state (trigger_id, next_due, last_planned) VALUES ($1, $2, $3) "
          "ON CONFLICT (trigger_id) DO UPDATE SET next_due = excluded.next_due, "
          "last_planned = excluded.last_planned",
          t->id, patch.schedule->next_due, patch.schedule->last_planned);
    // A new start_block restarts the chain watch from it: without a checkpoint the watcher begins
    // at start_block, and the seen logs keep what fired before from firing again.
    if (const auto start = chain_start_block(t->config); start && start != start_before)
      c.exec("DELETE FROM chain_checkpoints WHERE trigger_id = $1", t->id);
    return std::move(*t);
  });
}

result<void> sql_store::delete_trigger(std::string_view owner, std::string_view id) {
  return write_one([&](connection& c) -> result<void> {
    if (c.exec("DELETE FROM triggers WHERE id = $1 AND owner = $2", id, owner).affected() == 0)
      return no_trigger(id);
    return {};
  });
}

// ---------------------------------------------------------------------------------------------
// tokens and approvals

result<void> sql_store::insert_token(const token_record& t) {
  ENACT_TRY_VOID(check_text("token.user_id", t.user_id, 256));
  ENACT_TRY_VOID(check_text("token.client_name", t.client_name, 256));
  if (t.user_id.empty())
    return fail(store_errc::invalid_argument, "token.user_id: must not be empty");
  return write_one([&](connection& c) -> result<void> { return insert_token_row(c, t); });
}

result<token_record> sql_store::find_token(const hash256& hash) const {
  return read([&](connection& c) -> result<token_record> {
    cursor q =
        c.exec("SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens WHERE hash = $1", hash);
    if (!q.next())
      return fail(store_errc::not_found, "token: unknown");
    return read_token(q);
  });
}

result<void> sql_store::revoke_token(const hash256& hash, std::string_view user_id) {
  return write_one([&](connection& c) -> result<void> {
    if (c.exec("UPDATE tokens SET revoked = TRUE WHERE hash = $1 AND user_id = $2", hash, user_id).affected() == 0)
      return fail(store_errc::not_found, "token: unknown");
    return {};
  });
}

result<std::vector<token_record>> sql_store::list_tokens(std::string_view user_id) const {
  return read([&](connection& c) -> result<std::vector<token_record>> {
    std::vector<token_record> out;
    cursor q = c.exec(
        "SELECT hash, user_id, client_name, created_at, expires_at, revoked FROM tokens "
        "WHERE user_id = $1 ORDER BY created_at DESC, hash",
        user_id);
    while (q.next())
      out.push_back(read_token(q));
    return out;
  });
}

result<void> sql_store::create_approval(const approval& a) {
  if (a.challenge.empty())
    return fail(store_errc::invalid_argument, "approval.challenge: must not be empty");
  ENACT_TRY_VOID(check_text("approval.challenge", a.challenge, 128));
  ENACT_TRY_VOID(check_text("approval.client_name", a.client_name, 256));
  return write_one([&](connection& c) -> result<void> {
    if (c.exec("INSERT INTO approvals (challenge, client_name, status, user_id, token_hash, "
               "created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
               a.challenge, a.client_name, to_string(a.status), a.user_id, a.token_hash, a.created_at, a.expires_at)
            .affected() == 0)
      return fail(store_errc::conflict, "approval: this challenge exists already");
    return {};
  });
}

result<approval> sql_store::get_approval(std::string_view challenge) const {
  return read([&](connection& c) -> result<approval> {
    cursor q = c.exec(APPROVAL_SELECT "WHERE challenge = $1", challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    return read_approval(q);
  });
}

result<approval> sql_store::decide_approval(std::string_view challenge, std::string_view user_id, bool approve,
                                            time_point now) {
  if (user_id.empty())
    return fail(store_errc::invalid_argument, "approval: user_id must not be empty");
  return write([&](connection& c) -> result<approval> {
    const bool changed = c.exec(
                              "UPDATE approvals SET status = $1, user_id = $2 WHERE challenge = $3 AND status = "
                              "'pending' AND expires_at > $4",
                              approve ? "approved" : "denied", user_id, challenge, now)
                             .affected() == 1;
    cursor q = c.exec(APPROVAL_SELECT "WHERE challenge = $1", challenge);
    if (!q.next())
      return fail(store_errc::not_found, "approval: unknown challenge");
    if (!changed)
      return fail(store_errc::conflict, "approval: decided already, or expired");
    return read_approval(q);
  });
}

result<token_record> sql_store::claim_approval(std::string_view challenge, const token_record& t, time_point now) {
  return write([&](connection& c) -> result<token_record> {
    std::optional<approval> a;
    {
      // Locked: two claims of one approval run one after the other; the second sees the hash.
      cursor q = c.exec(APPROVAL_SELECT "WHERE challenge = $1 FOR UPDATE", challenge);
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

result<void> sql_store::create_session(const browser_session& s) {
  ENACT_TRY_VOID(check_text("session.user_id", s.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", s.nonce, 128));
  return write([&](connection& c) -> result<void> {
    c.exec("DELETE FROM browser_sessions WHERE expires_at <= $1", s.created_at);
    return insert_session_row(c, s);
  });
}

result<browser_session> sql_store::find_session(const hash256& hash) const {
  return read([&](connection& c) -> result<browser_session> {
    cursor q =
        c.exec("SELECT hash, user_id, nonce, created_at, expires_at FROM browser_sessions WHERE hash = $1", hash);
    if (!q.next())
      return fail(store_errc::not_found, "session: unknown");
    return read_session(q);
  });
}

result<void> sql_store::sign_in_session(const hash256& pre, std::string_view nonce, const browser_session& signed_in,
                                        time_point now) {
  if (nonce.empty())
    return fail(store_errc::not_found, "session: no sign-in nonce");
  ENACT_TRY_VOID(check_text("session.user_id", signed_in.user_id, 256));
  ENACT_TRY_VOID(check_text("session.nonce", signed_in.nonce, 128));
  return write([&](connection& c) -> result<void> {
    // The DELETE is the single use: of two sign-ins with one nonce, the second deletes nothing.
    if (c.exec("DELETE FROM browser_sessions WHERE hash = $1 AND nonce = $2 AND expires_at > $3", pre, nonce, now)
            .affected() == 0)
      return fail(store_errc::not_found, "session: unknown or expired, or its nonce was used or differs");
    return insert_session_row(c, signed_in);
  });
}

result<void> sql_store::end_session(const hash256& hash) {
  return write_one([&](connection& c) -> result<void> {
    if (c.exec("DELETE FROM browser_sessions WHERE hash = $1", hash).affected() == 0)
      return fail(store_errc::not_found, "session: unknown");
    return {};
  });
}

}  // namespace enact::triggers
