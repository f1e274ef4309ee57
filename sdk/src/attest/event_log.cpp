// SPDX-License-Identifier: Apache-2.0
// dstack event log: parsing, runtime-event digests (dstack cc-eventlog runtime_events.rs) and
// RTMR replay (dstack docs/attestation-tdx.md §2.1).
#include "enact/attest/event_log.hpp"

#include <algorithm>
#include <cstdio>

#include "enact/attest/quote.hpp"
#include "enact/codec/hex.hpp"
#include "json_fields.hpp"

namespace enact::attest {

namespace {

/// A JSON string as RFC 8785 (JCS) writes it: only '"', '\\' and control characters escaped.
void jcs_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

std::string label(size_t index, const event& e) {
  return std::to_string(index) + (e.name.empty() ? std::string() : " " + e.name);
}

}  // namespace

const event* event_log::find_runtime(std::string_view name) const noexcept {
  for (const auto& e : events)
    if (e.is_runtime() && e.name == name)
      return &e;
  return nullptr;
}

result<event_log> event_log_from_json(const boost::json::value& v) {
  if (v.is_string()) {
    ENACT_TRY(detail::json::value inner, detail::parse_json(v.get_string(), "event_log"));
    if (inner.is_string())
      return fail(attest_errc::bad_field, "event_log: a string inside a string");
    return event_log_from_json(inner);
  }
  if (!v.is_array())
    return fail(attest_errc::bad_field, "event_log: expected an array of events");
  event_log log;
  const auto& a = v.get_array();
  log.events.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string what = "event_log[" + std::to_string(i) + "]";
    ENACT_TRY(const detail::json::object* o, detail::as_object(a[i], what));
    event e;
    ENACT_TRY(uint64_t imr, detail::get_uint(*o, what, "imr", 3));
    e.imr = static_cast<uint32_t>(imr);
    ENACT_TRY(uint64_t type, detail::get_uint(*o, what, "event_type"));
    e.event_type = static_cast<uint32_t>(type);
    if (o->contains("digest")) {
      ENACT_TRY(e.digest, detail::get_hex(*o, what, "digest"));
      if (!e.digest.empty() && e.digest.size() != 48)
        return fail(attest_errc::bad_field,
                    what + ".digest: expected 48 bytes, got " + std::to_string(e.digest.size()));
    }
    if (o->contains("event")) {
      ENACT_TRY(std::string_view name, detail::get_string(*o, what, "event"));
      e.name = name;
    }
    if (o->contains("event_payload")) {
      ENACT_TRY(e.payload, detail::get_hex(*o, what, "event_payload"));
    }
    if (const auto* ver = o->if_contains("version"); ver != nullptr && !ver->is_null()) {
      ENACT_TRY(uint64_t version, detail::get_uint(*o, what, "version"));
      if (version != 1 && version != 2)
        return fail(attest_errc::bad_field, what + ".version: " + std::to_string(version) + " (1 and 2 are known)");
      e.version = static_cast<uint32_t>(version);
    }
    log.events.push_back(std::move(e));
  }
  return log;
}

result<event_log> parse_event_log(std::string_view json) {
  ENACT_TRY(detail::json::value v, detail::parse_json(json, "event_log"));
  return event_log_from_json(v);
}

crypto::hash384 runtime_event_digest(const event& e) {
  if (e.version == 2) {
    // {"name":…,"payload":"<hex>","type":…} with keys in JCS (sorted) order.
    std::string text = R"({"name":)";
    jcs_string(text, e.name);
    text += R"(,"payload":")" + codec::hex::encode(e.payload) + R"(","type":)" + std::to_string(e.event_type) + "}";
    return crypto::sha384(as_bytes(text));
  }
  bytes pre;
  pre.reserve(4 + 1 + e.name.size() + 1 + e.payload.size());
  for (int i = 0; i < 4; ++i)
    pre.push_back(static_cast<uint8_t>(e.event_type >> (8 * i)));
  pre.push_back(':');
  pre.insert(pre.end(), e.name.begin(), e.name.end());
  pre.push_back(':');
  pre.insert(pre.end(), e.payload.begin(), e.payload.end());
  return crypto::sha384(pre);
}

replay_result replay(event_log& log) {
  replay_result out;
  std::array<uint8_t, 96> buf{};
  for (size_t i = 0; i < log.events.size(); ++i) {
    event& e = log.events[i];
    // parse_event_log enforces these; a log built in code may not.
    if (e.imr > 3) {
      out.digest_mismatches.push_back(label(i, e) + ": IMR " + std::to_string(e.imr) + " is not an RTMR (0..3)");
      continue;
    }
    if (!e.digest.empty() && e.digest.size() != 48) {
      out.digest_mismatches.push_back(label(i, e) + ": a digest of " + std::to_string(e.digest.size()) +
                                      " bytes, not 48");
      continue;
    }
    if (e.is_runtime()) {
      const crypto::hash384 d = runtime_event_digest(e);
      if (e.digest.empty()) {
        e.digest.assign(d.begin(), d.end());
        ++out.digests_computed;
      } else if (!std::equal(d.begin(), d.end(), e.digest.begin())) {
        out.digest_mismatches.push_back(label(i, e) + ": the digest is not that of its payload");
        // The payload is what a client reads, so the payload is what is replayed.
        e.digest.assign(d.begin(), d.end());
      }
    } else if (e.digest.empty()) {
      out.digest_mismatches.push_back(label(i, e) + ": a boot event without a digest");
      continue;
    }
    crypto::hash384& reg = out.rtmr[e.imr];
    std::copy(reg.begin(), reg.end(), buf.begin());
    std::copy(e.digest.begin(), e.digest.end(), buf.begin() + 48);
    reg = crypto::sha384(buf);
  }
  return out;
}

event_log_report verify_event_log(event_log log, const td_report& td) {
  event_log_report r;
  r.replayed = replay(log);
  r.log = std::move(log);
  const auto& bad = r.replayed.digest_mismatches;
  std::string detail;
  for (const auto& m : bad)
    detail += (detail.empty() ? "" : "; ") + m;
  r.add("event_log_digests", bad.empty(),
        bad.empty() ? std::to_string(r.log.events.size()) + " events, " + std::to_string(r.replayed.digests_computed) +
                          " runtime digests computed from their payloads"
                    : detail);
  for (size_t i = 0; i < 4; ++i) {
    const bool ok = r.replayed.rtmr[i] == td.rtmr[i];
    r.add("rtmr" + std::to_string(i), ok,
          ok ? "replay equals the quote's RTMR" + std::to_string(i)
             : "replay gives " + codec::hex::encode(r.replayed.rtmr[i]) + ", the quote holds " +
                   codec::hex::encode(td.rtmr[i]));
  }
  return r;
}

}  // namespace enact::attest
