// SPDX-License-Identifier: Apache-2.0
// EIP-1559 transactions against tests/vectors/tx1559.json (computed by ethers 6: Wallet.
// signTransaction, Transaction.unsignedSerialized / unsignedHash, crypto::keccak256(raw); see
// tests/vectors/README.md), then malformed raw transactions built from a valid one by replacing
// single RLP fields, each checked for its chain_errc. Also the JSON-RPC codec
// (enact/chain/rpc.hpp), against the value-encoding examples of the Ethereum JSON-RPC documentation
// and the JSON-RPC 2.0 specification.
#include "support.hpp"

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "enact/chain/rpc.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/codec/rlp.hpp"
#include "enact/u256.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"

namespace json = boost::json;
using namespace enact;

namespace {

const json::array& vectors() {
  static const json::value doc = json::parse(test::read_file(test::source_path("tests/vectors/tx1559.json")));
  return doc.at("vectors").as_array();
}

std::string str(const json::value& v) { return std::string(v.as_string()); }
bytes hex_of(const json::value& v) { return codec::hex::decode_prefixed(v.as_string()).value(); }
u256 dec_of(const json::value& v) { return u256::from_dec(v.as_string()).value(); }
uint64_t u64_of(const json::value& v) {
  const u256 x = dec_of(v);
  REQUIRE(x.fits_u64());
  return static_cast<uint64_t>(x);
}
address address_of(const json::value& v) { return codec::hex::decode_fixed<20>(v.as_string()).value(); }

chain::eip1559_tx tx_of(const json::object& v) {
  chain::eip1559_tx tx;
  tx.chain_id = u64_of(v.at("chain_id"));
  tx.nonce = u64_of(v.at("nonce"));
  tx.max_priority_fee_per_gas = dec_of(v.at("max_priority_fee_per_gas"));
  tx.max_fee_per_gas = dec_of(v.at("max_fee_per_gas"));
  tx.gas_limit = u64_of(v.at("gas_limit"));
  if (!v.at("to").is_null())
    tx.to = address_of(v.at("to"));
  tx.value = dec_of(v.at("value"));
  tx.data = hex_of(v.at("data"));
  return tx;
}

// secp256k1 group order n (SEC 2 §2.4.1).
constexpr std::string_view kOrderN = "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";

/// The RLP encodings of the 12 fields of a valid raw transaction, to be tampered with.
std::vector<bytes> field_encodings(bytes_view raw) {
  const auto it = codec::rlp::decode(raw.subspan(1)).value();
  std::vector<bytes> out;
  for (const auto& f : it.as_list())
    out.push_back(codec::rlp::encode(f));
  return out;
}

/// 0x02 ‖ list header ‖ the given field encodings, concatenated as they are.
bytes assemble(const std::vector<bytes>& fields) {
  bytes payload;
  for (const auto& f : fields)
    payload.insert(payload.end(), f.begin(), f.end());
  bytes out{0x02};
  codec::rlp::encode_header(out, true, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

bytes h(std::string_view s) { return codec::hex::decode(s).value(); }

}  // namespace

TEST_CASE("tx1559 vectors: encoding, signing hash, signing and hash match ethers") {
  const auto& vs = vectors();
  REQUIRE(vs.size() == 100);
  size_t creations = 0;
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO("tx1559.json[" << i << "] " << str(v.at("name")));
    const auto tx = tx_of(v);
    if (!tx.to)
      ++creations;

    CHECK(chain::unsigned_payload(tx) == hex_of(v.at("unsigned")));
    const hash256 sh = chain::signing_hash(tx);
    CHECK(bytes(sh.begin(), sh.end()) == hex_of(v.at("signing_hash")));
    CHECK(sh == crypto::keccak256(hex_of(v.at("unsigned"))));

    // Test keys drawn from a fixed seed by the generator; they protect nothing.
    const Secret key(hex_of(v.at("private_key")));
    auto raw = chain::sign(tx, key);
    REQUIRE(raw);
    const bytes expected_raw = hex_of(v.at("raw"));
    CHECK(*raw == expected_raw);
    const hash256 th = chain::tx_hash(expected_raw);
    CHECK(bytes(th.begin(), th.end()) == hex_of(v.at("hash")));
  }
  // The generator draws contract creations; make sure the file still holds some.
  CHECK(creations >= 5);
}

TEST_CASE("tx1559 vectors: decode round-trips and recovers the signer") {
  const auto& vs = vectors();
  for (size_t i = 0; i < vs.size(); ++i) {
    const auto& v = vs[i].as_object();
    INFO("tx1559.json[" << i << "] " << str(v.at("name")));
    const auto tx = tx_of(v);
    const bytes raw = hex_of(v.at("raw"));

    auto d = chain::decode(raw);
    REQUIRE_MESSAGE(d, (d ? "" : d.err().message));
    CHECK(d->tx == tx);
    CHECK(d->from == address_of(v.at("from")));
    CHECK(bytes(d->hash.begin(), d->hash.end()) == hex_of(v.at("hash")));
    CHECK(d->signature.v == v.at("y_parity").as_int64());
    CHECK(bytes(d->signature.r.begin(), d->signature.r.end()) == hex_of(v.at("r")));
    CHECK(bytes(d->signature.s.begin(), d->signature.s.end()) == hex_of(v.at("s")));
    CHECK(chain::encode_signed(d->tx, d->signature) == raw);

    auto u = chain::decode_unsigned(hex_of(v.at("unsigned")));
    REQUIRE(u);
    CHECK(*u == tx);
  }
}

TEST_CASE("sign rejects an invalid private key") {
  const chain::eip1559_tx tx;
  CHECK(chain::sign(tx, Secret(bytes(32, 0))).code() == secp256k1_errc::invalid_private_key);
  CHECK(chain::sign(tx, Secret(bytes(31, 1))).code() == secp256k1_errc::invalid_private_key);
}

TEST_CASE("decode rejects malformed transactions with a typed error") {
  // A valid base: the first random vector of tx1559.json (ethers), whose to is an address.
  const auto& base_v = vectors()[3].as_object();
  REQUIRE(!base_v.at("to").is_null());
  const bytes raw = hex_of(base_v.at("raw"));
  REQUIRE(chain::decode(raw));
  const auto fields = field_encodings(raw);
  REQUIRE(fields.size() == 12);

  auto with = [&](size_t index, bytes enc) {
    auto f = fields;
    f[index] = std::move(enc);
    return assemble(f);
  };
  auto appended = [&](bytes enc) {
    auto f = fields;
    f.push_back(std::move(enc));
    return assemble(f);
  };
  auto dropped = [&]() {
    auto f = fields;
    f.pop_back();
    return assemble(f);
  };
  auto retyped = [&](uint8_t type) {
    bytes b = raw;
    b[0] = type;
    return b;
  };
  auto truncated = [&](size_t n) {
    return bytes(raw.begin(), raw.end() - static_cast<long>(n));
  };
  auto trailing = [&]() {
    bytes b = raw;
    b.push_back(0x00);
    return b;
  };

  const u256 n = u256::from_hex(kOrderN).value();
  const u256 s = u256::from_be(hex_of(base_v.at("s"))).value();
  const u256 high_s = n - s;  // the malleated twin (EIP-2 forbids it)
  const auto y = static_cast<uint64_t>(base_v.at("y_parity").as_int64());

  struct bad {
    const char* what;
    bytes in;
    chain_errc code;
  };
  const bad cases[] = {
      {"empty input", {}, chain_errc::wrong_type},
      {"type byte only", bytes{0x02}, chain_errc::bad_rlp},
      {"type 0x01 (EIP-2930)", retyped(0x01), chain_errc::wrong_type},
      {"type 0x03 (EIP-4844)", retyped(0x03), chain_errc::wrong_type},
      {"legacy RLP list", bytes(raw.begin() + 1, raw.end()), chain_errc::wrong_type},
      {"truncated by one byte", truncated(1), chain_errc::bad_rlp},
      {"truncated to the header", truncated(raw.size() - 3), chain_errc::bad_rlp},
      {"trailing byte", trailing(), chain_errc::bad_rlp},
      {"byte string instead of list", h("0280"), chain_errc::bad_rlp},
      {"11 fields", dropped(), chain_errc::field_count},
      {"13 fields (extra)", appended(h("80")), chain_errc::field_count},
      {"nonce with leading zero", with(1, h("820001")), chain_errc::bad_field},
      {"nonce over 64 bits", with(1, h("89010000000000000000")), chain_errc::bad_field},
      {"chainId as a list", with(0, h("c0")), chain_errc::bad_field},
      {"maxFeePerGas over 256 bits", with(3, codec::rlp::encode(bytes(33, 0x01))), chain_errc::bad_field},
      {"gasLimit over 64 bits", with(4, h("89ff0000000000000000")), chain_errc::bad_field},
      {"to of 19 bytes", with(5, codec::rlp::encode(bytes(19, 0x11))), chain_errc::bad_field},
      {"to of 21 bytes", with(5, codec::rlp::encode(bytes(21, 0x11))), chain_errc::bad_field},
      {"to as a list", with(5, h("c0")), chain_errc::bad_field},
      {"value with leading zero", with(6, h("820001")), chain_errc::bad_field},
      {"data as a list", with(7, h("c180")), chain_errc::bad_field},
      {"accessList as a string", with(8, h("80")), chain_errc::bad_field},
      // [[0x11…11 (20 bytes), []]]
      {"non-empty accessList",
       with(8, codec::rlp::encode(codec::rlp::item::list(
                   {codec::rlp::item::list({codec::rlp::item::string(bytes(20, 0x11)), codec::rlp::item::list({})})}))),
       chain_errc::access_list},
      {"yParity 2", with(9, h("02")), chain_errc::bad_signature},
      {"yParity non-canonical single byte", with(9, h("8101")), chain_errc::bad_rlp},
      {"yParity with leading zero", with(9, h("820001")), chain_errc::bad_field},
      {"r zero", with(10, h("80")), chain_errc::bad_signature},
      {"r equal to n", with(10, codec::rlp::encode(n)), chain_errc::bad_signature},
      {"s zero", with(11, h("80")), chain_errc::bad_signature},
      {"s equal to n", with(11, codec::rlp::encode(n)), chain_errc::bad_signature},
      {"r over 256 bits", with(10, codec::rlp::encode(bytes(33, 0x01))), chain_errc::bad_field},
      {"s with leading zero", with(11, codec::rlp::encode(bytes{0x00, 0x01})), chain_errc::bad_field},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto d = chain::decode(c.in);
    REQUIRE_FALSE(d);
    CHECK(d.code() == c.code);
    CHECK(!d.err().message.empty());
  }

  // High s with the parity flipped is the same signature in malleated form: still rejected.
  {
    auto f = fields;
    f[9] = codec::rlp::encode(u256{1 - y});
    f[11] = codec::rlp::encode(high_s);
    const auto d = chain::decode(assemble(f));
    REQUIRE_FALSE(d);
    CHECK(d.code() == chain_errc::high_s);
  }
  // A different valid r recovers a different sender (or none): never the original one.
  {
    auto f = fields;
    f[10] = codec::rlp::encode(u256{1});
    const auto d = chain::decode(assemble(f));
    if (d)
      CHECK(d->from != address_of(base_v.at("from")));
    else
      CHECK(d.code() == chain_errc::bad_signature);
  }
  // Flipping yParity recovers another key.
  {
    const auto d = chain::decode(with(9, codec::rlp::encode(u256{1 - y})));
    if (d)
      CHECK(d->from != address_of(base_v.at("from")));
    else
      CHECK(d.code() == chain_errc::bad_signature);
  }
}

TEST_CASE("decode fails cleanly on every prefix and every single-byte change of a transaction") {
  // Base: tx1559.json "create-empty" (ethers), a contract creation with empty data.
  const auto& v = vectors()[2].as_object();
  REQUIRE(v.at("to").is_null());
  const bytes raw = hex_of(v.at("raw"));
  const address signer = address_of(v.at("from"));
  for (size_t len = 0; len < raw.size(); ++len) {
    INFO("prefix of " << len << " bytes");
    const auto d = chain::decode(bytes_view(raw).first(len));
    REQUIRE_FALSE(d);
    CHECK(d.code().category() == detail::chain_category());
  }
  for (size_t i = 0; i < raw.size(); ++i) {
    INFO("byte " << i << " xor 0x01");
    bytes b = raw;
    b[i] ^= 0x01;
    const auto d = chain::decode(b);
    // A change either breaks the encoding or yields another signed message with another signer.
    if (d)
      CHECK(d->from != signer);
    else
      CHECK(d.code().category() == detail::chain_category());
  }
}

TEST_CASE("decode_unsigned rejects malformed payloads") {
  // The unsigned payload of an all-zero transaction to the zero address (tx1559.json "all-zero").
  const bytes ok = h("02dd80808080809400000000000000000000000000000000000000008080c0");
  REQUIRE(chain::decode_unsigned(ok));
  struct bad {
    const char* what;
    bytes in;
    chain_errc code;
  };
  const bad cases[] = {
      // Long-form list header (f8 1d) for a 29-byte payload: non-canonical.
      {"long-form header for a short list", h("02f81d80808080809400000000000000000000000000000000000000008080c0"),
       chain_errc::bad_rlp},
      {"signed form given as unsigned", bytes(hex_of(vectors()[0].as_object().at("raw"))), chain_errc::field_count},
      {"8 fields", h("02dc80808080809400000000000000000000000000000000000000008080"), chain_errc::field_count},
      {"wrong type", h("01dd80808080809400000000000000000000000000000000000000008080c0"), chain_errc::wrong_type},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto d = chain::decode_unsigned(c.in);
    REQUIRE_FALSE(d);
    CHECK(d.code() == c.code);
  }
}

TEST_CASE("chain_errc is registered as an error code enum") {
  const std::error_code ec = chain_errc::high_s;
  CHECK(std::string(ec.category().name()) == "enact.chain");
  CHECK(ec.message() == "s is high (EIP-2)");
}

// --- JSON-RPC codec ----------------------------------------------------------------------------

TEST_CASE("rpc QUANTITY and DATA follow the execution API value encoding") {
  // Examples from ethereum.org "JSON-RPC API", section "Hex value encoding".
  struct qty {
    std::string_view text;
    u256 value;
  };
  const qty good[] = {{"0x41", 65}, {"0x400", 1024}, {"0x0", 0}};
  for (const auto& c : good) {
    INFO(c.text);
    CHECK(chain::rpc::quantity(c.value) == c.text);
    auto v = chain::rpc::parse_quantity(json::value(c.text));
    REQUIRE(v);
    CHECK(*v == c.value);
  }
  CHECK(*chain::rpc::parse_quantity(json::value("0xFF")) == 255);
  CHECK(chain::rpc::quantity(u256::max()) == "0x" + std::string(64, 'f'));
  CHECK(*chain::rpc::parse_quantity(json::value("0x" + std::string(64, 'f'))) == u256::max());
  CHECK(*chain::rpc::parse_quantity_u64(json::value("0xffffffffffffffff")) == UINT64_MAX);

  // Wrong forms: the documentation's "0x" (no digits), "0x0400" (leading zero), "ff" (no prefix);
  // and a non-string, a bad digit, more than 256 bits, more than 64 bits for the u64 form.
  const json::value bad_qty[] = {
      json::value("0x"), json::value("0x0400"), json::value("ff"),   json::value("0x00"),
      json::value(65),   json::value("0xg1"),   json::value("0X41"), json::value("0x1" + std::string(64, '0'))};
  for (const auto& v : bad_qty) {
    INFO(json::serialize(v));
    CHECK(chain::rpc::parse_quantity(v).code() == rpc_errc::bad_quantity);
  }
  CHECK(chain::rpc::parse_quantity_u64(json::value("0x10000000000000000")).code() == rpc_errc::bad_quantity);

  // DATA: "0x41" (one byte, "A"), "0x004200" (three bytes), "0x" (no bytes).
  CHECK(chain::rpc::data(h("41")) == "0x41");
  CHECK(chain::rpc::data(h("004200")) == "0x004200");
  CHECK(chain::rpc::data({}) == "0x");
  CHECK(*chain::rpc::parse_data(json::value("0x004200")) == h("004200"));
  CHECK(chain::rpc::parse_data(json::value("0x"))->empty());
  // Wrong: "0xf0f0f" (odd digits), "004200" (no prefix), a number, a bad digit.
  const json::value bad_data[] = {json::value("0xf0f0f"), json::value("004200"), json::value(1), json::value("0x4z")};
  for (const auto& v : bad_data) {
    INFO(json::serialize(v));
    CHECK(chain::rpc::parse_data(v).code() == rpc_errc::bad_data);
  }
  CHECK(chain::rpc::parse_data_fixed<20>(json::value("0x" + std::string(40, 'a'))));
  CHECK(chain::rpc::parse_data_fixed<20>(json::value("0x" + std::string(42, 'a'))).code() == rpc_errc::bad_data);
}

TEST_CASE("rpc request bodies are JSON-RPC 2.0 requests") {
  // JSON-RPC 2.0 §4; eth_blockNumber and eth_sendRawTransaction as the execution API names them.
  CHECK(chain::rpc::request_body(1, "eth_blockNumber") ==
        R"({"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]})");
  CHECK(chain::rpc::request_body(7, "eth_sendRawTransaction", {chain::rpc::data(h("02c0"))}) ==
        R"({"jsonrpc":"2.0","id":7,"method":"eth_sendRawTransaction","params":["0x02c0"]})");
}

TEST_CASE("rpc responses parse into a result or a node error with revert data") {
  // JSON-RPC 2.0 §7 example: {"jsonrpc": "2.0", "result": 19, "id": 1}.
  {
    auto r = chain::rpc::parse_response(R"({"jsonrpc": "2.0", "result": 19, "id": 1})", 1);
    REQUIRE(r);
    CHECK(r->ok());
    CHECK(r->value()->as_int64() == 19);
  }
  // A null result (eth_getTransactionReceipt of a pending transaction) is a result.
  {
    auto r = chain::rpc::parse_response(R"({"jsonrpc":"2.0","id":3,"result":null})", 3);
    REQUIRE(r);
    CHECK(r->ok());
    CHECK(r->result.is_null());
  }
  // geth's answer to an eth_call that reverts with Error("boom"): code 3, the ABI-encoded
  // Error(string) as DATA (selector 0x08c379a0 = crypto::keccak256("Error(string)")[0..4]).
  const std::string revert =
      "0x08c379a0" + std::string(62, '0') + "20" + std::string(63, '0') + "4" + "626f6f6d" + std::string(56, '0');
  {
    auto r = chain::rpc::parse_response(
        R"({"jsonrpc":"2.0","id":2,"error":{"code":3,"message":"execution reverted: boom","data":")" + revert +
            R"("}})",
        2);
    REQUIRE(r);
    REQUIRE_FALSE(r->ok());
    CHECK(r->error->code == 3);
    CHECK(r->error->message == "execution reverted: boom");
    REQUIRE(r->error->revert_data);
    CHECK(*r->error->revert_data == codec::hex::decode(revert).value());
    CHECK(r->value().code() == rpc_errc::node_error);
    CHECK(r->value().err().message.find("execution reverted: boom") != std::string::npos);
  }
  // The nested form {"data": {"data": DATA, ...}}.
  {
    auto r = chain::rpc::parse_response(
        R"({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"reverted","data":{"message":"x","data":"0xdeadbeef"}}})",
        2);
    REQUIRE(r);
    REQUIRE(r->error->revert_data);
    CHECK(*r->error->revert_data == h("deadbeef"));
  }
  // JSON-RPC 2.0 §7 "non-existent method" (numeric id here), no data: no revert data.
  {
    auto r = chain::rpc::parse_response(
        R"({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": 5})", 5);
    REQUIRE(r);
    CHECK(r->error->code == -32601);
    CHECK(r->error->data.is_null());
    CHECK_FALSE(r->error->revert_data);
  }

  struct bad {
    std::string_view body;
    rpc_errc code;
  };
  const bad cases[] = {
      {"", rpc_errc::bad_json},
      {R"({"jsonrpc":"2.0","id":1,"result":)", rpc_errc::bad_json},
      {"[]", rpc_errc::bad_response},  // a batch
      {R"({"id":1,"result":"0x1"})", rpc_errc::bad_response},
      {R"({"jsonrpc":"1.0","id":1,"result":"0x1"})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","result":"0x1"})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","id":2,"result":"0x1"})", rpc_errc::id_mismatch},
      {R"({"jsonrpc":"2.0","id":"1","result":"0x1"})", rpc_errc::id_mismatch},
      {R"({"jsonrpc":"2.0","id":-1,"result":"0x1"})", rpc_errc::id_mismatch},
      {R"({"jsonrpc":"2.0","id":1})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","id":1,"error":"boom"})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","id":1,"error":{"message":"m"}})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}})", rpc_errc::bad_response},
      {R"({"jsonrpc":"2.0","id":1,"error":{"code":3}})", rpc_errc::bad_response},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    CHECK(chain::rpc::parse_response(c.body, 1).code() == c.code);
  }
}
