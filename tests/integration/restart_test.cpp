// SPDX-License-Identifier: Apache-2.0
// State survives a restart: a server is stopped with SIGTERM (exit 0) and a new one started on the
// same data directory answers every read identically, keys still authenticate, balances and
// payments are kept, and the TEE root key (mode 0600) derives the same wallet addresses. A root
// key file readable by others makes the server refuse to start.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "steps.hpp"

namespace enact::itest {
namespace {

/// The root key as the simulated TEE stores it.
Secret read_root_key(const std::string& data_dir) {
  std::ifstream f(data_dir + "/tee-root.key", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() == 32);
  return Secret(as_bytes(bytes));
}

/// Each listed wallet's address is the one its derivation path gives under `root` for the
/// snapshot's account (docs/protocol.md §1 "owning account").
void check_wallets_derive(const json::object& snap, const Secret& root) {
  const hash256 account = codec::hex::decode_fixed<32>(s_of(snap.at("account"), "api_key_hash")).value();
  for (const auto& w : snap.at("wallets").as_array()) {
    const hash256 path = codec::hex::decode_fixed<32>(s_of(w, "derivation_path")).value();
    CHECK(s_of(w, "pkp_id") == to_checksum_address(pkp::wallet_address(root, account, path).value()));
  }
}

}  // namespace

TEST_CASE("a restarted server on the same data directory has the same state") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";

  account_keys acct, other;
  usage_keys key, admin_key;
  std::vector<uint64_t> groups;
  std::string pending_intent, confirmed_intent, admin_payer;
  json::object before, other_before;
  {
    server_process srv({"--dev"}, data);
    auto c = srv.client();
    acct = create_account(c, "persistent");
    other = create_account(c, "neighbour");
    key = create_usage_key(c, acct.auth(),
                           {{"name", "runner"},
                            {"description", "kept"},
                            {"expiration", unix_now() + 86400},
                            {"can_create_pkps", true},
                            {"execute_in_groups", json::array{1}}});
    admin_key = create_usage_key(
        c, acct.auth(),
        {{"name", "admin"}, {"can_delete_groups", true}, {"manage_ipfs_ids_in_groups", json::array{0}}});
    std::vector<std::string> pkps;
    for (int i = 0; i < 3; ++i) {
      const response w =
          c.post("/create_wallet", json::object{{"name", "w" + std::to_string(i)}}, i == 1 ? key.auth() : acct.auth());
      ITEST_REQUIRE_STATUS(w, 200);
      pkps.push_back(s_of(w.body, "pkp_id"));
    }
    std::vector<std::string> cids;
    for (int i = 0; i < 3; ++i) {
      cids.push_back(cid_of_code("Enact.setResponse(" + std::to_string(i) + ")"));
      ITEST_REQUIRE_STATUS(
          c.post("/add_action", json::object{{"action_ipfs_cid", cids.back()}, {"name", "a"}}, acct.auth()), 200);
    }
    for (int i = 0; i < 3; ++i) {
      const response g =
          c.post("/add_group", json::object{{"name", "g" + std::to_string(i)}, {"description", "d"}}, acct.auth());
      ITEST_REQUIRE_STATUS(g, 200);
      groups.push_back(u_of(g.body, "group_id"));
    }
    ITEST_REQUIRE_STATUS(
        c.post("/add_pkp_to_group", json::object{{"group_id", groups[0]}, {"pkp_id", pkps[0]}}, acct.auth()), 200);
    ITEST_REQUIRE_STATUS(
        c.post("/add_pkp_to_group", json::object{{"group_id", groups[0]}, {"pkp_id", pkps[2]}}, acct.auth()), 200);
    ITEST_REQUIRE_STATUS(c.post("/add_action_to_group",
                                json::object{{"group_id", groups[0]}, {"action_ipfs_cid", cids[0]}}, acct.auth()),
                         200);
    ITEST_REQUIRE_STATUS(c.post("/add_action_to_group",
                                json::object{{"group_id", groups[1]}, {"action_ipfs_cid", cids[1]}}, admin_key.auth()),
                         200);
    ITEST_REQUIRE_STATUS(
        c.post("/update_action_metadata",
               json::object{{"hashed_cid", hashed_cid_hex(cids[2])}, {"name", "renamed"}, {"description", "x"}},
               acct.auth()),
        200);
    ITEST_REQUIRE_STATUS(c.post("/remove_group", json::object{{"group_id", groups[2]}}, admin_key.auth()), 200);
    groups.pop_back();

    // One payment confirmed, one created and left for the next server to confirm.
    const response i1 = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 700}}, acct.auth());
    ITEST_REQUIRE_STATUS(i1, 200);
    confirmed_intent = s_of(i1.body, "payment_intent_id");
    ITEST_REQUIRE_STATUS(
        c.post("/billing/confirm_payment", json::object{{"payment_intent_id", confirmed_intent}}, acct.auth()), 200);
    const response i2 = c.post("/billing/create_payment_intent", json::object{{"amount_cents", 550}}, acct.auth());
    ITEST_REQUIRE_STATUS(i2, 200);
    pending_intent = s_of(i2.body, "payment_intent_id");
    CHECK(buy_credits(c, other.auth(), 900) == 900);

    admin_payer = s_of(c.get("/get_admin_api_payer").body, "admin_api_payer");
    before = account_snapshot(c, acct.auth(), groups);
    other_before = account_snapshot(c, other.auth(), {});
    CHECK(before.at("balance").to_number<uint64_t>() == 700);
    CHECK(before.at("wallets").as_array().size() == 3);
    CHECK(before.at("keys").as_array().size() == 2);
    CHECK(before.at("groups").as_array().size() == 2);

    const exit_status st = srv.stop();
    CHECK(st.exited);
    CHECK(st.code == 0);
    const std::string log = srv.log_text();
    CHECK(log.find("\"msg\":\"stopped\"") != std::string::npos);
  }

  // The root key file: owner-only, 32 bytes, and the listed wallets are the ones it derives.
  struct stat st {};
  REQUIRE(::stat((data + "/tee-root.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const Secret root = read_root_key(data);
  check_wallets_derive(before, root);

  {
    server_process srv({"--dev"}, data);
    auto c = srv.client();
    CHECK(account_snapshot(c, acct.auth(), groups) == before);
    CHECK(account_snapshot(c, other.auth(), {}) == other_before);
    CHECK(s_of(c.get("/get_admin_api_payer").body, "admin_api_payer") == admin_payer);

    // Keys still authenticate, with their permissions.
    for (const auto* k : {&key, &admin_key}) {
      const response me = c.get("/account", k->auth());
      ITEST_CHECK_STATUS(me, 200);
      CHECK(s_of(me.obj().at("key"), "hash") == k->hash);
    }
    check_error_shape(c.post("/add_group", json::object{{"name", "x"}}, key.auth()), 403, "forbidden");

    // Payments: the credited one stays credited, the pending one can be confirmed now.
    check_error_shape(
        c.post("/billing/confirm_payment", json::object{{"payment_intent_id", confirmed_intent}}, acct.auth()), 409,
        "conflict");
    const response done =
        c.post("/billing/confirm_payment", json::object{{"payment_intent_id", pending_intent}}, acct.auth());
    ITEST_CHECK_STATUS(done, 200);
    CHECK(u_of(done.body, "balance_credits") == 1250);

    // The wallet registry continues where it stopped, on the same root key.
    const response w = c.post("/create_wallet", json::object{{"name", "after restart"}}, key.auth());
    ITEST_REQUIRE_STATUS(w, 200);
    CHECK(s_of(w.body, "derivation_path") == api_path_hex(acct.api_key_hash, 3));
    CHECK(s_of(w.body, "pkp_id") ==
          to_checksum_address(
              pkp::wallet_address(root, codec::hex::decode_fixed<32>(acct.api_key_hash).value(),
                                  codec::hex::decode_fixed<32>(api_path_hex(acct.api_key_hash, 3)).value())
                  .value()));
    // And group ids continue too (the removed group's id is not reused).
    const response g = c.post("/add_group", json::object{{"name", "after restart"}}, acct.auth());
    ITEST_REQUIRE_STATUS(g, 200);
    for (const uint64_t id : groups)
      CHECK(u_of(g.body, "group_id") != id);

    CHECK(srv.stop().clean());
    check_no_secret_logged(srv, {acct.api_key, other.api_key, key.value, admin_key.value});
  }
  // The file was neither rewritten nor loosened by the second run.
  REQUIRE(::stat((data + "/tee-root.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(read_root_key(data) == root);

  // A root key readable by group or others: the server refuses to start.
  for (const mode_t mode : {mode_t{0644}, mode_t{0640}, mode_t{0604}}) {
    INFO("mode " << std::oct << mode);
    REQUIRE(::chmod((data + "/tee-root.key").c_str(), mode) == 0);
    const finished_run run = run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", data, "--dev"});
    CHECK(run.status.exited);
    CHECK(run.status.code != 0);
    CHECK(run.stderr_text.find("tee-root.key") != std::string::npos);
    CHECK(run.stdout_text.find("listening on") == std::string::npos);
  }
  // Restoring the mode restores the server, with the same state.
  REQUIRE(::chmod((data + "/tee-root.key").c_str(), 0600) == 0);
  {
    server_process srv({"--dev"}, data);
    auto c = srv.client();
    const json::object now = account_snapshot(c, acct.auth(), groups);
    CHECK(now.at("wallets").as_array().size() == 4);
    check_wallets_derive(now, root);
    CHECK(srv.stop().clean());
  }
}

TEST_CASE("a fresh data directory gets a new 0600 root key; a damaged one is refused") {
  temp_dir dir;
  const std::string data = dir.path() + "/data";
  {
    server_process srv({}, data);
    CHECK(srv.stop().clean());
  }
  struct stat st {};
  REQUIRE(::stat((data + "/tee-root.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(st.st_size == 32);
  // A truncated key file is refused rather than replaced.
  std::filesystem::resize_file(data + "/tee-root.key", 16);
  const finished_run run = run_to_exit({"--listen", "127.0.0.1:0", "--data-dir", data});
  CHECK(run.status.exited);
  CHECK(run.status.code != 0);
  CHECK(run.stderr_text.find("tee-root.key") != std::string::npos);
  REQUIRE(::stat((data + "/tee-root.key").c_str(), &st) == 0);
  CHECK(st.st_size == 16);
}

}  // namespace enact::itest

namespace enact::itest {

TEST_CASE("SIGTERM right after the banner still stops the server cleanly") {
  // The banner is printed before the accept loop starts; a stop signal in between must not be
  // lost (the server would otherwise run until killed).
  temp_dir dir;
  for (int i = 0; i < 20; ++i) {
    INFO("start " << i);
    server_process srv({}, dir.path() + "/data");
    const exit_status st = srv.stop();
    CHECK(st.exited);
    CHECK(st.code == 0);
    CHECK(st.signal == 0);
  }
}

}  // namespace enact::itest
