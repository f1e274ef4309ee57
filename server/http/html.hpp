// SPDX-License-Identifier: Apache-2.0
// HTML escaping for the pages the server writes itself (the approval page, Swagger UI's index):
// text and attribute values with the five characters HTML gives meaning to replaced by their
// character references, so nothing a value holds can end an attribute or open a tag.
#pragma once

#include <string>
#include <string_view>

namespace enact::http {

/// Appends `text` to `out` with &, <, >, " and ' as &amp; &lt; &gt; &quot; &#39;.
inline void append_html_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

/// `text` escaped as append_html_escaped does.
[[nodiscard]] inline std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_html_escaped(out, text);
  return out;
}

}  // namespace enact::http
