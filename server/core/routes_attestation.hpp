// SPDX-License-Identifier: Apache-2.0
// The attestation endpoints at the host root (docs/protocol.md §2 "Attestation"):
// GET /attestation, /info, /evidences/ and /evidences/<file>. Public (no credential), outside the
// /core/v1 route table because their paths are not under /core/v1 and the evidence files are not
// JSON; they still get the request id, the log line and the JSON error bodies of `mount`.
#pragma once

namespace httplib {
class Server;
}

namespace enact::core {

struct services;

/// Mounts the attestation endpoints, answered by `svc.tee`. Called by `mount`.
void mount_attestation(httplib::Server& server, const services& svc);

}  // namespace enact::core
