// SPDX-License-Identifier: Apache-2.0
// Permission registry bindings, the ABI side: selectors and topics, typed encoders and strict
// decoders of calls, results, events and reverts, the dispatch tables that classify calldata, logs
// and revert data, and deployment. The descriptions of the structs are in registry_schema.hpp;
// the JSON bridge is registry_json.cpp.
#include "enact/chain/registry.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "registry_schema_json.hpp"

namespace enact::chain::registry {

using namespace detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Dispatch tables

uint32_t key_of(const std::array<uint8_t, 4>& s) {
  return (uint32_t{s[0]} << 24) | (uint32_t{s[1]} << 16) | (uint32_t{s[2]} << 8) | s[3];
}

/// A dispatch table of the variant V: one entry an alternative T, `entry(std::type_identity<T>{})`
/// giving its key (selector or topic) and decoder. Two alternatives with one key are a mistake in
/// the bindings, which `clash` describes.
template <class V, class Key, class Decoder, class Entry>
std::map<Key, Decoder> make_table(Entry entry, const char* clash) {
  std::map<Key, Decoder> table;
  const auto add = [&](std::pair<Key, Decoder> e) {
    if (!table.emplace(std::move(e)).second)
      throw std::logic_error(std::string("registry binding: two ") + clash);
  };
  const auto add_each = [&]<size_t... I>(std::index_sequence<I...>) {
    (add(entry(std::type_identity<std::variant_alternative_t<I, V>>{})), ...);
  };
  add_each(std::make_index_sequence<std::variant_size_v<V>>{});
  return table;
}

using call_decoder = result<call> (*)(bytes_view);

template <class T>
result<call> decode_any_call(bytes_view args) {
  ENACT_TRY(T c, decode_fields<T>(args, std::string(name_of(T::kSignature))));
  return call(std::move(c));
}

const std::map<uint32_t, call_decoder>& call_table() {
  static const auto table = make_table<call, uint32_t, call_decoder>(
      []<class T>(std::type_identity<T>) {
        return std::pair{key_of(selector_of<T>()), &decode_any_call<T>};
      },
      "functions share a selector");
  return table;
}

template <class E>
result<E> decode_event_fields(const hash256& topic1, bytes_view data, const std::string& what) {
  const auto& types = field_types<E>();
  ENACT_TRY(auto indexed, codec::abi::decode(std::span(types).first(1), topic1));
  ENACT_TRY(auto rest, codec::abi::decode(std::span(types).subspan(1), data));
  std::vector<codec::abi::value> values;
  values.reserve(types.size());
  values.push_back(std::move(indexed.front()));
  for (auto& v : rest)
    values.push_back(std::move(v));
  return struct_from_abi<E>(values, what);
}

template <class E>
event make_event(E e) {
  event out;
  out.name = std::string(name_of(E::kSignature));
  if constexpr (requires { e.account_hash; })
    out.account_hash = e.account_hash;
  out.args = struct_to_json(e);
  out.value = std::move(e);
  return out;
}

using event_decoder = result<event> (*)(const hash256&, bytes_view);

template <class E>
result<event> decode_any_event(const hash256& topic1, bytes_view data) {
  ENACT_TRY(E e, decode_event_fields<E>(topic1, data, std::string(name_of(E::kSignature))));
  return make_event(std::move(e));
}

const std::map<hash256, event_decoder>& event_table() {
  static const auto table = make_table<any_event, hash256, event_decoder>(
      []<class T>(std::type_identity<T>) {
        return std::pair{topic_of<T>(), &decode_any_event<T>};
      },
      "events share a topic");
  return table;
}

// Solidity documentation, "Panic via assert and Error via require".
std::string_view panic_reason(const u256& code) {
  if (!code.fits_u64())
    return "unknown panic code";
  switch (static_cast<uint64_t>(code)) {
    case 0x00:
      return "generic compiler panic";
    case 0x01:
      return "assertion failed";
    case 0x11:
      return "arithmetic underflow or overflow";
    case 0x12:
      return "division or modulo by zero";
    case 0x21:
      return "invalid enum value";
    case 0x22:
      return "incorrectly encoded storage byte array";
    case 0x31:
      return "pop() on an empty array";
    case 0x32:
      return "array index out of bounds";
    case 0x41:
      return "too much memory allocated";
    case 0x51:
      return "call to a zero-initialized internal function";
    default:
      return "unknown panic code";
  }
}

template <class E>
registry_error make_registry_error(const E& e) {
  registry_error out;
  out.code = E::kCode;
  out.name = std::string(name_of(E::kSignature));
  out.args = struct_to_json(e);
  if constexpr (std::is_same_v<E, error_string_error>) {
    out.message = "reverted: " + e.message;
  } else if constexpr (std::is_same_v<E, panic_error>) {
    out.message = "Panic(" + e.code.to_hex() + "): " + std::string(panic_reason(e.code));
  } else {
    out.message = out.name + "(";
    bool first = true;
    for (const auto& kv : out.args) {
      if (!first)
        out.message += ", ";
      first = false;
      out.message += std::string(kv.key()) + "=";
      out.message += kv.value().is_string() ? std::string(kv.value().get_string()) : json::serialize(kv.value());
    }
    out.message += ")";
  }
  return out;
}

using error_decoder = registry_error (*)(bytes_view);

template <class E>
registry_error decode_any_error(bytes_view args) {
  auto e = decode_fields<E>(args, std::string(name_of(E::kSignature)));
  if (!e) {
    registry_error out;
    out.args = {{"data", codec::hex::encode_prefixed(selector_of<E>()) + codec::hex::encode(args)}};
    out.message = "revert data: " + std::string(E::kSignature) + " with malformed arguments (" + e.err().message + ")";
    return out;
  }
  return make_registry_error(*e);
}

const std::map<uint32_t, error_decoder>& error_table() {
  static const auto table = make_table<any_error, uint32_t, error_decoder>(
      []<class T>(std::type_identity<T>) {
        return std::pair{key_of(selector_of<T>()), &decode_any_error<T>};
      },
      "errors share a selector");
  return table;
}

/// selector ‖ the ABI encoding of S's fields: the calldata of a call, the data of a revert. The
/// values are built from S's fields, whose types field_types derives: encoding cannot fail.
template <class S>
bytes encode_with_selector(const S& s) {
  const auto& sel = selector_of<S>();
  const bytes args = codec::abi::encode(field_types<S>(), field_values(s)).value();
  bytes out(sel.begin(), sel.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

}  // namespace

// =============================================================================================
// Calls

template <call_type T>
const std::array<uint8_t, 4>& selector() {
  return selector_of<T>();
}

template <call_type T>
bytes encode(const T& c) {
  return encode_with_selector(c);
}

bytes encode(const call& c) {
  return std::visit([](const auto& x) { return encode(x); }, c);
}

template <call_type T>
result<T> decode(bytes_view calldata) {
  if (calldata.size() < 4)
    return fail(abi_errc::truncated, "call data: " + std::to_string(calldata.size()) + " bytes, no 4-byte selector");
  const auto& sel = selector_of<T>();
  if (!std::equal(sel.begin(), sel.end(), calldata.begin()))
    return fail(abi_errc::selector_mismatch, "call data: selector 0x" + codec::hex::encode(calldata.first(4)) +
                                                 " is not " + std::string(T::kSignature));
  return decode_fields<T>(calldata.subspan(4), std::string(name_of(T::kSignature)));
}

result<call> decode_call(bytes_view calldata) {
  if (calldata.size() < 4)
    return fail(abi_errc::truncated, "call data: " + std::to_string(calldata.size()) + " bytes, no 4-byte selector");
  const std::array<uint8_t, 4> sel{calldata[0], calldata[1], calldata[2], calldata[3]};
  const auto& table = call_table();
  const auto it = table.find(key_of(sel));
  if (it == table.end())
    return fail(abi_errc::selector_mismatch,
                "call data: selector 0x" + codec::hex::encode(sel) + " is no registry function");
  return it->second(calldata.subspan(4));
}

std::string_view function_name(const call& c) {
  return std::visit([](const auto& x) { return name_of(std::decay_t<decltype(x)>::kSignature); }, c);
}

std::string_view signature(const call& c) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kSignature; }, c);
}

template <call_with_result T>
bytes encode_result(const typename T::result_type& value) {
  using R = typename T::result_type;
  return codec::abi::encode(result_types<R>(), result_values<R>(value)).value();
}

template <call_with_result T>
result<typename T::result_type> decode_result(bytes_view return_data) {
  using R = typename T::result_type;
  check_signature<T>();
  ENACT_TRY(const auto values, codec::abi::decode(result_types<R>(), return_data));
  return result_from_values<R>(values, std::string(name_of(T::kSignature)) + " result");
}

// =============================================================================================
// Events

template <event_type T>
const hash256& topic0() {
  return topic_of<T>();
}

template <event_type T>
encoded_log encode_log(const T& e) {
  const auto& types = field_types<T>();
  const auto values = field_values(e);
  encoded_log out;
  out.topics.push_back(topic_of<T>());
  const bytes word = codec::abi::encode(std::span(types).first(1), std::span(values).first(1)).value();
  hash256 topic{};
  std::copy(word.begin(), word.end(), topic.begin());
  out.topics.push_back(topic);
  out.data = codec::abi::encode(std::span(types).subspan(1), std::span(values).subspan(1)).value();
  return out;
}

encoded_log encode_log(const any_event& e) {
  return std::visit([](const auto& x) { return encode_log(x); }, e);
}

result<event> decode_log(std::span<const hash256> topics, bytes_view data) {
  if (topics.empty())
    return fail(abi_errc::wrong_length, "log: no topics (an anonymous event is no registry event)");
  const auto& table = event_table();
  const auto it = table.find(topics[0]);
  if (it == table.end())
    return fail(abi_errc::selector_mismatch,
                "log: topic0 " + codec::hex::encode_prefixed(topics[0]) + " is no registry event");
  if (topics.size() != 2)
    return fail(abi_errc::wrong_length, "log: " + std::to_string(topics.size()) + " topics, registry events have 2");
  return it->second(topics[1], data);
}

std::string_view event_name(const any_event& e) {
  return std::visit([](const auto& x) { return name_of(std::decay_t<decltype(x)>::kSignature); }, e);
}

// =============================================================================================
// Reverts

template <error_type T>
const std::array<uint8_t, 4>& selector() {
  return selector_of<T>();
}

template <error_type T>
bytes encode_revert(const T& e) {
  return encode_with_selector(e);
}

bytes encode_revert(const any_error& e) {
  return std::visit([](const auto& x) { return encode_revert(x); }, e);
}

registry_error decode_revert(bytes_view revert_data) {
  if (revert_data.size() < 4) {
    registry_error out;
    out.args = {{"data", codec::hex::encode_prefixed(revert_data)}};
    out.message = revert_data.empty() ? "reverted without data"
                                      : "revert data of " + std::to_string(revert_data.size()) + " bytes (" +
                                            codec::hex::encode_prefixed(revert_data) + "), shorter than a selector";
    return out;
  }
  const std::array<uint8_t, 4> sel{revert_data[0], revert_data[1], revert_data[2], revert_data[3]};
  const auto& table = error_table();
  const auto it = table.find(key_of(sel));
  if (it == table.end()) {
    registry_error out;
    out.args = {{"data", codec::hex::encode_prefixed(revert_data)}};
    out.message = "revert data with unknown selector 0x" + codec::hex::encode(sel);
    return out;
  }
  return it->second(revert_data.subspan(4));
}

// =============================================================================================
// Explicit instantiations: one typed encoder and decoder per function, event and error, from the
// generated tables (enact/chain/registry_abi.hpp).

#define ENACT_CALL(T, ...)                              \
  template const std::array<uint8_t, 4>& selector<T>(); \
  template bytes encode<T>(const T&);                   \
  template result<T> decode<T>(bytes_view);
#define ENACT_RESULT(T)                                   \
  template bytes encode_result<T>(const T::result_type&); \
  template result<T::result_type> decode_result<T>(bytes_view);
#define ENACT_EVENT(T, ...)            \
  template const hash256& topic0<T>(); \
  template encoded_log encode_log<T>(const T&);
#define ENACT_ERROR(T, ...)                             \
  template const std::array<uint8_t, 4>& selector<T>(); \
  template bytes encode_revert<T>(const T&);

ENACT_REGISTRY_CALLS(ENACT_CALL)
ENACT_REGISTRY_RESULTS(ENACT_RESULT)
ENACT_REGISTRY_EVENTS(ENACT_EVENT)
ENACT_REGISTRY_ERRORS(ENACT_ERROR)
ENACT_ERROR(error_string_error)
ENACT_ERROR(panic_error)

// =============================================================================================
// Deployment (creation_code and runtime_code are generated: registry_artifact.cpp.in)

bytes deployment_data(std::span<const address> api_payers) {
  std::vector<codec::abi::value> payers;
  payers.reserve(api_payers.size());
  for (const address& a : api_payers)
    payers.push_back(codec::abi::value::addr(a));
  static const std::array<codec::abi::type, 1> kConstructorTypes = {codec::abi::type::of("address[]")};
  const std::array<codec::abi::value, 1> args = {codec::abi::value::list(std::move(payers))};
  // An address list always fits its type: encoding cannot fail.
  const bytes encoded = codec::abi::encode(kConstructorTypes, args).value();
  bytes out = creation_code();
  out.insert(out.end(), encoded.begin(), encoded.end());
  return out;
}

#undef ENACT_CALL
#undef ENACT_RESULT
#undef ENACT_EVENT
#undef ENACT_ERROR

}  // namespace enact::chain::registry
