// SPDX-License-Identifier: Apache-2.0
// The attestation endpoints at the host root (docs/protocol.md §2 "Attestation")
// against the real server: the simulated TEE's recorded quote and app info, the development
// evidence set (checksums, quote.json, an X.509 certificate), a served --evidence-dir, refused
// traversal; and the dstack backend against a fake guest agent on a Unix socket (the requests it
// sends, the root key it derives PKP addresses from, a clear exit 2 when the agent is missing).
#include <doctest/doctest.h>

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
#include <mutex>
#include <optional>
#include <thread>

#include "enact/client/api_error.hpp"
#include "enact/codec/hex.hpp"
#include "enact/address.hpp"
#include "enact/crypto/keccak.hpp"
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

// The GetKey answer of the fake agent: the PKP root key every server on it must use.
constexpr std::string_view kAgentKey = "3f6d3a6b7e1c2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccd";
const std::string kAgentComposeHash(64, 'c');

struct agent_request {
  std::string path;
  json::object body;
};

/// A dstack guest agent stand-in: HTTP/1.1 on a Unix socket in a temporary directory, answering
/// GetKey, Info and GetQuote in the shapes of Dstack-TEE/dstack sdk/curl/api.md and recording
/// what it was asked. GetQuote answers with a chunked body; the others with Content-Length.
class fake_agent {
 public:
  /// Answers a request with the raw bytes of a whole HTTP answer; std::nullopt: no answer at all
  /// (the connection stays open until the client gives up).
  using responder = std::function<std::optional<std::string>(const agent_request&)>;

  explicit fake_agent(bool fail_get_key = false, responder raw = {})
      : fail_get_key_(fail_get_key), raw_(std::move(raw)), quote_(fixture_quote()) {
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

  void handle(int c) {
    std::string in;
    char buf[4096];
    size_t head_end = std::string::npos;
    size_t want = 0;
    for (;;) {
      if (head_end == std::string::npos) {
        head_end = in.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          const auto cl = in.find("Content-Length: ");
          if (cl != std::string::npos && cl < head_end)
            want = std::stoul(in.substr(cl + 16));
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
    agent_request r{request_line.substr(sp1 + 1, sp2 - sp1 - 1), {}};
    std::error_code ec;
    json::value body = json::parse(in.substr(head_end + 4, want), ec);
    if (!ec && body.is_object())
      r.body = body.as_object();
    {
      std::lock_guard lock(mu_);
      requests_.push_back(r);
    }
    const std::optional<std::string> out = raw_ ? raw_(r) : dstack_answer(r);
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

  /// The guest agent's answers, in the shapes of sdk/curl/api.md.
  std::string dstack_answer(const agent_request& r) const {
    std::string status = "200 OK";
    std::string answer;
    bool chunked = false;
    if (r.path == "/GetKey" && fail_get_key_) {
      status = "500 Internal Server Error";
      answer = R"({"error":"no key provider"})";
    } else if (r.path == "/GetKey") {
      answer = json::serialize(json::object{{"key", kAgentKey}, {"signature_chain", json::array{"aa", "bb"}}});
    } else if (r.path == "/Info") {
      const json::object tcb{{"mrtd", std::string(96, '1')},
                             {"compose_hash", kAgentComposeHash},
                             {"app_compose", R"({"docker_compose_file":"services: {}"})"},
                             {"event_log", json::array{}}};
      answer = json::serialize(json::object{{"app_id", std::string(40, 'a')},
                                            {"instance_id", std::string(40, 'b')},
                                            {"app_cert", ""},
                                            {"tcb_info", json::serialize(tcb)},
                                            {"app_name", "enact-test"},
                                            {"compose_hash", kAgentComposeHash},
                                            {"vm_config", R"({"cpu_count":2})"}});
    } else if (r.path == "/GetQuote") {
      // The fixture quote with the requested report data in place, as a real agent would bind it.
      bytes quote = quote_;
      const auto* rd = r.body.if_contains("report_data");
      if (rd != nullptr && rd->is_string() && rd->get_string().size() == 128) {
        const bytes data = codec::hex::decode(rd->get_string()).value();
        std::copy(data.begin(), data.end(), quote.begin() + kReportData);
      }
      answer = json::serialize(json::object{{"quote", codec::hex::encode(quote)},
                                            {"event_log", R"([{"imr":3,"event":"agent"}])"},
                                            {"report_data", rd != nullptr ? *rd : json::value("")},
                                            {"vm_config", R"({"cpu_count":2})"}});
      chunked = true;
    } else {
      status = "404 Not Found";
      answer = R"({"error":"no such method"})";
    }
    std::string out = "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\n";
    if (chunked) {
      out += "Transfer-Encoding: chunked\r\n\r\n";
      for (size_t at = 0; at < answer.size(); at += 1000) {
        const std::string piece = answer.substr(at, 1000);
        char size[16];
        std::snprintf(size, sizeof size, "%zx", piece.size());
        out += std::string(size) + "\r\n" + piece + "\r\n";
      }
      out += "0\r\n\r\n";
    } else {
      out += "Content-Length: " + std::to_string(answer.size()) + "\r\n\r\n" + answer;
    }
    return out;
  }

  temp_dir dir_;
  std::string path_;
  int fd_ = -1;
  bool fail_get_key_;
  responder raw_;
  bytes quote_;
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

}  // namespace

TEST_CASE("dstack: the PKP root key comes from GetKey, so servers on one agent agree") {
  fake_agent agent;
  server_process a({"--tee", "dstack", "--dstack-socket", agent.socket_path()});
  server_process b({"--tee", "dstack", "--dstack-socket", agent.socket_path()});
  server_process simulated;

  // What the backend asked for: the root key at its fixed path, as a secp256k1 key.
  const auto keys = agent.requests_to("/GetKey");
  REQUIRE(keys.size() == 2);
  for (const auto& k : keys) {
    CHECK(k.body.at("path").as_string() == "enact/pkp-root");
    CHECK(k.body.at("algorithm").as_string() == "secp256k1");
    CHECK(k.body.at("purpose").is_string());
  }
  CHECK(agent.requests_to("/Info").size() == 2);

  // The api_payer is the server key "api-payer/0" (server/app/main.cpp): derived from the
  // agent's key by the rules of docs/protocol.md §1 "server keys".
  const Secret payer = pkp::server_signing_key(Secret(codec::hex::decode(kAgentKey).value()), "api-payer/0").value();
  const std::string expected =
      to_checksum_address(crypto::secp256k1::to_address(crypto::secp256k1::public_key_of(payer).value()));
  CHECK(admin_api_payer(a) == expected);
  CHECK(admin_api_payer(b) == expected);
  CHECK(admin_api_payer(simulated) != expected);

  // The key never reaches the log.
  CHECK(a.stop().clean());
  CHECK(a.log_text().find(std::string(kAgentKey)) == std::string::npos);
  CHECK(b.stop().clean());
  CHECK(simulated.stop().clean());
}

TEST_CASE("dstack: /attestation and /info pass the agent's answers through") {
  fake_agent agent;
  server_process server({"--tee", "dstack", "--dstack-socket", agent.socket_path()});
  auto c = server.client();

  const response r = c.request("GET", "/attestation");
  REQUIRE_MESSAGE(r.status == 200, r.describe());
  const auto quotes = agent.requests_to("/GetQuote");
  REQUIRE(quotes.size() == 1);
  // docs/protocol.md §5: all-zero report data, 64 bytes, hex.
  CHECK(quotes[0].body.at("report_data").as_string() == std::string(128, '0'));
  const bytes quote = codec::hex::decode(r.obj().at("quote").as_string()).value();
  CHECK(quote == fixture_quote());  // the fixture's report_data is all zero already
  CHECK(r.obj().at("event_log").as_string() == R"([{"imr":3,"event":"agent"}])");
  CHECK(r.obj().at("vm_config").as_string() == R"({"cpu_count":2})");

  const response info = c.request("GET", "/info");
  REQUIRE_MESSAGE(info.status == 200, info.describe());
  CHECK(info.obj().at("app_id").as_string() == std::string(40, 'a'));
  CHECK(info.obj().at("compose_hash").as_string() == kAgentComposeHash);
  // The agent's tcb_info string becomes an object.
  const json::object& tcb = info.obj().at("tcb_info").as_object();
  CHECK(tcb.at("app_compose").as_string() == R"({"docker_compose_file":"services: {}"})");
  CHECK(tcb.at("mrtd").as_string() == std::string(96, '1'));

  // No --evidence-dir in dstack mode: nothing to serve.
  const response evidences = c.request("GET", "/evidences/");
  CHECK(evidences.status == 404);
  CHECK(evidences.error_code() == "not_found");
  CHECK(server.stop().clean());
}

TEST_CASE("dstack: a guest agent that is missing or refuses the key stops the start (exit 2)") {
  temp_dir dir;
  const auto missing = run_to_exit(
      {"--tee", "dstack", "--dstack-socket", dir.path() + "/none.sock", "--data-dir", dir.path() + "/data"});
  CHECK(missing.status.exited);
  CHECK(missing.status.code == 2);
  CHECK(missing.stderr_text.find(dir.path() + "/none.sock") != std::string::npos);
  CHECK(missing.stderr_text.find("connect") != std::string::npos);

  fake_agent refusing(/*fail_get_key=*/true);
  const auto refused =
      run_to_exit({"--tee", "dstack", "--dstack-socket", refusing.socket_path(), "--data-dir", dir.path() + "/data2"});
  CHECK(refused.status.code == 2);
  CHECK(refused.stderr_text.find("GetKey") != std::string::npos);
  CHECK(refused.stderr_text.find("500") != std::string::npos);

  const auto bad_backend = run_to_exit({"--tee", "sgx", "--data-dir", dir.path() + "/data3"});
  CHECK(bad_backend.status.code == 2);
  CHECK(bad_backend.stderr_text.find("--tee") != std::string::npos);
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
    fake_agent agent(false, [&](const agent_request&) { return c.raw; });
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
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    fake_agent agent(false, [&](const agent_request& r) -> std::optional<std::string> {
      return json_answer(r.path == "/GetKey" ? c.get_key : c.info);
    });
    tee::dstack_options o;
    o.socket = agent.socket_path();
    const auto t = tee::open_dstack(o);
    REQUIRE(!t.has_value());
    CHECK(t.code() == tee::tee_errc::unavailable);
    CHECK(t.err().message.find(c.error) != std::string::npos);
    // A message about the key never carries the key.
    CHECK(t.err().message.find(std::string(kAgentKey)) == std::string::npos);
  }

  // The same agent with usable answers: the root key is the agent's.
  fake_agent agent(false, [&](const agent_request& r) -> std::optional<std::string> {
    return json_answer(r.path == "/GetKey" ? good_key : good_info);
  });
  tee::dstack_options o;
  o.socket = agent.socket_path();
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
