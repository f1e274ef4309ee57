// SPDX-License-Identifier: Apache-2.0
// Embedding the enact core routes in your own HTTP server: build the parts, mount the routes next
// to your own endpoints, serve. Everything below runs on the embedded defaults in a directory of
// your choosing (here: the first argument, default ./embed-data).
//
//   embed_server [DATA_DIR] [PORT]
//   curl -s localhost:8090/healthz
//   curl -s localhost:8090/core/v1/new_account --json '{"name":"demo"}'
#include <httplib.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "core/content_store.hpp"
#include "core/log.hpp"
#include "core/service.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/embedded_chain.hpp"
#include "ledger/embedded_ledger.hpp"
#include "tee/tee.hpp"

int main(int argc, char** argv) {
  using namespace enact;
  const std::string dir = argc > 1 ? argv[1] : "./embed-data";
  const int port = argc > 2 ? std::stoi(argv[2]) : 8090;
  ::mkdir(dir.c_str(), 0700);

  // The parts: a TEE holding the root key, the permission ledger, the content store. The data
  // directory is claimed first, so one made under another key derivation is refused.
  if (auto claimed = tee::claim_data_dir(dir); !claimed) {
    std::fprintf(stderr, "%s\n", claimed.err().message.c_str());
    return 1;
  }
  auto the_tee = tee::open_simulated(dir);
  if (!the_tee) {
    std::fprintf(stderr, "%s\n", the_tee.err().message.c_str());
    return 1;
  }
  // The relayer is a server key (docs/protocol.md §1 "server keys"), out of reach of every account.
  const address payer = (*the_tee)->server_address("api-payer/0").value();
  // The chain id ChainSecured envelopes must name: this deployment's own, derived from the TEE
  // root and recorded in the directory before the ledger file exists (docs/protocol.md §1
  // "embedded chain"), so an envelope signed for another deployment is refused here.
  const auto identifier = (*the_tee)->server_identifier(ledger::kEmbeddedChainPurpose).value();
  const auto chain = ledger::claim_embedded_chain(dir, ledger::derive_embedded_chain(identifier), {});
  if (!chain) {
    std::fprintf(stderr, "%s\n", chain.err().message.c_str());
    return 1;
  }
  auto ledger = ledger::embedded_ledger::open(dir + "/ledger.sqlite", {payer}).value();
  auto store = core::content_store::open(dir).value();
  core::logger log;

  core::services svc;
  svc.ledger = ledger.get();
  svc.tee = the_tee->get();
  svc.store = &store;
  svc.log = &log;
  svc.api_payer = payer;  // no payment provider: billing writes answer 503
  core::config cfg;
  cfg.chain_name = "embedded-example";
  cfg.chain_id = chain->chain.chain_id;
  cfg.contract_address = chain->chain.registry;

  httplib::Server server;
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"ok\":true}", "application/json");
  });
  core::mount(server, svc, cfg);  // everything under /core/v1
  std::printf("serving on http://127.0.0.1:%d (your /healthz, and /core/v1/...)\n", port);
  std::fflush(stdout);
  return server.listen("127.0.0.1", port) ? 0 : 1;
}
