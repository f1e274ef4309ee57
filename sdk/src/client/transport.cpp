#include "transport.hpp"

#include <httplib.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
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

[[noreturn]] void bad_url(const std::string& why) {
  throw api_error(api_errc::invalid_request, 0, {}, "base_url: " + why);
}

struct parsed_url {
  std::string origin;  // scheme://host[:port], what httplib connects to
  std::string prefix;  // path prefix without a trailing '/'
};

// http(s)://host[:port][/prefix]; anything else is refused so that a typo cannot send a key to an
// unintended place (user-info in the URL would also bypass the header-only credential rule).
parsed_url parse_base_url(std::string_view url) {
  std::string lower(url.substr(0, std::min<size_t>(url.size(), 8)));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view scheme;
  if (lower.rfind("http://", 0) == 0)
    scheme = "http";
  else if (lower.rfind("https://", 0) == 0)
    scheme = "https";
  else
    bad_url("expected http://host[:port] or https://host[:port]");
  std::string_view rest = url.substr(scheme.size() + 3);
  const size_t end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, end);
  const std::string_view path = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (authority.find('@') != std::string_view::npos)
    bad_url("user-info is not allowed; the API key travels in the X-Api-Key header");
  if (path.find_first_of("?#") != std::string_view::npos)
    bad_url("a query or fragment is not allowed");
  std::string_view host = authority;
  std::optional<std::string_view> port;
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos)
      bad_url("unterminated IPv6 address");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':')
        bad_url("expected ':' after the IPv6 address");
      port = host.substr(close + 2);
    }
    host = host.substr(0, close + 1);
    if (host.size() <= 2)
      bad_url("empty host");
  } else if (const size_t colon = host.find(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty())
    bad_url("empty host");
  for (const char c : host)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\\')
      bad_url("invalid character in host");
  if (port) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port->data(), port->data() + port->size(), value);
    if (port->empty() || ec != std::errc() || p != port->data() + port->size() || value == 0 || value > 65535)
      bad_url("port must be 1 to 65535");
  }
  parsed_url out;
  out.origin = std::string(scheme) + "://" + std::string(authority);
  out.prefix = std::string(path);
  while (!out.prefix.empty() && out.prefix.back() == '/')
    out.prefix.pop_back();
  return out;
}

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

}  // namespace

struct transport::impl {
  client_options options;
  parsed_url url;
  std::unique_ptr<httplib::Client> http;
  std::minstd_rand jitter{std::random_device{}()};

  explicit impl(client_options o) : options(std::move(o)), url(parse_base_url(options.base_url)) {
    http = std::make_unique<httplib::Client>(url.origin);
    if (!http->is_valid())
      bad_url("cannot use '" + url.origin + "'");
    http->set_connection_timeout(options.connect_timeout);
    http->set_read_timeout(options.read_timeout);
    http->set_write_timeout(options.read_timeout);
    http->set_keep_alive(false);
    http->set_tcp_nodelay(true);  // a request is written as header and body; no Nagle delay between
    http->set_follow_location(false);
    http->enable_server_certificate_verification(true);
    if (!options.ca_file.empty())
      http->set_ca_cert_path(options.ca_file);
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

  void pause(milliseconds d) {
    if (options.sleep)
      options.sleep(d);
    else
      std::this_thread::sleep_for(d);
  }

  // One attempt: the answer, or the error it amounts to (with whether it is worth repeating).
  struct outcome {
    std::optional<http_answer> answer;
    std::optional<api_error> error;
    bool transient = false;
  };

  api_error transport_error(httplib::Error e, milliseconds elapsed) const {
    const std::string& origin = url.origin;
    switch (e) {
      case httplib::Error::Connection:
        return api_error(api_errc::connection_failed, 0, {}, "cannot connect to " + origin);
      case httplib::Error::ConnectionTimeout:
        return api_error(
            api_errc::timeout, 0, {},
            "connecting to " + origin + " timed out after " + std::to_string(options.connect_timeout.count()) + " ms");
      case httplib::Error::Read:
        // httplib reports an expired read timeout and a connection closed mid-answer alike.
        if (elapsed * 10 >= options.read_timeout * 9)
          return api_error(
              api_errc::timeout, 0, {},
              "no answer from " + origin + " within " + std::to_string(options.read_timeout.count()) + " ms");
        return api_error(api_errc::connection_failed, 0, {}, "connection to " + origin + " closed before an answer");
      case httplib::Error::Write:
        return api_error(api_errc::connection_failed, 0, {}, "sending the request to " + origin + " failed");
      case httplib::Error::SSLConnection:
        return api_error(api_errc::connection_failed, 0, {}, "TLS handshake with " + origin + " failed");
      case httplib::Error::SSLLoadingCerts:
        return api_error(api_errc::connection_failed, 0, {},
                         "cannot load CA certificates from " +
                             (options.ca_file.empty() ? std::string("the system store") : options.ca_file));
      case httplib::Error::SSLServerVerification:
        return api_error(api_errc::connection_failed, 0, {}, "the TLS certificate of " + origin + " did not verify");
      default:
        return api_error(api_errc::connection_failed, 0, {},
                         "request to " + origin + " failed (" + httplib::to_string(e) + ")");
    }
  }

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
    for (const auto& secret : secrets)
      replace_all(message, secret);
    for (const auto& secret : secrets)
      replace_all(code, secret);
    scrub(details, secrets);
    return api_error(errc, status, std::move(code), std::move(message), std::move(details), request_id, retry_after);
  }

  outcome attempt(const http_request& req, const httplib::Headers& headers, const std::string& path,
                  const std::vector<std::string_view>& secrets) {
    const auto start = std::chrono::steady_clock::now();
    httplib::Result r = req.method == http_method::get ? http->Get(path, headers)
                                                       : http->Post(path, headers, req.body, "application/json");
    const auto elapsed = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    outcome out;
    if (!r) {
      const httplib::Error e = r.error();
      out.error = transport_error(e, elapsed);
      // A certificate that did not verify will not verify on the next attempt either.
      out.transient = e != httplib::Error::SSLServerVerification && e != httplib::Error::SSLLoadingCerts;
      return out;
    }
    httplib::Response& res = r.value();
    const std::string request_id = res.get_header_value("X-Request-Id");
    if (res.status >= 200 && res.status < 300) {
      boost::system::error_code ec;
      json::value body = json::parse(res.body, ec);
      enact::detail::secure_wipe(res.body.data(), res.body.size());
      if (ec) {
        out.error = api_error(api_errc::bad_response, res.status, {}, "answer is not JSON (" + ec.message() + ")",
                              nullptr, request_id);
        return out;
      }
      out.answer = http_answer{res.status, request_id, std::move(body)};
      return out;
    }
    const auto retry_after = parse_retry_after(res.get_header_value("Retry-After"));
    out.error = status_error(res.status, res.body, request_id, retry_after, secrets);
    enact::detail::secure_wipe(res.body.data(), res.body.size());
    out.transient = transient_status(res.status);
    return out;
  }
};

transport::transport(client_options options) : impl_(std::make_unique<impl>(std::move(options))) {}
transport::~transport() = default;
transport::transport(transport&&) noexcept = default;
transport& transport::operator=(transport&&) noexcept = default;

http_answer transport::send(http_request& req) {
  impl& m = *impl_;
  httplib::Headers headers{{"Accept", "application/json"}, {"User-Agent", m.options.user_agent}};
  std::vector<std::string_view> secrets;
  if (req.api_key != nullptr && !req.api_key->empty()) {
    // A key is base64 text; anything else (a stray newline from a key file) could split the
    // header, so it is refused before anything is sent.
    for (const uint8_t b : req.api_key->view())
      if (b < 0x21 || b > 0x7e)
        throw api_error(api_errc::invalid_request, 0, {},
                        "api key: holds a character that cannot travel in a header (expected the "
                        "key's base64 text)");
    headers.emplace("X-Api-Key", std::string(as_chars(req.api_key->view())));
    secrets.push_back(as_chars(req.api_key->view()));
  }
  if (!req.wallet_auth.empty())
    headers.emplace("X-Wallet-Auth", req.wallet_auth);
  for (const bytes_view v : req.redact)
    secrets.push_back(as_chars(v));
  const std::string path = m.url.prefix + req.target;

  // Wipes the copies of credentials and key-carrying bodies however the call ends.
  struct wipe_on_exit {
    httplib::Headers& headers;
    std::string& body;
    ~wipe_on_exit() {
      for (auto& [name, value] : headers)
        if (name == "X-Api-Key")
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
    m.pause(delay);
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

}  // namespace enact::client::detail
