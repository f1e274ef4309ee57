// SPDX-License-Identifier: Apache-2.0
// Suite-wide secret scan (docs/security.md "Secret hygiene scan"): runs after every integration
// test (ctest fixture secret_scan) over what the fixture kept of each server instance in
// $ENACT_SECRET_SCAN_DIR/<instance>/ (tests/integration/server_process.cpp):
//   command       the server's arguments, one a line
//   stderr.log    its JSON log, at debug level unless the test chose a level
//   stdout.log    its banner and anything else it printed
//   transcript    every response an http_client received from it: "=== status method path n\n",
//                 n bytes of body, "\n"
//   tee-root.key  the simulated TEE's root key of its data directory (when it has one)
//
// The secrets: the key values the minting routes handed out (new_account's api_key, the
// usage_api_key of add_usage_api_key and add_usage_api_key_with_signature), trigger API tokens
// printed by `enact-server issue-token`, every root key, and the PKP private keys derived from
// each root key: the api payer's, and those of the wallets the transcripts show (API-mode wallets
// by account hash and index, signature-minted ones by their derivation path). A value in a
// secret-bearing field of any other answer is a secret too, with no answer exempt: a list or get
// that returns a key is a leak. Every form of every secret (secret_forms.hpp) is searched for in
// every log and every response body except the one answer that handed it out.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "secret_forms.hpp"

namespace enact::itest {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

/// One response of a transcript.
struct record {
  int status = 0;
  std::string method;
  std::string path;
  std::string body;
};

/// The records of a transcript file; stops at the first malformed one (a test killed mid-write).
std::vector<record> parse_transcript(const std::string& text) {
  std::vector<record> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    if (eol == std::string::npos || text.compare(at, 4, "=== ") != 0)
      break;
    const std::string head = text.substr(at + 4, eol - at - 4);
    const size_t sp1 = head.find(' ');
    const size_t sp2 = head.find(' ', sp1 + 1);
    const size_t last = head.rfind(' ');
    if (sp1 == std::string::npos || sp2 == std::string::npos || last <= sp2 - 1)
      break;
    record r;
    r.status = std::atoi(head.substr(0, sp1).c_str());
    r.method = head.substr(sp1 + 1, sp2 - sp1 - 1);
    r.path = head.substr(sp2 + 1, last - sp2 - 1);
    const size_t n = std::strtoull(head.c_str() + last + 1, nullptr, 10);
    if (eol + 1 + n > text.size())
      break;
    r.body = text.substr(eol + 1, n);
    out.push_back(std::move(r));
    at = eol + 1 + n + 1;
  }
  return out;
}

/// Where a secret was handed out: an instance and a transcript record, or the instance's stdout
/// (issue-token). A secret with no origin is exempt nowhere.
struct origin {
  std::string instance;
  long record = -1;  // -1: stdout.log
  bool operator==(const origin&) const = default;
};

struct known_secret {
  secret s;
  std::optional<origin> from;
};

/// The routes whose 200 answer hands out a key value (docs/protocol.md §1): "field path-suffix".
bool mints(const record& r, std::string_view field) {
  if (r.status != 200)
    return false;
  const std::string_view p = std::string_view(r.path).substr(0, r.path.find('?'));
  if (field == "api_key")
    return p.ends_with("/new_account");
  return p.ends_with("/add_usage_api_key") || p.ends_with("/add_usage_api_key_with_signature");
}

bool is_hex_of(std::string_view s, size_t bytes) {
  if (s.size() != 2 + 2 * bytes || !s.starts_with("0x"))
    return false;
  return std::all_of(s.begin() + 2, s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// What the answers of the instances sharing one root key show about its wallets.
struct wallet_evidence {
  std::set<std::string> account_hashes;    // 0x-hex, lower case
  std::set<std::string> addresses;         // 0x-hex, lower case
  std::set<std::string> derivation_paths;  // 0x-hex, lower case
};

/// The result of a scan over a capture directory.
struct scan_report {
  size_t instances = 0;
  size_t with_transcript = 0;
  size_t records = 0;
  size_t log_bytes = 0;
  size_t body_bytes = 0;
  size_t debug_lines = 0;
  std::map<std::string, size_t> secrets_by_kind;
  size_t secrets = 0;
  std::vector<std::string> leaks;  // "<kind> (keccak 0x…) in <instance>/<file>[ …]"
};

class collector {
 public:
  /// Adds a secret unless one with the same bytes is known (the first origin is kept).
  void add(secret s, std::optional<origin> from) {
    const std::string& raw = s.forms.size() >= 5 ? s.forms[s.forms.size() - 5] : s.forms.front();
    if (!seen_.insert(raw).second)
      return;
    all_.push_back({std::move(s), std::move(from)});
  }
  void walk(const json::value& v, const std::string& instance, long rec, const record& r, wallet_evidence& ev) {
    if (const auto* a = v.if_array()) {
      for (const auto& e : *a)
        walk(e, instance, rec, r, ev);
      return;
    }
    const auto* o = v.if_object();
    if (o == nullptr)
      return;
    for (const auto& kv : *o) {
      const std::string_view key = kv.key();
      if (const auto* s = kv.value().if_string()) {
        const std::string text(*s);
        if (key == "api_key" || key == "usage_api_key") {
          auto raw = codec::base64::decode(text, "key");
          if (raw && raw->size() == 32) {
            const bool minted = mints(r, key);
            add(of_text(std::string(key) + (minted ? "" : " (seen outside a minting answer)"), text, false),
                minted ? std::optional<origin>(origin{instance, rec}) : std::nullopt);
          }
        } else if (key == "api_key_hash" && is_hex_of(text, 32)) {
          ev.account_hashes.insert(lower(text));
        } else if (key == "derivation_path" && is_hex_of(text, 32)) {
          ev.derivation_paths.insert(lower(text));
        } else if (is_hex_of(text, 20)) {
          ev.addresses.insert(lower(text));
        }
      } else {
        walk(kv.value(), instance, rec, r, ev);
      }
    }
  }
  std::vector<known_secret>& all() { return all_; }

 private:
  std::set<std::string> seen_;
  std::vector<known_secret> all_;
};

/// The PKP private keys of `root`: the api payer's, and those of the wallets `ev` shows: for
/// each account hash, indices from 0 while a derived address is among those served (4 misses
/// past the last match end it), and every derivation path.
void derive_wallet_keys(const std::string& root_raw, const wallet_evidence& ev, collector& out) {
  const Secret root(as_bytes(root_raw));
  for (const std::string& h : ev.account_hashes) {
    const hash256 hash = codec::hex::decode_fixed<32>(h).value();
    uint64_t last_hit = 0;
    bool any = false;
    for (uint64_t i = 0; i < 4096 && (!any ? i < 4 : i <= last_hit + 4); ++i) {
      const pkp::derivation_path path = pkp::api_mode_path(hash, i);
      const auto addr = pkp::wallet_address(root, hash, path);
      if (!addr || ev.addresses.count(codec::hex::encode_prefixed(*addr)) == 0)
        continue;
      const auto key = pkp::signing_key(root, hash, path);
      if (!key)
        continue;
      out.add(of_bytes("PKP private key (API mode)", key->view()), std::nullopt);
      any = true;
      last_hit = i;
    }
  }
  // The api payer: the server key that pays for API-mode writes on an evm ledger
  // (server/app/ledger_backend.cpp, api_payer_purpose).
  if (const auto payer = pkp::server_signing_key(root, "api-payer/0"))
    out.add(of_bytes("API payer private key", payer->view()), std::nullopt);
  // The embedded chain's server key: only its keccak256 names the deployment (docs/protocol.md §1
  // "embedded chain"); the key itself never leaves.
  if (const auto chain_key = pkp::server_key(root, "ledger/embedded-chain/v1"))
    out.add(of_bytes("embedded chain server key", chain_key->view()), std::nullopt);
  // Signature-minted PKPs belong to their signer's account: an account hash seen, or the
  // canonical hash of a wallet seen (docs/protocol.md §1 "owning account"). Each pair whose derivation
  // gives a wallet seen is a key the server held.
  std::vector<hash256> owners;
  for (const std::string& h : ev.account_hashes)
    owners.push_back(codec::hex::decode_fixed<32>(h).value());
  for (const std::string& a : ev.addresses)
    if (const auto addr = codec::hex::decode_fixed<20>(a))
      owners.push_back(pkp::canonical_account_hash(*addr));
  for (const std::string& p : ev.derivation_paths) {
    const hash256 path = codec::hex::decode_fixed<32>(p).value();
    for (const hash256& owner : owners) {
      const auto addr = pkp::wallet_address(root, owner, path);
      if (!addr || ev.addresses.count(codec::hex::encode_prefixed(*addr)) == 0)
        continue;
      if (const auto key = pkp::signing_key(root, owner, path))
        out.add(of_bytes("PKP private key (derivation path)", key->view()), std::nullopt);
    }
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

/// Collects the secrets of every instance under `dir`, then searches every log and answer.
scan_report scan_captures(const fs::path& dir) {
  scan_report rep;
  std::vector<fs::path> instances;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory())
      instances.push_back(e.path());
  std::sort(instances.begin(), instances.end());
  rep.instances = instances.size();

  // Pass 1: the secrets.
  collector secrets;
  std::map<std::string, wallet_evidence> by_root;  // root key bytes → what its answers show
  for (const fs::path& p : instances) {
    const std::string name = p.filename().string();
    const std::vector<std::string> command = lines_of(slurp(p / "command"));
    std::optional<std::string> root;
    if (fs::exists(p / "tee-root.key")) {
      root = slurp(p / "tee-root.key");
      if (root->size() == 32)
        secrets.add(of_bytes("TEE root key", as_bytes(*root)), std::nullopt);
      else
        root.reset();
    }
    if (!command.empty() && command.front() == "issue-token") {
      const std::string out = slurp(p / "stdout.log");
      const std::string token = out.substr(0, out.find('\n'));
      if (codec::base64::decode_url(token, "token").has_value() && token.size() >= 43)
        secrets.add(of_text("trigger API token", token, true), origin{name, -1});
    }
    wallet_evidence scratch;
    wallet_evidence& ev = root ? by_root[*root] : scratch;
    const std::vector<record> recs = parse_transcript(slurp(p / "transcript"));
    for (size_t i = 0; i < recs.size(); ++i) {
      std::error_code ec;
      const json::value v = json::parse(recs[i].body, ec);
      if (!ec)
        secrets.walk(v, name, static_cast<long>(i), recs[i], ev);
    }
  }
  for (const auto& [root, ev] : by_root)
    derive_wallet_keys(root, ev, secrets);

  std::vector<secret> list;
  for (const auto& k : secrets.all()) {
    list.push_back(k.s);
    ++rep.secrets_by_kind[k.s.what];
  }
  rep.secrets = list.size();
  const secret_index index(list);

  // Pass 2: every log and every answer.
  const auto report = [&](const std::string& where, std::string_view text, const std::optional<origin>& here) {
    for (const size_t i : index.find(text)) {
      const known_secret& k = secrets.all()[i];
      if (here && k.from && *k.from == *here)
        continue;  // the answer (or output) that handed this secret out
      rep.leaks.push_back(k.s.what + " (" + fingerprint(k.s) + ") in " + where);
    }
  };
  for (const fs::path& p : instances) {
    const std::string name = p.filename().string();
    for (const char* log : {"stderr.log", "stdout.log"}) {
      const std::string text = slurp(p / log);
      rep.log_bytes += text.size();
      if (std::string_view(log) == "stderr.log")
        for (size_t at = text.find("\"level\":\"debug\""); at != std::string::npos;
             at = text.find("\"level\":\"debug\"", at + 1))
          ++rep.debug_lines;
      report(name + "/" + log, text,
             std::string_view(log) == "stdout.log" ? std::optional<origin>(origin{name, -1}) : std::nullopt);
    }
    // The commands themselves: a test that passes a secret on the command line shows it in ps.
    report(name + "/command", slurp(p / "command"), std::nullopt);
    const std::vector<record> recs = parse_transcript(slurp(p / "transcript"));
    if (!recs.empty())
      ++rep.with_transcript;
    rep.records += recs.size();
    for (size_t i = 0; i < recs.size(); ++i) {
      rep.body_bytes += recs[i].body.size();
      report(name + "/transcript record " + std::to_string(i) + " (" + std::to_string(recs[i].status) + " " +
                 recs[i].method + " " + recs[i].path.substr(0, 120) + ")",
             recs[i].body, origin{name, static_cast<long>(i)});
    }
  }
  return rep;
}

/// Writes one synthetic instance into `dir`.
void write_instance(const fs::path& dir, const std::string& name, const std::string& transcript,
                    const std::string& stderr_log, const std::string& command = "--dev\n") {
  fs::create_directories(dir / name);
  std::ofstream(dir / name / "command") << command;
  std::ofstream(dir / name / "transcript", std::ios::binary) << transcript;
  std::ofstream(dir / name / "stderr.log", std::ios::binary) << stderr_log;
  std::ofstream(dir / name / "stdout.log") << "enact-server 0.1.0 listening on http://127.0.0.1:1\n";
}

std::string transcript_record(int status, const std::string& method, const std::string& path, const std::string& body) {
  return "=== " + std::to_string(status) + " " + method + " " + path + " " + std::to_string(body.size()) + "\n" + body +
         "\n";
}

/// A fresh temporary directory, removed at the end.
struct scratch_dir {
  fs::path path;
  scratch_dir() {
    std::string t = (fs::temp_directory_path() / "enact-scan-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("suite scan: a key in a log or a later answer is found; its own answer is exempt") {
  // A fixed key and root key: the vectors are arbitrary bytes, not keys of any deployment.
  bytes key_raw(32);
  for (size_t i = 0; i < key_raw.size(); ++i)
    key_raw[i] = static_cast<uint8_t>(0xA0 + i);
  const std::string api_key = codec::base64::encode(key_raw);
  std::string root(32, '\0');
  for (size_t i = 0; i < root.size(); ++i)
    root[i] = static_cast<char>(0x11 * (i % 15 + 1));
  const std::string account_hash = codec::hex::encode_prefixed(crypto::keccak256(std::string_view(api_key)));
  const Secret root_secret(as_bytes(root));
  const auto wallet = pkp::wallet_address(root_secret, codec::hex::decode_fixed<32>(account_hash).value(),
                                          pkp::api_mode_path(codec::hex::decode_fixed<32>(account_hash).value(), 0));
  REQUIRE(wallet.has_value());
  const auto pkp_key = api_mode_signing_key(root_secret, codec::hex::decode_fixed<32>(account_hash).value(), 0);
  REQUIRE(pkp_key.has_value());

  const std::string created = json::serialize(json::object{
      {"api_key", api_key}, {"wallet_address", "0x" + std::string(40, 'a')}, {"api_key_hash", account_hash}});
  const std::string wallet_answer = json::serialize(json::object{{"pkp_id", codec::hex::encode_prefixed(*wallet)}});
  const std::string clean_log =
      "{\"level\":\"debug\",\"msg\":\"request detail\",\"account_hash\":\"" + account_hash + "\"}\n";
  const std::string base = transcript_record(200, "POST", "/core/v1/new_account", created) +
                           transcript_record(200, "POST", "/core/v1/create_wallet", wallet_answer);

  SUBCASE("clean: nothing found, yet the secrets are collected") {
    scratch_dir d;
    write_instance(d.path, "a", base, clean_log);
    std::ofstream(d.path / "a" / "tee-root.key", std::ios::binary) << root;
    const scan_report rep = scan_captures(d.path);
    CHECK(rep.leaks.empty());
    CHECK(rep.secrets == 5);  // the api key, the root key, the api payer's, the embedded chain's and the wallet's key
    CHECK(rep.secrets_by_kind.at("PKP private key (API mode)") == 1);
    CHECK(rep.debug_lines == 1);
  }
  SUBCASE("the key's prefix in a debug log line") {
    scratch_dir d;
    write_instance(d.path, "a", base,
                   clean_log + "{\"level\":\"debug\",\"msg\":\"x\",\"k\":\"" + api_key.substr(0, 16) + "\"}\n");
    const scan_report rep = scan_captures(d.path);
    REQUIRE(rep.leaks.size() == 1);
    CHECK(rep.leaks[0].find("api_key (keccak 0x") == 0);
    CHECK(rep.leaks[0].find("a/stderr.log") != std::string::npos);
    CHECK(rep.leaks[0].find(api_key) == std::string::npos);  // the report never shows the key
  }
  SUBCASE("the root key and the derived PKP key, in hex, in another instance's log") {
    scratch_dir d;
    write_instance(d.path, "a", base, clean_log);
    std::ofstream(d.path / "a" / "tee-root.key", std::ios::binary) << root;
    write_instance(
        d.path, "b", "",
        "seed " + codec::hex::encode(as_bytes(root)) + "\nkey 0x" + codec::hex::encode(pkp_key->view()) + "\n");
    const scan_report rep = scan_captures(d.path);
    REQUIRE(rep.leaks.size() == 2);
    CHECK(rep.leaks[0].starts_with("TEE root key"));
    CHECK(rep.leaks[1].starts_with("PKP private key (API mode)"));
  }
  SUBCASE("a later answer that returns the key, and a list answer that carries one") {
    scratch_dir d;
    bytes other(32, 0x42);
    const std::string listed = json::serialize(
        json::object{{"items", json::array{json::object{{"usage_api_key", codec::base64::encode(other)}}}}});
    write_instance(d.path, "a",
                   base + transcript_record(200, "GET", "/core/v1/account", "{\"echo\":\"" + api_key + "\"}") +
                       transcript_record(200, "GET", "/core/v1/list_api_keys", listed),
                   clean_log);
    const scan_report rep = scan_captures(d.path);
    REQUIRE(rep.leaks.size() == 2);
    CHECK(rep.leaks[0].find("record 2 (200 GET /core/v1/account)") != std::string::npos);
    CHECK(rep.leaks[1].starts_with("usage_api_key (seen outside a minting answer)"));
  }
  SUBCASE("an issued token: its own stdout is exempt, the log is not") {
    scratch_dir d;
    const std::string token = codec::base64::encode_url(key_raw);
    write_instance(d.path, "t", "", "{\"msg\":\"token for " + token.substr(0, 20) + "\"}\n",
                   "issue-token\n--data-dir\n/x\n");
    std::ofstream(d.path / "t" / "stdout.log") << token << "\n";
    const scan_report rep = scan_captures(d.path);
    REQUIRE(rep.leaks.size() == 1);
    CHECK(rep.leaks[0].starts_with("trigger API token"));
    CHECK(rep.leaks[0].find("t/stderr.log") != std::string::npos);
  }
}

TEST_CASE("suite scan: no secret in any log or later answer of the integration suite's servers") {
  const char* env = std::getenv("ENACT_SECRET_SCAN_DIR");
  REQUIRE_MESSAGE(env != nullptr, "ENACT_SECRET_SCAN_DIR is not set (ctest sets it)");
  const fs::path dir = env;
  REQUIRE_MESSAGE(fs::is_directory(dir), dir.string() << ": no capture directory: no test that "
                                                         "uses the integration fixture ran");
  const scan_report rep = scan_captures(dir);
  for (const std::string& leak : rep.leaks)
    FAIL_CHECK("secret leaked: " << leak);
  std::string kinds;
  for (const auto& [kind, n] : rep.secrets_by_kind)
    kinds += "\n  " + std::to_string(n) + " " + kind;
  MESSAGE("scanned " << rep.instances << " server instances (" << rep.with_transcript << " with answers, "
                     << rep.records << " answers, " << rep.body_bytes << " B of bodies; " << rep.log_bytes
                     << " B of logs, " << rep.debug_lines << " debug lines) for " << rep.secrets
                     << " secrets:" << kinds);
  // Not vacuous: the fixture honoured the variable, servers ran at debug, secrets were found.
  CHECK(rep.instances >= 1);
  CHECK(rep.secrets >= 1);
  CHECK(rep.debug_lines >= 1);
  CHECK(rep.leaks.empty());
}

}  // namespace enact::itest
