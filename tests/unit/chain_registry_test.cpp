// SPDX-License-Identifier: Apache-2.0
// Permission registry bindings (enact/chain/registry.hpp) against tests/vectors/registry.json:
// calldata, return data, logs and revert data computed by ethers 6 (Interface.encodeFunctionData,
// encodeFunctionResult, encodeEventLog, encodeErrorResult) from a human-readable ABI that
// generate.mjs checks against contracts/IPermissionRegistry.sol (see
// tests/vectors/generate.mjs, section 10). Each vector is checked both ways: our encoding of the
// arguments equals the ethers bytes, and our decoding of the ethers bytes equals the arguments.
// Then malformed inputs, each with its error code, and the JSON forms of the embedded ledger.
#include "support.hpp"

#include <boost/json.hpp>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/chain/registry.hpp"
#include "enact/codec/abi.hpp"
#include "enact/codec/hex.hpp"
#include "enact/u256.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/scopes/scopes.hpp"

namespace json = boost::json;
using namespace enact;
namespace reg = enact::chain::registry;

namespace {

const json::object& doc() {
  static const json::value d = json::parse(test::read_file(test::source_path("tests/vectors/registry.json")));
  return d.as_object();
}
const json::array& section(std::string_view name) { return doc().at(name).as_array(); }

std::string str(const json::value& v) { return std::string(v.as_string()); }
bytes hex_of(const json::value& v) { return codec::hex::decode_prefixed(v.as_string()).value(); }
bytes h(std::string_view s) { return codec::hex::decode(s).value(); }
std::string name_of(std::string_view signature) { return std::string(signature.substr(0, signature.find('('))); }

/// JSON equality where an integer and its decimal string are the same value (the vectors write
/// integers above 2^53 - 1 as strings; the bindings write integers up to 2^64 - 1 as numbers).
bool same(const json::value& a, const json::value& b) {
  const auto as_decimal = [](const json::value& v) -> std::optional<std::string> {
    if (v.is_uint64())
      return std::to_string(v.get_uint64());
    if (v.is_int64())
      return std::to_string(v.get_int64());
    if (v.is_string()) {
      const std::string_view s = v.get_string();
      if (!s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos)
        return std::string(s);
    }
    return std::nullopt;
  };
  if (a.is_number() || b.is_number()) {
    const auto x = as_decimal(a), y = as_decimal(b);
    return x && y && *x == *y;
  }
  if (a.kind() != b.kind())
    return false;
  if (a.is_array()) {
    const auto &x = a.get_array(), &y = b.get_array();
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same(x[i], y[i]))
        return false;
    return true;
  }
  if (a.is_object()) {
    const auto &x = a.get_object(), &y = b.get_object();
    if (x.size() != y.size())
      return false;
    for (const auto& kv : x) {
      const json::value* other = y.if_contains(kv.key());
      if (other == nullptr || !same(kv.value(), *other))
        return false;
    }
    return true;
  }
  return a == b;
}

template <class F, class... T>
void for_each_alternative(F&& f, std::variant<T...>*) {
  (f(std::type_identity<T>{}), ...);
}
template <class V, class F>
void for_each_type(F&& f) {
  for_each_alternative(std::forward<F>(f), static_cast<V*>(nullptr));
}

template <size_t N>
bytes to_bytes(const std::array<uint8_t, N>& a) {
  return bytes(a.begin(), a.end());
}

/// `data` with the 32-byte word at byte offset `at` replaced by `word`.
bytes with_word(bytes data, size_t at, const u256& word) {
  REQUIRE(at + 32 <= data.size());
  word.store_be(data.data() + at);
  return data;
}

const json::object* find_vector(std::string_view sec, std::string_view signature) {
  for (const auto& v : section(sec))
    if (v.as_object().at("signature").as_string() == signature)
      return &v.as_object();
  return nullptr;
}

}  // namespace

TEST_CASE("registry.json calls: encode equals ethers, decode of ethers bytes equals the args") {
  const auto& calls = section("calls");
  REQUIRE(calls.size() >= 100);
  std::set<std::string> seen;
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& v = calls[i].as_object();
    INFO("registry.json calls[" << i << "] " << str(v.at("name")));
    const std::string signature = str(v.at("signature"));
    const bytes calldata = hex_of(v.at("calldata"));
    seen.insert(signature);

    auto c = reg::call_from_json(signature, v.at("args").as_object());
    REQUIRE_MESSAGE(c, (c ? "" : c.err().message));
    CHECK(reg::signature(*c) == signature);
    CHECK(reg::function_name(*c) == name_of(signature));
    CHECK(reg::encode(*c) == calldata);
    CHECK(bytes(calldata.begin(), calldata.begin() + 4) == hex_of(v.at("selector")));

    auto d = reg::decode_call(calldata);
    REQUIRE_MESSAGE(d, (d ? "" : d.err().message));
    CHECK(*d == *c);
    CHECK(same(reg::to_json(*d), v.at("args")));

    // Resolved by name alone (the overloads of setUsageApiKey by their keys).
    auto by_name = reg::call_from_json(name_of(signature), v.at("args").as_object());
    REQUIRE(by_name);
    CHECK(*by_name == *c);
  }
  // Every function of the interface, both setUsageApiKey overloads included.
  CHECK(seen.size() == std::variant_size_v<reg::call>);
}

TEST_CASE("registry.json calls: the typed encoder and decoder of every function") {
  for_each_type<reg::call>([&]<class T>(std::type_identity<T>) {
    INFO(T::kSignature);
    const json::object* v = find_vector("calls", T::kSignature);
    REQUIRE(v != nullptr);
    const bytes calldata = hex_of(v->at("calldata"));
    CHECK(to_bytes(reg::selector<T>()) == hex_of(v->at("selector")));
    CHECK(reg::selector<T>() == codec::abi::selector(T::kSignature));
    auto typed = reg::decode<T>(calldata);
    REQUIRE_MESSAGE(typed, (typed ? "" : typed.err().message));
    CHECK(reg::encode(*typed) == calldata);
    auto via_json = reg::call_from_json(T::kSignature, v->at("args").as_object());
    REQUIRE(via_json);
    CHECK(std::get<T>(*via_json) == *typed);
  });
}

TEST_CASE("registry.json results: return data both ways") {
  const auto& results = section("results");
  std::set<std::string> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& v = results[i].as_object();
    INFO("registry.json results[" << i << "] " << str(v.at("name")));
    const std::string signature = str(v.at("signature"));
    const bytes data = hex_of(v.at("data"));
    bool matched = false;
    for_each_type<reg::call>([&]<class T>(std::type_identity<T>) {
      if constexpr (reg::call_with_result<T>) {
        if (T::kSignature != signature)
          return;
        matched = true;
        auto r = reg::result_from_json<T>(v.at("result"));
        REQUIRE_MESSAGE(r, (r ? "" : r.err().message));
        CHECK(reg::encode_result<T>(*r) == data);
        auto d = reg::decode_result<T>(data);
        REQUIRE_MESSAGE(d, (d ? "" : d.err().message));
        CHECK(*d == *r);
        CHECK(same(reg::result_to_json<T>(*d), v.at("result")));
      }
    });
    CHECK(matched);
    seen.insert(signature);
  }
  size_t with_result = 0;
  for_each_type<reg::call>([&]<class T>(std::type_identity<T>) {
    if constexpr (reg::call_with_result<T>)
      ++with_result;
  });
  CHECK(seen.size() == with_result);
}

TEST_CASE("registry.json events: logs both ways") {
  const auto& events = section("events");
  std::set<std::string> seen;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& v = events[i].as_object();
    INFO("registry.json events[" << i << "] " << str(v.at("name")));
    const std::string signature = str(v.at("signature"));
    const std::string name = name_of(signature);
    std::vector<hash256> topics;
    for (const auto& t : v.at("topics").as_array())
      topics.push_back(codec::hex::decode_fixed<32>(t.as_string()).value());
    const bytes data = hex_of(v.at("data"));
    REQUIRE(topics.size() == 2);
    CHECK(topics[0] == crypto::keccak256(std::string_view(signature)));
    seen.insert(signature);

    auto encoded = reg::encode_log(name, v.at("args").as_object());
    REQUIRE_MESSAGE(encoded, (encoded ? "" : encoded.err().message));
    CHECK(encoded->topics == topics);
    CHECK(encoded->data == data);

    auto e = reg::decode_log(topics, data);
    REQUIRE_MESSAGE(e, (e ? "" : e.err().message));
    CHECK(e->name == name);
    CHECK(reg::event_name(e->value) == name);
    CHECK(same(e->args, v.at("args")));
    CHECK(reg::encode_log(e->value) == *encoded);
    if (name == "ApiPayerSet") {
      CHECK(!e->account_hash);
    } else {
      REQUIRE(e->account_hash);
      CHECK(*e->account_hash == topics[1]);
    }
    auto typed = reg::event_from_json(name, v.at("args").as_object());
    REQUIRE(typed);
    CHECK(*typed == e->value);
  }
  CHECK(seen.size() == std::variant_size_v<reg::any_event>);
  for_each_type<reg::any_event>([&]<class T>(std::type_identity<T>) {
    INFO(T::kSignature);
    const json::object* v = find_vector("events", T::kSignature);
    REQUIRE(v != nullptr);
    CHECK(to_bytes(reg::topic0<T>()) == hex_of(v->at("topic0")));
  });
}

TEST_CASE("registry.json errors: revert data both ways") {
  const std::map<std::string, registry_errc> codes = {
      {"NotAdmin", registry_errc::not_admin},
      {"RelayNotAllowed", registry_errc::relay_not_allowed},
      {"AlreadyUnmanaged", registry_errc::already_unmanaged},
      {"UnknownAccount", registry_errc::unknown_account},
      {"UnknownUsageKey", registry_errc::unknown_usage_key},
      {"UnknownGroup", registry_errc::unknown_group},
      {"UnknownWallet", registry_errc::unknown_wallet},
      {"UnknownAction", registry_errc::unknown_action},
      {"Duplicate", registry_errc::duplicate},
      {"InvalidArgument", registry_errc::invalid_argument},
      {"NotOwner", registry_errc::not_owner},
      {"AccountHashNotCanonical", registry_errc::account_hash_not_canonical},
      {"ManagedNotAllowed", registry_errc::managed_not_allowed},
      {"HashIsUsageKey", registry_errc::hash_is_usage_key},
      {"HashIsAccount", registry_errc::hash_is_account},
      {"UsageKeyOfAnotherAccount", registry_errc::usage_key_of_another_account},
      {"NewAdminNotSender", registry_errc::new_admin_not_sender},
      {"Error", registry_errc::error_string},
      {"Panic", registry_errc::panic},
  };
  const auto& errors = section("errors");
  std::set<std::string> seen;
  for (size_t i = 0; i < errors.size(); ++i) {
    const auto& v = errors[i].as_object();
    INFO("registry.json errors[" << i << "] " << str(v.at("name")));
    const std::string signature = str(v.at("signature"));
    const std::string name = name_of(signature);
    const bytes data = hex_of(v.at("data"));
    REQUIRE(codes.count(name) == 1);
    seen.insert(name);

    const reg::registry_error e = reg::decode_revert(data);
    CHECK(e.code == codes.at(name));
    CHECK(e.name == name);
    CHECK(same(e.args, v.at("args")));
    CHECK(!e.message.empty());
    CHECK(e.to_error().code == codes.at(name));

    reg::registry_error built;
    built.code = codes.at(name);
    built.name = name;
    built.args = v.at("args").as_object();
    auto encoded = reg::encode_revert(built);
    REQUIRE_MESSAGE(encoded, (encoded ? "" : encoded.err().message));
    CHECK(*encoded == data);
  }
  CHECK(seen.size() == codes.size());
  for_each_type<reg::any_error>([&]<class T>(std::type_identity<T>) {
    INFO(T::kSignature);
    const json::object* v = find_vector("errors", T::kSignature);
    REQUIRE(v != nullptr);
    CHECK(to_bytes(reg::selector<T>()) == hex_of(v->at("selector")));
  });
}

TEST_CASE("identity-rule reverts (docs/protocol.md §3): selectors, arguments and messages") {
  const hash256 hash = crypto::keccak256(std::string_view("a victim's usage key"));
  const hash256 account = crypto::keccak256(std::string_view("the attacker's account"));
  const address wallet{0x12, 0x34};
  // The selectors are those of the Solidity signatures.
  const auto selector_of = [](std::string_view signature) {
    const hash256 h = crypto::keccak256(signature);
    return bytes(h.begin(), h.begin() + 4);
  };
  CHECK(to_bytes(reg::selector<reg::account_hash_not_canonical_error>()) ==
        selector_of("AccountHashNotCanonical(uint256,address)"));
  CHECK(to_bytes(reg::selector<reg::managed_not_allowed_error>()) == selector_of("ManagedNotAllowed(uint256,address)"));
  CHECK(to_bytes(reg::selector<reg::hash_is_usage_key_error>()) == selector_of("HashIsUsageKey(uint256)"));
  CHECK(to_bytes(reg::selector<reg::hash_is_account_error>()) == selector_of("HashIsAccount(uint256)"));
  CHECK(to_bytes(reg::selector<reg::usage_key_of_another_account_error>()) ==
        selector_of("UsageKeyOfAnotherAccount(uint256,uint256)"));

  const reg::registry_error not_canonical =
      reg::decode_revert(reg::encode_revert(reg::account_hash_not_canonical_error{hash, wallet}));
  CHECK(not_canonical.code == registry_errc::account_hash_not_canonical);
  CHECK(not_canonical.name == "AccountHashNotCanonical");
  CHECK(not_canonical.message == "AccountHashNotCanonical(apiKeyHash=" + codec::hex::encode_prefixed(hash) +
                                     ", admin=" + codec::hex::encode_prefixed(wallet) + ")");
  CHECK(not_canonical.to_error().code == registry_errc::account_hash_not_canonical);

  const reg::registry_error managed =
      reg::decode_revert(reg::encode_revert(reg::managed_not_allowed_error{hash, wallet}));
  CHECK(managed.code == registry_errc::managed_not_allowed);
  CHECK(managed.args.at("sender").as_string() == codec::hex::encode_prefixed(wallet));

  const reg::registry_error is_key = reg::decode_revert(reg::encode_revert(reg::hash_is_usage_key_error{hash}));
  CHECK(is_key.code == registry_errc::hash_is_usage_key);
  CHECK(is_key.message == "HashIsUsageKey(apiKeyHash=" + codec::hex::encode_prefixed(hash) + ")");

  const reg::registry_error is_account = reg::decode_revert(reg::encode_revert(reg::hash_is_account_error{account}));
  CHECK(is_account.code == registry_errc::hash_is_account);
  CHECK(is_account.args.at("usageKeyHash").as_string() == codec::hex::encode_prefixed(account));

  const reg::registry_error other =
      reg::decode_revert(reg::encode_revert(reg::usage_key_of_another_account_error{account, hash}));
  CHECK(other.code == registry_errc::usage_key_of_another_account);
  CHECK(other.message == "UsageKeyOfAnotherAccount(accountHash=" + codec::hex::encode_prefixed(account) +
                             ", usageKeyHash=" + codec::hex::encode_prefixed(hash) + ")");
  // Built back from the JSON form, byte for byte.
  auto again = reg::encode_revert(other);
  REQUIRE(again);
  CHECK(*again == reg::encode_revert(reg::usage_key_of_another_account_error{account, hash}));

  // A known selector with a truncated argument is unknown_error, never a mis-typed refusal.
  bytes cut = reg::encode_revert(reg::hash_is_account_error{account});
  cut.resize(cut.size() - 1);
  CHECK(reg::decode_revert(cut).code == registry_errc::unknown_error);
  // Every registry_errc has a distinct message (the category lists one per value).
  CHECK(make_error_code(registry_errc::hash_is_account).message() == "hash is an account");
  CHECK(make_error_code(registry_errc::panic).message() == "panic");
  CHECK(make_error_code(registry_errc::unknown_error).message() == "unknown revert");
}

TEST_CASE("conversion consent revert: NewAdminNotSender(accountHash, newAdmin)") {
  const hash256 account = crypto::keccak256(std::string_view("a prepared account"));
  const address victim{0xab, 0xcd};
  const hash256 h = crypto::keccak256(std::string_view("NewAdminNotSender(uint256,address)"));
  CHECK(to_bytes(reg::selector<reg::new_admin_not_sender_error>()) == bytes(h.begin(), h.begin() + 4));
  const bytes data = reg::encode_revert(reg::new_admin_not_sender_error{account, victim});
  CHECK(data.size() == 4 + 2 * 32);
  const reg::registry_error e = reg::decode_revert(data);
  CHECK(e.code == registry_errc::new_admin_not_sender);
  CHECK(e.name == "NewAdminNotSender");
  CHECK(e.message == "NewAdminNotSender(accountHash=" + codec::hex::encode_prefixed(account) +
                         ", newAdmin=" + codec::hex::encode_prefixed(victim) + ")");
  CHECK(e.args.at("newAdmin").as_string() == codec::hex::encode_prefixed(victim));
  CHECK(e.to_error().code == registry_errc::new_admin_not_sender);
  auto again = reg::encode_revert(e);
  REQUIRE(again);
  CHECK(*again == data);
  CHECK(make_error_code(registry_errc::new_admin_not_sender).message() == "new admin is not the sender");
  // The error ends the typed list: the codes after it keep their messages.
  CHECK(make_error_code(registry_errc::error_string).message() == "reverted with a reason");
}

TEST_CASE("revert messages and the built-in reverts") {
  const hash256 account = crypto::keccak256(std::string_view("account"));
  const address sender{0xab, 0xcd};
  const reg::registry_error not_admin = reg::decode_revert(reg::encode_revert(reg::not_admin_error{account, sender}));
  CHECK(not_admin.code == registry_errc::not_admin);
  CHECK(not_admin.message == "NotAdmin(accountHash=" + codec::hex::encode_prefixed(account) +
                                 ", sender=" + codec::hex::encode_prefixed(sender) + ")");

  // require(false, "Not enough Ether provided.") as Solidity encodes it (Solidity docs, "Error
  // handling"; the same bytes are asserted against ethers in generate.mjs).
  const reg::registry_error reason =
      reg::decode_revert(h("08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000"
                           "000000000000000000000000000000000000000000001a4e6f7420656e6f7567682045746865722070726f7669"
                           "6465642e000000000000"));
  CHECK(reason.code == registry_errc::error_string);
  CHECK(reason.args.at("message") == "Not enough Ether provided.");
  CHECK(reason.message == "reverted: Not enough Ether provided.");

  const reg::registry_error overflow =
      reg::decode_revert(h("4e487b710000000000000000000000000000000000000000000000000000000000000011"));
  CHECK(overflow.code == registry_errc::panic);
  CHECK(overflow.message == "Panic(0x11): arithmetic underflow or overflow");
}

TEST_CASE("decode_revert: anything unrecognised is unknown_error") {
  const bytes not_admin = reg::encode_revert(reg::not_admin_error{});
  struct case_ {
    const char* what;
    bytes in;
  };
  const case_ cases[] = {
      {"empty (revert())", {}},
      {"3 bytes", h("08c379")},
      {"unknown selector", h("deadbeef0000000000000000000000000000000000000000000000000000000000000001")},
      {"known selector, arguments truncated", bytes(not_admin.begin(), not_admin.end() - 1)},
      {"known selector, no arguments", bytes(not_admin.begin(), not_admin.begin() + 4)},
      {"Error(string) with an offset outside the data",
       h("08c379a000000000000000000000000000000000000000000000000000000000000000ff")},
      {"NotAdmin with a dirty address word", with_word(not_admin, 4 + 32, u256::max())},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const reg::registry_error e = reg::decode_revert(c.in);
    CHECK(e.code == registry_errc::unknown_error);
    CHECK(e.name.empty());
    CHECK(e.args.at("data").as_string() == codec::hex::encode_prefixed(c.in));
    CHECK(!e.message.empty());
    CHECK(!reg::encode_revert(e));
  }
}

TEST_CASE("decode_call rejects malformed calldata with a typed error") {
  reg::add_group_call add;
  add.account_hash = crypto::keccak256(std::string_view("a"));
  add.name = "group";
  add.description = "d";
  add.pkp_ids = {address{1}, address{2}};
  add.cid_hashes = {crypto::keccak256(std::string_view("cid"))};
  const bytes add_data = reg::encode(add);
  REQUIRE(reg::decode_call(add_data));

  const bytes remove_data = reg::encode(reg::remove_group_call{add.account_hash, 7});
  reg::set_usage_api_key_call key;
  key.account_hash = add.account_hash;
  key.name = "k";
  key.permissions.execute_in_groups = {1, 2};
  const bytes key_data = reg::encode(key);
  // setUsageApiKey's Permissions tuple: head offset at arg 6; inside it, executeInGroups is the
  // 7th component (offset word at tuple + 6*32); its elements follow their count.
  const auto word_at = [](const bytes& d, size_t at) {
    return static_cast<size_t>(u256::load_be(d.data() + at));
  };
  const size_t tuple = 4 + word_at(key_data, 4 + 6 * 32);
  const size_t execute = tuple + word_at(key_data, tuple + 6 * 32);
  const bytes set_api_payer = reg::encode(reg::set_api_payer_call{address{9}, true});

  struct case_ {
    const char* what;
    bytes in;
    abi_errc code;
  };
  const case_ cases[] = {
      {"empty", {}, abi_errc::truncated},
      {"3 bytes", h("e9d2c3"), abi_errc::truncated},
      {"unknown selector", h("deadbeef"), abi_errc::selector_mismatch},
      {"unknown selector with arguments", h("deadbeef0000000000000000000000000000000000000000000000000000000000000001"),
       abi_errc::selector_mismatch},
      {"truncated by one byte", bytes(add_data.begin(), add_data.end() - 1), abi_errc::truncated},
      {"truncated to the selector", bytes(add_data.begin(), add_data.begin() + 4), abi_errc::truncated},
      {"truncated static arguments", bytes(remove_data.begin(), remove_data.end() - 32), abi_errc::truncated},
      {"offset of name outside the data", with_word(add_data, 4 + 32, u256{1} << 200), abi_errc::bad_offset},
      {"offset of name just past the end", with_word(add_data, 4 + 32, u256{add_data.size()}), abi_errc::bad_offset},
      {"pkpIds length beyond the data", with_word(add_data, 4 + word_at(add_data, 4 + 3 * 32), u256{1000}),
       abi_errc::truncated},
      {"groupId of 2^64", with_word(remove_data, 4 + 32, u256{1} << 64), abi_errc::out_of_range},
      {"groupId of 2^256-1", with_word(remove_data, 4 + 32, u256::max()), abi_errc::out_of_range},
      {"permission group id of 2^64", with_word(key_data, execute + 32, u256{1} << 64), abi_errc::out_of_range},
      {"address with dirty high bytes", with_word(set_api_payer, 4, u256{1} << 160), abi_errc::bad_padding},
      {"bool of 2", with_word(set_api_payer, 4 + 32, u256{2}), abi_errc::bad_bool},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto r = reg::decode_call(c.in);
    REQUIRE(!r);
    CHECK(r.code() == c.code);
    CHECK(!r.err().message.empty());
  }
  // The typed decoder refuses another function's calldata.
  CHECK(reg::decode<reg::remove_group_call>(add_data).code() == abi_errc::selector_mismatch);
  CHECK(reg::decode<reg::remove_group_call>(h("1234")).code() == abi_errc::truncated);
  // The permission check names the field.
  auto perm = reg::decode_call(with_word(key_data, execute + 32, u256{1} << 64));
  CHECK(perm.err().message.find("executeInGroups") != std::string::npos);
}

TEST_CASE("decode_result and decode_log reject malformed data") {
  const bytes group_id = reg::encode_result<reg::add_group_call>(5);
  CHECK(reg::decode_result<reg::add_group_call>(group_id).value() == 5);
  CHECK(reg::decode_result<reg::add_group_call>(with_word(group_id, 0, u256{1} << 64)).code() ==
        abi_errc::out_of_range);
  CHECK(reg::decode_result<reg::owner_call>(bytes(31)).code() == abi_errc::truncated);
  reg::list_page<reg::group_view> page;
  page.items.push_back({1, "g", "", {}, {}});
  page.total = 1;
  const bytes page_data = reg::encode_result<reg::list_groups_call>(page);
  CHECK(reg::decode_result<reg::list_groups_call>(page_data).value() == page);
  CHECK(reg::decode_result<reg::list_groups_call>(with_word(page_data, 0, u256{1} << 40)).code() ==
        abi_errc::bad_offset);

  const reg::encoded_log added =
      reg::encode_log(reg::group_added_event{crypto::keccak256(std::string_view("a")), 3, "n", "d", {}, {}});
  REQUIRE(reg::decode_log(added.topics, added.data));
  const reg::encoded_log payer = reg::encode_log(reg::api_payer_set_event{address{7}, true});
  REQUIRE(reg::decode_log(payer.topics, payer.data));

  const auto topics = [](std::vector<hash256> t) {
    return t;
  };
  hash256 dirty_payer = payer.topics[1];
  dirty_payer[0] = 1;
  hash256 unknown = crypto::keccak256(std::string_view("Transfer(address,address,uint256)"));
  struct case_ {
    const char* what;
    std::vector<hash256> topics;
    bytes data;
    abi_errc code;
  };
  const case_ cases[] = {
      {"no topics", {}, added.data, abi_errc::wrong_length},
      {"topic0 only", topics({added.topics[0]}), added.data, abi_errc::wrong_length},
      {"three topics", topics({added.topics[0], added.topics[1], added.topics[1]}), added.data, abi_errc::wrong_length},
      {"unknown topic0", topics({unknown, added.topics[1]}), added.data, abi_errc::selector_mismatch},
      {"data truncated", added.topics, bytes(added.data.begin(), added.data.end() - 32), abi_errc::truncated},
      {"groupId of 2^64", added.topics, with_word(added.data, 0, u256{1} << 64), abi_errc::out_of_range},
      {"indexed address with dirty high bytes", topics({payer.topics[0], dirty_payer}), payer.data,
       abi_errc::bad_padding},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto r = reg::decode_log(c.topics, c.data);
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
}

TEST_CASE("JSON bridge: overloads, strictness and the group id range") {
  const std::string hash = codec::hex::encode_prefixed(crypto::keccak256(std::string_view("k")));
  json::object key{{"accountHash", hash},
                   {"usageKeyHash", hash},
                   {"expiration", 0},
                   {"balance", "340282366920938463463374607431768211456"},  // 2^128
                   {"name", "n"},
                   {"description", ""},
                   {"p", json::value_from(scopes::permission_set{})}};
  auto seven = reg::call_from_json("setUsageApiKey", key);
  REQUIRE(seven);
  CHECK(std::holds_alternative<reg::set_usage_api_key_call>(*seven));
  CHECK(std::get<reg::set_usage_api_key_call>(*seven).balance == u256{1} << 128);
  json::object with_wallet = key;
  with_wallet["wallet"] = "0x00000000000000000000000000000000000000aa";
  auto eight = reg::call_from_json("setUsageApiKey", with_wallet);
  REQUIRE(eight);
  CHECK(std::holds_alternative<reg::set_usage_api_key_with_wallet_call>(*eight));
  CHECK(std::get<reg::set_usage_api_key_with_wallet_call>(*eight).wallet[19] == 0xaa);

  const auto modified = [&](std::string_view k, json::value v) {
    json::object o = key;
    if (v.is_null())
      o.erase(k);
    else
      o[k] = std::move(v);
    return o;
  };
  json::object perms_over;
  perms_over["execute_in_groups"] = json::array{"18446744073709551616"};  // 2^64
  json::object perms_unknown;
  perms_unknown["can_fly"] = true;
  struct case_ {
    const char* what;
    std::string function;
    json::object args;
    abi_errc code;
  };
  const case_ cases[] = {
      {"unknown function", "transfer", key, abi_errc::bad_value},
      {"missing key",
       "setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,"
       "uint256[],uint256[],uint256[],uint256[]))",
       modified("name", nullptr), abi_errc::bad_value},
      {"extra key", "getAccount", json::object{{"accountHash", hash}, {"x", 1}}, abi_errc::bad_value},
      {"hash of 31 bytes", "getAccount", json::object{{"accountHash", "0x" + std::string(62, '1')}},
       abi_errc::bad_value},
      {"hash as a number", "getAccount", json::object{{"accountHash", 1}}, abi_errc::bad_value},
      {"negative counter", "setUsageApiKey", modified("expiration", -1), abi_errc::bad_value},
      {"fractional counter", "setUsageApiKey", modified("expiration", 1.5), abi_errc::bad_value},
      {"counter above 2^256-1", "setUsageApiKey",
       modified("balance", "115792089237316195423570985008687907853269984665640564039457584007913129639936"),
       abi_errc::bad_value},
      {"group id of 2^64", "removeGroup", json::object{{"accountHash", hash}, {"groupId", "18446744073709551616"}},
       abi_errc::out_of_range},
      {"permission group id of 2^64", "setUsageApiKey", modified("p", perms_over), abi_errc::out_of_range},
      {"unknown permission field", "setUsageApiKey", modified("p", perms_unknown), abi_errc::bad_value},
      {"address without 0x", "isApiPayer", json::object{{"who", std::string(40, 'a')}}, abi_errc::bad_value},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto r = reg::call_from_json(c.function, c.args);
    REQUIRE(!r);
    CHECK(r.code() == c.code);
  }
  CHECK(reg::event_from_json("Transfer", {}).code() == abi_errc::bad_value);
  CHECK(reg::encode_log("GroupRemoved", json::object{{"accountHash", hash}}).code() == abi_errc::bad_value);
}

TEST_CASE("events carry the embedded ledger's JSON forms") {
  // The objects below are built exactly as the embedded ledger built its event rows before it
  // recorded reg::to_json of typed events (hx() = 0x + lowercase hex; uint64 counters;
  // value_from(permission_set)): rows that existing data directories still hold.
  const hash256 account = crypto::keccak256(std::string_view("account"));
  const hash256 key_hash = crypto::keccak256(std::string_view("key"));
  address wallet{};
  for (size_t i = 0; i < wallet.size(); ++i)
    wallet[i] = static_cast<uint8_t>(0xa0 + i);  // letters in every position: case matters
  scopes::permission_set perms;
  perms.can_create_pkps = true;
  perms.execute_in_groups = {0, 3, UINT64_MAX};
  const uint64_t expiration = 1767225600;
  const uint64_t balance = 0;
  const json::object usage_key_set{{"accountHash", codec::hex::encode_prefixed(account)},
                                   {"usageKeyHash", codec::hex::encode_prefixed(key_hash)},
                                   {"wallet", codec::hex::encode_prefixed(wallet)},
                                   {"expiration", expiration},
                                   {"balance", balance},
                                   {"name", "ci"},
                                   {"description", "nightly"},
                                   {"permissions", json::value_from(perms)}};
  const hash256 derivation = crypto::keccak256(std::string_view("path"));
  const json::object wallet_registered{{"accountHash", codec::hex::encode_prefixed(account)},
                                       {"wallet", codec::hex::encode_prefixed(wallet)},
                                       {"derivationPath", codec::hex::encode_prefixed(derivation)},
                                       {"name", "w"},
                                       {"description", ""}};
  const json::object group_added{{"accountHash", codec::hex::encode_prefixed(account)},
                                 {"groupId", uint64_t{4}},
                                 {"name", "g"},
                                 {"description", "d"},
                                 {"pkpIds", json::array{codec::hex::encode_prefixed(wallet)}},
                                 {"cidHashes", json::array{codec::hex::encode_prefixed(key_hash)}}};
  const json::object group_removed{{"accountHash", codec::hex::encode_prefixed(account)}, {"groupId", uint64_t{4}}};
  const std::pair<const char*, const json::object*> events[] = {
      {"UsageApiKeySet", &usage_key_set},
      {"WalletDerivationRegistered", &wallet_registered},
      {"GroupAdded", &group_added},
      {"GroupRemoved", &group_removed},
  };
  for (const auto& [name, data] : events) {
    INFO(name);
    auto log = reg::encode_log(name, *data);
    REQUIRE_MESSAGE(log, (log ? "" : log.err().message));
    auto e = reg::decode_log(log->topics, log->data);
    REQUIRE(e);
    // Exact equality: same keys, same strings (lowercase hex), integers as integers.
    CHECK(json::serialize(e->args) == json::serialize(*data));
    CHECK(e->account_hash == account);
  }
  // Counters above 2^64 - 1, which the embedded ledger never holds, become decimal strings.
  reg::usage_api_key_set_event big{account, key_hash, wallet, u256{1} << 64, u256{0}, "k", "", perms};
  CHECK(reg::to_json(reg::any_event(big)).at("expiration") == "18446744073709551616");
}

TEST_CASE("typed structs put each member in its Solidity parameter's place") {
  // Expected bytes from the generic ABI codec and the signature text, with the values listed in
  // the interface's parameter order by hand: independent of the bindings' field descriptions.
  const auto num = [](const hash256& x) {
    return codec::abi::value::number(u256::load_be(x.data()));
  };
  const auto n = [](uint64_t x) {
    return codec::abi::value::number(u256{x});
  };
  const auto ids = [&](std::vector<uint64_t> v) {
    std::vector<codec::abi::value> out;
    for (const uint64_t x : v)
      out.push_back(n(x));
    return codec::abi::value::list(std::move(out));
  };
  const hash256 a = crypto::keccak256(std::string_view("a"));
  const hash256 b = crypto::keccak256(std::string_view("b"));
  const address w{0xaa, 0xbb};

  reg::set_usage_api_key_with_wallet_call key;
  key.account_hash = a;
  key.usage_key_hash = b;
  key.expiration = 111;
  key.balance = 222;
  key.name = "the name";
  key.description = "the description";
  key.permissions = {true, false, true, {1}, {2}, {3}, {4, 5}};
  key.wallet = w;
  const codec::abi::value perms =
      codec::abi::value::list({codec::abi::value::boolean(true), codec::abi::value::boolean(false),
                               codec::abi::value::boolean(true), ids({1}), ids({2}), ids({3}), ids({4, 5})});
  const std::vector<codec::abi::value> key_args = {num(a),
                                                   num(b),
                                                   n(111),
                                                   n(222),
                                                   codec::abi::value::text("the name"),
                                                   codec::abi::value::text("the description"),
                                                   perms,
                                                   codec::abi::value::addr(w)};
  CHECK(reg::encode(key) ==
        codec::abi::encode_call(reg::set_usage_api_key_with_wallet_call::kSignature, key_args).value());

  reg::action_added_event added{a, b, "QmCid", "the name", "the description"};
  const auto log = reg::encode_log(added);
  const std::vector<codec::abi::type> added_types = {codec::abi::type::of("uint256"), codec::abi::type::of("string"),
                                                     codec::abi::type::of("string"), codec::abi::type::of("string")};
  const std::vector<codec::abi::value> added_args = {num(b), codec::abi::value::text("QmCid"),
                                                     codec::abi::value::text("the name"),
                                                     codec::abi::value::text("the description")};
  CHECK(log.data == codec::abi::encode(added_types, added_args).value());
  CHECK(log.topics.at(1) == a);

  reg::unknown_usage_key_error unknown{a, b};
  CHECK(reg::encode_revert(unknown) == codec::abi::encode_call(reg::unknown_usage_key_error::kSignature,
                                                               std::vector<codec::abi::value>{num(a), num(b)})
                                           .value());

  reg::account_view acct{a, w, true, "n", "d", "e@x", 1, 3};
  const std::vector<codec::abi::type> view_type = {
      codec::abi::type::of("(uint256,address,bool,string,string,string,uint256,uint256)")};
  const std::vector<codec::abi::value> view_value = {codec::abi::value::list(
      {num(a), codec::abi::value::addr(w), codec::abi::value::boolean(true), codec::abi::value::text("n"),
       codec::abi::value::text("d"), codec::abi::value::text("e@x"), n(1), n(3)})};
  CHECK(reg::encode_result<reg::get_account_call>(acct) == codec::abi::encode(view_type, view_value).value());
}
