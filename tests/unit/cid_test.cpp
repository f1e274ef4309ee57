// SPDX-License-Identifier: Apache-2.0
#include "support.hpp"

#include <string>
#include <string_view>

#include "enact/codec/base32.hpp"
#include "enact/codec/base58.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/sha2.hpp"
#include "enact/ipfs/cid.hpp"

using namespace enact;
using namespace std::string_view_literals;

namespace {
/// Test content: byte i is (i * 31 + 7) % 256, so every size is a prefix of the largest.
bytes make_content(size_t n) {
  bytes b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = static_cast<uint8_t>(i * 31 + 7);
  return b;
}
constexpr size_t kChunk = 262144;
}  // namespace

TEST_CASE("CIDs of files match ipfs add (v0) and ipfs add --cid-version=1 (v1)") {
  struct case_ {
    size_t size;
    std::string_view v0;
    std::string_view v1;
  };
  // ipfs-only-hash 4.0.0 (ipfs-unixfs-importer 7.0.3): Hash.of(buf) and
  // Hash.of(buf, {cidVersion: 1, rawLeaves: true}) over make_content(size).
  const case_ cases[] = {
      {0, "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"sv,
       "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"sv},
      {1, "QmXC9WjuLo7EfydBdbWyvpGif62nrxbDCX2vcz9ZqLTQvV"sv,
       "bafkreigkgwdvr5wspzwpiutssn4xpj2i7wedshnwphhnu7ohx4pqaxxipe"sv},
      {11, "Qmb4wTfDiybnyusDWHeomm3ocCpXnFC37MiJ4uSvQn9Re3"sv,
       "bafkreifr5ibxuwrafdc7vjpltbyiijhrvr4jm4yvfbyrgqpsg3mmdhfl2e"sv},
      {kChunk - 1, "QmY3FUdbCb7Kc76TszyrGk3hkewqmt7fiCVKgXZg2sr4j8"sv,
       "bafkreig7abh4ml4jk6iylhvnfwkcbg23bjtsedukqquj54xn6fwj25wr6u"sv},
      {kChunk, "QmVV5RrHAR5ZerjbGLJSDXCBjkiR1DraddGdvKRAowDJvA"sv,
       "bafkreigtb2zed6k6pq34amzfdj4ovylbble3alojsysuiikydagtlammdm"sv},
      {kChunk + 1, "QmS7fy4bE586ZCgYuxrdNEhggP1Cm5FBuZaqmgtfSqFizr"sv,
       "bafybeif4z4ikxldcsjhv2l4sxmk57abnwjkwpa57gopqjvdhkyxddhmzf4"sv},
      {5 * 1024 * 1024, "QmWTU5G9qvw2XteMP5FJ81iVXaWpTC5f1k4a8e8rrHnQ23"sv,
       "bafybeidy6l4im7uyntolcrg2fmanaqik3y4ndeyfvhckgd4vzg3pqa2njq"sv},
      // 174 leaves fill one node; one more byte needs a second level.
      {174 * kChunk, "QmNPiCxWYYb9VhwtSdter7P57Yt3Lwc1m3mvFwp9fDoCq1"sv,
       "bafybeicd42f2zcidotwsoitc7yom627eeycmsnncaydllcognowm7ok5yu"sv},
      {174 * kChunk + 1, "QmQ7WSZzmsnaQuBHtVvLTbG2168kggQCHYXbA9wudKQ3ss"sv,
       "bafybeicwdxbb76mvui4baybplblhw2574qsiivkhtm3vdukwto3g4hd7vm"sv},
      {175 * kChunk + 7, "QmZrnmwmyXDbwAMiunrLN3CvY5UbuDgM76CpK2U3XuG4mZ"sv,
       "bafybeidhd33diiy7g2z4eql7t6iuwsaighnem4vuakofjuuzkmlux57dye"sv},
  };
  const bytes content = make_content(175 * kChunk + 7);
  for (const auto& c : cases) {
    const bytes_view file = bytes_view(content).first(c.size);
    const ipfs::cid v0 = ipfs::cid_v0_of(file);
    const ipfs::cid v1 = ipfs::cid_v1_of(file);
    CHECK_MESSAGE(v0.to_string() == c.v0, c.size);
    CHECK_MESSAGE(v1.to_string() == c.v1, c.size);
    CHECK(ipfs::cid_of(file) == c.v0);
    CHECK(v0.version == 0);
    CHECK(v0.codec == ipfs::kCodecDagPb);
    CHECK(v1.version == 1);
    CHECK(v1.codec == (c.size <= kChunk ? ipfs::kCodecRaw : ipfs::kCodecDagPb));
  }
}

TEST_CASE("CID of \"hello world\"") {
  // ipfs-only-hash 4.0.0; the v0 value is also what `ipfs add` prints for the 11 bytes.
  const auto text = as_bytes("hello world");
  CHECK(ipfs::cid_of(text) == "Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD");
  CHECK(ipfs::cid_v1_of(text).to_string() == "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e");
  // The leaf is PBNode{Data: UnixFS{Type: File, Data: "hello world", filesize: 11}}.
  const bytes node = *codec::hex::decode(
      "0a11080212"
      "0b"
      "68656c6c6f20776f726c64"
      "180b");
  CHECK(ipfs::cid_v0_of(text).digest() == crypto::sha256(node));
  // A raw-leaf v1 CID is the sha2-256 of the bytes themselves.
  CHECK(ipfs::cid_v1_of(text).digest() == crypto::sha256(text));
}

TEST_CASE("CID parse and format round-trip") {
  const std::string_view texts[] = {
      "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"sv,
      "Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD"sv,
      "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e"sv,
      "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"sv,
      "bafybeicd42f2zcidotwsoitc7yom627eeycmsnncaydllcognowm7ok5yu"sv,
  };
  for (const auto t : texts) {
    auto c = ipfs::parse(t);
    REQUIRE_MESSAGE(c, t);
    CHECK(c->to_string() == t);
    auto again = ipfs::from_bytes(c->to_bytes());
    REQUIRE(again);
    CHECK(*again == *c);
  }
  // Binary forms from js `cids` 1.1.9.
  auto v0 = ipfs::parse("Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD");
  CHECK(codec::hex::encode(v0->to_bytes()) == "1220f852c7fa62f971817f54d8a80dcd63fcf7098b3cbde9ae8ec1ee449013ec5db0");
  auto v1 = ipfs::parse("bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e");
  CHECK(codec::hex::encode(v1->to_bytes()) ==
        "01551220b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
  CHECK(v1->codec == ipfs::kCodecRaw);
  // Multibase base58btc ('z') is accepted for v1 and means the same CID (js `cids` 1.1.9).
  auto z = ipfs::parse("zb2rhj7crUKTQYRGCRATFaQ6YFLTde2YzdqbbhAASkL9uRDXn");
  REQUIRE(z);
  CHECK(*z == *v1);
  CHECK(z->to_string() == "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e");
}

TEST_CASE("same_content links a CIDv0 to its CIDv1 form") {
  const auto v0 = *ipfs::parse("Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD");
  // CID("Qmf4…").toV1().toString('base32') in js `cids` 1.1.9.
  const auto v1 = *ipfs::parse("bafybeihykld7uyxzogax6vgyvag42y7464eywpf55gxi5qpoisibh3c5wa");
  CHECK(v1.version == 1);
  CHECK(v1.codec == ipfs::kCodecDagPb);
  CHECK(ipfs::same_content(v0, v1));
  CHECK(ipfs::same_content(v1, v0));
  CHECK(!(v0 == v1));
  // Same digest, other codec: a raw block is not the dag-pb node.
  ipfs::cid raw = v1;
  raw.codec = ipfs::kCodecRaw;
  CHECK(!ipfs::same_content(v0, raw));
  // ipfs add --cid-version=1 uses raw leaves, so its CID names different bytes.
  const auto text = as_bytes("hello world");
  CHECK(!ipfs::same_content(ipfs::cid_v0_of(text), ipfs::cid_v1_of(text)));
  CHECK(ipfs::same_content(ipfs::cid_v0_of(text), v0));
}

TEST_CASE("CID parse rejects malformed input with a typed error") {
  // b + base32 of hand-built binary CIDs.
  const auto b32 = [](std::string_view hex) {
    return "b" + codec::base32::encode_lower_nopad(*codec::hex::decode(hex));
  };
  const std::string digest = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";
  struct bad {
    std::string in;
    cid_errc code;
  };
  const bad cases[] = {
      {"", cid_errc::bad_multibase},
      {std::string(300, 'b'), cid_errc::too_long},
      {"f01551220" + digest, cid_errc::bad_multibase},  // base16 multibase: not accepted
      {"BAFKREIFZJUT3TE2NHYEKKLSS27NH3K72YSCO7Y32KOAO5EEI66WOF36N5E", cid_errc::bad_multibase},
      {"Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyf", cid_errc::bad_length},  // 45 chars
      {"Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfDD", cid_errc::bad_length},
      {"Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyf0", cid_errc::bad_encoding},
      // 46 base58 characters that decode to 0x12 0x21 ‖ 32 zero bytes: a 33-byte digest claim.
      {"QmfZy5bvk7a3DQAjCbGNtmrPXWkyVvPrdnZMyBZ5q5ieKH", cid_errc::bad_length},
      {"bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5E", cid_errc::bad_encoding},
      {"bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5f", cid_errc::bad_encoding},
      {"z0b2rhj7crUKTQYRGCRATFaQ6YFLTde2YzdqbbhAASkL9uRDXn", cid_errc::bad_encoding},
      // dag-cbor (0x71): a valid CID, but not one an action can have (js `cids` 1.1.9).
      {"bafyreigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi", cid_errc::unsupported_codec},
      {b32("02551220" + digest), cid_errc::unsupported_version},
      {b32("1220" + digest), cid_errc::unsupported_version},  // CIDv0 may not be multibase'd
      {b32("00551220" + digest), cid_errc::unsupported_version},
      {b32("01701320" + digest), cid_errc::unsupported_hash},  // sha2-512 code
      {b32("01700020" + digest), cid_errc::unsupported_hash},  // identity
      {b32("0170121f" + digest.substr(2)), cid_errc::bad_length},
      {b32("01701220" + digest.substr(2)), cid_errc::bad_length},  // truncated digest
      {b32("01701220" + digest + "00"), cid_errc::bad_length},     // trailing byte
      {b32("01701221" + digest + "00"), cid_errc::bad_length},
      {b32("0181001220" + digest), cid_errc::bad_varint},              // version 1 as 0x81 0x00: non-minimal
      {b32("01f0001220" + digest), cid_errc::bad_varint},              // codec 0x70 as 0xf0 0x00
      {b32("01ffffffffffffffffff01" + digest), cid_errc::bad_varint},  // codec over 9 bytes
      {b32("0170"), cid_errc::bad_varint},                             // multihash missing
      {b32("017012"), cid_errc::bad_varint},                           // digest length missing
      {b32("01"), cid_errc::bad_varint},
      {b32(""), cid_errc::bad_varint},
      {b32("80"), cid_errc::bad_varint},  // truncated varint
  };
  for (const auto& c : cases) {
    auto r = ipfs::parse(c.in);
    REQUIRE_MESSAGE(!r, c.in);
    CHECK_MESSAGE(r.code() == c.code, (c.in + " → " + r.err().message));
  }
  CHECK(ipfs::parse("xyz").err().message == "cid: unsupported multibase prefix 'x' (expected Qm…, b… or z…)");
  CHECK(ipfs::parse("bafyreigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi").err().message ==
        "cid: codec 0x71 is neither dag-pb (0x70) nor raw (0x55)");

  CHECK(ipfs::from_bytes(bytes{}).code() == cid_errc::bad_varint);
  CHECK(ipfs::from_bytes(*codec::hex::decode("1220" + digest.substr(2))).code() == cid_errc::unsupported_version);
}

TEST_CASE("hashed_cid is keccak256 of the CID string") {
  // js-sha3 0.8.0 keccak256 of the UTF-8 strings.
  CHECK(codec::hex::encode(ipfs::hashed_cid("Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD")) ==
        "d81a3989ee7bd419c797813dfc27dd567737973eabdc6fd38b72442a7af0b5b5");
  CHECK(codec::hex::encode(ipfs::hashed_cid("bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e")) ==
        "1a7968daac0d8209e68d33ac431186af46c0ca22ec2e99b6d9c2927bfb8a3e89");
}
