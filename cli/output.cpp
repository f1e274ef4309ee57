// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace enact::cli {
namespace {

namespace json = boost::json;

bool g_json = false;
bool g_streamed = false;  // an item of a text stream was printed: the next one starts after a blank line

bool is_scalar(const json::value& v) { return !v.is_object() && !v.is_array(); }

/// Appends a scalar; strings unquoted, continuation lines of a multi-line string indented by
/// `indent`. Appends in place, so that a key value is copied into `out` only.
void append_scalar(std::string& out, const json::value& v, size_t indent) {
  switch (v.kind()) {
    case json::kind::null:
      out += '-';
      break;
    case json::kind::string: {
      const std::string_view s = v.get_string();
      size_t start = 0;
      while (true) {
        const size_t nl = s.find('\n', start);
        out.append(s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
        if (nl == std::string_view::npos)
          break;
        out += '\n';
        out.append(indent, ' ');
        start = nl + 1;
      }
      break;
    }
    default:
      out += json::serialize(v);
  }
}

void append_block(std::string& out, const json::value& v, size_t indent, bool first_indented);

/// An object's members, keys padded to the longest; a nested object or a non-empty list goes on
/// the lines under its key.
void append_object(std::string& out, const json::object& o, size_t indent, bool first_indented) {
  if (o.empty()) {
    if (first_indented)
      out.append(indent, ' ');
    out += "(empty)\n";
    return;
  }
  size_t width = 0;
  for (const auto& kv : o)
    width = std::max(width, kv.key().size());
  bool first = true;
  for (const auto& kv : o) {
    if (!first || first_indented)
      out.append(indent, ' ');
    first = false;
    out.append(kv.key());
    out += ':';
    const json::value& v = kv.value();
    const bool nested = (v.is_object() && !v.get_object().empty()) || (v.is_array() && !v.get_array().empty());
    if (nested) {
      out += '\n';
      append_block(out, v, indent + 2, true);
      continue;
    }
    out.append(width - kv.key().size() + 1, ' ');
    if (v.is_object())
      out += "(empty)";
    else if (v.is_array())
      out += "(none)";
    else
      append_scalar(out, v, indent + width + 2);
    out += '\n';
  }
}

/// A list: each item after "- ", its further lines aligned under the first.
void append_array(std::string& out, const json::array& a, size_t indent, bool first_indented) {
  if (a.empty()) {
    if (first_indented)
      out.append(indent, ' ');
    out += "(none)\n";
    return;
  }
  bool first = true;
  for (const json::value& item : a) {
    if (!first || first_indented)
      out.append(indent, ' ');
    first = false;
    out += "- ";
    if (is_scalar(item)) {
      append_scalar(out, item, indent + 2);
      out += '\n';
    } else if (item.is_object() && item.get_object().empty()) {
      out += "(empty)\n";
    } else if (item.is_array() && item.get_array().empty()) {
      out += "(none)\n";
    } else {
      append_block(out, item, indent + 2, false);
    }
  }
}

void append_block(std::string& out, const json::value& v, size_t indent, bool first_indented) {
  if (v.is_object()) {
    append_object(out, v.get_object(), indent, first_indented);
  } else if (v.is_array()) {
    append_array(out, v.get_array(), indent, first_indented);
  } else {
    if (first_indented)
      out.append(indent, ' ');
    append_scalar(out, v, indent);
    out += '\n';
  }
}

/// An upper bound of the text's size apart from indentation: the characters of every key and value.
size_t size_hint(const json::value& v) {
  if (v.is_string())
    return v.get_string().size() + 8;
  size_t n = 24;
  if (v.is_object())
    for (const auto& kv : v.get_object())
      n += kv.key().size() + size_hint(kv.value()) + 8;
  else if (v.is_array())
    for (const auto& item : v.get_array())
      n += size_hint(item) + 8;
  return n;
}

void write_out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

/// The rendering of `v` in the selected form, without the final newline of the JSON form.
std::string rendered(const json::value& v) { return g_json ? json::serialize(v) : render_text(v); }

/// Prints `text` (a rendering) and, for the JSON form, its line end.
void write_rendered(std::string_view text) {
  write_out(text);
  if (g_json)
    write_out("\n");
}

}  // namespace

void set_json_output(bool on) { g_json = on; }

bool json_output() { return g_json; }

std::string render_text(const json::value& v) {
  std::string out;
  // One buffer, sized up front: a key value being printed is not left behind in a buffer that
  // grew past it (emit_with_key wipes this one).
  out.reserve(size_hint(v) * 4 + 256);
  const bool plain_list =
      v.is_array() && !v.get_array().empty() &&
      std::all_of(v.get_array().begin(), v.get_array().end(), [](const json::value& item) { return is_scalar(item); });
  if (!plain_list) {
    append_block(out, v, 0, false);
    return out;
  }
  // A list of scalars (times, decoded values) one per line, for `while read` as much as for eyes.
  for (const json::value& item : v.get_array()) {
    append_scalar(out, item, 0);
    out += '\n';
  }
  return out;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i + 1 < row.size(); ++i) {
      if (width.size() <= i)
        width.resize(i + 1, 0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size())
        out.append(width[i] - row[i].size() + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

void emit(const json::value& v) { write_rendered(rendered(v)); }

void emit_item(const json::value& v) {
  if (!g_json && g_streamed)
    write_out("\n");
  g_streamed = true;
  emit(v);
}

void emit_value(std::string_view name, const json::value& v) {
  if (g_json)
    write_rendered(json::serialize(json::object{{name, v}}));
  else
    write_out(render_text(v));
}

void emit_document(const json::value& v, std::string_view text) {
  if (g_json)
    write_rendered(json::serialize(v));
  else
    write_out(text);
}

void emit_secret_value(std::string_view name, const Secret& key) {
  if (!g_json) {
    write_out(as_chars(key.view()));
    write_out("\n");
    return;
  }
  emit_with_key({}, name, key);
}

void emit_with_key(json::object o, std::string_view field, const Secret& key) {
  o[field] = as_chars(key.view());
  json::value v(std::move(o));
  std::string text = rendered(v);
  write_rendered(text);
  detail::secure_wipe(text.data(), text.size());
  json::string& s = v.get_object().at(field).get_string();
  detail::secure_wipe(s.data(), s.size());
}

}  // namespace enact::cli
