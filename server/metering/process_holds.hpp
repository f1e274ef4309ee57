// SPDX-License-Identifier: Apache-2.0
// The open reservations of a metering store whose runs all live in the process that opened it
// (the SQLite store: one server per file, docs/architecture.md §4 "Holds live in the process on
// SQLite"). A reservation only keeps credits from being spent twice while its run is in flight;
// the run dies with its process, and so does the reservation, so none of it needs to be written
// anywhere: a hold is a map entry, and a charged run writes once, when it is settled. The rules
// are those of store.hpp, checked by the same functions as the SQL reservations'
// (operations::check_funds) and answered with the same errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "metering/store.hpp"

namespace enact::metering {

/// What a reservation is checked against: the account's balance and the key's settled spending,
/// as committed.
struct committed_funds {
  uint64_t balance = 0;
  uint64_t spent = 0;
};

/// Thread-safe.
class process_holds {
 public:
  /// Reserves `q.amount` if the funds `read()` answers less the unexpired holds at `clock()` cover
  /// it and the key's cap allows it. Forgets the account's expired holds on the way. `read()`
  /// runs under this book's lock, and a settle closes its hold (settled()) under it too, only after
  /// its charge committed: the read sees either the charge with its hold still counted, or
  /// neither; never the hold gone with the charge not yet in the balance.
  [[nodiscard]] result<reservation> reserve(const reserve_request& q, const std::function<committed_funds()>& read,
                                            const clock_fn& clock);

  /// Takes the account's reservation `id` for a settle of `amount` (unknown_reservation: none of
  /// this account's, expired, or being settled already; over_reserved). It keeps holding its
  /// credits, and cannot expire, until settled() or unsettled(): the charge is committed first.
  [[nodiscard]] result<reservation> settling(const account_hash& account, std::string_view id, uint64_t amount,
                                             millis now);
  /// The settle's charge committed: the reservation closes.
  void settled(const account_hash& account, std::string_view id);
  /// The settle's write failed: the reservation is open again, as before settling().
  void unsettled(const account_hash& account, std::string_view id);

  /// Closes the account's reservation `id` uncharged (unknown_reservation when there is none).
  [[nodiscard]] result<void> release(const account_hash& account, std::string_view id);
  /// Forgets every expired reservation; returns how many.
  uint64_t release_expired(millis now);

  /// What `read()` answers (read under this book's lock) and what the account's unexpired
  /// reservations hold at `now` (of `key` among them in `.held.spent`), as one
  /// state: a settle that commits meanwhile closes its hold only after both are read, so the two
  /// never count its charge twice or not at all.
  struct funds_and_holds {
    committed_funds committed;
    committed_funds held;
  };
  [[nodiscard]] funds_and_holds funds(const account_hash& account, const key_hash* key,
                                      const std::function<committed_funds()>& read, millis now) const;

 private:
  struct open {
    reservation r;
    bool settling = false;  // its charge is being committed: held, never expired
  };
  using account_holds = std::map<std::string, open, std::less<>>;

  /// The account's reservation `id`, or null (the lock held).
  open* find(const account_hash& account, std::string_view id);
  /// Forgets the account's reservation `id`, and the account once it has none (the lock held).
  void close(const account_hash& account, std::string_view id);
  /// Whether the reservation still holds its credits at `now`.
  static bool live(const open& o, millis now);
  /// The credits the live reservations of `holds` hold (of `key` among them in `.spent`).
  static committed_funds sum(const account_holds& holds, const key_hash* key, millis now);
  /// Forgets the reservations of `holds` no longer live; returns how many.
  static size_t forget_expired(account_holds& holds, millis now);

  mutable std::mutex mu_;
  std::map<account_hash, account_holds> by_account_;
};

}  // namespace enact::metering
