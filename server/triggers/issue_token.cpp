// `enact-server issue-token`: a bearer token for operators and tests, without the browser
// handshake. The token is printed once on stdout and never stored or logged in clear.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "enact/crypto/secret.hpp"
#include "triggers/service.hpp"
#include "triggers/sqlite_store.hpp"
#include "triggers/tokens.hpp"

namespace enact::triggers {

namespace {
constexpr const char* kUsage =
    "usage: enact-server issue-token --data-dir DIR --user NAME [--client NAME]\n\n"
    "Stores a new bearer token of the trigger service's management API (/api) for user NAME in\n"
    "DIR/triggers.sqlite and prints it on stdout. It is valid for 30 days.\n";
}

int issue_token_command(int argc, char** argv) {
  std::string data_dir, user, client = "issue-token";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string* target = a == "--data-dir" ? &data_dir : a == "--user" ? &user : a == "--client" ? &client : nullptr;
    if (target == nullptr || i + 1 >= argc) {
      std::fprintf(stderr, "enact-server issue-token: %s\n%s",
                   target == nullptr ? ("unknown option '" + a + "'").c_str() : (a + ": missing value").c_str(),
                   kUsage);
      return 2;
    }
    *target = argv[++i];
  }
  if (data_dir.empty() || user.empty() || user.size() > 256 || client.size() > 256) {
    std::fprintf(stderr, "enact-server issue-token: --data-dir and --user (1 to 256 bytes) are required\n%s", kUsage);
    return 2;
  }
  if (::mkdir(data_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "enact-server issue-token: cannot create %s: %s\n", data_dir.c_str(), std::strerror(errno));
    return 1;
  }
  auto s = sqlite_store::open(data_dir + "/triggers.sqlite");
  if (!s) {
    std::fprintf(stderr, "enact-server issue-token: %s\n", s.err().message.c_str());
    return 1;
  }
  auto t = issue_token(**s, user, client, system_clock().now());
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
