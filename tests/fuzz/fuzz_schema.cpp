// SPDX-License-Identifier: Apache-2.0
// The server's request-body validation (server/core/schema.hpp) against the body schema of every
// POST route of the route table (server/core/route.hpp): the input's first byte selects the
// route, the rest is the body, parsed as mount.cpp parses it. Never crashes; a body is refused
// only as invalid_request (anything else, such as an unresolved $ref, is a defect of the table);
// the decision is the same for the body's compact serialization.
//
// With ENACT_FUZZ_SCHEMA_SEEDS=<dir> set, the target instead writes, for each route, a body with
// every property and one with the required properties only (values drawn from the schema) to
// <dir>/<index>-<operation>-{full,required}, and exits: make_corpus.mjs seeds the corpus this way.
#include <boost/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/route.hpp"
#include "core/schema.hpp"
#include "enact/client/api_error.hpp"
#include "fuzz.hpp"

using namespace enact;
namespace json = boost::json;

namespace {

std::vector<const core::route*> post_routes() {
  std::vector<const core::route*> out;
  for (const auto& r : core::routes())
    if (r.method == "POST" && !r.request.empty())
      out.push_back(&r);
  return out;
}

const std::vector<const core::route*>& table() {
  static const auto t = post_routes();
  return t;
}

/// A value the schema accepts (the first option of an anyOf, the minimum of an integer, ...).
json::value sample(const json::object& s, bool all_properties) {
  if (const auto* r = s.if_contains("$ref")) {
    const std::string_view target = r->as_string();
    const auto& c = core::components().at(target.substr(target.rfind('/') + 1)).as_object();
    return sample(c, all_properties);
  }
  if (const auto* any = s.if_contains("anyOf"))
    return sample(any->as_array().at(0).as_object(), all_properties);
  const auto* t = s.if_contains("type");
  const std::string_view type = t ? std::string_view(t->as_string()) : "null";
  if (type == "object") {
    json::object o;
    const auto* props = s.if_contains("properties");
    const auto* req = s.if_contains("required");
    if (props == nullptr)
      return o;
    for (const auto& [name, schema] : props->as_object()) {
      bool required = false;
      if (req != nullptr)
        for (const auto& n : req->as_array())
          required = required || n.as_string() == name;
      if (all_properties || required)
        o[name] = sample(schema.as_object(), all_properties);
    }
    return o;
  }
  if (type == "string") {
    if (const auto* p = s.if_contains("pattern")) {
      if (p->as_string().find("{40}") != json::string::npos)
        return json::string("0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf");
      if (p->as_string().find("{64}") != json::string::npos)
        return json::string("0x" + std::string(64, 'a'));
    }
    return json::string("1");
  }
  if (type == "integer") {
    const auto* m = s.if_contains("minimum");
    return m ? std::max<int64_t>(m->to_number<int64_t>(), 1) : 1;
  }
  if (type == "boolean")
    return true;
  if (type == "array")
    return json::array{sample(s.at("items").as_object(), all_properties)};
  return nullptr;
}

void write_seeds(const char* dir) {
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < table().size(); ++i) {
    const auto& r = *table()[i];
    for (const bool all : {true, false}) {
      const std::string body = json::serialize(sample(r.request, all));
      std::ofstream out(std::filesystem::path(dir) /
                            (std::to_string(i) + "-" + std::string(r.operation_id) + (all ? "-full" : "-required")),
                        std::ios::binary);
      out.put(static_cast<char>(i));
      out << body;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("ENACT_FUZZ_SCHEMA_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  fuzz::require(!table().empty(), "schema: no POST route in the table");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const core::route& r = *table()[data[0] % table().size()];
  std::error_code ec;
  const json::value body = json::parse(fuzz::text(data + 1, size - 1), ec);
  if (ec)
    return 0;
  const auto verdict = core::schema::validate(body, r.request, core::components());
  if (!verdict)
    fuzz::require(verdict.code() == api_errc::invalid_request,
                  "schema: a body refused with another code than invalid_request");
  // Boost.JSON reads an out-of-range number such as 1e400 as infinity but serializes it as a
  // text it does not read back: such bodies have no compact form to compare.
  const json::value reread = json::parse(json::serialize(body), ec);
  if (ec)
    return 0;
  const auto again = core::schema::validate(reread, r.request, core::components());
  fuzz::require(again.has_value() == verdict.has_value(), "schema: the compact serialization is judged differently");
  return 0;
}
