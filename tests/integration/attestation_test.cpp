// SPDX-License-Identifier: Apache-2.0
// The attestation endpoints at the host root (docs/protocol.md §2 "Attestation")
// against the real server: the simulated TEE's recorded quote and app info, the development
// evidence set (checksums, quote.json, an X.509 certificate), a served --evidence-dir, refused
// traversal; and the dstack backend against a fake guest agent on a Unix socket (the requests it
// sends, the root key it derives PKP addresses from, a clear exit 2 when the agent is missing).
#include <doctest/doctest.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "enact/client/api_error.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "enact/secret.hpp"
#include "enact/crypto/sha2.hpp"
#include "enact/pkp/pkp.hpp"
#include "server_process.hpp"
#include "tee/tee.hpp"
#include "tee/unix_http.hpp"

namespace enact::itest {
namespace {

// server/tee/fixtures/README.md
constexpr std::string_view kFixtureQuoteSha256 = "b8dcff054c06720e1668034d752319983bc5e1c83be67e1db4d7fe9e4d561705";
constexpr std::string_view kFixtureAppId = "06768e6df639ce3be65e9e5321f8b2d82dbffb01";
constexpr std::string_view kFixtureComposeHash = "06768e6df639ce3be65e9e5321f8b2d82dbffb01c74323462d34c2feb9653aff";
// TDX quote v4: report_data is the last 64 bytes of the 584-byte body after the 48-byte header.
constexpr size_t kReportData = 48 + 520;

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

json::object fixture_report() {
  return json::parse(read_text(std::string(ENACT_TEE_FIXTURES_DIR) + "/rtmr3-report.json")).as_object();
}

bytes fixture_quote() { return codec::hex::decode(fixture_report().at("quote").as_string()).value(); }

std::string sha256_hex(std::string_view text) { return codec::hex::encode(crypto::sha256(as_bytes(text))); }

json::object parse_object(std::string_view text) {
  std::error_code ec;
  json::value v = json::parse(text, ec);
  REQUIRE_MESSAGE(!ec, "not JSON: " << text.substr(0, 200));
  REQUIRE(v.is_object());
  return std::move(v.as_object());
}

/// A GET sent with its path exactly as written (no client-side escaping).
response raw_get(int port, const std::string& path) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_url_encode(false);
  cli.set_keep_alive(false);
  return to_response(cli.Get(path));
}

/// "<hex>  <name>" lines of a sha256sum.txt, by name.
std::map<std::string, std::string> checksum_lines(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    REQUIRE(eol != std::string::npos);  // every line ends with a newline, as sha256sum writes
    const std::string line = text.substr(at, eol - at);
    REQUIRE(line.size() > 66);
    REQUIRE(line.substr(64, 2) == "  ");
    out[line.substr(66)] = line.substr(0, 64);
    at = eol + 1;
  }
  return out;
}

struct x509_free {
  void operator()(X509* x) const noexcept { X509_free(x); }
};

std::unique_ptr<X509, x509_free> parse_certificate(const std::string& pem) {
  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  REQUIRE(in != nullptr);
  std::unique_ptr<X509, x509_free> cert(PEM_read_bio_X509(in, nullptr, nullptr, nullptr));
  BIO_free(in);
  return cert;
}

}  // namespace

TEST_CASE("simulated: /attestation answers the recorded TDX quote and says it is simulated") {
  server_process server;
  const response r = server.client().request("GET", "/attestation");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  CHECK(r.header("Content-Type") == "application/json");
  CHECK(r.has_header("X-Request-Id"));
  const json::object& body = r.obj();
  CHECK(body.size() == 3);

  const std::string quote_hex(body.at("quote").as_string());
  REQUIRE(quote_hex.starts_with("0x"));
  const bytes quote = codec::hex::decode(quote_hex).value();
  CHECK(quote == fixture_quote());
  CHECK(codec::hex::encode(crypto::sha256(quote)) == kFixtureQuoteSha256);
  // docs/protocol.md §5: an all-zero reportData.
  REQUIRE(quote.size() >= kReportData + 64);
  CHECK(std::all_of(quote.begin() + kReportData, quote.begin() + kReportData + 64, [](uint8_t b) { return b == 0; }));

  // event_log is a JSON string holding the event array, the recorded one.
  const std::string log_text(body.at("event_log").as_string());
  CHECK(log_text == fixture_report().at("event_log").as_string());
  const json::value log = json::parse(log_text);
  REQUIRE(log.is_array());
  CHECK(log.as_array().size() == 28);

  const json::object vm = parse_object(body.at("vm_config").as_string());
  CHECK(vm.at("simulated").as_bool());
  const std::string note(vm.at("note").as_string());
  CHECK(note.find("recorded fixture") != std::string::npos);
  CHECK(note.find("not evidence about this machine") != std::string::npos);
  CHECK(server.stop().clean());
}

TEST_CASE("simulated: /info carries the fixture's app id, compose hash and tcb_info") {
  server_process server;
  const response r = server.client().request("GET", "/info");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  const json::object& body = r.obj();
  CHECK(body.at("app_id").as_string() == kFixtureAppId);
  CHECK(body.at("compose_hash").as_string() == kFixtureComposeHash);
  const json::object& tcb = body.at("tcb_info").as_object();

  // docs/protocol.md §5 check 2: SHA-256 of app_compose is compose_hash; app_compose holds the compose
  // file.
  const std::string compose(tcb.at("app_compose").as_string());
  CHECK(compose == read_text(std::string(ENACT_TEE_FIXTURES_DIR) + "/rtmr3-app-compose.json"));
  CHECK(sha256_hex(compose) == kFixtureComposeHash);
  CHECK(parse_object(compose).contains("docker_compose_file"));
  CHECK(tcb.at("compose_hash").as_string() == kFixtureComposeHash);

  // The measurements are the quote's own (body offsets: mr_td 136, rtmr0 328, 48 bytes each).
  const bytes quote = fixture_quote();
  const auto measurement = [&](size_t offset) {
    return codec::hex::encode(bytes_view(quote).subspan(48 + offset, 48));
  };
  CHECK(tcb.at("mrtd").as_string() == measurement(136));
  for (size_t i = 0; i < 4; ++i)
    CHECK(tcb.at("rtmr" + std::to_string(i)).as_string() == measurement(328 + 48 * i));

  // The event log (an array here, as in dstack's Info) carries the same app-id and compose-hash.
  std::map<std::string, std::string> events;
  for (const auto& e : tcb.at("event_log").as_array())
    events[std::string(e.at("event").as_string())] = e.at("event_payload").as_string();
  CHECK(events.at("app-id") == kFixtureAppId);
  CHECK(events.at("compose-hash") == kFixtureComposeHash);

  CHECK(parse_object(body.at("vm_config").as_string()).at("simulated").as_bool());
  CHECK(server.stop().clean());
}

TEST_CASE("simulated: the development evidence set is consistent and served with its types") {
  server_process server;
  auto c = server.client();

  const response listing = c.request("GET", "/evidences/");
  REQUIRE_MESSAGE(listing.status == 200, listing.describe());
  CHECK(listing.header("Content-Type") == "text/html; charset=utf-8");
  struct file_case {
    std::string name;
    std::string content_type;
  };
  const file_case files[] = {
      {"acme-account.json", "application/json"},
      {"cert-localhost.pem", "application/x-pem-file"},
      {"quote.json", "application/json"},
      {"sha256sum.txt", "text/plain; charset=utf-8"},
  };
  std::map<std::string, std::string> bodies;
  for (const auto& f : files) {
    CAPTURE(f.name);
    CHECK(listing.text.find("href=\"" + f.name + "\"") != std::string::npos);
    const response r = c.request("GET", "/evidences/" + f.name);
    REQUIRE_MESSAGE(r.status == 200, r.describe());
    CHECK(r.header("Content-Type") == f.content_type);
    CHECK(r.has_header("X-Request-Id"));
    bodies[f.name] = r.text;
  }
  // Without the trailing slash: a redirect to the listing.
  const response bare = c.request("GET", "/evidences");
  CHECK(bare.status == 301);
  CHECK(bare.header("Location") == "/evidences/");

  // sha256sum.txt lists acme-account.json and the certificate (dstack-ingress: `sha256sum
  // acme-account.json cert-*.pem`), each with the SHA-256 of what the server serves.
  const auto sums = checksum_lines(bodies.at("sha256sum.txt"));
  CHECK(sums.size() == 2);
  for (const std::string name : {"acme-account.json", "cert-localhost.pem"}) {
    CAPTURE(name);
    REQUIRE(sums.count(name) == 1);
    CHECK(sums.at(name) == sha256_hex(bodies.at(name)));
  }

  // quote.json: the GetQuote shape; report_data = SHA-256(sha256sum.txt) ‖ 32 zero bytes.
  const json::object quote_json = parse_object(bodies.at("quote.json"));
  const std::string report_data(quote_json.at("report_data").as_string());
  CHECK(report_data == sha256_hex(bodies.at("sha256sum.txt")) + std::string(64, '0'));
  const bytes quote = codec::hex::decode(quote_json.at("quote").as_string()).value();
  CHECK(quote == fixture_quote());
  CHECK(quote_json.at("event_log").is_string());
  CHECK(parse_object(quote_json.at("vm_config").as_string()).at("simulated").as_bool());
  // The honest outcome of a simulation: the recorded quote does not bind this sha256sum.txt.
  CHECK(codec::hex::encode(bytes_view(quote).subspan(kReportData, 64)) != report_data);

  // A fake account URI under the reserved .invalid domain.
  const json::object account = parse_object(bodies.at("acme-account.json"));
  CHECK(account.at("uri").as_string().find(".invalid/") != std::string::npos);

  // The certificate is X.509 for localhost, and valid now.
  const auto cert = parse_certificate(bodies.at("cert-localhost.pem"));
  REQUIRE(cert != nullptr);
  CHECK(X509_check_host(cert.get(), "localhost", 0, 0, nullptr) == 1);
  CHECK(X509_cmp_current_time(X509_get0_notAfter(cert.get())) > 0);
  CHECK(X509_cmp_current_time(X509_get0_notBefore(cert.get())) < 0);

  // A restart keeps the certificate and the account (only sha256sum.txt and quote.json are
  // rewritten, to the same bytes).
  CHECK(server.stop().clean());
  server_process again({}, server.data_dir());
  CHECK(again.client().request("GET", "/evidences/cert-localhost.pem").text == bodies.at("cert-localhost.pem"));
  CHECK(again.client().request("GET", "/evidences/sha256sum.txt").text == bodies.at("sha256sum.txt"));
  CHECK(again.stop().clean());
}

TEST_CASE("evidence paths outside the evidence directory are refused") {
  server_process server;
  const std::string root_key = read_text(server.data_dir() + "/tee-root.key");
  REQUIRE(root_key.size() == 32);
  struct case_ {
    std::string path;
    int status;
  };
  const case_ cases[] = {
      {"/evidences/../tee-root.key", 400},
      {"/evidences/%2e%2e/tee-root.key", 400},
      {"/evidences/%2e%2e%2ftee-root.key", 400},
      {"/evidences/..%2Ftee-root.key", 400},
      {"/evidences/%252e%252e%252ftee-root.key", 400},  // double-encoded: '%' is refused
      {"/evidences/..", 400},
      {"/evidences/.hidden", 400},
      {"/evidences/evidences%2fquote.json", 400},
      {"/evidences/quote.json%00", 400},
      {"/evidences/tee-root.key", 404},  // a plain name, but no file of the evidence directory
      {"/evidences/ledger.sqlite", 404},
      {"/evidences/nope.txt", 404},
  };
  for (const auto& c : cases) {
    CAPTURE(c.path);
    const response r = raw_get(server.port(), c.path);
    // Whatever the router makes of the path, it never answers with a file outside the set.
    CHECK(r.status == c.status);
    CHECK(r.error_code() == (c.status == 400 ? "invalid_request" : "not_found"));
    CHECK(r.text.find(root_key) == std::string::npos);
    CHECK(r.text.find(codec::hex::encode(as_bytes(root_key))) == std::string::npos);
  }
  CHECK(server.stop().clean());
}

TEST_CASE("--evidence-dir serves the terminator's directory as it is, on each request") {
  temp_dir evidence;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(evidence.path() + "/" + name, std::ios::binary) << text;
  };
  write("acme-account.json", R"({"uri":"https://acme-v02.api.letsencrypt.org/acme/acct/1"})");
  write("cert-api.example.com.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  write("sha256sum.txt", "00  acme-account.json\n");
  write("quote.json", R"({"quote":"04","report_data":"00"})");
  write(".hidden", "not served");
  temp_dir data;
  server_process server({"--evidence-dir", evidence.path()}, data.path() + "/data");
  // A symbolic link to a secret of the server is not followed.
  std::filesystem::create_symlink(server.data_dir() + "/tee-root.key", evidence.path() + "/key.pem");
  auto c = server.client();

  const response listing = c.request("GET", "/evidences/");
  REQUIRE(listing.status == 200);
  for (const std::string name : {"acme-account.json", "cert-api.example.com.pem", "sha256sum.txt", "quote.json"}) {
    CAPTURE(name);
    CHECK(listing.text.find("href=\"" + name + "\"") != std::string::npos);
    CHECK(c.request("GET", "/evidences/" + name).text == read_text(evidence.path() + "/" + name));
  }
  CHECK(listing.text.find("hidden") == std::string::npos);
  CHECK(listing.text.find("key.pem") == std::string::npos);
  CHECK(c.request("GET", "/evidences/key.pem").status == 404);

  // A renewal shows at once.
  write("cert-www.example.com.pem", "renewed");
  CHECK(c.request("GET", "/evidences/").text.find("cert-www.example.com.pem") != std::string::npos);
  CHECK(c.request("GET", "/evidences/cert-www.example.com.pem").text == "renewed");
  // The development set is not written when a directory is given.
  CHECK(!std::filesystem::exists(server.data_dir() + "/evidences"));
  CHECK(server.stop().clean());

  const auto missing = run_to_exit({"--evidence-dir", evidence.path() + "/nope", "--data-dir", data.path() + "/data2"});
  CHECK(missing.status.exited);
  CHECK(missing.status.code == 2);
  CHECK(missing.stderr_text.find("--evidence-dir") != std::string::npos);
}

// --- dstack backend ------------------------------------------------------------------------------

namespace {

// The identity of dstack's own guest-agent simulator (Dstack-TEE/dstack @
// 312dc605ebaaf93372534ffb135ea011533d28e9): sdk/simulator/appkeys.json holds its app key
// (k256_key) and the KMS's signature of it (k256_signature); its attestation
// (tests/fixtures/tdx/dstack/guest-agent-attestation.bin) carries the app-id, instance-id and
// key-provider events; sdk/go/dstack/client_web3_test.go names the app and KMS root public keys a
// GetKey answer of the simulator must recover to.
constexpr std::string_view kAppKey = "d6e88992cdeeee35fe70b5db61ab66cdb191fb9b6ec9313757ef162dd7214d5d";
constexpr std::string_view kKmsSignature =
    "9e618603e72d01fedb82deff6daf2d62a572becf0059eec3f89c1ab40e1f2e594d2a283f843f34e8f39e4cc49a612496ce67223a12ac923f8"
    "efe330346dfc6c500";
constexpr std::string_view kAppId = "5bb4ff9a3837357f19dc176407a5709c62eb6c56";
constexpr std::string_view kInstanceId = "1691ed1b47506cad7d08834668691d88246f5b1f";
constexpr std::string_view kKmsProviderInfo =
    R"({"name":"kms","id":"3059301306072a8648ce3d020106082a8648ce3d0301070342000419b2457dd9b8aa6446d980f136fff7812ecd6c7)"
    R"(7740eeb0e28b10d56c0c00028a5b6e59dcea307d583bd1f70769e9c116df2bcfb1758a95d8613e7de1c8482c0"})";
constexpr std::string_view kAppPublicKey = "02818494263695e8839122dbd88e281d7380622999df4e60a14befa0f2d096fc7c";
constexpr std::string_view kKmsRootKey = "0321529e458424ab1f710a3a57ec4dad2fb195ddca572f7469242ba6c7563085b6";
const std::string kAgentCompose = R"({"docker_compose_file":"services: {}"})";

/// The recorded GetQuote answer of a real agent (tests/fixtures/tdx/README.md: dstack
/// verifier/fixtures/tdx-lite-getquote.json): its quote, event log (with event_type) and vm_config.
json::object recorded_get_quote() {
  return json::parse(read_text(std::string(ENACT_TDX_FIXTURES_DIR) + "/dstack/tdx-lite-getquote.json")).as_object();
}

/// The key dstack's guest agent derives for `path` (guest-agent rpc_service.rs get_key, ra-tls
/// kdf.rs derive_key): HKDF-SHA256 with ikm = the app key, salt "RATLS", info = the path; computed
/// here with OpenSSL's HKDF, apart from the code under test.
bytes openssl_hkdf(bytes_view ikm, std::string_view salt, std::string_view info) {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  REQUIRE(ctx != nullptr);
  bytes out(32);
  size_t len = out.size();
  const bool ok = EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
                  EVP_PKEY_CTX_set1_hkdf_salt(ctx, reinterpret_cast<const unsigned char*>(salt.data()),
                                              static_cast<int>(salt.size())) > 0 &&
                  EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm.data(), static_cast<int>(ikm.size())) > 0 &&
                  EVP_PKEY_CTX_add1_hkdf_info(ctx, reinterpret_cast<const unsigned char*>(info.data()),
                                              static_cast<int>(info.size())) > 0 &&
                  EVP_PKEY_derive(ctx, out.data(), &len) > 0;
  EVP_PKEY_CTX_free(ctx);
  REQUIRE(ok);
  return out;
}

struct agent_request {
  std::string path;
  std::string content_type;
  json::object body;
};

/// What the stand-in reports; tests change it to play another machine.
struct agent_identity {
  std::string app_key{kAppKey};
  std::string kms_signature{kKmsSignature};         // signature_chain[1]; empty as without a KMS
  std::string key_provider_info{kKmsProviderInfo};  // empty: an agent before dstack OS 0.4.2
  bool tdx = true;                                  // false: a non-TDX platform (empty quote)
};

/// A dstack guest agent stand-in that behaves like the real one (guest-agent rpc_service.rs, ra-rpc)
/// on a Unix socket in a temporary directory: a body without `Content-Type: application/json` is
/// refused (the real agent reads it as protobuf), errors are 400 {"error"}, GetKey derives from the
/// app key as dstack does and signs the chain, GetQuote replays the recorded answer with the
/// requested report data put into the quote, and Info reports the simulator's identity and
/// key_provider_info with the replayed quote's measurements (RTMR3 settable). The Info app id is
/// the simulator's and the replayed event log another CVM's: each side is real, the pair is not.
class fake_agent {
 public:
  /// Answers a request with the raw bytes of a whole HTTP answer; std::nullopt: no answer at all
  /// (the connection stays open until the client gives up).
  using responder = std::function<std::optional<std::string>(const agent_request&)>;

  explicit fake_agent(agent_identity id = {}, responder raw = {})
      : id_(std::move(id)), raw_(std::move(raw)), recorded_(recorded_get_quote()) {
    quote_ = codec::hex::decode(recorded_.at("quote").as_string()).value();
    rtmr3_ = codec::hex::encode(bytes_view(quote_).subspan(48 + 328 + 3 * 48, 48));
    path_ = dir_.path() + "/dstack.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(path_.size() < sizeof(addr.sun_path));
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~fake_agent() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  fake_agent(const fake_agent&) = delete;
  fake_agent& operator=(const fake_agent&) = delete;

  [[nodiscard]] const std::string& socket_path() const { return path_; }
  [[nodiscard]] std::vector<agent_request> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  [[nodiscard]] std::vector<agent_request> requests_to(const std::string& path) const {
    std::vector<agent_request> out;
    for (auto& r : requests())
      if (r.path == path)
        out.push_back(r);
    return out;
  }
  /// RTMR3 as Info reports it, as when the app extends it at run time.
  void set_rtmr3(std::string hex) {
    std::lock_guard lock(mu_);
    rtmr3_ = std::move(hex);
  }
  [[nodiscard]] const bytes& recorded_quote() const { return quote_; }
  [[nodiscard]] const json::object& recorded() const { return recorded_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0)
        continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0)
        continue;
      handle(c);
      ::close(c);
    }
  }

  static std::string header_value(const std::string& head, std::string name) {
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const auto at = lower.find("\r\n" + name + ":");
    if (at == std::string::npos)
      return {};
    const auto from = head.find_first_not_of(' ', at + name.size() + 3);
    return head.substr(from, head.find("\r\n", from) - from);
  }

  void handle(int c) {
    std::string in;
    char buf[4096];
    size_t head_end = std::string::npos;
    size_t want = 0;
    for (;;) {
      if (head_end == std::string::npos) {
        head_end = in.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          const std::string cl = header_value(in.substr(0, head_end + 2), "content-length");
          if (!cl.empty())
            want = std::stoul(cl);
        }
      }
      if (head_end != std::string::npos && in.size() >= head_end + 4 + want)
        break;
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0)
        return;
      in.append(buf, static_cast<size_t>(n));
    }
    const std::string request_line = in.substr(0, in.find("\r\n"));
    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.find(' ', sp1 + 1);
    agent_request r{
        request_line.substr(sp1 + 1, sp2 - sp1 - 1), header_value(in.substr(0, head_end + 2), "content-type"), {}};
    const std::string body_text = in.substr(head_end + 4, want);
    std::error_code ec;
    json::value body = json::parse(body_text, ec);
    if (!ec && body.is_object())
      r.body = body.as_object();
    {
      std::lock_guard lock(mu_);
      requests_.push_back(r);
    }
    const std::optional<std::string> out = raw_ ? raw_(r) : dstack_answer(r, !ec && body.is_object());
    if (!out) {
      while (::recv(c, buf, sizeof buf, 0) > 0) {
      }
      return;
    }
    for (size_t sent = 0; sent < out->size();) {
      const ssize_t n = ::send(c, out->data() + sent, out->size() - sent, MSG_NOSIGNAL);
      if (n <= 0)
        return;
      sent += static_cast<size_t>(n);
    }
  }

  static std::string http(const std::string& status, const std::string& body, bool chunked = false) {
    std::string out = "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\n";
    if (!chunked)
      return out + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    out += "Transfer-Encoding: chunked\r\n\r\n";
    for (size_t at = 0; at < body.size(); at += 1000) {
      const std::string piece = body.substr(at, 1000);
      char size[16];
      std::snprintf(size, sizeof size, "%zx", piece.size());
      out += std::string(size) + "\r\n" + piece + "\r\n";
    }
    return out + "0\r\n\r\n";
  }

  /// ra-rpc's encode_error: 400 and {"error": text} for a JSON request.
  static std::string error(const std::string& text) {
    return http("400 Bad Request", json::serialize(json::object{{"error", text}}));
  }

  std::string get_key(const json::object& args) const {
    const auto* path = args.if_contains("path");
    const auto* purpose = args.if_contains("purpose");
    const auto* algorithm = args.if_contains("algorithm");
    const std::string alg = algorithm != nullptr && algorithm->is_string() ? std::string(algorithm->get_string()) : "";
    if (alg != "" && alg != "secp256k1" && alg != "k256")
      return error("Unsupported algorithm");
    const std::string p = path != nullptr && path->is_string() ? std::string(path->get_string()) : "";
    const Secret app(codec::hex::decode(id_.app_key).value());
    const Secret key(openssl_hkdf(app.view(), "RATLS", p));
    const auto pub = crypto::secp256k1::public_key_of(key).value();
    const std::string message = (purpose != nullptr && purpose->is_string() ? std::string(purpose->get_string()) : "") +
                                ":" + codec::hex::encode(crypto::secp256k1::compress(pub));
    const auto sig = crypto::secp256k1::sign(crypto::keccak256(std::string_view(message)), app).value();
    bytes sig0(sig.r.begin(), sig.r.end());
    sig0.insert(sig0.end(), sig.s.begin(), sig.s.end());
    sig0.push_back(sig.v);  // k256's recovery id, 0 or 1
    return http("200 OK", json::serialize(json::object{
                              {"key", codec::hex::encode(key.view())},
                              {"signature_chain", json::array{codec::hex::encode(sig0), id_.kms_signature}}}));
  }

  std::string info() const {
    const auto measurement = [&](size_t offset) {
      return codec::hex::encode(bytes_view(quote_).subspan(48 + offset, 48));
    };
    std::string rtmr3;
    {
      std::lock_guard lock(mu_);
      rtmr3 = rtmr3_;
    }
    const std::string compose_hash = sha256_hex(kAgentCompose);
    const json::object tcb{{"mrtd", measurement(136)},
                           {"rtmr0", measurement(328)},
                           {"rtmr1", measurement(328 + 48)},
                           {"rtmr2", measurement(328 + 96)},
                           {"rtmr3", rtmr3},
                           {"mr_aggregated", std::string(64, '0')},
                           {"os_image_hash", std::string(64, '0')},
                           {"compose_hash", compose_hash},
                           {"device_id", std::string(64, '0')},
                           {"event_log", json::parse(recorded_.at("event_log").as_string())},
                           {"app_compose", kAgentCompose}};
    json::object answer{{"app_id", kAppId},
                        {"instance_id", kInstanceId},
                        {"app_cert", ""},
                        {"tcb_info", json::serialize(tcb)},
                        {"app_name", "enact-test"},
                        {"device_id", std::string(64, '0')},
                        {"mr_aggregated", std::string(64, '0')},
                        {"os_image_hash", std::string(64, '0')},
                        {"compose_hash", compose_hash},
                        {"vm_config", recorded_.at("vm_config")},
                        {"cloud_vendor", ""},
                        {"cloud_product", ""}};
    if (!id_.key_provider_info.empty())
      answer["key_provider_info"] = id_.key_provider_info;
    return http("200 OK", json::serialize(answer));
  }

  std::string get_quote(const json::object& args) const {
    const auto* rd = args.if_contains("report_data");
    bytes data;
    if (rd != nullptr && rd->is_string()) {
      auto decoded = codec::hex::decode(rd->get_string());
      if (!decoded)
        return error("failed to decode report_data");
      data = *decoded;
    }
    if (data.size() > 64)
      return error("Report data is too long");
    data.resize(64);
    json::object answer = recorded_;
    if (id_.tdx) {
      bytes quote = quote_;
      std::copy(data.begin(), data.end(), quote.begin() + kReportData);
      answer["quote"] = codec::hex::encode(quote);
    } else {
      // agent_rpc.proto GetQuoteResponse: empty quote and event log off TDX, an `attestation` instead.
      answer["quote"] = "";
      answer["event_log"] = "";
      answer["attestation"] = "00";
    }
    answer["report_data"] = codec::hex::encode(data);
    return http("200 OK", json::serialize(answer), /*chunked=*/true);
  }

  std::string dstack_answer(const agent_request& r, bool json_body) const {
    // ra-rpc: without a JSON content type the body is decoded as protobuf, which JSON text is not.
    if (!r.content_type.starts_with("application/json"))
      return http("400 Bad Request",
                  "\x0a\x1e"
                  "failed to decode the request");
    if (!json_body)
      return error("failed to decode the request: not a JSON object");
    if (r.path == "/GetKey")
      return get_key(r.body);
    if (r.path == "/Info")
      return info();
    if (r.path == "/GetQuote")
      return get_quote(r.body);
    return error("Method not found: " + r.path.substr(1));
  }

  temp_dir dir_;
  std::string path_;
  int fd_ = -1;
  agent_identity id_;
  responder raw_;
  json::object recorded_;
  bytes quote_;
  std::string rtmr3_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<agent_request> requests_;
  std::thread thread_;
};

std::string admin_api_payer(const server_process& server) {
  const response r = server.client().get("/get_admin_api_payer");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  return std::string(r.obj().at("admin_api_payer").as_string());
}

/// The api payer a server on an agent with app key `app_key` has: the root key is GetKey's
/// derivation at "enact/pkp-root", the payer its server key "api-payer/0" (docs/protocol.md §1).
std::string expected_api_payer(std::string_view app_key) {
  const bytes root = openssl_hkdf(codec::hex::decode(app_key).value(), "RATLS", "enact/pkp-root");
  const Secret payer = pkp::server_signing_key(Secret(root), "api-payer/0").value();
  return to_checksum_address(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(payer).value()));
}

std::vector<std::string> dstack_flags(const fake_agent& agent) {
  return {"--tee", "dstack", "--dstack-socket", agent.socket_path()};
}

}  // namespace

TEST_CASE("dstack: the PKP root key is the agent's HKDF derivation at its path, so servers on one app agree") {
  fake_agent agent;
  server_process a(dstack_flags(agent));
  server_process b(dstack_flags(agent));
  server_process simulated;

  // What the backend asked for: the root key at its fixed path, as a secp256k1 key, in JSON.
  const auto keys = agent.requests_to("/GetKey");
  REQUIRE(keys.size() == 2);
  for (const auto& k : keys) {
    CHECK(k.body.at("path").as_string() == "enact/pkp-root");
    CHECK(k.body.at("algorithm").as_string() == "secp256k1");
    CHECK(k.body.at("purpose").is_string());
  }
  CHECK(agent.requests_to("/Info").size() == 2);
  for (const auto& r : agent.requests())
    CHECK(r.content_type == "application/json");

  // HKDF-SHA256(app key, "RATLS", "enact/pkp-root") by OpenSSL, then the server key "api-payer/0".
  const std::string expected = expected_api_payer(kAppKey);
  CHECK(admin_api_payer(a) == expected);
  CHECK(admin_api_payer(b) == expected);
  CHECK(admin_api_payer(simulated) != expected);

  // Neither the app key nor the root key reaches the log.
  const std::string root =
      codec::hex::encode(openssl_hkdf(codec::hex::decode(kAppKey).value(), "RATLS", "enact/pkp-root"));
  CHECK(a.stop().clean());
  CHECK(a.log_text().find(root) == std::string::npos);
  CHECK(a.log_text().find(std::string(kAppKey)) == std::string::npos);
  CHECK(b.stop().clean());
  CHECK(simulated.stop().clean());
}

TEST_CASE("dstack: the test agent answers as the real one: JSON content type, 400 {error}, keys per path") {
  fake_agent agent;
  const auto post = [&](const std::string& method, const std::string& body) {
    return tee::detail::unix_http_request(agent.socket_path(), "POST", "/" + method, body, std::chrono::seconds(5))
        .value();
  };
  // unix_http_request sends Content-Type: application/json with a body, none without; the real agent
  // then decodes protobuf and fails.
  const auto no_type =
      tee::detail::unix_http_request(agent.socket_path(), "POST", "/Info", "", std::chrono::seconds(5));
  REQUIRE(no_type.has_value());
  CHECK(no_type->status == 400);
  const auto unknown = post("Nope", "{}");
  CHECK(unknown.status == 400);
  CHECK(parse_object(unknown.body).at("error").as_string().find("Nope") != std::string::npos);
  const auto bad_alg = post("GetKey", R"({"path":"a","purpose":"p","algorithm":"rsa"})");
  CHECK(bad_alg.status == 400);
  CHECK(parse_object(bad_alg.body).at("error").as_string() == "Unsupported algorithm");
  const auto long_data = post("GetQuote", R"({"report_data":")" + std::string(130, '0') + R"("})");
  CHECK(long_data.status == 400);
  // One key per path, each HKDF(app key, "RATLS", path).
  const auto a = parse_object(post("GetKey", R"({"path":"a","purpose":"p","algorithm":"secp256k1"})").body);
  const auto b = parse_object(post("GetKey", R"({"path":"b","purpose":"p","algorithm":"secp256k1"})").body);
  CHECK(a.at("key").as_string() != b.at("key").as_string());
  CHECK(a.at("key").as_string() == codec::hex::encode(openssl_hkdf(codec::hex::decode(kAppKey).value(), "RATLS", "a")));
  // The replayed GetQuote answer: the recorded event log, with event_type.
  const auto q = parse_object(post("GetQuote", R"({"report_data":")" + std::string(128, '0') + R"("})").body);
  CHECK(q.at("event_log").as_string() == agent.recorded().at("event_log").as_string());
  CHECK(json::parse(q.at("event_log").as_string()).as_array().at(0).as_object().contains("event_type"));
  const auto info = parse_object(post("Info", "{}").body);
  CHECK(info.at("key_provider_info").as_string() == kKmsProviderInfo);
}

TEST_CASE("dstack: /attestation and /info pass the agent's answers through, with the key provider and chain") {
  fake_agent agent;
  server_process server(dstack_flags(agent));
  auto c = server.client();

  const response r = c.request("GET", "/attestation");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  const auto quotes = agent.requests_to("/GetQuote");
  REQUIRE(quotes.size() == 1);
  // docs/protocol.md §5: all-zero report data, 64 bytes, hex.
  CHECK(quotes[0].body.at("report_data").as_string() == std::string(128, '0'));
  bytes expected_quote = agent.recorded_quote();
  std::fill(expected_quote.begin() + kReportData, expected_quote.begin() + kReportData + 64, 0);
  CHECK(codec::hex::decode(r.obj().at("quote").as_string()).value() == expected_quote);
  CHECK(r.obj().at("event_log").as_string() == agent.recorded().at("event_log").as_string());
  CHECK(r.obj().at("vm_config").as_string() == agent.recorded().at("vm_config").as_string());

  const response info = c.request("GET", "/info");
  REQUIRE_MESSAGE(info.status == 200, info.describe());
  const json::object& body = info.obj();
  CHECK(body.at("app_id").as_string() == kAppId);
  CHECK(body.at("compose_hash").as_string() == sha256_hex(kAgentCompose));
  // The agent's tcb_info string becomes an object, with the quote's measurements.
  const json::object& tcb = body.at("tcb_info").as_object();
  CHECK(tcb.at("app_compose").as_string() == kAgentCompose);
  CHECK(tcb.at("mrtd").as_string() == codec::hex::encode(bytes_view(agent.recorded_quote()).subspan(48 + 136, 48)));
  CHECK(tcb.at("event_log").is_array());
  // docs/protocol.md §2 "Attestation": the key provider, and the chain from the root key to the
  // KMS root: the simulator's app key and KMS root as dstack's Go SDK test names them.
  CHECK(body.at("key_provider").at("name").as_string() == "kms");
  CHECK(body.at("key_provider").at("id").as_string() == parse_object(kKmsProviderInfo).at("id").as_string());
  const json::object& root = body.at("root_key").as_object();
  CHECK(root.at("app_key").as_string() == kAppPublicKey);
  CHECK(root.at("kms_root_key").as_string() == kKmsRootKey);
  CHECK(root.at("signature_chain").as_array().size() == 2);
  CHECK(root.at("signature_chain").as_array().at(1).as_string() == kKmsSignature);

  // No --evidence-dir in dstack mode: nothing to serve.
  const response evidences = c.request("GET", "/evidences/");
  CHECK(evidences.status == 404);
  CHECK(evidences.error_code() == "not_found");
  CHECK(server.stop().clean());
}

TEST_CASE("dstack: a key provider other than kms is refused at start unless allowed, with a warning") {
  temp_dir dir;
  struct case_ {
    std::string name;
    std::string provider_info;
    std::string kms_signature;
    std::string says;
  };
  const case_ cases[] = {
      {"none", R"({"name":"none","id":""})", "", "'none'"},
      {"local-sgx", R"({"name":"local-sgx","id":"aa"})", "", "'local-sgx'"},
      {"tpm", R"({"name":"tpm","id":""})", "", "'tpm'"},
      {"before 0.4.2", "", std::string(kKmsSignature), "no key_provider_info"},
  };
  int n = 0;
  for (const auto& c : cases) {
    CAPTURE(c.name);
    fake_agent agent(agent_identity{.kms_signature = c.kms_signature, .key_provider_info = c.provider_info});
    const std::string data = dir.path() + "/d" + std::to_string(n++);
    const auto refused = run_to_exit({"--tee", "dstack", "--dstack-socket", agent.socket_path(), "--data-dir", data});
    CHECK(refused.status.exited);
    CHECK(refused.status.code == 2);
    CHECK(refused.stderr_text.find(c.says) != std::string::npos);
    CHECK(refused.stderr_text.find("--tee-allow-unstable-keys") != std::string::npos);
    // Refused before the root key was asked for.
    CHECK(agent.requests_to("/GetKey").empty());

    server_process allowed({"--tee", "dstack", "--dstack-socket", agent.socket_path(), "--tee-allow-unstable-keys"});
    CHECK(admin_api_payer(allowed) == expected_api_payer(kAppKey));
    CHECK(allowed.stop().clean());
    const std::string log = allowed.log_text();
    CHECK(log.find("\"level\":\"warn\"") != std::string::npos);
    CHECK(log.find("--tee-allow-unstable-keys") != std::string::npos);
  }
}

TEST_CASE("dstack: a root key that changed under the data directory is refused at restart") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  {
    fake_agent agent;
    server_process first(dstack_flags(agent), data);
    CHECK(admin_api_payer(first) == expected_api_payer(kAppKey));
    CHECK(first.stop().clean());
  }
  // The same app on the same KMS: the same root, the start goes on.
  {
    fake_agent agent;
    server_process again(dstack_flags(agent), data);
    CHECK(again.stop().clean());
  }
  // Another app key (another KMS, or a key provider that reseeded): refused, naming both payers.
  const std::string other_key(64, '7');
  fake_agent other(agent_identity{.app_key = other_key});
  const auto refused = run_to_exit({"--tee", "dstack", "--dstack-socket", other.socket_path(), "--data-dir", data});
  CHECK(refused.status.exited);
  CHECK(refused.status.code != 0);
  CHECK(refused.stderr_text.find("root key changed") != std::string::npos);
  CHECK(refused.stderr_text.find(expected_api_payer(kAppKey)) != std::string::npos);
  CHECK(refused.stderr_text.find(expected_api_payer(other_key)) != std::string::npos);
  CHECK(!std::filesystem::exists(data + "/ledger.sqlite.new"));
}

TEST_CASE("dstack: the root key's signature chain must lead to the pinned KMS root") {
  fake_agent agent;
  server_process pinned({"--tee", "dstack", "--dstack-socket", agent.socket_path(), "--tee-dstack-kms-root-key",
                         std::string(kKmsRootKey)});
  CHECK(pinned.client().request("GET", "/info").obj().at("root_key").at("kms_root_key_pinned").as_bool());
  CHECK(pinned.stop().clean());

  temp_dir dir;
  // Another KMS root pinned: refused, naming both.
  const std::string other_root = "02" + std::string(kKmsRootKey.substr(2));
  const auto wrong = run_to_exit({"--tee", "dstack", "--dstack-socket", agent.socket_path(),
                                  "--tee-dstack-kms-root-key", other_root, "--data-dir", dir.path() + "/a"});
  CHECK(wrong.status.code == 2);
  CHECK(wrong.stderr_text.find(std::string(kKmsRootKey)) != std::string::npos);
  CHECK(wrong.stderr_text.find(other_root) != std::string::npos);

  // A kms provider whose agent gives no KMS signature, or one that is not a signature.
  for (const std::string sig : {std::string(), std::string(130, 'f')}) {
    fake_agent broken(agent_identity{.kms_signature = sig});
    const auto r = run_to_exit({"--tee", "dstack", "--dstack-socket", broken.socket_path(), "--data-dir",
                                dir.path() + "/b" + std::to_string(sig.size())});
    CHECK(r.status.code == 2);
    CHECK(r.stderr_text.find("signature_chain") != std::string::npos);
  }
  const auto bad_flag = run_to_exit({"--tee-dstack-kms-root-key", "04aa", "--data-dir", dir.path() + "/c"});
  CHECK(bad_flag.status.code == 2);
  CHECK(bad_flag.stderr_text.find("--tee-dstack-kms-root-key") != std::string::npos);
}

TEST_CASE("dstack: a guest agent that is missing or refuses the key stops the start (exit 2)") {
  temp_dir dir;
  const auto missing = run_to_exit(
      {"--tee", "dstack", "--dstack-socket", dir.path() + "/none.sock", "--data-dir", dir.path() + "/data"});
  CHECK(missing.status.exited);
  CHECK(missing.status.code == 2);
  CHECK(missing.stderr_text.find(dir.path() + "/none.sock") != std::string::npos);
  CHECK(missing.stderr_text.find("connect") != std::string::npos);

  fake_agent refusing(agent_identity{}, [](const agent_request& r) -> std::optional<std::string> {
    const std::string body = r.path == "/Info" ? R"({"app_id":")" + std::string(kAppId) +
                                                     R"(","key_provider_info":"{\"name\":\"kms\",\"id\":\"\"}"})"
                                               : R"({"error":"no key provider"})";
    return std::string(r.path == "/Info" ? "HTTP/1.1 200 OK" : "HTTP/1.1 400 Bad Request") +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  });
  const auto refused =
      run_to_exit({"--tee", "dstack", "--dstack-socket", refusing.socket_path(), "--data-dir", dir.path() + "/data2"});
  CHECK(refused.status.code == 2);
  CHECK(refused.stderr_text.find("GetKey") != std::string::npos);
  CHECK(refused.stderr_text.find("400") != std::string::npos);
  CHECK(refused.stderr_text.find("no key provider") != std::string::npos);

  const auto bad_backend = run_to_exit({"--tee", "sgx", "--data-dir", dir.path() + "/data3"});
  CHECK(bad_backend.status.code == 2);
  CHECK(bad_backend.stderr_text.find("--tee") != std::string::npos);
}

TEST_CASE("dstack: the socket is looked up as dstack's SDKs do") {
  // sdk/python dstack_client.py get_endpoint and sdk/js index.ts, in that order.
  const std::vector<std::string_view> sdk_order = {"/var/run/dstack.sock", "/run/dstack.sock",
                                                   "/var/run/dstack/dstack.sock", "/run/dstack/dstack.sock"};
  CHECK(std::vector<std::string_view>(tee::kDstackSocketPaths.begin(), tee::kDstackSocketPaths.end()) == sdk_order);

  temp_dir dir;
  const std::vector<std::string> paths = {dir.path() + "/a.sock", dir.path() + "/b.sock", dir.path() + "/c.sock",
                                          dir.path() + "/d.sock"};
  const std::vector<std::string_view> candidates(paths.begin(), paths.end());
  const auto none = tee::find_dstack_socket(candidates);
  REQUIRE(!none.has_value());
  for (const auto& p : paths)
    CHECK(none.err().message.find(p) != std::string::npos);
  std::ofstream(paths[3]) << "";
  CHECK(tee::find_dstack_socket(candidates).value() == paths[3]);
  std::ofstream(paths[1]) << "";
  CHECK(tee::find_dstack_socket(candidates).value() == paths[1]);

  // Without --dstack-socket the server looks at the four paths (none exists on a test machine).
  bool any = false;
  for (const auto p : sdk_order)
    any = any || std::filesystem::exists(p);
  if (!any) {
    const auto r = run_to_exit({"--tee", "dstack", "--data-dir", dir.path() + "/data"});
    CHECK(r.status.code == 2);
    for (const auto p : sdk_order)
      CHECK(r.stderr_text.find(std::string(p)) != std::string::npos);
  }
}

TEST_CASE("dstack: a platform without a TDX quote gets an error that says so") {
  fake_agent agent(agent_identity{.tdx = false});
  tee::dstack_options o;
  o.socket = agent.socket_path();
  const auto t = tee::open_dstack(o);
  REQUIRE_MESSAGE(t.has_value(), t.err().message);
  const auto q = (*t)->quote(tee::report_data{});
  REQUIRE(!q.has_value());
  CHECK(q.code() == tee::tee_errc::unavailable);
  CHECK(q.err().message.find("gives no TDX quote") != std::string::npos);
  CHECK(q.err().message.find("not hex") == std::string::npos);

  server_process server(dstack_flags(agent));
  const response r = server.client().request("GET", "/attestation");
  CHECK(r.status == 503);
  CHECK(server.stop().clean());
  CHECK(server.log_text().find("gives no TDX quote") != std::string::npos);
}

TEST_CASE("dstack: /info follows the agent when RTMR3 is extended") {
  fake_agent agent;
  tee::dstack_options o;
  o.socket = agent.socket_path();
  o.info_max_age = std::chrono::milliseconds(300);
  const auto t = tee::open_dstack(o);
  REQUIRE_MESSAGE(t.has_value(), t.err().message);
  const auto rtmr3 = [&] {
    return parse_object((*t)->info().value().tcb_info).at("rtmr3").as_string();
  };
  const std::string before(rtmr3());
  const std::string extended(96, 'e');
  agent.set_rtmr3(extended);
  CHECK(rtmr3() == before);  // within the cache period
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(rtmr3() == extended);
  CHECK(agent.requests_to("/Info").size() == 2);
  // The key provider and the chain are those the root key was taken under.
  CHECK((*t)->info().value().key_provider == "kms");
  CHECK(parse_object((*t)->info().value().root_key).at("kms_root_key").as_string() == kKmsRootKey);
}

TEST_CASE("dstack: /info keeps its last answer while the agent cannot be reached") {
  auto agent = std::make_unique<fake_agent>();
  tee::dstack_options o;
  o.socket = agent->socket_path();
  o.info_max_age = std::chrono::milliseconds(300);
  const auto t = tee::open_dstack(o);
  REQUIRE_MESSAGE(t.has_value(), t.err().message);
  const auto before = (*t)->info();
  REQUIRE(before.has_value());
  agent.reset();  // the socket is gone
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const auto after = (*t)->info();
  REQUIRE_MESSAGE(after.has_value(), after.err().message);
  CHECK(after->tcb_info == before->tcb_info);
  CHECK(after->key_provider == "kms");
}

// --- the backend itself, in process: malformed agent answers -----------------------------------

TEST_CASE("the guest-agent HTTP client reads every body framing and refuses malformed answers") {
  struct case_ {
    std::string name;
    std::optional<std::string> raw;  // nullopt: the agent never answers
    int status;                      // 0: the call must fail
    std::string body_or_error;       // the body, or a part of the error message
  };
  const case_ cases[] = {
      {"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiEXTRA", 200, "hi"},
      {"chunked", "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n2\r\nhi\r\n3;x=1\r\n!!!\r\n0\r\n\r\n", 200,
       "hi!!!"},
      {"read to close", "HTTP/1.0 503 Service Unavailable\r\n\r\nbusy", 503, "busy"},
      {"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 0, "Content-Length"},
      {"bad length", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n1", 0, "bad Content-Length"},
      {"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n", 0, "chunk size"},
      {"cut chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhi", 0, "chunked body"},
      {"not http", "SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, "status line"},
      {"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", 0, "status code"},
      {"cut headers", "HTTP/1.1 200 OK\r\nContent-Length: 5", 0, "end of the headers"},
      {"empty", "", 0, "end of the headers"},
      {"silent", std::nullopt, 0, "no complete answer within 300 ms"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    fake_agent agent(agent_identity{}, [&](const agent_request&) { return c.raw; });
    const auto a = tee::detail::unix_http_request(agent.socket_path(), "POST", "/Info", "{}",
                                                  std::chrono::milliseconds(c.raw ? 10000 : 300));
    if (c.status != 0) {
      REQUIRE_MESSAGE(a.has_value(), a.err().message);
      CHECK(a->status == c.status);
      CHECK(a->body == c.body_or_error);
    } else {
      REQUIRE(!a.has_value());
      CHECK(a.code() == tee::tee_errc::unavailable);
      CHECK(a.err().message.find(c.body_or_error) != std::string::npos);
      CHECK(a.err().message.find(agent.socket_path()) != std::string::npos);
    }
    const auto seen = agent.requests();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].path == "/Info");
  }

  temp_dir dir;
  const auto nobody =
      tee::detail::unix_http_request(dir.path() + "/none.sock", "POST", "/Info", "{}", std::chrono::milliseconds(1000));
  REQUIRE(!nobody.has_value());
  CHECK(nobody.err().message.find("connect") != std::string::npos);
  const auto too_long = tee::detail::unix_http_request("/" + std::string(200, 'x'), "POST", "/Info", "{}",
                                                       std::chrono::milliseconds(1000));
  REQUIRE(!too_long.has_value());
  CHECK(too_long.err().message.find("longer than") != std::string::npos);
}

TEST_CASE("open_dstack refuses agent answers it cannot use") {
  const auto json_answer = [](const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  constexpr std::string_view kAgentKey = "3f6d3a6b7e1c2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccd";
  const std::string good_key = R"({"key":")" + std::string(kAgentKey) + R"("})";
  const std::string good_info = R"({"app_id":"aa","compose_hash":"cc","tcb_info":"{}"})";
  struct case_ {
    std::string name;
    std::string get_key;  // the body of the GetKey answer
    std::string info;     // the body of the Info answer
    std::string error;
  };
  const case_ cases[] = {
      {"short key", R"({"key":"abcd"})", good_info, "not 32 bytes"},
      {"zero key", R"({"key":")" + std::string(64, '0') + R"("})", good_info, "all zero"},
      {"no key", R"({"signature_chain":[]})", good_info, "'key' missing"},
      {"not json", "<html>", good_info, "not a JSON object"},
      {"no app id", good_key, R"({"tcb_info":"{}"})", "'app_id'"},
      {"bad tcb_info", good_key, R"({"app_id":"aa","tcb_info":"[1,2]"})", "tcb_info"},
      {"bad key_provider_info", good_key, R"({"app_id":"aa","key_provider_info":"kms"})", "key_provider_info"},
      {"chain not hex", R"({"key":")" + std::string(kAgentKey) + R"(","signature_chain":["zz"]})", good_info,
       "signature_chain"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    fake_agent agent(agent_identity{}, [&](const agent_request& r) -> std::optional<std::string> {
      return json_answer(r.path == "/GetKey" ? c.get_key : c.info);
    });
    tee::dstack_options o;
    o.socket = agent.socket_path();
    o.allow_unstable_keys = true;  // these answers carry no key provider
    const auto t = tee::open_dstack(o);
    REQUIRE(!t.has_value());
    CHECK(t.code() == tee::tee_errc::unavailable);
    CHECK(t.err().message.find(c.error) != std::string::npos);
    // A message about the key never carries the key.
    CHECK(t.err().message.find(std::string(kAgentKey)) == std::string::npos);
  }

  // The same agent with usable answers: the root key is the agent's.
  fake_agent agent(agent_identity{}, [&](const agent_request& r) -> std::optional<std::string> {
    return json_answer(r.path == "/GetKey" ? good_key : good_info);
  });
  tee::dstack_options o;
  o.socket = agent.socket_path();
  o.allow_unstable_keys = true;
  const auto t = tee::open_dstack(o);
  REQUIRE_MESSAGE(t.has_value(), t.err().message);
  const hash256 path = crypto::keccak256(std::string_view("any path"));
  const hash256 account = crypto::keccak256(std::string_view("any account"));
  CHECK((*t)->wallet_address(account, path).value() ==
        pkp::wallet_address(Secret(codec::hex::decode(kAgentKey).value()), account, path).value());
  CHECK((*t)->kind() == "dstack");
  CHECK((*t)->info().value().tcb_info == "{}");
  CHECK(!(*t)->evidences().configured());
}

}  // namespace enact::itest
