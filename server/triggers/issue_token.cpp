// SPDX-License-Identifier: Apache-2.0
// `enact-server issue-token`: a bearer token for operators and tests, without the browser
// handshake. The token is printed once on stdout and never stored or logged in clear.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "enact/secret.hpp"
#include "tee/tee.hpp"
#include "triggers/pg_store.hpp"
#include "triggers/service.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/tokens.hpp"

namespace enact::triggers {

namespace {
constexpr const char* kUsage =
    "usage: enact-server issue-token (--data-dir DIR | --trigger-store URL) --user NAME\n"
    "                                [--client NAME]\n\n"
    "Stores a new bearer token of the trigger service's management API (/api) for user NAME in\n"
    "DIR/triggers.sqlite, or in the PostgreSQL trigger store at URL (postgres://...), and prints\n"
    "it on stdout. It is valid for 30 days.\n";
}

int issue_token_command(int argc, char** argv) {
  std::string data_dir, user, client = "issue-token", store_url;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string* target = a == "--data-dir"        ? &data_dir
                          : a == "--user"          ? &user
                          : a == "--client"        ? &client
                          : a == "--trigger-store" ? &store_url
                                                   : nullptr;
    if (target == nullptr || i + 1 >= argc) {
      std::fprintf(stderr, "enact-server issue-token: %s\n%s",
                   target == nullptr ? ("unknown option '" + a + "'").c_str() : (a + ": missing value").c_str(),
                   kUsage);
      return 2;
    }
    *target = argv[++i];
  }
  const bool postgres = !store_url.empty() && store_url != "sqlite";
  if ((data_dir.empty() && !postgres) || user.empty() || user.size() > 256 || client.size() > 256) {
    std::fprintf(stderr,
                 "enact-server issue-token: --data-dir (or --trigger-store URL) and --user (1 to 256 "
                 "bytes) are required\n%s",
                 kUsage);
    return 2;
  }
  if (postgres && !is_postgres_url(store_url)) {
    // The value is not repeated: it may hold a password.
    std::fprintf(stderr, "enact-server issue-token: --trigger-store: not a postgres:// URL\n");
    return 2;
  }
  std::unique_ptr<store> s;
  if (postgres) {
    auto opened = pg_store::open(store_url);
    detail::secure_wipe(store_url.data(), store_url.size());
    if (!opened) {
      std::fprintf(stderr, "enact-server issue-token: %s\n", opened.err().message.c_str());
      return 1;
    }
    s = std::move(*opened);
  } else {
    if (::mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "enact-server issue-token: cannot create %s: %s\n", data_dir.c_str(), std::strerror(errno));
      return 1;
    }
    // The server's own check of the directory (docs/protocol.md §1 "data from before"), so a token issued
    // into a new directory does not make the server refuse it later.
    if (auto claimed = tee::claim_data_dir(data_dir); !claimed) {
      std::fprintf(stderr, "enact-server issue-token: %s\n", claimed.err().message.c_str());
      return 1;
    }
    auto opened = sqlite_store::open(data_dir + "/triggers.sqlite");
    if (!opened) {
      std::fprintf(stderr, "enact-server issue-token: %s\n", opened.err().message.c_str());
      return 1;
    }
    s = std::move(*opened);
  }
  auto t = issue_token(*s, user, client, system_clock().now());
  if (!t) {
    std::fprintf(stderr, "enact-server issue-token: %s\n", t.err().message.c_str());
    return 1;
  }
  std::printf("%s\n", t->token.c_str());
  std::fflush(stdout);
  detail::secure_wipe(t->token.data(), t->token.size());
  return 0;
}

}  // namespace enact::triggers
