// The chain store of the embedded ledger's JSON-RPC surface (rpc_chain_store.hpp): its SQLite
// file, the blocks it appends for ledger events and the transactions sent to it.
#include "ledger/rpc_chain_store.hpp"

#include <sqlite3.h>

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

class database {
 public:
  explicit database(const std::string& path) {
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    db_ = db;
    if (rc != SQLITE_OK)
      fail_with("open " + path);
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~database() { sqlite3_close_v2(db_); }
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  sqlite3* handle() const noexcept { return db_; }
  void exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
      fail_with("exec");
  }
  void rollback() noexcept {
    if (sqlite3_get_autocommit(db_) == 0)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  [[noreturn]] void fail_with(const std::string& what) const {
    throw store_failure("rpc store: " + what + ": " + (db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"));
  }

 private:
  sqlite3* db_ = nullptr;
};

namespace {

class statement {
 public:
  statement(database& db, std::string_view sql) : db_(db) {
    if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &s_, nullptr) != SQLITE_OK)
      db.fail_with("prepare");
  }
  ~statement() { sqlite3_finalize(s_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  template <class... A>
  statement& bind(const A&... args) {
    (bind_one(args), ...);
    return *this;
  }
  bool next() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    db_.fail_with("step");
  }
  void run() {
    while (next()) {
    }
  }
  int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(s_, col));
  }
  uint64_t u64(int col) const { return static_cast<uint64_t>(i64(col)); }
  bool null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  bytes blob(int col) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, col));
    return p == nullptr ? bytes{} : bytes(p, p + sqlite3_column_bytes(s_, col));
  }
  template <size_t N>
  std::array<uint8_t, N> fixed(int col) const {
    const bytes b = blob(col);
    if (b.size() != N)
      throw store_failure("rpc store: corrupt row: blob of " + std::to_string(b.size()) + " bytes, expected " +
                          std::to_string(N));
    std::array<uint8_t, N> out{};
    std::copy(b.begin(), b.end(), out.begin());
    return out;
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK)
      db_.fail_with("bind");
  }
  void bind_one(int64_t v) { check(sqlite3_bind_int64(s_, ++index_, v)); }
  void bind_one(uint64_t v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(int v) { bind_one(static_cast<int64_t>(v)); }
  void bind_one(bool v) { bind_one(static_cast<int64_t>(v ? 1 : 0)); }
  void bind_one(std::nullptr_t) { check(sqlite3_bind_null(s_, ++index_)); }
  void bind_one(std::string_view v) {
    check(sqlite3_bind_text64(s_, ++index_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_one(const char* v) { bind_one(std::string_view(v)); }
  void bind_one(const bytes& v) {
    // An empty vector may have no storage; SQLite would bind NULL for a null pointer.
    static constexpr uint8_t kNone = 0;
    check(sqlite3_bind_blob64(s_, ++index_, v.empty() ? &kNone : v.data(), v.size(), SQLITE_TRANSIENT));
  }
  template <size_t N>
  void bind_one(const std::array<uint8_t, N>& v) {
    check(sqlite3_bind_blob64(s_, ++index_, v.data(), N, SQLITE_TRANSIENT));
  }
  template <class T>
  void bind_one(const std::optional<T>& v) {
    if (v)
      bind_one(*v);
    else
      bind_one(nullptr);
  }

  database& db_;
  sqlite3_stmt* s_ = nullptr;
  int index_ = 0;
};

/// BEGIN IMMEDIATE … COMMIT, rolled back when not committed.
class sql_transaction {
 public:
  explicit sql_transaction(database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
  ~sql_transaction() {
    if (!done_)
      db_.rollback();
  }
  void commit() {
    db_.exec("COMMIT");
    done_ = true;
  }

 private:
  database& db_;
  bool done_ = false;
};

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
  // Yellow Paper §4.3.1: three 11-bit indices from the first six bytes of keccak256(item).
  const hash256 h = keccak256(item);
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

chain_store::chain_store(embedded_ledger& ledger, const rpc_settings& settings)
    : ledger_(ledger), settings_(settings), db_(std::make_unique<database>(settings.sqlite_path)) {
  migrate();
  recover();
  sync();
}

chain_store::~chain_store() = default;

void chain_store::add_pending(const hash256& hash, const address& sender, uint64_t nonce, const bytes& raw) {
  statement(*db_,
            "INSERT INTO pending (hash, sender, nonce, raw, after_sequence) "
            "VALUES (?, ?, ?, ?, (SELECT value FROM meta WHERE key = 'synced_sequence'))")
      .bind(hash, sender, nonce, raw)
      .run();
}

void chain_store::drop_pending(const hash256& hash) {
  statement(*db_, "DELETE FROM pending WHERE hash = ?").bind(hash).run();
}

// --- opening --------------------------------------------------------------------------------

void chain_store::migrate() {
  {
    statement q(*db_, "PRAGMA journal_mode = WAL");
    if (!q.next() || q.text(0) != "wal")
      throw store_failure("rpc store: " + settings_.sqlite_path + ": cannot enable WAL journal");
  }
  db_->exec("PRAGMA synchronous = NORMAL");
  db_->exec("PRAGMA foreign_keys = ON");
  int64_t version = 0;
  {
    statement q(*db_, "PRAGMA user_version");
    if (q.next())
      version = q.i64(0);
  }
  if (version > kSchemaVersion)
    throw store_failure("rpc store: " + settings_.sqlite_path + ": schema version " + std::to_string(version) +
                        " is newer than this build's " + std::to_string(kSchemaVersion));
  if (version == 0) {
    sql_transaction t(*db_);
    db_->exec(kSchema);
    db_->exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
    statement(*db_,
              "INSERT INTO meta (key, value) VALUES ('chain_id', ?), ('registry', ?), "
              "('synced_sequence', 0)")
        .bind(settings_.chain_id, settings_.registry)
        .run();
    // The genesis block: no transaction, a hash that names the chain and the registry.
    keccak256_hasher hh;
    hh.update(std::string_view("enact/embedded-chain"));
    hh.update(be64(settings_.chain_id));
    hh.update(settings_.registry);
    statement(*db_,
              "INSERT INTO blocks (number, hash, parent, timestamp, bloom) "
              "VALUES (0, ?, ?, ?, ?)")
        .bind(hh.finalize(), hash256{}, unix_now(), std::array<uint8_t, 256>{})
        .run();
    t.commit();
  }
  const uint64_t chain_id = meta_u64("chain_id");
  address registry{};
  {
    statement q(*db_, "SELECT value FROM meta WHERE key = 'registry'");
    if (!q.next())
      throw store_failure("rpc store: corrupt: no registry address");
    registry = q.fixed<20>(0);
  }
  if (chain_id != settings_.chain_id || registry != settings_.registry)
    throw store_failure("rpc store: " + settings_.sqlite_path + " holds the chain of chain id " +
                        std::to_string(chain_id) + " and registry " + hex::encode_prefixed(registry) +
                        "; this server runs chain id " + std::to_string(settings_.chain_id) + " and registry " +
                        hex::encode_prefixed(settings_.registry) + " (configure those, or move the file away)");
}

/// Completes or drops a transaction interrupted between its ledger write and its receipt.
void chain_store::recover() {
  std::vector<tx_row> interrupted;
  {
    statement q(*db_, "SELECT hash, sender, nonce, raw FROM pending");
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
  statement q(*db_, "SELECT value FROM meta WHERE key = ?");
  q.bind(key);
  if (!q.next())
    throw store_failure(std::string("rpc store: corrupt: no ") + key);
  return q.u64(0);
}

// --- the chain ----------------------------------------------------------------------------

uint64_t chain_store::head() {
  statement q(*db_, "SELECT MAX(number) FROM blocks");
  return q.next() ? q.u64(0) : 0;
}

namespace {

block_row read_block(const statement& q) {
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
  statement q(*db_, "SELECT number, hash, parent, timestamp, bloom FROM blocks WHERE number = ?");
  q.bind(n);
  if (!q.next())
    return std::nullopt;
  return read_block(q);
}

std::optional<block_row> chain_store::block_by_hash(const hash256& h) {
  statement q(*db_, "SELECT number, hash, parent, timestamp, bloom FROM blocks WHERE hash = ?");
  q.bind(h);
  if (!q.next())
    return std::nullopt;
  return read_block(q);
}

namespace {

tx_row read_tx(const statement& q) {
  tx_row t;
  t.hash = q.fixed<32>(0);
  t.block = q.u64(1);
  t.from = q.fixed<20>(2);
  if (!q.null(3))
    t.nonce = q.u64(3);
  t.raw = q.blob(4);
  t.status = q.i64(5) != 0;
  t.revert_data = q.blob(6);
  t.gas_used = q.u64(7);
  if (!q.null(8))
    t.sequence = q.u64(8);
  return t;
}

}  // namespace

#define ENACT_TX_SELECT                                                                   \
  "SELECT hash, block, sender, nonce, raw, status, revert_data, gas_used, sequence FROM " \
  "transactions "

std::optional<tx_row> chain_store::tx_by_hash(const hash256& h) {
  statement q(*db_, ENACT_TX_SELECT "WHERE hash = ?");
  q.bind(h);
  if (!q.next())
    return std::nullopt;
  return read_tx(q);
}

std::optional<tx_row> chain_store::tx_in_block(uint64_t n) {
  statement q(*db_, ENACT_TX_SELECT "WHERE block = ?");
  q.bind(n);
  if (!q.next())
    return std::nullopt;
  return read_tx(q);
}
#undef ENACT_TX_SELECT

/// Logs of blocks up to `to` after position (block, log_index) `after`, in order.
std::vector<log_row> chain_store::logs_after(uint64_t block, int64_t log_index, uint64_t to, size_t limit) {
  std::vector<log_row> out;
  statement q(*db_,
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
  statement q(*db_,
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
  keccak256_hasher hh;
  hh.update(b.parent);
  hh.update(be64(b.number));
  hh.update(be64(static_cast<uint64_t>(b.timestamp)));
  hh.update(t.hash);
  b.hash = hh.finalize();
  t.block = b.number;
  statement(*db_, "INSERT INTO blocks (number, hash, parent, timestamp, bloom) VALUES (?, ?, ?, ?, ?)")
      .bind(b.number, b.hash, b.parent, b.timestamp, b.bloom)
      .run();
  statement(*db_,
            "INSERT INTO transactions (hash, block, sender, nonce, raw, status, revert_data, "
            "gas_used, sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(t.hash, t.block, t.from, t.nonce, t.nonce ? std::optional<bytes>(t.raw) : std::nullopt, t.status,
            t.revert_data, t.gas_used, t.sequence)
      .run();
  uint64_t index = 0;
  for (const auto& [sequence, log] : logs)
    statement(*db_, "INSERT INTO logs (block, log_index, sequence, topics, data) VALUES (?, ?, ?, ?, ?)")
        .bind(b.number, index++, sequence, topics_blob(log.topics), log.data)
        .run();
}

tx_row chain_store::relayed_tx(const event& e) const {
  keccak256_hasher hh;
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
    sql_transaction t(*db_);
    for (const event& e : evs) {
      tx_row tx = relayed_tx(e);
      append_block(tx, {&e}, e.created_at);
    }
    statement(*db_, "UPDATE meta SET value = ? WHERE key = 'synced_sequence'").bind(evs.back().sequence).run();
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
  sql_transaction t(*db_);
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
    statement(*db_, "UPDATE meta SET value = ? WHERE key = 'synced_sequence'").bind(evs.back().sequence).run();
  statement(*db_, "DELETE FROM pending WHERE hash = ?").bind(c.tx.hash).run();
  t.commit();
}

}  // namespace enact::ledger::rpc
