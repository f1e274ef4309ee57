// SPDX-License-Identifier: Apache-2.0
// POST /rpc at the host root: the embedded ledger's Ethereum JSON-RPC surface
// (ledger/rpc_surface.hpp). It is not a /core/v1 route: bodies and errors are JSON-RPC 2.0
// objects (answered with HTTP 200, or 204 for notifications only), not the docs/protocol.md §0 error shape.
// The request id header and the request log line come from the server-wide handlers `mount`
// installs, as for every other response.
#pragma once

namespace httplib {
class Server;
}

namespace enact::ledger {
class rpc_surface;
}

namespace enact::http {
class logger;
}
namespace enact::core {

using logger = http::logger;  // http/log.hpp
struct config;

/// Mounts POST /rpc (and its CORS preflight) on `server`. `surface`, `cfg` and `log` must outlive
/// the server. Call after `mount`.
void mount_rpc(httplib::Server& server, ledger::rpc_surface& surface, const config& cfg, logger& log);

}  // namespace enact::core
