// SPDX-License-Identifier: Apache-2.0
// The application check (see app.hpp).
#include "enact/attest/app.hpp"

#include <boost/json.hpp>

#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"
#include "json_fields.hpp"

namespace enact::attest {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// name@sha256:<64 hex> (a tag may come before the digest: name:tag@sha256:…).
bool is_pinned(std::string_view image) {
  const size_t at = image.rfind("@sha256:");
  if (at == std::string_view::npos || at == 0)
    return false;
  const std::string_view digest = image.substr(at + 8);
  if (digest.size() != 64)
    return false;
  for (char c : digest)
    if (codec::hex::detail::nibble(c) < 0)
      return false;
  return true;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

result<app_info> parse_app_info(std::string_view info_json) {
  ENACT_TRY(detail::json::value doc, detail::parse_json(info_json, "info"));
  ENACT_TRY(const detail::json::object* o, detail::as_object(doc, "info"));
  app_info info;
  ENACT_TRY(std::string_view app_id, detail::get_string(*o, "info", "app_id"));
  std::array<uint8_t, 20> id_bytes{};
  if (auto r = codec::hex::decode_into(app_id, id_bytes, "info.app_id"); !r)
    return fail(attest_errc::bad_field, r.err().message);
  info.app_id = codec::hex::encode(id_bytes);
  ENACT_TRY_VOID(detail::get_hex_into(*o, "info", "compose_hash", info.compose_hash));

  ENACT_TRY(const detail::json::value* tcb_v, detail::member(*o, "info", "tcb_info"));
  detail::json::value tcb_doc;
  if (tcb_v->is_string()) {
    ENACT_TRY(tcb_doc, detail::parse_json(tcb_v->get_string(), "info.tcb_info"));
    tcb_v = &tcb_doc;
  }
  ENACT_TRY(const detail::json::object* tcb, detail::as_object(*tcb_v, "info.tcb_info"));
  ENACT_TRY(std::string_view compose, detail::get_string(*tcb, "info.tcb_info", "app_compose"));
  info.app_compose = compose;
  if (const auto* log = tcb->if_contains("event_log"); log != nullptr && !log->is_null()) {
    ENACT_TRY(info.event_log_in_info, event_log_from_json(*log));
  }
  return info;
}

std::vector<image_ref> compose_images(std::string_view file) {
  std::vector<image_ref> out;
  while (!file.empty()) {
    const size_t nl = file.find('\n');
    std::string_view line = file.substr(0, nl);
    file = nl == std::string_view::npos ? std::string_view() : file.substr(nl + 1);
    line = trim(line);
    if (line.substr(0, 2) == "- ")  // a list item holding a mapping
      line = trim(line.substr(2));
    if (line.substr(0, 6) != "image:")
      continue;
    std::string_view value = trim(line.substr(6));
    if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
      const size_t close = value.find(value.front(), 1);
      value = value.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
    } else if (const size_t hash = value.find(" #"); hash != std::string_view::npos) {
      value = trim(value.substr(0, hash));
    }
    out.push_back(image_ref{std::string(value), is_pinned(value)});
  }
  return out;
}

app_report verify_app(const app_info& info, const event_log& log) {
  app_report r;
  r.computed_compose_hash = crypto::sha256(as_bytes(info.app_compose));
  const bool hash_ok = r.computed_compose_hash == info.compose_hash;
  r.add("compose_hash", hash_ok,
        hash_ok ? "SHA-256 of app_compose is the stated compose_hash " + codec::hex::encode(info.compose_hash)
                : "SHA-256 of app_compose is " + codec::hex::encode(r.computed_compose_hash) + ", /info states " +
                      codec::hex::encode(info.compose_hash));

  const event* ev = log.find_runtime("compose-hash");
  const bool ev_ok =
      ev != nullptr && ev->imr == 3 &&
      std::equal(ev->payload.begin(), ev->payload.end(), info.compose_hash.begin(), info.compose_hash.end());
  r.add("compose_hash_event", ev_ok,
        ev == nullptr  ? "the event log has no compose-hash event"
        : ev_ok        ? "the measured compose-hash event (RTMR3) holds the compose hash"
        : ev->imr != 3 ? "the compose-hash event is in RTMR" + std::to_string(ev->imr) + ", not RTMR3"
                       : "the measured compose-hash event holds " + codec::hex::encode(ev->payload) +
                             ", not the stated compose hash");

  const event* id = log.find_runtime("app-id");
  const bool id_ok = id != nullptr && id->imr == 3 && codec::hex::encode(id->payload) == info.app_id;
  r.add("app_id_event", id_ok,
        id == nullptr ? "the event log has no app-id event"
        : id_ok       ? "the measured app-id event (RTMR3) holds app_id " + info.app_id
                      : "the measured app-id event holds " + codec::hex::encode(id->payload) +
                      (id->imr != 3 ? " in RTMR" + std::to_string(id->imr) : std::string()) + ", /info states " +
                      info.app_id);

  // The compose file sits inside app_compose's JSON.
  boost::system::error_code ec;
  const boost::json::value compose = boost::json::parse(info.app_compose, ec);
  const boost::json::object* obj = ec ? nullptr : compose.if_object();
  const boost::json::value* file = obj ? obj->if_contains("docker_compose_file") : nullptr;
  if (file == nullptr || !file->is_string()) {
    r.add("images_pinned", false, ec ? "app_compose is not JSON" : "app_compose has no docker_compose_file string");
    return r;
  }
  r.images = compose_images(file->get_string());
  for (const auto& img : r.images)
    if (!img.pinned)
      r.unpinned_images.push_back(img.image.empty() ? "(empty image value)" : img.image);
  const bool pinned = !r.images.empty() && r.unpinned_images.empty();
  r.add("images_pinned", pinned,
        r.images.empty()            ? "the compose file has no image: line"
        : r.unpinned_images.empty() ? "all " + std::to_string(r.images.size()) + " images are pinned by @sha256 digest"
                                    : "not pinned by @sha256 digest: " + join(r.unpinned_images));
  return r;
}

boost::json::value to_json(const app_report& r) {
  boost::json::object o = to_json(static_cast<const checklist&>(r));
  boost::json::array images;
  for (const auto& img : r.images)
    images.push_back(boost::json::object{{"image", img.image}, {"pinned", img.pinned}});
  boost::json::array unpinned;
  for (const auto& s : r.unpinned_images)
    unpinned.emplace_back(s);
  o["facts"] = boost::json::object{{"compose_hash", codec::hex::encode(r.computed_compose_hash)},
                                   {"images", std::move(images)},
                                   {"unpinned_images", std::move(unpinned)}};
  return o;
}

}  // namespace enact::attest
