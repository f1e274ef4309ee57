// SPDX-License-Identifier: Apache-2.0
// Helpers of the permission-ledger conformance cases (conformance.hpp runs them): identifiers,
// records, an account with one of everything, every write of the API; and the cases themselves,
// one function each, defined in the conformance_*.cpp files.
#pragma once

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

#include "conformance.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "must.hpp"
#include "support.hpp"

namespace enact::ledger::test::conformance {

// --- identifiers and records -----------------------------------------------------------------

inline address addr(uint8_t a, uint8_t b = 0, uint8_t c = 0) {
  address x{};
  x[0] = a;
  x[1] = b;
  x[2] = c;
  x[19] = 1;
  return x;
}
inline hash256 h256(uint8_t a, uint8_t b = 0, uint8_t c = 0) {
  hash256 x{};
  x[0] = a;
  x[1] = b;
  x[2] = c;
  x[31] = 1;
  return x;
}
template <size_t N>
std::string hx(const std::array<uint8_t, N>& v) {
  return codec::hex::encode_prefixed(v);
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

inline write_context as(const address& sender) { return write_context{sender}; }

/// docs/protocol.md §1: the hash of an account a wallet creates, crypto::keccak256(abi.encodePacked(wallet)).
inline account_hash canonical(const address& wallet) { return crypto::keccak256(bytes_view(wallet)); }

/// A managed record has an API-mode hash; an unmanaged one the canonical hash of its admin, the
/// only one a wallet may create (docs/protocol.md §3 identity rules).
inline account make_account_record(uint8_t n, bool managed) {
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
inline acct make_account(permission_ledger& l, uint8_t n, bool managed) {
  const account a = make_account_record(n, managed);
  MUST(l.new_account(as(managed ? kPayer : a.admin), a));
  return {a.hash, a.admin};
}

inline wallet make_wallet(uint8_t n, uint8_t i) {
  wallet w;
  w.pkp_id = addr(0x30, n, i);
  w.derivation_path = h256(0x30, n, i);
  w.name = "wallet " + std::to_string(i);
  w.description = "pkp";
  return w;
}

inline action make_action(const std::string& cid, const std::string& name = "action") {
  action a;
  a.cid = cid;
  a.hashed_cid = crypto::keccak256(std::string_view(cid));
  a.name = name;
  a.description = "does things";
  return a;
}

inline usage_key make_key(const account_hash& account, uint8_t n, uint8_t i) {
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

inline group make_group(const std::string& name, std::vector<address> pkps = {}, std::vector<hash256> cids = {}) {
  group g;
  g.name = name;
  g.description = name + " description";
  g.pkps = std::move(pkps);
  g.cid_hashes = std::move(cids);
  return g;
}

inline std::vector<event> all_events(const permission_ledger& l, uint64_t after = 0) {
  std::vector<event> out;
  for (;;) {
    std::vector<event> batch = MUST(l.events_after(after, 500));
    if (batch.empty())
      return out;
    after = batch.back().sequence;
    out.insert(out.end(), batch.begin(), batch.end());
  }
}

inline uint64_t last_sequence(const permission_ledger& l) {
  const std::vector<event> e = all_events(l);
  return e.empty() ? 0 : e.back().sequence;
}

/// Everything the ledger shows about an account, as text: equal snapshots = nothing changed.
inline std::string snapshot(const permission_ledger& l, const account_hash& h) {
  std::string s;
  const account a = MUST(l.get_account(h));
  s += "account " + hx(a.admin) + (a.managed ? " managed " : " unmanaged ") + a.name + "|" + a.description + "|" +
       a.email + "\n";
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

inline prepared prepare(permission_ledger& l, uint8_t n, bool managed) {
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

inline std::vector<write_op> write_ops() {
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

// --- the cases (conformance_*.cpp), each run as a SUBCASE by run_conformance --------------------

void accounts(const backend_factory& make);
void identity_rules(const backend_factory& make);
void sender_rules(const backend_factory& make);
void unknown_account_everywhere(const backend_factory& make);
void conversion(const backend_factory& make);
void conversion_consent(const backend_factory& make);
void event_log(const backend_factory& make);
void usage_keys(const backend_factory& make);
void groups(const backend_factory& make);
void wallets(const backend_factory& make);
void actions(const backend_factory& make);
void pagination(const backend_factory& make);
void persistence(const backend_factory& make);
void concurrent_writers(const backend_factory& make);

}  // namespace enact::ledger::test::conformance
