// SPDX-License-Identifier: Apache-2.0
// POST /rpc: the body goes to the rpc_surface; its answer comes back as it is, within the limits
// of an unauthenticated route that writes: writes (eth_sendRawTransaction, each one of a batch
// counted) take tokens from a bucket per client address (429 with Retry-After when it is dry),
// and so do dry runs (eth_call, eth_estimateGas: a call executed and rolled back) from one of
// their own, a
// batch holds at most `rpc_max_batch` requests, and a batch's answer stops growing past
// kMaxBatchAnswer bytes (one eth_getLogs may answer rpc_surface::kMaxLogs logs, megabytes; a
// hundred of them in one batch would be held in memory at once): the requests after that point
// are answered with error -32005 instead, as geth does past its batch response limit.
#include "core/routes_rpc.hpp"

#include <boost/json.hpp>
#include <httplib.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include "core/log.hpp"
#include "core/rate_limiter.hpp"
#include "core/service.hpp"
#include "ledger/rpc_surface.hpp"

namespace enact::core {

namespace {

namespace json = boost::json;

// JSON-RPC error codes: invalid request (JSON-RPC 2.0), limit exceeded (EIP-1474).
constexpr int kInvalidRequest = -32600;
constexpr int kLimitExceeded = -32005;
constexpr size_t kMaxBatchAnswer = size_t{16} << 20;

// Browser dapps call a node from their own origin; writes need signed transactions anyway.
void allow_any_origin(httplib::Response& res) {
  res.set_header("Access-Control-Allow-Origin", "*");
  res.set_header("Access-Control-Allow-Methods", "POST, OPTIONS");
  res.set_header("Access-Control-Allow-Headers", "Content-Type");
  // Browsers show a cross-origin caller Retry-After only when it is exposed.
  res.set_header("Access-Control-Expose-Headers", "Retry-After");
}

/// A JSON-RPC error object answering `id` (null for a batch or an unparsed body).
std::string rpc_error(json::value id, int code, std::string message, json::value data = nullptr) {
  json::object e{{"code", code}, {"message", std::move(message)}};
  if (!data.is_null())
    e["data"] = std::move(data);
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"error", std::move(e)}});
}

bool has_method(const json::value& request, std::string_view a, std::string_view b = {}) {
  const auto* o = request.if_object();
  if (o == nullptr)
    return false;
  const auto* m = o->if_contains("method");
  return m != nullptr && m->is_string() && (m->get_string() == a || (!b.empty() && m->get_string() == b));
}

bool is_write(const json::value& request) { return has_method(request, "eth_sendRawTransaction"); }

/// eth_call and eth_estimateGas execute a call against the ledger — a write runs whole, under
/// the ledger's write lock, and is rolled back — so they cost what a write costs to run.
bool is_dry_run(const json::value& request) { return has_method(request, "eth_call", "eth_estimateGas"); }

/// What the limits need to know of a body: its writes and, for a batch, its size. A body that
/// does not parse is the surface's to answer (a parse error, which writes nothing).
struct body_shape {
  json::value doc = nullptr;  // the parsed body; null when it does not parse
  bool batch = false;
  size_t requests = 0;
  size_t writes = 0;
  size_t dry_runs = 0;
  json::value id = nullptr;  // a single request's id
};

body_shape shape_of(const std::string& body) {
  body_shape s;
  std::error_code ec;
  s.doc = json::parse(body, ec);
  if (ec) {
    s.doc = nullptr;
    return s;
  }
  if (const auto* batch = s.doc.if_array()) {
    s.batch = true;
    s.requests = batch->size();
    s.writes = static_cast<size_t>(std::count_if(batch->begin(), batch->end(), is_write));
    s.dry_runs = static_cast<size_t>(std::count_if(batch->begin(), batch->end(), is_dry_run));
    return s;
  }
  s.requests = 1;
  s.writes = is_write(s.doc) ? 1 : 0;
  s.dry_runs = is_dry_run(s.doc) ? 1 : 0;
  if (const auto* o = s.doc.if_object())
    if (const auto* id = o->if_contains("id"); id != nullptr && (id->is_string() || id->is_number()))
      s.id = *id;
  return s;
}

/// A batch answered request by request, so that its answer stops growing at kMaxBatchAnswer:
/// each request's answer is what the surface gives it alone (the surface answers a batch's
/// requests one by one too); an empty string when all were notifications.
std::string answer_batch(ledger::rpc_surface& surface, const json::array& batch) {
  std::string out = "[";
  bool any = false;
  bool over = false;
  for (const json::value& r : batch) {
    std::string one;
    const auto* o = r.if_object();
    if (o == nullptr) {
      // The surface's answer to a batch element that is no object (here lest a nested array be
      // taken for a batch of its own).
      one = rpc_error(nullptr, kInvalidRequest, "invalid request: expected an object");
    } else if (over) {
      const auto* id = o->if_contains("id");
      if (id == nullptr)
        continue;  // a notification gets no answer
      one = rpc_error(id->is_string() || id->is_number() ? *id : json::value(nullptr), kLimitExceeded,
                      "limit exceeded: the batch's answer is over " + std::to_string(kMaxBatchAnswer) +
                          " bytes; send fewer requests at a time");
    } else {
      one = surface.handle(json::serialize(r));
      over = out.size() + one.size() > kMaxBatchAnswer;
    }
    if (one.empty())
      continue;
    if (any)
      out += ',';
    out += one;
    any = true;
  }
  if (!any)
    return {};
  out += ']';
  return out;
}

}  // namespace

void mount_rpc(httplib::Server& server, ledger::rpc_surface& surface, const config& cfg, logger& log) {
  surface.on_internal_error([&log](const std::string& detail) {
    log.error("rpc internal error", {{"route", "/rpc"}, {"detail", detail}});
  });
  // Writes per client address per minute, a minute's worth as the burst (as for accounts).
  auto writes = std::make_shared<rate_limiter>(cfg.rpc_writes_per_ip_per_minute / 60.0,
                                               std::max(1.0, cfg.rpc_writes_per_ip_per_minute), cfg.rate_table_entries);
  // Dry runs per client address per second, ten seconds' worth as the burst.
  auto dry_runs = std::make_shared<rate_limiter>(
      cfg.rpc_calls_per_ip_per_second, std::max(1.0, 10 * cfg.rpc_calls_per_ip_per_second), cfg.rate_table_entries);
  const size_t max_batch = std::clamp<size_t>(cfg.rpc_max_batch, 1, ledger::rpc_surface::kMaxBatch);
  server.Post("/rpc", [&surface, &cfg, writes, dry_runs, max_batch](const httplib::Request& req,
                                                                    httplib::Response& res) {
    allow_any_origin(res);
    if (req.body.size() > cfg.max_body_bytes) {
      res.set_content(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":)"
                      R"("invalid request: body over )" +
                          std::to_string(cfg.max_body_bytes) + R"( bytes"}})",
                      "application/json");
      return;
    }
    const body_shape shape = shape_of(req.body);
    if (shape.batch && shape.requests > max_batch) {
      res.set_content(rpc_error(nullptr, kInvalidRequest,
                                "invalid request: a batch of " + std::to_string(shape.requests) +
                                    " requests, at most " + std::to_string(max_batch)),
                      "application/json");
      return;
    }
    // Takes `n` tokens of the client's bucket in `limiter`, or answers 429 and says so.
    const auto refused = [&](rate_limiter& limiter, size_t n, std::string_view what) {
      const int wait = limiter.take(client_of(req.remote_addr), static_cast<double>(n));
      if (wait == 0)
        return false;
      res.status = 429;
      res.set_header("Retry-After", std::to_string(wait));
      res.set_content(rpc_error(shape.id, kLimitExceeded,
                                "rate_limited: too many " + std::string(what) + " from this address; retry in " +
                                    std::to_string(wait) + " s",
                                json::object{{"retry_after", wait}}),
                      "application/json");
      return true;
    };
    if (shape.writes > 0 && writes->enabled()) {
      const auto per_minute = static_cast<size_t>(writes->burst());
      if (shape.writes > per_minute) {
        res.set_content(
            rpc_error(nullptr, kInvalidRequest,
                      "invalid request: a batch of " + std::to_string(shape.writes) + " writes, more than the " +
                          std::to_string(per_minute) + " one address may send per minute; send fewer at a time"),
            "application/json");
        return;
      }
      if (refused(*writes, shape.writes, "eth_sendRawTransaction"))
        return;
    }
    if (shape.dry_runs > 0 && dry_runs->enabled() && refused(*dry_runs, shape.dry_runs, "eth_call and eth_estimateGas"))
      return;
    // A batch (non-empty: the surface answers an empty one) is answered request by request.
    std::string out =
        shape.batch && shape.requests > 0 ? answer_batch(surface, shape.doc.get_array()) : surface.handle(req.body);
    if (out.empty()) {
      res.status = 204;
      return;
    }
    res.set_content(std::move(out), "application/json");
  });
  server.Options("/rpc", [](const httplib::Request&, httplib::Response& res) {
    allow_any_origin(res);
    res.status = 204;
  });
}

}  // namespace enact::core
