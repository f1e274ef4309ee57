// The permission-ledger conformance cases (API.md §3, ledger.hpp): sender rules of every write,
// one-way conversion, atomic charges, the event log, not-found and duplicate paths, pagination,
// payments, persistence and concurrent writers. Written against permission_ledger& only.
#include "conformance.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::ledger::test {
namespace {

// --- identifiers and records -----------------------------------------------------------------

address addr(uint8_t a, uint8_t b = 0, uint8_t c = 0) {
  address x{};
  x[0] = a;
  x[1] = b;
  x[2] = c;
  x[19] = 1;
  return x;
}
hash256 h256(uint8_t a, uint8_t b = 0, uint8_t c = 0) {
  hash256 x{};
  x[0] = a;
  x[1] = b;
  x[2] = c;
  x[31] = 1;
  return x;
}
template <size_t N>
std::string hx(const std::array<uint8_t, N>& v) {
  return hex::encode_prefixed(v);
}

const address kPayer = addr(0xA0);
const address kPayer2 = addr(0xA1);
const address kStranger = addr(0xEE);
const std::vector<address> kPayers = {kPayer, kPayer2};
const account_hash kGhost = h256(0xFF);

struct acct {
  account_hash hash{};
  address admin{};
};

write_context as(const address& sender, uint64_t charge = 0) { return write_context{sender, charge}; }

/// API.md §1: the hash of an account a wallet creates, keccak256(abi.encodePacked(wallet)).
account_hash canonical(const address& wallet) { return keccak256(bytes_view(wallet)); }

/// A managed record has an API-mode hash; an unmanaged one the canonical hash of its admin, the
/// only one a wallet may create (API.md §3 identity rules).
account make_account_record(uint8_t n, bool managed) {
  account a;
  a.admin = addr(0x10, n);
  a.hash = managed ? h256(0x10, n) : canonical(a.admin);
  a.managed = managed;
  a.name = "account " + std::to_string(n);
  a.description = "conformance account";
  a.email = "owner" + std::to_string(n) + "@example.org";
  return a;
}

/// A managed account is created by the api_payer (API mode), an unmanaged one by its admin.
acct make_account(permission_ledger& l, uint8_t n, bool managed) {
  const account a = make_account_record(n, managed);
  MUST(l.new_account(as(managed ? kPayer : a.admin), a));
  return {a.hash, a.admin};
}

wallet make_wallet(uint8_t n, uint8_t i) {
  wallet w;
  w.pkp_id = addr(0x30, n, i);
  w.derivation_path = h256(0x30, n, i);
  w.name = "wallet " + std::to_string(i);
  w.description = "pkp";
  return w;
}

action make_action(const std::string& cid, const std::string& name = "action") {
  action a;
  a.cid = cid;
  a.hashed_cid = keccak256(std::string_view(cid));
  a.name = name;
  a.description = "does things";
  return a;
}

usage_key make_key(const account_hash& account, uint8_t n, uint8_t i) {
  usage_key k;
  k.hash = h256(0x40, n, i);
  k.account = account;
  k.wallet = addr(0x40, n, i);
  k.name = "key " + std::to_string(i);
  k.description = "usage";
  k.expiration = 1'900'000'000;
  k.balance = 5;
  k.permissions.can_create_groups = true;
  k.permissions.execute_in_groups = {0};
  k.permissions.add_pkp_to_groups = {1, 2};
  return k;
}

group make_group(const std::string& name, std::vector<address> pkps = {}, std::vector<hash256> cids = {}) {
  group g;
  g.name = name;
  g.description = name + " description";
  g.pkps = std::move(pkps);
  g.cid_hashes = std::move(cids);
  return g;
}

void fund(permission_ledger& l, const account_hash& h, uint64_t amount, const std::string& id) {
  const payment p = make_payment(h, id, amount);
  MUST(l.record_payment(p));
  (void)MUST(l.credit_payment(h, id));
}

std::vector<event> all_events(const permission_ledger& l, uint64_t after = 0) {
  std::vector<event> out;
  for (;;) {
    std::vector<event> batch = MUST(l.events_after(after, 500));
    if (batch.empty())
      return out;
    after = batch.back().sequence;
    out.insert(out.end(), batch.begin(), batch.end());
  }
}

uint64_t last_sequence(const permission_ledger& l) {
  const std::vector<event> e = all_events(l);
  return e.empty() ? 0 : e.back().sequence;
}

/// Everything the ledger shows about an account, as text: equal snapshots = nothing changed.
std::string snapshot(const permission_ledger& l, const account_hash& h) {
  std::string s;
  const account a = MUST(l.get_account(h));
  s += "account " + hx(a.admin) + (a.managed ? " managed " : " unmanaged ") + a.name + "|" + a.description + "|" +
       a.email + "\n";
  s += "balance " + std::to_string(MUST(l.balance(h))) + "\n";
  s += "wallet_count " + std::to_string(MUST(l.wallet_count(h))) + "\n";
  for (const group& g : MUST(l.all_groups(h))) {
    s += "group " + std::to_string(g.id) + " " + g.name + "|" + g.description;
    for (const address& p : g.pkps)
      s += " pkp " + hx(p);
    for (const hash256& c : g.cid_hashes)
      s += " cid " + hx(c);
    s += "\n";
  }
  for (const usage_key& k : MUST(l.list_usage_keys(h, {1, 100})).items)
    s += "key " + hx(k.hash) + " " + k.name + "|" + k.description + " " + std::to_string(k.expiration) + " " +
         std::to_string(k.balance) + " " + boost::json::serialize(boost::json::value_from(k.permissions)) + "\n";
  for (const wallet& w : MUST(l.list_wallets(h, {1, 100})).items)
    s += "wallet " + hx(w.pkp_id) + " " + hx(w.derivation_path) + " " + w.name + "|" + w.description + "\n";
  for (const action& x : MUST(l.list_actions(h, std::nullopt, {1, 100})).items)
    s += "action " + hx(x.hashed_cid) + " " + x.cid + " " + x.name + "|" + x.description + "\n";
  return s;
}

// --- an account with one of everything -------------------------------------------------------

struct prepared {
  acct a;
  uint8_t n = 0;
  address wallet_in_group{};  // registered, in group 1
  address wallet_free{};      // registered, in no group
  hash256 key{};              // a usage key
  hash256 cid_in_group{};     // a registered action, listed in group 1
  group_id group = 0;
};

prepared prepare(permission_ledger& l, uint8_t n, bool managed) {
  prepared p;
  p.n = n;
  p.a = make_account(l, n, managed);
  const write_context w = as(p.a.admin);
  const wallet w1 = make_wallet(n, 1);
  const wallet w2 = make_wallet(n, 2);
  MUST(l.register_wallet(w, p.a.hash, w1));
  MUST(l.register_wallet(w, p.a.hash, w2));
  const action act = make_action("QmPrepared" + std::to_string(n));
  MUST(l.add_action(w, p.a.hash, act));
  const group g = MUST(l.add_group(w, p.a.hash, make_group("g", {w1.pkp_id}, {act.hashed_cid})));
  REQUIRE(g.id == 1);
  const usage_key k = make_key(p.a.hash, n, 1);
  MUST(l.set_usage_key(w, k));
  p.wallet_in_group = w1.pkp_id;
  p.wallet_free = w2.pkp_id;
  p.key = k.hash;
  p.cid_in_group = act.hashed_cid;
  p.group = g.id;
  return p;
}

/// Every registry write that names an account, each valid once on a `prepared` account.
struct write_op {
  const char* name;
  std::function<std::error_code(permission_ledger&, const write_context&, const prepared&)> run;
};

std::vector<write_op> write_ops() {
  using L = permission_ledger;
  using W = write_context;
  using P = prepared;
  return {
      {"set_usage_key",
       [](L& l, const W& w, const P& p) {
         return l.set_usage_key(w, make_key(p.a.hash, p.n, 2)).code();
       }},
      {"update_usage_key_metadata",
       [](L& l, const W& w, const P& p) {
         return l.update_usage_key_metadata(w, p.a.hash, p.key, "renamed", "").code();
       }},
      {"remove_usage_key",
       [](L& l, const W& w, const P& p) {
         return l.remove_usage_key(w, p.a.hash, p.key).code();
       }},
      {"add_group",
       [](L& l, const W& w, const P& p) {
         return l.add_group(w, p.a.hash, make_group("new", {p.wallet_free})).code();
       }},
      {"update_group",
       [](L& l, const W& w, const P& p) {
         group g = make_group("updated", {p.wallet_free}, {h256(0x77)});
         g.id = p.group;
         return l.update_group(w, p.a.hash, g).code();
       }},
      {"remove_group",
       [](L& l, const W& w, const P& p) {
         return l.remove_group(w, p.a.hash, p.group).code();
       }},
      {"add_pkp_to_group",
       [](L& l, const W& w, const P& p) {
         return l.add_pkp_to_group(w, p.a.hash, p.group, p.wallet_free).code();
       }},
      {"remove_pkp_from_group",
       [](L& l, const W& w, const P& p) {
         return l.remove_pkp_from_group(w, p.a.hash, p.group, p.wallet_in_group).code();
       }},
      {"add_action_to_group",
       [](L& l, const W& w, const P& p) {
         return l.add_action_to_group(w, p.a.hash, p.group, h256(0x77)).code();
       }},
      {"remove_action_from_group",
       [](L& l, const W& w, const P& p) {
         return l.remove_action_from_group(w, p.a.hash, p.group, p.cid_in_group).code();
       }},
      {"register_wallet",
       [](L& l, const W& w, const P& p) {
         return l.register_wallet(w, p.a.hash, make_wallet(p.n, 3)).code();
       }},
      {"add_action",
       [](L& l, const W& w, const P& p) {
         return l.add_action(w, p.a.hash, make_action("QmNewAction")).code();
       }},
      {"update_action_metadata",
       [](L& l, const W& w, const P& p) {
         return l.update_action_metadata(w, p.a.hash, p.cid_in_group, "renamed", "d").code();
       }},
      {"delete_action",
       [](L& l, const W& w, const P& p) {
         return l.delete_action(w, p.a.hash, p.cid_in_group).code();
       }},
      {"convert_to_chain_secured",
       [](L& l, const W& w, const P& p) {
         return l.convert_to_chain_secured(w, p.a.hash, addr(0x50, p.n)).code();
       }},
  };
}

// --- cases -----------------------------------------------------------------------------------

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
  CHECK(MUST(l->balance(m.hash)) == 0);
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

/// API.md §3 "Identity rules": a wallet creates only its own unmanaged account under its
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
  CHECK_ERRC(l->balance(kGhost), ledger_errc::unknown_account);
  CHECK_ERRC(l->debit(kGhost, 1), ledger_errc::unknown_account);
  CHECK_ERRC(l->get_payment(kGhost, "pi_1"), ledger_errc::unknown_account);
  CHECK_ERRC(l->credit_payment(kGhost, "pi_1"), ledger_errc::unknown_account);
  const payment p = make_payment(kGhost, "pi_ghost", 500);
  CHECK_ERRC(l->record_payment(p), ledger_errc::unknown_account);
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

/// The new admin's consent (API.md §3): an account is handed to another wallet only by an
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

void charges(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const prepared m = prepare(*l, 1, true);
  fund(*l, m.a.hash, 10, "pi_charges");
  CHECK(MUST(l->balance(m.a.hash)) == 10);

  // A charge is debited with the write.
  CHECK(MUST(l->add_group(as(kPayer, 3), m.a.hash, make_group("paid"))).id == 2);
  CHECK(MUST(l->balance(m.a.hash)) == 7);

  // Short balance: error, and neither the debit nor the change nor an event.
  const std::string before_state = snapshot(*l, m.a.hash);
  const uint64_t before = last_sequence(*l);
  CHECK_ERRC(l->add_group(as(kPayer, 8), m.a.hash, make_group("unpaid")), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->register_wallet(as(kPayer, 8), m.a.hash, make_wallet(1, 9)), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->set_usage_key(as(kPayer, 8), make_key(m.a.hash, 1, 9)), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->remove_usage_key(as(kPayer, 8), m.a.hash, m.key), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->delete_action(as(kPayer, 8), m.a.hash, m.cid_in_group), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->convert_to_chain_secured(as(kPayer, 8), m.a.hash, addr(0x50, 1)), ledger_errc::insufficient_credits);
  CHECK(snapshot(*l, m.a.hash) == before_state);
  CHECK(last_sequence(*l) == before);

  // A failing change returns the charge: nothing half-written.
  CHECK_ERRC(l->remove_group(as(kPayer, 2), m.a.hash, 99), ledger_errc::unknown_group);
  CHECK(MUST(l->balance(m.a.hash)) == 7);
  // The thing written is checked before the charge, even when the balance is short.
  CHECK_ERRC(l->update_usage_key_metadata(as(kPayer, 8), m.a.hash, h256(0x99), "x", ""),
             ledger_errc::unknown_usage_key);
  CHECK_ERRC(l->remove_usage_key(as(kPayer, 8), m.a.hash, h256(0x99)), ledger_errc::unknown_usage_key);
  CHECK_ERRC(l->remove_group(as(kPayer, 8), m.a.hash, 99), ledger_errc::unknown_group);

  // The whole balance may be spent; the next group id was not consumed by the failures.
  CHECK(MUST(l->add_group(as(kPayer, 7), m.a.hash, make_group("last"))).id == 3);
  CHECK(MUST(l->balance(m.a.hash)) == 0);
  CHECK_ERRC(l->add_group(as(kPayer, 1), m.a.hash, make_group("broke")), ledger_errc::insufficient_credits);
  // A charge on new_account meets an empty balance.
  CHECK_ERRC(l->new_account(as(kPayer, 1), make_account_record(7, true)), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->get_account(h256(0x10, 7)), ledger_errc::unknown_account);

  // debit: the run-action price.
  fund(*l, m.a.hash, 20, "pi_charges_2");
  const uint64_t seq = last_sequence(*l);
  CHECK(MUST(l->debit(m.a.hash, 15)) == 5);
  CHECK_ERRC(l->debit(m.a.hash, 6), ledger_errc::insufficient_credits);
  CHECK_ERRC(l->debit(m.a.hash, 0), ledger_errc::invalid_argument);
  CHECK(MUST(l->debit(m.a.hash, 5)) == 0);
  CHECK(MUST(l->balance(m.a.hash)) == 0);
  CHECK(last_sequence(*l) == seq + 2);
}

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
  const payment p = make_payment(h, "pi_events", 700);
  MUST(l->record_payment(p));
  (void)MUST(l->credit_payment(h, "pi_events"));
  (void)MUST(l->debit(h, 100));
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
                                             "PaymentCredited",
                                             "CreditsDebited",
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
  // The sender is the write's msg.sender; server-side bookkeeping has none.
  CHECK(events[0].sender == kPayer);
  CHECK(events[6].sender == rec.admin);
  CHECK(events[15].sender == address{});
  CHECK(events[16].sender == address{});
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
  CHECK(events[15].data.at("amountCents").to_number<uint64_t>() == 700);
  CHECK(events[16].data.at("amount").to_number<uint64_t>() == 100);
  CHECK(events[17].data.at("newAdmin").as_string() == hx(addr(0x50, 1)));

  // events_after pages by sequence.
  const std::vector<event> mid = MUST(l->events_after(2, 3));
  REQUIRE(mid.size() == 3);
  CHECK(mid[0].sequence == 3);
  CHECK(mid[2].sequence == 5);
  CHECK(MUST(l->events_after(18, 10)).empty());
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
  CHECK(keys.items[0].permissions == scope::permission_set{});
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
  const hash256 any_cid = keccak256(std::string_view("QmNotRegisteredAnywhere"));

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
  const hash256 unregistered = keccak256(std::string_view("QmUnregistered"));
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
  MUST(l->delete_action(w, m.a.hash, keccak256(std::string_view("QmLonely"))));
  CHECK(MUST(l->list_actions(m.a.hash, std::nullopt, {1, 20})).total == 1);
}

/// Pages of size 3 over `expected` (in creation order): 3, 3, …, the rest, then empty.
template <class T, class List, class Key, class K>
void check_paging(List list, Key key, const std::vector<K>& expected) {
  std::vector<K> seen;
  const uint64_t pages = (expected.size() + 2) / 3;
  for (uint64_t n = 1; n <= pages + 1; ++n) {
    INFO("page ", n);
    const page<T> p = MUST(list(page_request{n, 3}));
    CHECK(p.total == expected.size());
    const size_t want = n <= pages ? std::min<size_t>(3, expected.size() - (n - 1) * 3) : 0;
    CHECK(p.items.size() == want);
    for (const T& item : p.items)
      seen.push_back(key(item));
  }
  CHECK(seen == expected);
  const page<T> whole = MUST(list(page_request{1, 100}));
  CHECK(whole.items.size() == expected.size());
}

void pagination(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const acct a = make_account(*l, 1, true);
  const write_context w = as(kPayer);
  std::vector<address> pkps;
  std::vector<hash256> keys;
  std::vector<hash256> cids;
  std::vector<group_id> group_ids;
  // Keys and wallets get descending byte values so creation order differs from byte order.
  for (uint8_t i = 0; i < 7; ++i) {
    const wallet wl = make_wallet(1, static_cast<uint8_t>(200 - i));
    MUST(l->register_wallet(w, a.hash, wl));
    pkps.push_back(wl.pkp_id);
    const usage_key k = make_key(a.hash, 1, static_cast<uint8_t>(200 - i));
    MUST(l->set_usage_key(w, k));
    keys.push_back(k.hash);
    const action act = make_action("QmPage" + std::to_string(7 - i));
    MUST(l->add_action(w, a.hash, act));
    cids.push_back(act.hashed_cid);
    group_ids.push_back(MUST(l->add_group(w, a.hash, make_group("g" + std::to_string(i)))).id);
  }
  check_paging<wallet>([&](page_request p) { return l->list_wallets(a.hash, p); },
                       [](const wallet& x) { return x.pkp_id; }, pkps);
  check_paging<usage_key>([&](page_request p) { return l->list_usage_keys(a.hash, p); },
                          [](const usage_key& x) { return x.hash; }, keys);
  check_paging<action>([&](page_request p) { return l->list_actions(a.hash, std::nullopt, p); },
                       [](const action& x) { return x.hashed_cid; }, cids);
  check_paging<group>([&](page_request p) { return l->list_groups(a.hash, p); }, [](const group& x) { return x.id; },
                      group_ids);

  // Within a group: the group's own order (here the reverse of registration).
  group big = make_group("big");
  big.pkps.assign(pkps.rbegin(), pkps.rend());
  big.cid_hashes.assign(cids.rbegin(), cids.rend());
  const group_id id = MUST(l->add_group(w, a.hash, big)).id;
  check_paging<wallet>([&](page_request p) { return l->list_wallets_in_group(a.hash, id, p); },
                       [](const wallet& x) { return x.pkp_id; }, big.pkps);
  check_paging<action>([&](page_request p) { return l->list_actions(a.hash, id, p); },
                       [](const action& x) { return x.hashed_cid; }, big.cid_hashes);

  // list_groups carries the members of each listed group.
  const page<group> last = MUST(l->list_groups(a.hash, {3, 3}));
  REQUIRE(last.items.size() == 2);
  CHECK(last.items[1].id == id);
  CHECK(last.items[1].pkps == big.pkps);
  CHECK(last.items[1].cid_hashes == big.cid_hashes);
  // Empty account lists.
  const acct empty = make_account(*l, 2, true);
  const page<group> none = MUST(l->list_groups(empty.hash, {1, 20}));
  CHECK(none.total == 0);
  CHECK(none.items.empty());
}

void payments(const backend_factory& make) {
  auto be = make(kPayers);
  auto l = be->open();
  const acct a = make_account(*l, 1, true);
  const acct b = make_account(*l, 2, true);

  payment p = make_payment(a.hash, "pi_123", 500, "stripe");
  const uint64_t before = last_sequence(*l);
  MUST(l->record_payment(p));
  CHECK(last_sequence(*l) == before);  // recording changes no balance
  const payment got = MUST(l->get_payment(a.hash, "pi_123"));
  CHECK(got.intent_id == "pi_123");
  CHECK(got.account == a.hash);
  CHECK(got.amount_cents == 500);
  CHECK(got.provider == "stripe");
  CHECK_FALSE(got.credited);
  CHECK(got.created_at > 0);
  CHECK_ERRC(l->record_payment(p), ledger_errc::duplicate);
  payment elsewhere = p;
  elsewhere.account = b.hash;
  CHECK_ERRC(l->record_payment(elsewhere), ledger_errc::duplicate);  // intent ids are global

  payment bad = p;
  bad.intent_id = "pi_zero";
  bad.amount_cents = 0;
  CHECK_ERRC(l->record_payment(bad), ledger_errc::invalid_argument);
  bad = p;
  bad.intent_id.clear();
  CHECK_ERRC(l->record_payment(bad), ledger_errc::invalid_argument);

  CHECK(MUST(l->credit_payment(a.hash, "pi_123")) == 500);
  CHECK(MUST(l->get_payment(a.hash, "pi_123")).credited);
  CHECK_ERRC(l->credit_payment(a.hash, "pi_123"), ledger_errc::already_credited);
  CHECK(MUST(l->balance(a.hash)) == 500);
  CHECK(last_sequence(*l) == before + 1);

  CHECK_ERRC(l->get_payment(a.hash, "pi_unknown"), ledger_errc::unknown_payment);
  CHECK_ERRC(l->credit_payment(a.hash, "pi_unknown"), ledger_errc::unknown_payment);
  CHECK_ERRC(l->get_payment(b.hash, "pi_123"), ledger_errc::unknown_payment);
  CHECK_ERRC(l->credit_payment(b.hash, "pi_123"), ledger_errc::unknown_payment);
  CHECK(MUST(l->balance(b.hash)) == 0);

  p.intent_id = "pi_456";
  p.amount_cents = 1200;
  MUST(l->record_payment(p));
  CHECK(MUST(l->credit_payment(a.hash, "pi_456")) == 1700);
}

void persistence(const backend_factory& make) {
  auto be = make(kPayers);
  prepared m;
  std::string state;
  std::vector<event> events;
  {
    auto l = be->open();
    m = prepare(*l, 1, true);
    (void)MUST(l->add_group(as(kPayer), m.a.hash, make_group("two")));
    MUST(l->remove_group(as(kPayer), m.a.hash, 2));
    fund(*l, m.a.hash, 900, "pi_persist");
    payment open_intent;
    open_intent.intent_id = "pi_open";
    open_intent.account = m.a.hash;
    open_intent.amount_cents = 600;
    open_intent.provider = "dev";
    MUST(l->record_payment(open_intent));
    state = snapshot(*l, m.a.hash);
    events = all_events(*l);
  }
  auto l = be->open();
  CHECK(snapshot(*l, m.a.hash) == state);
  const std::vector<event> reread = all_events(*l);
  REQUIRE(reread.size() == events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(reread[i].sequence == events[i].sequence);
    CHECK(reread[i].name == events[i].name);
    CHECK(reread[i].data == events[i].data);
  }
  CHECK(MUST(l->find_usage_key(m.key)).account == m.a.hash);
  CHECK_FALSE(MUST(l->get_payment(m.a.hash, "pi_open")).credited);
  CHECK_ERRC(l->credit_payment(m.a.hash, "pi_persist"), ledger_errc::already_credited);
  // Counters continue: the next group id and the event sequence.
  CHECK(MUST(l->add_group(as(kPayer), m.a.hash, make_group("three"))).id == 3);
  CHECK(last_sequence(*l) == events.back().sequence + 1);
  CHECK(MUST(l->credit_payment(m.a.hash, "pi_open")) == 1500);
}

void concurrent_writers(const backend_factory& make) {
  constexpr int kThreads = 2;
  constexpr int kWritesPerThread = 500;
  constexpr uint64_t kFunds = 1'000'000;
  auto be = make(kPayers);
  auto l = be->open();
  const acct a = make_account(*l, 1, true);
  fund(*l, a.hash, kFunds, "pi_concurrent");
  const uint64_t start = last_sequence(*l);

  // Each thread cycles through five writes with different charges; a reader runs alongside.
  std::atomic<int> failures{0};
  std::mutex first_failure_mu;
  std::string first_failure;
  const auto note = [&](const std::error_code& ec, const std::string& what) {
    if (!ec)
      return;
    if (failures.fetch_add(1) == 0) {
      std::lock_guard lock(first_failure_mu);
      first_failure = what + ": " + ec.message();
    }
  };
  std::atomic<bool> writing{true};
  std::atomic<int> read_failures{0};
  std::thread reader([&] {
    while (writing.load()) {
      const auto k = l->find_usage_key(h256(0x40, 0, 0));
      if (!k && k.code() != ledger_errc::unknown_usage_key)
        read_failures.fetch_add(1);
      if (!l->all_groups(a.hash))
        read_failures.fetch_add(1);
    }
  });
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kWritesPerThread; ++i) {
        const auto tt = static_cast<uint8_t>(t);
        const auto hi = static_cast<uint8_t>(i >> 8);
        const auto lo = static_cast<uint8_t>(i & 0xff);
        const std::string tag = std::to_string(t) + "-" + std::to_string(i);
        switch (i % 5) {
          case 0:
            note(l->add_group(as(kPayer, 1), a.hash, make_group("g" + tag)).code(), "add_group");
            break;
          case 1: {
            wallet wl;
            wl.pkp_id = addr(0x31 + tt, hi, lo);
            wl.derivation_path = h256(0x31 + tt, hi, lo);
            wl.name = "w" + tag;
            note(l->register_wallet(as(a.admin, 1), a.hash, wl).code(), "register_wallet");
            break;
          }
          case 2:
            note(l->add_action(as(kPayer2, 2), a.hash, make_action("Qm" + tag)).code(), "add_action");
            break;
          case 3: {
            usage_key k = make_key(a.hash, 0, 0);
            k.hash = h256(0x41 + tt, hi, lo);
            k.name = "k" + tag;
            note(l->set_usage_key(as(kPayer, 1), k).code(), "set_usage_key");
            break;
          }
          default:
            note(l->debit(a.hash, 3).code(), "debit");
            break;
        }
      }
    });
  }
  for (std::thread& t : writers)
    t.join();
  writing.store(false);
  reader.join();

  INFO("first failure: ", first_failure);
  CHECK(failures.load() == 0);
  CHECK(read_failures.load() == 0);
  constexpr uint64_t kEach = kThreads * kWritesPerThread / 5;  // writes of each kind
  const std::vector<group> gs = MUST(l->all_groups(a.hash));
  CHECK(gs.size() == kEach);
  std::set<group_id> ids;
  for (const group& g : gs)
    ids.insert(g.id);
  CHECK(ids.size() == kEach);
  CHECK(*ids.begin() == 1);
  CHECK(*ids.rbegin() == kEach);
  CHECK(MUST(l->list_groups(a.hash, {1, 1})).total == kEach);
  CHECK(MUST(l->list_wallets(a.hash, {1, 1})).total == kEach);
  CHECK(MUST(l->wallet_count(a.hash)) == kEach);
  CHECK(MUST(l->list_actions(a.hash, std::nullopt, {1, 1})).total == kEach);
  CHECK(MUST(l->list_usage_keys(a.hash, {1, 1})).total == kEach);
  // Charges: add_group 1, register_wallet 1, add_action 2, set_usage_key 1, debit 3.
  CHECK(MUST(l->balance(a.hash)) == kFunds - kEach * (1 + 1 + 2 + 1 + 3));

  const std::vector<event> events = all_events(*l, start);
  CHECK(events.size() == kThreads * kWritesPerThread);
  std::map<std::string, uint64_t> by_name;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].sequence != start + 1 + i) {
      FAIL_CHECK("event sequence gap at index " << i << ": " << events[i].sequence);
      break;
    }
    ++by_name[events[i].name];
  }
  const std::map<std::string, uint64_t> want = {{"GroupAdded", kEach},
                                                {"WalletDerivationRegistered", kEach},
                                                {"ActionAdded", kEach},
                                                {"UsageApiKeySet", kEach},
                                                {"CreditsDebited", kEach}};
  CHECK(by_name == want);
}

}  // namespace

payment make_payment(const account_hash& account, std::string intent_id, uint64_t cents, std::string provider) {
  payment p;
  p.intent_id = std::move(intent_id);
  p.account = account;
  p.amount_cents = cents;
  p.provider = std::move(provider);
  return p;
}

void run_conformance(const backend_factory& make) {
  SUBCASE("accounts") { accounts(make); }
  SUBCASE("identity rules: canonical wallet accounts, one namespace of hashes") { identity_rules(make); }
  SUBCASE("sender rules of every write") { sender_rules(make); }
  SUBCASE("unknown account on every call") { unknown_account_everywhere(make); }
  SUBCASE("conversion is one-way and switches the admin") { conversion(make); }
  SUBCASE("conversion needs the new admin's consent: a wallet converts only to itself") { conversion_consent(make); }
  SUBCASE("charges are debited atomically with the write") { charges(make); }
  SUBCASE("event log: one named event per write, contiguous") { event_log(make); }
  SUBCASE("usage keys") { usage_keys(make); }
  SUBCASE("groups") { groups(make); }
  SUBCASE("wallets") { wallets(make); }
  SUBCASE("actions") { actions(make); }
  SUBCASE("pagination: totals and creation order") { pagination(make); }
  SUBCASE("payments") { payments(make); }
  SUBCASE("persistence across close and reopen") { persistence(make); }
  SUBCASE("concurrent writers") { concurrent_writers(make); }
}

}  // namespace enact::ledger::test
