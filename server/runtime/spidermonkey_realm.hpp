// SPDX-License-Identifier: Apache-2.0
// What the realm's globals (spidermonkey_api.cpp) share with the run loop (spidermonkey.cpp): the
// run in progress and the conversions between JS values and UTF-8 or JSON.
#pragma once

#include <jsapi.h>

#include <string>
#include <string_view>

#include "runtime/sandbox.hpp"

namespace enact::runtime::spidermonkey::detail {

// The run in progress (on the worker's main thread).
struct run_state {
  const sandbox::request* req = nullptr;
  const sandbox::call_parent* parent = nullptr;
  sandbox::outcome out;
  bool output_exceeded = false;
  bool out_of_memory = false;  // the engine reported OOM (GC heap limit, malloc, RLIMIT_AS)
};

/// The run in progress, or null with an error reported when there is none (the run is over).
run_state* current(JSContext* cx);

/// A JS string as UTF-8 (a lone surrogate becomes U+FFFD).
bool utf8_of(JSContext* cx, JS::HandleString str, std::string& out);
/// JSON.stringify; `defined` is false when the value has no JSON form (undefined, a function).
bool stringify(JSContext* cx, JS::HandleValue value, std::string& out, bool& defined);
bool parse_json(JSContext* cx, std::string_view text, JS::MutableHandleValue out);
/// Sets a pending exception of the given kind (TypeError, RangeError, …) and returns false.
bool throw_error(JSContext* cx, JSProtoKey kind, const std::string& message);

/// Defines `Enact` and `console` on a fresh realm's global, frozen.
bool install_globals(JSContext* cx, JS::HandleObject global);

}  // namespace enact::runtime::spidermonkey::detail
