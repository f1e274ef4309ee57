// SPDX-License-Identifier: Apache-2.0
// The route table of the core API: each route's method, path, authentication, scope, request and
// response schemas and handler. `mount` serves it and `openapi_document` describes it, so the two
// cannot drift apart. Handlers are thin: they read the validated request, call the ledger, TEE or
// payment provider, and return the response body or an error (mapped in errors.cpp).
#pragma once

#include <boost/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/service.hpp"
#include "enact/api/core.hpp"
#include "enact/api/read.hpp"
#include "enact/bytes.hpp"
#include "enact/result.hpp"
#include "enact/scopes/scopes.hpp"
#include "http/openapi.hpp"
#include "http/pipeline.hpp"
#include "ledger/ledger.hpp"

namespace httplib {
struct Request;
}

namespace enact::core {

namespace json = boost::json;

enum class auth_kind {
  none,     // public
  key,      // account key or a usage key (scopes checked by the handler)
  owner,    // the account key only
  billing,  // a key, or an X-Wallet-Auth envelope (BillingAuth) of the admin wallet
};

/// Who is calling, once authenticated.
struct caller {
  ledger::account account;
  scopes::caller scopes;     // kind account or usage, with the usage key's permissions
  hash256 key_hash{};        // keccak256 of the presented key (zero for wallet auth)
  bool wallet_auth = false;  // authenticated by X-Wallet-Auth
  uint64_t key_cap = 0;      // the usage key's spending cap (setUsageApiKey's balance); 0: none
};

class credit_hold;      // core/credits.hpp
class idempotent_call;  // core/idempotency.hpp

/// What a handler sees of its request (read-only): the HTTP request, the services, the caller
/// and the schema-checked body. Handlers answer through their return value alone.
struct request_context {
  const httplib::Request& http;
  const services& svc;
  const config& cfg;
  std::optional<caller> who{};
  json::value body = nullptr;  // the parsed, schema-checked body (null for GET)
  std::string request_id;
  /// The request's claim of its Idempotency-Key (core/idempotency.hpp), null without one: a run
  /// renews it right before its effect.
  idempotent_call* idempotent = nullptr;
};

/// Money a handler made owed: the run's credit hold and the amount to debit from it. The
/// pipeline's charge stage settles it (with the answer kept for an Idempotency-Key, in one store
/// transaction), so no handler settles money itself.
struct charge {
  std::shared_ptr<credit_hold> hold;
  uint64_t amount = 0;
};

using answer = http::answer<charge>;
using handler = std::function<answer(const request_context&)>;

using http::query_param;

struct route {
  std::string_view method;  // "GET" or "POST"
  std::string_view path;    // under /core/v1
  std::string_view operation_id;
  std::string_view tag;
  std::string_view summary;
  auth_kind auth = auth_kind::key;
  bool writes = false;  // relays a ledger write
  std::vector<query_param> query;
  json::object request;   // body schema (POST); empty for GET
  json::object response;  // 200 body schema
  handler handle;
  size_t max_body = 0;               // 0: config.max_body_bytes
  bool body_is_json_string = false;  // /get_svc_action_ipfs_id takes a bare JSON string
  bool per_ip_limited = false;       // unauthenticated and mints secrets: per-IP rate limit
  json::object errors{};             // status -> description, beyond the default error responses
  bool surcharged = false;           // costs the write surcharge though not `writes`
  bool idempotent = false;           // takes an Idempotency-Key (core/idempotency.hpp)
};

/// Every route of the core API, in documentation order.
[[nodiscard]] const std::vector<route>& routes();
/// The shared component schemas (Group, Wallet, Action, UsageKey, Error, …).
[[nodiscard]] const json::object& components();

// --- helpers for handlers -------------------------------------------------------------------
// Bodies are read with api::read<T> (enact/api/read.hpp) once the route's schema has checked
// them, and answers are written as api:: types with json::value_from, so the server and the
// clients spell every field once.

[[nodiscard]] result<ledger::page_request> read_page(const httplib::Request& req);
/// A list answer: the items of one page (a ledger's or the metering store's: `items` and `total`)
/// as their api:: form, with the page they were read for.
template <class Item, class Page, class Convert>
[[nodiscard]] json::value page_answer(const Page& records, ledger::page_request p, Convert to_item) {
  api::page<Item> out;
  out.items.reserve(records.items.size());
  for (const auto& r : records.items)
    out.items.push_back(to_item(r));
  out.page_number = p.number;
  out.page_size = p.size;
  out.total = records.total;
  return json::value_from(out);
}

/// The write context of an API-mode relay by this server.
[[nodiscard]] ledger::write_context relay(const request_context& c);

/// A string field of a schema-checked body; `fallback` when absent.
[[nodiscard]] std::string str(const json::value& body, std::string_view key, std::string_view fallback = {});

/// Forbidden unless the caller holds `p` (on `group` for per-group scopes).
[[nodiscard]] result<void> require_scope(const request_context& c, scopes::permission p,
                                         std::optional<scopes::group_id> group = {});

// --- the wire form of ledger records (docs/protocol.md §2) --------------------------------------------
[[nodiscard]] api::group to_api(const ledger::group& g);
/// A PKP's id is its wallet address: both fields carry it.
[[nodiscard]] api::wallet to_api(const ledger::wallet& w);
[[nodiscard]] api::action to_api(const ledger::action& a);
[[nodiscard]] json::object usage_key_json(const ledger::usage_key& k);

// --- route groups (one file each) -----------------------------------------------------------
void add_account_routes(std::vector<route>& out);
void add_group_routes(std::vector<route>& out);
void add_action_routes(std::vector<route>& out);
void add_utility_routes(std::vector<route>& out);
void add_billing_routes(std::vector<route>& out);
void add_run_routes(std::vector<route>& out);
void add_chainsecured_routes(std::vector<route>& out);

}  // namespace enact::core
