// SPDX-License-Identifier: Apache-2.0
// `enact::server_core`: the /core/v1 routes as a library. A caller builds the parts (a permission
// ledger, a TEE, optionally a payment provider, a content store), fills a `config`, and mounts the
// routes on its own httplib::Server with `mount`; enact-server (server/app) is one such caller,
// examples/embed_server another. The OpenAPI document is generated from the same route table.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "enact/bytes.hpp"

namespace httplib {
class Server;
}

namespace enact::ledger {
class permission_ledger;
}
namespace enact::metering {
class store;
}
namespace enact::tee {
class tee;
}
namespace enact::billing {
class payment_provider;
}
namespace enact::runtime {
class pool;
struct fetch_settings;
}  // namespace enact::runtime

namespace enact::http {
class logger;
}
namespace enact::core {

class content_store;
class run_share;
using logger = http::logger;  // http/log.hpp

struct config {
  /// Chain the registry lives on, as /get_node_chain_config reports it (and ChainSecured
  /// envelopes must name).
  uint64_t chain_id = 31337;
  std::string chain_name = "enact-embedded";
  address contract_address{};
  /// Credits charged for each API-mode write relayed to the ledger (the gas surcharge), held in
  /// the metering store before the write and debited once it succeeded.
  uint64_t write_surcharge_credits = 0;
  /// Credits per run-action call.
  uint64_t run_price_credits = 1;
  /// Request body limits (docs/protocol.md §0: 1 MiB default, 256 KiB action code).
  size_t max_body_bytes = size_t{1} << 20;
  size_t max_action_code_bytes = size_t{256} << 10;
  /// Origins whose browser pages may call /core/v1 (CORS, http/cors.hpp): "https://app.example"
  /// as the browser sends it, or "*". Empty (the default): no Access-Control-* header is sent and
  /// a page of another site can read nothing.
  std::vector<std::string> cors_origins;
  /// Token bucket per credential, and per wallet for X-Wallet-Auth (requests per second; burst,
  /// 0: twice the rate); a rate of 0 disables it.
  double key_rate_per_second = 200;
  double key_rate_burst = 0;
  /// Account creations per client IP per minute (IPv6: per /64); 0 disables. Also the limit of
  /// each minting route (`*_with_signature`), with its own bucket.
  double new_account_per_ip_per_minute = 60;
  /// eth_sendRawTransaction at /rpc per client IP per minute (each write of a batch counted);
  /// 0 disables.
  double rpc_writes_per_ip_per_minute = 120;
  /// eth_call and eth_estimateGas at /rpc per client IP per second (each of a batch counted):
  /// both execute calls, writes included, against the ledger and roll them back; 0 disables.
  double rpc_calls_per_ip_per_second = 100;
  /// Requests a JSON-RPC batch at /rpc may hold (at most rpc_surface::kMaxBatch).
  size_t rpc_max_batch = 100;
  /// Buckets each rate-limit table keeps; when full, the least recently used is evicted.
  size_t rate_table_entries = 100000;
  /// Code each account may keep in the content store (/upload_action): total bytes and count of
  /// distinct CIDs; 0: unlimited.
  uint64_t upload_quota_bytes = uint64_t{64} << 20;
  uint64_t upload_quota_count = 1000;
  /// Allowed issuedAt skew of wallet envelopes, seconds.
  uint64_t envelope_max_skew = 300;
  /// Accept the specification's version 1 envelope for ConvertAccount and X-Wallet-Auth too
  /// (docs/protocol.md §2 "Envelope version 2"): it binds no account, request or deployment, so
  /// it is off unless the operator opts in for old clients.
  bool accept_envelope_v1 = false;
  /// IPFS HTTP gateway for action code not in the content store ("http://127.0.0.1:8081");
  /// empty: off. Fetched bytes are verified against the CID.
  std::string ipfs_gateway;
  int gateway_timeout_ms = 10000;
  /// The sandbox's wall-clock limit per run (enact-server's sandbox.run_timeout_ms): with the
  /// gateway timeout it sizes the credit hold and the Idempotency-Key lease of a run
  /// (core/credits.hpp run_budget).
  uint64_t run_timeout_ms = 10000;
};

/// The parts the routes use. The ledger, TEE and content store are required; without a payment
/// provider the billing write endpoints answer 503 unavailable, without a sandbox /run_action, and
/// without a metering store every call that costs credits and the billing routes.
struct services {
  ledger::permission_ledger* ledger = nullptr;
  /// Balances, payments, per-key spending and the holds of calls in flight (server/metering).
  metering::store* metering = nullptr;
  tee::tee* tee = nullptr;
  billing::payment_provider* payments = nullptr;
  content_store* store = nullptr;
  /// The action sandbox; without one, /run_action answers 503.
  runtime::pool* sandbox = nullptr;
  /// Enact.fetch's egress policy, per-run limits and price (runtime/fetch.hpp); without them an
  /// action's fetch is refused.
  const runtime::fetch_settings* fetch = nullptr;
  logger* log = nullptr;
  /// The api_payer that relays API-mode writes (one of ledger->api_payers()).
  address api_payer{};
  /// Each account's share of the sandbox (core/run_share.hpp); without one, none is kept.
  run_share* share = nullptr;
};

/// Mounts every /core/v1 route, /core/v1/openapi.json and /core/v1/swagger-ui on `server`, plus
/// JSON error bodies for unknown paths, oversized bodies and exceptions. `svc` and `cfg` must
/// outlive the server.
void mount(httplib::Server& server, const services& svc, const config& cfg);

/// The OpenAPI 3.1 document of every route `mount` serves.
[[nodiscard]] boost::json::object openapi_document(const config& cfg);

}  // namespace enact::core
