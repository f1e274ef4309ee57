// SPDX-License-Identifier: Apache-2.0
// The ChainSecured validation order, case by case on each endpoint, and the per-IP limit.
#include "chainsecured_test.hpp"

namespace enact::itest {

namespace {

/// What a case starts from: the endpoint's envelope, signed now by the case's own wallet, and the
/// extra body fields (new_admin_wallet_address = that wallet, for conversion).
struct parts {
  const endpoint& ep;
  const Secret& key;
  address signer;
  int64_t now;
  uint64_t chain;  // the server's (/get_node_chain_config)
  eip712::envelope::signed_envelope env;
  json::object extra;

  std::string body() const { return body_text(env.typed_data, env.signature, extra); }
  std::string with_signature(const std::string& sig) const { return body_text(env.typed_data, sig, extra); }
  std::string edited(const std::function<void(json::object&)>& edit) const {
    json::object td = env.typed_data;
    edit(td);
    return body_text(td, env.signature, extra);
  }
  /// A body built by hand: the extra fields, then `members` (typed_data, signature or stand-ins
  /// for them) in their order.
  std::string extra_with(const json::object& members) const {
    json::object x = extra;
    for (const auto& m : members)
      x[m.key()] = m.value();
    return json::serialize(x);
  }
  std::string edited_extra(const std::function<void(json::object&)>& edit) const {
    json::object x = extra;
    edit(x);
    return body_text(env.typed_data, env.signature, x);
  }
  /// A fresh signature by this wallet for another flow, chain or time.
  std::string resigned(eip712::envelope::kind k, int64_t issued_at) const { return resigned(k, issued_at, chain); }
  std::string resigned(eip712::envelope::kind k, int64_t issued_at, uint64_t for_chain) const {
    const auto e = sign_env(k, key, issued_at, for_chain);
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
  bytes b = codec::hex::decode_prefixed(sig).value();
  b[64] = v;
  return codec::hex::encode_prefixed(b);
}

/// The same signature with s replaced by n - s and the recovery id flipped: valid ECDSA, but the
/// high-s form EIP-2 forbids.
std::string high_s(const std::string& sig) {
  bytes b = codec::hex::decode_prefixed(sig).value();
  const u256 n = u256::from_hex("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141").value();
  const u256 s = u256::load_be(b.data() + 32);
  (n - s).store_be(b.data() + 32);
  b[64] = b[64] == 27 ? 28 : 27;
  return codec::hex::encode_prefixed(b);
}

struct envelope_case {
  std::string name;
  std::function<std::string(const parts&)> body;
  int status = 200;
  std::string code{};  // empty when accepted
  bool convert_only = false;
  bool mint_only = false;
};

/// Every row of the validation order (docs/protocol.md §2) and of §0's table for these endpoints.
std::vector<envelope_case> envelope_cases() {
  using k = eip712::envelope::kind;
  const auto types = [](json::object& td) -> json::object& {
    return td["types"].as_object();
  };
  const auto member = [](std::string_view n, std::string_view t) {
    return json::object{{"name", n}, {"type", t}};
  };
  const auto primary = [](const parts& p) {
    return std::string(eip712::envelope::primary_type_name(p.ep.kind));
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
         return p.edited_extra(
             [&](json::object& x) { x["new_admin_wallet_address"] = "0x" + codec::hex::encode(p.signer); });
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
         return p.extra_with({{"signature", p.env.signature}});
       },
       400, "invalid_request"},
      {"missing signature",
       [](const parts& p) {
         return p.extra_with({{"typed_data", p.env.typed_data}});
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
         return p.extra_with({{"typed_data", p.env.typed_data}, {"signature", 12345}});
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
         return p.edited(
             [&](json::object& td) { td["primaryType"] = eip712::envelope::primary_type_name(p.ep.other); });
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
      {"signed for chain 31337, every deployment's before each had its own",
       [](const parts& p) { return p.resigned(p.ep.kind, p.now, 31337); }, 400, "chain_id_mismatch"},
      {"signed for the next chain id", [](const parts& p) { return p.resigned(p.ep.kind, p.now, p.chain + 1); }, 400,
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
         const auto other = sign_env(p.ep.kind, wallet_key("someone else"), p.now, p.chain);
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

}  // namespace

// --- validation
// ------------------------------------------------------------------------------------

TEST_CASE("every rejection of the validation order has its own status and code, on each endpoint") {
  // The specification's envelope (version 1) on all three endpoints, conversion included by the
  // operator's opt-in; version 2's own rules are attacks.envelopes' and unit.interop's.
  server_process srv({"--new-accounts-per-minute", "0", "--chain-envelope-v1", "accept"});
  auto c = srv.client();
  const uint64_t chain = env_of(srv).chain_id;
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
      const parts p{ep, key, signer, now, chain, sign_env(ep.kind, key, now, chain), std::move(extra)};
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
        if (ep.kind == eip712::envelope::kind::add_usage_api_key)
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
  const uint64_t chain = env_of(srv).chain_id;
  const Secret w = wallet_key("limited");
  for (int i = 0; i < 2; ++i)
    ITEST_CHECK_STATUS(c.post(kCreate, mint_body(eip712::envelope::kind::create_wallet, w, chain)), 200);
  const response limited = c.post(kCreate, mint_body(eip712::envelope::kind::create_wallet, w, chain));
  check_error(srv, limited, 429, "rate_limited", "/core/v1" + kCreate);
  const std::string retry = limited.header("Retry-After");
  REQUIRE(!retry.empty());
  CHECK(std::stoi(retry) >= 1);
  CHECK(std::stoi(retry) <= 60);
  // Refused before any validation: a malformed request costs the same.
  check_error(srv, c.post_raw(kCreate, "{}"), 429, "rate_limited", "/core/v1" + kCreate);
  // The other endpoints keep their own allowance.
  const response k = c.post(kAddKey, mint_body(eip712::envelope::kind::add_usage_api_key, w, chain));
  ITEST_CHECK_STATUS(k, 200);
  const account_keys acct = create_account(c);
  CHECK(srv.stop().clean());
  check_no_secret_logged(srv, {acct.api_key, s_of(k.body, "usage_api_key")});
}

}  // namespace enact::itest
