// SPDX-License-Identifier: Apache-2.0
// The one output renderer of the `enact` CLI. Every command hands its result to it as a JSON
// value; it prints readable text by default, or with `--json` (taken off the command line by main
// for every command) one JSON document on stdout: one line per object, one line per item for a
// stream such as `triggers runs --follow`. Errors are not its business: they stay one line on
// stderr, in both forms.
//
// Text form: a scalar alone on its line; a list of scalars one per line; an object as aligned `key: value` lines,
// nested objects and lists indented under their key; a list as `- ` blocks, one per item; an empty list `(none)`, null
// `-`.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "enact/secret.hpp"

namespace enact::cli {

/// Selects the JSON form for this process (main, from --json).
void set_json_output(bool on);
/// Whether --json was given.
[[nodiscard]] bool json_output();

/// The text form of `v` (ends with a newline).
[[nodiscard]] std::string render_text(const boost::json::value& v);

/// A table's rows as text: every column but the last padded to its widest cell, columns two spaces
/// apart; each row ends with a newline.
[[nodiscard]] std::string render_table(const std::vector<std::vector<std::string>>& rows);

/// Prints the result `v` of a command in the selected form.
void emit(const boost::json::value& v);
/// Prints one item of a stream: a JSON line each, or text blocks separated by a blank line.
void emit_item(const boost::json::value& v);
/// A result that is one value (an address, a digest): the value alone as text, so that
/// `$(enact key address …)` keeps working; `{"<name>": value}` with --json.
void emit_value(std::string_view name, const boost::json::value& v);
inline void emit_value(std::string_view name, std::string_view text) { emit_value(name, boost::json::value(text)); }
/// A result whose text form is a document printed byte for byte (an action's code, so that
/// `enact core actions code CID > action.js` gives back the uploaded file); `v` with --json.
void emit_document(const boost::json::value& v, std::string_view text);
/// A result that is one secret value (a new private key), printed once as emit_value does; every
/// copy made for printing is wiped.
void emit_secret_value(std::string_view name, const Secret& key);
/// Prints `o` with `field` set to a key value the service issued, once (printing it is what was
/// asked for), then wipes every copy made for printing. The key is never logged.
void emit_with_key(boost::json::object o, std::string_view field, const Secret& key);

}  // namespace enact::cli
