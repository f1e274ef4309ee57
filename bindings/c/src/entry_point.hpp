// SPDX-License-Identifier: Apache-2.0
// What every entry point of enact.h uses: `guarded` runs its body so that no exception crosses the
// C interface (an error becomes a code and a thread-local message), and the checks of its
// arguments and outputs.
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "enact.h"
#include "enact/error.hpp"
#include "enact/result.hpp"
#include "enact/secret.hpp"

namespace enact_c {

/// Records `message` as enact_last_error's text and returns `code`.
int set_error(int code, std::string_view message) noexcept;

/// The header's code for an SDK error code, by the domain the error comes from.
int code_of(const std::error_code& ec) noexcept;

inline int invalid(std::string_view message) noexcept { return set_error(ENACT_ERR_INVALID_ARGUMENT, message); }

// A call refused with one of the header's codes (an argument check, an SDK failure given its own
// code): `guarded` records it.
struct refusal {
  int code;
  std::string message;
};

[[noreturn]] inline void refuse(int code, std::string message) { throw refusal{code, std::move(message)}; }

// Refuses a NULL argument as "<name>: NULL". An entry point checks its output first, then its
// inputs in the order of the header.
void require(const void* arg, const char* name);

// An output argument, refused when NULL, else emptied before anything can fail, so that a failed
// call leaves nothing stale in it.
void output(char* text, const char* name);
void output(char** allocated, const char* name);

// The value of an SDK result; a failure is refused with `code` (the SDK's failures otherwise go
// through `.value()`, whose enact::Error `guarded` maps by code_of).
template <class T>
T value_or_refuse(enact::result<T> r, int code) {
  if (!r)
    refuse(code, r.err().message);
  return std::move(r).value();
}

// Runs an entry point's body; no exception leaves it.
template <class F>
int guarded(F&& body) noexcept {
  try {
    return body();
  } catch (const refusal& r) {
    return set_error(r.code, r.message);
  } catch (const std::bad_alloc&) {
    return set_error(ENACT_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const enact::Error& e) {
    return set_error(code_of(e.code()), e.what());
  } catch (const std::exception& e) {
    return set_error(ENACT_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(ENACT_ERR_INTERNAL, "internal error: unknown exception");
  }
}

/// A string the caller releases with enact_free.
char* new_string(std::string_view s);

// Copies `s` into a fixed output of `size` bytes (terminator included).
void copy_fixed(std::string_view s, char* out, size_t size);

enact::Secret key_from(const uint8_t* key32);

}  // namespace enact_c
