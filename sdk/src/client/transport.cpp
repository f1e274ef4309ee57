// SPDX-License-Identifier: Apache-2.0
#include "transport.hpp"

#include <httplib.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <random>
#include <string_view>
#include <thread>

namespace enact::client::detail {

namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kMaxBackoff{8000};
constexpr std::string_view kRedacted = "[redacted]";
constexpr size_t kMaxErrorBody = 4096;  // of an answer whose body the caller capped

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

const char* method_name(http_method m) {
  switch (m) {
    case http_method::get:
      return "GET";
    case http_method::post:
      return "POST";
    case http_method::put:
      return "PUT";
    case http_method::patch:
      return "PATCH";
    case http_method::del:
      return "DELETE";
  }
  return "GET";
}

parsed_url url_failure(url_fault f, std::string why) {
  parsed_url out;
  out.fault = f;
  out.why = std::move(why);
  return out;
}

}  // namespace

// --- URLs ----------------------------------------------------------------------------------------

std::string parsed_url::prefix() const {
  std::string_view p = path;
  while (!p.empty() && p.back() == '/')
    p.remove_suffix(1);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : p) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x80) {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    }
  }
  return out;
}

parsed_url parse_url(std::string_view url) {
  std::string lower(url.substr(0, std::min<size_t>(url.size(), 8)));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view scheme;
  if (lower.rfind("http://", 0) == 0)
    scheme = "http";
  else if (lower.rfind("https://", 0) == 0)
    scheme = "https";
  else
    return url_failure(url_fault::scheme, "expected http:// or https://");
  const std::string_view rest = url.substr(scheme.size() + 3);
  const size_t end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, end);
  const std::string_view path = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (authority.find('@') != std::string_view::npos)
    return url_failure(url_fault::user_info, "user-info is not allowed");
  if (path.find_first_of("?#") != std::string_view::npos)
    return url_failure(url_fault::other, "a query or fragment is not allowed");
  std::string_view host = authority;
  std::optional<std::string_view> port;
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos)
      return url_failure(url_fault::other, "unterminated IPv6 address");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':')
        return url_failure(url_fault::other, "expected ':' after the IPv6 address");
      port = host.substr(close + 2);
    }
    host = host.substr(0, close + 1);
    if (host.size() <= 2)
      return url_failure(url_fault::other, "empty host");
  } else if (const size_t colon = host.find(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty())
    return url_failure(url_fault::other, "empty host");
  for (const char c : host)
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)) || c == '\\')
      return url_failure(url_fault::other, "invalid character in host");
  if (port) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port->data(), port->data() + port->size(), value);
    if (port->empty() || ec != std::errc() || p != port->data() + port->size() || value == 0 || value > 65535)
      return url_failure(url_fault::other, "port must be 1 to 65535");
  }
  for (const char c : path)
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return url_failure(url_fault::other, "invalid character in path");
  parsed_url out;
  out.origin = std::string(scheme) + "://" + std::string(authority);
  out.path = std::string(path);
  return out;
}

// --- one request over one connection -------------------------------------------------------------

std::string http_exchange::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name))
      return v;
  return {};
}

failure_text describe(const http_exchange& x, const std::string& origin, const connection_settings& s) {
  switch (x.failure) {
    case http_failure::connect:
      return {false, "cannot connect to " + origin};
    case http_failure::connect_timeout:
      return {true,
              "connecting to " + origin + " timed out after " + std::to_string(s.connect_timeout.count()) + " ms"};
    case http_failure::read:
      // The HTTP library reports an expired read timeout and a connection closed mid-answer alike.
      if (x.elapsed * 10 >= s.read_timeout * 9)
        return {true, "no answer from " + origin + " within " + std::to_string(s.read_timeout.count()) + " ms"};
      return {false, "connection to " + origin + " closed before an answer"};
    case http_failure::write:
      return {false, "sending the request to " + origin + " failed"};
    case http_failure::tls_handshake:
      return {false, "TLS handshake with " + origin + " failed"};
    case http_failure::tls_certificates:
      return {false,
              "cannot load CA certificates from " + (s.ca_file.empty() ? std::string("the system store") : s.ca_file)};
    case http_failure::tls_verification:
      return {false, "the TLS certificate of " + origin + " did not verify"};
    case http_failure::too_large:
      return {false, "the answer of " + origin + " is larger than the limit"};
    default:
      return {false, "request to " + origin + " failed (" + x.failure_name + ")"};
  }
}

struct http_connection::impl {
  httplib::Client client;
  explicit impl(const std::string& origin) : client(origin) {}
};

http_connection::http_connection(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
http_connection::~http_connection() = default;

std::unique_ptr<http_connection> http_connection::open(const std::string& origin, const connection_settings& s) {
  auto p = std::make_unique<impl>(origin);
  httplib::Client& c = p->client;
  if (!c.is_valid())
    return nullptr;
  c.set_connection_timeout(s.connect_timeout);
  c.set_read_timeout(s.read_timeout);
  c.set_write_timeout(s.read_timeout);
  c.set_keep_alive(s.keep_alive);
  c.set_tcp_nodelay(s.tcp_nodelay);
  c.set_follow_location(false);
  // The path goes out as given: httplib would otherwise re-encode some characters (',', ';', '+'),
  // and the target a BillingAuth signs must be the one the server reads (docs/protocol.md §2).
  c.set_url_encode(false);
  c.enable_server_certificate_verification(true);
  if (!s.ca_file.empty())
    c.set_ca_cert_path(s.ca_file);
  return std::unique_ptr<http_connection>(new http_connection(std::move(p)));
}

http_exchange http_connection::send(http_method method, const std::string& path, const http_headers& headers,
                                    const std::string& body, const std::string& content_type,
                                    std::optional<size_t> body_limit) {
  http_exchange x;
  httplib::Request req;
  req.method = method_name(method);
  req.path = path;
  for (const auto& [k, v] : headers)
    req.headers.emplace(k, v);
  const bool has_body = method == http_method::post || method == http_method::put || method == http_method::patch;
  if (has_body) {
    if (!content_type.empty())
      req.headers.emplace("Content-Type", content_type);
    req.body = body;
  }
  bool too_large = false;
  req.response_handler = [&](const httplib::Response& head) {
    x.status = head.status;
    if (!body_limit || head.status != 200)
      return true;
    // A declared length over the limit is refused before any of the body is read.
    if (head.has_header("Content-Length")) {
      const std::string declared = head.get_header_value("Content-Length");
      size_t n = 0;
      const auto [end, ec] = std::from_chars(declared.data(), declared.data() + declared.size(), n);
      if (ec == std::errc::result_out_of_range || (ec == std::errc{} && n > *body_limit)) {
        too_large = true;
        return false;
      }
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (!body_limit) {
      x.body.append(data, n);
      return true;
    }
    if (x.status != 200) {
      // Enough of an error page for its message; the status decides.
      x.body.append(data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, x.body.size())));
      return x.body.size() < kMaxErrorBody;
    }
    if (n > *body_limit - x.body.size()) {
      too_large = true;
      return false;  // stop reading: the connection is dropped
    }
    x.body.append(data, n);
    return true;
  };
  const auto start = std::chrono::steady_clock::now();
  httplib::Result r = impl_->client.send(req);
  x.elapsed = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  // The request's copies of credentials (headers) and of a key-carrying body.
  for (auto& [k, v] : req.headers)
    enact::detail::secure_wipe(v.data(), v.size());
  enact::detail::secure_wipe(req.body.data(), req.body.size());
  if (r) {
    x.status = r->status;
    for (const auto& [k, v] : r->headers)
      x.headers.emplace_back(k, v);
    return x;
  }
  if (too_large) {
    x.failure = http_failure::too_large;
    return x;
  }
  switch (r.error()) {
    case httplib::Error::Connection:
      x.failure = http_failure::connect;
      break;
    case httplib::Error::ConnectionTimeout:
      x.failure = http_failure::connect_timeout;
      break;
    case httplib::Error::Read:
      x.failure = http_failure::read;
      break;
    case httplib::Error::Write:
      x.failure = http_failure::write;
      break;
    case httplib::Error::SSLConnection:
      x.failure = http_failure::tls_handshake;
      break;
    case httplib::Error::SSLLoadingCerts:
      x.failure = http_failure::tls_certificates;
      break;
    case httplib::Error::SSLServerVerification:
      x.failure = http_failure::tls_verification;
      break;
    default:
      x.failure = http_failure::other;
      break;
  }
  x.failure_name = httplib::to_string(r.error());
  return x;
}

// --- the typed clients' transport ----------------------------------------------------------------

namespace {

void replace_all(std::string& s, std::string_view needle) {
  if (needle.empty())
    return;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + kRedacted.size()))
    s.replace(at, needle.size(), kRedacted);
}

void scrub(json::value& v, const std::vector<std::string_view>& secrets) {
  if (v.is_string()) {
    std::string s(v.get_string());
    bool changed = false;
    for (const auto& secret : secrets)
      if (!secret.empty() && s.find(secret) != std::string::npos) {
        replace_all(s, secret);
        changed = true;
      }
    if (changed)
      v = s;
  } else if (v.is_array()) {
    for (auto& e : v.get_array())
      scrub(e, secrets);
  } else if (v.is_object()) {
    for (auto& kv : v.get_object())
      scrub(kv.value(), secrets);
  }
}

std::optional<std::chrono::seconds> parse_retry_after(const std::string& text) {
  // Delay-seconds only (RFC 9110 §10.2.3); an HTTP-date falls back to the client's backoff.
  if (text.empty() || text.size() > 9)
    return std::nullopt;
  unsigned long long value = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || p != text.data() + text.size())
    return std::nullopt;
  return std::chrono::seconds(static_cast<long long>(value));
}

bool transient_status(int status) { return status == 429 || status == 502 || status == 503 || status == 504; }

[[noreturn]] void bad_url(const std::string& why) {
  throw api_error(api_errc::invalid_request, 0, {}, "base_url: " + why);
}

parsed_url base_url(std::string_view url, transport::credential kind) {
  parsed_url u = parse_url(url);
  switch (u.fault) {
    case url_fault::none:
      return u;
    case url_fault::scheme:
      bad_url("expected http://host[:port] or https://host[:port]");
    case url_fault::user_info:
      bad_url(kind == transport::credential::bearer
                  ? "user-info is not allowed; the token travels in the Authorization header"
                  : "user-info is not allowed; the API key travels in the X-Api-Key header");
    default:
      bad_url(u.why);
  }
}

/// A credential as header text; anything but printable ASCII (a stray newline from a key file)
/// could split the header, so it is refused before anything is sent.
std::string header_credential(const Secret& s, std::string_view what, std::string_view form) {
  for (const uint8_t b : s.view())
    if (b < 0x21 || b > 0x7e)
      throw api_error(api_errc::invalid_request, 0, {},
                      std::string(what) + ": holds a character that cannot travel in a header (expected the " +
                          std::string(form) + ")");
  return std::string(as_chars(s.view()));
}

}  // namespace

struct transport::impl {
  client_options options;
  parsed_url url;
  std::string prefix;
  connection_settings settings;
  std::unique_ptr<http_connection> http;
  std::minstd_rand jitter{std::random_device{}()};

  impl(client_options o, credential kind) : options(std::move(o)), url(base_url(options.base_url, kind)) {
    prefix = url.prefix();
    settings.connect_timeout = options.connect_timeout;
    settings.read_timeout = options.read_timeout;
    settings.ca_file = options.ca_file;
    http = http_connection::open(url.origin, settings);
    if (!http)
      bad_url("cannot use '" + url.origin + "'");
  }

  milliseconds backoff(unsigned attempt) {
    milliseconds d = options.retry_backoff;
    for (unsigned i = 0; i < attempt && d < kMaxBackoff; ++i)
      d *= 2;
    d = std::min(d, kMaxBackoff);
    // Half fixed, half random, so that clients failing together do not retry together.
    const auto half = d.count() / 2;
    std::uniform_int_distribution<long long> dist(0, half);
    return milliseconds(d.count() - half + dist(jitter));
  }

  // One attempt: the answer, or the error it amounts to (with whether it is worth repeating).
  struct outcome {
    std::optional<http_answer> answer;
    std::optional<api_error> error;
    bool transient = false;
  };

  api_error status_error(int status, const std::string& body, const std::string& request_id,
                         std::optional<std::chrono::seconds> retry_after,
                         const std::vector<std::string_view>& secrets) const {
    std::string code;
    std::string message;
    json::value details = nullptr;
    boost::system::error_code ec;
    json::value doc = json::parse(body, ec);
    if (!ec && doc.is_object()) {
      if (const json::value* err = doc.get_object().if_contains("error"); err && err->is_object()) {
        const json::object& e = err->get_object();
        if (const auto* c = e.if_contains("code"); c && c->is_string())
          code = c->get_string();
        if (const auto* m = e.if_contains("message"); m && m->is_string())
          message = m->get_string();
        if (const auto* d = e.if_contains("details"))
          details = *d;
      }
    }
    const std::optional<api_errc> named = api_errc_from_name(code);
    const api_errc errc = named ? *named : api_errc_from_status(status);
    if (message.empty())
      message = code.empty() ? "HTTP " + std::to_string(status) + " answer without an error body"
                             : "HTTP " + std::to_string(status);
    for (const auto& secret : secrets) {
      replace_all(message, secret);
      replace_all(code, secret);
    }
    scrub(details, secrets);
    return api_error(errc, status, std::move(code), std::move(message), std::move(details), request_id, retry_after);
  }

  outcome attempt(const http_request& req, const http_headers& headers, const std::string& path,
                  const std::vector<std::string_view>& secrets) {
    http_exchange x = http->send(req.method, path, headers, req.body, req.content_type);
    outcome out;
    if (!x.answered()) {
      failure_text t = describe(x, url.origin, settings);
      out.error = api_error(t.timeout ? api_errc::timeout : api_errc::connection_failed, 0, {}, std::move(t.message));
      // A certificate that did not verify will not verify on the next attempt either.
      out.transient = x.failure != http_failure::tls_verification && x.failure != http_failure::tls_certificates;
      return out;
    }
    const std::string request_id = x.header("X-Request-Id");
    if (x.status >= 200 && x.status < 300) {
      http_answer a{x.status, request_id, nullptr};
      if (x.status != 204 || !x.body.empty()) {
        boost::system::error_code ec;
        a.body = json::parse(x.body, ec);
        enact::detail::secure_wipe(x.body.data(), x.body.size());
        if (ec) {
          out.error = api_error(api_errc::bad_response, x.status, {}, "answer is not JSON (" + ec.message() + ")",
                                nullptr, request_id);
          return out;
        }
      }
      out.answer = std::move(a);
      return out;
    }
    const auto retry_after = parse_retry_after(x.header("Retry-After"));
    out.error = status_error(x.status, x.body, request_id, retry_after, secrets);
    enact::detail::secure_wipe(x.body.data(), x.body.size());
    out.transient = transient_status(x.status);
    return out;
  }
};

transport::transport(client_options options, credential kind)
    : impl_(std::make_unique<impl>(std::move(options), kind)) {}
transport::~transport() = default;
transport::transport(transport&&) noexcept = default;
transport& transport::operator=(transport&&) noexcept = default;

std::string transport::url(std::string_view target) const {
  return impl_->url.origin + impl_->prefix + std::string(target);
}

void transport::pause(milliseconds d) const {
  if (impl_->options.sleep)
    impl_->options.sleep(d);
  else
    std::this_thread::sleep_for(d);
}

http_answer transport::send(http_request& req) {
  impl& m = *impl_;
  http_headers headers{{"Accept", "application/json"}, {"User-Agent", m.options.user_agent}};
  for (const auto& h : req.extra)
    headers.push_back(h);
  std::vector<std::string_view> secrets;
  if (req.api_key != nullptr && !req.api_key->empty()) {
    headers.emplace_back("X-Api-Key", header_credential(*req.api_key, "api key", "key's base64 text"));
    secrets.push_back(as_chars(req.api_key->view()));
  }
  if (req.bearer != nullptr && !req.bearer->empty()) {
    headers.emplace_back("Authorization",
                         "Bearer " + header_credential(*req.bearer, "token", "token's base64url text"));
    secrets.push_back(as_chars(req.bearer->view()));
  }
  const std::string path = m.prefix + req.target;
  if (req.wallet_auth_for)
    req.wallet_auth = req.wallet_auth_for(method_name(req.method), path, req.body);
  if (!req.wallet_auth.empty())
    headers.emplace_back("X-Wallet-Auth", req.wallet_auth);
  for (const bytes_view v : req.redact)
    secrets.push_back(as_chars(v));

  // Wipes the copies of credentials and key-carrying bodies however the call ends.
  struct wipe_on_exit {
    http_headers& headers;
    std::string& body;
    ~wipe_on_exit() {
      for (auto& [name, value] : headers)
        if (name == "X-Api-Key" || name == "Authorization")
          enact::detail::secure_wipe(value.data(), value.size());
      enact::detail::secure_wipe(body.data(), body.size());
    }
  } wipe{headers, req.body};

  const bool idempotent = req.method == http_method::get;
  for (unsigned attempt = 0;; ++attempt) {
    impl::outcome o = m.attempt(req, headers, path, secrets);
    if (o.answer)
      return std::move(*o.answer);
    if (!idempotent || !o.transient || attempt >= m.options.max_retries)
      throw std::move(*o.error);
    milliseconds delay = m.backoff(attempt);
    if (const auto ra = o.error->retry_after())
      delay = std::min<milliseconds>(*ra, m.options.max_retry_after);
    pause(delay);
  }
}

void wipe_strings(json::value& v) noexcept {
  if (v.is_string()) {
    json::string& s = v.get_string();
    enact::detail::secure_wipe(s.data(), s.size());
  } else if (v.is_array()) {
    for (auto& e : v.get_array())
      wipe_strings(e);
  } else if (v.is_object()) {
    for (auto& kv : v.get_object())
      wipe_strings(kv.value());
  }
}

std::string serialize_wiped(json::value v) {
  std::string text = json::serialize(v);
  wipe_strings(v);
  return text;
}

}  // namespace enact::client::detail
