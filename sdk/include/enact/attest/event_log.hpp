// SPDX-License-Identifier: Apache-2.0
// dstack's TDX event log and its replay into RTMR0–3 (dstack cc-eventlog; docs/protocol.md §5 check 1).
// The log is a JSON array of `{"imr", "event_type", "digest", "event", "event_payload"}` (GetQuote
// sends it as a JSON string holding the array, /info's tcb_info as the array itself). `imr` is
// the 0-based RTMR index. Runtime events (event_type 0x08000001) are measured by name and payload:
// their digest is SHA-384(le32(event_type) ‖ ":" ‖ name ‖ ":" ‖ payload) (version 1, the default)
// or SHA-384 of the JCS text {"name","payload","type"} (version 2). Logs trimmed for size drop
// the digest of runtime events, so it is recomputed before replay — and recomputed even when
// present, so the payload a client reads (compose-hash, app-id, …) is the one the RTMR holds: a
// given digest that disagrees is reported. Other events replay with the digest they carry.
// Replay: every RTMR starts as 48 zero bytes and takes rtmr = SHA-384(rtmr ‖ digest) per event.
#pragma once

#include <boost/json/value.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/report.hpp"
#include "enact/bytes.hpp"
#include "enact/crypto/sha2.hpp"
#include "enact/result.hpp"

namespace enact::attest {

struct td_report;

/// event_type of dstack's runtime events (DSTACK_RUNTIME_EVENT_TYPE).
inline constexpr uint32_t kRuntimeEventType = 0x08000001;

struct event {
  uint32_t imr = 0;  // RTMR index, 0..3
  uint32_t event_type = 0;
  bytes digest;  // 48 bytes, or empty when the log left it out
  std::string name;
  bytes payload;
  uint32_t version = 1;  // runtime-event digest rule: 1 or 2

  [[nodiscard]] bool is_runtime() const noexcept { return event_type == kRuntimeEventType; }
};

struct event_log {
  std::vector<event> events;

  /// The first runtime event with this name (dstack writes each once), or nullptr.
  [[nodiscard]] const event* find_runtime(std::string_view name) const noexcept;
};

/// Parses the JSON array, or a JSON string that holds it (the GetQuote form).
[[nodiscard]] result<event_log> parse_event_log(std::string_view json);
/// Same, from an already parsed value (an array, or a string holding one).
[[nodiscard]] result<event_log> event_log_from_json(const boost::json::value& v);

/// The digest a runtime event is measured with (rule chosen by its `version`).
[[nodiscard]] crypto::hash384 runtime_event_digest(const event& e);

/// The log after recomputing runtime digests, and the four registers it replays to.
struct replay_result {
  std::array<crypto::hash384, 4> rtmr{};
  size_t digests_computed = 0;  // runtime events that carried no digest
  /// "<index> <name>" of runtime events whose given digest differs from the recomputed one.
  std::vector<std::string> digest_mismatches;
};

/// Recomputes runtime digests (filling the empty ones in `log`) and replays.
[[nodiscard]] replay_result replay(event_log& log);

struct event_log_report : checklist {
  event_log log;  // with every runtime digest filled in
  replay_result replayed;
};

/// Checks "event_log_digests" (every runtime digest the log carries matches its name and
/// payload) and "rtmr0".."rtmr3" (the replay equals the quote's register).
[[nodiscard]] event_log_report verify_event_log(event_log log, const td_report& td);

[[nodiscard]] boost::json::value to_json(const event_log_report& r);

}  // namespace enact::attest
