// SPDX-License-Identifier: Apache-2.0
// The permission registry's decoders (chain/registry.hpp). The input's first byte selects what the
// rest is (its value modulo 4):
//   0  calldata            decode_call
//   1  a log               one byte n (topic count, modulo 4), n 32-byte topics, then the data
//   2  revert data         decode_revert
//   3  return data         a 4-byte function selector, then the data for decode_result
// Never crashes; whatever decodes re-encodes to something that decodes to the same value, and the
// JSON forms convert back to the same value.
#include <functional>
#include <map>
#include <utility>

#include "enact/chain/registry.hpp"
#include "fuzz.hpp"

using namespace enact;
namespace reg = enact::chain::registry;

namespace {

void fuzz_call(bytes_view in) {
  const auto c = reg::decode_call(in);
  if (!c) {
    fuzz::require(c.code().category() == make_error_code(abi_errc::bad_type).category(),
                  "registry: decode_call error outside abi_errc");
    return;
  }
  const auto again = reg::decode_call(reg::encode(*c));
  fuzz::require(again && *again == *c, "registry: decode_call(encode(c)) != c");
  const auto from_json = reg::call_from_json(reg::signature(*c), reg::to_json(*c));
  fuzz::require(from_json && *from_json == *c, "registry: call_from_json(to_json(c)) != c");
  const auto by_name = reg::call_from_json(reg::function_name(*c), reg::to_json(*c));
  fuzz::require(by_name && *by_name == *c, "registry: call_from_json by name != c");
}

void fuzz_log(bytes_view in) {
  if (in.empty())
    return;
  const size_t n = in[0] % 4;
  in = in.subspan(1);
  if (in.size() < 32 * n)
    return;
  std::vector<hash256> topics(n);
  for (size_t i = 0; i < n; ++i)
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(32 * i), 32, topics[i].begin());
  const auto ev = reg::decode_log(topics, in.subspan(32 * n));
  if (!ev) {
    fuzz::require(ev.code().category() == make_error_code(abi_errc::bad_type).category(),
                  "registry: decode_log error outside abi_errc");
    return;
  }
  fuzz::require(ev->name == reg::event_name(ev->value), "registry: event name");
  fuzz::require(ev->args == reg::to_json(ev->value), "registry: event args differ from to_json");
  const reg::encoded_log log = reg::encode_log(ev->value);
  const auto again = reg::decode_log(log.topics, log.data);
  fuzz::require(
      again && again->value == ev->value && again->args == ev->args && again->account_hash == ev->account_hash,
      "registry: decode_log(encode_log(e)) != e");
  const auto from_json = reg::event_from_json(ev->name, ev->args);
  fuzz::require(from_json && *from_json == ev->value, "registry: event_from_json(args) != e");
  const auto by_name = reg::encode_log(ev->name, ev->args);
  fuzz::require(by_name && *by_name == log, "registry: encode_log(name, args) differs");
}

void fuzz_revert(bytes_view in) {
  const reg::registry_error e = reg::decode_revert(in);
  fuzz::require(e.code != registry_errc{} && !e.message.empty(), "registry: empty classification");
  if (e.code == registry_errc::unknown_error) {
    fuzz::require(!reg::encode_revert(e), "registry: encode_revert of unknown_error");
    return;
  }
  const auto data = reg::encode_revert(e);
  fuzz::require(data.has_value(), "registry: a decoded revert does not encode");
  const reg::registry_error again = reg::decode_revert(*data);
  fuzz::require(again.code == e.code && again.name == e.name && again.args == e.args && again.message == e.message,
                "registry: decode_revert(encode_revert(e)) != e");
}

// decode_result of every function with a result, by selector.
using result_fuzzer = std::function<void(bytes_view)>;

template <class T>
void fuzz_result(bytes_view in) {
  const auto v = reg::decode_result<T>(in);
  if (!v)
    return;
  const auto again = reg::decode_result<T>(reg::encode_result<T>(*v));
  fuzz::require(again && *again == *v, "registry: decode_result(encode_result(v)) != v");
  const auto from_json = reg::result_from_json<T>(reg::result_to_json<T>(*v));
  fuzz::require(from_json && *from_json == *v, "registry: result_from_json(result_to_json(v)) != v");
}

const std::map<std::array<uint8_t, 4>, result_fuzzer>& result_table() {
  static const auto table = [] {
    std::map<std::array<uint8_t, 4>, result_fuzzer> t;
    [&]<size_t... I>(std::index_sequence<I...>) {
      const auto add = [&]<class T>(std::type_identity<T>) {
        if constexpr (reg::call_with_result<T>)
          t.emplace(reg::selector<T>(), &fuzz_result<T>);
      };
      (add(std::type_identity<std::variant_alternative_t<I, reg::call>>{}), ...);
    }
    (std::make_index_sequence<std::variant_size_v<reg::call>>{});
    return t;
  }();
  return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  const bytes_view in = fuzz::view(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      fuzz_call(in);
      break;
    case 1:
      fuzz_log(in);
      break;
    case 2:
      fuzz_revert(in);
      break;
    default: {
      if (in.size() < 4)
        break;
      const std::array<uint8_t, 4> sel{in[0], in[1], in[2], in[3]};
      const auto& table = result_table();
      if (const auto it = table.find(sel); it != table.end())
        it->second(in.subspan(4));
      break;
    }
  }
  return 0;
}
