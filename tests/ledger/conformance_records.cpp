// SPDX-License-Identifier: Apache-2.0
// Conformance cases: the event log, usage keys, groups, wallets and actions.
#include "conformance_cases.hpp"

namespace enact::ledger::test::conformance {

void event_log(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  CHECK(MUST(l->events_after(0, 10)).empty());

  const account rec = make_account_record(1, true);
  const account_hash h = rec.hash;
  const write_context payer = as(kPayer);
  const wallet w1 = make_wallet(1, 1);
  const action act = make_action("QmEventAction");
  const usage_key k = make_key(h, 1, 1);

  MUST(l->new_account(payer, rec));
  MUST(l->register_wallet(payer, h, w1));
  CHECK_ERRC(l->register_wallet(as(kStranger), h, make_wallet(1, 2)), ledger_errc::not_admin);
  MUST(l->add_action(payer, h, act));
  MUST(l->set_usage_key(payer, k));
  MUST(l->update_usage_key_metadata(payer, h, k.hash, "renamed", "d"));
  group g = MUST(l->add_group(payer, h, make_group("g", {w1.pkp_id})));
  g.pkps.clear();
  (void)MUST(l->update_group(as(rec.admin), h, g));
  (void)MUST(l->add_pkp_to_group(payer, h, g.id, w1.pkp_id));
  CHECK_ERRC(l->add_pkp_to_group(payer, h, g.id, w1.pkp_id), ledger_errc::duplicate);
  (void)MUST(l->remove_pkp_from_group(payer, h, g.id, w1.pkp_id));
  (void)MUST(l->add_action_to_group(payer, h, g.id, act.hashed_cid));
  (void)MUST(l->remove_action_from_group(payer, h, g.id, act.hashed_cid));
  (void)MUST(l->update_action_metadata(payer, h, act.hashed_cid, "renamed", "d"));
  MUST(l->delete_action(payer, h, act.hashed_cid));
  MUST(l->remove_usage_key(payer, h, k.hash));
  MUST(l->remove_group(payer, h, g.id));
  MUST(l->convert_to_chain_secured(payer, h, addr(0x50, 1)));

  const std::vector<std::string> expected = {"AccountCreated",
                                             "WalletDerivationRegistered",
                                             "ActionAdded",
                                             "UsageApiKeySet",
                                             "UsageApiKeyMetadataUpdated",
                                             "GroupAdded",
                                             "GroupUpdated",
                                             "PkpAddedToGroup",
                                             "PkpRemovedFromGroup",
                                             "ActionAddedToGroup",
                                             "ActionRemovedFromGroup",
                                             "ActionMetadataUpdated",
                                             "ActionDeleted",
                                             "UsageApiKeyRemoved",
                                             "GroupRemoved",
                                             "AccountConverted"};
  const std::vector<event> events = all_events(*l);
  REQUIRE(events.size() == expected.size());
  for (size_t i = 0; i < events.size(); ++i) {
    INFO("event ", i, " ", events[i].name);
    CHECK(events[i].sequence == i + 1);
    CHECK(events[i].name == expected[i]);
    CHECK(events[i].account == h);
    CHECK(events[i].created_at > 0);
    CHECK(events[i].data.at("accountHash").as_string() == hx(h));
  }
  // The sender is the write's msg.sender.
  CHECK(events[0].sender == kPayer);
  CHECK(events[6].sender == rec.admin);
  CHECK(events[15].sender == kPayer);
  // Arguments, hashes and addresses as 0x hex.
  CHECK(events[0].data.at("adminWalletAddress").as_string() == hx(rec.admin));
  CHECK(events[1].data.at("wallet").as_string() == hx(w1.pkp_id));
  CHECK(events[1].data.at("derivationPath").as_string() == hx(w1.derivation_path));
  CHECK(events[2].data.at("hashedCid").as_string() == hx(act.hashed_cid));
  CHECK(events[2].data.at("cid").as_string() == act.cid);
  CHECK(events[3].data.at("usageKeyHash").as_string() == hx(k.hash));
  CHECK(events[5].data.at("groupId").to_number<uint64_t>() == g.id);
  CHECK(events[5].data.at("pkpIds").as_array().size() == 1);
  CHECK(events[6].data.at("pkpIds").as_array().empty());
  CHECK(events[7].data.at("pkpId").as_string() == hx(w1.pkp_id));
  CHECK(events[15].data.at("newAdmin").as_string() == hx(addr(0x50, 1)));

  // events_after pages by sequence.
  const std::vector<event> mid = MUST(l->events_after(2, 3));
  REQUIRE(mid.size() == 3);
  CHECK(mid[0].sequence == 3);
  CHECK(mid[2].sequence == 5);
  CHECK(MUST(l->events_after(16, 10)).empty());
  CHECK(MUST(l->events_after(0, 0)).empty());
}

void usage_keys(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);
  const prepared m2 = prepare(*l, 2, true);

  usage_key k = make_key(m.a.hash, 1, 2);
  k.expiration = UINT64_MAX;
  k.balance = UINT64_MAX;
  k.permissions.can_delete_groups = true;
  k.permissions.can_create_pkps = true;
  k.permissions.manage_ipfs_ids_in_groups = {3, 1};
  k.permissions.remove_pkp_from_groups = {0};
  MUST(l->set_usage_key(as(kPayer), k));
  const usage_key got = MUST(l->find_usage_key(k.hash));
  CHECK(got.hash == k.hash);
  CHECK(got.account == m.a.hash);
  CHECK(got.wallet == k.wallet);
  CHECK(got.name == k.name);
  CHECK(got.description == k.description);
  CHECK(got.expiration == UINT64_MAX);
  CHECK(got.balance == UINT64_MAX);
  CHECK(got.permissions == k.permissions);
  CHECK(got.created_at > 0);

  // Replacing: every field, same list position.
  usage_key first = make_key(m.a.hash, 1, 1);
  first.name = "replaced";
  first.expiration = 5;
  first.permissions = {};
  MUST(l->set_usage_key(as(kPayer), first));
  const page<usage_key> keys = MUST(l->list_usage_keys(m.a.hash, {1, 20}));
  REQUIRE(keys.items.size() == 2);
  CHECK(keys.total == 2);
  CHECK(keys.items[0].hash == first.hash);
  CHECK(keys.items[0].name == "replaced");
  CHECK(keys.items[0].expiration == 5);
  CHECK(keys.items[0].permissions == scopes::permission_set{});
  CHECK(keys.items[1].hash == k.hash);

  MUST(l->update_usage_key_metadata(as(kPayer), m.a.hash, k.hash, "n2", "d2"));
  const usage_key renamed = MUST(l->find_usage_key(k.hash));
  CHECK(renamed.name == "n2");
  CHECK(renamed.description == "d2");
  CHECK(renamed.permissions == k.permissions);

  // A key hash belongs to one account.
  usage_key stolen = make_key(m2.a.hash, 1, 2);
  CHECK_ERRC(l->set_usage_key(as(m2.a.admin), stolen), ledger_errc::usage_key_of_another_account);
  CHECK_ERRC(l->update_usage_key_metadata(as(m2.a.admin), m2.a.hash, k.hash, "x", ""), ledger_errc::unknown_usage_key);
  CHECK_ERRC(l->remove_usage_key(as(m2.a.admin), m2.a.hash, k.hash), ledger_errc::unknown_usage_key);

  CHECK_ERRC(l->update_usage_key_metadata(as(kPayer), m.a.hash, h256(0x99), "x", ""), ledger_errc::unknown_usage_key);
  CHECK_ERRC(l->update_usage_key_metadata(as(kPayer), m.a.hash, k.hash, "", ""), ledger_errc::invalid_argument);
  CHECK_ERRC(l->update_usage_key_metadata(as(kPayer), m.a.hash, k.hash, "x", std::string(4097, 'd')),
             ledger_errc::invalid_argument);
  usage_key nameless = make_key(m.a.hash, 1, 3);
  nameless.name.clear();
  CHECK_ERRC(l->set_usage_key(as(kPayer), nameless), ledger_errc::invalid_argument);
  CHECK_ERRC(l->find_usage_key(nameless.hash), ledger_errc::unknown_usage_key);

  MUST(l->remove_usage_key(as(kPayer), m.a.hash, k.hash));
  CHECK_ERRC(l->find_usage_key(k.hash), ledger_errc::unknown_usage_key);
  CHECK_ERRC(l->remove_usage_key(as(kPayer), m.a.hash, k.hash), ledger_errc::unknown_usage_key);
  CHECK(MUST(l->find_usage_key(first.hash)).name == "replaced");  // other keys unaffected
  CHECK(MUST(l->list_usage_keys(m.a.hash, {1, 20})).total == 1);
}

void groups(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);
  const prepared m2 = prepare(*l, 2, true);
  const write_context w = as(kPayer);
  const hash256 any_cid = crypto::keccak256(std::string_view("QmNotRegisteredAnywhere"));

  // Ids count per account from 1; CIDs need not be registered actions.
  group g2 =
      MUST(l->add_group(w, m.a.hash, make_group("two", {m.wallet_free, m.wallet_in_group}, {any_cid, m.cid_in_group})));
  CHECK(g2.id == 2);
  CHECK(g2.name == "two");
  CHECK(g2.pkps == std::vector<address>{m.wallet_free, m.wallet_in_group});
  CHECK(g2.cid_hashes == std::vector<hash256>{any_cid, m.cid_in_group});
  const group read = MUST(l->get_group(m.a.hash, 2));
  CHECK(read.id == 2);
  CHECK(read.description == "two description");
  CHECK(read.pkps == g2.pkps);
  CHECK(read.cid_hashes == g2.cid_hashes);
  CHECK(MUST(l->add_group(w, m.a.hash, make_group("three"))).id == 3);

  // Removed ids are not reused.
  MUST(l->remove_group(w, m.a.hash, 3));
  CHECK_ERRC(l->get_group(m.a.hash, 3), ledger_errc::unknown_group);
  CHECK(MUST(l->add_group(w, m.a.hash, make_group("four"))).id == 4);
  std::vector<group_id> ids;
  for (const group& g : MUST(l->all_groups(m.a.hash)))
    ids.push_back(g.id);
  CHECK(ids == std::vector<group_id>{1, 2, 4});
  CHECK(MUST(l->all_groups(m2.a.hash)).size() == 1);  // other accounts count on their own

  // add_group / update_group refuse PKPs outside the registry and repeated members.
  const uint64_t before = last_sequence(*l);
  CHECK_ERRC(l->add_group(w, m.a.hash, make_group("x", {addr(0x66)})), ledger_errc::unknown_wallet);
  CHECK_ERRC(l->add_group(w, m.a.hash, make_group("x", {m2.wallet_free})), ledger_errc::unknown_wallet);
  CHECK_ERRC(l->add_group(w, m.a.hash, make_group("x", {m.wallet_free, m.wallet_free})), ledger_errc::invalid_argument);
  CHECK_ERRC(l->add_group(w, m.a.hash, make_group("x", {}, {any_cid, any_cid})), ledger_errc::invalid_argument);
  CHECK_ERRC(l->add_group(w, m.a.hash, make_group("")), ledger_errc::invalid_argument);
  CHECK_ERRC(l->add_group(w, m.a.hash, make_group(std::string(257, 'g'))), ledger_errc::invalid_argument);
  group upd = make_group("updated", {m.wallet_in_group}, {any_cid});
  upd.id = 99;
  CHECK_ERRC(l->update_group(w, m.a.hash, upd), ledger_errc::unknown_group);
  upd.id = 0;
  CHECK_ERRC(l->update_group(w, m.a.hash, upd), ledger_errc::unknown_group);
  upd.id = 2;
  upd.pkps = {addr(0x66)};
  CHECK_ERRC(l->update_group(w, m.a.hash, upd), ledger_errc::unknown_wallet);
  CHECK_ERRC(l->remove_group(w, m.a.hash, 3), ledger_errc::unknown_group);
  CHECK_ERRC(l->remove_group(w, m.a.hash, 0), ledger_errc::unknown_group);
  CHECK_ERRC(l->remove_group(w, m2.a.hash, 2), ledger_errc::unknown_group);
  CHECK_ERRC(l->get_group(m.a.hash, 0), ledger_errc::unknown_group);
  CHECK(last_sequence(*l) == before);

  // update_group replaces everything.
  upd.pkps = {m.wallet_in_group};
  const group updated = MUST(l->update_group(w, m.a.hash, upd));
  CHECK(updated.id == 2);
  const group after = MUST(l->get_group(m.a.hash, 2));
  CHECK(after.name == "updated");
  CHECK(after.pkps == std::vector<address>{m.wallet_in_group});
  CHECK(after.cid_hashes == std::vector<hash256>{any_cid});

  // Single members, in insertion order.
  CHECK(MUST(l->add_pkp_to_group(w, m.a.hash, 2, m.wallet_free)).pkps ==
        std::vector<address>{m.wallet_in_group, m.wallet_free});
  CHECK_ERRC(l->add_pkp_to_group(w, m.a.hash, 2, m.wallet_free), ledger_errc::duplicate);
  CHECK_ERRC(l->add_pkp_to_group(w, m.a.hash, 2, addr(0x66)), ledger_errc::unknown_wallet);
  CHECK_ERRC(l->add_pkp_to_group(w, m.a.hash, 7, m.wallet_free), ledger_errc::unknown_group);
  CHECK(MUST(l->remove_pkp_from_group(w, m.a.hash, 2, m.wallet_in_group)).pkps == std::vector<address>{m.wallet_free});
  CHECK_ERRC(l->remove_pkp_from_group(w, m.a.hash, 2, m.wallet_in_group), ledger_errc::unknown_wallet);
  CHECK_ERRC(l->remove_pkp_from_group(w, m.a.hash, 7, m.wallet_free), ledger_errc::unknown_group);

  CHECK(MUST(l->add_action_to_group(w, m.a.hash, 2, m.cid_in_group)).cid_hashes ==
        std::vector<hash256>{any_cid, m.cid_in_group});
  CHECK_ERRC(l->add_action_to_group(w, m.a.hash, 2, any_cid), ledger_errc::duplicate);
  CHECK_ERRC(l->add_action_to_group(w, m.a.hash, 7, any_cid), ledger_errc::unknown_group);
  CHECK(MUST(l->remove_action_from_group(w, m.a.hash, 2, any_cid)).cid_hashes == std::vector<hash256>{m.cid_in_group});
  CHECK_ERRC(l->remove_action_from_group(w, m.a.hash, 2, any_cid), ledger_errc::unknown_action);
  CHECK_ERRC(l->remove_action_from_group(w, m.a.hash, 7, any_cid), ledger_errc::unknown_group);

  // A PKP may be in several groups; the same CID in groups of unrelated accounts.
  (void)MUST(l->add_pkp_to_group(w, m.a.hash, 1, m.wallet_free));
  (void)MUST(l->add_action_to_group(as(m2.a.admin), m2.a.hash, 1, m.cid_in_group));
  const std::vector<group> all = MUST(l->all_groups(m.a.hash));
  REQUIRE(all.size() == 3);
  CHECK(all[0].pkps == std::vector<address>{m.wallet_in_group, m.wallet_free});
  CHECK(all[1].pkps == std::vector<address>{m.wallet_free});
  CHECK(all[2].name == "four");
  CHECK(all[2].pkps.empty());
  // groups_listing (the execution rule's read) answers what filtering all_groups answers: the
  // groups listing the CID, in id order, with their PKPs, and nothing of other accounts.
  for (const hash256& cid : {m.cid_in_group, any_cid, h256(0x77)}) {
    std::vector<group> expected;
    for (const group& g : all)
      if (std::find(g.cid_hashes.begin(), g.cid_hashes.end(), cid) != g.cid_hashes.end())
        expected.push_back(g);
    const std::vector<group> listing = MUST(l->groups_listing(m.a.hash, cid));
    REQUIRE(listing.size() == expected.size());
    for (size_t i = 0; i < listing.size(); ++i) {
      CHECK(listing[i].id == expected[i].id);
      CHECK(listing[i].name == expected[i].name);
      CHECK(listing[i].pkps == expected[i].pkps);
      CHECK(listing[i].cid_hashes == std::vector<hash256>{cid});
    }
  }
  CHECK(!MUST(l->groups_listing(m.a.hash, m.cid_in_group)).empty());
  const std::vector<group> other = MUST(l->groups_listing(m2.a.hash, m.cid_in_group));
  REQUIRE(other.size() == 1);
  CHECK(other[0].id == 1);

  const page<wallet> in_group = MUST(l->list_wallets_in_group(m.a.hash, 1, {1, 20}));
  CHECK(in_group.total == 2);
  REQUIRE(in_group.items.size() == 2);
  CHECK(in_group.items[0].pkp_id == m.wallet_in_group);
  CHECK(in_group.items[1].pkp_id == m.wallet_free);
  CHECK(in_group.items[1].name == "wallet 2");
  CHECK(MUST(l->list_wallets_in_group(m.a.hash, 4, {1, 20})).total == 0);
  CHECK_ERRC(l->list_wallets_in_group(m.a.hash, 3, {1, 20}), ledger_errc::unknown_group);
}

void wallets(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);
  const prepared m2 = prepare(*l, 2, true);
  const write_context w = as(kPayer);

  const wallet w3 = make_wallet(1, 3);
  MUST(l->register_wallet(w, m.a.hash, w3));
  const wallet got = MUST(l->get_wallet(m.a.hash, w3.pkp_id));
  CHECK(got.pkp_id == w3.pkp_id);
  CHECK(got.derivation_path == w3.derivation_path);
  CHECK(got.name == w3.name);
  CHECK(got.description == w3.description);
  CHECK(got.created_at > 0);
  CHECK(MUST(l->wallet_count(m.a.hash)) == 3);
  CHECK(MUST(l->wallet_count(m2.a.hash)) == 2);

  CHECK_ERRC(l->register_wallet(w, m.a.hash, w3), ledger_errc::duplicate);
  CHECK_ERRC(l->get_wallet(m.a.hash, addr(0x66)), ledger_errc::unknown_wallet);
  CHECK_ERRC(l->get_wallet(m2.a.hash, w3.pkp_id), ledger_errc::unknown_wallet);
  wallet bad = make_wallet(1, 4);
  bad.name.clear();
  CHECK_ERRC(l->register_wallet(w, m.a.hash, bad), ledger_errc::invalid_argument);
  bad = make_wallet(1, 4);
  bad.description.assign(4097, 'd');
  CHECK_ERRC(l->register_wallet(w, m.a.hash, bad), ledger_errc::invalid_argument);
  bad = make_wallet(1, 4);
  bad.pkp_id = address{};
  CHECK_ERRC(l->register_wallet(w, m.a.hash, bad), ledger_errc::invalid_argument);
  CHECK(MUST(l->wallet_count(m.a.hash)) == 3);

  const page<wallet> all = MUST(l->list_wallets(m.a.hash, {1, 20}));
  CHECK(all.total == 3);
  REQUIRE(all.items.size() == 3);
  CHECK(all.items[0].pkp_id == m.wallet_in_group);
  CHECK(all.items[1].pkp_id == m.wallet_free);
  CHECK(all.items[2].pkp_id == w3.pkp_id);
}

void actions(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);
  const prepared m2 = prepare(*l, 2, true);
  const write_context w = as(kPayer);

  const action a = make_action("QmActionA", "a");
  MUST(l->add_action(w, m.a.hash, a));
  const action got = MUST(l->get_action(m.a.hash, a.hashed_cid));
  CHECK(got.cid == a.cid);
  CHECK(got.hashed_cid == a.hashed_cid);
  CHECK(got.name == "a");
  CHECK(got.description == a.description);
  CHECK(got.created_at > 0);
  CHECK_ERRC(l->add_action(w, m.a.hash, a), ledger_errc::duplicate);
  MUST(l->add_action(as(m2.a.admin), m2.a.hash, a));  // actions are per account

  action bad = make_action("QmBad");
  bad.hashed_cid = h256(0x12);
  CHECK_ERRC(l->add_action(w, m.a.hash, bad), ledger_errc::invalid_argument);
  bad = make_action("");
  CHECK_ERRC(l->add_action(w, m.a.hash, bad), ledger_errc::invalid_argument);
  bad = make_action("QmBad", "");
  CHECK_ERRC(l->add_action(w, m.a.hash, bad), ledger_errc::invalid_argument);

  const action renamed = MUST(l->update_action_metadata(w, m.a.hash, a.hashed_cid, "a2", "d2"));
  CHECK(renamed.name == "a2");
  CHECK(renamed.description == "d2");
  CHECK(renamed.cid == a.cid);
  CHECK(MUST(l->get_action(m.a.hash, a.hashed_cid)).name == "a2");
  CHECK(MUST(l->get_action(m2.a.hash, a.hashed_cid)).name == "a");
  CHECK_ERRC(l->update_action_metadata(w, m.a.hash, h256(0x12), "x", ""), ledger_errc::unknown_action);
  CHECK_ERRC(l->update_action_metadata(w, m.a.hash, a.hashed_cid, "", ""), ledger_errc::invalid_argument);
  CHECK_ERRC(l->get_action(m.a.hash, h256(0x12)), ledger_errc::unknown_action);

  // list_actions: registered actions, or a group's CIDs with metadata where registered.
  const hash256 unregistered = crypto::keccak256(std::string_view("QmUnregistered"));
  (void)MUST(l->add_action_to_group(w, m.a.hash, 1, unregistered));
  (void)MUST(l->add_action_to_group(w, m.a.hash, 1, a.hashed_cid));
  const page<action> registered = MUST(l->list_actions(m.a.hash, std::nullopt, {1, 20}));
  CHECK(registered.total == 2);
  REQUIRE(registered.items.size() == 2);
  CHECK(registered.items[0].hashed_cid == m.cid_in_group);
  CHECK(registered.items[1].hashed_cid == a.hashed_cid);
  const page<action> in_group = MUST(l->list_actions(m.a.hash, group_id{1}, {1, 20}));
  CHECK(in_group.total == 3);
  REQUIRE(in_group.items.size() == 3);
  CHECK(in_group.items[0].hashed_cid == m.cid_in_group);
  CHECK(in_group.items[0].cid == "QmPrepared1");
  CHECK(in_group.items[1].hashed_cid == unregistered);
  CHECK(in_group.items[1].cid.empty());
  CHECK(in_group.items[1].name.empty());
  CHECK(in_group.items[1].description.empty());
  CHECK(in_group.items[2].name == "a2");
  CHECK_ERRC(l->list_actions(m.a.hash, group_id{5}, {1, 20}), ledger_errc::unknown_group);

  // delete_action: gone, and out of every group of the account (not of other accounts).
  const group g2 = MUST(l->add_group(w, m.a.hash, make_group("g2", {}, {a.hashed_cid})));
  (void)MUST(l->add_action_to_group(as(m2.a.admin), m2.a.hash, 1, a.hashed_cid));
  MUST(l->delete_action(w, m.a.hash, a.hashed_cid));
  CHECK_ERRC(l->get_action(m.a.hash, a.hashed_cid), ledger_errc::unknown_action);
  CHECK_ERRC(l->delete_action(w, m.a.hash, a.hashed_cid), ledger_errc::unknown_action);
  CHECK(MUST(l->get_group(m.a.hash, 1)).cid_hashes == std::vector<hash256>{m.cid_in_group, unregistered});
  CHECK(MUST(l->get_group(m.a.hash, g2.id)).cid_hashes.empty());
  CHECK(MUST(l->get_group(m2.a.hash, 1)).cid_hashes == std::vector<hash256>{m2.cid_in_group, a.hashed_cid});
  CHECK(MUST(l->get_action(m2.a.hash, a.hashed_cid)).name == "a");
  // Deleting an action that no group lists.
  MUST(l->add_action(w, m.a.hash, make_action("QmLonely")));
  MUST(l->delete_action(w, m.a.hash, crypto::keccak256(std::string_view("QmLonely"))));
  CHECK(MUST(l->list_actions(m.a.hash, std::nullopt, {1, 20})).total == 1);
}

}  // namespace enact::ledger::test::conformance
