// SPDX-License-Identifier: Apache-2.0
// The local content store for action code (docs/protocol.md §2 /upload_action): files named by their CID
// under `<data_dir>/actions/`, written atomically (temp file, fsync, rename) and verified against
// the CID when read, so a corrupted file is never handed to the runtime.
//
// The store is content-addressed and shared by every account, so what each account stored is
// recorded apart, in `<data_dir>/uploads.sqlite` (account, CID, size): an account's quota counts
// the distinct CIDs it stored and their bytes, so storing the same code again costs nothing, and
// code another account stored first still counts for this one (each account pays for what it
// asks the server to keep, whoever asked first).
//
// A fleet of servers shares one content store in PostgreSQL instead (core/pg_content_store.hpp,
// `--content-store postgres`): code uploaded through one instance runs by CID on every other.
// Both keep bytes under a CIDv0 behind `content_backend`; this class computes the CID of what is
// stored and checks what is read back against the CID asked for, whichever backend holds it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact::core {

/// The most one account may keep in the content store; 0 in a field: no limit on it.
struct upload_quota {
  uint64_t max_bytes = 0;
  uint64_t max_count = 0;
};

/// What one account keeps in the content store.
struct upload_usage {
  uint64_t bytes = 0;
  uint64_t count = 0;
};

/// Where a content store keeps code and the record of what each account stored. Thread-safe.
class content_backend {
 public:
  virtual ~content_backend() = default;
  /// Keeps `code` under `cid` (its CIDv0 string); keeping it again is fine.
  [[nodiscard]] virtual result<void> put(const std::string& cid, bytes_view code) const = 0;
  /// Keeps `code` under `cid` for `account` within `quota` (content_store::put_for).
  [[nodiscard]] virtual result<void> put_for(const hash256& account, const std::string& cid, bytes_view code,
                                             const upload_quota& quota) const = 0;
  [[nodiscard]] virtual result<upload_usage> usage(const hash256& account) const = 0;
  /// Whether `account` stored `cid` (a CIDv0 string): uploaded it, or ran it from a body or a
  /// gateway and had it kept.
  [[nodiscard]] virtual result<bool> stored_by(const hash256& account, const std::string& cid) const = 0;
  /// The bytes kept under `cid` (a CIDv0 string), unchecked; nullopt when absent.
  [[nodiscard]] virtual result<std::optional<bytes>> get(const std::string& cid) const = 0;
};

/// The refusal of a `size`-byte upload of new code by an account that stores `used` within
/// `quota` (forbidden, naming the limit); nullopt when it fits. Code the account stored before is
/// not new.
[[nodiscard]] std::optional<error> quota_refusal(const upload_usage& used, uint64_t size, const upload_quota& quota);

class content_store {
 public:
  /// The local store: files under `<data_dir>/actions/` and the upload record beside them.
  /// Creates the directory and the upload record when missing.
  [[nodiscard]] static result<content_store> open(const std::string& data_dir);
  /// A store on another backend (core/pg_content_store.hpp).
  explicit content_store(std::shared_ptr<const content_backend> backend) : backend_(std::move(backend)) {}

  /// Stores `code` under its CIDv0; returns the CID string. Storing the same code twice is fine.
  /// Counted against no account: for code the server keeps on its own behalf.
  [[nodiscard]] result<std::string> put(bytes_view code) const;
  /// Stores `code` for `account` within `quota`: code this account stored before is free;
  /// otherwise `forbidden` when its size or one more CID would exceed the quota (nothing is
  /// stored or counted then). Returns the CID string.
  [[nodiscard]] result<std::string> put_for(const hash256& account, bytes_view code, const upload_quota& quota) const;
  /// What `account` has stored.
  [[nodiscard]] result<upload_usage> usage(const hash256& account) const;
  /// Whether `account` stored the code `cid` names (any CID spelling of it): the rule of
  /// /get_action_code, under which an account reads back only code it put here itself.
  [[nodiscard]] result<bool> stored_by(const hash256& account, std::string_view cid) const;
  /// The code of `cid` when stored and intact; nullopt when absent.
  [[nodiscard]] result<std::optional<bytes>> get(std::string_view cid) const;

 private:
  std::shared_ptr<const content_backend> backend_;  // shared by copies of this store
};

}  // namespace enact::core
