// SPDX-License-Identifier: Apache-2.0
#include "http/schema.hpp"

#include "http/errors.hpp"

namespace enact::http::schema {
namespace {

json::object with_description(json::object o, std::string_view description) {
  if (!description.empty())
    o["description"] = description;
  return o;
}

std::string_view type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object:
      return "object";
    case json::kind::array:
      return "array";
    case json::kind::string:
      return "string";
    case json::kind::bool_:
      return "boolean";
    case json::kind::null:
      return "null";
    case json::kind::double_:
      return "number";
    default:
      return "integer";
  }
}

error bad(const std::string& path, const std::string& what) {
  return fail(api_errc::invalid_request, path + ": " + what);
}

}  // namespace

json::object string(std::string_view description, size_t max_length) {
  return with_description({{"type", "string"}, {"maxLength", max_length}}, description);
}
json::object name(std::string_view description) {
  return with_description({{"type", "string"}, {"minLength", 1}, {"maxLength", 256}}, description);
}
json::object string_format(std::string_view format, std::string_view description) {
  return with_description({{"type", "string"}, {"format", format}}, description);
}
json::object integer(std::string_view description, int64_t minimum) {
  return with_description({{"type", "integer"}, {"minimum", minimum}}, description);
}
json::object boolean(std::string_view description) { return with_description({{"type", "boolean"}}, description); }
json::object array(json::object items, std::string_view description, size_t max_items) {
  return with_description({{"type", "array"}, {"items", std::move(items)}, {"maxItems", max_items}}, description);
}
json::object ref(std::string_view component) { return {{"$ref", "#/components/schemas/" + std::string(component)}}; }
json::object any_of(std::initializer_list<json::object> options, std::string_view description) {
  json::array a;
  for (const auto& o : options)
    a.push_back(o);
  return with_description({{"anyOf", std::move(a)}}, description);
}
json::object address(std::string_view description) {
  return with_description({{"type", "string"},
                           {"pattern", "^0x[0-9a-fA-F]{40}$"},
                           {"examples", json::array{"0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"}}},
                          description);
}
json::object hash(std::string_view description) {
  return with_description({{"type", "string"}, {"pattern", "^0x[0-9a-fA-F]{64}$"}}, description);
}

json::object object(std::initializer_list<property> props, std::string_view description) {
  json::object properties;
  json::array required;
  for (const auto& p : props) {
    properties[p.name] = p.schema;
    if (p.required)
      required.push_back(json::string(p.name));
  }
  json::object o{{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty())
    o["required"] = std::move(required);
  return with_description(std::move(o), description);
}

json::object error_body() {
  return object({{"error",
                  object({{"code", string("invalid_request, unauthenticated, forbidden, …"), true},
                          {"message", string(), true},
                          {"details", json::object{{"type", "object"}}}}),
                  true}});
}

result<void> validate(const json::value& v, const json::object& s, const json::object& components,
                      const std::string& path) {
  if (const auto* r = s.if_contains("$ref")) {
    const std::string_view target = r->as_string();
    const std::string_view name = target.substr(target.rfind('/') + 1);
    const auto* c = components.if_contains(name);
    if (c == nullptr || !c->is_object())
      return fail(api_errc::internal, "schema: unresolved " + std::string(target));
    return validate(v, c->get_object(), components, path);
  }
  if (const auto* any = s.if_contains("anyOf")) {
    std::string last;
    for (const auto& option : any->as_array()) {
      auto r = validate(v, option.as_object(), components, path);
      if (r)
        return {};
      last = r.err().message;
    }
    return bad(path, "no accepted form matches (" + last + ")");
  }
  const auto* t = s.if_contains("type");
  if (t == nullptr)
    return {};
  const std::string_view type = t->as_string();
  if (type == "object") {
    const auto* o = v.if_object();
    if (o == nullptr)
      return bad(path, "expected object, got " + std::string(type_name(v)));
    const auto* props = s.if_contains("properties");
    if (const auto* req = s.if_contains("required"))
      for (const auto& name : req->as_array())
        if (!o->contains(name.as_string()))
          return bad(path + "." + std::string(name.as_string()), "required");
    for (const auto& kv : *o) {
      const std::string child = path + "." + std::string(kv.key());
      const json::value* ps = props ? props->as_object().if_contains(kv.key()) : nullptr;
      if (ps == nullptr) {
        const auto* ap = s.if_contains("additionalProperties");
        if (ap != nullptr && ap->is_bool() && !ap->as_bool())
          return bad(child, "unknown field");
        continue;
      }
      ENACT_TRY_VOID(validate(kv.value(), ps->as_object(), components, child));
    }
    return {};
  }
  if (type == "string") {
    if (!v.is_string())
      return bad(path, "expected string, got " + std::string(type_name(v)));
    if (const auto* m = s.if_contains("maxLength"); m && v.get_string().size() > m->to_number<uint64_t>())
      return bad(path, "longer than " + std::to_string(m->to_number<uint64_t>()) + " bytes");
    if (const auto* m = s.if_contains("minLength"); m && v.get_string().size() < m->to_number<uint64_t>())
      return bad(path, m->to_number<uint64_t>() == 1 ? std::string("must not be empty")
                                                     : "shorter than " + std::to_string(m->to_number<uint64_t>()));
    return {};
  }
  if (type == "integer") {
    if (!v.is_int64() && !v.is_uint64())
      return bad(path, "expected integer, got " + std::string(type_name(v)));
    if (const auto* m = s.if_contains("minimum")) {
      const int64_t min = m->to_number<int64_t>();
      if (v.is_int64() && v.get_int64() < min)
        return bad(path, "expected integer >= " + std::to_string(min));
    }
    if (const auto* m = s.if_contains("maximum")) {
      const uint64_t max = m->to_number<uint64_t>();
      if ((v.is_uint64() && v.get_uint64() > max) ||
          (v.is_int64() && v.get_int64() >= 0 && static_cast<uint64_t>(v.get_int64()) > max))
        return bad(path, "expected integer <= " + std::to_string(max));
    }
    return {};
  }
  if (type == "boolean") {
    if (!v.is_bool())
      return bad(path, "expected boolean, got " + std::string(type_name(v)));
    return {};
  }
  if (type == "array") {
    const auto* a = v.if_array();
    if (a == nullptr)
      return bad(path, "expected array, got " + std::string(type_name(v)));
    if (const auto* m = s.if_contains("maxItems"); m && a->size() > m->to_number<uint64_t>())
      return bad(path, "more than " + std::to_string(m->to_number<uint64_t>()) + " items");
    const auto& items = s.at("items").as_object();
    for (size_t i = 0; i < a->size(); ++i)
      ENACT_TRY_VOID(validate((*a)[i], items, components, path + "[" + std::to_string(i) + "]"));
    return {};
  }
  if (type == "null") {
    if (!v.is_null())
      return bad(path, "expected null");
    return {};
  }
  return {};
}

}  // namespace enact::http::schema
