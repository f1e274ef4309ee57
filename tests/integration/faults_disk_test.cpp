// SPDX-License-Identifier: Apache-2.0
// A data directory on a full disk (faults_test.hpp).
#include "faults_test.hpp"

namespace enact::itest {

namespace {

/// A size-limited place for a data directory, made the first way that works here: a tmpfs mount
/// with size= (root), a loop-mounted ext4 image (root, with mkfs.ext4), or RLIMIT_FSIZE on the
/// server process (anyone; then "full" means no file may grow). ENACT_FAULTS_DISK=loop or rlimit
/// starts further down that list, to try the other ways on a machine where the first works.
class small_disk {
 public:
  explicit small_disk(size_t bytes) {
    mount_point_ = base_.path() + "/mnt";
    REQUIRE(::mkdir(mount_point_.c_str(), 0700) == 0);
    const char* forced = std::getenv("ENACT_FAULTS_DISK");
    const std::string start = forced != nullptr ? forced : "";
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
    if (::geteuid() == 0 && start.empty() &&
        ::mount("tmpfs", mount_point_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
      method_ = "tmpfs mount with size=" + std::to_string(bytes >> 10) + "k";
      mounted_ = true;
      return;
    }
    const std::string image = base_.path() + "/disk.img";
    const std::string make = "truncate -s " + std::to_string(bytes) + " " + image + " && mkfs.ext4 -q -F " + image +
                             " >/dev/null 2>&1 && mount -o loop " + image + " " + mount_point_ + " >/dev/null 2>&1";
    if (::geteuid() == 0 && start != "rlimit" && std::system(make.c_str()) == 0) {
      method_ = "loop-mounted ext4 image of " + std::to_string(bytes >> 10) + "k";
      mounted_ = true;
      return;
    }
    method_ = "RLIMIT_FSIZE on the server";
    rlimit_ = true;
    // A write past the limit must fail with EFBIG, not kill the server with SIGXFSZ: an ignored
    // signal stays ignored across exec.
    ::signal(SIGXFSZ, SIG_IGN);
  }
  ~small_disk() {
    if (mounted_)
      ::umount2(mount_point_.c_str(), MNT_DETACH);
  }
  small_disk(const small_disk&) = delete;
  small_disk& operator=(const small_disk&) = delete;

  [[nodiscard]] const std::string& method() const { return method_; }
  [[nodiscard]] std::string data_dir() const { return mount_point_ + "/data"; }

  /// Takes the remaining space (or, with RLIMIT_FSIZE, forbids every file of `server` to grow).
  void fill(pid_t server) {
    if (rlimit_) {
      // The limit is per file: no write may reach past byte 0 of any file, as no block is free.
      const rlimit lim{0, RLIM_INFINITY};
      REQUIRE_MESSAGE(::prlimit(server, RLIMIT_FSIZE, &lim, nullptr) == 0, std::strerror(errno));
      return;
    }
    const std::string filler = mount_point_ + "/filler";
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    std::vector<char> block(64 << 10, 'f');
    size_t chunk = block.size();
    for (;;) {
      const ssize_t n = ::write(fd, block.data(), chunk);
      if (n > 0)
        continue;
      if (n < 0 && errno == ENOSPC && chunk > 1) {
        chunk /= 2;  // down to the last byte
        continue;
      }
      break;
    }
    ::fsync(fd);
    ::close(fd);
  }
  /// Gives the space back.
  void free_space(pid_t server) {
    if (rlimit_) {
      const rlimit lim{RLIM_INFINITY, RLIM_INFINITY};
      if (server > 0)
        REQUIRE_MESSAGE(::prlimit(server, RLIMIT_FSIZE, &lim, nullptr) == 0, std::strerror(errno));
      return;
    }
    std::filesystem::remove(mount_point_ + "/filler");
  }

 private:
  temp_dir base_;
  std::string mount_point_;
  std::string method_;
  bool mounted_ = false;
  bool rlimit_ = false;
};

}  // namespace

TEST_CASE("a full disk: writes answer 503, reads work, nothing is lost or corrupt") {
  const auto started = steady::now();
  small_disk disk(size_t{4} << 20);
  std::printf("disk full: the size limit is a %s\n", disk.method().c_str());
  const std::string data = disk.data_dir();
  const std::vector<std::string> flags = {"--dev", "--new-accounts-per-minute", "0"};

  account_keys acct;
  std::vector<uint64_t> groups;                                     // acknowledged
  std::vector<std::string> wallets, cids, keys, accounts, intents;  // acknowledged
  uint64_t balance = 0;
  size_t refused = 0, accepted_while_full = 0;
  {
    server_process srv(flags, data);
    auto c = srv.client();
    acct = create_account(c, "full disk");
    balance = buy_credits(c, acct.auth(), 1000);
    const response up = c.post("/upload_action", json::object{{"code", "Enact.setResponse(7)"}}, acct.auth());
    ITEST_REQUIRE_STATUS(up, 200);
    ITEST_REQUIRE_STATUS(
        c.post("/add_group",
               json::object{{"name", "runs"}, {"cid_hashes_permitted", json::array{up.obj().at("hashed_cid")}}},
               acct.auth()),
        200);
    const std::string run_cid = s_of(up.body, "action_ipfs_cid");

    disk.fill(srv.pid());

    // Every kind of write, many times, until the ledger has had to grow: each answers 200 (the
    // space SQLite had already) or 503 unavailable, never 500.
    const auto write = [&](size_t i) -> response {
      const std::string n = std::to_string(i);
      switch (i % 8) {
        case 0:
          return c.post("/add_group", json::object{{"name", "g" + n}, {"description", std::string(2000, 'd')}},
                        acct.auth());
        case 1:
          return c.post("/create_wallet", json::object{{"name", "w" + n}}, acct.auth());
        case 2:
          return c.post("/add_usage_api_key", json::object{{"name", "k" + n}, {"description", std::string(2000, 'd')}},
                        acct.auth());
        case 3:
          return c.post("/add_action",
                        json::object{{"action_ipfs_cid", cid_of_code("full " + n)},
                                     {"name", "a" + n},
                                     {"description", std::string(2000, 'd')}},
                        acct.auth());
        case 4:
          return c.post("/upload_action",
                        json::object{{"code", "Enact.setResponse('" + std::string(20000, 'x') + n + "')"}},
                        acct.auth());
        case 5:
          return c.post("/run_action", json::object{{"action_ipfs_cid", run_cid}}, acct.auth());
        case 6:
          return c.post("/billing/create_payment_intent", json::object{{"amount_cents", 500}}, acct.auth());
        default:
          return c.post("/new_account", json::object{{"name", "n" + n}});
      }
    };
    size_t consecutive_refusals = 0;
    for (size_t i = 0; i < 2000 && consecutive_refusals < 24; ++i) {
      const response r = write(i);
      INFO("write " << i << ": " << r.describe());
      REQUIRE(r.status != 0);  // the server is alive
      if (r.status == 200) {
        ++accepted_while_full;
        consecutive_refusals = 0;
        switch (i % 8) {
          case 0:
            groups.push_back(u_of(r.body, "group_id"));
            break;
          case 1:
            wallets.push_back(s_of(r.body, "pkp_id"));
            break;
          case 2:
            keys.push_back(s_of(r.body, "hash"));
            break;
          case 3:
            cids.push_back(s_of(r.body, "hashed_cid"));
            break;
          case 5:
            --balance;
            break;
          case 6:
            intents.push_back(s_of(r.body, "payment_intent_id"));
            break;
          case 7:
            accounts.push_back(s_of(r.body, "api_key"));
            break;
          default:
            break;
        }
      } else {
        check_error_shape(r, 503, "unavailable");
        ++refused;
        ++consecutive_refusals;
      }
    }
    CHECK(consecutive_refusals >= 24);  // three rounds of every kind

    // Reads work on the full disk.
    ITEST_CHECK_STATUS(c.get("/account", acct.auth()), 200);
    CHECK(list_all(c, "/list_groups", acct.auth()).size() == groups.size() + 1);
    CHECK(list_all(c, "/list_wallets", acct.auth()).size() == wallets.size());
    CHECK(balance_of(c, acct.auth()) == balance);
    ITEST_CHECK_STATUS(c.get("/get_node_chain_config"), 200);

    // Space back: writes work again without a restart.
    disk.free_space(srv.pid());
    const response g = c.post("/add_group", json::object{{"name", "after"}}, acct.auth());
    ITEST_CHECK_STATUS(g, 200);
    if (g.status == 200)
      groups.push_back(u_of(g.body, "group_id"));
    CHECK(srv.stop().clean());
  }
  std::printf("disk full: %zu writes accepted on the full disk, %zu refused with 503\n", accepted_while_full, refused);

  // Nothing corrupt, nothing acknowledged lost.
  for (const char* file : {"/ledger.sqlite", "/billing-dev.sqlite", "/metering.sqlite"}) {
    INFO(file);
    sqlite_file db(data + file);
    CHECK(db.one("PRAGMA integrity_check") == "ok");
  }
  {
    sqlite_file ledger(data + "/ledger.sqlite");
    check_event_log_contiguous(ledger);
  }
  {
    server_process srv(flags, data);
    auto c = srv.client();
    std::set<uint64_t> listed_groups;
    for (const auto& g : list_all(c, "/list_groups", acct.auth()))
      listed_groups.insert(g.at("group_id").to_number<uint64_t>());
    for (const uint64_t id : groups)
      CHECK(listed_groups.contains(id));
    std::set<std::string> listed_wallets, listed_actions;
    for (const auto& w : list_all(c, "/list_wallets", acct.auth()))
      listed_wallets.insert(s_of(w, "pkp_id"));
    for (const auto& a : list_all(c, "/list_actions", acct.auth()))
      listed_actions.insert(s_of(a, "hashed_cid"));
    for (const auto& w : wallets)
      CHECK(listed_wallets.contains(w));
    for (const auto& h : cids)
      CHECK(listed_actions.contains(h));
    std::set<std::string> listed_keys;
    for (const auto& k : list_all(c, "/list_api_keys", acct.auth()))
      listed_keys.insert(s_of(k, "hash"));
    for (const auto& k : keys)
      CHECK(listed_keys.contains(k));
    for (const auto& a : accounts)
      ITEST_CHECK_STATUS(c.get("/account", api_key(a)), 200);
    CHECK(balance_of(c, acct.auth()) == balance);
    // An intent recorded on the full disk can be confirmed now.
    for (const auto& id : intents) {
      const response done = c.post("/billing/confirm_payment", json::object{{"payment_intent_id", id}}, acct.auth());
      ITEST_CHECK_STATUS(done, 200);
      balance += 500;
    }
    CHECK(balance_of(c, acct.auth()) == balance);
    ITEST_CHECK_STATUS(c.post("/create_wallet", json::object{{"name", "restarted"}}, acct.auth()), 200);
    CHECK(srv.stop().clean());
  }
  std::printf("disk full: %.1f s\n", seconds_since(started));
}

// The chain node of the evm ledger stopped and restarted: tests/integration/chain_faults_test.cpp.

}  // namespace enact::itest
