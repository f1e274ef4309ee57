// SPDX-License-Identifier: Apache-2.0
// The application check (docs/protocol.md §5 check 2): which code runs in the TD. GET /info gives
// `app_id`, `compose_hash` and `tcb_info.app_compose` (the raw app-compose.json text, holding the
// docker compose file). The check binds them to the measured boot: the hex SHA-256 of app_compose
// equals compose_hash; the event log (replayed against the quote's RTMR3 by the quote check)
// holds a `compose-hash` runtime event with exactly that hash and an `app-id` event with app_id;
// and every `image:` line of the compose file pins its image by `@sha256:<64 hex>`, so the
// measured compose names immutable images. Unpinned images are reported by name.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/event_log.hpp"
#include "enact/attest/report.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::attest {

/// The parts of GET /info the checks use.
struct app_info {
  std::string app_id;                          // 40 hex digits: the application contract's address without 0x
  hash256 compose_hash{};                      // as /info states it
  std::string app_compose;                     // raw text, exactly as measured
  std::optional<event_log> event_log_in_info;  // tcb_info.event_log, when /info carries one
};

/// Parses the /info JSON. `tcb_info` may be an object or a JSON string holding one (the guest
/// agent sends the string). Errors: bad_json, bad_field (app_id not 40 hex digits, compose_hash
/// not 64, app_compose missing).
[[nodiscard]] result<app_info> parse_app_info(std::string_view info_json);

/// One `image:` line of the compose file.
struct image_ref {
  std::string image;  // the value, unquoted
  bool pinned = false;
};

/// The `image:` values of a docker compose file, in order.
[[nodiscard]] std::vector<image_ref> compose_images(std::string_view docker_compose_file);

struct app_report : checklist {
  hash256 computed_compose_hash{};  // SHA-256 of app_compose
  std::vector<image_ref> images;
  std::vector<std::string> unpinned_images;
};

/// Checks "compose_hash" (SHA-256 of app_compose is compose_hash), "compose_hash_event" (the
/// log's compose-hash runtime event holds it), "app_id_event" (the app-id event holds app_id),
/// "images_pinned". Pass the event log the quote check replayed (quote_report::log->log): an
/// event log that was not replayed against a verified quote proves nothing.
[[nodiscard]] app_report verify_app(const app_info& info, const event_log& replayed_log);

[[nodiscard]] boost::json::value to_json(const app_report& r);

}  // namespace enact::attest
