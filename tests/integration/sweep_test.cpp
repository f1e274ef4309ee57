// SPDX-License-Identifier: Apache-2.0
// The bad-input sweep: every operation of the server's own OpenAPI document (/core/v1/openapi.json,
// generated from the route table) is sent malformed bodies, bad query parameters, bad credentials
// and wrong paths. Every answer must be a 4xx with exactly the error body of docs/protocol.md §0 (status
// matching the code), never a 5xx, a hang or a dropped connection; afterwards the account's state
// (every list and the balance) is unchanged and the server still serves normal requests.
//
// The operations are read from the document, not listed here. Each operation's request is built
// from the document's schema: a valid "base" request from a dictionary of fixture values by
// property name, then one defect at a time. At the end every base request is sent as is, and must
// not be refused as malformed, so each case above differed from a valid request by its one defect.
//
// Left out: the Stripe webhook (POST /billing/stripe/webhook), whose body is Stripe's event, not a
// closed schema, and which answers a forgery by its signature (billing.server tests it).
// Cases that legitimately succeed, decided by docs/protocol.md §0 and §2:
//   - a key without scopes may read (account, lists, balance), and may call the operations whose
//     auth column names no scope (upload_action, billing); their base requests are chosen so that
//     nothing the snapshot sees changes (a payment intent is recorded but not credited; uploaded
//     code goes to the content store, which no list shows). Every other operation answers 403,
//     action metadata writes included (docs/protocol.md §2 "Action metadata").
//   - a page number past the last page answers 200 with no items (pages are not bounded above
//     by the data).
//   - -0 reads as the integer 0 (as in JSON Schema), so it is a bad value only where 0 is out of
//     range (minimum ≥ 1); elsewhere it is not sent.
//   - public operations (security: []) ignore credentials, so the credential cases are sent only to
//     the secured ones.
// Decided the other way (refused, 400 invalid_request), per docs/protocol.md §0 "Bodies" and "unknown
// request fields are rejected": a body whose Content-Type is not application/json (text/plain,
// form-encoded, even when the text is JSON), and a query parameter the operation does not declare,
// on GET and POST alike.
// Every operation also gets a gzip Content-Encoding (415) and 120 header lines (431), refused before
// any route (docs/protocol.md §6 "Connections").
// A body shorter than its Content-Length is sent over a raw socket left open until the server's
// read timeout answers it (408): httplib takes a half-closed connection for a closed one and answers
// nothing, which is no defect of the server (the client has hung up).
#include "sweep_test.hpp"

namespace enact::itest {

TEST_CASE("every operation of the OpenAPI document refuses bad input with a docs/protocol.md §0 error") {
  const auto started = std::chrono::steady_clock::now();
  // Account creation and the ChainSecured mints are limited per client address; the sweep sends
  // them hundreds of requests from one.
  // Thousands of requests with one key in a few seconds: over the per-key limit of the defaults.
  server_process srv({"--dev", "--new-accounts-per-minute", "0", "--key-rate", "0"});
  auto keep_alive = std::make_unique<http_client>("127.0.0.1", srv.port(), true);
  http_client& c = *keep_alive;

  // --- fixtures: an account, its usage keys, a wallet, an action in a group, credits --------
  const account_keys acct = create_account(c, "sweep");
  const auto owner = acct.auth();
  const usage_keys uk = create_usage_key(c, owner,
                                         {{"name", "sweep"},
                                          {"description", "fixture"},
                                          {"can_create_groups", true},
                                          {"execute_in_groups", json::array{0}}});
  const usage_keys bare = create_usage_key(c, owner, {{"name", "no scopes"}});
  const usage_keys gone = create_usage_key(c, owner, {{"name", "deleted"}});
  ITEST_REQUIRE_STATUS(c.post("/remove_usage_api_key", json::object{{"usage_api_key", gone.value}}, owner), 200);
  const response w = c.post("/create_wallet", json::object{{"name", "sweep"}}, owner);
  ITEST_REQUIRE_STATUS(w, 200);
  const std::string pkp = s_of(w.body, "pkp_id");
  const std::string code = "Enact.setResponse({ok: true})";
  const response up = c.post("/upload_action", json::object{{"code", code}}, owner);
  ITEST_REQUIRE_STATUS(up, 200);
  const std::string cid = s_of(up.body, "action_ipfs_cid");
  const std::string hashed = s_of(up.body, "hashed_cid");
  ITEST_REQUIRE_STATUS(
      c.post("/add_action", json::object{{"action_ipfs_cid", cid}, {"name", "sweep"}, {"description", "fixture"}},
             owner),
      200);
  const response g = c.post("/add_group",
                            json::object{{"name", "sweep"},
                                         {"description", "fixture"},
                                         {"pkp_ids_permitted", json::array{json::string(pkp)}},
                                         {"cid_hashes_permitted", json::array{json::string(hashed)}}},
                            owner);
  ITEST_REQUIRE_STATUS(g, 200);
  const uint64_t gid = u_of(g.body, "group_id");
  const response intent = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, owner);
  ITEST_REQUIRE_STATUS(intent, 200);
  const std::string paid_intent = s_of(intent.body, "payment_intent_id");
  ITEST_REQUIRE_STATUS(c.post("/billing/confirm_payment", json::object{{"payment_intent_id", paid_intent}}, owner),
                       200);
  const chain_env deployment = env_of(srv);
  const uint64_t chain_id = deployment.chain_id;
  const Secret signer_key(crypto::keccak256(std::string_view("sweep signer")));
  const Secret other_key(crypto::keccak256(std::string_view("sweep other wallet")));
  const std::string signer_address =
      to_checksum_address(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(signer_key).value()));
  const std::string other_address =
      to_checksum_address(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(other_key).value()));

  const json::object before = account_snapshot(c, owner, {gid});

  // --- the document ------------------------------------------------------------------------
  const response doc_r = c.request("GET", "/core/v1/openapi.json");
  ITEST_REQUIRE_STATUS(doc_r, 200);
  const json::object& doc = doc_r.obj();
  std::vector<operation> ops;
  for (const auto& [path, item] : doc.at("paths").as_object()) {
    for (const auto& [method, op_v] : item.as_object()) {
      const auto& op = op_v.as_object();
      // Stripe's webhook takes Stripe's whole event (an open schema) and trusts only its
      // signature: tests/billing's billing.server sends it every forgery instead.
      if (op.at("operationId").as_string() == "stripeWebhook")
        continue;
      operation o;
      o.id = std::string(op.at("operationId").as_string());
      o.method = std::string(method);
      for (auto& ch : o.method)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      o.path = std::string(path);
      for (const auto& sec : op.at("security").as_array()) {
        o.secured = true;
        o.wallet_auth = o.wallet_auth || sec.as_object().contains("WalletAuth");
      }
      if (const auto* rb = op.if_contains("requestBody"))
        o.body_schema = resolve(doc, rb->at("content").at("application/json").at("schema").as_object());
      if (const auto* ps = op.if_contains("parameters"))
        for (const auto& p : ps->as_array())
          o.query.push_back(p.as_object());
      ops.push_back(std::move(o));
    }
  }
  INFO("operations in the document: " << ops.size());
  REQUIRE(ops.size() >= kMinOperations);

  // --- base requests: fixture values by property name ----------------------------------------
  const json::object dictionary = {
      {"name", "sweep"},
      {"description", "fixture"},
      {"email", "sweep@example.org"},
      {"group_id", gid},
      {"pkp_id", pkp},
      {"action_ipfs_cid", cid},
      {"hashed_cid", hashed},
      {"code", code},
      {"params", json::object{{"sweep", 1}}},
      {"usage_api_key", uk.value},
      {"expiration", unix_now() + 86400},
      {"can_create_groups", false},
      {"can_delete_groups", false},
      {"can_create_pkps", false},
      {"manage_ipfs_ids_in_groups", json::array{gid}},
      {"add_pkp_to_groups", json::array{gid}},
      {"remove_pkp_from_groups", json::array{gid}},
      {"execute_in_groups", json::array{gid}},
      {"pkp_ids_permitted", json::array{json::string(pkp)}},
      {"cid_hashes_permitted", json::array{json::string(hashed)}},
      {"amount_cents", 500},
      {"payment_intent_id", paid_intent},
      {"new_admin_wallet_address", signer_address},
  };
  // Where the dictionary alone does not give a request that is both valid and harmless.
  const std::map<std::string, std::function<void(json::object&)>, std::less<>> overrides = {
      // Exactly one of code and action_ipfs_cid (docs/protocol.md §2 "Running an action").
      {"runAction",
       [](json::object& b) {
         b.erase("code");
       }},
      // A key without scopes may delete actions: the base request names a CID no action has.
      {"deleteAction",
       [](json::object& b) {
         b["hashed_cid"] = keccak_hex("a CID no action has");
       }},
      // Signed by another wallet than the new admin: refused at the signature, never converts.
      {"convertToChainSecuredAccount",
       [&](json::object& b) {
         b["new_admin_wallet_address"] = other_address;
       }},
  };
  for (const auto& [id, _] : overrides) {
    INFO("override for " << id);
    CHECK(std::any_of(ops.begin(), ops.end(), [&](const operation& o) { return o.id == id; }));
  }
  const auto base_body = [&](const operation& o) -> json::value {
    const json::object& s = o.body_schema;
    if (s.contains("type") && s.at("type").as_string() == "string")
      return json::value(code);
    json::object b;
    const auto* props = s.if_contains("properties");
    if (props == nullptr)
      return b;
    for (const auto& kv : props->as_object()) {
      const std::string key(kv.key());
      if (key == "typed_data" || key == "signature") {
        const json::object td = resolve(doc, props->at("typed_data").as_object());
        const auto& kinds = td.at("properties").at("primaryType").at("enum").as_array();
        REQUIRE(kinds.size() == 1);
        const auto k = eip712::envelope::kind_from_name(kinds[0].as_string());
        REQUIRE(k.has_value());
        // Version 2 for this deployment (docs/protocol.md §2), a conversion naming the owner's account.
        const auto env = eip712::envelope::sign_v2(*k, {chain_id, deployment.registry}, signer_key,
                                                   static_cast<uint64_t>(unix_now()),
                                                   codec::hex::decode_fixed<32>(acct.api_key_hash).value())
                             .value();
        b["typed_data"] = env.typed_data;
        b["signature"] = env.signature;
        continue;
      }
      if (const auto* v = dictionary.if_contains(key))
        b[key] = *v;
    }
    if (const auto* req = s.if_contains("required"))
      for (const auto& r : req->as_array()) {
        INFO(o.id << ": no fixture value for the required property " << r.as_string());
        REQUIRE(b.contains(r.as_string()));
      }
    if (const auto it = overrides.find(o.id); it != overrides.end())
      it->second(b);
    return b;
  };
  // A query value as a client sends it: a string as its text (a CID), anything else as its JSON.
  const auto query_value = [](const json::value& v) {
    return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
  };
  const auto base_query = [&](const operation& o) {
    std::string q;
    for (const auto& p : o.query)
      if (p.at("required").as_bool()) {
        const std::string name(p.at("name").as_string());
        INFO(o.id << ": no fixture value for the required query parameter " << name);
        REQUIRE(dictionary.contains(name));
        q += (q.empty() ? "?" : "&") + name + "=" + query_value(dictionary.at(name));
      }
    return q;
  };

  // --- the cases of each operation -----------------------------------------------------------
  std::map<std::string, tally> tallies;  // by "METHOD /path"
  size_t failures = 0;
  // Raw-socket cases wait for the server's read timeout; they run side by side at the end.
  std::vector<std::pair<const operation*, sweep_case>> raw_cases;
  const auto judge = [&](const operation& o, const sweep_case& k, const response& r) {
    auto& t = tallies[o.method + " " + o.path];
    ++t.sent;
    ++t.by_status[r.status];
    std::string why = verdict(r, k.want);
    if (why.empty() && r.status == 200 && k.what == "a page past the last" && !r.obj().at("items").as_array().empty())
      why = "items on a page past the last";
    if (!why.empty()) {
      ++failures;
      FAIL_CHECK(o.id << " — " << k.what << ": " << why << "; answer " << r.describe());
    }
  };
  const auto send = [&](const operation& o, const sweep_case& k) {
    if (k.method == "RAW") {
      raw_cases.emplace_back(&o, k);
      return;
    }
    judge(o, k, c.request(k.method, k.target, k.body, k.headers, k.content_type));
  };

  for (const auto& o : ops) {
    const std::string target = "/core/v1" + o.path;
    const std::string query = base_query(o);
    const json::value body = o.method == "POST" ? base_body(o) : json::value(nullptr);
    const std::string body_text = o.method == "POST" ? json::serialize(body) : std::string();
    const httplib::Headers creds = o.secured ? owner : httplib::Headers{};
    std::vector<sweep_case> cases;
    const auto add = [&](std::string what, std::string b, expectation want,
                         std::string content_type = "application/json") {
      cases.push_back(sweep_case{std::move(what), o.method, target + query, std::move(b), std::move(content_type),
                                 creds, std::move(want)});
    };

    if (o.method == "POST") {
      const bool is_object = o.body_schema.contains("type") && o.body_schema.at("type").as_string() == "object";
      std::vector<std::pair<std::string, std::string>> shape, nested, large;
      if (is_object) {
        for (const auto& kv : o.body_schema.at("properties").as_object())
          property_cases(doc, body, {std::string(kv.key())}, kv.value().as_object(), false, shape, nested, large);
        if (const auto* req = o.body_schema.if_contains("required"))
          for (const auto& r : req->as_array())
            shape.emplace_back("body." + std::string(r.as_string()) + " missing",
                               without(body, {std::string(r.as_string())}));
        json::value extra = body;
        extra.as_object()["sweep_unknown_field"] = 1;
        shape.emplace_back("an unknown property", json::serialize(extra));
        for (const char* top : {"[]", R"("sweep")", "7", "null", "true", "[{}]"})
          shape.emplace_back(std::string("top level ") + top, top);
      } else {
        // A bare JSON value (get_svc_action_ipfs_id takes the code as a JSON string).
        for (const auto& [kind, sample] : kSampleOfKind)
          if (!accepted_kinds(doc, o.body_schema, nullptr).contains(kind))
            shape.emplace_back(std::string("top level ") + kind, sample);
        large.emplace_back("a 1 MiB string", "\"" + std::string(kHugeString, 'a') + "\"");
        shape.emplace_back("invalid UTF-8",
                           "\"sw\xff\xfe"
                           "ep\"");
      }
      shape.emplace_back("an empty body", "");
      shape.emplace_back("only whitespace", " \r\n\t ");
      shape.emplace_back("a truncated body", body_text.substr(0, body_text.size() / 2));
      shape.emplace_back("the body less its last byte", body_text.substr(0, body_text.size() - 1));
      shape.emplace_back("trailing garbage", body_text + " x");
      shape.emplace_back("two JSON texts", body_text + body_text);
      shape.emplace_back("a NUL byte after the body", body_text + std::string(1, '\0'));
      shape.emplace_back("10,000 levels of [", std::string(10000, '[') + std::string(10000, ']'));
      shape.emplace_back("10,000 unclosed [", std::string(10000, '['));
      shape.emplace_back("10,000 levels of {\"a\":", [] {
        std::string s;
        for (int i = 0; i < 10000; ++i)
          s += "{\"a\":";
        return s + "1" + std::string(10000, '}');
      }());
      shape.emplace_back("a comment", "/* sweep */ " + body_text);
      shape.emplace_back("a UTF-8 byte order mark", "\xef\xbb\xbf" + body_text);
      // Deeply nested texts are refused by the parser, or first by a route's own body limit.
      const codes malformed_or_large = {"invalid_request", "payload_too_large"};
      for (const char* deep : {"10,000 levels of [", "10,000 levels of {\"a\":"})
        for (auto& [what, b] : shape)
          if (what == deep) {
            add(what, std::move(b), {malformed_or_large});
            what.clear();
          }
      for (auto& [what, b] : shape)
        if (!what.empty())
          add(what, std::move(b), {kMalformed});
      for (auto& [what, b] : nested)
        add(what, std::move(b), {kEnvelopeRefusals});
      for (auto& [what, b] : large)
        add(what, std::move(b), {kTooLarge});
      add("a 2 MiB body", body_text + std::string(kOversizedBody, ' '), {kTooLarge});
      // Content types other than JSON, even with the JSON text.
      add("text/plain with the JSON body", body_text, {kMalformed}, "text/plain");
      add("form-encoded with the JSON body", body_text, {kMalformed}, "application/x-www-form-urlencoded");
      add("a form", "name=sweep&description=fixture", {kMalformed}, "application/x-www-form-urlencoded");
      add("multipart", "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nsweep\r\n--b--\r\n", {kMalformed},
          "multipart/form-data; boundary=b");
      add("application/jsonp", body_text, {kMalformed}, "application/jsonp");
      // A query string on a POST: no POST operation declares query parameters.
      cases.push_back(sweep_case{"an undeclared query parameter",
                                 "POST",
                                 target + "?sweep_unknown=1",
                                 body_text,
                                 "application/json",
                                 creds,
                                 {kMalformed}});
      // A body shorter than its Content-Length: the read timeout answers it, 408 (docs/protocol.md §6
      // "Connections").
      std::string head = "POST " + target +
                         " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                         "Content-Type: application/json\r\nContent-Length: " +
                         std::to_string(body_text.size() + 100) + "\r\n";
      for (const auto& [k, v] : creds)
        head += k + ": " + v + "\r\n";
      cases.push_back(sweep_case{"a body shorter than its Content-Length",
                                 "RAW",
                                 target,
                                 head + "\r\n" + body_text,
                                 "",
                                 {},
                                 {kMalformed, false, 408}});
    } else {
      // Query parameters: wrong types and out of range, one at a time.
      std::set<std::string> declared;
      for (const auto& p : o.query) {
        const std::string name(p.at("name").as_string());
        declared.insert(name);
        const json::object s = resolve(doc, p.at("schema").as_object());
        std::vector<std::string> values = {
            "abc", "",     "1.5", "1e2", "-1", "0x10", "+1", " 1", "18446744073709551616", "99999999999999999999999",
            "%00", "1%00", "%ff"};
        if (auto i = integer_form(doc, s)) {
          if (i->contains("minimum") && i->at("minimum").to_number<int64_t>() >= 1)
            values.emplace_back("0");
          if (const auto* m = i->if_contains("maximum"))
            values.push_back(std::to_string(m->to_number<uint64_t>() + 1));
        }
        for (const auto& v : values) {
          std::string q;
          for (const auto& other : o.query) {
            const std::string oname(other.at("name").as_string());
            if (oname == name)
              q += (q.empty() ? "?" : "&") + name + "=" + v;
            else if (other.at("required").as_bool())
              q += (q.empty() ? "?" : "&") + oname + "=" + query_value(dictionary.at(oname));
          }
          cases.push_back(
              sweep_case{"query " + name + "=" + v, "GET", target + q, "", "application/json", creds, {kMalformed}});
        }
      }
      // A page past the last one is not an error: 200 with no items.
      if (declared.contains("page_number"))
        cases.push_back(sweep_case{"a page past the last",
                                   "GET",
                                   target + (query.empty() ? "?" : query + "&") + "page_number=1000000",
                                   "",
                                   "application/json",
                                   creds,
                                   {kMalformed, true}});
      cases.push_back(sweep_case{"an undeclared query parameter",
                                 "GET",
                                 target + (query.empty() ? "?" : query + "&") + "sweep_unknown=1",
                                 "",
                                 "application/json",
                                 creds,
                                 {kMalformed}});
    }

    // Credentials (secured operations only; public ones ignore them).
    if (o.secured) {
      const auto cred = [&](std::string what, httplib::Headers h, expectation want) {
        cases.push_back(sweep_case{std::move(what), o.method, target + query, body_text, "application/json",
                                   std::move(h), std::move(want)});
      };
      cred("no credential", {}, {kUnauthenticated});
      cred("a garbage X-Api-Key", api_key("garbage"), {kUnauthenticated});
      cred("a garbage bearer", bearer("garbage"), {kUnauthenticated});
      cred("Authorization: Basic", {{"Authorization", "Basic " + acct.api_key}}, {kUnauthenticated});
      cred("Authorization: Bearer and nothing", {{"Authorization", "Bearer "}}, {kUnauthenticated});
      cred("a 4 KiB X-Api-Key", api_key(std::string(4096, 'k')), {kUnauthenticated});
      // Over httplib's header line limit (8 KiB): refused before routing.
      cred("a 10 KiB X-Api-Key", api_key(std::string(10240, 'k')), {{"invalid_request", "unauthenticated"}});
      cred("a deleted usage key", gone.auth(), {kUnauthenticated});
      cred("a deleted usage key as bearer", bearer(gone.value), {kUnauthenticated});
      // docs/protocol.md §6 "Connections": refused before routing, whatever the operation.
      cred("a gzip Content-Encoding", {{"Content-Encoding", "gzip"}}, {kMalformed, false, 415});
      httplib::Headers many;
      for (int i = 0; i < 120; ++i)
        many.emplace("X-Sweep-" + std::to_string(i), "1");
      cred("120 header lines", many, {kMalformed, false, 431});
      if (kOpenToAnyKey.contains(o.id))
        cred("a usage key without scopes", bare.auth(), {{"conflict", "not_found"}, true});
      else
        cred("a usage key without scopes", bare.auth(), {{"forbidden"}});
      httplib::Headers both = owner;
      both.emplace("Authorization", "Bearer " + uk.value);
      cred("X-Api-Key and Authorization with different keys", both, {kMalformed});
      const expectation wallet_garbage =
          o.wallet_auth ? expectation{{"invalid_request", "unauthenticated", "typed_data_invalid", "signature_invalid"}}
                        : expectation{kUnauthenticated};
      cred("X-Wallet-Auth of garbage", {{"X-Wallet-Auth", "garbage"}}, wallet_garbage);
      cred("X-Wallet-Auth of base64 garbage", {{"X-Wallet-Auth", "eyJhIjoxfQ=="}}, wallet_garbage);
    }

    // Paths and methods.
    const std::string other_method = o.method == "GET" ? "POST" : "GET";
    cases.push_back(sweep_case{
        "a trailing slash", o.method, target + "/" + query, body_text, "application/json", creds, {kNoRoute}});
    std::string upper = target;
    upper[9] = static_cast<char>(std::toupper(static_cast<unsigned char>(upper[9])));
    cases.push_back(
        sweep_case{"another case", o.method, upper + query, body_text, "application/json", creds, {kNoRoute}});
    cases.push_back(sweep_case{
        "a doubled slash", o.method, "/core/v1/" + o.path + query, body_text, "application/json", creds, {kNoRoute}});
    for (const std::string& m : {other_method, std::string("PUT"), std::string("DELETE")})
      cases.push_back(sweep_case{"method " + m,
                                 m,
                                 target + query,
                                 body_text.empty() ? "{}" : body_text,
                                 "application/json",
                                 creds,
                                 {kWrongMethod}});

    for (const auto& k : cases)
      send(o, k);
  }

  {
    std::vector<std::future<response>> answers;
    for (const auto& [o, k] : raw_cases)
      answers.push_back(std::async(std::launch::async, [&srv, body = k.body] {
        return raw_exchange(srv.port(), body, std::chrono::seconds(20));
      }));
    for (size_t i = 0; i < raw_cases.size(); ++i)
      judge(*raw_cases[i].first, raw_cases[i].second, answers[i].get());
  }

  // --- nothing was written ---------------------------------------------------------------------
  const json::object after = account_snapshot(c, owner, {gid});
  CHECK_MESSAGE(after == before, "before: " << json::serialize(before) << "\nafter: " << json::serialize(after));

  // --- every base request is accepted as well-formed, and the server serves as before --------
  size_t base_ok = 0;
  for (const auto& o : ops) {
    const std::string q = base_query(o);
    const std::string b = o.method == "POST" ? json::serialize(base_body(o)) : std::string();
    const response r = c.request(o.method, "/core/v1" + o.path + q, b, o.secured ? owner : httplib::Headers{},
                                 "application/json; charset=utf-8");
    INFO(o.id << " base request: " << b.substr(0, 300));
    CHECK_MESSAGE(r.status != 0, "no response");
    CHECK_MESSAGE(r.status < 500, r.describe());
    CHECK_MESSAGE(r.error_code() != "invalid_request", r.describe());
    if (r.status == 200)
      ++base_ok;
    else
      CHECK(verdict(r, expectation{{"forbidden", "not_found", "conflict", "signature_invalid"}}).empty());
    auto& t = tallies[o.method + " " + o.path];
    ++t.sent;
    ++t.by_status[r.status];
  }
  CHECK(base_ok >= ops.size() / 2);
  ITEST_CHECK_STATUS(c.get("/account", owner), 200);
  ITEST_CHECK_STATUS(c.post("/add_group", json::object{{"name", "after the sweep"}}, owner), 200);

  // --- summary ---------------------------------------------------------------------------------
  size_t total = 0;
  std::printf("bad-input sweep: %zu operations\n", ops.size());
  for (const auto& [op, t] : tallies) {
    total += t.sent;
    std::string statuses;
    for (const auto& [st, n] : t.by_status)
      statuses += " " + std::to_string(st) + "×" + std::to_string(n);
    std::printf("  %-44s %4zu requests:%s\n", op.c_str(), t.sent, statuses.c_str());
  }
  const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  std::printf("bad-input sweep: %zu requests, %zu refused wrongly, %.1f s\n", total, failures, secs.count());
  std::fflush(stdout);
  CHECK(total >= ops.size() * 40);

  keep_alive.reset();  // no idle keep-alive connection delays the stop
  const exit_status st = srv.stop();
  CHECK(st.clean());
  // No request was a bug (internal) or a storage failure in the server's own judgement.
  for (const auto& line : srv.log_lines()) {
    const auto* level = line.if_contains("level");
    CHECK_MESSAGE((level == nullptr || level->as_string() != "error"), json::serialize(line));
  }
  check_no_secret_logged(srv, {acct.api_key, uk.value, bare.value});
}

}  // namespace enact::itest
