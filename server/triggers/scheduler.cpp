// SPDX-License-Identifier: Apache-2.0
#include "triggers/scheduler.hpp"

#include "triggers/ids.hpp"

namespace enact::triggers {

using std::chrono::sys_seconds;

json::object schedule_params(time_point planned, std::string_view cron) {
  return json::object{{"source", "schedule"}, {"scheduled_at", to_rfc3339(planned, false)}, {"cron", cron}};
}

sys_seconds latest_fire(const cron::schedule& s, sys_seconds due, sys_seconds now) {
  using namespace std::chrono_literals;
  using std::chrono::hours;
  sys_seconds latest = due;
  // A long outage of a frequent schedule: jump near now first (the first window back from now
  // that holds a fire time), then step, so the cost is bounded by one window's firings.
  for (const auto window : {hours(1), hours(24), hours(24 * 32), hours(24 * 366), hours(24 * 366 * 8)}) {
    if (now - window <= latest)
      break;
    const auto candidate = cron::next_after(s, now - window);
    if (candidate && *candidate <= now) {
      latest = *candidate;
      break;
    }
  }
  for (;;) {
    const auto n = cron::next_after(s, latest);
    if (!n || *n > now)
      return latest;
    latest = *n;
  }
}

scheduler::scheduler(store& s, const clock& c, std::function<void()> on_fired, event_sink log)
    : store_(s), clock_(c), on_fired_(std::move(on_fired)), log_(std::move(log)) {}

scheduler::~scheduler() { stop(); }

void scheduler::report(std::string_view msg, json::object fields) const {
  if (log_)
    log_(severity::warn, msg, std::move(fields));
}

result<void> scheduler::load() {
  ENACT_TRY(const auto all, store_.list_schedules());
  std::lock_guard lock(mu_);
  for (const auto& t : all)
    index(t);
  changed_ = true;
  wake_.notify_all();
  return {};
}

void scheduler::index(const scheduled_trigger& t) {
  auto parsed = cron::parse(t.cron);
  if (!parsed) {
    entries_.erase(t.trigger_id);
    report("schedule trigger has an invalid cron; not scheduled",
           {{"trigger_id", t.trigger_id}, {"detail", parsed.err().message}});
    return;
  }
  time_point due;
  if (t.state) {
    due = t.state->next_due;
  } else {
    const auto now = std::chrono::floor<std::chrono::seconds>(clock_.now());
    const auto next = cron::next_after(*parsed, now);
    if (!next) {
      entries_.erase(t.trigger_id);
      return;
    }
    due = *next;
    if (auto w = store_.set_schedule_state(t.trigger_id, schedule_state{due, std::nullopt}); !w)
      report("cannot store a schedule's first due time", {{"trigger_id", t.trigger_id}, {"detail", w.err().message}});
  }
  entry& e = entries_[t.trigger_id];
  e.schedule = std::move(*parsed);
  e.due = due;
  e.generation = ++generation_;
  heap_.push(slot{due, t.trigger_id, e.generation});
}

void scheduler::refresh_locked(std::string_view trigger_id) {
  auto s = store_.get_schedule(trigger_id);
  if (!s) {
    report("cannot read a schedule trigger", {{"trigger_id", trigger_id}, {"detail", s.err().message}});
    return;
  }
  if (!*s)
    entries_.erase(std::string(trigger_id));  // its heap slots are skipped as stale
  else
    index(**s);
  changed_ = true;
}

void scheduler::refresh(std::string_view trigger_id) {
  {
    // The store is read under the lock, so two refreshes of one trigger apply in the order of
    // their reads (a late, older read never replaces a newer one).
    std::lock_guard lock(mu_);
    refresh_locked(trigger_id);
  }
  wake_.notify_all();
}

size_t scheduler::fire_due() {
  const time_point now = clock_.now();
  const auto now_s = std::chrono::floor<std::chrono::seconds>(now);
  size_t fired = 0;
  // Due triggers are claimed from the heap in due order, kChunk at a time. Under the lock only the
  // claim (the heap's pops and a copy of each schedule); the firings (their planned and next
  // times, params and run ids) are computed and committed without it, through one store call per
  // chunk, so an API refresh never waits for a commit and the workers are woken after each
  // chunk. A chunk is as large as the SQLite store's group commit (sqlite_options::max_batch):
  // a second in which thousands of schedules are due costs a few commits, whose fsyncs are what
  // a loaded disk makes slow (smaller chunks measured later, not sooner, under such load).
  constexpr size_t kChunk = 1024;
  struct claim {
    std::string trigger_id;
    time_point due{};
    uint64_t generation = 0;
    cron::schedule schedule;
  };
  std::vector<claim> claimed;
  std::vector<schedule_firing> batch;
  std::vector<uint64_t> generations;  // of batch[i]'s trigger
  std::vector<claim*> ended;          // no fire time left after now
  for (;;) {
    claimed.clear();
    {
      std::lock_guard lock(mu_);
      while (claimed.size() < kChunk && !heap_.empty() && heap_.top().due <= now) {
        slot top = heap_.top();
        heap_.pop();
        const auto it = entries_.find(top.trigger_id);
        if (it == entries_.end() || it->second.generation != top.generation)
          continue;  // stale: the trigger changed or went away
        claimed.push_back(claim{std::move(top.trigger_id), top.due, top.generation, it->second.schedule});
      }
    }
    if (claimed.empty())
      break;
    batch.clear();
    generations.clear();
    ended.clear();
    for (auto& c : claimed) {
      const auto planned = latest_fire(c.schedule, std::chrono::floor<std::chrono::seconds>(c.due), now_s);
      const auto next = cron::next_after(c.schedule, now_s);
      if (!next) {
        ended.push_back(&c);
        continue;
      }
      schedule_firing f;
      f.r = new_run{new_run_id(), c.trigger_id, schedule_params(planned, c.schedule.text()), now};
      f.trigger_id = c.trigger_id;
      f.expected_due = c.due;
      f.planned = planned;
      f.next_due = *next;
      batch.push_back(std::move(f));
      generations.push_back(c.generation);
    }
    auto outs = batch.empty() ? std::vector<result<std::optional<triggers::run>>>{} : store_.fire_schedules(batch);
    const time_point committed = clock_.now();
    size_t chunk_fired = 0;
    {
      std::lock_guard lock(mu_);
      for (const claim* c : ended)
        if (const auto it = entries_.find(c->trigger_id);
            it != entries_.end() && it->second.generation == c->generation)
          entries_.erase(it);
      for (size_t i = 0; i < batch.size(); ++i) {
        const std::string& id = batch[i].trigger_id;
        const auto it = entries_.find(id);
        const bool current = it != entries_.end() && it->second.generation == generations[i];
        auto& out = outs[i];
        if (!out) {
          report("schedule firing failed; retrying in 1 s", {{"trigger_id", id}, {"detail", out.err().message}});
          if (current) {
            it->second.due = now + std::chrono::seconds(1);
            heap_.push(slot{it->second.due, id, generations[i]});
          }
          continue;
        }
        if (!*out) {
          // Changed under us (updated, disabled, deleted, or fired elsewhere): the store decides.
          refresh_locked(id);
          continue;
        }
        ++chunk_fired;
        if (observer_)
          observer_(batch[i].planned, committed);
        if (current) {
          it->second.due = batch[i].next_due;
          heap_.push(slot{batch[i].next_due, id, generations[i]});
        }
      }
    }
    fired += chunk_fired;
    if (chunk_fired > 0 && on_fired_)
      on_fired_();
  }
  return fired;
}

void scheduler::set_observer(std::function<void(time_point planned, time_point committed)> f) {
  std::lock_guard lock(mu_);
  observer_ = std::move(f);
}

std::optional<time_point> scheduler::next_due() const {
  std::lock_guard lock(mu_);
  auto heap = heap_;
  while (!heap.empty()) {
    const auto it = entries_.find(heap.top().trigger_id);
    if (it != entries_.end() && it->second.generation == heap.top().generation)
      return heap.top().due;
    heap.pop();
  }
  return std::nullopt;
}

size_t scheduler::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void scheduler::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable())
    return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void scheduler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void scheduler::run() {
  for (;;) {
    fire_due();
    std::unique_lock lock(mu_);
    if (stopping_)
      return;
    if (!changed_) {
      // Stale slots at the top are dropped here, so the wait is for a live due time.
      while (!heap_.empty()) {
        const auto it = entries_.find(heap_.top().trigger_id);
        if (it != entries_.end() && it->second.generation == heap_.top().generation)
          break;
        heap_.pop();
      }
      const time_point deadline = heap_.empty() ? clock_.now() + std::chrono::hours(1) : heap_.top().due;
      if (deadline > clock_.now())
        clock_.wait_until(lock, wake_, deadline);
    }
    changed_ = false;
    if (stopping_)
      return;
  }
}

}  // namespace enact::triggers
