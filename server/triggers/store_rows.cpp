#include "triggers/store_rows.hpp"

#include <system_error>

namespace enact::triggers::store_rows {

json::value stored_json(std::string_view text) {
  std::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec)
    throw corrupt_row("stored JSON does not parse");
  return v;
}

run queued_run(const new_run& r) {
  run out;
  out.id = r.id;
  out.trigger_id = r.trigger_id;
  out.status = run_status::queued;
  out.params = r.params;
  out.queued_at = r.queued_at;
  out.next_attempt_at = r.queued_at;
  return out;
}

run refused_run(const new_run& r, const std::string& why) {
  run out = queued_run(r);
  out.status = run_status::failed;
  out.error = run_error{std::string(kRateLimitedCode), why, std::nullopt};
  out.finished_at = r.queued_at;
  return out;
}

result<void> check_text(std::string_view field, std::string_view v, size_t max) {
  if (v.size() > max)
    return fail(store_errc::invalid_argument, std::string(field) + ": longer than " + std::to_string(max) + " bytes");
  return {};
}

result<void> check_new_run(const new_run& r) {
  if (r.id.empty() || r.trigger_id.empty())
    return fail(store_errc::invalid_argument, "run: id and trigger_id must not be empty");
  ENACT_TRY_VOID(check_text("run.id", r.id, 128));
  return {};
}

error no_trigger(std::string_view id) {
  return fail(store_errc::not_found, "trigger " + std::string(id) + ": no such trigger");
}

error no_run(std::string_view id) { return fail(store_errc::not_found, "run " + std::string(id) + ": no such run"); }

error lease_lost(const lease_ref& l) {
  return fail(store_errc::lease_lost,
              "run " + l.run_id + ": worker " + l.worker_id + " no longer holds attempt " + std::to_string(l.attempt));
}

}  // namespace enact::triggers::store_rows
