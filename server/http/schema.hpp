// SPDX-License-Identifier: Apache-2.0
// A small JSON Schema subset (the part OpenAPI 3.1 request bodies here use): builders for the
// route table, and a validator that checks a request body against the same schema the OpenAPI
// document publishes, so the document and the server cannot disagree. Supported keywords: type
// (object, string, integer, boolean, array, null), properties, required, additionalProperties
// (false only), items, minimum, maximum, minLength, maxLength, maxItems, pattern-free formats as
// documentation, anyOf, $ref (documentation only; the validator is given the resolved schema).
#pragma once

#include <boost/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "enact/result.hpp"

namespace enact::http::schema {

namespace json = boost::json;

json::object string(std::string_view description = {}, size_t max_length = 4096);
/// A non-empty name of at most 256 bytes.
json::object name(std::string_view description = {});
json::object string_format(std::string_view format, std::string_view description = {});
json::object integer(std::string_view description = {}, int64_t minimum = 0);
json::object boolean(std::string_view description = {});
json::object array(json::object items, std::string_view description = {}, size_t max_items = 1000);
json::object ref(std::string_view component);
json::object any_of(std::initializer_list<json::object> options, std::string_view description = {});

/// Address and hash conventions of docs/protocol.md §0.
json::object address(std::string_view description = {});
json::object hash(std::string_view description = {});

struct property {
  std::string_view name;
  json::object schema;
  bool required = false;
};
/// A closed object: unknown properties are refused.
json::object object(std::initializer_list<property> props, std::string_view description = {});

/// The error body of docs/protocol.md §0: {"error": {"code", "message", "details"?}} (the
/// documents' Error component).
json::object error_body();

/// Validates `v` against `s`; components resolves $ref. The error names the offending path
/// ("body.execute_in_groups[2]: expected integer >= 0").
[[nodiscard]] result<void> validate(const json::value& v, const json::object& s, const json::object& components,
                                    const std::string& path = "body");

}  // namespace enact::http::schema
