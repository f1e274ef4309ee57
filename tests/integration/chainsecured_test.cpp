// The ChainSecured endpoints (API.md §2 "ChainSecured (wallet-signed)") against the real server:
// minting a PKP and a usage key for a wallet-signed envelope, every rejection of the validation
// order with its own status and code (on all three endpoints), conversion of an account and what
// changes with it (master key, usage keys, relayed writes, billing by the new admin wallet), the
// per-IP limit, the OpenAPI entries, the SDK client's methods, and a replay of the wallet-signed
// envelopes of the interop vectors. Envelopes are signed with the SDK's envelope::sign.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/codec/u256.hpp"
#include "enact/eip712/envelope.hpp"
#include "client_support.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

constexpr uint64_t kChain = 31337;  // enact-server's default chain id

const std::string kCreate = "/create_wallet_with_signature";
const std::string kAddKey = "/add_usage_api_key_with_signature";
const std::string kConvert = "/convert_to_chain_secured_account";

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::ostringstream out;
  out << f.rdbuf();
  return out.str();
}

/// The simulated TEE's root key (API.md §1 derivations are checked against it).
Secret root_key_of(const server_process& srv) {
  const std::string raw = read_text(srv.data_dir() + "/tee-root.key");
  REQUIRE(raw.size() == 32);
  return Secret(as_bytes(std::string_view(raw)));
}

/// A reproducible wallet key per label.
Secret wallet_key(std::string_view label) {
  return Secret(keccak256("chainsecured test wallet " + std::string(label)));
}

address address_of_key(const Secret& key) { return secp256k1::to_address(secp256k1::public_key_of(key).value()); }

envelope::signed_envelope sign_env(envelope::kind k, const Secret& key, int64_t issued_at, uint64_t chain = kChain) {
  return envelope::sign(k, chain, key, static_cast<uint64_t>(issued_at)).value();
}

/// The body of a ChainSecured request.
std::string body_text(const json::value& typed_data, const std::string& signature, const json::object& extra) {
  json::object o = extra;
  o["typed_data"] = typed_data;
  o["signature"] = signature;
  return json::serialize(o);
}

/// Unix seconds read in the first half of a second, so that a request sent right away is checked
/// by the server within the same second: a window bound (now + 301) then holds exactly.
int64_t now_early_in_second() {
  using namespace std::chrono;
  const auto since = system_clock::now().time_since_epoch();
  const auto into = since - duration_cast<seconds>(since);
  if (into > milliseconds(400))
    std::this_thread::sleep_for(seconds(1) - into + milliseconds(20));
  return unix_now();
}

bool is_checksummed_address(const std::string& s) {
  auto a = parse_address_strict(s, "address");
  return a.has_value() && to_checksum_address(*a) == s;
}

bool is_path_hex(const std::string& s) {
  return s.size() == 66 && s.starts_with("0x") && hex::decode_fixed<32>(s).has_value() &&
         hex::encode_prefixed(hex::decode_fixed<32>(s).value()) == s;
}

struct endpoint {
  std::string path;
  envelope::kind kind;
  envelope::kind other;  // a flow whose envelope this endpoint must refuse
  bool convert = false;
};

const endpoint kEndpoints[] = {
    {kCreate, envelope::kind::create_wallet, envelope::kind::add_usage_api_key},
    {kAddKey, envelope::kind::add_usage_api_key, envelope::kind::create_wallet},
    {kConvert, envelope::kind::convert_account, envelope::kind::create_wallet, true},
};

/// What a case starts from: the endpoint's envelope, signed now by the case's own wallet, and the
/// extra body fields (new_admin_wallet_address = that wallet, for conversion).
struct parts {
  const endpoint& ep;
  const Secret& key;
  address signer;
  int64_t now;
  envelope::signed_envelope env;
  json::object extra;

  std::string body() const { return body_text(env.typed_data, env.signature, extra); }
  std::string with_signature(const std::string& sig) const { return body_text(env.typed_data, sig, extra); }
  std::string edited(const std::function<void(json::object&)>& edit) const {
    json::object td = env.typed_data;
    edit(td);
    return body_text(td, env.signature, extra);
  }
  std::string edited_extra(const std::function<void(json::object&)>& edit) const {
    json::object x = extra;
    edit(x);
    return body_text(env.typed_data, env.signature, x);
  }
  /// A fresh signature by this wallet for another flow, chain or time.
  std::string resigned(envelope::kind k, int64_t issued_at, uint64_t chain = kChain) const {
    const auto e = sign_env(k, key, issued_at, chain);
    return body_text(e.typed_data, e.signature, extra);
  }
  /// The envelope with issuedAt written as a decimal string with leading zeros
  /// (eth_signTypedData_v4 accepts it; the value, digest and signature are unchanged) so that the
  /// compact serialization of the typed data is exactly `size` bytes.
  json::object padded_typed_data(size_t size) const {
    json::object td = env.typed_data;
    const size_t base = json::serialize(td).size();
    const std::string digits = std::to_string(now);
    REQUIRE(size >= base + 2);
    td["message"].as_object()["issuedAt"] = std::string(size - base - 2, '0') + digits;
    REQUIRE(json::serialize(td).size() == size);
    return td;
  }
};

/// The signature with its last byte (v) replaced.
std::string with_v(const std::string& sig, uint8_t v) {
  bytes b = hex::decode_prefixed(sig).value();
  b[64] = v;
  return hex::encode_prefixed(b);
}

/// The same signature with s replaced by n - s and the recovery id flipped: valid ECDSA, but the
/// high-s form EIP-2 forbids.
std::string high_s(const std::string& sig) {
  bytes b = hex::decode_prefixed(sig).value();
  const u256 n = u256::from_hex("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141").value();
  const u256 s = u256::load_be(b.data() + 32);
  (n - s).store_be(b.data() + 32);
  b[64] = b[64] == 27 ? 28 : 27;
  return hex::encode_prefixed(b);
}

struct envelope_case {
  std::string name;
  std::function<std::string(const parts&)> body;
  int status = 200;
  std::string code{};  // empty when accepted
  bool convert_only = false;
  bool mint_only = false;
};

/// Every row of the validation order (API.md §2) and of §0's table for these endpoints.
std::vector<envelope_case> envelope_cases() {
  using k = envelope::kind;
  const auto types = [](json::object& td) -> json::object& {
    return td["types"].as_object();
  };
  const auto member = [](std::string_view n, std::string_view t) {
    return json::object{{"name", n}, {"type", t}};
  };
  const auto primary = [](const parts& p) {
    return std::string(envelope::primary_type_name(p.ep.kind));
  };
  return {
      // Accepted forms.
      {"canonical envelope",
       [](const parts& p) {
         return p.body();
       }},
      {"typed data of exactly 4096 bytes",
       [](const parts& p) {
         return body_text(p.padded_typed_data(4096), p.env.signature, p.extra);
       }},
      {"4096 bytes compact, more as sent: whitespace is not counted",
       [](const parts& p) {
         std::string td = json::serialize(p.padded_typed_data(4096));
         std::string spaced;
         for (char ch : td) {  // no ',' or ':' inside the envelope's strings
           spaced += ch;
           if (ch == ',' || ch == ':')
             spaced += "\n    ";
         }
         REQUIRE(spaced.size() > 4096);
         json::object x = p.extra;
         x["signature"] = p.env.signature;
         std::string rest = json::serialize(x);
         return "{\"typed_data\": " + spaced + ", " + rest.substr(1);
       }},
      {"body of exactly 16 KiB",
       [](const parts& p) {
         const std::string b = p.body();
         return "{" + std::string(16384 - b.size(), ' ') + b.substr(1);
       }},
      {"signature with v as 0 or 1",
       [](const parts& p) {
         const std::string& sig = p.env.signature;
         return p.with_signature(with_v(sig, sig.ends_with("1b") ? 0 : 1));
       }},
      {"issuedAt 290 s old",
       [](const parts& p) {
         return p.resigned(p.ep.kind, p.now - 290);
       }},
      {"issuedAt 290 s ahead",
       [](const parts& p) {
         return p.resigned(p.ep.kind, p.now + 290);
       }},
      {"new_admin_wallet_address in lowercase",
       [](const parts& p) {
         return p.edited_extra([&](json::object& x) { x["new_admin_wallet_address"] = "0x" + hex::encode(p.signer); });
       },
       200, "", true},

      // 413: the body limit of these endpoints.
      {"body over 16 KiB",
       [](const parts& p) {
         const std::string b = p.body();
         return "{" + std::string(16385 - b.size(), ' ') + b.substr(1);
       },
       413, "payload_too_large"},

      // 400 invalid_request: the request itself.
      {"not JSON", [](const parts&) { return std::string("{\"typed_data\": "); }, 400, "invalid_request"},
      {"missing typed_data",
       [](const parts& p) {
         json::object x = p.extra;
         x["signature"] = p.env.signature;
         return json::serialize(x);
       },
       400, "invalid_request"},
      {"missing signature",
       [](const parts& p) {
         json::object x = p.extra;
         x["typed_data"] = p.env.typed_data;
         return json::serialize(x);
       },
       400, "invalid_request"},
      {"unknown field", [](const parts& p) { return p.edited_extra([](json::object& x) { x["nonce"] = 1; }); }, 400,
       "invalid_request"},
      {"new_admin_wallet_address on a minting endpoint (unknown there)",
       [](const parts& p) {
         return p.edited_extra([&](json::object& x) { x["new_admin_wallet_address"] = to_checksum_address(p.signer); });
       },
       400, "invalid_request", false, true},
      {"typed_data as a JSON string",
       [](const parts& p) {
         return body_text(json::string(json::serialize(p.env.typed_data)), p.env.signature, p.extra);
       },
       400, "invalid_request"},
      {"signature as a number",
       [](const parts& p) {
         json::object x = p.extra;
         x["typed_data"] = p.env.typed_data;
         x["signature"] = 12345;
         return json::serialize(x);
       },
       400, "invalid_request"},
      {"typed data with an extra member",
       [](const parts& p) { return p.edited([](json::object& td) { td["nonce"] = 7; }); }, 400, "invalid_request"},
      {"message without issuedAt",
       [](const parts& p) { return p.edited([](json::object& td) { td["message"].as_object().erase("issuedAt"); }); },
       400, "invalid_request"},
      {"message.address with a wrong EIP-55 checksum",
       [](const parts& p) {
         return p.edited([&](json::object& td) {
           std::string a = to_checksum_address(p.signer);
           for (size_t i = 2; i < a.size(); ++i)
             if (std::isalpha(static_cast<unsigned char>(a[i]))) {
               a[i] = std::islower(static_cast<unsigned char>(a[i])) ? std::toupper(a[i]) : std::tolower(a[i]);
               break;
             }
           td["message"].as_object()["address"] = a;
         });
       },
       400, "invalid_request"},
      {"issuedAt negative",
       [](const parts& p) { return p.edited([](json::object& td) { td["message"].as_object()["issuedAt"] = -1; }); },
       400, "invalid_request"},
      {"missing new_admin_wallet_address",
       [](const parts& p) { return p.edited_extra([](json::object& x) { x.erase("new_admin_wallet_address"); }); }, 400,
       "invalid_request", true},
      {"new_admin_wallet_address not an address",
       [](const parts& p) { return p.edited_extra([](json::object& x) { x["new_admin_wallet_address"] = "0x1234"; }); },
       400, "invalid_request", true},

      // 400 typed_data_invalid: size, types, primaryType, domain, in this order.
      {"typed data of 4097 bytes",
       [](const parts& p) { return body_text(p.padded_typed_data(4097), p.env.signature, p.extra); }, 400,
       "typed_data_invalid"},
      {"typed data of 4097 bytes that is also not canonical (size is checked first)",
       [=](const parts& p) {
         json::object td = p.padded_typed_data(4097);
         std::swap(types(td)[primary(p)].as_array()[0], types(td)[primary(p)].as_array()[1]);
         return body_text(td, p.env.signature, p.extra);
       },
       400, "typed_data_invalid"},
      {"types: message members reordered",
       [=](const parts& p) {
         return p.edited([&](json::object& td) {
           auto& m = types(td)[primary(p)].as_array();
           std::swap(m[0], m[1]);
         });
       },
       400, "typed_data_invalid"},
      {"types: domain members reordered",
       [=](const parts& p) {
         return p.edited([&](json::object& td) {
           auto& m = types(td)["EIP712Domain"].as_array();
           std::swap(m[0], m[1]);
         });
       },
       400, "typed_data_invalid"},
      {"types: an extra type",
       [=](const parts& p) {
         return p.edited([&](json::object& td) { types(td)["Extra"] = json::array{member("x", "uint256")}; });
       },
       400, "typed_data_invalid"},
      {"types: a member's type changed",
       [=](const parts& p) {
         return p.edited([&](json::object& td) { types(td)[primary(p)].as_array()[1] = member("issuedAt", "uint64"); });
       },
       400, "typed_data_invalid"},
      {"types: a member missing",
       [=](const parts& p) { return p.edited([&](json::object& td) { types(td)[primary(p)].as_array().pop_back(); }); },
       400, "typed_data_invalid"},
      {"types: a salt in the domain",
       [=](const parts& p) {
         return p.edited(
             [&](json::object& td) { types(td)["EIP712Domain"].as_array().push_back(member("salt", "bytes32")); });
       },
       400, "typed_data_invalid"},
      {"primaryType of another endpoint, signed for it", [](const parts& p) { return p.resigned(p.ep.other, p.now); },
       400, "typed_data_invalid"},
      {"primaryType BillingAuth, signed for it", [](const parts& p) { return p.resigned(k::billing_auth, p.now); }, 400,
       "typed_data_invalid"},
      {"primaryType not the declared struct",
       [](const parts& p) {
         return p.edited([&](json::object& td) { td["primaryType"] = envelope::primary_type_name(p.ep.other); });
       },
       400, "typed_data_invalid"},
      {"domain name",
       [](const parts& p) {
         return p.edited([](json::object& td) { td["domain"].as_object()["name"] = "Svc Chainsecured"; });
       },
       400, "typed_data_invalid"},
      {"domain version",
       [](const parts& p) { return p.edited([](json::object& td) { td["domain"].as_object()["version"] = "2"; }); },
       400, "typed_data_invalid"},

      // 400 chain_id_mismatch.
      {"signed for chain 1", [](const parts& p) { return p.resigned(p.ep.kind, p.now, 1); }, 400, "chain_id_mismatch"},
      {"signed for chain 31338", [](const parts& p) { return p.resigned(p.ep.kind, p.now, 31338); }, 400,
       "chain_id_mismatch"},

      // 401 signature_expired.
      {"issuedAt 301 s old", [](const parts& p) { return p.resigned(p.ep.kind, p.now - 301); }, 401,
       "signature_expired"},
      {"issuedAt 301 s ahead", [](const parts& p) { return p.resigned(p.ep.kind, now_early_in_second() + 301); }, 401,
       "signature_expired"},
      {"issuedAt a day old", [](const parts& p) { return p.resigned(p.ep.kind, p.now - 86400); }, 401,
       "signature_expired"},

      // 401 signature_invalid.
      {"signed by another key",
       [](const parts& p) {
         const auto other = sign_env(p.ep.kind, wallet_key("someone else"), p.now);
         return p.with_signature(other.signature);
       },
       401, "signature_invalid"},
      {"message edited after signing",
       [](const parts& p) {
         return p.edited([&](json::object& td) { td["message"].as_object()["issuedAt"] = p.now - 1; });
       },
       401, "signature_invalid"},
      {"signature of 64 bytes", [](const parts& p) { return p.with_signature(p.env.signature.substr(0, 130)); }, 401,
       "signature_invalid"},
      {"signature of 66 bytes", [](const parts& p) { return p.with_signature(p.env.signature + "00"); }, 401,
       "signature_invalid"},
      {"signature not hex", [](const parts& p) { return p.with_signature("0x" + std::string(130, 'z')); }, 401,
       "signature_invalid"},
      {"signature without 0x", [](const parts& p) { return p.with_signature(p.env.signature.substr(2)); }, 401,
       "signature_invalid"},
      {"signature empty", [](const parts& p) { return p.with_signature(""); }, 401, "signature_invalid"},
      {"signature with v = 29", [](const parts& p) { return p.with_signature(with_v(p.env.signature, 29)); }, 401,
       "signature_invalid"},
      {"signature with v = 2", [](const parts& p) { return p.with_signature(with_v(p.env.signature, 2)); }, 401,
       "signature_invalid"},
      {"signature in its high-s form", [](const parts& p) { return p.with_signature(high_s(p.env.signature)); }, 401,
       "signature_invalid"},
      {"new_admin_wallet_address another wallet than the signer",
       [](const parts& p) {
         return p.edited_extra([](json::object& x) {
           x["new_admin_wallet_address"] = to_checksum_address(address_of_key(wallet_key("not me")));
         });
       },
       401, "signature_invalid", true},
  };
}

httplib::Headers wallet_auth(const Secret& key, uint64_t chain = kChain) {
  const auto env = sign_env(envelope::kind::billing_auth, key, unix_now(), chain);
  return httplib::Headers{{"X-Wallet-Auth", envelope::encode_wallet_auth(env)}};
}

json::object convert_body(const Secret& new_admin, int64_t issued_at) {
  const auto env = sign_env(envelope::kind::convert_account, new_admin, issued_at);
  return json::object{{"new_admin_wallet_address", to_checksum_address(address_of_key(new_admin))},
                      {"typed_data", env.typed_data},
                      {"signature", env.signature}};
}

json::object mint_body(envelope::kind k, const Secret& key) {
  const auto env = sign_env(k, key, unix_now());
  return json::object{{"typed_data", env.typed_data}, {"signature", env.signature}};
}

}  // namespace

// --- minting
// ---------------------------------------------------------------------------------------

TEST_CASE("create_wallet_with_signature: a new PKP at a random path for each signed request") {
  server_process srv;
  auto c = srv.client();
  const Secret root = root_key_of(srv);
  const Secret w = wallet_key("minter");
  const json::object body = mint_body(envelope::kind::create_wallet, w);

  std::set<std::string> paths, wallets;
  // The same envelope twice: the issuedAt window is the only replay protection (core-api spec,
  // envelope rule 4), and each call mints anew.
  for (int i = 0; i < 3; ++i) {
    const response r = c.post(kCreate, body);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().size() == 3);
    const std::string pkp = s_of(r.body, "pkp_id");
    const std::string wallet = s_of(r.body, "wallet_address");
    const std::string path = s_of(r.body, "derivation_path");
    CHECK(pkp == wallet);
    CHECK(is_checksummed_address(wallet));
    REQUIRE(is_path_hex(path));
    // API.md §1: the PKP of the signer's account (it has none yet: its canonical hash) at that
    // path under the node's root key; not the signer's address.
    const hash256 p = hex::decode_fixed<32>(path).value();
    const hash256 owner = pkp::canonical_account_hash(address_of_key(w));
    CHECK(wallet == to_checksum_address(pkp::wallet_address(root, owner, p).value()));
    CHECK(wallet != to_checksum_address(address_of_key(w)));
    paths.insert(path);
    wallets.insert(wallet);
  }
  CHECK(paths.size() == 3);
  CHECK(wallets.size() == 3);

  // Nothing was registered: no account holds these wallets or was created.
  const account_keys acct = create_account(c);
  CHECK(list_all(c, "/list_wallets", acct.auth()).empty());
  const response me = c.get("/account", acct.auth());
  ITEST_REQUIRE_STATUS(me, 200);
  CHECK(s_of(me.body, "admin_wallet_address") == acct.wallet_address);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key});
}

TEST_CASE("add_usage_api_key_with_signature: the key is the PKP signing key at the returned path") {
  server_process srv;
  auto c = srv.client();
  const Secret root = root_key_of(srv);
  const Secret w = wallet_key("admin of usage keys");

  std::vector<std::string> keys;
  std::set<std::string> paths;
  for (int i = 0; i < 2; ++i) {
    const response r = c.post(kAddKey, mint_body(envelope::kind::add_usage_api_key, w));
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().size() == 3);
    const std::string key = s_of(r.body, "usage_api_key");
    const std::string wallet = s_of(r.body, "wallet_address");
    const std::string path = s_of(r.body, "derivation_path");
    keys.push_back(key);
    paths.insert(path);
    // API.md §1: standard base64 of 32 bytes, a secp256k1 key whose address is wallet_address.
    CHECK(key.size() == 44);
    const Secret decoded = key_secret(key);
    REQUIRE(decoded.size() == 32);
    CHECK(is_checksummed_address(wallet));
    CHECK(key_address(key) == wallet);
    REQUIRE(is_path_hex(path));
    const hash256 p = hex::decode_fixed<32>(path).value();
    const hash256 owner = pkp::canonical_account_hash(address_of_key(w));
    CHECK(decoded == pkp::signing_key(root, owner, p).value());
    CHECK(wallet == to_checksum_address(pkp::wallet_address(root, owner, p).value()));
    // Until the admin wallet registers it on-chain it authenticates nothing.
    check_error(srv, c.get("/account", api_key(key)), 401, "unauthenticated", "/core/v1/account");
  }
  CHECK(keys[0] != keys[1]);
  CHECK(paths.size() == 2);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, keys);
}

// --- validation
// ------------------------------------------------------------------------------------

TEST_CASE("every rejection of the validation order has its own status and code, on each endpoint") {
  server_process srv({"--new-accounts-per-minute", "0"});
  auto c = srv.client();
  const std::vector<envelope_case> cases = envelope_cases();
  std::vector<std::string> secrets;
  // Conversion: rejected requests share one account, which stays in API mode; each accepted one
  // converts an account of its own.
  const account_keys shared = create_account(c, "stays managed");
  secrets.push_back(shared.api_key);

  for (const endpoint& ep : kEndpoints) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const envelope_case& tc = cases[i];
      if ((tc.convert_only && !ep.convert) || (tc.mint_only && ep.convert))
        continue;
      INFO(ep.path << ": " << tc.name);
      const Secret key = wallet_key(ep.path + " " + std::to_string(i));
      const address signer = address_of_key(key);
      const int64_t now = unix_now();
      json::object extra;
      if (ep.convert)
        extra["new_admin_wallet_address"] = to_checksum_address(signer);
      const parts p{ep, key, signer, now, sign_env(ep.kind, key, now), std::move(extra)};
      httplib::Headers auth;
      std::optional<account_keys> own;
      if (ep.convert) {
        if (tc.status == 200) {
          own = create_account(c, "converted by " + tc.name);
          secrets.push_back(own->api_key);
        }
        auth = own ? own->auth() : shared.auth();
      }
      const response r = c.post_raw(ep.path, tc.body(p), auth);
      if (tc.status != 200) {
        check_error(srv, r, tc.status, tc.code, "/core/v1" + ep.path);
        continue;
      }
      ITEST_REQUIRE_STATUS(r, 200);
      if (ep.convert) {
        CHECK(s_of(r.body, "new_admin_wallet_address") == to_checksum_address(signer));
        CHECK(s_of(r.body, "api_key_hash") == own->api_key_hash);
      } else {
        CHECK(is_checksummed_address(s_of(r.body, "wallet_address")));
        if (ep.kind == envelope::kind::add_usage_api_key)
          secrets.push_back(s_of(r.body, "usage_api_key"));
      }
    }
  }
  // None of the rejected conversions changed the shared account.
  const response me = c.get("/account", shared.auth());
  ITEST_REQUIRE_STATUS(me, 200);
  CHECK(me.obj().at("managed").as_bool());
  CHECK(s_of(me.body, "admin_wallet_address") == shared.wallet_address);

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, secrets);
}

TEST_CASE("the per-IP limit covers the minting endpoints, each with its own bucket") {
  server_process srv({"--new-accounts-per-minute", "2"});
  auto c = srv.client();
  const Secret w = wallet_key("limited");
  for (int i = 0; i < 2; ++i)
    ITEST_CHECK_STATUS(c.post(kCreate, mint_body(envelope::kind::create_wallet, w)), 200);
  const response limited = c.post(kCreate, mint_body(envelope::kind::create_wallet, w));
  check_error(srv, limited, 429, "rate_limited", "/core/v1" + kCreate);
  const std::string retry = limited.header("Retry-After");
  REQUIRE(!retry.empty());
  CHECK(std::stoi(retry) >= 1);
  CHECK(std::stoi(retry) <= 60);
  // Refused before any validation: a malformed request costs the same.
  check_error(srv, c.post_raw(kCreate, "{}"), 429, "rate_limited", "/core/v1" + kCreate);
  // The other endpoints keep their own allowance.
  const response k = c.post(kAddKey, mint_body(envelope::kind::add_usage_api_key, w));
  ITEST_CHECK_STATUS(k, 200);
  const account_keys acct = create_account(c);
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, s_of(k.body, "usage_api_key")});
}

// --- conversion
// ------------------------------------------------------------------------------------

TEST_CASE("convert_to_chain_secured_account: the wallet takes over, the master key stops working") {
  server_process srv({"--dev", "--sandbox-workers", "1"});
  auto c = srv.client();
  const account_keys acct = create_account(c, "to convert");
  const account_keys other = create_account(c, "bystander");
  CHECK(buy_credits(c, acct.auth(), 500) == 500);
  const usage_keys uk = create_usage_key(c, acct.auth(),
                                         {{"name", "runner"},
                                          {"can_create_groups", true},
                                          {"can_create_pkps", true},
                                          {"execute_in_groups", json::array{0}}});

  // State that must survive the conversion: a PKP, an action and a group listing both.
  const response w = c.post("/create_wallet", json::object{{"name", "signer"}}, acct.auth());
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string code = "Enact.setResponse({signer: Enact.getAddress({pkpId: params.pkp})});";
  const std::string cid = cid_of_code(code);
  ITEST_REQUIRE_STATUS(c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "whoami"}}, acct.auth()),
                       200);
  ITEST_REQUIRE_STATUS(c.post("/add_group",
                              json::object{{"name", "g"},
                                           {"pkp_ids_permitted", json::array{json::string(pkp)}},
                                           {"cid_hashes_permitted", json::array{json::string(hashed_cid_hex(cid))}}},
                              acct.auth()),
                       200);
  // Read with the usage key: after the conversion the former master key reads nothing.
  const auto lists = [&] {
    return std::vector<std::vector<json::object>>{list_all(c, "/list_groups", uk.auth()),
                                                  list_all(c, "/list_wallets", uk.auth()),
                                                  list_all(c, "/list_actions", uk.auth())};
  };
  const auto keys_before = list_all(c, "/list_api_keys", acct.auth());
  REQUIRE(keys_before.size() == 1);
  const auto before = lists();
  const json::object run_body{{"code", code}, {"pkp_id", pkp}, {"params", json::object{{"pkp", pkp}}}};
  const auto run_ok = [&](const httplib::Headers& auth) {
    const response r = c.post("/run_action", run_body, auth);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(s_of(r.obj().at("response"), "signer") == pkp);
  };
  run_ok(uk.auth());

  const Secret admin = wallet_key("new admin");
  const std::string admin_addr = to_checksum_address(address_of_key(admin));

  // Refused before anything changes: a usage key, and a new admin that administers an account.
  check_error(srv, c.post(kConvert, convert_body(admin, unix_now()), uk.auth()), 403, "forbidden",
              "/core/v1" + kConvert);
  check_error(srv, c.post(kConvert, convert_body(key_secret(other.api_key), unix_now()), acct.auth()), 409, "conflict",
              "/core/v1" + kConvert);
  check_error(srv, c.post(kConvert, convert_body(admin, unix_now())), 401, "unauthenticated", "/core/v1" + kConvert);
  {
    const response me = c.get("/account", acct.auth());
    ITEST_REQUIRE_STATUS(me, 200);
    CHECK(me.obj().at("managed").as_bool());
  }

  // The conversion.
  json::object body = convert_body(admin, unix_now());
  body["new_admin_wallet_address"] = "0x" + hex::encode(address_of_key(admin));  // any case
  const response converted = c.post(kConvert, body, acct.auth());
  ITEST_REQUIRE_STATUS(converted, 200);
  CHECK(converted.obj().size() == 2);
  CHECK(s_of(converted.body, "new_admin_wallet_address") == admin_addr);
  CHECK(s_of(converted.body, "api_key_hash") == acct.api_key_hash);

  // The account, read with the usage key: unmanaged under the new admin, with the same hash.
  const response me = c.get("/account", uk.auth());
  ITEST_REQUIRE_STATUS(me, 200);
  CHECK_FALSE(me.obj().at("managed").as_bool());
  CHECK(s_of(me.body, "admin_wallet_address") == admin_addr);
  CHECK(s_of(me.body, "api_key_hash") == acct.api_key_hash);
  CHECK(s_of(me.obj().at("key"), "kind") == "usage");
  // Groups, PKPs, actions and the usage key unchanged (the key still authenticates).
  CHECK(lists() == before);

  // API.md §0 401 row: the former master key authorizes nothing now, not even a read, a run or
  // a second conversion (whoever signs it).
  for (const char* path :
       {"/account", "/list_groups", "/list_wallets", "/list_actions", "/list_api_keys", "/billing/balance"}) {
    INFO(path);
    const response r = c.get(path, acct.auth());
    check_error(srv, r, 401, "unauthenticated", "/core/v1" + std::string(path));
    CHECK(r.error_message().find("ChainSecured") != std::string::npos);
  }
  check_error(srv, c.post("/run_action", run_body, acct.auth()), 401, "unauthenticated", "/core/v1/run_action");
  check_error(srv, c.post(kConvert, convert_body(admin, unix_now()), acct.auth()), 401, "unauthenticated",
              "/core/v1" + kConvert);
  check_error(srv, c.post(kConvert, convert_body(wallet_key("a third admin"), unix_now()), acct.auth()), 401,
              "unauthenticated", "/core/v1" + kConvert);

  // Nor any write.
  const std::vector<std::pair<std::string, json::object>> writes = {
      {"/add_group", {{"name", "after"}}},
      {"/create_wallet", {{"name", "after"}}},
      {"/add_usage_api_key", {{"name", "after"}}},
      {"/remove_usage_api_key", {{"usage_api_key", uk.value}}},
      {"/add_action", {{"action_ipfs_cid", cid_of_code("1")}, {"name", "after"}}},
  };
  for (const auto& [path, b] : writes) {
    INFO(path);
    const response r = c.post(path, b, acct.auth());
    check_error(srv, r, 401, "unauthenticated", "/core/v1" + path);
    CHECK(r.error_message().find("ChainSecured") != std::string::npos);
  }

  // Usage keys keep working for runs; the writes the server would relay for them are refused by
  // the registry (relay_not_allowed): 403 naming the mode.
  run_ok(uk.auth());
  const std::vector<std::pair<std::string, json::object>> relayed = {
      {"/add_group", {{"name", "after"}}},
      {"/create_wallet", {{"name", "after"}}},
      {"/add_action", {{"action_ipfs_cid", cid_of_code("2")}, {"name", "after"}}},
  };
  for (const auto& [path, b] : relayed) {
    INFO(path);
    const response r = c.post(path, b, uk.auth());
    check_error(srv, r, 403, "forbidden", "/core/v1" + path);
    CHECK(r.error_message().find("ChainSecured") != std::string::npos);
  }
  CHECK(lists() == before);

  // Billing follows the new admin wallet (X-Wallet-Auth, BillingAuth); the old one is no admin.
  CHECK(balance_of(c, wallet_auth(admin)) == 498);  // 500 bought, two runs of one credit
  const response intent =
      c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}}, wallet_auth(admin));
  ITEST_REQUIRE_STATUS(intent, 200);
  const response paid =
      c.post("/billing/confirm_payment", json::object{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}},
             wallet_auth(admin));
  ITEST_REQUIRE_STATUS(paid, 200);
  CHECK(u_of(paid.body, "balance_credits") == 1198);
  CHECK(balance_of(c, uk.auth()) == 1198);
  // Payments are the admin wallet's now, not the former master key's.
  for (const char* path : {"/billing/create_payment_intent", "/billing/confirm_payment"}) {
    INFO(path);
    const json::object b = std::string_view(path) == "/billing/confirm_payment"
                               ? json::object{{"payment_intent_id", s_of(intent.body, "payment_intent_id")}}
                               : json::object{{"amount_cents", 700}};
    const response r = c.post(path, b, acct.auth());
    check_error(srv, r, 401, "unauthenticated", "/core/v1" + std::string(path));
    CHECK(r.error_message().find("ChainSecured") != std::string::npos);
  }
  check_error(srv, c.get("/billing/balance", wallet_auth(key_secret(acct.api_key))), 401, "unauthenticated",
              "/core/v1/billing/balance");
  {
    const response mine = c.get("/account", wallet_auth(admin));  // billing only
    check_error(srv, mine, 401, "unauthenticated", "/core/v1/account");
  }
  // The bystander is untouched.
  const response theirs = c.get("/account", other.auth());
  ITEST_REQUIRE_STATUS(theirs, 200);
  CHECK(theirs.obj().at("managed").as_bool());

  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, other.api_key, uk.value});
}

// --- OpenAPI
// ---------------------------------------------------------------------------------------

TEST_CASE("OpenAPI lists the three endpoints with their bodies and error responses") {
  server_process srv;
  auto c = srv.client();
  const response doc = c.get("/openapi.json");
  ITEST_REQUIRE_STATUS(doc, 200);
  const auto& paths = doc.obj().at("paths").as_object();
  for (const endpoint& ep : kEndpoints) {
    INFO(ep.path);
    REQUIRE(paths.contains(ep.path));
    const auto& op = paths.at(ep.path).as_object().at("post").as_object();
    CHECK(op.at("security").as_array().empty() == !ep.convert);
    const auto& schema = op.at("requestBody").at("content").at("application/json").at("schema").as_object();
    std::set<std::string> required;
    for (const auto& r : schema.at("required").as_array())
      required.insert(std::string(r.as_string()));
    std::set<std::string> want{"typed_data", "signature"};
    if (ep.convert)
      want.insert("new_admin_wallet_address");
    CHECK(required == want);
    CHECK_FALSE(schema.at("additionalProperties").as_bool());
    const auto& td = schema.at("properties").at("typed_data").as_object();
    CHECK(td.at("examples").as_array()[0].at("primaryType") == json::value(envelope::primary_type_name(ep.kind)));
    const auto& responses = op.at("responses").as_object();
    for (const char* status : {"200", "400", "401", "413", "429"})
      CHECK_MESSAGE(responses.contains(status), status);
    CHECK(responses.at("400").at("description").as_string().find("typed_data_invalid") != std::string::npos);
    CHECK(responses.at("401").at("description").as_string().find("signature_expired") != std::string::npos);
    if (ep.convert) {
      CHECK(responses.contains("403"));
      CHECK(responses.at("409").at("description").as_string().find("ChainSecured") != std::string::npos);
    }
  }
  CHECK(srv.stop().clean());
}

// --- the SDK client
// --------------------------------------------------------------------------------

TEST_CASE("the SDK client's ChainSecured methods") {
  server_process srv({"--dev"});
  client::core_client anon(options_for(srv.port()));
  const Secret root = root_key_of(srv);
  const Secret w = wallet_key("client wallet");

  const client::minted_wallet minted = anon.create_wallet_with_signature(w, kChain);
  CHECK(minted.pkp_id == minted.wallet_address);
  const hash256 minter = pkp::canonical_account_hash(address_of_key(w));
  CHECK(minted.wallet_address == pkp::wallet_address(root, minter, minted.derivation_path).value());

  const client::minted_usage_key k = anon.add_usage_api_key_with_signature(
      envelope::sign(envelope::kind::add_usage_api_key, kChain, w, unix_now()).value());
  const Secret decoded(base64::decode(as_chars(k.usage_api_key.view())).value());
  CHECK(decoded == pkp::signing_key(root, minter, k.derivation_path).value());
  CHECK(address_of_key(decoded) == k.wallet_address);

  // Refusals arrive as api_error with the code and status of API.md §0.
  api_error e = expect_api_error([&] { (void)anon.create_wallet_with_signature(w, 1); });
  CHECK(e.errc() == api_errc::chain_id_mismatch);
  CHECK(e.status() == 400);
  e = expect_api_error([&] {
    (void)anon.add_usage_api_key_with_signature(
        envelope::sign(envelope::kind::create_wallet, kChain, w, unix_now()).value());
  });
  CHECK(e.errc() == api_errc::typed_data_invalid);
  e = expect_api_error([&] {
    (void)anon.create_wallet_with_signature(
        envelope::sign(envelope::kind::create_wallet, kChain, w, unix_now() - 3600).value());
  });
  CHECK(e.errc() == api_errc::signature_expired);
  CHECK(e.status() == 401);
  // A key that is no secp256k1 key is refused before anything is sent.
  e = expect_api_error([&] { (void)anon.create_wallet_with_signature(Secret(bytes(32, 0)), kChain); });
  CHECK(e.errc() == api_errc::invalid_request);
  CHECK(e.status() == 0);

  // Conversion.
  auto created = anon.new_account({"client conversion", {}, {}});
  client::core_client owner(options_for(srv.port()), created.api_key.clone());
  const Secret admin = wallet_key("client admin");
  // An envelope signed by another wallet than the stated new admin.
  e = expect_api_error([&] {
    (void)owner.convert_to_chain_secured_account(
        address_of_key(admin), envelope::sign(envelope::kind::convert_account, kChain, w, unix_now()).value());
  });
  CHECK(e.errc() == api_errc::signature_invalid);
  CHECK(owner.account().managed);

  const client::chain_secured_account conv = owner.convert_to_chain_secured_account(admin, kChain);
  CHECK(conv.new_admin_wallet_address == address_of_key(admin));
  CHECK(conv.api_key_hash == created.api_key_hash);
  // The former master key authorizes nothing after the conversion (API.md §0 401 row).
  e = expect_api_error([&] { (void)owner.account(); });
  CHECK(e.errc() == api_errc::unauthenticated);
  e = expect_api_error([&] { (void)owner.convert_to_chain_secured_account(admin, kChain); });
  CHECK(e.errc() == api_errc::unauthenticated);
  CHECK(e.status() == 401);
  e = expect_api_error([&] { (void)owner.add_group({"after", {}, {}, {}}); });
  CHECK(e.errc() == api_errc::unauthenticated);
  const auto balance = anon.balance(envelope::sign(envelope::kind::billing_auth, kChain, admin, unix_now()).value());
  CHECK(balance.balance_credits == 0);

  CHECK(srv.stop().clean());
  check_no_secret_logged(
      srv, {std::string(as_chars(created.api_key.view())), std::string(as_chars(k.usage_api_key.view()))});
}

// --- interop vectors
// -------------------------------------------------------------------------------

TEST_CASE("wallet-signed envelopes of the interop vectors (eth_signTypedData_v4 libraries)") {
  // tests/vectors/typed_data.json, signatures by viem (= ethers Wallet.signTypedData). Their
  // issuedAt is fixed and the server has no clock override, so a canonical envelope is verified
  // at unit level with `now` = its issuedAt, and over HTTP (on a server of its chain) everything
  // before the issuedAt rule must pass: the answer is signature_expired. An envelope of another
  // shape is refused as typed_data_invalid over HTTP whatever its chain and time, since `types`
  // are checked first.
  const json::value file = json::parse(read_text(std::string(ENACT_VECTORS_DIR) + "/typed_data.json"));
  struct replay {
    std::string name;
    json::object document;
    std::string signature;
    std::string signer;
    envelope::kind kind;
    bool canonical;
  };
  std::vector<replay> replays;
  for (const auto& v : file.at("vectors").as_array()) {
    const auto& doc = v.at("document").as_object();
    const auto* primary = doc.at("primaryType").if_string();
    const auto k = primary ? envelope::kind_from_name(*primary) : std::nullopt;
    if (!k || *k == envelope::kind::billing_auth)
      continue;
    const auto& msg = doc.at("message").as_object();
    const auto* issued = msg.if_contains("issuedAt");
    const json::object canonical = envelope::build(*k, doc.at("domain").at("chainId").to_number<uint64_t>(),
                                                   parse_address(msg.at("address").as_string()).value(),
                                                   issued != nullptr ? issued->to_number<uint64_t>() : 0);
    replays.push_back({std::string(v.at("name").as_string()), doc, std::string(v.at("signature_viem").as_string()),
                       std::string(v.at("signer").as_string()), *k, doc.at("types") == canonical.at("types")});
  }
  REQUIRE_FALSE(replays.empty());

  for (const auto& r : replays) {
    INFO(r.name);
    const uint64_t chain = r.document.at("domain").at("chainId").to_number<uint64_t>();
    envelope::expectation want{r.kind, chain, 0, envelope::kDefaultMaxSkew, std::nullopt};
    want.now = r.document.at("message").at("issuedAt").to_number<uint64_t>();
    const auto verified = envelope::verify(json::serialize(r.document), r.signature, want);
    if (r.canonical) {
      REQUIRE(verified.has_value());
      CHECK(to_checksum_address(*verified) == r.signer);
    } else {
      REQUIRE_FALSE(verified.has_value());
      CHECK(verified.code() == envelope_errc::types_not_canonical);
    }

    server_process srv({"--chain-id", std::to_string(chain)});
    auto c = srv.client();
    const std::string path = r.kind == envelope::kind::create_wallet       ? kCreate
                             : r.kind == envelope::kind::add_usage_api_key ? kAddKey
                                                                           : kConvert;
    httplib::Headers auth;
    json::object body{{"typed_data", r.document}, {"signature", r.signature}};
    if (r.kind == envelope::kind::convert_account) {
      auth = create_account(c).auth();
      body["new_admin_wallet_address"] = r.signer;
    }
    const response resp = c.post(path, body, auth);
    if (r.canonical)
      check_error(srv, resp, 401, "signature_expired", "/core/v1" + path);
    else
      check_error(srv, resp, 400, "typed_data_invalid", "/core/v1" + path);
    CHECK(srv.stop().clean());
  }
  const auto canonical = std::count_if(replays.begin(), replays.end(), [](const replay& r) { return r.canonical; });
  MESSAGE(replays.size() << " wallet-signed envelope vectors replayed, " << canonical << " of the canonical shape");
}

}  // namespace enact::itest
