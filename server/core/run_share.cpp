// SPDX-License-Identifier: Apache-2.0
#include "core/run_share.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>

#include "core/errors.hpp"

namespace enact::core {

size_t run_share::hash_of::operator()(const hash256& h) const noexcept {
  size_t v = 0;
  std::memcpy(&v, h.data(), sizeof v);  // account hashes are keccak-256 outputs
  return v;
}

run_share::ticket::~ticket() {
  if (owner_ != nullptr)
    owner_->leave(account_);
}

void run_share::ticket::ran(std::chrono::milliseconds wall) {
  if (owner_ != nullptr)
    owner_->charge(account_, wall);
}

void run_share::refill(entry& e, steady::time_point now) const {
  const double minute = static_cast<double>(limits_.wall_per_minute.count());
  const double elapsed_ms = std::chrono::duration<double, std::milli>(now - e.refilled).count();
  e.budget_ms = std::min(minute, e.budget_ms + elapsed_ms * minute / 60000.0);
  e.refilled = now;
}

result<run_share::ticket> run_share::enter(const hash256& account, int& retry_after) {
  if (limits_.concurrent == 0 && limits_.wall_per_minute.count() == 0)
    return ticket();
  const auto now = steady::now();
  std::lock_guard lock(mu_);
  if (++enters_ % 1024 == 0)
    forget_idle(now);
  auto [it, fresh] = accounts_.try_emplace(account);
  entry& e = it->second;
  if (fresh) {
    e.budget_ms = static_cast<double>(limits_.wall_per_minute.count());
    e.refilled = now;
  }
  if (limits_.concurrent > 0 && e.running >= limits_.concurrent) {
    retry_after = 1;
    return fail(api_errc::rate_limited, "this account has " + std::to_string(e.running) + " runs in flight, at most " +
                                            std::to_string(limits_.concurrent) +
                                            " at once (its share of the sandbox pool)");
  }
  if (limits_.wall_per_minute.count() > 0) {
    refill(e, now);
    if (e.budget_ms <= 0) {
      const double per_ms = static_cast<double>(limits_.wall_per_minute.count()) / 60000.0;
      retry_after = std::max(1, static_cast<int>(std::ceil((1.0 - e.budget_ms) / per_ms / 1000.0)));
      if (e.running == 0 && fresh)
        accounts_.erase(it);
      return fail(api_errc::rate_limited, "this account used its " +
                                              std::to_string(limits_.wall_per_minute.count() / 1000) +
                                              " s of run wall time for this minute (its share of the sandbox pool)");
    }
  }
  ++e.running;
  return ticket(this, account);
}

bool run_share::forgettable(entry& e, steady::time_point now) const {
  if (e.running > 0)
    return false;
  refill(e, now);  // with no wall-time cap the budget stays 0, which is full
  return e.budget_ms >= static_cast<double>(limits_.wall_per_minute.count());
}

void run_share::forget_idle(steady::time_point now) {
  for (auto it = accounts_.begin(); it != accounts_.end();)
    it = forgettable(it->second, now) ? accounts_.erase(it) : std::next(it);
}

void run_share::charge(const hash256& account, std::chrono::milliseconds wall) {
  if (limits_.wall_per_minute.count() == 0)
    return;
  std::lock_guard lock(mu_);
  const auto it = accounts_.find(account);
  if (it == accounts_.end())
    return;
  refill(it->second, steady::now());
  it->second.budget_ms -= static_cast<double>(wall.count());
}

void run_share::leave(const hash256& account) {
  std::lock_guard lock(mu_);
  const auto it = accounts_.find(account);
  if (it == accounts_.end())
    return;
  entry& e = it->second;
  if (e.running > 0)
    --e.running;
  // An account with nothing in flight and a full minute is forgotten, so the table holds only
  // accounts that ran lately.
  if (forgettable(e, steady::now()))
    accounts_.erase(it);
}

}  // namespace enact::core
