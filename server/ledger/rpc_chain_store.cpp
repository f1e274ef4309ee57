// SPDX-License-Identifier: Apache-2.0
// The chain store of the embedded ledger's JSON-RPC surface (rpc_chain_store.hpp): its SQLite
// file, the blocks it appends for ledger events and the transactions sent to it.
#include "ledger/rpc_chain_store.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string_view>
#include <utility>

#include "enact/chain/registry.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/embedded_ledger.hpp"
#include "storage/sqlite.hpp"

namespace enact::ledger::rpc {

namespace reg = chain::registry;

std::array<uint8_t, 8> be64(uint64_t v) {
  std::array<uint8_t, 8> out{};
  for (int i = 7; i >= 0; --i, v >>= 8)
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The surface's SQLite file

namespace {

using storage::query;

/// A blob that binds as one even when empty: an empty vector's data pointer may be null, which
/// SQLite binds as NULL, and the blob columns below are NOT NULL.
bytes_view blob_of(const bytes& b) {
  static constexpr uint8_t kNone = 0;
  return b.empty() ? bytes_view(&kNone, 0) : bytes_view(b);
}

constexpr int kSchemaVersion = 1;
constexpr const char* kSchema = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value ANY  NOT NULL
);
-- One row per block; block 0 is the genesis block, every other block holds one transaction.
CREATE TABLE blocks (
  number    INTEGER PRIMARY KEY,
  hash      BLOB    NOT NULL UNIQUE,
  parent    BLOB    NOT NULL,
  timestamp INTEGER NOT NULL,
  bloom     BLOB    NOT NULL
);
-- Transactions sent here (nonce and raw set) and relayed ledger writes (sequence set).
CREATE TABLE transactions (
  hash        BLOB    PRIMARY KEY,
  block       INTEGER NOT NULL UNIQUE REFERENCES blocks(number),
  sender      BLOB    NOT NULL,
  nonce       INTEGER,
  raw         BLOB,
  status      INTEGER NOT NULL,
  revert_data BLOB    NOT NULL,
  gas_used    INTEGER NOT NULL,
  sequence    INTEGER
);
CREATE INDEX transactions_by_sender ON transactions(sender, nonce);
-- Every ledger event, as the registry's log.
CREATE TABLE logs (
  block     INTEGER NOT NULL REFERENCES blocks(number),
  log_index INTEGER NOT NULL,
  sequence  INTEGER NOT NULL UNIQUE,
  topics    BLOB    NOT NULL,
  data      BLOB    NOT NULL,
  PRIMARY KEY (block, log_index)
);
-- A transaction between its ledger write and its receipt (completed or dropped at open).
CREATE TABLE pending (
  hash           BLOB    PRIMARY KEY,
  sender         BLOB    NOT NULL,
  nonce          INTEGER NOT NULL,
  raw            BLOB    NOT NULL,
  after_sequence INTEGER NOT NULL
);
)sql";

void add_to_bloom(std::array<uint8_t, 256>& bloom, bytes_view item) {
  // Yellow Paper §4.3.1: three 11-bit indices from the first six bytes of crypto::keccak256(item).
  const hash256 h = crypto::keccak256(item);
  for (size_t i = 0; i < 6; i += 2) {
    const unsigned bit = ((static_cast<unsigned>(h[i]) << 8) | h[i + 1]) & 2047u;
    bloom[255 - bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
  }
}

bytes topics_blob(const std::vector<hash256>& topics) {
  bytes out;
  for (const hash256& t : topics)
    out.insert(out.end(), t.begin(), t.end());
  return out;
}

std::vector<hash256> topics_of(const bytes& blob) {
  std::vector<hash256> out(blob.size() / 32);
  for (size_t i = 0; i < out.size(); ++i)
    std::copy_n(blob.begin() + static_cast<ptrdiff_t>(32 * i), 32, out[i].begin());
  return out;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr size_t kEventPage = 1000;

}  // namespace

std::optional<std::pair<uint64_t, address>> chain_of_file(const std::string& sqlite_path) {
  storage::connection db(sqlite_path);
  if (db.user_version() == 0)
    return std::nullopt;
  query id(db, "SELECT value FROM meta WHERE key = 'chain_id'");
  query registry(db, "SELECT value FROM meta WHERE key = 'registry'");
  if (!id.next() || !registry.next())
    throw store_failure("rpc store: " + sqlite_path + ": corrupt: no chain id or registry address");
  return std::pair{id.u64(0), registry.fixed<20>(0)};
}

chain_store::chain_store(embedded_ledger& ledger, const rpc_settings& settings)
    : ledger_(ledger), settings_(settings), db_(std::make_unique<storage::connection>(settings.sqlite_path)) {
  migrate();
  recover();
  sync();
}

chain_store::~chain_store() = default;

void chain_store::add_pending(const hash256& hash, const address& sender, uint64_t nonce, const bytes& raw) {
  query(*db_,
        "INSERT INTO pending (hash, sender, nonce, raw, after_sequence) "
        "VALUES (?, ?, ?, ?, (SELECT value FROM meta WHERE key = 'synced_sequence'))")
      .bind(hash, sender, nonce, blob_of(raw))
      .run();
}

void chain_store::drop_pending(const hash256& hash) {
  query(*db_, "DELETE FROM pending WHERE hash = ?").bind(hash).run();
}

// --- opening --------------------------------------------------------------------------------

void chain_store::migrate() {
  db_->enable_wal();
  db_->exec("PRAGMA synchronous = NORMAL");
  db_->exec("PRAGMA foreign_keys = ON");
  // Version 1: the schema, the chain's identity and its genesis block, in one transaction
  // (storage::migrate, which also refuses a file of a later build).
  const storage::migration steps[] = {{kSchema, [this](storage::connection& c) {
                                         query(c,
                                               "INSERT INTO meta (key, value) VALUES ('chain_id', ?), ('registry', ?), "
                                               "('synced_sequence', 0)")
                                             .bind(settings_.chain_id, settings_.registry)
                                             .run();
                                         // The genesis block: no transaction, a hash that names the chain and the
                                         // registry.
                                         crypto::keccak256_hasher hh;
                                         hh.update(std::string_view("enact/embedded-chain"));
                                         hh.update(be64(settings_.chain_id));
                                         hh.update(settings_.registry);
                                         query(c,
                                               "INSERT INTO blocks (number, hash, parent, timestamp, bloom) "
                                               "VALUES (0, ?, ?, ?, ?)")
                                             .bind(hh.finalize(), hash256{}, unix_now(), std::array<uint8_t, 256>{})
                                             .run();
                                       }}};
  static_assert(sizeof(steps) / sizeof(steps[0]) == kSchemaVersion, "kSchemaVersion must count the migrations");
  storage::migrate(*db_, steps);
  const uint64_t chain_id = meta_u64("chain_id");
  address registry{};
  {
    query q(*db_, "SELECT value FROM meta WHERE key = 'registry'");
    if (!q.next())
      throw store_failure("rpc store: corrupt: no registry address");
    registry = q.fixed<20>(0);
  }
  if (chain_id != settings_.chain_id || registry != settings_.registry)
    throw store_failure("rpc store: " + settings_.sqlite_path + " holds the chain of chain id " +
                        std::to_string(chain_id) + " and registry " + codec::hex::encode_prefixed(registry) +
                        "; this server runs chain id " + std::to_string(settings_.chain_id) + " and registry " +
                        codec::hex::encode_prefixed(settings_.registry) + " (configure those, or move the file away)");
}

/// Completes or drops a transaction interrupted between its ledger write and its receipt.
void chain_store::recover() {
  std::vector<tx_row> interrupted;
  {
    query q(*db_, "SELECT hash, sender, nonce, raw FROM pending");
    while (q.next()) {
      tx_row t;
      t.hash = q.fixed<32>(0);
      t.from = q.fixed<20>(1);
      t.nonce = q.u64(2);
      t.raw = q.blob(3);
      interrupted.push_back(std::move(t));
    }
  }
  // Nothing was mapped after the interrupted write's synced sequence (pending.after_sequence),
  // so finish() sees its events (those of its sender) as they were then.
  for (tx_row& t : interrupted) {
    auto decoded = chain::decode(t.raw);
    t.gas_used = decoded ? std::min(rpc_surface::kGasPerCall, decoded->tx.gas_limit) : rpc_surface::kGasPerCall;
    claim c{std::move(t), true};
    finish(c);
  }
}

uint64_t chain_store::meta_u64(const char* key) {
  query q(*db_, "SELECT value FROM meta WHERE key = ?");
  q.bind(key);
  if (!q.next())
    throw store_failure(std::string("rpc store: corrupt: no ") + key);
  return q.u64(0);
}

// --- the chain ----------------------------------------------------------------------------

uint64_t chain_store::head() {
  query q(*db_, "SELECT MAX(number) FROM blocks");
  return q.next() ? q.u64(0) : 0;
}

namespace {

block_row read_block(const query& q) {
  block_row b;
  b.number = q.u64(0);
  b.hash = q.fixed<32>(1);
  b.parent = q.fixed<32>(2);
  b.timestamp = q.i64(3);
  b.bloom = q.fixed<256>(4);
  return b;
}

}  // namespace

std::optional<block_row> chain_store::block_at(uint64_t n) {
  query q(*db_, "SELECT number, hash, parent, timestamp, bloom FROM blocks WHERE number = ?");
  q.bind(n);
  if (!q.next())
    return std::nullopt;
  return read_block(q);
}

std::optional<block_row> chain_store::block_by_hash(const hash256& h) {
  query q(*db_, "SELECT number, hash, parent, timestamp, bloom FROM blocks WHERE hash = ?");
  q.bind(h);
  if (!q.next())
    return std::nullopt;
  return read_block(q);
}

namespace {

tx_row read_tx(const query& q) {
  tx_row t;
  t.hash = q.fixed<32>(0);
  t.block = q.u64(1);
  t.from = q.fixed<20>(2);
  if (!q.is_null(3))
    t.nonce = q.u64(3);
  t.raw = q.blob(4);
  t.status = q.i64(5) != 0;
  t.revert_data = q.blob(6);
  t.gas_used = q.u64(7);
  if (!q.is_null(8))
    t.sequence = q.u64(8);
  return t;
}

}  // namespace

#define ENACT_TX_SELECT                                                                   \
  "SELECT hash, block, sender, nonce, raw, status, revert_data, gas_used, sequence FROM " \
  "transactions "

std::optional<tx_row> chain_store::tx_by_hash(const hash256& h) {
  query q(*db_, ENACT_TX_SELECT "WHERE hash = ?");
  q.bind(h);
  if (!q.next())
    return std::nullopt;
  return read_tx(q);
}

std::optional<tx_row> chain_store::tx_in_block(uint64_t n) {
  query q(*db_, ENACT_TX_SELECT "WHERE block = ?");
  q.bind(n);
  if (!q.next())
    return std::nullopt;
  return read_tx(q);
}
#undef ENACT_TX_SELECT

/// Logs of blocks up to `to` after position (block, log_index) `after`, in order.
std::vector<log_row> chain_store::logs_after(uint64_t block, int64_t log_index, uint64_t to, size_t limit) {
  std::vector<log_row> out;
  query q(*db_,
          "SELECT block, log_index, topics, data FROM logs WHERE (block, log_index) > (?, ?) "
          "AND block <= ? ORDER BY block, log_index LIMIT ?");
  q.bind(block, log_index, to, static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX)));
  while (q.next())
    out.push_back(log_row{q.u64(0), q.u64(1), topics_of(q.blob(2)), q.blob(3)});
  return out;
}

/// The sender's next nonce: one more than its last transaction sent here (at or before block
/// `at`), else 0.
uint64_t chain_store::nonce_of(const address& sender, std::optional<uint64_t> at) {
  query q(*db_,
          "SELECT COALESCE(MAX(nonce) + 1, 0) FROM transactions WHERE sender = ? AND "
          "nonce IS NOT NULL AND block <= ?");
  q.bind(sender, at ? std::min<uint64_t>(*at, INT64_MAX) : uint64_t{INT64_MAX});
  return q.next() ? q.u64(0) : 0;
}

/// Appends the next block holding `t` and the logs of `events`.
void chain_store::append_block(tx_row& t, const std::vector<const event*>& events, int64_t timestamp) {
  const uint64_t parent_number = head();
  const std::optional<block_row> parent = block_at(parent_number);
  if (!parent)
    throw store_failure("rpc store: corrupt: block " + std::to_string(parent_number) + " missing");
  block_row b;
  b.number = parent_number + 1;
  b.parent = parent->hash;
  b.timestamp = std::max(parent->timestamp, timestamp);
  std::vector<std::pair<uint64_t, reg::encoded_log>> logs;
  for (const event* e : events) {
    reg::encoded_log log = reg::encode_log(e->value);
    add_to_bloom(b.bloom, settings_.registry);
    for (const hash256& topic : log.topics)
      add_to_bloom(b.bloom, topic);
    logs.emplace_back(e->sequence, std::move(log));
  }
  crypto::keccak256_hasher hh;
  hh.update(b.parent);
  hh.update(be64(b.number));
  hh.update(be64(static_cast<uint64_t>(b.timestamp)));
  hh.update(t.hash);
  b.hash = hh.finalize();
  t.block = b.number;
  query(*db_, "INSERT INTO blocks (number, hash, parent, timestamp, bloom) VALUES (?, ?, ?, ?, ?)")
      .bind(b.number, b.hash, b.parent, b.timestamp, b.bloom)
      .run();
  query(*db_,
        "INSERT INTO transactions (hash, block, sender, nonce, raw, status, revert_data, "
        "gas_used, sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(t.hash, t.block, t.from, t.nonce, t.nonce ? std::optional<bytes>(t.raw) : std::nullopt, t.status,
            blob_of(t.revert_data), t.gas_used, t.sequence)
      .run();
  uint64_t index = 0;
  for (const auto& [sequence, log] : logs)
    query(*db_, "INSERT INTO logs (block, log_index, sequence, topics, data) VALUES (?, ?, ?, ?, ?)")
        .bind(b.number, index++, sequence, topics_blob(log.topics), blob_of(log.data))
        .run();
}

tx_row chain_store::relayed_tx(const event& e) const {
  crypto::keccak256_hasher hh;
  hh.update(std::string_view("enact/relayed-write"));
  hh.update(be64(settings_.chain_id));
  hh.update(settings_.registry);
  hh.update(be64(e.sequence));
  tx_row t;
  t.hash = hh.finalize();
  t.from = e.sender;
  t.status = true;
  t.gas_used = rpc_surface::kGasPerCall;
  t.sequence = e.sequence;
  return t;
}

std::vector<event> chain_store::events_after(uint64_t after, size_t limit) {
  auto evs = ledger_.events_after(after, limit);
  if (!evs)
    throw store_failure("ledger: " + evs.err().message);
  return std::move(*evs);
}

void chain_store::sync() {
  for (;;) {
    const uint64_t synced = meta_u64("synced_sequence");
    const std::vector<event> evs = events_after(synced, kEventPage);
    if (evs.empty())
      return;
    storage::transaction t(*db_);
    for (const event& e : evs) {
      tx_row tx = relayed_tx(e);
      append_block(tx, {&e}, e.created_at);
    }
    query(*db_, "UPDATE meta SET value = ? WHERE key = 'synced_sequence'").bind(evs.back().sequence).run();
    t.commit();
    if (evs.size() < kEventPage)
      return;
  }
}

/// Places a transaction sent here: its block holds the events of its sender after the synced
/// sequence (a write appends at most a few), placed at the first of them; the other events
/// (relayed writes that committed meanwhile) get their own blocks, all in sequence order.
void chain_store::finish(claim& c) {
  const uint64_t synced = meta_u64("synced_sequence");
  std::vector<event> evs;
  for (uint64_t after = synced;;) {
    std::vector<event> page = events_after(after, kEventPage);
    if (page.empty())
      break;
    after = page.back().sequence;
    const bool last = page.size() < kEventPage;
    std::move(page.begin(), page.end(), std::back_inserter(evs));
    if (last)
      break;
  }
  std::vector<const event*> own;
  for (const event& e : evs)
    if (e.sender == c.tx.from)
      own.push_back(&e);
  storage::transaction t(*db_);
  bool placed = false;
  for (const event& e : evs) {
    if (e.sender == c.tx.from) {
      if (!placed)
        append_block(c.tx, own, unix_now());
      placed = true;
      continue;
    }
    tx_row tx = relayed_tx(e);
    append_block(tx, {&e}, e.created_at);
  }
  if (!placed && !c.drop_if_unclaimed)
    append_block(c.tx, {}, unix_now());
  if (!evs.empty())
    query(*db_, "UPDATE meta SET value = ? WHERE key = 'synced_sequence'").bind(evs.back().sequence).run();
  query(*db_, "DELETE FROM pending WHERE hash = ?").bind(c.tx.hash).run();
  t.commit();
}

}  // namespace enact::ledger::rpc
