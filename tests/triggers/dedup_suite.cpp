// SPDX-License-Identifier: Apache-2.0
// Webhook de-duplication (config.dedup_header, docs/triggers.md "Webhooks") on every trigger-store
// backend: a delivery whose header value the trigger saw before answers the first run and queues
// nothing — also when the trigger's run limits are reached, and when deliveries race; values are
// per trigger; a delivery without the header, or a trigger without the setting, queues as
// always. Also the setting's validation (validate.cpp): a header name, never a credential.
#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "enact/crypto/keccak.hpp"
#include "must.hpp"
#include "store_suite.hpp"
#include "triggers/ids.hpp"
#include "triggers/validate.hpp"
#include "triggers/webhook.hpp"

namespace enact::triggers::test {
namespace {

trigger webhook_trigger(std::optional<std::string> dedup_header, int64_t max_queued = kMaxQueuedRunsLimit) {
  trigger t;
  t.id = new_trigger_id();
  t.owner = "alice";
  t.type = trigger_type::webhook;
  t.name = "deliveries";
  t.enabled = true;
  t.action_cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
  t.sealed_usage_key = bytes{1, 2, 3};
  t.usage_key_hash = crypto::keccak256(std::string_view("key of " + t.id));
  t.config = api::webhook_config{std::move(dedup_header)};
  t.created_at = t.updated_at = t0;
  t.max_runs_per_minute = kMaxRunsPerMinuteLimit;
  t.max_queued_runs = max_queued;
  return t;
}

/// A delivery with `id` as its X-Delivery header, its params shaped as webhook_params makes them
/// (headers lowercased).
new_run delivery(const std::string& trigger_id, const std::optional<std::string>& id) {
  json::object headers{{"content-type", "application/json"}};
  if (id)
    headers["x-delivery"] = *id;
  return new_run{new_run_id(), trigger_id,
                 json::object{{"event", json::object{}}, {"event_raw", "{}"}, {"headers", std::move(headers)}}, t0};
}

void duplicates_answer_the_first_run(backend& b) {
  auto s = b.open();
  const trigger t = MUST(s->create_trigger(webhook_trigger("x-delivery"), std::nullopt));
  const trigger other = MUST(s->create_trigger(webhook_trigger("x-delivery"), std::nullopt));
  const trigger plain = MUST(s->create_trigger(webhook_trigger(std::nullopt), std::nullopt));
  // The trigger reads back with its setting.
  CHECK(std::get<api::webhook_config>(MUST(s->find_trigger(t.id)).config).dedup_header == "x-delivery");

  const new_run d1 = delivery(t.id, "d-1");
  const run first = MUST(s->enqueue_run(d1, trigger_type::webhook));
  CHECK(first.id == d1.id);
  const new_run again = delivery(t.id, "d-1");
  const run second = MUST(s->enqueue_run(again, trigger_type::webhook));
  CHECK(second.id == first.id);  // the first run, not the new id
  CHECK(MUST(s->list_runs("alice", t.id, {100, 0})).total == 1);
  // The setting survives a PATCH of something else.
  trigger_patch rename;
  rename.name = "renamed";
  rename.now = t0;
  CHECK(std::get<api::webhook_config>(MUST(s->update_trigger("alice", t.id, rename)).config).dedup_header ==
        "x-delivery");
  CHECK(MUST(s->enqueue_run(delivery(t.id, "d-1"), trigger_type::webhook)).id == first.id);
  // Another value, and deliveries without the header, queue runs of their own.
  CHECK(MUST(s->enqueue_run(delivery(t.id, "d-2"), trigger_type::webhook)).id != first.id);
  const new_run bare1 = delivery(t.id, std::nullopt);
  const new_run bare2 = delivery(t.id, std::nullopt);
  CHECK(MUST(s->enqueue_run(bare1, trigger_type::webhook)).id == bare1.id);
  CHECK(MUST(s->enqueue_run(bare2, trigger_type::webhook)).id == bare2.id);
  CHECK(MUST(s->list_runs("alice", t.id, {100, 0})).total == 4);
  // Values are per trigger; a trigger without the setting never de-duplicates.
  const new_run theirs = delivery(other.id, "d-1");
  CHECK(MUST(s->enqueue_run(theirs, trigger_type::webhook)).id == theirs.id);
  for (int i = 0; i < 2; ++i) {
    const new_run p = delivery(plain.id, "d-1");
    CHECK(MUST(s->enqueue_run(p, trigger_type::webhook)).id == p.id);
  }
  // A value longer than a delivery id is refused.
  CHECK_ERRC(s->enqueue_run(delivery(t.id, std::string(kMaxDedupValue + 1, 'v')), trigger_type::webhook),
             store_errc::invalid_argument);
  // Disabled: refused, duplicate or not.
  trigger_patch off;
  off.enabled = false;
  off.now = t0;
  (void)MUST(s->update_trigger("alice", t.id, off));
  CHECK_ERRC(s->enqueue_run(delivery(t.id, "d-1"), trigger_type::webhook), store_errc::disabled);
}

void duplicates_over_the_limits(backend& b) {
  auto s = b.open();
  const trigger t = MUST(s->create_trigger(webhook_trigger("x-delivery", 1), std::nullopt));
  const run first = MUST(s->enqueue_run(delivery(t.id, "d-1"), trigger_type::webhook));
  // The queue is full: a new delivery is refused, the same one answers its run.
  CHECK_ERRC(s->enqueue_run(delivery(t.id, "d-2"), trigger_type::webhook), store_errc::queue_full);
  CHECK(MUST(s->enqueue_run(delivery(t.id, "d-1"), trigger_type::webhook)).id == first.id);
}

void racing_duplicates(backend& b) {
  auto s = b.open();
  const trigger t = MUST(s->create_trigger(webhook_trigger("x-delivery"), std::nullopt));
  for (int round = 0; round < 5; ++round) {
    const std::string key = "race-" + std::to_string(round);
    std::vector<std::string> ids(6);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < ids.size(); ++i)
      threads.emplace_back([&, i] {
        auto r = s->enqueue_run(delivery(t.id, key), trigger_type::webhook);
        if (r)
          ids[i] = r->id;
        else
          ++failures;
      });
    for (auto& th : threads)
      th.join();
    CHECK(failures == 0);
    CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 1);
  }
  CHECK(MUST(s->list_runs("alice", t.id, {100, 0})).total == 5);
}

}  // namespace

void run_dedup_suite(const backend_factory& make) {
  SUBCASE("a delivery seen before answers its first run; values per trigger") {
    duplicates_answer_the_first_run(*make());
  }
  SUBCASE("a duplicate is answered even over the run limits") { duplicates_over_the_limits(*make()); }
  SUBCASE("racing deliveries of one value queue one run") { racing_duplicates(*make()); }
}

TEST_CASE("webhook config.dedup_header: a header name, never a credential") {
  const config_rules rules{};
  const auto read = [&](json::value config) {
    return validate_config(trigger_type::webhook, &config, rules);
  };
  const auto ok = read(json::object{{"dedup_header", "X-GitHub-Delivery"}});
  REQUIRE(ok);
  CHECK(std::get<api::webhook_config>(*ok).dedup_header == "X-GitHub-Delivery");
  CHECK(read(json::object{}));
  CHECK_FALSE(std::get<api::webhook_config>(*read(json::object{})).dedup_header);
  for (const json::value& bad : {json::value("Authorization"), json::value("cookie"), json::value("X-Api-Key"),
                                 json::value("remote_addr"), json::value("two words"), json::value(""),
                                 json::value(std::string(129, 'h')), json::value("x:y"), json::value(7)}) {
    INFO(json::serialize(bad));
    const auto r = read(json::object{{"dedup_header", bad}});
    REQUIRE_FALSE(r);
    CHECK(r.err().message.starts_with("config.dedup_header"));
  }
  // The trigger JSON carries it, and reads it back.
  const api::trigger_config c = api::webhook_config{"x-delivery"};
  const json::value v = std::visit([](const auto& x) { return json::value_from(x); }, c);
  CHECK(json::serialize(v) == R"({"dedup_header":"x-delivery"})");
  CHECK(json::serialize(json::value_from(api::webhook_config{})) == "{}");
}

}  // namespace enact::triggers::test
