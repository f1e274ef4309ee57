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
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
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

class content_store {
 public:
  /// Creates the directory and the upload record when missing.
  [[nodiscard]] static result<content_store> open(const std::string& data_dir);
  /// Stores `code` under its CIDv0; returns the CID string. Storing the same code twice is fine.
  /// Counted against no account: for code the server keeps on its own behalf.
  [[nodiscard]] result<std::string> put(bytes_view code) const;
  /// Stores `code` for `account` within `quota`: code this account stored before is free;
  /// otherwise `forbidden` when its size or one more CID would exceed the quota (nothing is
  /// stored or counted then). Returns the CID string.
  [[nodiscard]] result<std::string> put_for(const hash256& account, bytes_view code, const upload_quota& quota) const;
  /// What `account` has stored.
  [[nodiscard]] result<upload_usage> usage(const hash256& account) const;
  /// The code of `cid` when stored and intact; nullopt when absent.
  [[nodiscard]] result<std::optional<bytes>> get(std::string_view cid) const;

 private:
  struct record;  // the upload record (SQLite), shared by copies of this store
  content_store(std::string dir, std::shared_ptr<record> rec) : dir_(std::move(dir)), record_(std::move(rec)) {}
  std::string dir_;
  std::shared_ptr<record> record_;
};

}  // namespace enact::core
