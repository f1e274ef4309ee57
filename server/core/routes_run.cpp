// SPDX-License-Identifier: Apache-2.0
// POST /run_action (docs/protocol.md §2 "Running an action"): authorization in the specification's order,
// code from the content store (or an IPFS gateway, verified against the CID), a run in the
// sandbox pool, and the capability calls of the run answered here with keys derived in the TEE.
//
// Order: key (mount.cpp) → scopes and groups: a group on which the key has execute that lists
// the CID hash and, when named, the PKP → credits held in the metering store (core/credits.hpp)
// → the code is located (store, body, gateway) → run → the hold debited by the pipeline's charge
// stage (mount.cpp), to which the handler returns it with the amount. Holding first means an
// account that cannot pay makes the server fetch and keep nothing (402 before any gateway
// request); a call whose code cannot be had gives its hold back uncharged; authorization comes
// first, so nothing about the code is revealed to a caller who may not run it. The price is
// debited once the sandbox answered, with a result or with the action's failure: a run that
// never ran (the pool saturated) or never finished (the server was killed: its hold expires) is
// not charged. Holds live in the metering store, not in this process, so the runs in flight on
// every server sharing it never promise more than the balance, nor a usage key more than its cap;
// a run writes nothing to the chain.

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

#include "core/content_store.hpp"
#include "core/credits.hpp"
#include "core/errors.hpp"
#include "core/idempotency.hpp"
#include "core/key_cache.hpp"
#include "core/log.hpp"
#include "core/route.hpp"
#include "core/run_share.hpp"
#include "core/run_signing.hpp"
#include "core/schema.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/pkp/pkp.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/ipfs/cid.hpp"
#include "enact/ipfs/gateway.hpp"
#include "runtime/fetch.hpp"
#include "runtime/runtime.hpp"
#include "tee/tee.hpp"

namespace enact::core {
namespace {

namespace s = schema;

/// Answers Enact.signEcdsa / signMessage / getAddress / encrypt / decrypt for one run, for the
/// PKPs the execution rule allows in it. Keys are derived inside the TEE per call and never
/// leave it; the worker sees results only.
class run_capabilities final : public runtime::capability_handler {
 public:
  run_capabilities(const request_context& c, std::set<address> allowed) : c_(c), allowed_(std::move(allowed)) {}

  result<json::value> call(std::string_view method, const json::object& args) override {
    ENACT_TRY(const owned_key key, owned_pkp(args));
    const hash256& account = c_.who->account.hash;
    const hash256& path = key.path;
    if (method == "getAddress") {
      return json::value(to_checksum_address(key.pkp));
    }
    if (method == "signEcdsa") {
      ENACT_TRY(const hash256 digest, hex32(args, "digest"));
      std::string name = "sig" + std::to_string(signatures_.size() + 1);
      if (const auto* n = args.if_contains("name")) {
        if (!n->is_string() || n->get_string().empty() || n->get_string().size() > 128)
          return fail(api_errc::invalid_request, "signEcdsa: name must be a non-empty string");
        name = std::string(n->get_string());
      }
      ENACT_TRY(const auto sig, c_.svc.tee->sign_digest(account, path, digest));
      ENACT_TRY(const auto pub, c_.svc.tee->public_key(account, path));
      api::action_signature out = signature_of(sig, pub, digest);
      json::value seen = json::value_from(out);
      signatures_[name] = std::move(out);
      return seen;
    }
    if (method == "signMessage") {
      const auto* m = args.if_contains("message");
      if (m == nullptr || !m->is_string())
        return fail(api_errc::invalid_request, "signMessage: message must be a string");
      const hash256 digest = crypto::personal_message_hash(std::string_view(m->get_string()));
      ENACT_TRY(const auto sig, c_.svc.tee->sign_digest(account, path, digest));
      return json::value(codec::hex::encode_prefixed(sig.to_bytes()));
    }
    if (method == "encrypt") {
      const auto* p = args.if_contains("plaintext");
      if (p == nullptr || !p->is_string())
        return fail(api_errc::invalid_request, "encrypt: plaintext must be a string");
      ENACT_TRY(const bytes sealed, c_.svc.tee->encrypt(account, path, as_bytes(std::string_view(p->get_string()))));
      return json::value(codec::hex::encode_prefixed(sealed));
    }
    if (method == "decrypt") {
      const auto* ct = args.if_contains("ciphertext");
      if (ct == nullptr || !ct->is_string())
        return fail(api_errc::invalid_request, "decrypt: ciphertext must be a 0x-hex string");
      auto sealed = codec::hex::decode_prefixed(ct->get_string(), "ciphertext");
      if (!sealed)
        return fail(api_errc::invalid_request, "decrypt: " + sealed.err().message);
      auto plain = c_.svc.tee->decrypt(account, path, *sealed);
      if (!plain)
        return fail(api_errc::invalid_request, "decrypt: the ciphertext was not made by this PKP or was altered");
      return json::value(std::string(as_chars(*plain)));
    }
    if (method == "signEd25519" || method == "getPublicKey" || method == "signTypedData" || method == "signTransaction")
      return sign_more(method, args, account, path, key.pkp);
    return fail(api_errc::invalid_request, "unknown capability " + std::string(method));
  }

  /// Enact.signEd25519, getPublicKey, signTypedData and signTransaction (docs/protocol.md §2
  /// "Running an action"), for a PKP that owned_pkp has already cleared for this run: the
  /// arguments are checked (core/run_signing.hpp) before the TEE signs anything.
  result<json::value> sign_more(std::string_view method, const json::object& args, const hash256& account,
                                const hash256& path, const address& pkp) {
    const tee::tee& t = *c_.svc.tee;
    if (method == "signEd25519") {
      ENACT_TRY(const bytes message, run_signing::ed25519_message(args));
      ENACT_TRY(const auto sig, t.sign_ed25519(account, path, message));
      ENACT_TRY(const auto pub, t.ed25519_public_key(account, path));
      return json::object{{"signature", codec::hex::encode_prefixed(sig)},
                          {"public_key", codec::hex::encode_prefixed(pub)},
                          {"solana_address", pkp::solana_address(pub)}};
    }
    if (method == "getPublicKey") {
      ENACT_TRY(const std::string scheme, run_signing::key_scheme(args));
      if (scheme == "ed25519") {
        ENACT_TRY(const auto pub, t.ed25519_public_key(account, path));
        return json::object{{"scheme", scheme},
                            {"public_key", codec::hex::encode_prefixed(pub)},
                            {"address", pkp::solana_address(pub)}};
      }
      ENACT_TRY(const auto pub, t.public_key(account, path));
      bytes uncompressed{0x04};
      uncompressed.insert(uncompressed.end(), pub.begin(), pub.end());
      return json::object{{"scheme", scheme},
                          {"public_key", codec::hex::encode_prefixed(uncompressed)},
                          {"address", to_checksum_address(pkp)}};
    }
    if (method == "signTypedData") {
      ENACT_TRY(const hash256 digest, run_signing::typed_data_digest(args));
      ENACT_TRY(std::string name, run_signing::signature_name(args, method, signatures_.size() + 1));
      ENACT_TRY(const auto sig, t.sign_digest(account, path, digest));
      ENACT_TRY(const auto pub, t.public_key(account, path));
      api::action_signature out = signature_of(sig, pub, digest);
      json::value seen = json::value_from(out);
      signatures_[name] = std::move(out);
      return seen;
    }
    ENACT_TRY(const chain::eip1559_tx tx, run_signing::transaction(args));
    ENACT_TRY(const auto sig, t.sign_digest(account, path, chain::signing_hash(tx)));
    const bytes raw = chain::encode_signed(tx, sig);
    return json::object{{"raw", codec::hex::encode_prefixed(raw)},
                        {"hash", codec::hex::encode_prefixed(chain::tx_hash(raw))},
                        {"from", to_checksum_address(pkp)}};
  }

  /// The signatures the run made, by name: moved into the run's answer.
  [[nodiscard]] std::map<std::string, api::action_signature> take_signatures() { return std::move(signatures_); }

 private:
  static api::action_signature signature_of(const crypto::secp256k1::signature& sig,
                                            const crypto::secp256k1::public_key& pub, const hash256& digest) {
    api::action_signature out;
    out.signature = sig.to_bytes();
    out.r = sig.r;
    out.s = sig.s;
    out.v = static_cast<uint8_t>(27 + sig.v);
    out.public_key = bytes{0x04};
    out.public_key.insert(out.public_key.end(), pub.begin(), pub.end());
    out.digest = digest;
    return out;
  }

  static result<hash256> hex32(const json::object& args, std::string_view field) {
    const auto* v = args.if_contains(field);
    if (v == nullptr || !v->is_string())
      return fail(api_errc::invalid_request, std::string(field) + ": expected 0x + 64 hex digits");
    auto h = codec::hex::decode_fixed<32>(v->get_string(), field);
    if (!h || !v->get_string().starts_with("0x"))
      return fail(api_errc::invalid_request, std::string(field) + ": expected 0x + 64 hex digits");
    return *h;
  }

  struct owned_key {
    address pkp{};
    hash256 path{};
  };

  /// The PKP named by `args.pkpId`, once it is known to be usable in this run and to be a key of
  /// the run's account: docs/protocol.md §1 "owning account" — the derivation of (this account, the
  /// registered path) must give the registered wallet, so a (wallet, path) pair copied from
  /// another account (or any pair the chain let an account store) never signs here.
  result<owned_key> owned_pkp(const json::object& args) {
    const auto* v = args.if_contains("pkpId");
    if (v == nullptr || !v->is_string())
      return fail(api_errc::invalid_request, "pkpId: expected a PKP id (wallet address)");
    auto pkp = parse_address(v->get_string(), "pkpId");
    if (!pkp)
      return fail(api_errc::invalid_request, pkp.err().message);
    if (!allowed_.contains(*pkp))
      return fail(api_errc::forbidden, "PKP " + to_checksum_address(*pkp) +
                                           " is not usable in this run (no group with execute "
                                           "lists it together with this action)");
    if (const auto it = paths_.find(*pkp); it != paths_.end())
      return owned_key{*pkp, it->second};
    const hash256& account = c_.who->account.hash;
    ENACT_TRY(const auto w, c_.svc.ledger->get_wallet(account, *pkp));
    // The check costs one derivation per (account, path, wallet) for the process's lifetime
    // (core/key_cache.hpp), not one per run.
    ENACT_TRY(const bool owned, shared_key_cache().owns(*c_.svc.tee, account, w.derivation_path, *pkp));
    if (!owned) {
      // The wallet the documented flow registers for a usage key minted by signature: named as
      // such, since its owner registered it in good faith (docs/protocol.md §1 "usage key by signature").
      ENACT_TRY(const Secret usage, c_.svc.tee->usage_key(account, w.derivation_path));
      ENACT_TRY(const auto usage_pub, crypto::secp256k1::public_key_of(usage));
      if (crypto::secp256k1::to_address(usage_pub) == *pkp)
        return fail(api_errc::forbidden, "PKP " + to_checksum_address(*pkp) +
                                             " is the wallet of a usage key (minted by "
                                             "/add_usage_api_key_with_signature), not a PKP: that key was handed "
                                             "out, so it never signs, encrypts or decrypts here");
      return fail(api_errc::forbidden, "PKP " + to_checksum_address(*pkp) +
                                           " is not a key of this account: its registered derivation path gives "
                                           "another wallet under this account, so it cannot sign, encrypt or "
                                           "decrypt here");
    }
    // A PKP whose key an earlier release handed out as a usage key (before the usage-key domain)
    // is out of the TEE: refused as the wallet of a usage key it is.
    ENACT_TRY(const bool exported, shared_key_cache().exported(*c_.svc.tee, account, w.derivation_path, *pkp,
                                                               usage_key_lookup(*c_.svc.ledger)));
    if (exported)
      return fail(api_errc::forbidden, "PKP " + to_checksum_address(*pkp) +
                                           " is the wallet of a usage key (its key was handed out by "
                                           "/add_usage_api_key_with_signature before usage keys had a domain of their "
                                           "own), not a PKP: it never signs, encrypts or decrypts here");
    paths_[*pkp] = w.derivation_path;
    return owned_key{*pkp, w.derivation_path};
  }

  const request_context& c_;
  std::set<address> allowed_;
  std::map<address, hash256> paths_;  // PKPs of this run checked by owned_pkp
  std::map<std::string, api::action_signature> signatures_;
};

/// The code of `cid_text` from the IPFS HTTP gateway (ipfs::fetch_from_gateway), verified against
/// the CID. A redirect is not followed (a gateway, or whoever answers in its name, must not point
/// this server at another host: an internal address the sandbox network cannot reach, say), and
/// the body is read only up to the action code limit, so a hostile gateway cannot make the server
/// buffer an endless answer.
result<std::string> fetch_from_gateway(const request_context& c, const std::string& cid_text) {
  ipfs::gateway_options o;
  o.url = c.cfg.ipfs_gateway;
  o.timeout = std::chrono::milliseconds(c.cfg.gateway_timeout_ms);
  o.max_bytes = c.cfg.max_action_code_bytes;
  result<std::string> code = ipfs::fetch_from_gateway(o, cid_text);
  if (code)
    return code;
  const std::error_code e = code.code();
  if (e == ipfs::gateway_errc::too_large)
    return fail(api_errc::payload_too_large, code.err().message);
  if (e == ipfs::gateway_errc::not_found)
    return fail(api_errc::not_found, code.err().message);
  if (e == ipfs::gateway_errc::bad_url)
    return fail(api_errc::unavailable, "IPFS gateway unreachable for " + cid_text);
  return fail(api_errc::unavailable, code.err().message);
}

/// "parsed as JSON when it is JSON": the JSON the action set, and a string holding JSON parsed.
json::value response_value(const std::string& response_json) {
  if (response_json.empty())
    return nullptr;
  std::error_code ec;
  json::value v = json::parse(response_json, ec);
  if (ec)
    return json::value(response_json);
  if (v.is_string()) {
    std::error_code inner;
    json::value parsed = json::parse(v.get_string(), inner);
    if (!inner && (parsed.is_object() || parsed.is_array()))
      return parsed;
  }
  return v;
}

/// The code of a run: the content store first, then the body (kept for later runs within the
/// account's upload quota, as /upload_action would), then the gateway.
result<std::string> code_of(const request_context& c, const std::string& cid_text,
                            const std::optional<std::string>& code) {
  ENACT_TRY(auto stored, c.svc.store->get(cid_text));
  if (stored)
    return std::string(as_chars(*stored));
  if (!code && c.cfg.ipfs_gateway.empty())
    return fail(api_errc::not_found, "action " + cid_text +
                                         " is not in this server's content store (upload it "
                                         "with /upload_action) and no IPFS gateway is configured");
  std::string source;
  if (code) {
    source = *code;
  } else {
    ENACT_TRY(source, fetch_from_gateway(c, cid_text));
  }
  // Over the quota the code still runs, it is just not kept.
  const upload_quota quota{c.cfg.upload_quota_bytes, c.cfg.upload_quota_count};
  if (auto kept = c.svc.store->put_for(c.who->account.hash, as_bytes(source), quota);
      !kept && kept.code() != api_errc::forbidden)
    return kept.err();
  return source;
}

/// The PKPs usable in a run of `hashed` with `pkp`: those of a group on which the key has
/// execute that lists the action (and the PKP, when named); forbidden when there is none.
result<std::set<address>> usable_pkps(const request_context& c, const hash256& hashed,
                                      const std::optional<address>& pkp) {
  ENACT_TRY(const auto groups, c.svc.ledger->groups_listing(c.who->account.hash, hashed));
  std::vector<scopes::group_view> views;
  views.reserve(groups.size());
  for (const auto& g : groups)
    views.push_back(scopes::group_view{g.id, g.pkps, g.cid_hashes});
  if (!scopes::find_executable_group(c.who->scopes, views, hashed, pkp)) {
    return fail(api_errc::forbidden, pkp ? "no group on which this key may execute lists both this action and PKP " +
                                               to_checksum_address(*pkp)
                                         : std::string("no group on which this key may execute lists this action"));
  }
  std::set<address> allowed;
  for (const auto& v : views)
    if (scopes::allows(c.who->scopes, scopes::permission::execute, v.id))
      allowed.insert(v.pkps.begin(), v.pkps.end());
  if (pkp && !allowed.contains(*pkp))
    return fail(api_errc::forbidden, "PKP not usable with this action");
  return allowed;
}

/// Enact.fetch (runtime/fetch.hpp) is made by this process under the operator's egress policy;
/// refused when the server was given no fetch settings.
const runtime::fetch_settings& fetching_of(const request_context& c) {
  static const runtime::fetch_settings kNoFetch = [] {
    runtime::fetch_settings none;
    none.max_fetches = 0;
    return none;
  }();
  return c.svc.fetch != nullptr ? *c.svc.fetch : kNoFetch;
}

/// The action's identity: the CID of the given code (within the code limit), or the CID named.
result<std::string> cid_of(const request_context& c, const api::run_action_request& in) {
  if (in.code && in.code->size() > c.cfg.max_action_code_bytes)
    return fail(api_errc::payload_too_large, "body.code: " + std::to_string(in.code->size()) + " bytes, at most " +
                                                 std::to_string(c.cfg.max_action_code_bytes));
  std::string cid_text = in.code ? ipfs::cid_of(as_bytes(*in.code)) : *in.action_ipfs_cid;
  if (auto parsed = ipfs::parse(cid_text); !parsed)
    return fail(api_errc::invalid_request, "body.action_ipfs_cid: " + parsed.err().message);
  return cid_text;
}

/// Runs `source` with the run's capabilities and answers docs/protocol.md §2's result, or
/// action_failed with its details; either way the run owes `charged` from `hold`.
answer run_and_answer(const request_context& c, const std::string& source, const api::run_action_request& in,
                      std::set<address> allowed, std::optional<credit_hold> hold,
                      std::optional<run_share::ticket> share) {
  const runtime::fetch_settings& fetching = fetching_of(c);
  run_capabilities caps(c, std::move(allowed));
  runtime::fetch_session fetches(fetching, runtime::egress::system_resolver(),
                                 [&c](std::string_view message, json::object fields) {
                                   if (c.svc.log == nullptr)
                                     return;
                                   fields["request_id"] = c.request_id;
                                   c.svc.log->info(message, std::move(fields));
                                 });
  runtime::fetching_handler handler(caps, fetches);
  // Last checks before the effect: a request delayed past its Idempotency-Key's lease may have
  // been taken over by a retry, which runs it; and a hold that expired meanwhile no longer holds
  // the credits, so the run would go unpaid. Neither runs.
  answer a;
  if (c.idempotent != nullptr)
    if (auto renewed = c.idempotent->renew(run_budget(c.cfg), a.retry_after); !renewed) {
      a.fail(renewed.err());
      return a;
    }
  if (hold && hold->expired())
    return fail(api_errc::unavailable, "the run's credit hold expired before it could start; retry the request");
  // Not run (the pool saturated, the sandbox unavailable): the hold goes back uncharged.
  ENACT_TRY(const auto out, c.svc.sandbox->run(source, json::serialize(in.params), handler));
  if (share)
    share->ran(std::chrono::duration_cast<std::chrono::milliseconds>(out.run_time));
  // Ran, to a result or to the action's failure: charged (by the pipeline's charge stage).
  const uint64_t charged = c.cfg.run_price_credits + fetches.made() * fetching.price_credits;
  if (hold)
    a.charge = charge{std::make_shared<credit_hold>(std::move(*hold)), charged};
  if (out.failure != runtime::failure_kind::none) {
    a.fail(fail(api_errc::action_failed, out.message.empty() ? "the action failed" : out.message));
    a.details = json::object{{"kind", runtime::to_string(out.failure)},
                             {"stack", out.stack},
                             {"logs", out.logs},
                             {"charged_credits", charged}};
    return a;
  }
  api::run_action_result r;
  r.response = response_value(out.response_json);
  r.logs = out.logs;
  r.signatures = caps.take_signatures();
  r.run_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(out.run_time).count());
  r.charged_credits = charged;
  a.value = json::value_from(r);
  return a;
}

answer run_action(const request_context& c) {
  if (c.svc.sandbox == nullptr)
    return fail(api_errc::unavailable, "this server runs no action sandbox");
  ENACT_TRY(const api::run_action_request in, api::read<api::run_action_request>(c.body));
  ENACT_TRY(const std::string cid_text, cid_of(c, in));
  ENACT_TRY(std::set<address> allowed, usable_pkps(c, ipfs::hashed_cid(cid_text), in.pkp_id));
  // The account's share of the sandbox (docs/protocol.md §6 "Fair share"), before its credits are
  // held: a refused run holds nothing.
  std::optional<run_share::ticket> share;
  if (c.svc.share != nullptr) {
    answer refused;
    auto admitted = c.svc.share->enter(c.who->account.hash, refused.retry_after);
    if (!admitted) {
      refused.fail(admitted.err());
      return refused;
    }
    share.emplace(std::move(*admitted));
  }
  // Credits before the code (docs/protocol.md §2 order): the hold covers the price and the most
  // fetches a run may make; it goes back uncharged when the code cannot be had.
  const runtime::fetch_settings& fetching = fetching_of(c);
  const uint64_t most = c.cfg.run_price_credits + fetching.max_fetches * fetching.price_credits;
  std::optional<credit_hold> hold;
  if (most > 0) {
    ENACT_TRY(hold, credit_hold::take(c, most, c.request_id, run_budget(c.cfg)));
  }
  ENACT_TRY(const std::string source, code_of(c, cid_text, in.code));
  return run_and_answer(c, source, in, std::move(allowed), std::move(hold), std::move(share));
}

}  // namespace

void add_run_routes(std::vector<route>& out) {
  out.push_back(route{
      "POST",
      "/run_action",
      "runAction",
      "actions",
      "Run an action (by code or CID) in the sandbox, with the PKPs the execution rule allows. "
      "Check order: key → a group with execute listing the CID hash (and the PKP) → credits "
      "reserved → code → run → debited (a run that did not run or finish is not charged). An action that throws, times "
      "out or breaks a limit answers 422 "
      "action_failed with details.kind and details.stack.",
      auth_kind::key,
      false,
      {},
      s::object({{"code", s::string("JavaScript source (at most 256 KiB); authorised as its CID", size_t{1} << 20)},
                 {"action_ipfs_cid", s::string("CID of stored or gateway-reachable code", 256)},
                 {"pkp_id", s::address("the PKP the action will use")},
                 {"params", json::object{{"type", "object"}, {"description", "visible to the action as `params`"}}}}),
      s::object(
          {{"response", json::object{{"description", "what the action passed to Enact.setResponse"}}, true},
           {"logs", s::string("console output"), true},
           {"signatures",
            json::object{{"type", "object"}, {"description", "name → {signature, r, s, v, public_key, digest}"}}, true},
           {"run_ms", s::integer(), true},
           {"charged_credits", s::integer(), true}}),
      run_action,
      (size_t{256} << 10) + (size_t{64} << 10)});
  out.back().idempotent = true;  // Idempotency-Key: one run per key (core/idempotency.hpp)
}

}  // namespace enact::core
