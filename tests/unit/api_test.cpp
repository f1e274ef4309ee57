// SPDX-License-Identifier: Apache-2.0
// The core service's wire model (enact/api): request bodies read without exceptions, with the
// messages the server answers, and the conversions both ways.
#include "support.hpp"

#include <boost/json.hpp>

#include <string>

#include "enact/api/core.hpp"
#include "enact/api/read.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"

namespace json = boost::json;
using namespace enact;

namespace {
const char* kPkp = "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf";
const char* kHash = "0x1111111111111111111111111111111111111111111111111111111111111111";

template <class T>
std::string message_of(const char* body) {
  const auto r = api::read<T>(json::parse(body));
  REQUIRE_FALSE(r);
  CHECK(r.code() == api_errc::invalid_request);
  return r.err().message;
}
}  // namespace

TEST_CASE("api::read<new_group>: sets, optional text, a member listed twice") {
  const std::string body = std::string(R"({"name":"g","pkp_ids_permitted":[")") + kPkp + R"("]})";
  const auto g = api::read<api::new_group>(json::parse(body));
  REQUIRE(g);
  CHECK(g->name == "g");
  CHECK_FALSE(g->description.has_value());
  REQUIRE(g->pkp_ids_permitted.size() == 1);
  CHECK(to_checksum_address(g->pkp_ids_permitted[0]) == kPkp);
  CHECK(g->cid_hashes_permitted.empty());

  const std::string twice =
      std::string(R"({"name":"g","cid_hashes_permitted":[")") + kHash + R"(",")" + kHash + R"("]})";
  CHECK(message_of<api::new_group>(twice.c_str()) == "body.cid_hashes_permitted[1]: listed twice");
  CHECK(message_of<api::new_group>(R"({"name":"g","cid_hashes_permitted":["11"]})") ==
        "body.cid_hashes_permitted[0]: expected 0x + 64 hex digits");
  CHECK(message_of<api::new_group>(R"({"name":"g","pkp_ids_permitted":[1]})") ==
        "body.pkp_ids_permitted[0]: expected an address");
  CHECK(message_of<api::new_group>(R"({"description":"d"})") == "body.name: required");
  CHECK(message_of<api::new_group>("[]") == "body: expected a JSON object");
}

TEST_CASE("api::read: group ids as the server reads them") {
  CHECK(api::read<api::group_ref>(json::parse(R"({"group_id":"12"})"))->group_id == 12);
  CHECK(api::read<api::group_ref>(json::parse(R"({"group_id":7})"))->group_id == 7);
  CHECK(message_of<api::group_ref>(R"({"group_id":0})") == "group_id: 0 is the wildcard, not a group");
  CHECK(message_of<api::group_ref>(R"({"group_id":"x1"})") == "group_id: expected a group id, got 'x1'");
  CHECK(message_of<api::group_ref>(R"({"group_id":-1})") == "group_id: expected a group id");
  CHECK(message_of<api::group_ref>(R"({})") == "body.group_id: required");
}

TEST_CASE("api::read: a PKP, a CID and a hash in a group change") {
  const std::string pkp = std::string(R"({"group_id":3,"pkp_id":")") + kPkp + R"("})";
  const auto r = api::read<api::group_pkp>(json::parse(pkp));
  REQUIRE(r);
  CHECK(r->group_id == 3);
  // An address of the wrong length is refused, named.
  CHECK(message_of<api::group_pkp>(R"({"group_id":3,"pkp_id":"0x1234"})").starts_with("body.pkp_id"));
  CHECK(
      message_of<api::group_action>(R"({"group_id":3,"action_ipfs_cid":"Qm"})").starts_with("body.action_ipfs_cid: "));
  const std::string hash = std::string(R"({"group_id":3,"hashed_cid":")") + kHash + R"("})";
  CHECK(codec::hex::encode_prefixed(api::read<api::group_action_hash>(json::parse(hash))->hashed_cid) == kHash);
  CHECK(message_of<api::action_ref>(
            R"({"hashed_cid":"1111111111111111111111111111111111111111111111111111111111111111"})") ==
        "body.hashed_cid: expected 0x + 64 hex digits");
}

TEST_CASE("api::read<group>: update_group needs every field") {
  const std::string body = std::string(R"({"group_id":"2","name":"n","description":"d","pkp_ids_permitted":[],)") +
                           R"("cid_hashes_permitted":[")" + kHash + R"("]})";
  const auto g = api::read<api::group>(json::parse(body));
  REQUIRE(g);
  CHECK(g->group_id == 2);
  CHECK(g->description == "d");
  CHECK(g->cid_hashes_permitted.size() == 1);
  CHECK(message_of<api::group>(R"({"group_id":2,"name":"n","description":"d","pkp_ids_permitted":[]})") ==
        "body.cid_hashes_permitted: required");
}

TEST_CASE("flat types: value_from then value_to gives the same fields back, in wire order") {
  api::wallet w;
  w.pkp_id = parse_address(kPkp).value();
  w.wallet_address = w.pkp_id;
  w.derivation_path[31] = 9;
  w.name = "w";
  const json::value v = json::value_from(w);
  CHECK(json::serialize(v) ==
        std::string(R"({"pkp_id":")") + kPkp + R"(","wallet_address":")" + kPkp +
            R"(","derivation_path":"0x0000000000000000000000000000000000000000000000000000000000000009",)"
            R"("name":"w","description":"","usage_key_wallet":false})");
  const auto back = json::value_to<api::wallet>(v);
  CHECK(back.pkp_id == w.pkp_id);
  CHECK(back.derivation_path == w.derivation_path);
  CHECK(back.name == "w");

  // A required string that is missing names the field; free text reads as empty.
  try {
    (void)json::value_to<api::action>(json::parse(std::string(R"({"hashed_cid":")") + kHash + R"("})"));
    FAIL("expected a bad_response");
  } catch (const Error& e) {
    CHECK(e.code() == api_errc::bad_response);
    CHECK(std::string(e.what()) == "action_ipfs_cid: missing");
  }
  const auto a = json::value_to<api::action>(
      json::parse(std::string(R"({"action_ipfs_cid":"c","hashed_cid":")") + kHash + R"(","name":null})"));
  CHECK(a.name.empty());
  CHECK(json::serialize(json::value_from(api::group_pkp{5, w.pkp_id})) ==
        std::string(R"({"group_id":5,"pkp_id":")") + kPkp + R"("})");
}

TEST_CASE("api::read<usage_key_spec>: metadata beside the permissions") {
  const auto s = api::read<api::usage_key_spec>(
      json::parse(R"({"name":"k","expiration":99,"can_create_pkps":true,"execute_in_groups":[0,3]})"));
  REQUIRE(s);
  CHECK(s->name == "k");
  CHECK_FALSE(s->description.has_value());
  CHECK(s->expiration == 99);
  CHECK(s->permissions.can_create_pkps);
  CHECK(s->permissions.execute_in_groups == std::vector<scopes::group_id>{0, 3});
  // The key value of update_usage_api_key is metadata, not an unknown field.
  CHECK(api::read<api::usage_key_spec>(json::parse(R"({"name":"k","usage_api_key":"x"})")));
  const auto unknown = api::read<api::usage_key_spec>(json::parse(R"({"name":"k","admin":true})"));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.code() == scope_errc::unknown_field);
  CHECK(unknown.err().message == "admin: unknown field");
  CHECK(message_of<api::usage_key_spec>(R"({"name":"k","expiration":-1})") ==
        "body.expiration: expected a non-negative integer");
}
