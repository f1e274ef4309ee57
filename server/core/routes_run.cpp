// POST /run_action (API.md §2 "Running an action"): authorization in the specification's order,
// code from the content store (or an IPFS gateway, verified against the CID), a run in the
// sandbox pool, and the capability calls of the run answered here with keys derived in the TEE.
//
// Order: key (mount.cpp) → scopes and groups: a group on which the key has execute that lists
// the CID hash and, when named, the PKP → the code is located (store, body, gateway) → credits
// debited → run. Locating the code before debiting means a call whose code cannot be fetched is
// rejected without a charge; authorization still comes first, so nothing about the code is
// revealed to a caller who may not run it.
#include <httplib.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/content_store.hpp"
#include "core/errors.hpp"
#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/address.hpp"
#include "enact/crypto/eip191.hpp"
#include "enact/ipfs/cid.hpp"
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
  run_capabilities(const request_context& c, std::set<address> allowed)
      : c_(c), allowed_(std::move(allowed)) {}

  result<json::value> call(std::string_view method, const json::object& args) override {
    ENACT_TRY(const hash256 path, pkp_path(args));
    if (method == "getAddress") {
      ENACT_TRY(const address a, c_.svc.tee->wallet_address(path));
      return json::value(to_checksum_address(a));
    }
    if (method == "signEcdsa") {
      ENACT_TRY(const hash256 digest, hex32(args, "digest"));
      std::string name = "sig" + std::to_string(signatures_.size() + 1);
      if (const auto* n = args.if_contains("name")) {
        if (!n->is_string() || n->get_string().empty() || n->get_string().size() > 128)
          return fail(api_errc::invalid_request, "signEcdsa: name must be a non-empty string");
        name = std::string(n->get_string());
      }
      ENACT_TRY(const auto sig, c_.svc.tee->sign_digest(path, digest));
      ENACT_TRY(const auto pub, c_.svc.tee->public_key(path));
      json::object out = signature_json(sig, pub, digest);
      signatures_[name] = out;
      return json::value(std::move(out));
    }
    if (method == "signMessage") {
      const auto* m = args.if_contains("message");
      if (m == nullptr || !m->is_string())
        return fail(api_errc::invalid_request, "signMessage: message must be a string");
      const hash256 digest = personal_message_hash(std::string_view(m->get_string()));
      ENACT_TRY(const auto sig, c_.svc.tee->sign_digest(path, digest));
      return json::value(hex::encode_prefixed(sig.to_bytes()));
    }
    if (method == "encrypt") {
      const auto* p = args.if_contains("plaintext");
      if (p == nullptr || !p->is_string())
        return fail(api_errc::invalid_request, "encrypt: plaintext must be a string");
      ENACT_TRY(const bytes sealed, c_.svc.tee->encrypt(path, as_bytes(std::string_view(p->get_string()))));
      return json::value(hex::encode_prefixed(sealed));
    }
    if (method == "decrypt") {
      const auto* ct = args.if_contains("ciphertext");
      if (ct == nullptr || !ct->is_string())
        return fail(api_errc::invalid_request, "decrypt: ciphertext must be a 0x-hex string");
      auto sealed = hex::decode_prefixed(ct->get_string(), "ciphertext");
      if (!sealed)
        return fail(api_errc::invalid_request, "decrypt: " + sealed.err().message);
      auto plain = c_.svc.tee->decrypt(path, *sealed);
      if (!plain)
        return fail(api_errc::invalid_request,
                    "decrypt: the ciphertext was not made by this PKP or was altered");
      return json::value(std::string(as_chars(*plain)));
    }
    return fail(api_errc::invalid_request, "unknown capability " + std::string(method));
  }

  [[nodiscard]] json::object signatures() const {
    json::object out;
    for (const auto& [name, sig] : signatures_)
      out[name] = sig;
    return out;
  }

 private:
  static json::object signature_json(const secp256k1::signature& sig,
                                     const secp256k1::public_key& pub, const hash256& digest) {
    bytes uncompressed{0x04};
    uncompressed.insert(uncompressed.end(), pub.begin(), pub.end());
    return json::object{{"signature", hex::encode_prefixed(sig.to_bytes())},
                        {"r", hex::encode_prefixed(sig.r)},
                        {"s", hex::encode_prefixed(sig.s)},
                        {"v", 27 + sig.v},
                        {"public_key", hex::encode_prefixed(uncompressed)},
                        {"digest", hex::encode_prefixed(digest)}};
  }

  static result<hash256> hex32(const json::object& args, std::string_view field) {
    const auto* v = args.if_contains(field);
    if (v == nullptr || !v->is_string())
      return fail(api_errc::invalid_request, std::string(field) + ": expected 0x + 64 hex digits");
    auto h = hex::decode_fixed<32>(v->get_string(), field);
    if (!h || !v->get_string().starts_with("0x"))
      return fail(api_errc::invalid_request, std::string(field) + ": expected 0x + 64 hex digits");
    return *h;
  }

  result<hash256> pkp_path(const json::object& args) {
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
      return it->second;
    ENACT_TRY(const auto w, c_.svc.ledger->get_wallet(c_.who->account.hash, *pkp));
    paths_[*pkp] = w.derivation_path;
    return w.derivation_path;
  }

  const request_context& c_;
  std::set<address> allowed_;
  std::map<address, hash256> paths_;
  std::map<std::string, json::object> signatures_;
};

/// The code of `cid` from an IPFS HTTP gateway, verified against the CID.
result<std::string> fetch_from_gateway(const request_context& c, const std::string& cid_text,
                                       const ipfs::cid& wanted) {
  httplib::Client gw(c.cfg.ipfs_gateway);
  gw.set_connection_timeout(std::chrono::milliseconds(c.cfg.gateway_timeout_ms));
  gw.set_read_timeout(std::chrono::milliseconds(c.cfg.gateway_timeout_ms));
  gw.set_follow_location(true);
  const std::string path = "/ipfs/" + cid_text;
  auto res = gw.Get(path);
  if (!res)
    return fail(api_errc::unavailable, "IPFS gateway unreachable for " + cid_text);
  if (res->status == 404)
    return fail(api_errc::not_found, "action " + cid_text + " not found on the IPFS gateway");
  if (res->status != 200)
    return fail(api_errc::unavailable, "IPFS gateway answered " + std::to_string(res->status) +
                                            " for " + cid_text);
  if (res->body.size() > c.cfg.max_action_code_bytes)
    return fail(api_errc::payload_too_large, "action " + cid_text + " is larger than " +
                                                  std::to_string(c.cfg.max_action_code_bytes) +
                                                  " bytes");
  const auto body = as_bytes(std::string_view(res->body));
  if (!ipfs::same_content(ipfs::cid_v0_of(body), wanted) && ipfs::cid_v1_of(body) != wanted)
    return fail(api_errc::unavailable,
                "IPFS gateway returned bytes that do not hash to " + cid_text + "; refused");
  return res->body;
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

result<json::value> run_action(request_context& c) {
  if (c.svc.sandbox == nullptr)
    return fail(api_errc::unavailable, "this server runs no action sandbox");
  const auto& body = c.body.as_object();
  const auto* code_v = body.if_contains("code");
  const auto* cid_v = body.if_contains("action_ipfs_cid");
  if ((code_v == nullptr) == (cid_v == nullptr))
    return fail(api_errc::invalid_request, "body: give exactly one of code and action_ipfs_cid");

  // The action's identity: the CID of the given code, or the CID named.
  std::string cid_text;
  std::optional<std::string> code;
  if (code_v != nullptr) {
    code = std::string(code_v->as_string());
    if (code->size() > c.cfg.max_action_code_bytes)
      return fail(api_errc::payload_too_large, "body.code: " + std::to_string(code->size()) +
                                                    " bytes, at most " +
                                                    std::to_string(c.cfg.max_action_code_bytes));
    cid_text = ipfs::cid_of(as_bytes(*code));
  } else {
    cid_text = std::string(cid_v->as_string());
  }
  auto parsed_cid = ipfs::parse(cid_text);
  if (!parsed_cid)
    return fail(api_errc::invalid_request, "body.action_ipfs_cid: " + parsed_cid.err().message);
  const hash256 hashed = ipfs::hashed_cid(cid_text);
  std::optional<address> pkp;
  if (const auto* p = body.if_contains("pkp_id")) {
    ENACT_TRY(pkp, address_of(*p, "pkp_id"));
  }

  // The execution rule: a group with execute that lists the action (and the PKP, when named).
  ENACT_TRY(const auto groups, c.svc.ledger->all_groups(c.who->account.hash));
  std::vector<scope::group_view> views;
  views.reserve(groups.size());
  for (const auto& g : groups)
    views.push_back(scope::group_view{g.id, g.pkps, g.cid_hashes});
  if (!scope::find_executable_group(c.who->scopes, views, hashed, pkp)) {
    return fail(api_errc::forbidden,
                pkp ? "no group on which this key may execute lists both this action and PKP " +
                          to_checksum_address(*pkp)
                    : std::string("no group on which this key may execute lists this action"));
  }
  // The PKPs usable in this run: those listed together with the action in such a group.
  std::set<address> allowed;
  for (const auto& v : views)
    if (scope::allows(c.who->scopes, scope::permission::execute, v.id) &&
        std::find(v.cid_hashes.begin(), v.cid_hashes.end(), hashed) != v.cid_hashes.end())
      allowed.insert(v.pkps.begin(), v.pkps.end());
  if (pkp && !allowed.contains(*pkp))
    return fail(api_errc::forbidden, "PKP not usable with this action");

  // The code: the content store first, then the body (kept for later runs), then the gateway.
  ENACT_TRY(auto stored, c.svc.store->get(cid_text));
  std::string source;
  if (stored) {
    source.assign(as_chars(*stored));
  } else if (code) {
    if (auto kept = c.svc.store->put(as_bytes(*code)); !kept)
      return kept.err();
    source = *code;
  } else if (!c.cfg.ipfs_gateway.empty()) {
    ENACT_TRY(source, fetch_from_gateway(c, cid_text, *parsed_cid));
    if (auto kept = c.svc.store->put(as_bytes(source)); !kept)
      return kept.err();
  } else {
    return fail(api_errc::not_found, "action " + cid_text +
                                          " is not in this server's content store (upload it "
                                          "with /upload_action) and no IPFS gateway is configured");
  }

  const uint64_t price = c.cfg.run_price_credits;
  if (price > 0) {
    if (auto debited = c.svc.ledger->debit(c.who->account.hash, price); !debited)
      return debited.err();
  }

  std::string params = "{}";
  if (const auto* p = body.if_contains("params"))
    params = json::serialize(*p);
  run_capabilities caps(c, std::move(allowed));
  ENACT_TRY(const auto out, c.svc.sandbox->run(source, params, caps));
  if (out.failure != runtime::failure_kind::none) {
    json::object details{{"kind", runtime::to_string(out.failure)},
                         {"stack", out.stack},
                         {"logs", out.logs},
                         {"charged_credits", price}};
    c.error_details = std::move(details);
    return fail(api_errc::action_failed, out.message.empty() ? "the action failed" : out.message);
  }
  return json::object{{"response", response_value(out.response_json)},
                      {"logs", out.logs},
                      {"signatures", caps.signatures()},
                      {"run_ms", std::chrono::duration_cast<std::chrono::milliseconds>(out.run_time).count()},
                      {"charged_credits", price}};
}

}  // namespace

void add_run_routes(std::vector<route>& out) {
  out.push_back(route{
      "POST", "/run_action", "runAction", "actions",
      "Run an action (by code or CID) in the sandbox, with the PKPs the execution rule allows. "
      "Check order: key → a group with execute listing the CID hash (and the PKP) → code → "
      "credits → run. An action that throws, times out or breaks a limit answers 422 "
      "action_failed with details.kind and details.stack.",
      auth_kind::key, false, {},
      s::object({{"code", s::string("JavaScript source (at most 256 KiB); authorised as its CID", size_t{1} << 20)},
                 {"action_ipfs_cid", s::string("CID of stored or gateway-reachable code", 256)},
                 {"pkp_id", s::address("the PKP the action will use")},
                 {"params", json::object{{"type", "object"}, {"description", "visible to the action as `params`"}}}}),
      s::object({{"response", json::object{{"description", "what the action passed to Enact.setResponse"}}, true},
                 {"logs", s::string("console output"), true},
                 {"signatures", json::object{{"type", "object"}, {"description", "name → {signature, r, s, v, public_key, digest}"}}, true},
                 {"run_ms", s::integer(), true},
                 {"charged_credits", s::integer(), true}}),
      run_action, (size_t{256} << 10) + (size_t{64} << 10)});
}

}  // namespace enact::core
