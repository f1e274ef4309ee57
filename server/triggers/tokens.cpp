// SPDX-License-Identifier: Apache-2.0
#include "triggers/tokens.hpp"

#include <array>

#include "enact/api/errc.hpp"
#include "enact/codec/base64.hpp"
#include "enact/crypto/random.hpp"
#include "enact/secret.hpp"
#include "enact/crypto/sha2.hpp"

namespace enact::triggers {

std::optional<hash256> token_hash(std::string_view token) {
  if (token.size() != 43)
    return std::nullopt;
  auto raw = codec::base64::decode_url(token, "token");
  if (!raw || raw->size() != 32)
    return std::nullopt;
  const hash256 h = crypto::sha256(*raw);
  detail::secure_wipe(raw->data(), raw->size());
  return h;
}

result<issued_token> issue_token(store& s, std::string_view user_id, std::string_view client_name, time_point now) {
  Secret raw = crypto::random_secret(32);
  issued_token out;
  out.token = codec::base64::encode_url(raw.view());
  out.record.hash = crypto::sha256(raw.view());
  out.record.user_id = std::string(user_id);
  out.record.client_name = std::string(client_name);
  out.record.created_at = now;
  out.record.expires_at = now + kTokenLifetime;
  if (auto w = s.insert_token(out.record); !w) {
    detail::secure_wipe(out.token.data(), out.token.size());
    return w.err();
  }
  return out;
}

result<token_record> authenticate(const store& s, std::string_view authorization, time_point now) {
  if (authorization.empty())
    return fail(api_errc::unauthenticated, "missing credential: send Authorization: Bearer <token>");
  if (!authorization.starts_with("Bearer "))
    return fail(api_errc::unauthenticated, "Authorization: expected 'Bearer <token>'");
  const auto h = token_hash(authorization.substr(7));
  if (!h)
    return fail(api_errc::unauthenticated, "Authorization: not a token of this service");
  auto t = s.find_token(*h);
  if (!t) {
    if (t.code() == store_errc::not_found)
      return fail(api_errc::unauthenticated, "unknown or revoked token");
    return t.err();
  }
  // The lookup was by hash; the comparison that decides is constant-time.
  if (!constant_time_equal(t->hash, *h) || t->revoked)
    return fail(api_errc::unauthenticated, "unknown or revoked token");
  if (t->expires_at <= now)
    return fail(api_errc::unauthenticated, "this token expired; authorize a new one");
  return std::move(*t);
}

}  // namespace enact::triggers
