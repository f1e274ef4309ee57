// SPDX-License-Identifier: Apache-2.0
// The dstack backend: the PKP root key and the quotes come from the dstack guest agent, which
// answers HTTP on a Unix socket inside the confidential VM.
//
// Guest-agent API followed: Dstack-TEE/dstack, sdk/curl/api.md @
// 0eb532dd45e50d352511ea466bc962532dc7565e and guest-agent/rpc/proto/agent_rpc.proto @
// 029f167f924d5e2112fdf41dc5daea21d5aea85b (service DstackGuest). Requests are POST /<Method> with
// a JSON body; `bytes` fields travel as hex.
//   GetKey   {"path", "purpose", "algorithm"} -> {"key": hex, "signature_chain": [hex, …]}
//   GetQuote {"report_data": hex of 64 bytes} -> {"quote": hex, "event_log": JSON string,
//                                                 "report_data": hex, "vm_config": JSON string}
//   Info     {}                               -> {"app_id", "instance_id", "compose_hash",
//                                                 "tcb_info": JSON string, "vm_config",
//                                                 "key_provider_info": JSON string, …}
// The agent reads a body without `Content-Type: application/json` as protobuf (dstack ra-rpc
// rocket_helper.rs), and answers errors as 400 {"error": text}.
// Key derivation and the signature chain (guest-agent/src/rpc_service.rs get_key, kms/src/crypto.rs
// @ 312dc605ebaaf93372534ffb135ea011533d28e9): key = HKDF-SHA256(app key, salt "RATLS", info =
// path); signature_chain[0] is the app key's recoverable signature over keccak256(purpose ‖ ":" ‖
// hex of the key's compressed public key), [1] the KMS root's over keccak256("dstack-kms-issued:"
// ‖ app_id (20 bytes) ‖ the app key's compressed public key); r ‖ s ‖ recovery id each.
// key_provider_info is the JSON text {"name": "kms" | "none" | "local-sgx" | "tpm", "id": hex}
// (dstack-util system_setup.rs), present from dstack OS 0.4.2.
#include <boost/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "tee/errors.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "tee/pkp_tee.hpp"
#include "tee/tee.hpp"
#include "tee/unix_http.hpp"

namespace enact::tee {
namespace {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

constexpr size_t kRootKeySize = 32;
// /attestation asks for the all-zero report data of docs/protocol.md §2 "Attestation". Such a quote binds nothing
// fresh (anyone may replay one), so sharing it for a few seconds loses nothing and keeps a public,
// unauthenticated endpoint from driving the quoting enclave at the request rate.
constexpr auto kZeroQuoteReuse = std::chrono::seconds(10);
// The GetKey purpose of the root key; the app key signs it with the key (signature_chain[0]).
constexpr std::string_view kRootKeyPurpose = "enact PKP root key";

/// POST /<method> to the agent; the parsed JSON object of a 200 answer.
result<json::object> call(const dstack_options& o, std::string_view method, const json::object& args) {
  ENACT_TRY(detail::http_answer a,
            detail::unix_http_request(o.socket, "POST", "/" + std::string(method), json::serialize(args), o.timeout));
  const enact::wipe_on_exit wipe(a.body);  // the GetKey answer holds key material
  const std::string who = "guest agent " + std::string(method);
  if (a.status != 200) {
    // The agent's error text (`{"error": "…"}`); it never carries key material.
    std::string text = a.body.substr(0, 300);
    return fail(tee_errc::unavailable,
                who + " answered HTTP " + std::to_string(a.status) + (text.empty() ? "" : ": " + text));
  }
  std::error_code ec;
  json::value v = json::parse(a.body, ec);
  if (ec || !v.is_object())
    return fail(tee_errc::unavailable, who + ": the answer is not a JSON object");
  return std::move(v.as_object());
}

result<std::string> string_field(const json::object& o, std::string_view method, std::string_view key,
                                 bool required = true) {
  const auto* v = o.if_contains(key);
  if (v == nullptr && !required)
    return std::string();
  if (v == nullptr || !v->is_string())
    return fail(tee_errc::unavailable,
                "guest agent " + std::string(method) + ": '" + std::string(key) + "' missing or not a string");
  return std::string(v->get_string());
}

/// What GetKey answers for the PKP root key.
struct root_key_answer {
  Secret key;
  std::vector<bytes> signature_chain;
};

/// The PKP root key: GetKey at `root_key_path`, a secp256k1 key derived by the agent from the
/// app's KMS key, so the same app gets the same PKP addresses on every machine it runs on.
result<root_key_answer> fetch_root_key(const dstack_options& o) {
  ENACT_TRY(json::object answer, call(o, "GetKey",
                                      json::object{{"path", o.root_key_path},
                                                   {"purpose", std::string(kRootKeyPurpose)},
                                                   {"algorithm", "secp256k1"}}));
  auto* key = answer.if_contains("key");
  if (key == nullptr || !key->is_string())
    return fail(tee_errc::unavailable, "guest agent GetKey: 'key' missing or not a string");
  json::string& text = key->get_string();
  root_key_answer out{Secret::of_size(kRootKeySize), {}};
  const auto decoded = codec::hex::decode_into(text, out.key.mutable_view(), "GetKey.key");
  enact::detail::secure_wipe(text.data(), text.size());
  if (!decoded)
    return fail(tee_errc::unavailable, "guest agent GetKey: 'key' is not 32 bytes of hex");
  const auto v = out.key.view();
  if (std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; }))
    return fail(tee_errc::unavailable, "guest agent GetKey: the key is all zero");
  if (const auto* chain = answer.if_contains("signature_chain"); chain != nullptr) {
    if (!chain->is_array())
      return fail(tee_errc::unavailable, "guest agent GetKey: 'signature_chain' is not an array");
    for (const auto& sig : chain->as_array()) {
      const auto b = sig.is_string() ? std::optional(codec::hex::decode(sig.get_string(), "GetKey.signature_chain"))
                                     : std::nullopt;
      if (!b || !*b)
        return fail(tee_errc::unavailable, "guest agent GetKey: 'signature_chain' holds an entry that is not hex");
      out.signature_chain.push_back(**b);
    }
  }
  return out;
}

/// The signer of `message` by a signature of the chain (r ‖ s ‖ recovery id 0 or 1, as k256's
/// sign_digest_recoverable writes it), compressed.
result<std::array<uint8_t, 33>> chain_signer(std::string_view which, bytes_view message, bytes_view sig) {
  auto parsed = crypto::secp256k1::signature::from_bytes(sig);
  if (!parsed)
    return fail(tee_errc::unavailable, "guest agent GetKey: signature_chain[" + std::string(which) +
                                           "] is not a recoverable secp256k1 signature: " + parsed.err().message);
  auto signer = crypto::secp256k1::recover(crypto::keccak256(message), *parsed);
  if (!signer)
    return fail(tee_errc::unavailable, "guest agent GetKey: signature_chain[" + std::string(which) +
                                           "] recovers no key: " + signer.err().message);
  return crypto::secp256k1::compress(*signer);
}

/// Verifies the root key's signature chain (docs/protocol.md §1 "root key") and returns the JSON
/// text /info shows. Under "kms" both signatures are required; under another provider (allowed
/// for development) the KMS signature is empty and only the app key's is read.
result<std::string> verify_chain(const dstack_options& o, const app_info& info, const root_key_answer& root) {
  const bool kms = info.key_provider == "kms";
  const auto& chain = root.signature_chain;
  if (chain.empty() && !kms)
    return std::string();
  if (chain.size() < 2 || (kms && chain[1].empty()))
    return fail(tee_errc::unavailable,
                "guest agent GetKey: the signature_chain lacks the KMS's signature (" + std::to_string(chain.size()) +
                    " entries) although the key provider is kms; the root key cannot be traced to the KMS root");
  ENACT_TRY(const auto pub, crypto::secp256k1::public_key_of(root.key));
  const std::string message = std::string(kRootKeyPurpose) + ":" + codec::hex::encode(crypto::secp256k1::compress(pub));
  ENACT_TRY(const auto app_key, chain_signer("0", as_bytes(message), chain[0]));
  json::object out{{"signature_chain", json::array{}}, {"app_key", codec::hex::encode(app_key)}};
  for (const auto& sig : chain)
    out["signature_chain"].as_array().emplace_back(codec::hex::encode(sig));
  if (!chain[1].empty()) {
    auto app_id = codec::hex::decode(info.app_id, "Info.app_id");
    if (!app_id || app_id->size() != 20)
      return fail(tee_errc::unavailable, "guest agent Info: 'app_id' is not 20 bytes of hex");
    constexpr std::string_view prefix = "dstack-kms-issued:";
    bytes issued(prefix.begin(), prefix.end());
    issued.insert(issued.end(), app_id->begin(), app_id->end());
    issued.insert(issued.end(), app_key.begin(), app_key.end());
    ENACT_TRY(const auto kms_root, chain_signer("1", issued, chain[1]));
    const std::string kms_hex = codec::hex::encode(kms_root);
    std::string pinned = o.kms_root_key;
    if (pinned.starts_with("0x"))
      pinned.erase(0, 2);
    std::transform(pinned.begin(), pinned.end(), pinned.begin(),
                   [](char c) { return static_cast<char>(std::tolower(c)); });
    if (!pinned.empty() && pinned != kms_hex)
      return fail(tee_errc::unavailable, "guest agent GetKey: the signature chain leads to the KMS root key " +
                                             kms_hex + ", not to the pinned " + pinned +
                                             " (--tee-dstack-kms-root-key): this app's keys come from another KMS");
    out["kms_root_key"] = kms_hex;
    out["kms_root_key_pinned"] = !pinned.empty();
  }
  return json::serialize(out);
}

/// key_provider_info: the JSON text {"name", "id"}, absent before dstack OS 0.4.2.
result<void> read_key_provider(const json::object& answer, app_info& info) {
  ENACT_TRY(const std::string text, string_field(answer, "Info", "key_provider_info", false));
  if (text.empty())
    return {};
  std::error_code ec;
  const json::value v = json::parse(text, ec);
  const json::value* name = !ec && v.is_object() ? v.as_object().if_contains("name") : nullptr;
  if (name == nullptr || !name->is_string() || name->get_string().empty())
    return fail(tee_errc::unavailable, "guest agent Info: 'key_provider_info' is not a JSON object with a 'name'");
  info.key_provider = std::string(name->get_string());
  if (const auto* id = v.as_object().if_contains("id"); id != nullptr && id->is_string())
    info.key_provider_id = std::string(id->get_string());
  return {};
}

/// Refuses a key provider whose keys can change under the same app (docs/deployment.md "The TEE:
/// dstack"), unless the operator allowed it.
result<void> check_key_provider(const dstack_options& o, const app_info& info) {
  if (info.key_provider == "kms" || o.allow_unstable_keys)
    return {};
  const std::string what = info.key_provider.empty()
                               ? "the guest agent's Info carries no key_provider_info (dstack OS before 0.4.2)"
                               : "the guest agent's key provider is '" + info.key_provider + "', not 'kms'";
  return fail(tee_errc::unavailable,
              what +
                  ": the app's keys do not come from dstack's KMS, so the PKP root key — every account's wallets "
                  "and the api payer — would change at the next boot ('none': a random seed per boot) or on "
                  "another host ('local-sgx', 'tpm'). Deploy the app with a KMS on dstack OS 0.4.2 or later "
                  "(docs/deployment.md \"The TEE: dstack\"), or pass --tee-allow-unstable-keys for development");
}

result<app_info> fetch_info(const dstack_options& o) {
  ENACT_TRY(const json::object answer, call(o, "Info", json::object{}));
  app_info info;
  ENACT_TRY(info.app_id, string_field(answer, "Info", "app_id"));
  ENACT_TRY(info.compose_hash, string_field(answer, "Info", "compose_hash", false));
  ENACT_TRY(info.vm_config, string_field(answer, "Info", "vm_config", false));
  ENACT_TRY_VOID(read_key_provider(answer, info));
  // tcb_info is a JSON string in the agent's answer (empty when the app keeps it private) and an
  // object in ours (docs/protocol.md §2).
  const auto* tcb = answer.if_contains("tcb_info");
  json::object tcb_info;
  if (tcb != nullptr && tcb->is_object()) {
    tcb_info = tcb->as_object();
  } else if (tcb != nullptr && tcb->is_string() && !tcb->get_string().empty()) {
    std::error_code ec;
    json::value parsed = json::parse(tcb->get_string(), ec);
    if (ec || !parsed.is_object())
      return fail(tee_errc::unavailable, "guest agent Info: 'tcb_info' is not a JSON object");
    tcb_info = std::move(parsed.as_object());
  }
  if (info.compose_hash.empty())
    if (const auto* h = tcb_info.if_contains("compose_hash"); h != nullptr && h->is_string())
      info.compose_hash = std::string(h->get_string());
  info.tcb_info = json::serialize(tcb_info);
  return info;
}

result<quote_response> fetch_quote(const dstack_options& o, const report_data& data) {
  ENACT_TRY(const json::object answer, call(o, "GetQuote", json::object{{"report_data", codec::hex::encode(data)}}));
  ENACT_TRY(const std::string quote_hex, string_field(answer, "GetQuote", "quote", false));
  // dstack on a platform without TDX (AMD SEV-SNP, …) answers an empty quote and an
  // `attestation` of its own format (agent_rpc.proto GetQuoteResponse), which enact cannot serve.
  if (quote_hex.empty())
    return fail(tee_errc::unavailable,
                "guest agent GetQuote: the platform gives no TDX quote (empty 'quote'; dstack answers so on a "
                "non-TDX platform such as AMD SEV-SNP): enact's attestation (docs/protocol.md §5) needs Intel TDX");
  quote_response q;
  auto quote = codec::hex::decode(quote_hex, "GetQuote.quote");
  if (!quote)
    return fail(tee_errc::unavailable, "guest agent GetQuote: 'quote' is not hex");
  q.quote = std::move(*quote);
  ENACT_TRY(q.event_log, string_field(answer, "GetQuote", "event_log", false));
  ENACT_TRY(q.vm_config, string_field(answer, "GetQuote", "vm_config", false));
  return q;
}

class dstack_tee final : public detail::pkp_tee {
 public:
  dstack_tee(Secret root, dstack_options opts, app_info info)
      : pkp_tee(std::move(root)),
        opts_(std::move(opts)),
        info_(std::move(info)),
        info_at_(clock::now()),
        evidences_(opts_.evidence_dir) {}

  std::string_view kind() const noexcept override { return "dstack"; }

  result<quote_response> quote(const report_data& data) const override {
    if (!std::all_of(data.begin(), data.end(), [](uint8_t b) { return b == 0; }))
      return fetch_quote(opts_, data);
    // Concurrent callers wait for one fetch and share it.
    std::lock_guard lock(zero_mu_);
    if (zero_quote_ && clock::now() - zero_at_ < kZeroQuoteReuse)
      return *zero_quote_;
    ENACT_TRY(quote_response q, fetch_quote(opts_, data));
    zero_quote_ = q;
    zero_at_ = clock::now();
    return q;
  }

  /// Info asked again once `info_max_age` has passed, since RTMR3 (and with it tcb_info) can be
  /// extended while the app runs; the key provider and root-key chain stay those the root key was
  /// taken under at start. One caller asks while the others keep the last answer, never waiting on
  /// the agent; an ask that fails keeps it too and waits `info_max_age` before the next, so
  /// unauthenticated /info requests never queue behind, or hammer, a slow agent.
  result<app_info> info() const override {
    {
      std::lock_guard lock(info_mu_);
      if (refreshing_ || clock::now() - info_at_ < opts_.info_max_age)
        return info_;
      refreshing_ = true;
    }
    auto fresh = fetch_info(opts_);
    std::lock_guard lock(info_mu_);
    refreshing_ = false;
    info_at_ = clock::now();
    if (!fresh)
      return info_;
    fresh->key_provider = info_.key_provider;
    fresh->key_provider_id = info_.key_provider_id;
    fresh->root_key = info_.root_key;
    info_ = std::move(*fresh);
    return info_;
  }

  const evidence_dir& evidences() const noexcept override { return evidences_; }

 private:
  dstack_options opts_;
  mutable std::mutex info_mu_;
  mutable app_info info_;
  mutable clock::time_point info_at_;
  mutable bool refreshing_ = false;  // one ask of the agent at a time
  evidence_dir evidences_;
  mutable std::mutex zero_mu_;
  mutable std::optional<quote_response> zero_quote_;
  mutable clock::time_point zero_at_{};
};

}  // namespace

result<std::string> find_dstack_socket(std::span<const std::string_view> candidates) {
  std::string tried;
  for (const auto path : candidates) {
    struct stat st {};
    if (::stat(std::string(path).c_str(), &st) == 0)
      return std::string(path);
    tried += (tried.empty() ? "" : ", ") + std::string(path);
  }
  return fail(tee_errc::unavailable, "no dstack guest agent socket at " + tried +
                                         " (looked up in the order of dstack's SDKs): mount the agent's socket "
                                         "into the container, or name it with --tee-dstack-socket");
}

result<std::unique_ptr<tee>> open_dstack(const dstack_options& given) {
  dstack_options opts = given;
  if (opts.socket.empty()) {
    ENACT_TRY(opts.socket, find_dstack_socket());
  }
  // Info first: a provider whose keys are not stable is refused before a key is asked for.
  ENACT_TRY(app_info info, fetch_info(opts));
  ENACT_TRY_VOID(check_key_provider(opts, info));
  ENACT_TRY(root_key_answer root, fetch_root_key(opts));
  ENACT_TRY(info.root_key, verify_chain(opts, info, root));
  return std::unique_ptr<tee>(std::make_unique<dstack_tee>(std::move(root.key), std::move(opts), std::move(info)));
}

}  // namespace enact::tee
