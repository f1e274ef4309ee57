// SPDX-License-Identifier: Apache-2.0
// Conformance cases: accounts, identity and sender rules, unknown accounts, conversion.
#include "conformance_cases.hpp"

namespace enact::ledger::test::conformance {

void accounts(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  CHECK(l->api_payers() == kPayers);

  const account m = make_account_record(1, true);
  MUST(l->new_account(as(kPayer), m));
  const account got = MUST(l->get_account(m.hash));
  CHECK(got.hash == m.hash);
  CHECK(got.admin == m.admin);
  CHECK(got.managed);
  CHECK(got.name == m.name);
  CHECK(got.description == m.description);
  CHECK(got.email == m.email);
  CHECK(got.created_at > 0);
  CHECK(MUST(l->account_by_admin(m.admin)).hash == m.hash);
  CHECK(MUST(l->wallet_count(m.hash)) == 0);

  // A wallet creates its own account, unmanaged, under its canonical hash (the other identity
  // rules are the "identity rules" case); the api_payer creates managed ones.
  MUST(l->new_account(as(addr(0x10, 3)), make_account_record(3, false)));
  CHECK_FALSE(MUST(l->get_account(canonical(addr(0x10, 3)))).managed);

  const uint64_t before = last_sequence(*l);
  CHECK_ERRC(l->new_account(as(kPayer), make_account_record(4, false)), ledger_errc::relay_not_allowed);
  CHECK_ERRC(l->new_account(as(kStranger), make_account_record(4, true)), ledger_errc::not_admin);
  CHECK_ERRC(l->new_account(as(kStranger), make_account_record(4, false)), ledger_errc::not_admin);
  CHECK_ERRC(l->new_account(as(kPayer), m), ledger_errc::duplicate);
  account same_admin = make_account_record(4, true);
  same_admin.admin = m.admin;
  CHECK_ERRC(l->new_account(as(kPayer), same_admin), ledger_errc::duplicate);

  struct bad_case {
    const char* what;
    std::function<void(account&)> spoil;
  };
  const bad_case bad[] = {
      {"empty name",
       [](account& a) {
         a.name.clear();
       }},
      {"name of 257 bytes",
       [](account& a) {
         a.name.assign(257, 'n');
       }},
      {"description of 4097 bytes",
       [](account& a) {
         a.description.assign(4097, 'd');
       }},
      {"zero admin",
       [](account& a) {
         a.admin = address{};
       }},
  };
  for (const bad_case& c : bad) {
    INFO(std::string(c.what));
    account a = make_account_record(5, true);
    c.spoil(a);
    CHECK_ERRC(l->new_account(as(kPayer), a), ledger_errc::invalid_argument);
    CHECK_ERRC(l->get_account(a.hash), ledger_errc::unknown_account);
  }
  account longest = make_account_record(6, true);
  longest.name.assign(256, 'n');
  longest.description.assign(4096, 'd');
  MUST(l->new_account(as(kPayer), longest));
  CHECK(MUST(l->get_account(longest.hash)).name.size() == 256);
  CHECK(last_sequence(*l) == before + 1);

  CHECK_ERRC(l->get_account(kGhost), ledger_errc::unknown_account);
  CHECK_ERRC(l->account_by_admin(kStranger), ledger_errc::unknown_account);
}

/// docs/protocol.md §3 "Identity rules": a wallet creates only its own unmanaged account under its
/// canonical hash, and account hashes and usage-key hashes are one namespace. Each refusal changes
/// nothing and appends no event.
void identity_rules(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared victim = prepare(*l, 1, true);  // API mode, with a usage key
  const address attacker = addr(0x60, 1);
  const account_hash own = canonical(attacker);
  account mine;
  mine.hash = own;
  mine.admin = attacker;
  mine.managed = false;
  mine.name = "attacker";
  MUST(l->new_account(as(attacker), mine));
  const usage_key victim_key = MUST(l->find_usage_key(victim.key));
  const std::string sv = snapshot(*l, victim.a.hash);
  const std::string so = snapshot(*l, own);
  const uint64_t before = last_sequence(*l);

  const auto wallet_account = [](const address& admin, const account_hash& h, bool managed) {
    account a;
    a.hash = h;
    a.admin = admin;
    a.managed = managed;
    a.name = "squat";
    return a;
  };
  const address other = addr(0x60, 2);
  // A wallet's account under a hash of its choosing: a victim's usage-key hash (the victim's key
  // would authenticate as the attacker's account), any other hash, another wallet's canonical hash.
  CHECK_ERRC(l->new_account(as(other), wallet_account(other, victim.key, false)), ledger_errc::hash_not_canonical);
  CHECK_ERRC(l->new_account(as(other), wallet_account(other, h256(0x61), false)), ledger_errc::hash_not_canonical);
  const address victim_wallet = addr(0x60, 3);
  CHECK_ERRC(l->new_account(as(other), wallet_account(other, canonical(victim_wallet), false)),
             ledger_errc::hash_not_canonical);
  // Naming the other wallet as admin is the sender rule's refusal.
  CHECK_ERRC(l->new_account(as(other), wallet_account(victim_wallet, canonical(victim_wallet), false)),
             ledger_errc::not_admin);
  // Managed from a wallet: refused, even under its own canonical hash.
  CHECK_ERRC(l->new_account(as(other), wallet_account(other, canonical(other), true)),
             ledger_errc::managed_not_allowed);
  // The api_payer may choose the hash, but not a usage key's.
  CHECK_ERRC(l->new_account(as(kPayer), wallet_account(addr(0x60, 4), victim.key, true)),
             ledger_errc::hash_is_usage_key);
  // A wallet's second account attempt: the rules pass, the state check refuses.
  CHECK_ERRC(l->new_account(as(attacker), mine), ledger_errc::duplicate);

  // setUsageApiKey under an account hash (the victim's, its own) or another account's key.
  usage_key k = make_key(own, 6, 1);
  k.hash = victim.a.hash;
  CHECK_ERRC(l->set_usage_key(as(attacker), k), ledger_errc::hash_is_account);
  k.hash = own;
  CHECK_ERRC(l->set_usage_key(as(attacker), k), ledger_errc::hash_is_account);
  k.hash = victim.key;
  CHECK_ERRC(l->set_usage_key(as(attacker), k), ledger_errc::usage_key_of_another_account);
  usage_key relayed = make_key(victim.a.hash, 6, 2);
  relayed.hash = victim.a.hash;
  CHECK_ERRC(l->set_usage_key(as(kPayer), relayed), ledger_errc::hash_is_account);
  // The sender rule runs first: writing to another account says nothing about the hash.
  k.account = victim.a.hash;
  k.hash = own;
  CHECK_ERRC(l->set_usage_key(as(attacker), k), ledger_errc::not_admin);

  CHECK(last_sequence(*l) == before);
  CHECK(snapshot(*l, victim.a.hash) == sv);
  CHECK(snapshot(*l, own) == so);
  CHECK(MUST(l->find_usage_key(victim.key)).account == victim.a.hash);
  CHECK_ERRC(l->get_account(victim.key), ledger_errc::unknown_account);
  CHECK_ERRC(l->get_account(canonical(victim_wallet)), ledger_errc::unknown_account);

  // What stays allowed: the victim wallet's own account, a fresh key, replacing one's own key
  // under the same hash (how an update works), reusing a removed key's hash.
  MUST(l->new_account(as(victim_wallet), wallet_account(victim_wallet, canonical(victim_wallet), false)));
  usage_key fresh = make_key(own, 6, 3);
  MUST(l->set_usage_key(as(attacker), fresh));
  fresh.name = "replaced";
  MUST(l->set_usage_key(as(attacker), fresh));
  CHECK(MUST(l->find_usage_key(fresh.hash)).name == "replaced");
  usage_key replaced = victim_key;
  replaced.name = "renamed by its own account";
  MUST(l->set_usage_key(as(kPayer), replaced));
  MUST(l->remove_usage_key(as(attacker), own, fresh.hash));
  usage_key reused = make_key(victim.a.hash, 6, 3);
  MUST(l->set_usage_key(as(kPayer), reused));
  CHECK(MUST(l->find_usage_key(reused.hash)).account == victim.a.hash);
  CHECK(last_sequence(*l) == before + 6);
}

void sender_rules(const backend_factory& make) {
  for (const write_op& op : write_ops()) {
    INFO("write: " << std::string(op.name));
    auto be = make(kPayers);
    auto l = be->open();
    const prepared m = prepare(*l, 1, true);   // written through the api_payer
    const prepared m2 = prepare(*l, 2, true);  // written by its own admin
    const prepared u = prepare(*l, 3, false);  // unmanaged: its admin only
    const std::string sm = snapshot(*l, m.a.hash);
    const std::string su = snapshot(*l, u.a.hash);
    const uint64_t before = last_sequence(*l);

    CHECK(op.run(*l, as(kStranger), m) == ledger_errc::not_admin);
    CHECK(op.run(*l, as(kStranger), u) == ledger_errc::not_admin);
    CHECK(op.run(*l, as(m2.a.admin), m) == ledger_errc::not_admin);  // another account's admin
    CHECK(op.run(*l, as(kPayer), u) == ledger_errc::relay_not_allowed);
    CHECK(op.run(*l, as(kPayer2), u) == ledger_errc::relay_not_allowed);
    CHECK(last_sequence(*l) == before);
    CHECK(snapshot(*l, m.a.hash) == sm);
    CHECK(snapshot(*l, u.a.hash) == su);

    CHECK(op.run(*l, as(kPayer), m) == std::error_code{});
    const std::string op_name = op.name;
    if (op_name == "convert_to_chain_secured") {
      // The admin (not an api_payer) converts only to itself: the new admin's consent.
      CHECK(op.run(*l, as(m2.a.admin), m2) == ledger_errc::new_admin_not_sender);
      MUST(l->convert_to_chain_secured(as(m2.a.admin), m2.a.hash, m2.a.admin));
    } else {
      CHECK(op.run(*l, as(m2.a.admin), m2) == std::error_code{});
    }
    if (op_name == "convert_to_chain_secured") {
      CHECK(op.run(*l, as(u.a.admin), u) == ledger_errc::already_unmanaged);
      CHECK(last_sequence(*l) == before + 2);
    } else {
      CHECK(op.run(*l, as(u.a.admin), u) == std::error_code{});
      CHECK(last_sequence(*l) == before + 3);
    }
    CHECK(snapshot(*l, m.a.hash) != sm);
  }
}

void unknown_account_everywhere(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  (void)prepare(*l, 1, true);
  prepared ghost;
  ghost.a = {kGhost, addr(0x10, 1)};
  ghost.n = 9;
  ghost.group = 1;
  for (const write_op& op : write_ops()) {
    INFO("write: " << std::string(op.name));
    CHECK(op.run(*l, as(kPayer), ghost) == ledger_errc::unknown_account);
  }
  CHECK_ERRC(l->list_usage_keys(kGhost, {1, 20}), ledger_errc::unknown_account);
  CHECK_ERRC(l->get_group(kGhost, 1), ledger_errc::unknown_account);
  CHECK_ERRC(l->list_groups(kGhost, {1, 20}), ledger_errc::unknown_account);
  CHECK_ERRC(l->all_groups(kGhost), ledger_errc::unknown_account);
  CHECK_ERRC(l->groups_listing(kGhost, h256(1)), ledger_errc::unknown_account);
  CHECK_ERRC(l->get_wallet(kGhost, addr(0x30, 1, 1)), ledger_errc::unknown_account);
  CHECK_ERRC(l->list_wallets(kGhost, {1, 20}), ledger_errc::unknown_account);
  CHECK_ERRC(l->list_wallets_in_group(kGhost, 1, {1, 20}), ledger_errc::unknown_account);
  CHECK_ERRC(l->wallet_count(kGhost), ledger_errc::unknown_account);
  CHECK_ERRC(l->get_action(kGhost, h256(1)), ledger_errc::unknown_account);
  CHECK_ERRC(l->list_actions(kGhost, std::nullopt, {1, 20}), ledger_errc::unknown_account);
  CHECK_ERRC(l->list_actions(kGhost, group_id{1}, {1, 20}), ledger_errc::unknown_account);
  CHECK(last_sequence(*l) == 6);  // the prepared account's six writes
}

void conversion(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);
  const prepared m2 = prepare(*l, 2, true);
  const address new_admin = addr(0x50, 1);

  CHECK_ERRC(l->convert_to_chain_secured(as(kPayer), m.a.hash, address{}), ledger_errc::invalid_argument);
  CHECK_ERRC(l->convert_to_chain_secured(as(kPayer), m.a.hash, m2.a.admin), ledger_errc::duplicate);
  CHECK(MUST(l->get_account(m.a.hash)).managed);

  const uint64_t before = last_sequence(*l);
  MUST(l->convert_to_chain_secured(as(kPayer), m.a.hash, new_admin));
  const account after = MUST(l->get_account(m.a.hash));
  CHECK_FALSE(after.managed);
  CHECK(after.admin == new_admin);
  CHECK(after.hash == m.a.hash);
  CHECK(MUST(l->account_by_admin(new_admin)).hash == m.a.hash);
  CHECK_ERRC(l->account_by_admin(m.a.admin), ledger_errc::unknown_account);
  // Groups, wallets, actions and keys survive the conversion (core-api "States and transitions").
  CHECK(MUST(l->all_groups(m.a.hash)).size() == 1);
  CHECK(MUST(l->find_usage_key(m.key)).account == m.a.hash);
  CHECK(MUST(l->wallet_count(m.a.hash)) == 2);

  // One-way: no second conversion, by anyone.
  CHECK_ERRC(l->convert_to_chain_secured(as(new_admin), m.a.hash, addr(0x51)), ledger_errc::already_unmanaged);
  CHECK_ERRC(l->convert_to_chain_secured(as(kPayer), m.a.hash, addr(0x51)), ledger_errc::relay_not_allowed);
  CHECK_ERRC(l->convert_to_chain_secured(as(m.a.admin), m.a.hash, addr(0x51)), ledger_errc::not_admin);
  // The relay and the old admin are refused from now on; the new admin writes.
  CHECK_ERRC(l->add_group(as(kPayer), m.a.hash, make_group("x")), ledger_errc::relay_not_allowed);
  CHECK_ERRC(l->add_group(as(m.a.admin), m.a.hash, make_group("x")), ledger_errc::not_admin);
  CHECK(MUST(l->add_group(as(new_admin), m.a.hash, make_group("x"))).id == 2);
  CHECK(last_sequence(*l) == before + 2);

  // The admin of a managed account may convert it too, to its own address.
  MUST(l->convert_to_chain_secured(as(m2.a.admin), m2.a.hash, m2.a.admin));
  CHECK_FALSE(MUST(l->get_account(m2.a.hash)).managed);
  CHECK(MUST(l->account_by_admin(m2.a.admin)).hash == m2.a.hash);
  // Converting onto one's own admin address is a plain mode switch.
  const prepared m3 = prepare(*l, 3, true);
  MUST(l->convert_to_chain_secured(as(kPayer), m3.a.hash, m3.a.admin));
  CHECK(MUST(l->get_account(m3.a.hash)).admin == m3.a.admin);
}

/// The new admin's consent (docs/protocol.md §3): an account is handed to another wallet only by an
/// api_payer's relay (the server checked that wallet's ConvertAccount envelope). The attack: an
/// account holder converts the account it prepared (usage keys included) to a victim wallet that
/// never signed; the victim could then not create its own account, and its signature mints and
/// X-Wallet-Auth billing would land in the attacker's account.
void conversion_consent(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);  // API mode: the account key's wallet is the admin
  const address victim = addr(0x10, 7);
  const std::string before_state = snapshot(*l, m.a.hash);
  const uint64_t before = last_sequence(*l);

  CHECK_ERRC(l->convert_to_chain_secured(as(m.a.admin), m.a.hash, victim), ledger_errc::new_admin_not_sender);
  CHECK(snapshot(*l, m.a.hash) == before_state);
  CHECK(last_sequence(*l) == before);
  CHECK_ERRC(l->account_by_admin(victim), ledger_errc::unknown_account);
  const account still = MUST(l->get_account(m.a.hash));
  CHECK(still.managed);
  CHECK(still.admin == m.a.admin);
  // The order of the other refusals is kept: zero first, the sender rule before everything.
  CHECK_ERRC(l->convert_to_chain_secured(as(m.a.admin), m.a.hash, address{}), ledger_errc::invalid_argument);
  CHECK_ERRC(l->convert_to_chain_secured(as(kStranger), m.a.hash, kStranger), ledger_errc::not_admin);

  // The victim's own account is still free for it.
  account own = make_account_record(7, false);
  REQUIRE(own.admin == victim);
  MUST(l->new_account(as(victim), own));
  CHECK(MUST(l->account_by_admin(victim)).hash == canonical(victim));
  // Nor does a relay hand it a second account.
  CHECK_ERRC(l->convert_to_chain_secured(as(kPayer), m.a.hash, victim), ledger_errc::duplicate);

  // The relay carries a consenting wallet's conversion; the admin's own is a mode switch.
  const address consenting = addr(0x50, 9);
  MUST(l->convert_to_chain_secured(as(kPayer2), m.a.hash, consenting));
  CHECK(MUST(l->account_by_admin(consenting)).hash == m.a.hash);
  const prepared m2 = prepare(*l, 2, true);
  MUST(l->convert_to_chain_secured(as(m2.a.admin), m2.a.hash, m2.a.admin));
  CHECK_FALSE(MUST(l->get_account(m2.a.hash)).managed);
  // A ChainSecured account's admin converts no further (one-way), to anyone.
  CHECK_ERRC(l->convert_to_chain_secured(as(m2.a.admin), m2.a.hash, victim), ledger_errc::already_unmanaged);
}

}  // namespace enact::ledger::test::conformance
