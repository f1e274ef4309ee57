// SPDX-License-Identifier: Apache-2.0
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

std::string config_text(const api::trigger_config& c) { return json::serialize(api::config_json(c)); }

api::trigger_config stored_config(trigger_type t, std::string_view text) {
  auto c = api::read_config(t, stored_json(text));
  if (!c)
    throw corrupt_row("stored trigger config: " + c.err().message);
  return std::move(*c);
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

result<void> check_new_trigger(const trigger& t) {
  if (t.id.empty() || t.owner.empty())
    return fail(store_errc::invalid_argument, "trigger: id and owner must not be empty");
  ENACT_TRY_VOID(check_text("trigger.id", t.id, 128));
  ENACT_TRY_VOID(check_text("trigger.owner", t.owner, 256));
  ENACT_TRY_VOID(check_text("trigger.name", t.name));
  ENACT_TRY_VOID(check_text("trigger.action_cid", t.action_cid, 256));
  if (api::type_of(t.config) != t.type)
    return fail(store_errc::invalid_argument,
                "trigger.config: not the config of a " + std::string(to_string(t.type)) + " trigger");
  return {};
}

result<void> check_patch(const trigger_patch& patch) {
  if (patch.name)
    ENACT_TRY_VOID(check_text("trigger.name", *patch.name));
  if (patch.action_cid)
    ENACT_TRY_VOID(check_text("trigger.action_cid", *patch.action_cid, 256));
  if (patch.sealed_usage_key.has_value() != patch.usage_key_hash.has_value())
    return fail(store_errc::invalid_argument, "trigger patch: sealed_usage_key and usage_key_hash change together");
  return {};
}

void apply_patch(trigger& t, const trigger_patch& patch) {
  if (patch.name)
    t.name = *patch.name;
  if (patch.enabled) {
    // The owner's answer to a trigger the service disabled: its count starts again.
    if (*patch.enabled && !t.enabled) {
      t.disabled_reason.reset();
      t.credit_failures = 0;
    }
    t.enabled = *patch.enabled;
  }
  if (patch.config)
    t.config = *patch.config;
  if (patch.action_cid)
    t.action_cid = *patch.action_cid;
  if (patch.pkp_id)
    t.pkp_id = *patch.pkp_id;
  if (patch.sealed_usage_key) {
    t.sealed_usage_key = *patch.sealed_usage_key;
    t.usage_key_hash = *patch.usage_key_hash;
  }
  if (patch.max_runs_per_minute)
    t.max_runs_per_minute = *patch.max_runs_per_minute;
  if (patch.max_queued_runs)
    t.max_queued_runs = *patch.max_queued_runs;
  t.updated_at = patch.now;
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
