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
//                                                 "tcb_info": JSON string, "vm_config", …}
#include <boost/json.hpp>

#include <algorithm>
#include <mutex>
#include <optional>

#include "tee/errors.hpp"
#include "enact/codec/hex.hpp"
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

/// The PKP root key: GetKey at `root_key_path`, a secp256k1 key derived by the agent from the
/// app's KMS key, so the same app gets the same PKP addresses on every machine it runs on.
result<Secret> fetch_root_key(const dstack_options& o) {
  ENACT_TRY(
      json::object answer,
      call(o, "GetKey",
           json::object{{"path", o.root_key_path}, {"purpose", "enact PKP root key"}, {"algorithm", "secp256k1"}}));
  auto* key = answer.if_contains("key");
  if (key == nullptr || !key->is_string())
    return fail(tee_errc::unavailable, "guest agent GetKey: 'key' missing or not a string");
  json::string& text = key->get_string();
  Secret root = Secret::of_size(kRootKeySize);
  const auto decoded = codec::hex::decode_into(text, root.mutable_view(), "GetKey.key");
  enact::detail::secure_wipe(text.data(), text.size());
  if (!decoded)
    return fail(tee_errc::unavailable, "guest agent GetKey: 'key' is not 32 bytes of hex");
  const auto v = root.view();
  if (std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; }))
    return fail(tee_errc::unavailable, "guest agent GetKey: the key is all zero");
  return root;
}

result<app_info> fetch_info(const dstack_options& o) {
  ENACT_TRY(const json::object answer, call(o, "Info", json::object{}));
  app_info info;
  ENACT_TRY(info.app_id, string_field(answer, "Info", "app_id"));
  ENACT_TRY(info.compose_hash, string_field(answer, "Info", "compose_hash", false));
  ENACT_TRY(info.vm_config, string_field(answer, "Info", "vm_config", false));
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
  ENACT_TRY(const std::string quote_hex, string_field(answer, "GetQuote", "quote"));
  quote_response q;
  auto quote = codec::hex::decode(quote_hex, "GetQuote.quote");
  if (!quote || quote->empty())
    return fail(tee_errc::unavailable, "guest agent GetQuote: 'quote' is not hex");
  q.quote = std::move(*quote);
  ENACT_TRY(q.event_log, string_field(answer, "GetQuote", "event_log", false));
  ENACT_TRY(q.vm_config, string_field(answer, "GetQuote", "vm_config", false));
  return q;
}

class dstack_tee final : public detail::pkp_tee {
 public:
  dstack_tee(Secret root, dstack_options opts, app_info info)
      : pkp_tee(std::move(root)), opts_(std::move(opts)), info_(std::move(info)), evidences_(opts_.evidence_dir) {}

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

  result<app_info> info() const override { return info_; }

  const evidence_dir& evidences() const noexcept override { return evidences_; }

 private:
  dstack_options opts_;
  app_info info_;
  evidence_dir evidences_;
  mutable std::mutex zero_mu_;
  mutable std::optional<quote_response> zero_quote_;
  mutable clock::time_point zero_at_{};
};

}  // namespace

result<std::unique_ptr<tee>> open_dstack(const dstack_options& opts) {
  ENACT_TRY(Secret root, fetch_root_key(opts));
  ENACT_TRY(app_info info, fetch_info(opts));
  return std::unique_ptr<tee>(std::make_unique<dstack_tee>(std::move(root), opts, std::move(info)));
}

}  // namespace enact::tee
