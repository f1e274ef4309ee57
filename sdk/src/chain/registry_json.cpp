// SPDX-License-Identifier: Apache-2.0
// Permission registry bindings, the JSON bridge: calls, results, events and reverts to and from
// the JSON forms described in registry.hpp, through the descriptions of registry_schema.hpp.
#include <optional>

#include "enact/chain/registry.hpp"
#include "registry_schema_json.hpp"

namespace enact::chain::registry {

using namespace detail;

namespace {

/// Finds the alternative of V for which `match` holds and converts `args` to it.
template <class V, size_t... I, class Match>
std::optional<result<V>> variant_from_json(std::index_sequence<I...>, Match match, const json::object& args,
                                           const std::string& what) {
  std::optional<result<V>> out;
  const auto try_one = [&]<class T>(std::type_identity<T>) {
    if (out || !match(std::type_identity<T>{}))
      return;
    auto r = struct_from_json<T>(args, what);
    if (r)
      out.emplace(V(std::move(*r)));
    else
      out.emplace(std::move(r).err());
  };
  (try_one(std::type_identity<std::variant_alternative_t<I, V>>{}), ...);
  return out;
}

template <class S>
bool keys_match(const json::object& args) {
  if (args.size() != field_count<S>())
    return false;
  return all_fields<S>([&](const auto& fl) { return args.contains(fl.name); });
}

}  // namespace

// =============================================================================================
// Calls

boost::json::object to_json(const call& c) {
  return std::visit([](const auto& x) { return struct_to_json(x); }, c);
}

result<call> call_from_json(std::string_view function, const boost::json::object& args) {
  const bool by_signature = function.find('(') != std::string_view::npos;
  const auto named = [&]<class T>(std::type_identity<T>) {
    return by_signature ? T::kSignature == function : name_of(T::kSignature) == function;
  };
  size_t candidates = 0;
  bool exact = false;
  [&]<size_t... I>(std::index_sequence<I...>) {
    const auto count = [&]<class T>(std::type_identity<T>) {
      if (named(std::type_identity<T>{})) {
        ++candidates;
        exact = exact || keys_match<T>(args);
      }
    };
    (count(std::type_identity<std::variant_alternative_t<I, call>>{}), ...);
  }
  (std::make_index_sequence<std::variant_size_v<call>>{});
  if (candidates == 0)
    return fail(abi_errc::bad_value, "function " + std::string(function) + ": not in the registry");
  // An overloaded name picks the overload whose parameters the keys name; with no exact match
  // the first overload reports what is missing or extra.
  const auto match = [&]<class T>(std::type_identity<T> t) {
    return named(t) && (candidates == 1 || !exact || keys_match<T>(args));
  };
  auto r = variant_from_json<call>(std::make_index_sequence<std::variant_size_v<call>>{}, match, args,
                                   std::string(function));
  return std::move(*r);
}

template <call_with_result T>
boost::json::value result_to_json(const typename T::result_type& value) {
  return to_json_value(value);
}

template <call_with_result T>
result<typename T::result_type> result_from_json(const boost::json::value& v) {
  return from_json_value<typename T::result_type>(v, std::string(name_of(T::kSignature)) + " result");
}

// =============================================================================================
// Events

result<encoded_log> encode_log(std::string_view name, const boost::json::object& args) {
  ENACT_TRY(const any_event e, event_from_json(name, args));
  return encode_log(e);
}

boost::json::object to_json(const any_event& e) {
  return std::visit([](const auto& x) { return struct_to_json(x); }, e);
}

result<any_event> event_from_json(std::string_view name, const boost::json::object& args) {
  const auto match = [&]<class T>(std::type_identity<T>) {
    return name_of(T::kSignature) == name;
  };
  auto r = variant_from_json<any_event>(std::make_index_sequence<std::variant_size_v<any_event>>{}, match, args,
                                        std::string(name));
  if (!r)
    return fail(abi_errc::bad_value, "event " + std::string(name) + ": not a registry event");
  return std::move(*r);
}

// =============================================================================================
// Reverts

result<bytes> encode_revert(const registry_error& e) {
  const auto match = [&]<class T>(std::type_identity<T>) {
    return T::kCode == e.code;
  };
  auto r = variant_from_json<any_error>(std::make_index_sequence<std::variant_size_v<any_error>>{}, match, e.args,
                                        e.name.empty() ? "revert" : e.name);
  if (!r)
    return fail(abi_errc::bad_value, "revert: " + make_error_code(e.code).message() + " has no encoding");
  ENACT_TRY(const any_error typed, std::move(*r));
  return encode_revert(typed);
}

// =============================================================================================
// Explicit instantiations: the JSON of each function's return value.

#define ENACT_RESULT_JSON(T)                                            \
  template boost::json::value result_to_json<T>(const T::result_type&); \
  template result<T::result_type> result_from_json<T>(const boost::json::value&);

ENACT_REGISTRY_RESULTS(ENACT_RESULT_JSON)

#undef ENACT_RESULT_JSON

}  // namespace enact::chain::registry
