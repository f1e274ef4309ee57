// SPDX-License-Identifier: Apache-2.0
// What abi.cpp (types, encoding, decoding), abi_signature.cpp (type and signature text) and
// abi_json.cpp (the JSON and command-line bridge) share: error positions and the checks of a type.
#pragma once

#include <string>
#include <string_view>

#include "enact/codec/abi.hpp"

namespace enact::codec::abi::detail {

inline constexpr size_t npos = static_cast<size_t>(-1);

/// A position in error messages: "arg 2[1].0" — argument 2, array element 1, tuple component 0.
/// Frames live on the stack of the recursion and are formatted only when an error is reported.
struct path {
  const path* parent = nullptr;
  std::string_view label;  // root only
  size_t index = npos;     // root: argument index (npos: none); child: element or component
  bool component = false;  // child: tuple component (".i") rather than array element ("[i]")

  [[nodiscard]] std::string str() const {
    if (parent == nullptr)
      return index == npos ? std::string(label) : std::string(label) + " " + std::to_string(index);
    return parent->str() + (component ? "." + std::to_string(index) : "[" + std::to_string(index) + "]");
  }
  [[nodiscard]] path child(size_t i, bool tuple) const { return path{this, {}, i, tuple}; }
};

/// type_mismatch: `v` does not have the shape of `t`.
[[nodiscard]] error mismatch(const type& t, const value& v, const path& p);
/// wrong_length: `got` `what` (elements, bytes, ...) where `t` has `expected`.
[[nodiscard]] error wrong_count(const path& p, const char* what, size_t expected, size_t got);
/// Levels of nesting of a type: 1 for an elementary type.
[[nodiscard]] size_t tree_depth(const type& t);
/// Encoded size of a static type, or npos when it exceeds kMaxStaticSize.
[[nodiscard]] size_t static_size_checked(const type& t);
/// Checks a (possibly hand-built) type: nesting depth, sizes, element and component types.
[[nodiscard]] result<void> check_type(const type& t, size_t depth = 1);

}  // namespace enact::codec::abi::detail
