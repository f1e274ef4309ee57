// The local content store for action code (API.md §2 /upload_action): files named by their CID
// under `<data_dir>/actions/`, written atomically (temp file, fsync, rename) and verified against
// the CID when read, so a corrupted file is never handed to the runtime.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "enact/bytes.hpp"
#include "enact/result.hpp"

namespace enact::core {

class content_store {
 public:
  /// Creates the directory when missing.
  [[nodiscard]] static result<content_store> open(const std::string& data_dir);
  /// Stores `code` under its CIDv0; returns the CID string. Storing the same code twice is fine.
  [[nodiscard]] result<std::string> put(bytes_view code) const;
  /// The code of `cid` when stored and intact; nullopt when absent.
  [[nodiscard]] result<std::optional<bytes>> get(std::string_view cid) const;

 private:
  explicit content_store(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace enact::core
