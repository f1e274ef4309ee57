// SPDX-License-Identifier: Apache-2.0
// Conformance cases: pagination, persistence and concurrent writers.
#include "conformance_cases.hpp"

namespace enact::ledger::test::conformance {

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
  // Counters continue: the next group id and the event sequence.
  CHECK(MUST(l->add_group(as(kPayer), m.a.hash, make_group("three"))).id == 3);
  CHECK(last_sequence(*l) == events.back().sequence + 1);
}

void concurrent_writers(const backend_factory& make) {
  constexpr int kThreads = 2;
  constexpr int kWritesPerThread = 500;
  constexpr int kKinds = 4;
  auto be = make(kPayers);
  auto l = be->open();
  const acct a = make_account(*l, 1, true);
  const uint64_t start = last_sequence(*l);

  // Each thread cycles through four writes by three senders; a reader runs alongside.
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
        switch (i % kKinds) {
          case 0:
            note(l->add_group(as(kPayer), a.hash, make_group("g" + tag)).code(), "add_group");
            break;
          case 1: {
            wallet wl;
            wl.pkp_id = addr(0x31 + tt, hi, lo);
            wl.derivation_path = h256(0x31 + tt, hi, lo);
            wl.name = "w" + tag;
            note(l->register_wallet(as(a.admin), a.hash, wl).code(), "register_wallet");
            break;
          }
          case 2:
            note(l->add_action(as(kPayer2), a.hash, make_action("Qm" + tag)).code(), "add_action");
            break;
          default: {
            usage_key k = make_key(a.hash, 0, 0);
            k.hash = h256(0x41 + tt, hi, lo);
            k.name = "k" + tag;
            note(l->set_usage_key(as(kPayer), k).code(), "set_usage_key");
            break;
          }
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
  constexpr uint64_t kEach = kThreads * kWritesPerThread / kKinds;  // writes of each kind
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
  const std::map<std::string, uint64_t> want = {
      {"GroupAdded", kEach}, {"WalletDerivationRegistered", kEach}, {"ActionAdded", kEach}, {"UsageApiKeySet", kEach}};
  CHECK(by_name == want);
}

}  // namespace enact::ledger::test::conformance
