#include "enact/client/trigger_client.hpp"

#include <httplib.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <random>
#include <thread>

#include "enact/codec/base64.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/address.hpp"
#include "enact/crypto/random.hpp"
#include "enact/crypto/sha2.hpp"
#include "json_read.hpp"
#include "transport.hpp"

namespace enact::client {

namespace {

namespace json = boost::json;
namespace rd = detail::read;
using std::chrono::milliseconds;

constexpr milliseconds kMaxBackoff{8000};
constexpr std::string_view kRedacted = "[redacted]";

// --- wire names ----------------------------------------------------------------------------------

struct type_name {
  trigger_type type;
  std::string_view name;
};
constexpr type_name kTypes[] = {{trigger_type::webhook, "webhook"},
                                {trigger_type::schedule, "schedule"},
                                {trigger_type::chain_event, "chain-event"}};

struct status_name {
  run_status status;
  std::string_view name;
};
constexpr status_name kStatuses[] = {{run_status::queued, "queued"},
                                     {run_status::running, "running"},
                                     {run_status::success, "success"},
                                     {run_status::failed, "failed"}};

// --- the HTTP layer
// -------------------------------------------------------------------------------- The core
// client's transport speaks GET and POST with JSON bodies and X-Api-Key; the trigger service also
// needs PATCH and DELETE, a bearer token, 204 answers, and webhook bodies of any type with the
// sender's headers. The rules are the same: only GETs are retried, every failure is an api_error,
// and credentials are scrubbed from error text.

[[noreturn]] void bad_url(const std::string& why) {
  throw api_error(api_errc::invalid_request, 0, {}, "base_url: " + why);
}

struct parsed_url {
  std::string origin;  // scheme://host[:port]
  std::string prefix;  // path prefix without a trailing '/'
};

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
  const std::string_view rest = url.substr(scheme.size() + 3);
  const size_t end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, end);
  const std::string_view path = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (authority.find('@') != std::string_view::npos)
    bad_url("user-info is not allowed; the token travels in the Authorization header");
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
    for (const auto& secret : secrets)
      replace_all(s, secret);
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
  if (text.empty() || text.size() > 9)
    return std::nullopt;
  unsigned long long value = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || p != text.data() + text.size())
    return std::nullopt;
  return std::chrono::seconds(static_cast<long long>(value));
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

/// A path segment taken from the caller (a trigger or run id): percent-encoded, so that an id can
/// never change which endpoint is called.
std::string segment(std::string_view id, std::string_view what) {
  if (id.empty())
    throw api_error(api_errc::invalid_request, 0, {}, std::string(what) + ": empty");
  return percent_encode(id);
}

enum class method { get, post, patch, del };

struct request {
  method m = method::get;
  std::string target;  // below the base URL's prefix, with its query
  std::string body;    // wiped after sending
  std::string content_type = "application/json";
  httplib::Headers extra;
  bool bearer = false;
  std::vector<bytes_view> redact;  // key values the body carries
};

struct answer {
  int status = 0;
  std::string request_id;
  json::value body;  // null for 204
};

class http_layer {
 public:
  explicit http_layer(client_options o) : options_(std::move(o)), url_(parse_base_url(options_.base_url)) {
    http_ = std::make_unique<httplib::Client>(url_.origin);
    if (!http_->is_valid())
      bad_url("cannot use '" + url_.origin + "'");
    http_->set_connection_timeout(options_.connect_timeout);
    http_->set_read_timeout(options_.read_timeout);
    http_->set_write_timeout(options_.read_timeout);
    http_->set_keep_alive(false);
    http_->set_tcp_nodelay(true);
    http_->set_follow_location(false);
    http_->enable_server_certificate_verification(true);
    if (!options_.ca_file.empty())
      http_->set_ca_cert_path(options_.ca_file);
  }

  [[nodiscard]] std::string public_url(std::string_view target) const {
    return url_.origin + url_.prefix + std::string(target);
  }

  void pause(milliseconds d) const {
    if (options_.sleep)
      options_.sleep(d);
    else
      std::this_thread::sleep_for(d);
  }

  answer send(request& req, const Secret& token) {
    httplib::Headers headers{{"Accept", "application/json"}, {"User-Agent", options_.user_agent}};
    for (const auto& h : req.extra)
      headers.insert(h);
    std::vector<std::string_view> secrets;
    std::string auth;
    if (req.bearer && !token.empty()) {
      for (const uint8_t b : token.view())
        if (b < 0x21 || b > 0x7e)
          throw api_error(api_errc::invalid_request, 0, {},
                          "token: holds a character that cannot travel in a header (expected the "
                          "token's base64url text)");
      auth = "Bearer " + std::string(as_chars(token.view()));
      headers.emplace("Authorization", auth);
      secrets.push_back(as_chars(token.view()));
    }
    for (const bytes_view v : req.redact)
      secrets.push_back(as_chars(v));
    const std::string path = url_.prefix + req.target;

    struct wipe_on_exit {
      httplib::Headers& headers;
      std::string& auth;
      std::string& body;
      ~wipe_on_exit() {
        for (auto& [name, value] : headers)
          if (name == "Authorization")
            enact::detail::secure_wipe(value.data(), value.size());
        enact::detail::secure_wipe(auth.data(), auth.size());
        enact::detail::secure_wipe(body.data(), body.size());
      }
    } wipe{headers, auth, req.body};

    const bool idempotent = req.m == method::get;
    for (unsigned attempt = 0;; ++attempt) {
      bool transient = false;
      std::optional<api_error> err;
      if (std::optional<answer> a = once(req, headers, path, secrets, transient, err))
        return std::move(*a);
      if (!idempotent || !transient || attempt >= options_.max_retries)
        throw std::move(*err);
      milliseconds d = options_.retry_backoff;
      for (unsigned i = 0; i < attempt && d < kMaxBackoff; ++i)
        d *= 2;
      d = std::min(d, kMaxBackoff);
      const auto half = d.count() / 2;
      std::uniform_int_distribution<long long> dist(0, half);
      d = milliseconds(d.count() - half + dist(jitter_));
      if (const auto ra = err->retry_after())
        d = std::min<milliseconds>(*ra, options_.max_retry_after);
      pause(d);
    }
  }

 private:
  std::optional<answer> once(const request& req, const httplib::Headers& headers, const std::string& path,
                             const std::vector<std::string_view>& secrets, bool& transient,
                             std::optional<api_error>& err) {
    const auto start = std::chrono::steady_clock::now();
    httplib::Result r = [&] {
      switch (req.m) {
        case method::get:
          return http_->Get(path, headers);
        case method::post:
          return http_->Post(path, headers, req.body, req.content_type);
        case method::patch:
          return http_->Patch(path, headers, req.body, req.content_type);
        case method::del:
          return http_->Delete(path, headers);
      }
      return http_->Get(path, headers);
    }();
    const auto elapsed = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    if (!r) {
      const httplib::Error e = r.error();
      err = transport_error(e, elapsed);
      transient = e != httplib::Error::SSLServerVerification && e != httplib::Error::SSLLoadingCerts;
      return std::nullopt;
    }
    httplib::Response& res = r.value();
    const std::string request_id = res.get_header_value("X-Request-Id");
    if (res.status >= 200 && res.status < 300) {
      answer a{res.status, request_id, nullptr};
      if (res.status != 204 || !res.body.empty()) {
        boost::system::error_code ec;
        a.body = json::parse(res.body, ec);
        enact::detail::secure_wipe(res.body.data(), res.body.size());
        if (ec) {
          err = api_error(api_errc::bad_response, res.status, {}, "answer is not JSON (" + ec.message() + ")", nullptr,
                          request_id);
          return std::nullopt;
        }
      }
      return a;
    }
    err =
        status_error(res.status, res.body, request_id, parse_retry_after(res.get_header_value("Retry-After")), secrets);
    enact::detail::secure_wipe(res.body.data(), res.body.size());
    transient = res.status == 429 || res.status == 502 || res.status == 503 || res.status == 504;
    return std::nullopt;
  }

  api_error transport_error(httplib::Error e, milliseconds elapsed) const {
    const std::string& origin = url_.origin;
    switch (e) {
      case httplib::Error::Connection:
        return api_error(api_errc::connection_failed, 0, {}, "cannot connect to " + origin);
      case httplib::Error::ConnectionTimeout:
        return api_error(
            api_errc::timeout, 0, {},
            "connecting to " + origin + " timed out after " + std::to_string(options_.connect_timeout.count()) + " ms");
      case httplib::Error::Read:
        if (elapsed * 10 >= options_.read_timeout * 9)
          return api_error(
              api_errc::timeout, 0, {},
              "no answer from " + origin + " within " + std::to_string(options_.read_timeout.count()) + " ms");
        return api_error(api_errc::connection_failed, 0, {}, "connection to " + origin + " closed before an answer");
      case httplib::Error::SSLServerVerification:
        return api_error(api_errc::connection_failed, 0, {}, "the TLS certificate of " + origin + " did not verify");
      default:
        return api_error(api_errc::connection_failed, 0, {},
                         "request to " + origin + " failed (" + httplib::to_string(e) + ")");
    }
  }

  static api_error status_error(int status, const std::string& body, const std::string& request_id,
                                std::optional<std::chrono::seconds> retry_after,
                                const std::vector<std::string_view>& secrets) {
    std::string code;
    std::string message;
    json::value details = nullptr;
    boost::system::error_code ec;
    const json::value doc = json::parse(body, ec);
    if (!ec && doc.is_object()) {
      if (const json::value* e = doc.get_object().if_contains("error"); e && e->is_object()) {
        const json::object& o = e->get_object();
        if (const auto* c = o.if_contains("code"); c && c->is_string())
          code = c->get_string();
        if (const auto* m = o.if_contains("message"); m && m->is_string())
          message = m->get_string();
        if (const auto* d = o.if_contains("details"))
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

  client_options options_;
  parsed_url url_;
  std::unique_ptr<httplib::Client> http_;
  std::minstd_rand jitter_{std::random_device{}()};
};

// --- decoding
// --------------------------------------------------------------------------------------

template <class F>
auto decode(const answer& a, F&& read) -> decltype(read(a.body)) {
  try {
    return read(a.body);
  } catch (const api_error&) {
    throw;
  } catch (const Error& e) {
    throw api_error(api_errc::bad_response, a.status, {}, std::string("answer field ") + e.what(), nullptr,
                    a.request_id);
  }
}

std::string opt_text(const json::object& o, std::string_view key) { return rd::get_text(o, key); }

std::vector<hash256> topic_filter_of(const json::value& v, const std::string& what) {
  if (v.is_null())
    return {};
  if (v.is_string())
    return {rd::to_hash(v, what)};
  if (!v.is_array())
    rd::bad(what + ": expected a topic, an array of topics or null");
  std::vector<hash256> out;
  for (size_t i = 0; i < v.get_array().size(); ++i)
    out.push_back(rd::to_hash(v.get_array()[i], what + "[" + std::to_string(i) + "]"));
  return out;
}

trigger_config config_of(trigger_type t, const json::value& v) {
  const json::object& c = rd::expect_object(v, "config");
  switch (t) {
    case trigger_type::webhook:
      return webhook_config{};
    case trigger_type::schedule: {
      schedule_config s;
      s.cron = rd::get_string(c, "cron");
      if (const std::string tz = rd::get_text(c, "timezone"); !tz.empty())
        s.timezone = tz;
      return s;
    }
    case trigger_type::chain_event: {
      chain_event_config e;
      e.chain = rd::get_string(c, "chain");
      e.contract = rd::get_address(c, "contract");
      e.event = rd::get_string(c, "event");
      if (const json::value* sb = c.if_contains("start_block"); sb && !sb->is_null()) {
        if (sb->is_string() && hex::detail::has_prefix(sb->get_string())) {
          const std::string_view digits = sb->get_string().subview(2);
          uint64_t n = 0;
          auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n, 16);
          if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
            rd::bad("config.start_block: expected a block number");
          e.start_block = n;
        } else {
          e.start_block = rd::to_u64(*sb, "config.start_block");
        }
      }
      if (const json::value* tf = c.if_contains("topic_filters"); tf && !tf->is_null()) {
        if (!tf->is_array())
          rd::bad("config.topic_filters: expected an array");
        for (size_t i = 0; i < tf->get_array().size(); ++i)
          e.topic_filters.push_back(
              topic_filter_of(tf->get_array()[i], "config.topic_filters[" + std::to_string(i) + "]"));
      }
      if (const json::value* n = c.if_contains("confirmations"); n && !n->is_null())
        e.confirmations = static_cast<uint32_t>(rd::to_u64(*n, "config.confirmations"));
      return e;
    }
  }
  return webhook_config{};
}

trigger trigger_of(const json::value& v) {
  const json::object& o = rd::expect_object(v, "trigger");
  trigger t;
  t.id = rd::get_string(o, "id");
  const std::string type = rd::get_string(o, "type");
  const auto tt = trigger_type_from_name(type);
  if (!tt)
    rd::bad("type: unknown trigger type '" + type + "'");
  t.type = *tt;
  t.name = rd::get_text(o, "name");
  t.enabled = rd::get_bool(o, "enabled");
  t.action_ipfs_cid = rd::get_string(o, "action_ipfs_cid");
  if (const json::value* p = o.if_contains("pkp_id"); p && !p->is_null())
    t.pkp_id = rd::to_address(*p, "pkp_id");
  t.usage_api_key_hash = rd::get_hash(o, "usage_api_key_hash");
  // Absent from a service older than the run limits: the defaults of API.md §4.
  const auto limit = [&](std::string_view key, uint32_t fallback) -> uint32_t {
    if (!o.contains(key))
      return fallback;
    const uint64_t n = rd::get_u64(o, key);
    if (n == 0 || n > std::numeric_limits<uint32_t>::max())
      rd::bad(std::string(key) + ": expected a positive 32-bit integer");
    return static_cast<uint32_t>(n);
  };
  t.max_runs_per_minute = limit("max_runs_per_minute", 60);
  t.max_queued_runs = limit("max_queued_runs", 100);
  t.config = config_of(t.type, rd::require(o, "config"));
  t.created_at = rd::get_string(o, "created_at");
  t.updated_at = rd::get_string(o, "updated_at");
  t.webhook_url = opt_text(o, "webhook_url");
  return t;
}

run run_of(const json::value& v) {
  const json::object& o = rd::expect_object(v, "run");
  run r;
  r.id = rd::get_string(o, "id");
  r.trigger_id = rd::get_string(o, "trigger_id");
  const std::string status = rd::get_string(o, "status");
  const auto* s =
      std::find_if(std::begin(kStatuses), std::end(kStatuses), [&](const status_name& n) { return n.name == status; });
  if (s == std::end(kStatuses))
    rd::bad("status: unknown run status '" + status + "'");
  r.status = s->status;
  r.attempts = rd::get_u64(o, "attempts", false);
  if (const json::value* p = o.if_contains("params"))
    r.params = *p;
  if (const json::value* p = o.if_contains("response"))
    r.response = *p;
  if (const json::value* e = o.if_contains("error"); e && !e->is_null()) {
    const json::object& eo = rd::expect_object(*e, "error");
    r.error = run_error{rd::get_string(eo, "code"), rd::get_text(eo, "message"), rd::get_text(eo, "stack")};
  }
  r.queued_at = rd::get_string(o, "queued_at");
  r.started_at = opt_text(o, "started_at");
  r.finished_at = opt_text(o, "finished_at");
  return r;
}

template <class T, class F>
listing<T> listing_of(const json::value& v, F&& item) {
  const json::object& o = rd::expect_object(v, "answer");
  const json::value& items = rd::require(o, "items");
  if (!items.is_array())
    rd::bad("items: expected an array");
  listing<T> out;
  for (const json::value& i : items.get_array())
    out.items.push_back(item(i));
  out.total = rd::get_u64(o, "total");
  return out;
}

// --- encoding
// --------------------------------------------------------------------------------------

json::value config_json(const trigger_config& c) {
  return std::visit(
      [](const auto& cfg) -> json::value {
        using T = std::decay_t<decltype(cfg)>;
        if constexpr (std::is_same_v<T, webhook_config>) {
          return json::object{};
        } else if constexpr (std::is_same_v<T, schedule_config>) {
          return json::object{{"cron", cfg.cron}, {"timezone", cfg.timezone}};
        } else {
          json::object o{{"chain", cfg.chain}, {"contract", to_checksum_address(cfg.contract)}, {"event", cfg.event}};
          if (cfg.start_block)
            o["start_block"] = *cfg.start_block;
          if (!cfg.topic_filters.empty()) {
            json::array filters;
            for (const auto& f : cfg.topic_filters) {
              if (f.empty()) {
                filters.emplace_back(nullptr);
              } else if (f.size() == 1) {
                filters.emplace_back(hex::encode_prefixed(f[0]));
              } else {
                json::array any;
                for (const hash256& h : f)
                  any.emplace_back(hex::encode_prefixed(h));
                filters.emplace_back(std::move(any));
              }
            }
            o["topic_filters"] = std::move(filters);
          }
          if (cfg.confirmations)
            o["confirmations"] = *cfg.confirmations;
          return o;
        }
      },
      c);
}

/// Serializes `o` with the usage key added, then wipes the key from the JSON tree.
std::string body_with_key(json::object o, const Secret* usage_api_key) {
  if (usage_api_key != nullptr)
    o["usage_api_key"] = as_chars(usage_api_key->view());
  std::string text = json::serialize(o);
  json::value v = std::move(o);
  detail::wipe_strings(v);
  return text;
}

}  // namespace

std::string_view name(trigger_type t) noexcept {
  for (const auto& n : kTypes)
    if (n.type == t)
      return n.name;
  return "webhook";
}

std::optional<trigger_type> trigger_type_from_name(std::string_view name) noexcept {
  for (const auto& n : kTypes)
    if (n.name == name)
      return n.type;
  return std::nullopt;
}

std::string_view name(run_status s) noexcept {
  for (const auto& n : kStatuses)
    if (n.status == s)
      return n.name;
  return "queued";
}

trigger_type type_of(const trigger_config& c) noexcept {
  switch (c.index()) {
    case 1:
      return trigger_type::schedule;
    case 2:
      return trigger_type::chain_event;
    default:
      return trigger_type::webhook;
  }
}

struct trigger_client::impl {
  http_layer http;
  Secret token;

  impl(client_options o, Secret t) : http(std::move(o)), token(std::move(t)) {}

  answer call(method m, std::string target, std::string body = {}, std::vector<bytes_view> redact = {}) {
    request r;
    r.m = m;
    r.target = std::move(target);
    r.body = std::move(body);
    r.bearer = true;
    r.redact = std::move(redact);
    return http.send(r, token);
  }

  trigger patch(std::string_view id, std::string body, std::vector<bytes_view> redact = {}) {
    return decode(call(method::patch, "/api/triggers/" + segment(id, "trigger id"), std::move(body), std::move(redact)),
                  trigger_of);
  }
};

trigger_client::trigger_client(client_options options, Secret token)
    : impl_(std::make_unique<impl>(std::move(options), std::move(token))) {}
trigger_client::~trigger_client() = default;
trigger_client::trigger_client(trigger_client&&) noexcept = default;
trigger_client& trigger_client::operator=(trigger_client&&) noexcept = default;

void trigger_client::set_token(Secret token) { impl_->token = std::move(token); }
bool trigger_client::has_token() const noexcept { return !impl_->token.empty(); }

// --- token handshake -----------------------------------------------------------------------------

pending_login trigger_client::start_login(std::string_view client_name) {
  // API.md §4: the client draws the token; only its hash (the challenge) appears in the URL the
  // user opens, so the token itself never passes through the browser.
  Secret raw = random_secret(32);
  pending_login p;
  p.challenge = base64::encode_url(sha256(raw.view()));
  std::string text = base64::encode_url(raw.view());
  p.token = Secret(as_bytes(text));
  enact::detail::secure_wipe(text.data(), text.size());
  p.authorize_url =
      impl_->http.public_url("/auth/authorize?challenge=" + p.challenge + "&client=" + percent_encode(client_name));
  return p;
}

Secret trigger_client::finish_login(const pending_login& login, login_options o) {
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  for (;;) {
    request r;
    r.m = method::post;
    r.target = "/auth/token";
    {
      json::object b{{"challenge", login.challenge}, {"token", as_chars(login.token.view())}};
      r.body = json::serialize(b);
      json::value v = std::move(b);
      detail::wipe_strings(v);
    }
    r.redact = {login.token.view()};
    std::chrono::milliseconds wait = o.interval;
    try {
      (void)impl_->http.send(r, impl_->token);
      impl_->token = login.token.clone();
      return login.token.clone();
    } catch (const api_error& e) {
      if (e.code_name() == "rate_limited") {
        // The service limits polls per address: wait as long as it says, then poll again.
        if (const auto ra = e.retry_after())
          wait = std::max(wait, std::chrono::duration_cast<std::chrono::milliseconds>(*ra));
      } else if (e.code_name() != "authorization_pending") {
        throw;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw api_error(api_errc::timeout, 0, {},
                      "the token was not approved within " + std::to_string(o.timeout.count()) + " ms");
    impl_->http.pause(wait);
  }
}

// --- management API ------------------------------------------------------------------------------

token_info trigger_client::me() {
  return decode(impl_->call(method::get, "/api/me"), [](const json::value& v) {
    const json::object& o = rd::expect_object(v, "answer");
    return token_info{rd::get_string(o, "user_id"), rd::get_string(o, "token_expires_at")};
  });
}

trigger trigger_client::create(const new_trigger& t) {
  json::object o{{"type", name(type_of(t.config))},
                 {"name", t.name},
                 {"enabled", t.enabled},
                 {"action_ipfs_cid", t.action_ipfs_cid},
                 {"config", config_json(t.config)}};
  if (t.pkp_id)
    o["pkp_id"] = to_checksum_address(*t.pkp_id);
  if (t.max_runs_per_minute)
    o["max_runs_per_minute"] = *t.max_runs_per_minute;
  if (t.max_queued_runs)
    o["max_queued_runs"] = *t.max_queued_runs;
  return decode(impl_->call(method::post, "/api/triggers", body_with_key(std::move(o), &t.usage_api_key),
                            {t.usage_api_key.view()}),
                trigger_of);
}

listing<trigger> trigger_client::list(uint32_t limit, uint64_t offset) {
  return decode(
      impl_->call(method::get, "/api/triggers?limit=" + std::to_string(limit) + "&offset=" + std::to_string(offset)),
      [](const json::value& v) { return listing_of<trigger>(v, trigger_of); });
}

trigger trigger_client::get(std::string_view trigger_id) {
  return decode(impl_->call(method::get, "/api/triggers/" + segment(trigger_id, "trigger id")), trigger_of);
}

trigger trigger_client::update(std::string_view trigger_id, const trigger_patch& p) {
  json::object o;
  if (p.name)
    o["name"] = *p.name;
  if (p.enabled)
    o["enabled"] = *p.enabled;
  if (p.config)
    o["config"] = config_json(*p.config);
  if (p.action_ipfs_cid)
    o["action_ipfs_cid"] = *p.action_ipfs_cid;
  if (p.pkp_id) {
    if (*p.pkp_id)
      o["pkp_id"] = to_checksum_address(**p.pkp_id);
    else
      o["pkp_id"] = nullptr;
  }
  if (p.max_runs_per_minute)
    o["max_runs_per_minute"] = *p.max_runs_per_minute;
  if (p.max_queued_runs)
    o["max_queued_runs"] = *p.max_queued_runs;
  const Secret* key = p.usage_api_key ? &*p.usage_api_key : nullptr;
  std::vector<bytes_view> redact;
  if (key != nullptr)
    redact.push_back(key->view());
  return impl_->patch(trigger_id, body_with_key(std::move(o), key), std::move(redact));
}

trigger trigger_client::enable(std::string_view trigger_id) { return impl_->patch(trigger_id, R"({"enabled":true})"); }

trigger trigger_client::disable(std::string_view trigger_id) {
  return impl_->patch(trigger_id, R"({"enabled":false})");
}

void trigger_client::remove(std::string_view trigger_id) {
  (void)impl_->call(method::del, "/api/triggers/" + segment(trigger_id, "trigger id"));
}

listing<run> trigger_client::runs(std::string_view trigger_id, uint32_t limit, uint64_t offset) {
  return decode(impl_->call(method::get, "/api/triggers/" + segment(trigger_id, "trigger id") + "/runs?limit=" +
                                             std::to_string(limit) + "&offset=" + std::to_string(offset)),
                [](const json::value& v) { return listing_of<run>(v, run_of); });
}

run trigger_client::get_run(std::string_view run_id) {
  return decode(impl_->call(method::get, "/api/runs/" + segment(run_id, "run id")), run_of);
}

run trigger_client::wait_for_run(std::string_view run_id, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds interval) {
  // The service has no push channel for runs: polling is the contract (API.md §4).
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    run r = get_run(run_id);
    if (r.finished())
      return r;
    if (std::chrono::steady_clock::now() >= deadline)
      throw api_error(api_errc::timeout, 0, {},
                      "run " + std::string(run_id) + " still " + std::string(name(r.status)) + " after " +
                          std::to_string(timeout.count()) + " ms");
    impl_->http.pause(interval);
  }
}

// --- webhook intake
// --------------------------------------------------------------------------------

std::string trigger_client::fire_webhook(std::string_view trigger_id, const webhook_request& w) {
  request r;
  r.m = method::post;
  r.target = "/webhook/" + segment(trigger_id, "trigger id");
  r.body = w.body;
  r.content_type = w.content_type;
  for (const auto& [k, v] : w.headers) {
    for (const char c : k + v)
      if (c == '\r' || c == '\n' || c == '\0')
        throw api_error(api_errc::invalid_request, 0, {}, "webhook header " + k + ": holds a line break or NUL");
    r.extra.emplace(k, v);
  }
  r.bearer = false;
  return decode(impl_->http.send(r, impl_->token),
                [](const json::value& v) { return rd::get_string(rd::expect_object(v, "answer"), "run_id"); });
}

}  // namespace enact::client
