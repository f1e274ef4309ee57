// SPDX-License-Identifier: Apache-2.0
// `enact attest verify`: the four client checks of docs/protocol.md §5
// against a running service, through enact::attest::verify_all. It fetches GET /attestation,
// GET /info, the /evidences/ listing and every file it links (sha256sum.txt, quote.json,
// acme-account.json, cert-<domain>.pem) and, for an https URL, the certificate the server presents
// on a TLS handshake, then prints every check with its outcome: pass, fail, or skip with the
// reason a check could not be made (plain http has no TLS handshake to bind; CAA needs a public
// --domain; governance needs --rpc-url). Exit 0 when every check made passed, 1 when one failed
// (or the service could not be reached, or sent malformed evidence), 2 on usage errors.
//
// Nothing fetched is trusted for being fetched: the quote's signature chain to Intel's root, the
// event-log replay, the report_data binding and the certificate comparison are what the verdict
// rests on. The fetch therefore does not check the server certificate against the system's CAs
// (a TD's certificate is trusted through its evidence, not through the WebPKI); the handshake
// certificate it compares is taken from a separate handshake with the same host and SNI name.
#include <httplib.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/json.hpp>

#include <cstdio>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "enact/attest/verify_all.hpp"
#include "enact/chain/client.hpp"
#include "enact/codec/hex.hpp"

namespace enact::cli {
namespace {

namespace json = boost::json;
namespace at = enact::attest;

// --- where the service is ----------------------------------------------------------------------

struct service_url {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets
  int port = 0;
  std::string origin;  // scheme://host:port, for httplib
};

service_url parse_service_url(const std::string& text) {
  service_url u;
  std::string_view rest(text);
  if (rest.rfind("http://", 0) == 0) {
    u.scheme = "http";
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    u.scheme = "https";
    rest.remove_prefix(8);
  } else {
    throw usage_error("--url: must start with http:// or https:// (got '" + text + "')");
  }
  while (!rest.empty() && rest.back() == '/')
    rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos)
    throw usage_error(
        "--url: give the service's origin (scheme://host[:port]); the attestation "
        "endpoints are at the host root");
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos)
      throw usage_error("--url: unterminated [IPv6] host");
    u.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        throw usage_error("--url: unexpected text after the [IPv6] host");
      port_text = rest.substr(1);
    }
  } else if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    u.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
  } else {
    u.host = std::string(rest);
  }
  if (u.host.empty())
    throw usage_error("--url: no host");
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port_text.empty()) {
    const uint64_t p = parse_u64(port_text, "--url port");
    if (p == 0 || p > 65535)
      throw usage_error("--url: port must be 1-65535");
    u.port = static_cast<int>(p);
  }
  const std::string host_part = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  u.origin = u.scheme + "://" + host_part + ":" + std::to_string(u.port);
  return u;
}

// --- fetching ----------------------------------------------------------------------------------

struct fetched {
  int status = 0;
  std::string body;
};

class fetcher {
 public:
  explicit fetcher(const service_url& u) : http_(u.origin) {
    http_.set_connection_timeout(10, 0);
    http_.set_read_timeout(30, 0);
    http_.set_follow_location(false);
    // See the file comment: the evidence is what is trusted, not the WebPKI.
    if (u.scheme == "https")
      http_.enable_server_certificate_verification(false);
  }

  /// GET `path`; input_error when the service cannot be reached.
  fetched get(const std::string& path) {
    auto res = http_.Get(path.c_str());
    if (!res)
      throw input_error("GET " + path + ": " + httplib::to_string(res.error()));
    return {res->status, res->body};
  }
  /// GET `path`, which must answer 200.
  std::string get_ok(const std::string& path) {
    fetched f = get(path);
    if (f.status != 200)
      throw input_error("GET " + path + ": HTTP " + std::to_string(f.status));
    return std::move(f.body);
  }

 private:
  httplib::Client http_;
};

/// The plain file names the /evidences/ listing links (href="name"), in order, without repeats.
std::vector<std::string> listed_files(std::string_view html) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = html.find("href=\"", pos)) != std::string_view::npos) {
    pos += 6;
    const auto end = html.find('"', pos);
    if (end == std::string_view::npos)
      break;
    std::string name(html.substr(pos, end - pos));
    pos = end;
    const bool plain = !name.empty() && name.front() != '.' && name.find_first_of("/?#:%&") == std::string::npos;
    bool seen = false;
    for (const auto& n : out)
      seen = seen || n == name;
    if (plain && !seen)
      out.push_back(std::move(name));
  }
  return out;
}

/// DER of the leaf certificate `host:port` presents on a TLS handshake with SNI `host`.
bytes served_certificate_der(const service_url& u) {
  const auto ssl_error = [](const std::string& what) {
    const unsigned long e = ERR_get_error();
    char buf[256] = {};
    if (e != 0)
      ERR_error_string_n(e, buf, sizeof buf);
    return input_error("TLS handshake with the service: " + what + (e != 0 ? std::string(": ") + buf : ""));
  };
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
  if (!ctx)
    throw ssl_error("SSL_CTX_new");
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);  // compared with the evidence instead
  std::unique_ptr<BIO, decltype(&BIO_free_all)> bio(BIO_new_ssl_connect(ctx.get()), &BIO_free_all);
  if (!bio)
    throw ssl_error("BIO_new_ssl_connect");
  const std::string target =
      (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port);
  BIO_set_conn_hostname(bio.get(), target.c_str());
  SSL* ssl = nullptr;
  BIO_get_ssl(bio.get(), &ssl);
  if (ssl == nullptr)
    throw ssl_error("BIO_get_ssl");
  SSL_set_tlsext_host_name(ssl, u.host.c_str());
  if (BIO_do_connect(bio.get()) <= 0 || BIO_do_handshake(bio.get()) <= 0)
    throw ssl_error("cannot complete a handshake with " + target);
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl), &X509_free);
  if (!cert)
    throw ssl_error("the server presented no certificate");
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert.get(), &der);
  if (n <= 0)
    throw ssl_error("i2d_X509");
  bytes out(der, der + n);
  OPENSSL_free(der);
  return out;
}

// --- checks that are not made ------------------------------------------------------------------

/// A resolver for a domain whose CAA records are not looked up: its two CAA checks are removed
/// from the report and listed as skipped instead.
class no_caa_resolver final : public at::caa_resolver {
 public:
  result<std::vector<at::caa_record>> caa(std::string_view) override { return std::vector<at::caa_record>{}; }
};

struct skipped_check {
  std::string name;  // "network.certificate", "governance", ...
  std::string reason;
};

void drop_checks(at::checklist& list, const std::vector<std::string>& names, const std::string& group,
                 const std::string& reason, std::vector<skipped_check>& skipped) {
  for (const auto& n : names) {
    for (auto it = list.checks.begin(); it != list.checks.end(); ++it) {
      if (it->name == n) {
        list.checks.erase(it);
        skipped.push_back({group + "." + n, reason});
        break;
      }
    }
  }
}

bool is_local_domain(std::string_view d) {
  return d == "localhost" || (d.size() > 10 && d.substr(d.size() - 10) == ".localhost") ||
         d.find_first_not_of("0123456789.") == std::string_view::npos || d.find(':') != std::string_view::npos;
}

// --- output ------------------------------------------------------------------------------------

/// The rows of a checklist in the text table: outcome, group.check, detail.
using table = std::vector<std::vector<std::string>>;
void add_group(table& rows, const std::string& group, const at::checklist& list) {
  for (const auto& c : list.checks)
    rows.push_back({c.passed ? "pass" : "FAIL", group + "." + c.name, c.detail});
}

// --- the commands ------------------------------------------------------------------------------

// Collateral as a QuoteCollateralV3 JSON file, or a directory holding one as collateral.json.
at::quote_collateral read_collateral(const std::string& path) {
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec) ? path + "/collateral.json" : path;
  auto c = at::parse_collateral(read_input(file));
  if (!c)
    throw input_error(file + ": " + c.err().message);
  return std::move(*c);
}

// A quote file holds the binary quote, or its hex (0x optional, surrounding whitespace ignored).
bytes read_quote(const std::string& path) {
  const std::string text = read_input(path);
  std::string_view t(text);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ' || t.back() == '\t'))
    t.remove_suffix(1);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\n' || t.front() == '\t'))
    t.remove_prefix(1);
  bool is_hex = !t.empty();
  for (size_t i = (t.rfind("0x", 0) == 0 ? 2 : 0); i < t.size() && is_hex; ++i)
    is_hex = std::isxdigit(static_cast<unsigned char>(t[i])) != 0;
  if (is_hex && t.size() % 2 == 0) {
    auto b = codec::hex::decode(t, "quote");
    if (b)
      return std::move(*b);
  }
  return bytes(text.begin(), text.end());
}

// `enact attest verify-quote FILE [--collateral FILE|DIR] [--now UNIX] [--json]`: the quote check
// alone, on a quote file. Exit 0 only when the quote, its certificate chain and (when given) its
// collateral all verify; 1 otherwise (also when the file is not a quote); 2 on usage errors.
int attest_verify_quote(const std::vector<std::string>& argv) {
  const args a(argv, {"collateral", "now", "at"}, {});
  a.at_most(1);
  const std::string path = a.at(0, "FILE");
  at::quote_options options;
  const std::optional<std::string> now = a.get("now") ? a.get("now") : a.get("at");
  if (now)
    options.now = static_cast<int64_t>(parse_u64(*now, "--now"));
  if (auto c = a.get("collateral"))
    options.collateral = read_collateral(*c);

  const bytes quote = read_quote(path);
  auto report = at::verify_quote(quote, options);
  if (!report) {
    if (json_output()) {
      json::object out{{"ok", false},
                       {"tcb_status", nullptr},
                       {"advisory_ids", json::array{}},
                       {"checks", json::array{}},
                       {"error", json::object{{"code", report.code().message()}, {"message", report.err().message}}}};
      emit(out);
      return 1;
    }
    std::fprintf(stderr, "enact: %s: %s\n", path.c_str(), report.err().message.c_str());
    return 1;
  }
  const bool ok = report->passed();
  if (json_output()) {
    json::array checks;
    for (const auto& c : report->checks)
      checks.push_back(json::object{{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
    json::array advisories;
    if (report->tcb)
      for (const auto& id : report->tcb->advisory_ids)
        advisories.push_back(json::value(id));
    json::object out{{"ok", ok},
                     {"tcb_status", report->tcb ? json::value(std::string(at::to_string(report->tcb->status)))
                                                : json::value(nullptr)},
                     {"advisory_ids", std::move(advisories)},
                     {"checks", std::move(checks)},
                     {"verified_at", report->verified_at}};
    emit(out);
    return ok ? 0 : 1;
  }
  table rows;
  for (const auto& c : report->checks)
    rows.push_back({c.passed ? "pass" : "FAIL", c.name, c.detail});
  std::fputs(render_table(rows).c_str(), stdout);
  if (report->tcb) {
    std::string ids;
    for (const auto& id : report->tcb->advisory_ids)
      ids += (ids.empty() ? "" : ", ") + id;
    std::printf("\ntcb status: %s%s%s\n", std::string(at::to_string(report->tcb->status)).c_str(),
                ids.empty() ? "" : "; advisories: ", ids.c_str());
  } else if (!options.collateral) {
    std::printf("\ntcb status: not assessed (no --collateral)\n");
  }
  std::printf("verdict: %s\n", ok ? "pass" : "FAIL");
  return ok ? 0 : 1;
}

int attest_verify(const std::vector<std::string>& argv) {
  const args a(argv, {"url", "domain", "rpc-url", "rpc", "at", "now", "collateral"}, {});
  a.at_most(1);
  // The URL as the positional argument or --url; --rpc and --now are spellings of --rpc-url, --at.
  if (a.count() == 1 && a.get("url"))
    throw usage_error("the URL is given twice (positional and --url)");
  const service_url url = parse_service_url(a.count() == 1 ? a.at(0, "URL") : a.require("url"));
  const std::optional<std::string> at_opt = a.get("at") ? a.get("at") : a.get("now");
  const std::optional<std::string> rpc_opt = a.get("rpc-url") ? a.get("rpc-url") : a.get("rpc");

  at::verify_all_options options;
  if (at_opt)
    options.quote.now = static_cast<int64_t>(parse_u64(*at_opt, "--at"));
  if (auto path = a.get("collateral"))
    options.quote.collateral = read_collateral(*path);
  std::optional<chain::rpc_client> rpc;
  if (const auto& rpc_url = rpc_opt) {
    chain::rpc_options ro;
    ro.url = *rpc_url;
    auto client = chain::rpc_client::create(std::move(ro));
    if (!client)
      throw usage_error("--rpc-url: " + client.err().message);
    rpc.emplace(std::move(*client));
  }

  fetcher http(url);
  at::service_evidence evidence;
  evidence.attestation_json = http.get_ok("/attestation");
  evidence.info_json = http.get_ok("/info");

  std::vector<skipped_check> skipped;
  const std::optional<std::string> domain_opt = a.get("domain");
  std::string network_skip;  // why the whole network check is skipped
  const fetched listing = http.get("/evidences/");
  if (listing.status == 200) {
    at::network_evidence ne;
    std::vector<std::string> cert_domains;
    for (const auto& name : listed_files(listing.body)) {
      ne.files[name] = http.get_ok("/evidences/" + name);
      if (name.size() > 9 && name.rfind("cert-", 0) == 0 && name.substr(name.size() - 4) == ".pem")
        cert_domains.push_back(name.substr(5, name.size() - 9));
    }
    // The evidence certificate is cert-<domain>.pem: --domain names it; without it, the one
    // certificate the listing links, else the URL's host.
    if (domain_opt)
      ne.domain = *domain_opt;
    else if (cert_domains.size() == 1)
      ne.domain = cert_domains.front();
    else
      ne.domain = url.host;
    if (url.scheme == "https")
      ne.served_cert_der = served_certificate_der(url);
    evidence.network = std::move(ne);
  } else {
    network_skip =
        "the service serves no evidence files (GET /evidences/: HTTP " + std::to_string(listing.status) + ")";
  }

  // CAA: only for a public domain named with --domain.
  std::unique_ptr<at::caa_resolver> resolver;
  std::string caa_skip;
  if (!domain_opt) {
    caa_skip = "no --domain given: the CAA records of the service's public domain are not looked up";
  } else if (is_local_domain(*domain_opt)) {
    caa_skip = "--domain " + *domain_opt + " is local: it has no public CAA records";
  }
  resolver = caa_skip.empty() ? at::system_caa_resolver() : std::make_unique<no_caa_resolver>();
  options.resolver = resolver.get();
  if (rpc) {
    options.eth_call = [&rpc](const address& to, bytes_view data) {
      return rpc->call(to, data);
    };
  }

  auto verified = at::verify_all(evidence, options);
  if (!verified)
    throw input_error(verified.err().message);
  at::service_report report = std::move(*verified);

  // Report only the checks that were made; name the others with the reason.
  if (report.network) {
    if (!caa_skip.empty())
      drop_checks(*report.network, {"caa_restricts_issuance", "caa_account"}, "network", caa_skip, skipped);
    if (url.scheme != "https")
      drop_checks(*report.network, {"certificate"}, "network",
                  "plain http: there is no TLS handshake whose certificate could be compared with "
                  "the evidence certificate",
                  skipped);
  }
  for (const auto& s : report.skipped) {
    if (s == "network")
      skipped.push_back({"network", network_skip.empty() ? "no network evidence" : network_skip});
    else if (s == "governance")
      skipped.push_back({"governance", "no --rpc-url given: allowedComposeHashes is not called"});
    else
      skipped.push_back({s, "not performed"});
  }

  // vm_config "simulated": true marks the recorded quote of a development server.
  bool simulated = false;
  {
    std::error_code ec;
    json::value doc = json::parse(evidence.attestation_json, ec);
    if (!ec && doc.is_object()) {
      const json::value* vm = doc.as_object().if_contains("vm_config");
      json::value vm_doc;
      if (vm != nullptr && vm->is_string())
        vm_doc = json::parse(vm->as_string(), ec);
      else if (vm != nullptr)
        vm_doc = *vm;
      if (!ec && vm_doc.is_object()) {
        const json::value* s = vm_doc.as_object().if_contains("simulated");
        simulated = s != nullptr && s->is_bool() && s->as_bool();
      }
    }
  }

  const bool pass = report.overall() == at::verdict::pass;
  if (json_output()) {
    json::object out = at::to_json(report).as_object();
    json::array sk;
    for (const auto& s : skipped)
      sk.push_back(json::object{{"check", s.name}, {"reason", s.reason}});
    out["skipped_checks"] = std::move(sk);
    // Over plain http nothing was served on a handshake: no hash of it to show.
    if (url.scheme != "https" && out.contains("network"))
      out["network"].as_object()["facts"].as_object().erase("served_cert_sha256");
    out["url"] = url.origin;
    out["simulated"] = simulated;
    emit(out);
    return pass ? 0 : 1;
  }

  {
    const std::time_t t = static_cast<std::time_t>(report.quote.verified_at);
    std::tm tm{};
    char when[32] = "?";
    if (gmtime_r(&t, &tm) != nullptr)
      std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    std::printf("attestation of %s, verified at %s (%s)\n", url.origin.c_str(), when,
                at_opt ? "--at" : "the current time; --at UNIX to choose");
  }
  if (simulated)
    std::printf(
        "vm_config says \"simulated\": true — a recorded quote of another machine, not "
        "evidence about this server\n");
  std::printf("\n");
  table rows;
  add_group(rows, "quote", report.quote);
  add_group(rows, "app", report.app);
  if (report.evidence_quote)
    add_group(rows, "evidence_quote", *report.evidence_quote);
  if (report.network)
    add_group(rows, "network", *report.network);
  if (report.governance)
    add_group(rows, "governance", *report.governance);
  for (const auto& s : skipped)
    rows.push_back({"skip", s.name, s.reason});
  std::fputs(render_table(rows).c_str(), stdout);

  size_t made = 0;
  size_t failed = 0;
  const auto count = [&](const at::checklist& l) {
    made += l.checks.size();
    failed += l.failed().size();
  };
  count(report.quote);
  count(report.app);
  if (report.evidence_quote)
    count(*report.evidence_quote);
  if (report.network)
    count(*report.network);
  if (report.governance)
    count(*report.governance);
  std::printf("\nverdict: %s (%zu checks made, %zu failed, %zu skipped)\n", pass ? "pass" : "FAIL", made, failed,
              skipped.size());
  return pass ? 0 : 1;
}

}  // namespace

std::vector<command> attest_commands() {
  return {
      {"attest verify", "URL [--domain D] [--rpc URL] [--at UNIX] [--collateral FILE|DIR]",
       "verify a service's TDX attestation: quote, application, network and governance checks "
       "(exit 0 all made checks pass, 1 one fails)",
       attest_verify},
      {"attest verify-quote", "FILE [--collateral FILE|DIR] [--now UNIX]",
       "verify a TDX/SGX quote file (binary or hex): signatures, PCK chain to Intel's root and, "
       "with collateral, the TCB status (exit 0 all verify, 1 otherwise)",
       attest_verify_quote},
  };
}

}  // namespace enact::cli
