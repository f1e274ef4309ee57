// POST /core/v1/run_action against the real server (API.md §2 "Running an action",
// docs/actions.md): what the capability calls return (signatures that recover to the PKP and
// equal the SDK's own derivation from the data directory's root key, EIP-191, addresses,
// AES-GCM that only the sealing PKP opens), the PKPs a run may use, every rule of the execution
// check (refused before a worker is handed anything and before a credit is charged), the
// failure kinds of the sandbox while good runs go on beside them, a worker killed mid-run, the
// confinement of the worker processes as /proc shows it, that no key byte reaches a response or
// the log, and code fetched from an IPFS gateway (verified against its CID, then kept).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/types.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "enact/crypto/aes_gcm.hpp"
#include "enact/crypto/eip191.hpp"
#include "steps.hpp"

namespace enact::itest {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr std::string_view kRunRoute = "/core/v1/run_action";

// --- actions -------------------------------------------------------------------------------------

// Signs params.digest as "main", personal-signs params.message and reads the address.
constexpr std::string_view kSignCode =
    "var sig = Enact.signEcdsa({pkpId: params.pkp, digest: params.digest, name: \"main\"});\n"
    "var personal = Enact.signMessage({pkpId: params.pkp, message: params.message});\n"
    "Enact.setResponse({sig: sig, personal: personal,\n"
    "                   address: Enact.getAddress({pkpId: params.pkp})});\n";

// Seals with PKP a and opens it again; tries to open a ciphertext of PKP b with a, and an
// altered ciphertext; tries each capability on PKP c (not allowed in the run). Every error the
// action catches is returned as its message.
constexpr std::string_view kCryptoCode = R"(function attempt(f) {
  try { return {ok: f()}; } catch (e) { return {error: String(e.message)}; }
}
var sealed = Enact.encrypt({pkpId: params.a, plaintext: params.text});
var other = Enact.encrypt({pkpId: params.b, plaintext: params.text});
var last = sealed.slice(-2) === "00" ? "01" : "00";
Enact.setResponse({
  sealed: sealed,
  other: other,
  opened: Enact.decrypt({pkpId: params.a, ciphertext: sealed}),
  opened_by_b: Enact.decrypt({pkpId: params.b, ciphertext: other}),
  cross: attempt(function () { return Enact.decrypt({pkpId: params.a, ciphertext: other}); }),
  altered: attempt(function () {
    return Enact.decrypt({pkpId: params.a, ciphertext: sealed.slice(0, -2) + last});
  }),
  outsider_address: attempt(function () { return Enact.getAddress({pkpId: params.c}); }),
  outsider_sign: attempt(function () {
    return Enact.signEcdsa({pkpId: params.c, digest: "0x" + "11".repeat(32), name: "x"});
  }),
  outsider_encrypt: attempt(function () {
    return Enact.encrypt({pkpId: params.c, plaintext: "x"});
  })
});
)";

constexpr std::string_view kGoodCode = "Enact.setResponse({ok: params.x + 1});\n";

constexpr std::string_view kLoopCode = "while (true) {}\n";
constexpr std::string_view kMemoryCode =
    "var big = new Uint8Array(1024 * 1024 * 1024);\nEnact.setResponse(big.length);\n";
constexpr std::string_view kOutputCode = "Enact.setResponse(\"x\".repeat(10 * 1024 * 1024));\n";
constexpr std::string_view kRecursionCode = "function down(n) { return down(n + 1) + 1; }\ndown(0);\n";

// --- requests ------------------------------------------------------------------------------------

/// A PKP as /create_wallet answered it.
struct wallet {
  std::string pkp_id;
  std::string path;  // derivation_path, 0x-hex
};

wallet create_wallet(http_client& c, const httplib::Headers& auth, const std::string& name) {
  const response r = c.post("/create_wallet", json::object{{"name", name}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return wallet{s_of(r.body, "pkp_id"), s_of(r.body, "derivation_path")};
}

/// Code stored with /upload_action.
struct stored_action {
  std::string cid;
  std::string hashed;
};

stored_action upload(http_client& c, const httplib::Headers& auth, std::string_view code) {
  const response r = c.post("/upload_action", json::object{{"code", code}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  const stored_action a{s_of(r.body, "action_ipfs_cid"), s_of(r.body, "hashed_cid")};
  REQUIRE(a.cid == cid_of_code(code));
  REQUIRE(a.hashed == hashed_cid_hex(a.cid));
  return a;
}

uint64_t add_group(http_client& c, const httplib::Headers& auth, const std::string& name,
                   const std::vector<std::string>& pkps, const std::vector<std::string>& cid_hashes) {
  json::array p, h;
  for (const auto& x : pkps)
    p.push_back(json::string(x));
  for (const auto& x : cid_hashes)
    h.push_back(json::string(x));
  const response r =
      c.post("/add_group", json::object{{"name", name}, {"pkp_ids_permitted", p}, {"cid_hashes_permitted", h}}, auth);
  ITEST_REQUIRE_STATUS(r, 200);
  return u_of(r.body, "group_id");
}

/// A usage key whose only permission is execute in `groups`.
usage_keys executor_key(http_client& c, const httplib::Headers& owner, json::array groups) {
  return create_usage_key(c, owner, json::object{{"execute_in_groups", std::move(groups)}});
}

json::object by_cid(const std::string& cid, json::object params = {},
                    const std::optional<std::string>& pkp = std::nullopt) {
  json::object b{{"action_ipfs_cid", cid}, {"params", std::move(params)}};
  if (pkp)
    b["pkp_id"] = *pkp;
  return b;
}

json::object by_code(std::string_view code, json::object params = {}) {
  return json::object{{"code", code}, {"params", std::move(params)}};
}

response run(http_client& c, const httplib::Headers& auth, const json::object& body) {
  return c.post("/run_action", body, auth);
}

/// error.details of an action_failed answer (an empty object when absent).
json::object details_of(const response& r) {
  const auto* o = r.body.if_object();
  if (o == nullptr || !o->contains("error"))
    return {};
  const auto* d = o->at("error").as_object().if_contains("details");
  return d != nullptr && d->is_object() ? d->as_object() : json::object{};
}

std::string kind_of(const response& r) {
  const auto d = details_of(r);
  const auto* k = d.if_contains("kind");
  return k != nullptr && k->is_string() ? std::string(k->get_string()) : std::string();
}

/// The `sandbox_isolation` object of the server's "started" log line (written asynchronously,
/// so it may follow the banner by a moment).
json::object isolation_of(const server_process& srv) {
  const auto deadline = steady::now() + 10s;
  do {
    for (const auto& l : srv.log_lines())
      if (const auto* m = l.if_contains("msg"); m != nullptr && m->is_string() && m->get_string() == "started")
        return l.at("sandbox_isolation").as_object();
    std::this_thread::sleep_for(10ms);
  } while (steady::now() < deadline);
  FAIL("no started line in the server log");
  return {};
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// --- worker processes ----------------------------------------------------------------------------

/// The fields of /proc/<pid>/stat after the command name, which may itself hold spaces and
/// parentheses: field 3 (state) is element 0.
std::optional<std::vector<std::string>> stat_fields(pid_t pid, std::string* comm = nullptr) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return std::nullopt;
  if (comm != nullptr)
    *comm = stat.substr(open + 1, close - open - 1);
  std::istringstream in(stat.substr(close + 1));
  std::vector<std::string> out;
  for (std::string f; in >> f;)
    out.push_back(f);
  if (out.size() < 13)
    return std::nullopt;
  return out;
}

/// The enact-worker processes whose parent is `server` (found by scanning /proc/*/stat, which
/// needs no kernel option, unlike /proc/<pid>/task/*/children).
std::vector<pid_t> workers_of(pid_t server) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = std::atoi(name.c_str());
    std::string comm;
    const auto f = stat_fields(pid, &comm);
    if (f && std::atoi((*f)[1].c_str()) == server && comm == "enact-worker")
      out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A line "Name:\tvalue" of /proc/<pid>/status, the value trimmed ("" when absent).
std::string status_field(pid_t pid, std::string_view name) {
  std::istringstream in(read_text("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 && line[name.size()] == ':') {
      std::string v = line.substr(name.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return {};
}

/// How much a worker has done: its context switches and CPU ticks. An idle worker sleeps in
/// read(2) on its channel and none of these move; a worker handed a run moves at least its
/// context switches, and they never go back.
using activity = std::map<pid_t, std::tuple<uint64_t, uint64_t>>;

activity activity_of(pid_t server) {
  activity out;
  for (const pid_t w : workers_of(server)) {
    const auto f = stat_fields(w);
    if (!f)
      continue;
    const uint64_t ticks = std::strtoull((*f)[11].c_str(), nullptr, 10) +  // utime
                           std::strtoull((*f)[12].c_str(), nullptr, 10);   // stime
    const uint64_t switches = std::strtoull(status_field(w, "voluntary_ctxt_switches").c_str(), nullptr, 10) +
                              std::strtoull(status_field(w, "nonvoluntary_ctxt_switches").c_str(), nullptr, 10);
    out[w] = {switches, ticks};
  }
  return out;
}

/// The workers' activity once it stops moving (a worker that just answered may still be
/// tearing its heap down): two equal readings 100 ms apart, or the last reading after 10 s.
activity settled_activity(pid_t server) {
  activity last = activity_of(server);
  const auto deadline = steady::now() + 10s;
  while (steady::now() < deadline) {
    std::this_thread::sleep_for(100ms);
    activity now = activity_of(server);
    if (now == last)
      return now;
    last = std::move(now);
  }
  return last;
}

// --- secrets -------------------------------------------------------------------------------------

/// The data directory's TEE root key (32 bytes, API.md §1): the test reads it to derive the
/// PKP keys the server should have used, and to check that no response or log line holds it.
Secret root_key_of(const server_process& srv) {
  const std::string raw = read_text(srv.data_dir() + "/tee-root.key");
  REQUIRE(raw.size() == 32);
  return Secret(as_bytes(std::string_view(raw)));
}

/// The forms a 32-byte key could leak in: hex (both cases, with and without 0x) and base64.
std::vector<std::string> leak_forms(bytes_view key) {
  std::string lower = hex::encode(key);
  std::string upper = lower;
  for (auto& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return {lower, upper, base64::encode(key)};
}

}  // namespace

// --- capabilities --------------------------------------------------------------------------------

TEST_CASE("run_action: signatures, addresses and encryption by the PKPs the run may use") {
  server_process srv({"--dev", "--sandbox-workers", "2"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "runner");
  buy_credits(c, acct.auth(), 1000);
  const Secret root = root_key_of(srv);
  const hash256 account = hex::decode_fixed<32>(acct.api_key_hash).value();

  const wallet p1 = create_wallet(c, acct.auth(), "p1");
  const wallet p2 = create_wallet(c, acct.auth(), "p2");
  const wallet p3 = create_wallet(c, acct.auth(), "p3");
  const stored_action sign = upload(c, acct.auth(), kSignCode);
  const stored_action crypto = upload(c, acct.auth(), kCryptoCode);
  const uint64_t g = add_group(c, acct.auth(), "signers", {p1.pkp_id, p2.pkp_id}, {sign.hashed, crypto.hashed});
  // p3 is in a group of its own with no action: it may not be used with these actions.
  add_group(c, acct.auth(), "elsewhere", {p3.pkp_id}, {});
  const usage_keys exec = executor_key(c, acct.auth(), json::array{g});

  std::vector<std::string> bodies;  // every run_action response, searched for secrets below
  std::vector<std::string> derived_keys;

  SUBCASE("signEcdsa, signMessage and getAddress") {
    for (const auto& [who, auth] :
         {std::pair{std::string("account key"), acct.auth()}, std::pair{std::string("usage key"), exec.auth()}}) {
      for (const wallet& w : {p1, p2}) {
        INFO(who << ", PKP " << w.pkp_id);
        const hash256 digest = keccak256("digest for " + w.pkp_id + who);
        const std::string message = "héllo, wörld 👋 " + w.pkp_id;
        const response r =
            run(c, auth,
                by_cid(sign.cid, {{"pkp", w.pkp_id}, {"digest", hex::encode_prefixed(digest)}, {"message", message}},
                       w.pkp_id));
        bodies.push_back(r.text);
        ITEST_REQUIRE_STATUS(r, 200);
        CHECK(u_of(r.body, "charged_credits") == 1);
        CHECK(r.obj().at("run_ms").is_number());
        CHECK(s_of(r.body, "logs").empty());

        // signatures[name]: r, s, v, public_key, digest and the 65-byte signature.
        const auto& sigs = r.obj().at("signatures").as_object();
        REQUIRE(sigs.size() == 1);
        REQUIRE(sigs.contains("main"));
        const json::value& sig = sigs.at("main");
        CHECK(s_of(sig, "digest") == hex::encode_prefixed(digest));
        const auto sig65 = hex::decode_prefixed(s_of(sig, "signature")).value();
        REQUIRE(sig65.size() == 65);
        CHECK(s_of(sig, "r") == hex::encode_prefixed(bytes_view(sig65).first(32)));
        CHECK(s_of(sig, "s") == hex::encode_prefixed(bytes_view(sig65).subspan(32, 32)));
        const uint64_t v = u_of(sig, "v");
        CHECK((v == 27 || v == 28));
        CHECK(sig65[64] == v);
        const auto signer = secp256k1::recover_address(digest, sig65);
        REQUIRE(signer);
        CHECK(to_checksum_address(*signer) == w.pkp_id);
        const auto pub = hex::decode_prefixed(s_of(sig, "public_key")).value();
        REQUIRE(pub.size() == 65);
        CHECK(pub[0] == 0x04);
        secp256k1::public_key xy{};
        std::copy(pub.begin() + 1, pub.end(), xy.begin());
        CHECK(to_checksum_address(secp256k1::to_address(xy)) == w.pkp_id);
        // The action got the same object the caller gets.
        CHECK(r.obj().at("response").at("sig") == sig);

        // The key the server used is the one API.md §1 derives from the root key, the owning
        // account and the path: RFC 6979 makes the signature a function of key and digest, so it
        // must match exactly.
        const hash256 path = hex::decode_fixed<32>(w.path).value();
        const Secret key = pkp::signing_key(root, account, path).value();
        CHECK(to_checksum_address(pkp::wallet_address(root, account, path).value()) == w.pkp_id);
        CHECK(hex::encode_prefixed(secp256k1::sign(digest, key).value().to_bytes()) == s_of(sig, "signature"));
        derived_keys.push_back(hex::encode(key.view()));

        // signMessage: EIP-191 personal_sign of the UTF-8 message.
        const auto personal = hex::decode_prefixed(r.obj().at("response").at("personal").as_string()).value();
        const auto personal_signer =
            secp256k1::recover_address(personal_message_hash(std::string_view(message)), personal);
        REQUIRE(personal_signer);
        CHECK(to_checksum_address(*personal_signer) == w.pkp_id);

        // getAddress is the pkp_id, checksummed.
        CHECK(r.obj().at("response").at("address").as_string() == w.pkp_id);
      }
    }
  }

  SUBCASE("encrypt and decrypt; another PKP's ciphertext and a PKP outside the run are refused") {
    const std::string text = "a sealed note — 封印";
    const response r =
        run(c, exec.auth(), by_cid(crypto.cid, {{"a", p1.pkp_id}, {"b", p2.pkp_id}, {"c", p3.pkp_id}, {"text", text}}));
    bodies.push_back(r.text);
    ITEST_REQUIRE_STATUS(r, 200);
    const auto& out = r.obj().at("response").as_object();
    CHECK(out.at("opened").as_string() == text);
    CHECK(out.at("opened_by_b").as_string() == text);
    // Sealed forms: nonce ‖ ciphertext ‖ tag, opened by the SDK with the key API.md §1 derives.
    const auto sealed = hex::decode_prefixed(out.at("sealed").as_string()).value();
    const auto other = hex::decode_prefixed(out.at("other").as_string()).value();
    CHECK(sealed.size() == text.size() + aes_gcm::kOverhead);
    const Secret k1 = pkp::symmetric_key(root, account, hex::decode_fixed<32>(p1.path).value()).value();
    const Secret k2 = pkp::symmetric_key(root, account, hex::decode_fixed<32>(p2.path).value()).value();
    derived_keys.push_back(hex::encode(k1.view()));
    derived_keys.push_back(hex::encode(k2.view()));
    const auto opened = aes_gcm::decrypt(k1, sealed);
    REQUIRE(opened);
    CHECK(std::string(as_chars(*opened)) == text);
    CHECK(!aes_gcm::decrypt(k2, sealed));
    CHECK(aes_gcm::decrypt(k2, other));

    // The action's catch saw each refusal.
    const auto error_of = [&](std::string_view field) {
      const auto& o = out.at(field).as_object();
      INFO(field << ": " << json::serialize(o));
      CHECK(!o.contains("ok"));
      return o.contains("error") ? std::string(o.at("error").as_string()) : std::string();
    };
    CHECK(error_of("cross").find("not made by this PKP") != std::string::npos);
    CHECK(error_of("altered").find("not made by this PKP") != std::string::npos);
    for (const std::string field : {"outsider_address", "outsider_sign", "outsider_encrypt"}) {
      INFO(field);
      const std::string e = error_of(field);
      CHECK(e.find("is not usable in this run") != std::string::npos);
      CHECK(e.find(p3.pkp_id) != std::string::npos);
    }
    CHECK(r.obj().at("signatures").as_object().empty());
  }

  SUBCASE("only groups the key may execute in lend their PKPs to the run") {
    // p3 is listed with the action in a group on which the usage key has no execute.
    add_group(c, acct.auth(), "not for exec", {p3.pkp_id}, {crypto.hashed});
    const json::object params{{"a", p1.pkp_id}, {"b", p2.pkp_id}, {"c", p3.pkp_id}, {"text", "t"}};
    const response refused = run(c, exec.auth(), by_cid(crypto.cid, params));
    bodies.push_back(refused.text);
    ITEST_REQUIRE_STATUS(refused, 200);
    const auto& e = refused.obj().at("response").at("outsider_address").as_object();
    REQUIRE(e.contains("error"));
    CHECK(std::string(e.at("error").as_string()).find("is not usable in this run") != std::string::npos);
    // Naming p3 as the run's PKP is refused outright for that key.
    const response named = run(c, exec.auth(), by_cid(crypto.cid, params, p3.pkp_id));
    bodies.push_back(named.text);
    check_error(srv, named, 403, "forbidden", kRunRoute);
    // The account key executes in every group, so p3 is usable in its runs.
    const response owner = run(c, acct.auth(), by_cid(crypto.cid, params, p3.pkp_id));
    bodies.push_back(owner.text);
    ITEST_REQUIRE_STATUS(owner, 200);
    const auto& ok = owner.obj().at("response").at("outsider_address").as_object();
    REQUIRE(ok.contains("ok"));
    CHECK(ok.at("ok").as_string() == p3.pkp_id);
  }

  SUBCASE("a PKP unknown to the account is no more usable than one outside the group") {
    const std::string stranger = random_address_hex();
    const response r =
        run(c, acct.auth(), by_cid(crypto.cid, {{"a", p1.pkp_id}, {"b", p2.pkp_id}, {"c", stranger}, {"text", "t"}}));
    bodies.push_back(r.text);
    ITEST_REQUIRE_STATUS(r, 200);
    const auto& e = r.obj().at("response").at("outsider_address").as_object();
    REQUIRE(e.contains("error"));
    CHECK(std::string(e.at("error").as_string()).find("is not usable in this run") != std::string::npos);
  }

  // No key byte anywhere: the root key, the PKP keys derived from it and the API keys appear in
  // no run response, nor in the log.
  const auto exit = srv.stop();
  CHECK(exit.clean());
  std::vector<std::string> forbidden = leak_forms(root.view());
  for (const auto& k : derived_keys)
    forbidden.push_back(k);
  forbidden.push_back(acct.api_key);
  forbidden.push_back(exec.value);
  REQUIRE(!bodies.empty());
  const std::string log = srv.log_text();
  for (const auto& s : forbidden) {
    for (const auto& b : bodies)
      CHECK_MESSAGE(b.find(s) == std::string::npos, "a key appears in a run_action response");
    CHECK_MESSAGE(log.find(s) == std::string::npos, "a key appears in the server log");
  }
  check_no_secret_logged(srv, {acct.api_key, exec.value});
}

// --- the execution rule --------------------------------------------------------------------------

TEST_CASE("run_action: each rule of the execution check refuses before any run or charge") {
  server_process srv({"--dev", "--sandbox-workers", "2"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "rules");
  buy_credits(c, acct.auth(), 1000);

  const wallet p1 = create_wallet(c, acct.auth(), "in-group");
  const wallet p2 = create_wallet(c, acct.auth(), "other-group");
  const stored_action listed = upload(c, acct.auth(), kGoodCode);
  const std::string unlisted_code = "// in no group\n" + std::string(kGoodCode);
  const stored_action unlisted = upload(c, acct.auth(), unlisted_code);
  // Code whose CID a group lists but that was never stored (and no gateway is configured).
  const std::string missing_code = "// never uploaded\n" + std::string(kGoodCode);
  const std::string missing_cid = cid_of_code(missing_code);
  // Code that is authorised as its CID when sent in the body (never uploaded either).
  const std::string inline_code = "// sent inline\n" + std::string(kGoodCode);
  const std::string inline_cid = cid_of_code(inline_code);
  const std::string inline_unlisted = "// sent inline, unlisted\n" + std::string(kGoodCode);

  const uint64_t g = add_group(c, acct.auth(), "g", {p1.pkp_id},
                               {listed.hashed, hashed_cid_hex(missing_cid), hashed_cid_hex(inline_cid)});
  const uint64_t other = add_group(c, acct.auth(), "other", {p2.pkp_id}, {});
  const usage_keys no_execute = executor_key(c, acct.auth(), json::array{});
  const usage_keys other_only = executor_key(c, acct.auth(), json::array{other});
  const usage_keys wildcard = executor_key(c, acct.auth(), json::array{0});
  const usage_keys in_g = executor_key(c, acct.auth(), json::array{g});
  const usage_keys deleted = executor_key(c, acct.auth(), json::array{g});
  ITEST_REQUIRE_STATUS(c.post("/remove_usage_api_key", json::object{{"usage_api_key", deleted.value}}, acct.auth()),
                       200);

  const json::object params{{"x", 41}};
  struct refusal {
    std::string name;
    httplib::Headers auth;
    json::object body;
    int status;
    std::string code;
  };
  const std::vector<refusal> refusals{
      {"CID in no group", acct.auth(), by_cid(unlisted.cid, params), 403, "forbidden"},
      {"PKP not in the group that lists the CID", acct.auth(), by_cid(listed.cid, params, p2.pkp_id), 403, "forbidden"},
      {"PKP unknown to the account", acct.auth(), by_cid(listed.cid, params, random_address_hex()), 403, "forbidden"},
      {"key without execute", no_execute.auth(), by_cid(listed.cid, params), 403, "forbidden"},
      {"execute granted only on another group", other_only.auth(), by_cid(listed.cid, params), 403, "forbidden"},
      {"execute only on another group that lists the PKP", other_only.auth(), by_cid(listed.cid, params, p2.pkp_id),
       403, "forbidden"},
      {"deleted key", deleted.auth(), by_cid(listed.cid, params), 401, "unauthenticated"},
      {"code whose CID no group lists", acct.auth(), by_code(inline_unlisted, params), 403, "forbidden"},
      {"CID listed but in no content store, no gateway", acct.auth(), by_cid(missing_cid, params), 404, "not_found"},
  };
  for (const auto& f : refusals) {
    INFO(f.name);
    const uint64_t balance = balance_of(c, acct.auth());
    const activity before = settled_activity(srv.pid());
    REQUIRE(before.size() == 2);
    const response r = run(c, f.auth, f.body);
    check_error(srv, r, f.status, f.code, kRunRoute);
    CHECK(!details_of(r).contains("kind"));
    CHECK(settled_activity(srv.pid()) == before);  // no worker was handed anything
    CHECK(balance_of(c, acct.auth()) == balance);  // nothing charged
  }

  // What the rule accepts, each charged one credit and run by a worker (which also shows that
  // the activity reading above would have seen a run).
  const std::vector<std::tuple<std::string, httplib::Headers, json::object>> accepted{
      {"account key", acct.auth(), by_cid(listed.cid, params)},
      {"account key and the PKP", acct.auth(), by_cid(listed.cid, params, p1.pkp_id)},
      {"execute on the group", in_g.auth(), by_cid(listed.cid, params, p1.pkp_id)},
      {"wildcard 0 in execute_in_groups", wildcard.auth(), by_cid(listed.cid, params)},
      {"code authorised as its CID", in_g.auth(), by_code(inline_code, params)},
      // The code sent in the body was kept: its CID now runs from the content store.
      {"CID of code sent before", wildcard.auth(), by_cid(inline_cid, params)},
  };
  for (const auto& [name, auth, body] : accepted) {
    INFO(name);
    const uint64_t balance = balance_of(c, acct.auth());
    const activity before = settled_activity(srv.pid());
    const response r = run(c, auth, body);
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().at("response") == json::value(json::object{{"ok", 42}}));
    CHECK(u_of(r.body, "charged_credits") == 1);
    CHECK(settled_activity(srv.pid()) != before);
    CHECK(balance_of(c, acct.auth()) == balance - 1);
  }

  SUBCASE("insufficient credits: 402, nothing run, nothing charged") {
    const account_keys poor = create_account(c, "poor");
    REQUIRE(balance_of(c, poor.auth()) == 0);
    add_group(c, poor.auth(), "g", {}, {listed.hashed});
    const activity before = settled_activity(srv.pid());
    const response r = run(c, poor.auth(), by_cid(listed.cid, params));
    check_error(srv, r, 402, "insufficient_credits", kRunRoute);
    CHECK(!details_of(r).contains("kind"));
    CHECK(settled_activity(srv.pid()) == before);
    CHECK(balance_of(c, poor.auth()) == 0);
    // The same call runs once credits are bought.
    buy_credits(c, poor.auth(), 500);
    const response paid = run(c, poor.auth(), by_cid(listed.cid, params));
    ITEST_CHECK_STATUS(paid, 200);
    CHECK(balance_of(c, poor.auth()) == 499);
  }
}

// --- failures and limits -------------------------------------------------------------------------

namespace {

struct bad_action {
  std::string_view name;
  std::string_view code;
  std::string_view kind;
};

constexpr bad_action kBadActions[] = {
    {"throw", kThrowCode, "exception"},
    {"endless loop", kLoopCode, "timeout"},
    {"1 GiB allocation", kMemoryCode, "memory"},
    {"10 MiB response", kOutputCode, "output_too_large"},
    {"deep recursion", kRecursionCode, "exception"},
};

}  // namespace

TEST_CASE("run_action: failures answer 422 with their kind, and good runs go on beside them") {
  server_process srv({"--dev", "--run-timeout-ms", "1000", "--sandbox-workers", "4"});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "limits");
  buy_credits(c, acct.auth(), 1000);
  std::vector<std::string> hashes;
  std::map<std::string_view, std::string> cids;
  const stored_action good = upload(c, acct.auth(), kGoodCode);
  hashes.push_back(good.hashed);
  for (const auto& b : kBadActions) {
    const stored_action a = upload(c, acct.auth(), b.code);
    cids[b.name] = a.cid;
    hashes.push_back(a.hashed);
  }
  const uint64_t g = add_group(c, acct.auth(), "g", {}, hashes);
  const usage_keys exec = executor_key(c, acct.auth(), json::array{g});

  SUBCASE("each failure alone") {
    for (const auto& b : kBadActions) {
      INFO(b.name);
      const uint64_t balance = balance_of(c, acct.auth());
      const response r = run(c, exec.auth(), by_cid(cids[b.name]));
      check_error(srv, r, 422, "action_failed", kRunRoute);
      const auto d = details_of(r);
      CHECK(kind_of(r) == b.kind);
      CHECK(d.at("charged_credits").to_number<uint64_t>() == 1);
      CHECK(d.at("stack").is_string());
      CHECK(d.at("logs").is_string());
      CHECK(balance_of(c, acct.auth()) == balance - 1);  // a run that failed was still run
      if (b.name == "throw") {
        CHECK(r.error_message() == "Error: boom");
        const std::string stack(d.at("stack").as_string());
        CHECK(stack.find("Error: boom") != std::string::npos);
        CHECK(stack.find("action.js:3") != std::string::npos);  // the line of the throw
        CHECK(stack.find("action.js:5") != std::string::npos);  // the line of the call
      }
      if (b.name == "deep recursion")
        CHECK(r.error_message().find("RangeError") != std::string::npos);
    }
  }

  SUBCASE("50 good runs from several threads while the bad ones run") {
    constexpr int kGoodThreads = 5;
    constexpr int kRunsPerThread = 10;
    constexpr int kBadRounds = 2;
    const uint64_t balance = balance_of(c, acct.auth());
    std::vector<std::vector<std::string>> failures(kGoodThreads + std::size(kBadActions));
    std::vector<std::thread> threads;
    for (int t = 0; t < kGoodThreads; ++t) {
      threads.emplace_back([&, t] {
        http_client tc = srv.client(/*keep_alive=*/true);
        for (int i = 0; i < kRunsPerThread; ++i) {
          const int x = t * 1000 + i;
          const response r = run(tc, exec.auth(), by_cid(good.cid, {{"x", x}}));
          if (r.status != 200 || !r.body.is_object() ||
              r.obj().at("response") != json::value(json::object{{"ok", x + 1}}))
            failures[t].push_back("good run " + std::to_string(x) + ": " + r.describe());
        }
      });
    }
    for (size_t b = 0; b < std::size(kBadActions); ++b) {
      threads.emplace_back([&, b] {
        http_client tc = srv.client(/*keep_alive=*/true);
        const auto& bad = kBadActions[b];
        for (int i = 0; i < kBadRounds; ++i) {
          const response r = run(tc, exec.auth(), by_cid(cids.at(bad.name)));
          if (r.status != 422 || r.error_code() != "action_failed" || kind_of(r) != bad.kind)
            failures[kGoodThreads + b].push_back(std::string(bad.name) + ": " + r.describe());
        }
      });
    }
    for (auto& t : threads)
      t.join();
    for (const auto& list : failures)
      for (const auto& f : list)
        FAIL_CHECK(f);
    const uint64_t runs = kGoodThreads * kRunsPerThread + std::size(kBadActions) * kBadRounds;
    CHECK(balance_of(c, acct.auth()) == balance - runs);
  }
}

// --- a worker killed mid-run ---------------------------------------------------------------------

TEST_CASE("run_action: a worker killed mid-run fails that run, and the pool recovers") {
  // The default wall limit (10 s) leaves the kill, not the timeout, to end the run.
  constexpr size_t kWorkers = 2;
  server_process srv({"--dev", "--sandbox-workers", std::to_string(kWorkers)});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "crash");
  buy_credits(c, acct.auth(), 1000);
  const stored_action loop = upload(c, acct.auth(), kLoopCode);
  const stored_action good = upload(c, acct.auth(), kGoodCode);
  add_group(c, acct.auth(), "g", {}, {loop.hashed, good.hashed});

  const activity before = settled_activity(srv.pid());
  REQUIRE(before.size() == kWorkers);
  std::optional<response> looped;
  std::thread runner([&] {
    http_client tc = srv.client();
    looped = run(tc, acct.auth(), by_cid(loop.cid));
  });

  // The worker running the loop is the one whose CPU time grows; the others sleep in read(2).
  pid_t victim = 0;
  const auto deadline = steady::now() + 20s;
  while (victim == 0 && steady::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    for (const auto& [pid, now] : activity_of(srv.pid())) {
      const auto was = before.find(pid);
      if (was != before.end() && std::get<1>(now) > std::get<1>(was->second) + 1)
        victim = pid;
    }
  }
  if (victim != 0)
    ::kill(victim, SIGKILL);
  runner.join();
  REQUIRE_MESSAGE(victim != 0, "no worker was seen running the loop");
  REQUIRE(looped);
  check_error(srv, *looped, 422, "action_failed", kRunRoute);
  const std::string kind = kind_of(*looped);
  CHECK_MESSAGE((kind == "crashed" || kind == "timeout"), "kind " << kind);

  // A replacement takes the killed worker's place.
  std::vector<pid_t> now;
  const auto respawn_deadline = steady::now() + 20s;
  do {
    std::this_thread::sleep_for(50ms);
    now = workers_of(srv.pid());
  } while ((now.size() != kWorkers || std::find(now.begin(), now.end(), victim) != now.end()) &&
           steady::now() < respawn_deadline);
  CHECK(now.size() == kWorkers);
  CHECK(std::find(now.begin(), now.end(), victim) == now.end());

  // And the next runs succeed, on every worker.
  for (int x = 0; x < 4 * static_cast<int>(kWorkers); ++x) {
    const response r = run(c, acct.auth(), by_cid(good.cid, {{"x", x}}));
    ITEST_REQUIRE_STATUS(r, 200);
    CHECK(r.obj().at("response") == json::value(json::object{{"ok", x + 1}}));
  }
  // The server itself never went down.
  CHECK(srv.stop().clean());
}

// --- confinement of the workers ------------------------------------------------------------------

TEST_CASE("sandbox workers: empty environment, no new privileges, the seccomp filter") {
  server_process srv({"--dev", "--sandbox-workers", "2"});
  const json::object iso = isolation_of(srv);
  INFO("sandbox_isolation " << json::serialize(iso));
  for (const std::string field : {"empty_environment", "fds_closed", "network_namespace", "dropped_privileges",
                                  "rlimits", "no_new_privs", "seccomp"}) {
    INFO(field);
    REQUIRE(iso.contains(field));
    CHECK(iso.at(field).is_bool());
  }
  // These two never depend on the host (docs/actions.md).
  CHECK(iso.at("empty_environment").as_bool());
  CHECK(iso.at("no_new_privs").as_bool());

  // Check the workers after a run too: a worker confines itself before its first run.
  http_client c = srv.client();
  const account_keys acct = create_account(c, "confined");
  buy_credits(c, acct.auth(), 500);
  const stored_action good = upload(c, acct.auth(), kGoodCode);
  add_group(c, acct.auth(), "g", {}, {good.hashed});
  for (int x = 0; x < 4; ++x)
    ITEST_REQUIRE_STATUS(run(c, acct.auth(), by_cid(good.cid, {{"x", x}})), 200);

  const auto workers = workers_of(srv.pid());
  REQUIRE(workers.size() == 2);
  for (const pid_t w : workers) {
    INFO("worker " << w);
    const std::string base = "/proc/" + std::to_string(w);
    REQUIRE(std::filesystem::exists(base + "/environ"));
    CHECK(read_text(base + "/environ").empty());
    CHECK(status_field(w, "NoNewPrivs") == "1");
    if (iso.at("seccomp").as_bool())
      CHECK(status_field(w, "Seccomp") == "2");  // SECCOMP_MODE_FILTER
    if (iso.at("dropped_privileges").as_bool())
      CHECK(status_field(w, "Uid").starts_with("65534\t65534\t65534\t65534"));
    if (iso.at("fds_closed").as_bool()) {
      // Only the channel to the server remains open.
      size_t fds = 0;
      for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(base + "/fd"))
        ++fds;
      CHECK(fds <= 2);
    }
  }
}

// --- the IPFS gateway ----------------------------------------------------------------------------

namespace {

/// A minimal IPFS HTTP gateway: GET /ipfs/<cid> answers the bytes registered for the CID (right
/// or wrong), 404 otherwise, and counts requests per CID.
class fake_gateway {
 public:
  fake_gateway() {
    server_.Get(R"(/ipfs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string cid = req.matches[1];
      std::lock_guard lock(mu_);
      ++hits_[cid];
      if (const auto it = content_.find(cid); it != content_.end())
        res.set_content(it->second, "application/octet-stream");
      else
        res.status = 404;
    });
    serving_.emplace(server_);
  }
  fake_gateway(const fake_gateway&) = delete;
  fake_gateway& operator=(const fake_gateway&) = delete;

  void serve(const std::string& cid, std::string bytes) {
    std::lock_guard lock(mu_);
    content_[cid] = std::move(bytes);
  }
  int hits(const std::string& cid) {
    std::lock_guard lock(mu_);
    return hits_[cid];
  }
  [[nodiscard]] std::string url() const { return serving_->url(); }
  void stop() { serving_->stop(); }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::map<std::string, std::string> content_;
  std::map<std::string, int> hits_;
  std::optional<serving> serving_;  // last: stopped before the state its routes use
};

}  // namespace

TEST_CASE("run_action by CID from an IPFS gateway: verified, then kept; wrong bytes refused") {
  fake_gateway gw;
  const std::string right_code = "Enact.setResponse({from: \"gateway\", x: params.x});\n";
  const std::string right_cid = cid_of_code(right_code);
  const std::string claimed_code = "Enact.setResponse(\"what the CID names\");\n";
  const std::string wrong_cid = cid_of_code(claimed_code);
  const std::string absent_cid = cid_of_code("// on no gateway\n");
  gw.serve(right_cid, right_code);
  gw.serve(wrong_cid, "Enact.setResponse(\"something else\");\n");

  server_process srv({"--dev", "--sandbox-workers", "2", "--ipfs-gateway", gw.url()});
  http_client c = srv.client();
  const account_keys acct = create_account(c, "gateway");
  buy_credits(c, acct.auth(), 500);
  add_group(c, acct.auth(), "g", {},
            {hashed_cid_hex(right_cid), hashed_cid_hex(wrong_cid), hashed_cid_hex(absent_cid)});

  // Bytes that do not hash to the CID: 503, nothing charged, nothing kept.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const response r = run(c, acct.auth(), by_cid(wrong_cid));
    check_error(srv, r, 503, "unavailable", kRunRoute);
    CHECK(r.error_message().find("do not hash to " + wrong_cid) != std::string::npos);
    CHECK(balance_of(c, acct.auth()) == 500);
  }
  CHECK(gw.hits(wrong_cid) == 2);  // refused bytes are not kept: the second run asked again

  // A CID the gateway does not have: 404, nothing charged.
  const response absent = run(c, acct.auth(), by_cid(absent_cid));
  check_error(srv, absent, 404, "not_found", kRunRoute);
  CHECK(balance_of(c, acct.auth()) == 500);

  // The right bytes run, and are kept in the content store.
  const response first = run(c, acct.auth(), by_cid(right_cid, {{"x", 1}}));
  ITEST_REQUIRE_STATUS(first, 200);
  CHECK(first.obj().at("response") == json::value(json::object{{"from", "gateway"}, {"x", 1}}));
  CHECK(gw.hits(right_cid) == 1);
  CHECK(balance_of(c, acct.auth()) == 499);

  gw.stop();
  const response second = run(c, acct.auth(), by_cid(right_cid, {{"x", 2}}));
  ITEST_REQUIRE_STATUS(second, 200);
  CHECK(second.obj().at("response") == json::value(json::object{{"from", "gateway"}, {"x", 2}}));
  CHECK(gw.hits(right_cid) == 1);
  CHECK(balance_of(c, acct.auth()) == 498);

  // With the gateway gone, code it never served cleanly is unavailable, and still not charged.
  const response gone = run(c, acct.auth(), by_cid(wrong_cid));
  check_error(srv, gone, 503, "unavailable", kRunRoute);
  CHECK(balance_of(c, acct.auth()) == 498);
}

}  // namespace enact::itest
