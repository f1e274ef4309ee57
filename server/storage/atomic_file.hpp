// SPDX-License-Identifier: Apache-2.0
// Replacing a small file so that a crash at any point leaves either the old content or the new,
// never a mix: the data directory's records and the content store's code files.
#pragma once

#include <optional>
#include <string>

#include "enact/bytes.hpp"

namespace enact::storage {

/// Writes `data` to a new temporary file beside `path` (a name no other writer uses, mode 0600),
/// fsyncs it, renames it over `path` and fsyncs the directory, so the rename itself survives a
/// crash. On failure the temporary file is removed, `path` is as it was, and the answer is why
/// ("cannot create <tmp>: <errno text>", "cannot write <path>: <errno text>"); nullopt on success.
[[nodiscard]] std::optional<std::string> write_file_atomically(const std::string& path, bytes_view data);

}  // namespace enact::storage
