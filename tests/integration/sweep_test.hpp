// SPDX-License-Identifier: Apache-2.0
// The bad-input sweep's model (sweep_test.cpp has the rules): the expected status of each error
// code, the cases and operations read from the OpenAPI document, the defects built from its
// schemas, the verdict on an answer, and the raw-socket exchange.
#pragma once

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>

#include "enact/eip712/envelope.hpp"
#include "steps.hpp"

namespace enact::itest {

// The document describes 36 operations today; fewer than this means routes went missing from it.
constexpr size_t kMinOperations = 30;
constexpr size_t kHugeString = (size_t{1} << 20) + 17;  // over the 1 MiB body limit on its own
constexpr size_t kOversizedBody = size_t{2} << 20;

// docs/protocol.md §0: the status of each error code.
const std::map<std::string, int, std::less<>> kStatusOf = {
    {"invalid_request", 400},
    {"typed_data_invalid", 400},
    {"chain_id_mismatch", 400},
    {"unauthenticated", 401},
    {"signature_invalid", 401},
    {"signature_expired", 401},
    {"insufficient_credits", 402},
    {"forbidden", 403},
    {"not_found", 404},
    {"conflict", 409},
    {"payload_too_large", 413},
    {"action_failed", 422},
    {"rate_limited", 429},
    {"unavailable", 503},
    {"internal", 500},
};

// docs/protocol.md §2: operations whose auth column is `key` with no scope named (or billing), which a
// usage key without any permission may therefore call.
// getActionCode answers such a key 404, as every CID it may not read (docs/protocol.md §2).
const std::set<std::string, std::less<>> kOpenToAnyKey = {
    "getAccount",      "listGroups",         "getGroup",      "listWallets",         "listWalletsInGroup",
    "listActions",     "uploadAction",       "getBalance",    "createPaymentIntent", "confirmPayment",
    "getBillingUsage", "getBillingPayments", "getActionCode",
};

using codes = std::set<std::string, std::less<>>;
const codes kMalformed = {"invalid_request"};
const codes kEnvelopeRefusals = {"invalid_request", "typed_data_invalid", "chain_id_mismatch", "signature_invalid",
                                 "signature_expired"};
const codes kTooLarge = {"payload_too_large"};
const codes kUnauthenticated = {"unauthenticated"};
const codes kNoRoute = {"not_found"};
const codes kWrongMethod = {"not_found", "invalid_request"};

/// What a case may answer: one of `codes` (with its §0 status), or 200 when `ok_allowed`.
struct expectation {
  codes allowed;
  bool ok_allowed = false;
  /// The status the code comes with when it is not the code's own: the refusals made before any
  /// route (docs/protocol.md §6 "Connections": 415, 431) answer HTTP's status with invalid_request.
  int status = 0;
};

/// One operation of the document.
struct operation {
  std::string id;      // operationId
  std::string method;  // GET or POST
  std::string path;    // under /core/v1
  bool secured = false;
  bool wallet_auth = false;         // X-Wallet-Auth is one of its security schemes
  json::object body_schema;         // resolved request body schema (POST)
  std::vector<json::object> query;  // parameter objects of the document
};

/// One request of the sweep.
struct sweep_case {
  std::string what;
  std::string method;
  std::string target;  // path with query, under the host root
  std::string body;
  std::string content_type = "application/json";
  httplib::Headers headers;
  expectation want;
};

inline std::string kind_of(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object:
      return "object";
    case json::kind::array:
      return "array";
    case json::kind::string:
      return "string";
    case json::kind::bool_:
      return "boolean";
    case json::kind::null:
      return "null";
    case json::kind::double_:
      return "number";
    default:
      return "integer";
  }
}

/// A schema with its $ref (into the document's components) resolved.
inline json::object resolve(const json::object& doc, const json::object& s) {
  const auto* ref = s.if_contains("$ref");
  if (ref == nullptr)
    return s;
  const std::string_view target = ref->as_string();
  const std::string_view name = target.substr(target.rfind('/') + 1);
  return resolve(doc, doc.at("components").at("schemas").at(name).as_object());
}

/// The JSON kinds a schema accepts; when it says nothing (an untyped property), the kind of the
/// base value. Empty: nothing known.
inline std::set<std::string> accepted_kinds(const json::object& doc, const json::object& schema,
                                            const json::value* base) {
  const json::object s = resolve(doc, schema);
  std::set<std::string> out;
  if (const auto* t = s.if_contains("type"))
    out.insert(std::string(t->as_string()));
  if (const auto* any = s.if_contains("anyOf"))
    for (const auto& option : any->as_array()) {
      const auto sub = accepted_kinds(doc, option.as_object(), nullptr);
      out.insert(sub.begin(), sub.end());
    }
  if (const auto* e = s.if_contains("enum"))
    for (const auto& v : e->as_array())
      out.insert(kind_of(v));
  if (out.empty() && base != nullptr)
    out.insert(kind_of(*base));
  if (out.contains("number"))
    out.insert("integer");
  return out;
}

/// The integer form of a schema (itself, or its integer anyOf option), when it accepts integers.
inline std::optional<json::object> integer_form(const json::object& doc, const json::object& schema) {
  const json::object s = resolve(doc, schema);
  if (const auto* t = s.if_contains("type"); t != nullptr && t->as_string() == "integer")
    return s;
  if (const auto* any = s.if_contains("anyOf"))
    for (const auto& option : any->as_array())
      if (auto i = integer_form(doc, option.as_object()))
        return i;
  return std::nullopt;
}

/// A value of each JSON kind, as JSON text.
const std::pair<const char*, const char*> kSampleOfKind[] = {
    {"string", R"("sweep")"},     {"integer", "7"}, {"number", "1.5"},
    {"boolean", "true"},          {"null", "null"}, {"array", "[1]"},
    {"object", R"({"sweep":1})"},
};

/// Values out of range for an integer schema, as JSON text.
inline std::vector<std::pair<std::string, std::string>> bad_integers(const json::object& s) {
  int64_t minimum = std::numeric_limits<int64_t>::min();
  if (const auto* m = s.if_contains("minimum"))
    minimum = m->to_number<int64_t>();
  std::vector<std::pair<std::string, std::string>> out = {
      {"2^64", "18446744073709551616"},      {"1e400", "1e400"}, {"-1e400", "-1e400"}, {"a float", "1.5"},
      {"a float in exponent form", "2.5e1"},
  };
  if (minimum >= 0)
    out.emplace_back("negative", "-1");
  if (minimum >= 0)
    out.emplace_back("-2^63 - 1", "-9223372036854775809");
  if (minimum >= 1)
    out.emplace_back("-0", "-0");
  if (minimum >= 1)
    out.emplace_back("0", "0");
  if (const auto* m = s.if_contains("maximum"))
    out.emplace_back("maximum + 1", std::to_string(m->to_number<uint64_t>() + 1));
  return out;
}

// A string value replaced, after serialization, by raw JSON text (numbers JSON cannot hold in a
// double, invalid UTF-8).
constexpr std::string_view kRawMark = "@@sweep-raw-value@@";

inline std::string replace_mark(std::string text, std::string_view raw) {
  const std::string quoted = "\"" + std::string(kRawMark) + "\"";
  const auto at = text.find(quoted);
  REQUIRE(at != std::string::npos);
  text.replace(at, quoted.size(), raw);
  return text;
}

using json_path = std::vector<std::string>;

inline json::value& at_path(json::value& v, const json_path& p, size_t depth) {
  json::value* cur = &v;
  for (size_t i = 0; i < depth; ++i)
    cur = &cur->as_object()[p[i]];
  return *cur;
}

/// The body `base` with the value at `p` set to raw JSON text.
inline std::string with_raw(const json::value& base, const json_path& p, std::string_view raw) {
  json::value b = base;
  at_path(b, p, p.size() - 1).as_object()[p.back()] = kRawMark;
  return replace_mark(json::serialize(b), raw);
}

/// The body `base` without the value at `p`.
inline std::string without(const json::value& base, const json_path& p) {
  json::value b = base;
  at_path(b, p, p.size() - 1).as_object().erase(p.back());
  return json::serialize(b);
}

inline std::string dotted(const json_path& p) {
  std::string out = "body";
  for (const auto& k : p)
    out += "." + k;
  return out;
}

/// The cases of one property (and, for objects with declared properties, of its members).
inline void property_cases(const json::object& doc, const json::value& base, const json_path& p,
                           const json::object& schema, bool nested,
                           std::vector<std::pair<std::string, std::string>>& bodies_shape,
                           std::vector<std::pair<std::string, std::string>>& bodies_nested,
                           std::vector<std::pair<std::string, std::string>>& bodies_large) {
  auto& out = nested ? bodies_nested : bodies_shape;
  const json::object s = resolve(doc, schema);
  const json::value* current = nullptr;
  {
    const json::value* parent = &base;
    for (size_t i = 0; i + 1 < p.size() && parent != nullptr; ++i)
      parent = parent->as_object().if_contains(p[i]);
    if (parent != nullptr)
      current = parent->as_object().if_contains(p.back());
  }
  const auto kinds = accepted_kinds(doc, s, current);
  if (kinds.empty())
    return;
  // Wrong JSON types.
  for (const auto& [kind, sample] : kSampleOfKind)
    if (!kinds.contains(kind))
      out.emplace_back(dotted(p) + " as " + kind, with_raw(base, p, sample));
  // Integers out of range, and the same inside an integer array.
  if (auto i = integer_form(doc, s))
    for (const auto& [what, raw] : bad_integers(*i))
      out.emplace_back(dotted(p) + " " + what, with_raw(base, p, raw));
  if (kinds.contains("array")) {
    if (const auto* items = s.if_contains("items")) {
      const json::object item_schema = resolve(doc, items->as_object());
      const auto item_kinds = accepted_kinds(doc, item_schema, nullptr);
      for (const auto& [kind, sample] : kSampleOfKind)
        if (!item_kinds.empty() && !item_kinds.contains(kind))
          out.emplace_back(dotted(p) + "[0] as " + kind, with_raw(base, p, "[" + std::string(sample) + "]"));
      if (auto i = integer_form(doc, item_schema))
        for (const auto& [what, raw] : bad_integers(*i))
          out.emplace_back(dotted(p) + "[0] " + what, with_raw(base, p, "[" + raw + "]"));
    }
  }
  // Strings: over the body limit on their own, and invalid UTF-8.
  if (kinds.contains("string") && !nested) {
    bodies_large.emplace_back(dotted(p) + " of 1 MiB", with_raw(base, p, "\"" + std::string(kHugeString, 'a') + "\""));
    out.emplace_back(dotted(p) + " invalid UTF-8", with_raw(base, p,
                                                            "\"sw\xff\xfe"
                                                            "ep\""));
    out.emplace_back(dotted(p) + " a lone surrogate half", with_raw(base, p, "\"\xed\xa0\x80\""));
    out.emplace_back(dotted(p) + " overlong encoding", with_raw(base, p, "\"\xc0\xaf\""));
  }
  // Members of an object with declared properties.
  if (const auto* props = s.if_contains("properties");
      props != nullptr && current != nullptr && current->is_object() && p.size() < 3) {
    for (const auto& kv : props->as_object()) {
      json_path child = p;
      child.emplace_back(kv.key());
      property_cases(doc, base, child, kv.value().as_object(), true, bodies_shape, bodies_nested, bodies_large);
    }
  }
}

/// The answer is what `want` allows, in the shape of docs/protocol.md §0. Empty when it is; otherwise why
/// not.
inline std::string verdict(const response& r, const expectation& want) {
  if (r.status == 0)
    return "no response (dropped connection or timeout)";
  if (r.status >= 500)
    return "server error";
  if (r.header("X-Request-Id").empty())
    return "no X-Request-Id";
  if (!r.header("Content-Type").starts_with("application/json"))
    return "Content-Type " + r.header("Content-Type");
  if (r.status == 200)
    return want.ok_allowed ? std::string() : "accepted (200)";
  if (r.status < 400)
    return "status " + std::to_string(r.status);
  if (!r.body.is_object())
    return "body is not a JSON object";
  const auto& o = r.obj();
  if (o.size() != 1 || !o.contains("error") || !o.at("error").is_object())
    return "body is not {\"error\": {...}}";
  const auto& e = o.at("error").as_object();
  for (const auto& kv : e)
    if (kv.key() != "code" && kv.key() != "message" && kv.key() != "details")
      return "unexpected field error." + std::string(kv.key());
  if (!e.contains("code") || !e.at("code").is_string())
    return "error.code missing";
  if (!e.contains("message") || !e.at("message").is_string() || e.at("message").as_string().empty())
    return "error.message missing or empty";
  if (const auto* d = e.if_contains("details"); d != nullptr && !d->is_object())
    return "error.details not an object";
  const std::string code(e.at("code").as_string());
  const auto st = kStatusOf.find(code);
  if (st == kStatusOf.end())
    return "code " + code + " is not in the table of docs/protocol.md §0";
  if ((want.status != 0 ? want.status : st->second) != r.status)
    return "code " + code + " with status " + std::to_string(r.status);
  if (!want.allowed.contains(code))
    return "code " + code + " not expected here";
  return {};
}

/// One request over a raw socket: the bytes as given, then whatever the server answers until it
/// closes (or `timeout`). For bodies shorter than their Content-Length, which no HTTP client
/// library sends. The write side stays open: httplib takes a half-closed connection for a closed
/// one and answers nothing, so the server answers once its read timeout (5 s) has passed.
inline response raw_exchange(int port, const std::string& bytes, std::chrono::milliseconds timeout) {
  response out;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return out;
  }
  send_raw(fd, bytes);
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  // "HTTP/1.1 400 Bad Request\r\n" headers "\r\n\r\n" body
  if (!got.starts_with("HTTP/1.1 ") || got.size() < 12)
    return out;
  out.status = std::atoi(got.c_str() + 9);
  const auto end = got.find("\r\n\r\n");
  if (end == std::string::npos)
    return out;
  std::string head = got.substr(0, end);
  size_t line = head.find("\r\n");
  while (line != std::string::npos) {
    const size_t next = head.find("\r\n", line + 2);
    const std::string h = head.substr(line + 2, next == std::string::npos ? std::string::npos : next - line - 2);
    if (const auto colon = h.find(':'); colon != std::string::npos)
      out.headers.emplace(h.substr(0, colon), h.substr(h.find_first_not_of(' ', colon + 1)));
    line = next;
  }
  out.text = got.substr(end + 4);
  std::error_code ec;
  auto v = json::parse(out.text, ec);
  if (!ec)
    out.body = std::move(v);
  return out;
}

struct tally {
  size_t sent = 0;
  std::map<int, size_t> by_status;
};

}  // namespace enact::itest
