// SPDX-License-Identifier: Apache-2.0
// One server per data directory (docs/deployment.md "The data directory and backups"): a second
// enact-server started on a directory a running server holds, by any path to it (the directory
// itself, a symbolic link to it, a path through ..), exits at once with a message naming the
// directory, before it writes anything there: the running server's evidence files (served under
// /evidences/) keep their inode, modification time and bytes. The lock is the data directory's
// own, not the metering store's: with the metering store in a file outside the directory the
// second server is refused all the same, and does not even create that file. What the server
// makes in the directory is its user's alone (umask 077), the public evidence files aside. A
// server started through a symbolic link keeps to the directory it locked when the link is moved
// to another (whose files it would otherwise serve as its evidence, and write its uploads to).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "steps.hpp"

namespace enact::itest {
namespace {

namespace fs = std::filesystem;

/// What identifies one version of a file: its inode, modification time and bytes.
struct file_state {
  ino_t inode = 0;
  int64_t mtime_ns = 0;
  std::string bytes;
  bool operator==(const file_state&) const = default;
};

std::map<std::string, file_state> snapshot(const std::string& dir) {
  std::map<std::string, file_state> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    struct stat st {};
    REQUIRE(::stat(e.path().c_str(), &st) == 0);
    std::ifstream f(e.path(), std::ios::binary);
    out[e.path().filename().string()] =
        file_state{st.st_ino, static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                   std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>())};
  }
  return out;
}

/// A second server on `data_dir` (with `extra` flags), run until it exits.
finished_run second_server(const std::string& data_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--dev", "--listen", "127.0.0.1:0", "--data-dir", data_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_to_exit(args);
}

void check_refused(const finished_run& r, const std::string& canonical_dir) {
  INFO("stderr: " << r.stderr_text);
  CHECK(r.status.exited);
  CHECK(r.status.code == 1);
  CHECK(r.stderr_text.find("data directory " + canonical_dir) != std::string::npos);
  CHECK(r.stderr_text.find("another enact-server") != std::string::npos);
  // Refused before it served: no banner.
  CHECK(r.stdout_text.find("listening on") == std::string::npos);
}

}  // namespace

TEST_CASE("a second server on a data directory in use is refused before it touches the directory") {
  temp_dir root;
  const std::string data = root.path() + "/data";
  server_process first({"--dev"}, data);
  REQUIRE(first.port() > 0);
  const std::string canonical_dir = fs::canonical(data).string();

  // The lock file: in the directory, the server's own (mode 0600).
  struct stat lock_st {};
  CHECK(::lstat((data + "/server.lock").c_str(), &lock_st) == 0);
  CHECK(S_ISREG(lock_st.st_mode));
  CHECK((lock_st.st_mode & 0777) == 0600);

  const auto evidences = snapshot(data + "/evidences");
  REQUIRE(evidences.count("quote.json") == 1);
  REQUIRE(evidences.count("sha256sum.txt") == 1);

  fs::create_directory_symlink(data, root.path() + "/link");
  fs::create_directory(root.path() + "/sibling");
  for (const std::string& alias : {data, root.path() + "/link", data + "/../data", root.path() + "/sibling/../link"}) {
    CAPTURE(alias);
    check_refused(second_server(alias), canonical_dir);
    CHECK(snapshot(data + "/evidences") == evidences);
  }

  // The metering store in a file outside the data directory: no metering lock to collide on,
  // the data directory's lock refuses the second server all the same, before it opens any store.
  const std::string outside = root.path() + "/outside-metering.sqlite";
  for (const std::string& alias : {data, root.path() + "/link"}) {
    CAPTURE(alias);
    check_refused(second_server(alias, {"--billing-metering-store", outside}), canonical_dir);
    CHECK_FALSE(fs::exists(outside));
    CHECK(snapshot(data + "/evidences") == evidences);
  }

  // The first server still answers, from its untouched files and stores.
  auto c = first.client();
  const response sums = c.request("GET", "/evidences/sha256sum.txt");
  ITEST_CHECK_STATUS(sums, 200);
  CHECK(sums.text == evidences.at("sha256sum.txt").bytes);
  const account_keys acct = create_account(c, "still-served");
  ITEST_CHECK_STATUS(c.get("/account", acct.auth()), 200);
  CHECK(first.stop().clean());

  // Everything the server made in its directory is its own alone, whatever the umask it was
  // started with (the databases hold API key hashes and sealed usage keys; 0700 on the directory
  // is not the only guard), except the evidence files, public by design (0644, served to anyone
  // under /evidences/).
  for (const auto& e : fs::recursive_directory_iterator(data)) {
    struct stat st {};
    REQUIRE(::lstat(e.path().c_str(), &st) == 0);
    CAPTURE(e.path().string());
    if (e.path().parent_path().filename() == "evidences")
      CHECK((st.st_mode & 0777) == 0644);
    else
      CHECK((st.st_mode & 077) == 0);
  }

  // Stopped, the directory is free again, by any of its names.
  server_process next({"--dev"}, root.path() + "/link");
  REQUIRE(next.port() > 0);
  ITEST_CHECK_STATUS(next.client().request("GET", "/evidences/quote.json"), 200);
  CHECK(next.stop().clean());
}

TEST_CASE("a server started through a link keeps to the directory it locked when the link moves") {
  // The lock is taken on the directory the link named at start; every file the server opens
  // later (an evidence file on each request, an upload's code) must come from that directory too,
  // not from wherever the link points by then: a directory no lock guards, whose files anyone
  // able to move the link chose.
  temp_dir root;
  const std::string data = root.path() + "/data", planted = root.path() + "/planted", link = root.path() + "/link";
  fs::create_directory(data);
  fs::permissions(data, fs::perms::owner_all);
  fs::create_directory_symlink(data, link);
  server_process first({"--dev"}, link);
  REQUIRE(first.port() > 0);
  auto c = first.client();
  const response quote = c.request("GET", "/evidences/quote.json");
  ITEST_CHECK_STATUS(quote, 200);

  fs::create_directories(planted + "/evidences");
  { std::ofstream(planted + "/evidences/quote.json") << R"({"quote":"planted"})"; }
  fs::remove(link);
  fs::create_directory_symlink(planted, link);

  const response again = c.request("GET", "/evidences/quote.json");
  ITEST_CHECK_STATUS(again, 200);
  const bool same_quote = again.text == quote.text;  // (the quote is ~20 KB: not printed whole)
  CHECK_MESSAGE(same_quote, "served after the move: " << again.text.substr(0, 60));
  const account_keys acct = create_account(c, "after-the-move");
  ITEST_CHECK_STATUS(c.get("/account", acct.auth()), 200);
  ITEST_CHECK_STATUS(c.post("/upload_action", json::object{{"code", "Enact.setResponse('kept');\n"}}, acct.auth()),
                     200);
  CHECK(first.stop().clean());
  // The upload went to the locked directory, and nothing of the server's to the planted one.
  CHECK(std::distance(fs::directory_iterator(data + "/actions"), fs::directory_iterator{}) == 1);
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(planted))
    names.push_back(fs::relative(e.path(), planted).string());
  CHECK(names == std::vector<std::string>{"evidences", "evidences/quote.json"});
}

TEST_CASE("a killed server's data directory takes the next server at once") {
  temp_dir root;
  const std::string data = root.path() + "/data";
  server_process first({"--dev"}, data);
  REQUIRE(first.port() > 0);
  REQUIRE(::kill(first.pid(), SIGKILL) == 0);
  const exit_status killed = first.stop();
  CHECK_FALSE(killed.exited);
  // The kernel let go of the lock with the process: no stale lock file refuses the restart.
  server_process next({"--dev"}, data);
  REQUIRE(next.port() > 0);
  ITEST_CHECK_STATUS(next.client().request("GET", "/evidences/quote.json"), 200);
  CHECK(next.stop().clean());
}

}  // namespace enact::itest
