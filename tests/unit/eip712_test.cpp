// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <boost/json.hpp>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/eip712/typed_data.hpp"

using namespace enact;
using namespace std::string_view_literals;
namespace json = boost::json;

namespace {

// The key of the EIP-712 reference example (assets/eip-712/Example.js): crypto::keccak256("cow"), whose
// address is 0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826.
Secret cow_key() { return Secret(crypto::keccak256("cow"sv)); }

hash256 h(std::string_view hex) { return codec::hex::decode_fixed<32>(hex).value(); }

// --- documents ------------------------------------------------------------------------------
// EIP-712 §Test cases, the Mail example (assets/eip-712/Example.js).
constexpr std::string_view kMail =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","typ)json"
    R"json(e":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","ty)json"
    R"json(pe":"address"}],"Person":[{"name":"name","type":"string"},{"name":"wallet","type)json"
    R"json(":"address"}],"Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Perso)json"
    R"json(n"},{"name":"contents","type":"string"}]},"primaryType":"Mail","domain":{"name":)json"
    R"json("Ether Mail","version":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCC)json"
    R"json(CcCcCccCcCCCcCcccccccC"},"message":{"from":{"name":"Cow","wallet":"0xCD2a3d9F938)json"
    R"json(E13CD947Ec05AbC7FE734Df8DD826"},"to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBb)json"
    R"json(bBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}})json";
// @metamask/eth-sig-util V4 example with arrays (README "signTypedData" V4 and its test suite),
// including the unused Group type.
constexpr std::string_view kV4Arrays =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","typ)json"
    R"json(e":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","ty)json"
    R"json(pe":"address"}],"Person":[{"name":"name","type":"string"},{"name":"wallets","typ)json"
    R"json(e":"address[]"}],"Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Pe)json"
    R"json(rson[]"},{"name":"contents","type":"string"}],"Group":[{"name":"name","type":"st)json"
    R"json(ring"},{"name":"members","type":"Person[]"}]},"domain":{"name":"Ether Mail","ver)json"
    R"json(sion":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCccc)json"
    R"json(ccccC"},"primaryType":"Mail","message":{"from":{"name":"Cow","wallets":["0xCD2a3)json"
    R"json(d9F938E13CD947Ec05AbC7FE734Df8DD826","0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF)json"
    R"json("]},"to":[{"name":"Bob","wallets":["0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB",)json"
    R"json("0xB0BdaBea57B0BDABeA57b0bdABEA57b0BDabEa57","0xB0B0b0b0b0b0B0000000000000000000)json"
    R"json(00000000"]}],"contents":"Hello, Bob!"}})json";
// Own: nested structs, fixed arrays of structs, 2-D arrays, string[], uint96/int128, full domain.
constexpr std::string_view kNested =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","typ)json"
    R"json(e":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","ty)json"
    R"json(pe":"address"},{"name":"salt","type":"bytes32"}],"Order":[{"name":"maker","type")json"
    R"json(:"Party"},{"name":"legs","type":"Leg[2]"},{"name":"matrix","type":"uint32[][]"},)json"
    R"json({"name":"grid","type":"int8[2][3]"},{"name":"tags","type":"string[]"},{"name":"n)json"
    R"json(once","type":"uint256"}],"Party":[{"name":"wallet","type":"address"},{"name":"as)json"
    R"json(sets","type":"Asset[]"}],"Leg":[{"name":"asset","type":"Asset"},{"name":"amount")json"
    R"json(,"type":"int128"}],"Asset":[{"name":"token","type":"address"},{"name":"id","type)json"
    R"json(":"uint96"}]},"primaryType":"Order","domain":{"name":"Exchange","version":"2","c)json"
    R"json(hainId":42161,"verifyingContract":"0x5FbDB2315678afecb367f032d93F642f64180aa3",")json"
    R"json(salt":"0xf2d857f4a3edcb9b78b4d503bfe733db1e3f6cdc2b7971ee739626c97e86a558"},"mes)json"
    R"json(sage":{"maker":{"wallet":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8","assets":[)json"
    R"json({"token":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","id":1},{"token":"0x90F79b)json"
    R"json(f6EB2c4f870365E785982E1f101E93b906","id":"79228162514264337593543950335"}]},"leg)json"
    R"json(s":[{"asset":{"token":"0x0000000000000000000000000000000000000000","id":0},"amou)json"
    R"json(nt":"-170141183460469231731687303715884105728"},{"asset":{"token":"0xfffffffffff)json"
    R"json(fffffffffffffffffffffffffffff","id":"0x0"},"amount":"170141183460469231731687303)json"
    R"json(715884105727"}],"matrix":[[],[1,2,3],[4294967295]],"grid":[[1,-1],[127,-128],[0,)json"
    R"json(0]],"tags":["a","","ccc"],"nonce":9007199254740991}})json";
// Own: uint8..uint256 and int8..int256 at their bounds, as numbers, decimal and hex strings; bool.
constexpr std::string_view kNumbers =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"chainId","typ)json"
    R"json(e":"uint256"},{"name":"salt","type":"bytes32"}],"Numbers":[{"name":"a","type":"u)json"
    R"json(int8"},{"name":"b","type":"int8"},{"name":"c","type":"int256"},{"name":"d","type)json"
    R"json(":"uint256"},{"name":"e","type":"int40"},{"name":"f","type":"uint64"},{"name":"g)json"
    R"json(","type":"int16[]"},{"name":"flag","type":"bool"},{"name":"off","type":"bool"}]})json"
    R"json(,"primaryType":"Numbers","domain":{"name":"Numbers","chainId":"0x89","salt":"0x0)json"
    R"json(0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"},"message":{"a")json"
    R"json(:255,"b":-128,"c":"-578960446186580977117854925043439539266349923328202820197287)json"
    R"json(92003956564819968","d":"0xffffffffffffffffffffffffffffffffffffffffffffffffffffff)json"
    R"json(ffffffffff","e":"-549755813888","f":"18446744073709551615","g":[-1,0,32767,"-327)json"
    R"json(68","0x7fff"],"flag":true,"off":false}})json";
// Own: bytes1/4/20/32, empty and non-empty bytes, UTF-8 string, bytes[], bytes2[3].
constexpr std::string_view kBytes =
    R"json({"types":{"EIP712Domain":[{"name":"version","type":"string"},{"name":"verifyingC)json"
    R"json(ontract","type":"address"}],"Blob":[{"name":"b1","type":"bytes1"},{"name":"b4",")json"
    R"json(type":"bytes4"},{"name":"b20","type":"bytes20"},{"name":"b32","type":"bytes32"},)json"
    R"json({"name":"empty","type":"bytes"},{"name":"data","type":"bytes"},{"name":"text","t)json"
    R"json(ype":"string"},{"name":"emptyText","type":"string"},{"name":"list","type":"bytes)json"
    R"json([]"},{"name":"fixed","type":"bytes2[3]"}]},"primaryType":"Blob","domain":{"versi)json"
    R"json(on":"7","verifyingContract":"0x0000000000000000000000000000000000000001"},"messa)json"
    R"json(ge":{"b1":"0xff","b4":"0xDEADBEEF","b20":"0x000000000000000000000000000000000000)json"
    R"json(00aa","b32":"0x0102030405060708091011121314151617181920212223242526272829303132")json"
    R"json(,"empty":"0x","data":"0x000102fffe","text":"héllo ☃ 😁","emptyText":"","list":["0)json"
    R"json(x","0x00","0xabcdef"],"fixed":["0x0001","0xffff","0xABcd"]}})json";
// Own: empty arrays of structs, of uint256 and of address[].
constexpr std::string_view kEmptyArrays =
    R"json({"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}],"Batch":[{"name":)json"
    R"json("items","type":"Item[]"},{"name":"ids","type":"uint256[]"},{"name":"nested","typ)json"
    R"json(e":"address[][]"}],"Item":[{"name":"id","type":"uint16"}]},"primaryType":"Batch")json"
    R"json(,"domain":{"chainId":1},"message":{"items":[],"ids":[],"nested":[[]]}})json";
// Own: a recursive struct (Person[] children). ethers refuses recursion; eth-sig-util V4 only.
constexpr std::string_view kRecursive =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"}],"Person":[{"name":"na)json"
    R"json(me","type":"string"},{"name":"children","type":"Person[]"}]},"primaryType":"Pers)json"
    R"json(on","domain":{"name":"Family"},"message":{"name":"Alice","children":[{"name":"Bo)json"
    R"json(b","children":[]},{"name":"Carol","children":[{"name":"Dan","children":[]}]}]}})json";
// Own: primaryType EIP712Domain. eth-sig-util only (ethers has no such case).
constexpr std::string_view kDomainOnly =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","typ)json"
    R"json(e":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","ty)json"
    R"json(pe":"address"}]},"primaryType":"EIP712Domain","domain":{"name":"Ether Mail","ver)json"
    R"json(sion":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCccc)json"
    R"json(ccccC"},"message":{}})json";
// Own: an EIP712Domain without members.
constexpr std::string_view kEmptyDomain =
    R"json({"types":{"EIP712Domain":[],"Ping":[{"name":"n","type":"uint8"}]},"primaryType":)json"
    R"json("Ping","domain":{},"message":{"n":1}})json";
// Own: the base document of the bad-input table below.
constexpr std::string_view kWallets =
    R"json({"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"chainId","typ)json"
    R"json(e":"uint256"}],"Owner":[{"name":"name","type":"string"},{"name":"wallets","type")json"
    R"json(:"Wallet[]"}],"Wallet":[{"name":"addr","type":"address"},{"name":"balance","type)json"
    R"json(":"uint8"},{"name":"delta","type":"int8"},{"name":"tag","type":"bytes4"},{"name")json"
    R"json(:"data","type":"bytes"},{"name":"ok","type":"bool"},{"name":"slots","type":"uint)json"
    R"json(16[2]"}]},"primaryType":"Owner","domain":{"name":"Test","chainId":1},"message":{)json"
    R"json("name":"Alice","wallets":[{"addr":"0x0000000000000000000000000000000000000001",")json"
    R"json(balance":0,"delta":-1,"tag":"0x00000000","data":"0x","ok":false,"slots":[0,65535)json"
    R"json(]},{"addr":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826","balance":255,"delta":12)json"
    R"json(7,"tag":"0xcafebabe","data":"0x00ff","ok":true,"slots":["1","0x2"]}]}})json";

}  // namespace

TEST_CASE("eip712 digests, domain separators and signatures match the references") {
  struct case_ {
    const char* name;
    std::string_view doc;
    std::string_view digest;
    std::string_view domain_separator;
    std::string_view signature;  // by crypto::keccak256("cow"), RFC 6979
  };
  // Digests: EIP-712 for kMail; otherwise @metamask/eth-sig-util 8.2.0
  // TypedDataUtils.eip712Hash(data, 'V4'), equal to ethers 6.17.0 TypedDataEncoder.hash(domain,
  // types without EIP712Domain, message) for every case but kRecursive, kDomainOnly and kV4Arrays
  // (which ethers refuses: recursion, no message type, unused type; kV4Arrays without Group
  // gives the same digest in ethers). Signatures: eth-sig-util signTypedData({version: 'V4'}).
  const case_ cases[] = {
      {"mail", kMail, "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2",
       "0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f",
       // EIP-712 Example.js: v 28, r 0x4355c4…, s 0x072999….
       "0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936d304c153f6443dfa0"
       "5f40ff007d72911b6f72307f996231605b915621c"},
      {"v4 arrays", kV4Arrays, "0xa85c2e2b118698e88db68a8105b794a8cc7cec074e89ef991cb4f5f533819cc2",
       "0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f",
       "0x65cbd956f2fae28a601bebc9b906cea0191744bd4c4247bcd27cd08f8eb6b71c78efdf7a31dc9abee78f49229"
       "2721f362d296cf86b4538e07b51303b67f749061b"},
      {"nested", kNested, "0xf4a3c1f3edfeee2722e2aae450c8d785d33d9894d2fbac9c920a47762372970b",
       "0xf3a05d4ac6afe841d552c41b7fd2d94aaa950adae12357f5815d86ad13e5d37b",
       "0xc4979f346c35e8be9d5feb171d540b3f3e88228e9f97b9202e6bbff498da34a75ab7661170bcbda6fa55dddd2"
       "dd636dc63035b61d21e1f563343e0f365dd62441b"},
      {"numbers", kNumbers, "0x77174a592d3915b57a522b36fd9b0cc794714c300a5827d89e2226c439aa5bf2",
       "0x2561697f3de1e502dcc47d3943b0edf80adb9fc81efe758beb92949623c78e63",
       "0x3064848e858c13b9f7ff39d78fc42cf747403512c5e5dfbfd98b6982fdd692ed4500669c42b0dbdc96017902b"
       "666c8a3203bfa62f5832b566c30ca58841dafcd1b"},
      {"bytes", kBytes, "0x09ee2378ecf403f24834c8d019399c91219444ffc6cbd535e635caf96c7d14f4",
       "0x316a599028180001af86bbc43d4e123001ffc073aecb05d9f130dec84270ad3c",
       "0xe1c35fe2ce55f57c4979cdb2dca502f8995d371199812736f9d49ee1d7c9b6273c18023d2150e7267b9a4066a"
       "658627824c58f78977f8e3e83dc2482829725081c"},
      {"empty arrays", kEmptyArrays, "0x865e14d418e115b55bb006ee2d0307129271f9eb300fb9e475adbb249c444607",
       "0x2d9145f2f941cb14d4c738374c6ebde69c75a737e93da5905ee040bab57e46a8",
       "0xf92b1c54bc24955848720c5224583491c7398dfbad3db849b67be123614b18a210f442d97f3cd4adb83f3d447"
       "d64d5d683a7e965b1b0542b522eb8a7236d61d91c"},
      {"recursive", kRecursive, "0xebaf44eae43a0fe27d6eb5028055a090e46c16a285fd5168dd404dee4786df24",
       "0xa9f6180850c182ce540ab8db1f40702f657bc68b800cd418c0732057b93f1809",
       "0x6c27216317969cdbb4b3233352dd4e25903185879d9e4855e66062a25ad59f4565ea05fb31a8d12a541716ab5"
       "671b39065d17da9bc63469eb8bb5ef3f045c1c81b"},
      {"domain only", kDomainOnly, "0xaa83c70305ec6c131e7a88f258c40813447bec8b9bcef94e5479603d9959da07",
       "0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f",
       "0xdfda12b91cfbf84b1dd7c2554847444221520ed6cf89888fcf252a57ebf7f2282da35f31a0a4b7770b2ee50b9"
       "95ccb1adc2b30974cb844692d58446ff1506c6b1b"},
      {"empty domain", kEmptyDomain, "0xfede542c036db0ad355221b4437e5c26dd7c9abe5ea4af003c49ecb49977979d",
       "0x6192106f129ce05c9075d319c1fa6ea9b3ae37cbd0c1ef92e2be7137bb07baa1",
       "0x47466d9713d550ec0d50d77fde8febc123e4acc957ea815914e2bf40101243681990d2841f7ebbf2821acc8e2"
       "052d23c5503d9459afa80517ecb507eb94ebcbc1c"},
      {"wallets", kWallets, "0x106145443e66e50f147b2550f74193f2fd5c164ff33177577ae4c48387223c74",
       "0x330296c1ee57897aba3923af747e365907189fcd0bf5fedf7087fa9dd9d1d2db",
       "0x88e89fc9792fe28864bd50259760fff0da6be57ad09f8d638f19680a23c5c1c668d7ebfed4deab0088e6f6d2d"
       "7a20d68e976dc4813276a97e4fa366ec1ebf1aa1b"},
  };
  const Secret key = cow_key();
  const address cow = parse_address("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826").value();
  for (const auto& c : cases) {
    const std::string name(c.name);
    CAPTURE(name);
    auto td = eip712::parse(c.doc);
    REQUIRE_MESSAGE(td, (td ? "" : td.err().message));
    auto d = eip712::digest(*td);
    REQUIRE_MESSAGE(d, (d ? "" : d.err().message));
    CHECK(*d == h(c.digest));
    CHECK(eip712::domain_separator(*td).value() == h(c.domain_separator));
    auto sig = eip712::sign(*td, key);
    REQUIRE(sig);
    CHECK(codec::hex::encode_prefixed(sig->to_bytes()) == c.signature);
    const auto sig_bytes = codec::hex::decode(c.signature).value();
    CHECK(eip712::recover(*td, sig_bytes).value() == cow);
    // to_json gives back a document with the same digest.
    CHECK(eip712::digest(eip712::from_json(eip712::to_json(*td)).value()).value() == h(c.digest));
  }
}

TEST_CASE("eip712 encodeType, typeHash, encodeData and hashStruct of the parts") {
  struct case_ {
    std::string_view doc;
    std::string_view type;
    std::string_view encoded_type;
    std::string_view type_hash;
  };
  // encodeType and hashType from @metamask/eth-sig-util 8.2.0 TypedDataUtils; the Mail and Person
  // values also appear in EIP-712 Example.js.
  const case_ cases[] = {
      {kMail, "Mail", "Mail(Person from,Person to,string contents)Person(string name,address wallet)",
       "0xa0cedeb2dc280ba39b857546d74f5549c3a1d7bdc2dd96bf881f76108e23dac2"},
      {kMail, "Person", "Person(string name,address wallet)",
       "0xb9d8c78acf9b987311de6c7b45bb6a9c8e1bf361fa7fd3467a2163f994c79500"},
      {kNested, "Order",
       "Order(Party maker,Leg[2] legs,uint32[][] matrix,int8[2][3] grid,string[] tags,uint256 "
       "nonce)Asset(address token,uint96 id)Leg(Asset asset,int128 amount)Party(address "
       "wallet,Asset[] assets)",
       "0x9a5251f68c2d057e283e91036198355e1f606495ae6a0a5987143009b02a73da"},
      {kNested, "Party", "Party(address wallet,Asset[] assets)Asset(address token,uint96 id)",
       "0xafdb133e689b3ecf3025caadd6dd6325a9f54d2af0e8b452c3481052fdcfdfa4"},
      {kRecursive, "Person", "Person(string name,Person[] children)",
       "0x09e90e65c3ea0806bb603eedf7d10097c2ede8feca6d0e0c616688493e6abb14"},
      {kV4Arrays, "Mail", "Mail(Person from,Person[] to,string contents)Person(string name,address[] wallets)",
       "0x4bd8a9a2b93427bb184aca81e24beb30ffa3c747e2a33d4225ec08bf12e2e753"},
      {kV4Arrays, "Group", "Group(string name,Person[] members)Person(string name,address[] wallets)",
       "0x1d953c52160a9018dbb518700e05da47418ac2b6044f0c044f84c15a80103107"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type);
    const auto td = eip712::parse(c.doc).value();
    CHECK(eip712::encode_type(td.types, c.type).value() == c.encoded_type);
    CHECK(eip712::type_hash(td.types, c.type).value() == h(c.type_hash));
  }

  // hashStruct values from eth-sig-util TypedDataUtils.hashStruct (Mail: EIP-712 Example.js).
  const auto mail = eip712::parse(kMail).value();
  CHECK(eip712::hash_struct(mail.types, "Mail", mail.message).value() ==
        h("0xc52c0ee5d84264471806290a3f2c4cecfc5490626bf912d01f240d7a274b371e"));
  CHECK(eip712::hash_struct(mail.types, "Person", mail.message.at("from")).value() ==
        h("0xfc71e5fa27ff56c350aa531bc129ebdf613b772b6604664f5d8dbe21b85eb0c8"));
  // encodeData: typeHash ‖ hashStruct(from) ‖ hashStruct(to) ‖ crypto::keccak256(contents).
  CHECK(codec::hex::encode_prefixed(eip712::encode_data(mail.types, "Mail", mail.message).value()) ==
        "0xa0cedeb2dc280ba39b857546d74f5549c3a1d7bdc2dd96bf881f76108e23dac2fc71e5fa27ff56c350aa531b"
        "c129ebdf613b772b6604664f5d8dbe21b85eb0c8cd54f074a4af31b4411ff6a60c9719dbd559c221c8ac3492d9"
        "d872b041d703d1b5aadf3154a261abdd9086fc627b61efca26ae5702701d05cd2305f7c52a2fc8");
  const auto nested = eip712::parse(kNested).value();
  CHECK(eip712::hash_struct(nested.types, "Order", nested.message).value() ==
        h("0x0fde79f1a844dbd61a8e469264053b4cbe61ebe59194aae536e25906c4ffaca3"));
  const auto rec = eip712::parse(kRecursive).value();
  CHECK(eip712::hash_struct(rec.types, "Person", rec.message).value() ==
        h("0xa57188428acfc5767392a3b2c8980eda968d127256e476fbfb6e4ea29a5abbc9"));
  CHECK(eip712::encode_type(mail.types, "Nope").code() == eip712_errc::unknown_type);
}

namespace {
/// The digest of `doc` after `edit` is applied to its parsed JSON.
result<hash256> digest_after(std::string_view doc, const std::function<void(json::object&)>& edit,
                             eip712::extra_fields extra = eip712::extra_fields::ignore) {
  json::value v = json::parse(doc);
  edit(v.as_object());
  ENACT_TRY(const auto td, eip712::from_json(v));
  return eip712::digest(td, extra);
}

/// An edit of a valid document that makes it invalid, and the error it must give.
struct bad_edit {
  const char* what;
  std::function<void(json::object&)> edit;
  eip712_errc code;
  std::string_view message;  // exact, or empty when only the code is checked
};

/// Each edit of `doc` must make its digest fail with the edit's code and message.
void check_bad_edits(std::string_view doc, const std::vector<bad_edit>& cases) {
  for (const auto& c : cases) {
    const std::string what(c.what);
    CAPTURE(what);
    auto r = digest_after(doc, c.edit);
    REQUIRE(!r);
    CHECK(r.code() == c.code);
    if (!c.message.empty())
      CHECK(r.err().message == c.message);
  }
}
}  // namespace

TEST_CASE("eip712 equivalent spellings give the same digest") {
  const hash256 mail = h("0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2");
  // Undeclared message keys are ignored, as ethers and eth-sig-util ignore them (both give this
  // digest for the Mail example with message.extra and message.from.nickname added).
  CHECK(digest_after(kMail, [](json::object& d) {
          d["message"].as_object()["extra"] = "x";
          d["message"].as_object()["from"].as_object()["nickname"] = "c";
        }).value() == mail);
  // ... unless the caller asks for them to be refused.
  auto strict = digest_after(
      kMail, [](json::object& d) { d["message"].as_object()["from"].as_object()["nickname"] = "c"; },
      eip712::extra_fields::reject);
  CHECK(strict.code() == eip712_errc::extra_field);
  CHECK(strict.err().message == "message.from.nickname: not a member of 'Person'");
  // Integers as numbers, decimal or hex strings; addresses in lowercase; extra top-level keys.
  CHECK(digest_after(kMail, [](json::object& d) {
          d["domain"].as_object()["chainId"] = "0x1";
          d["message"].as_object()["to"].as_object()["wallet"] = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
          d["metadata"] = "ignored";
        }).value() == mail);
  CHECK(digest_after(kMail, [](json::object& d) { d["domain"].as_object()["chainId"] = "1"; }).value() == mail);
  CHECK(digest_after(kMail, [](json::object& d) { d["domain"].as_object()["chainId"] = 1.0; }).value() == mail);
  // Object key order does not matter; member order in types does.
  CHECK(digest_after(kMail, [](json::object& d) {
          auto& from = d["message"].as_object()["from"].as_object();
          json::object swapped{{"wallet", from["wallet"]}, {"name", from["name"]}};
          from = swapped;
        }).value() == mail);
  CHECK(digest_after(kMail, [](json::object& d) {
          auto& person = d["types"].as_object()["Person"].as_array();
          std::swap(person[0], person[1]);
        }).value() != mail);
}

TEST_CASE("eip712 rejects bad values with the path and a typed error") {
  auto wallet = [](json::object& d, size_t i) -> json::object& {
    return d["message"].as_object()["wallets"].as_array()[i].as_object();
  };
  const std::vector<bad_edit> cases = {
      {"uint8 above range", [&](json::object& d) { wallet(d, 1)["balance"] = 256; }, eip712_errc::out_of_range,
       "message.wallets[1].balance: uint8 out of range"},
      {"uint8 negative", [&](json::object& d) { wallet(d, 1)["balance"] = -1; }, eip712_errc::out_of_range,
       "message.wallets[1].balance: uint8 out of range"},
      {"uint8 hex above range", [&](json::object& d) { wallet(d, 0)["balance"] = "0x100"; }, eip712_errc::out_of_range,
       "message.wallets[0].balance: uint8 out of range"},
      {"fractional number", [&](json::object& d) { wallet(d, 0)["balance"] = 1.5; }, eip712_errc::out_of_range, ""},
      {"number at 2^53", [&](json::object& d) { wallet(d, 0)["balance"] = uint64_t{1} << 53; },
       eip712_errc::out_of_range, ""},
      {"int8 below range", [&](json::object& d) { wallet(d, 0)["delta"] = -129; }, eip712_errc::out_of_range,
       "message.wallets[0].delta: int8 out of range"},
      {"int8 above range", [&](json::object& d) { wallet(d, 0)["delta"] = 128; }, eip712_errc::out_of_range, ""},
      {"int8 negative hex", [&](json::object& d) { wallet(d, 0)["delta"] = "-0x7f"; }, eip712_errc::bad_value,
       "message.wallets[0].delta: a negative value must be written in decimal"},
      {"int8 minus sign alone", [&](json::object& d) { wallet(d, 0)["delta"] = "-"; }, eip712_errc::bad_value, ""},
      {"int8 plus sign", [&](json::object& d) { wallet(d, 0)["delta"] = "+1"; }, eip712_errc::bad_value, ""},
      {"int8 space", [&](json::object& d) { wallet(d, 0)["delta"] = " 1"; }, eip712_errc::bad_value, ""},
      {"uint256 above 2^256-1",
       [](json::object& d) {
         d["domain"].as_object()["chainId"] = "0x10000000000000000000000000000000000000000000000000000000000000000";
       },
       eip712_errc::out_of_range, "domain.chainId: uint256 out of range"},
      {"number with junk", [&](json::object& d) { wallet(d, 0)["balance"] = "12a"; }, eip712_errc::bad_value, ""},
      {"empty number", [&](json::object& d) { wallet(d, 0)["balance"] = ""; }, eip712_errc::bad_value, ""},
      {"number as bool", [&](json::object& d) { wallet(d, 0)["balance"] = true; }, eip712_errc::bad_value, ""},
      {"null", [&](json::object& d) { wallet(d, 0)["balance"] = nullptr; }, eip712_errc::bad_value,
       "message.wallets[0].balance: null is not a value"},
      {"bytes4 too short", [&](json::object& d) { wallet(d, 0)["tag"] = "0x010203"; }, eip712_errc::bad_value,
       "message.wallets[0].tag: expected 4 bytes for 'bytes4', got 3"},
      {"bytes4 no prefix", [&](json::object& d) { wallet(d, 0)["tag"] = "01020304"; }, eip712_errc::bad_value, ""},
      {"bytes4 bad digit", [&](json::object& d) { wallet(d, 0)["tag"] = "0x0102030g"; }, eip712_errc::bad_value, ""},
      {"bytes odd length", [&](json::object& d) { wallet(d, 0)["data"] = "0x123"; }, eip712_errc::bad_value, ""},
      {"bytes as number", [&](json::object& d) { wallet(d, 0)["data"] = 5; }, eip712_errc::bad_value, ""},
      {"short address", [&](json::object& d) { wallet(d, 0)["addr"] = "0x1234"; }, eip712_errc::bad_value, ""},
      {"address checksum",
       [&](json::object& d) { wallet(d, 1)["addr"] = "0xcD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"; },
       eip712_errc::bad_value, ""},
      {"address as number", [&](json::object& d) { wallet(d, 0)["addr"] = 1; }, eip712_errc::bad_value, ""},
      {"bool as string", [&](json::object& d) { wallet(d, 0)["ok"] = "true"; }, eip712_errc::bad_value, ""},
      {"string as number", [](json::object& d) { d["message"].as_object()["name"] = 5; }, eip712_errc::bad_value,
       "message.name: expected a string"},
      {"fixed array length", [&](json::object& d) { wallet(d, 1)["slots"] = json::array{1}; }, eip712_errc::bad_value,
       "message.wallets[1].slots: expected 2 elements for 'uint16[2]', got 1"},
      {"array element out of range",
       [&](json::object& d) {
         wallet(d, 1)["slots"] = json::array{1, 65536};
       },
       eip712_errc::out_of_range, "message.wallets[1].slots[1]: uint16 out of range"},
      {"array as object", [](json::object& d) { d["message"].as_object()["wallets"] = json::object{}; },
       eip712_errc::bad_value, ""},
      {"struct as string", [](json::object& d) { d["message"].as_object()["wallets"].as_array()[0] = "x"; },
       eip712_errc::bad_value, ""},
      {"missing member", [&](json::object& d) { wallet(d, 0).erase("balance"); }, eip712_errc::missing_field,
       "message.wallets[0].balance: missing (member of 'Wallet')"},
      {"missing domain member", [](json::object& d) { d["domain"].as_object().erase("chainId"); },
       eip712_errc::missing_field, "domain.chainId: missing (member of 'EIP712Domain')"},
      {"undeclared domain key", [](json::object& d) { d["domain"].as_object()["version"] = "1"; },
       eip712_errc::extra_field, "domain.version: not a member of types.EIP712Domain"},
  };
  REQUIRE(eip712::digest(eip712::parse(kWallets).value()));
  check_bad_edits(kWallets, cases);
}

TEST_CASE("eip712 rejects bad documents and type definitions") {
  auto set_member_type = [](json::object& d, std::string_view type) {
    d["types"].as_object()["Wallet"].as_array()[1].as_object()["type"] = type;
  };
  auto add_type = [](json::object& d, std::string_view name, json::array members) {
    d["types"].as_object()[name] = std::move(members);
  };
  auto m = [](std::string_view name, std::string_view type) {
    return json::object{{"name", name}, {"type", type}};
  };
  std::vector<bad_edit> cases = {
      {"missing types", [](json::object& d) { d.erase("types"); }, eip712_errc::missing_field, "types: missing"},
      {"missing primaryType", [](json::object& d) { d.erase("primaryType"); }, eip712_errc::missing_field, ""},
      {"missing domain", [](json::object& d) { d.erase("domain"); }, eip712_errc::missing_field, ""},
      {"missing message", [](json::object& d) { d.erase("message"); }, eip712_errc::missing_field, ""},
      {"types not an object", [](json::object& d) { d["types"] = json::array{}; }, eip712_errc::bad_json, ""},
      {"member not {name, type}",
       [](json::object& d) { d["types"].as_object()["Wallet"].as_array()[0] = "address addr"; }, eip712_errc::bad_json,
       "types.Wallet[0]: expected {\"name\": string, \"type\": string}"},
      {"primaryType not a string", [](json::object& d) { d["primaryType"] = 1; }, eip712_errc::bad_json, ""},
      {"primaryType undefined", [](json::object& d) { d["primaryType"] = "Ownr"; }, eip712_errc::unknown_type,
       "primaryType: unknown type 'Ownr'"},
      {"domain not an object", [](json::object& d) { d["domain"] = "x"; }, eip712_errc::bad_json, ""},
      {"message not an object", [](json::object& d) { d["message"] = json::array{}; }, eip712_errc::bad_json, ""},
      {"undefined struct",
       [&](json::object& d) {
         add_type(d, "Mail", {m("from", "Persn"), m("body", "string")});
       },
       eip712_errc::unknown_type, "types.Mail: unknown type 'Persn' (member 'from')"},
      {"duplicate member",
       [&](json::object& d) {
         add_type(d, "Pair", {m("a", "uint8"), m("a", "uint16")});
       },
       eip712_errc::bad_type, "types.Pair: duplicate member 'a'"},
      {"bad member name", [&](json::object& d) { add_type(d, "Pair", {m("a b", "uint8")}); }, eip712_errc::bad_type,
       ""},
      {"struct named like an atomic type", [&](json::object& d) { add_type(d, "uint256", {m("a", "uint8")}); },
       eip712_errc::bad_type, ""},
      {"struct name with a dash", [&](json::object& d) { add_type(d, "Foo-Bar", {m("a", "uint8")}); },
       eip712_errc::bad_type, ""},
      {"no EIP712Domain", [](json::object& d) { d["types"].as_object().erase("EIP712Domain"); },
       eip712_errc::missing_field, "types.EIP712Domain: missing"},
      {"unknown domain member",
       [&](json::object& d) {
         add_type(d, "EIP712Domain", {m("name", "string"), m("app", "string")});
       },
       eip712_errc::bad_type, ""},
      {"domain member of the wrong type",
       [&](json::object& d) { add_type(d, "EIP712Domain", {m("chainId", "uint64")}); }, eip712_errc::bad_type, ""},
      {"domain members out of order",
       [&](json::object& d) {
         add_type(d, "EIP712Domain", {m("chainId", "uint256"), m("name", "string")});
       },
       eip712_errc::bad_type, ""},
      {"struct containing itself", [&](json::object& d) { add_type(d, "Node", {m("next", "Node")}); },
       eip712_errc::cyclic_type,
       "types.Node: cyclic type (contains itself through Node.next with no dynamic array on the "
       "way)"},
      {"cycle through two structs",
       [&](json::object& d) {
         add_type(d, "A", {m("b", "B")});
         add_type(d, "B", {m("a", "A[2]")});
       },
       eip712_errc::cyclic_type, ""},
  };
  // Member types that do not parse, each given to the Wallet's second member: atomic types that do
  // not exist (no width, a width off the 8-bit grid or out of range, a leading zero, a space), and
  // malformed array dimensions (zero or zero-led length, unclosed or stray bracket, not a number,
  // no element type).
  const auto add_bad_member_types = [&](std::initializer_list<const char*> types, eip712_errc code) {
    for (const char* type : types)
      cases.push_back({type, [&set_member_type, type](json::object& d) { set_member_type(d, type); }, code, ""});
  };
  add_bad_member_types({"uint", "uint7", "uint264", "uint08", "bytes0", "bytes33", "uint8 "},
                       eip712_errc::unknown_type);
  add_bad_member_types({"uint8[0]", "uint8[01]", "uint8[2", "uint8]", "uint8[x]", "[]"}, eip712_errc::bad_type);
  check_bad_edits(kWallets, cases);

  // Text that is not a JSON object.
  for (std::string_view text : {""sv, "{"sv, "[]"sv, "{\"types\": }"sv, "\"x\""sv}) {
    CAPTURE(text);
    CHECK(eip712::parse(text).code() == eip712_errc::bad_json);
  }
}

TEST_CASE("eip712 accepts recursion through dynamic arrays and bounds the nesting") {
  // A cycle broken by a dynamic array has finite values (kRecursive); so does a cycle whose
  // dynamic dimension is inside a fixed one.
  auto ok = digest_after(kWallets, [](json::object& d) {
    d["types"].as_object()["Tree"] = json::array{json::object{{"name", "kids"}, {"type", "Tree[][2]"}}};
  });
  CHECK(ok);
  // Nesting deeper than kMaxDepth is refused, not followed until the stack runs out.
  json::value deep = json::object{{"name", "leaf"}, {"children", json::array{}}};
  for (size_t i = 0; i < eip712::kMaxDepth; ++i)
    deep = json::object{{"name", "n"}, {"children", json::array{deep}}};
  json::value doc = json::parse(kRecursive);
  doc.as_object()["message"] = deep;
  auto td = eip712::from_json(doc);
  REQUIRE(td);
  CHECK(eip712::digest(*td).code() == eip712_errc::too_deep);
  // parse() bounds the JSON nesting itself.
  std::string text(200, '[');
  CHECK(eip712::parse(text).code() == eip712_errc::bad_json);
}

TEST_CASE("eip712 recover reports signatures that are not 65 bytes") {
  const auto td = eip712::parse(kMail).value();
  const bytes short_sig(64, 1);
  CHECK(eip712::recover(td, short_sig).code() == secp256k1_errc::bad_signature_length);
  // The EIP's signature over a changed message recovers some other address.
  const auto sig = codec::hex::decode(
                       "0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936"
                       "d304c153f6443dfa05f40ff007d72911b6f72307f996231605b915621c")
                       .value();
  auto changed = json::parse(kMail);
  changed.as_object()["message"].as_object()["contents"] = "Hello, Bub!";
  auto r = eip712::recover(eip712::from_json(changed).value(), sig);
  REQUIRE(r);
  CHECK(*r != parse_address("0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826").value());
}
