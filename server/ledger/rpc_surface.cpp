// The JSON-RPC surface of the embedded ledger; what it answers and how it deviates from a node
// running the Solidity registry is listed in rpc_surface.hpp. Inside this file a JSON-RPC error
// object is an exception (`rpc_error`) thrown where the problem is found and turned into the
// response at the request boundary; SQLite failures of the surface's own file are
// `store_failure`, answered as -32603 and reported. Ledger refusals are not errors here: they
// are reverts, encoded with the registry's custom errors.
#include "ledger/rpc_surface.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <boost/json.hpp>

#include "enact/chain/registry.hpp"
#include "enact/chain/rpc.hpp"
#include "enact/chain/transaction.hpp"
#include "enact/codec/hex.hpp"
#include "enact/crypto/keccak.hpp"
#include "ledger/embedded_ledger.hpp"

namespace enact::ledger {
namespace {

namespace json = boost::json;
namespace reg = chain::registry;
namespace wire = chain::rpc;

constexpr std::string_view kClientVersion = "enact-embedded-registry/0.1.0";
// JSON-RPC 2.0 §5.1, and the codes Ethereum nodes use beside them.
constexpr int64_t kParseError = -32700;
constexpr int64_t kInvalidRequest = -32600;
constexpr int64_t kMethodNotFound = -32601;
constexpr int64_t kInvalidParams = -32602;
constexpr int64_t kInternalError = -32603;
constexpr int64_t kServerError = -32000;    // geth: transaction pool refusals
constexpr int64_t kLimitExceeded = -32005;  // EIP-1474
constexpr int64_t kExecutionReverted = 3;   // geth, anvil: revert data in `data`
constexpr uint64_t kIntrinsicGas = 21000;
constexpr size_t kEventPage = 1000;
// keccak256(rlp([])): the uncles hash of a block without uncles (Yellow Paper §4.3).
constexpr std::string_view kEmptyUnclesHash = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
// The registry's code as eth_getCode shows it: PUSH1 0 PUSH1 0 REVERT (no EVM runs here).
constexpr std::array<uint8_t, 5> kRegistryCodeStub = {0x60, 0x00, 0x60, 0x00, 0xfd};

struct rpc_error {
  int64_t code;
  std::string message;
  json::value data = nullptr;
};

[[noreturn]] void throw_rpc(int64_t code, std::string message, json::value data = nullptr) {
  throw rpc_error{code, std::move(message), std::move(data)};
}
[[noreturn]] void invalid_params(std::string message) { throw_rpc(kInvalidParams, std::move(message)); }

struct store_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Wire forms

std::string quantity(uint64_t v) { return u256{v}.to_hex(); }

template <size_t N>
std::string data_hex(const std::array<uint8_t, N>& v) {
  return hex::encode_prefixed(v);
}

std::array<uint8_t, 8> be64(uint64_t v) {
  std::array<uint8_t, 8> out{};
  for (int i = 7; i >= 0; --i, v >>= 8)
    out[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
  return out;
}

template <class T>
T take_param(result<T> r) {
  if (!r)
    invalid_params(r.err().message);
  return std::move(r).value();
}

const json::value& param(const json::array& p, size_t i, std::string_view what) {
  if (i >= p.size())
    invalid_params("missing value for required argument " + std::to_string(i) + " (" + std::string(what) + ")");
  return p[i];
}

const json::value* optional_param(const json::array& p, size_t i) {
  return i < p.size() && !p[i].is_null() ? &p[i] : nullptr;
}

address address_param(const json::value& v, std::string_view what) {
  return take_param(wire::parse_data_fixed<20>(v, what));
}

hash256 hash_param(const json::value& v, std::string_view what) {
  return take_param(wire::parse_data_fixed<32>(v, what));
}

/// A count given as QUANTITY or as a JSON integer (eth_feeHistory's blockCount is either).
uint64_t count_param(const json::value& v, std::string_view what) {
  if (v.is_int64() && v.get_int64() >= 0)
    return static_cast<uint64_t>(v.get_int64());
  if (v.is_uint64())
    return v.get_uint64();
  return take_param(wire::parse_quantity_u64(v, what));
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

struct block_row {
  uint64_t number = 0;
  hash256 hash{};
  hash256 parent{};
  int64_t timestamp = 0;
  std::array<uint8_t, 256> bloom{};
};

struct tx_row {
  hash256 hash{};
  uint64_t block = 0;
  address from{};
  std::optional<uint64_t> nonce;  // set for transactions sent here
  bytes raw;
  bool status = true;
  bytes revert_data;
  uint64_t gas_used = 0;
  std::optional<uint64_t> sequence;  // set for relayed ledger writes
};

struct log_row {
  uint64_t block = 0;
  uint64_t log_index = 0;
  std::vector<hash256> topics;
  bytes data;
};

/// A transaction sent here, to be placed at the block of its ledger events.
struct claim {
  tx_row tx;
  bool drop_if_unclaimed = false;  // recovery: no event means the ledger never applied it
};

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

// ---------------------------------------------------------------------------------------------
// Executing registry calls against the ledger

/// What a call did: return data, or revert data.
struct outcome {
  bool reverted = false;
  bytes data;
};

outcome returned(bytes b) { return {false, std::move(b)}; }

template <reg::error_type E>
outcome reverted(const E& e) {
  return {true, reg::encode_revert(e)};
}

/// What a refused call was about, to fill the custom error's arguments.
struct refusal {
  hash256 account{};
  std::optional<u256> group{};
  std::optional<hash256> usage_key{};
  std::vector<address> wallets{};  // unknown_wallet: the first one the account lacks
  std::optional<hash256> hashed_cid{};
  std::string duplicate{};  // Duplicate(what)
  // The address the error names: newAccount's admin (AccountHashNotCanonical(apiKeyHash, admin)),
  // convertToChainSecured's new admin (NewAdminNotSender(accountHash, newAdmin)).
  address admin{};
};

std::string over_64_bits(std::string_view field) {
  return std::string(field) + ": above 2^64-1 is not supported by the embedded registry";
}

}  // namespace

address embedded_registry_address() {
  const hash256 h = keccak256(std::string_view("enact/embedded-registry"));
  address a{};
  std::copy(h.begin() + 12, h.end(), a.begin());
  return a;
}

// =============================================================================================

struct rpc_surface::impl {
  embedded_ledger& ledger;
  rpc_settings settings;
  std::function<void(const std::string&)> report;
  std::mutex mu;  // the database and the chain it holds
  database db;

  impl(embedded_ledger& l, rpc_settings s) : ledger(l), settings(std::move(s)), db(settings.sqlite_path) {}

  // --- opening ------------------------------------------------------------------------------

  void migrate() {
    {
      statement q(db, "PRAGMA journal_mode = WAL");
      if (!q.next() || q.text(0) != "wal")
        throw store_failure("rpc store: " + settings.sqlite_path + ": cannot enable WAL journal");
    }
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    int64_t version = 0;
    {
      statement q(db, "PRAGMA user_version");
      if (q.next())
        version = q.i64(0);
    }
    if (version > kSchemaVersion)
      throw store_failure("rpc store: " + settings.sqlite_path + ": schema version " + std::to_string(version) +
                          " is newer than this build's " + std::to_string(kSchemaVersion));
    if (version == 0) {
      sql_transaction t(db);
      db.exec(kSchema);
      db.exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
      statement(db,
                "INSERT INTO meta (key, value) VALUES ('chain_id', ?), ('registry', ?), "
                "('synced_sequence', 0)")
          .bind(settings.chain_id, settings.registry)
          .run();
      // The genesis block: no transaction, a hash that names the chain and the registry.
      keccak256_hasher hh;
      hh.update(std::string_view("enact/embedded-chain"));
      hh.update(be64(settings.chain_id));
      hh.update(settings.registry);
      statement(db,
                "INSERT INTO blocks (number, hash, parent, timestamp, bloom) "
                "VALUES (0, ?, ?, ?, ?)")
          .bind(hh.finalize(), hash256{}, unix_now(), std::array<uint8_t, 256>{})
          .run();
      t.commit();
    }
    const uint64_t chain_id = meta_u64("chain_id");
    address registry{};
    {
      statement q(db, "SELECT value FROM meta WHERE key = 'registry'");
      if (!q.next())
        throw store_failure("rpc store: corrupt: no registry address");
      registry = q.fixed<20>(0);
    }
    if (chain_id != settings.chain_id || registry != settings.registry)
      throw store_failure("rpc store: " + settings.sqlite_path + " holds the chain of chain id " +
                          std::to_string(chain_id) + " and registry " + hex::encode_prefixed(registry) +
                          "; this server runs chain id " + std::to_string(settings.chain_id) + " and registry " +
                          hex::encode_prefixed(settings.registry) + " (configure those, or move the file away)");
  }

  /// Completes or drops a transaction interrupted between its ledger write and its receipt.
  void recover() {
    std::vector<tx_row> interrupted;
    {
      statement q(db, "SELECT hash, sender, nonce, raw FROM pending");
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

  uint64_t meta_u64(const char* key) {
    statement q(db, "SELECT value FROM meta WHERE key = ?");
    q.bind(key);
    if (!q.next())
      throw store_failure(std::string("rpc store: corrupt: no ") + key);
    return q.u64(0);
  }

  // --- the chain ----------------------------------------------------------------------------

  uint64_t head() {
    statement q(db, "SELECT MAX(number) FROM blocks");
    return q.next() ? q.u64(0) : 0;
  }

  static block_row read_block(const statement& q) {
    block_row b;
    b.number = q.u64(0);
    b.hash = q.fixed<32>(1);
    b.parent = q.fixed<32>(2);
    b.timestamp = q.i64(3);
    b.bloom = q.fixed<256>(4);
    return b;
  }

  std::optional<block_row> block_at(uint64_t n) {
    statement q(db, "SELECT number, hash, parent, timestamp, bloom FROM blocks WHERE number = ?");
    q.bind(n);
    if (!q.next())
      return std::nullopt;
    return read_block(q);
  }

  std::optional<block_row> block_by_hash(const hash256& h) {
    statement q(db, "SELECT number, hash, parent, timestamp, bloom FROM blocks WHERE hash = ?");
    q.bind(h);
    if (!q.next())
      return std::nullopt;
    return read_block(q);
  }

  static tx_row read_tx(const statement& q) {
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

#define ENACT_TX_SELECT                                                                   \
  "SELECT hash, block, sender, nonce, raw, status, revert_data, gas_used, sequence FROM " \
  "transactions "

  std::optional<tx_row> tx_by_hash(const hash256& h) {
    statement q(db, ENACT_TX_SELECT "WHERE hash = ?");
    q.bind(h);
    if (!q.next())
      return std::nullopt;
    return read_tx(q);
  }

  std::optional<tx_row> tx_in_block(uint64_t n) {
    statement q(db, ENACT_TX_SELECT "WHERE block = ?");
    q.bind(n);
    if (!q.next())
      return std::nullopt;
    return read_tx(q);
  }
#undef ENACT_TX_SELECT

  /// Logs of blocks up to `to` after position (block, log_index) `after`, in order.
  std::vector<log_row> logs_after(uint64_t block, int64_t log_index, uint64_t to, size_t limit) {
    std::vector<log_row> out;
    statement q(db,
                "SELECT block, log_index, topics, data FROM logs WHERE (block, log_index) > (?, ?) "
                "AND block <= ? ORDER BY block, log_index LIMIT ?");
    q.bind(block, log_index, to, static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX)));
    while (q.next())
      out.push_back(log_row{q.u64(0), q.u64(1), topics_of(q.blob(2)), q.blob(3)});
    return out;
  }

  /// The sender's next nonce: one more than its last transaction sent here (at or before block
  /// `at`), else 0.
  uint64_t nonce_of(const address& sender, std::optional<uint64_t> at = std::nullopt) {
    statement q(db,
                "SELECT COALESCE(MAX(nonce) + 1, 0) FROM transactions WHERE sender = ? AND "
                "nonce IS NOT NULL AND block <= ?");
    q.bind(sender, at ? std::min<uint64_t>(*at, INT64_MAX) : uint64_t{INT64_MAX});
    return q.next() ? q.u64(0) : 0;
  }

  /// Appends the next block holding `t` and the logs of `events`.
  void append_block(tx_row& t, const std::vector<const event*>& events, int64_t timestamp) {
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
      auto log = reg::encode_log(e->name, e->data);
      if (!log) {
        if (report)
          report("ledger event " + std::to_string(e->sequence) + " (" + e->name +
                 ") has no registry log: " + log.err().message);
        continue;
      }
      add_to_bloom(b.bloom, settings.registry);
      for (const hash256& topic : log->topics)
        add_to_bloom(b.bloom, topic);
      logs.emplace_back(e->sequence, std::move(*log));
    }
    keccak256_hasher hh;
    hh.update(b.parent);
    hh.update(be64(b.number));
    hh.update(be64(static_cast<uint64_t>(b.timestamp)));
    hh.update(t.hash);
    b.hash = hh.finalize();
    t.block = b.number;
    statement(db, "INSERT INTO blocks (number, hash, parent, timestamp, bloom) VALUES (?, ?, ?, ?, ?)")
        .bind(b.number, b.hash, b.parent, b.timestamp, b.bloom)
        .run();
    statement(db,
              "INSERT INTO transactions (hash, block, sender, nonce, raw, status, revert_data, "
              "gas_used, sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(t.hash, t.block, t.from, t.nonce, t.nonce ? std::optional<bytes>(t.raw) : std::nullopt, t.status,
              t.revert_data, t.gas_used, t.sequence)
        .run();
    uint64_t index = 0;
    for (const auto& [sequence, log] : logs)
      statement(db, "INSERT INTO logs (block, log_index, sequence, topics, data) VALUES (?, ?, ?, ?, ?)")
          .bind(b.number, index++, sequence, topics_blob(log.topics), log.data)
          .run();
  }

  tx_row relayed_tx(const event& e) const {
    keccak256_hasher hh;
    hh.update(std::string_view("enact/relayed-write"));
    hh.update(be64(settings.chain_id));
    hh.update(settings.registry);
    hh.update(be64(e.sequence));
    tx_row t;
    t.hash = hh.finalize();
    t.from = e.sender;
    t.status = true;
    t.gas_used = rpc_surface::kGasPerCall;
    t.sequence = e.sequence;
    return t;
  }

  std::vector<event> events_after(uint64_t after, size_t limit) {
    auto evs = ledger.events_after(after, limit);
    if (!evs)
      throw store_failure("ledger: " + evs.err().message);
    return std::move(*evs);
  }

  /// Maps the ledger events not mapped yet to blocks of their own (caller holds `mu`).
  void sync() {
    for (;;) {
      const uint64_t synced = meta_u64("synced_sequence");
      const std::vector<event> evs = events_after(synced, kEventPage);
      if (evs.empty())
        return;
      sql_transaction t(db);
      for (const event& e : evs) {
        tx_row tx = relayed_tx(e);
        append_block(tx, {&e}, e.created_at);
      }
      statement(db, "UPDATE meta SET value = ? WHERE key = 'synced_sequence'").bind(evs.back().sequence).run();
      t.commit();
      if (evs.size() < kEventPage)
        return;
    }
  }

  /// Places a transaction sent here: its block holds the events of its sender after the synced
  /// sequence (a write appends at most a few), placed at the first of them; the other events
  /// (relayed writes that committed meanwhile) get their own blocks, all in sequence order.
  void finish(claim& c) {
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
    sql_transaction t(db);
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
      statement(db, "UPDATE meta SET value = ? WHERE key = 'synced_sequence'").bind(evs.back().sequence).run();
    statement(db, "DELETE FROM pending WHERE hash = ?").bind(c.tx.hash).run();
    t.commit();
  }

  // --- JSON forms ---------------------------------------------------------------------------

  json::object log_json(const log_row& l, const block_row& b, const hash256& tx_hash) const {
    json::array topics;
    for (const hash256& t : l.topics)
      topics.emplace_back(data_hex(t));
    return {{"address", data_hex(settings.registry)},
            {"topics", std::move(topics)},
            {"data", wire::data(l.data)},
            {"blockNumber", quantity(b.number)},
            {"blockHash", data_hex(b.hash)},
            {"transactionHash", data_hex(tx_hash)},
            {"transactionIndex", "0x0"},
            {"logIndex", quantity(l.log_index)},
            {"removed", false}};
  }

  u256 effective_gas_price(const std::optional<chain::decoded_tx>& d) const {
    const u256 base{rpc_surface::kBaseFee};
    if (!d)
      return base;
    const u256 tip = base + d->tx.max_priority_fee_per_gas;
    return d->tx.max_fee_per_gas < tip ? d->tx.max_fee_per_gas : tip;
  }

  json::object tx_json(const tx_row& t, const block_row& b) const {
    std::optional<chain::decoded_tx> d;
    if (t.nonce)
      if (auto r = chain::decode(t.raw))
        d = std::move(*r);
    json::object o;
    o["hash"] = data_hex(t.hash);
    o["type"] = "0x2";
    o["blockHash"] = data_hex(b.hash);
    o["blockNumber"] = quantity(b.number);
    o["transactionIndex"] = "0x0";
    o["from"] = data_hex(t.from);
    o["to"] = data_hex(settings.registry);
    o["chainId"] = quantity(settings.chain_id);
    o["accessList"] = json::array{};
    o["gasPrice"] = wire::quantity(effective_gas_price(d));
    if (d) {
      o["nonce"] = quantity(d->tx.nonce);
      o["value"] = wire::quantity(d->tx.value);
      o["gas"] = quantity(d->tx.gas_limit);
      o["maxFeePerGas"] = wire::quantity(d->tx.max_fee_per_gas);
      o["maxPriorityFeePerGas"] = wire::quantity(d->tx.max_priority_fee_per_gas);
      o["input"] = wire::data(d->tx.data);
      o["r"] = data_hex(d->signature.r);
      o["s"] = data_hex(d->signature.s);
      o["v"] = quantity(d->signature.v);
      o["yParity"] = quantity(d->signature.v);
    } else {
      // A relayed ledger write: the ledger keeps its event, not the calldata or a signature.
      o["nonce"] = "0x0";
      o["value"] = "0x0";
      o["gas"] = quantity(rpc_surface::kGasPerCall);
      o["maxFeePerGas"] = quantity(rpc_surface::kBaseFee);
      o["maxPriorityFeePerGas"] = "0x0";
      o["input"] = "0x";
      o["r"] = data_hex(hash256{});
      o["s"] = data_hex(hash256{});
      o["v"] = "0x0";
      o["yParity"] = "0x0";
    }
    return o;
  }

  json::object receipt_json(const tx_row& t, const block_row& b) {
    std::optional<chain::decoded_tx> d;
    if (t.nonce)
      if (auto r = chain::decode(t.raw))
        d = std::move(*r);
    json::array logs;
    for (const log_row& l : logs_after(b.number, -1, b.number, SIZE_MAX))
      logs.emplace_back(log_json(l, b, t.hash));
    json::object o{{"transactionHash", data_hex(t.hash)},
                   {"transactionIndex", "0x0"},
                   {"blockHash", data_hex(b.hash)},
                   {"blockNumber", quantity(b.number)},
                   {"from", data_hex(t.from)},
                   {"to", data_hex(settings.registry)},
                   {"cumulativeGasUsed", quantity(t.gas_used)},
                   {"gasUsed", quantity(t.gas_used)},
                   {"contractAddress", nullptr},
                   {"logs", std::move(logs)},
                   {"logsBloom", wire::data(b.bloom)},
                   {"type", "0x2"},
                   {"status", t.status ? "0x1" : "0x0"},
                   {"effectiveGasPrice", wire::quantity(effective_gas_price(d))}};
    // Besu's receipt field: the revert data of a failed transaction.
    if (!t.status)
      o["revertReason"] = wire::data(t.revert_data);
    return o;
  }

  json::object block_json(const block_row& b, bool full) {
    const std::optional<tx_row> t = b.number == 0 ? std::nullopt : tx_in_block(b.number);
    json::array txs;
    if (t)
      txs.emplace_back(full ? json::value(tx_json(*t, b)) : json::value(data_hex(t->hash)));
    const hash256 tx_root = t ? keccak256(t->hash) : hash256{};
    return {{"number", quantity(b.number)},
            {"hash", data_hex(b.hash)},
            {"parentHash", data_hex(b.parent)},
            {"nonce", "0x0000000000000000"},
            {"sha3Uncles", kEmptyUnclesHash},
            {"logsBloom", wire::data(b.bloom)},
            {"transactionsRoot", data_hex(tx_root)},
            {"stateRoot", data_hex(hash256{})},
            {"receiptsRoot", data_hex(tx_root)},
            {"miner", data_hex(address{})},
            {"difficulty", "0x0"},
            {"totalDifficulty", "0x0"},
            {"extraData", "0x"},
            {"size", quantity(t ? 700 : 500)},
            {"gasLimit", quantity(rpc_surface::kBlockGasLimit)},
            {"gasUsed", quantity(t ? t->gas_used : 0)},
            {"timestamp", quantity(static_cast<uint64_t>(b.timestamp))},
            {"transactions", std::move(txs)},
            {"uncles", json::array{}},
            {"baseFeePerGas", quantity(rpc_surface::kBaseFee)},
            {"mixHash", data_hex(hash256{})}};
  }

  /// A block parameter: a tag, a QUANTITY, or an EIP-1898 object. Needs `mu` (and a sync).
  uint64_t block_number_of(const json::value& v, std::string_view what) {
    if (const auto* s = v.if_string()) {
      if (*s == "latest" || *s == "pending" || *s == "safe" || *s == "finalized")
        return head();
      if (*s == "earliest")
        return 0;
      return take_param(wire::parse_quantity_u64(v, what));
    }
    if (const auto* o = v.if_object()) {
      if (const auto* n = o->if_contains("blockNumber"))
        return block_number_of(*n, what);
      if (const auto* h = o->if_contains("blockHash")) {
        const auto b = block_by_hash(hash_param(*h, std::string(what) + ".blockHash"));
        if (!b)
          throw_rpc(kServerError, "header for hash not found");
        return b->number;
      }
    }
    invalid_params(std::string(what) + ": expected a block tag, a QUANTITY or {\"blockNumber\"|\"blockHash\"}");
  }

  // --- executing calls ----------------------------------------------------------------------

  /// A ledger refusal as the registry's revert; storage failures stay errors.
  result<outcome> refused(const error& e, const refusal& r, const address& sender) {
    if (e.code.category() != enact::detail::ledger_category() || e.code == ledger_errc::storage)
      return e;
    switch (static_cast<ledger_errc>(e.code.value())) {
      case ledger_errc::not_admin:
        return reverted(reg::not_admin_error{r.account, sender});
      case ledger_errc::relay_not_allowed:
        return reverted(reg::relay_not_allowed_error{r.account, sender});
      case ledger_errc::already_unmanaged:
        return reverted(reg::already_unmanaged_error{r.account});
      case ledger_errc::unknown_account:
        return reverted(reg::unknown_account_error{r.account});
      case ledger_errc::unknown_usage_key:
        return reverted(reg::unknown_usage_key_error{r.account, r.usage_key.value_or(hash256{})});
      case ledger_errc::unknown_group:
        return reverted(reg::unknown_group_error{r.account, r.group.value_or(u256{})});
      case ledger_errc::unknown_wallet: {
        address w = r.wallets.empty() ? address{} : r.wallets.front();
        if (r.wallets.size() > 1)
          for (const address& candidate : r.wallets)
            if (!ledger.get_wallet(r.account, candidate)) {
              w = candidate;
              break;
            }
        return reverted(reg::unknown_wallet_error{r.account, w});
      }
      case ledger_errc::unknown_action:
        return reverted(reg::unknown_action_error{r.account, r.hashed_cid.value_or(hash256{})});
      case ledger_errc::duplicate:
        return reverted(reg::duplicate_error{r.duplicate.empty() ? e.message : r.duplicate});
      case ledger_errc::hash_not_canonical:
        return reverted(reg::account_hash_not_canonical_error{r.account, r.admin});
      case ledger_errc::managed_not_allowed:
        return reverted(reg::managed_not_allowed_error{r.account, sender});
      case ledger_errc::hash_is_usage_key:
        return reverted(reg::hash_is_usage_key_error{r.account});
      case ledger_errc::hash_is_account:
        return reverted(reg::hash_is_account_error{r.usage_key.value_or(hash256{})});
      case ledger_errc::usage_key_of_another_account:
        return reverted(reg::usage_key_of_another_account_error{r.account, r.usage_key.value_or(hash256{})});
      case ledger_errc::new_admin_not_sender:
        return reverted(reg::new_admin_not_sender_error{r.account, r.admin});
      default:
        return reverted(reg::invalid_argument_error{e.message});
    }
  }

  template <class T>
  result<outcome> written(const result<T>& r, const refusal& why, const address& sender) {
    if (!r)
      return refused(r.err(), why, sender);
    return returned({});
  }

  std::vector<address> api_payers() const { return ledger.api_payers(); }
  bool is_api_payer(const address& a) const {
    const auto p = api_payers();
    return std::find(p.begin(), p.end(), a) != p.end();
  }

  /// The ledger's 1-based pages cut to the registry's (offset, limit) slice.
  template <class T, class F>
  result<std::pair<std::vector<T>, uint64_t>> slice(F&& list, const u256& offset, const u256& limit) {
    const uint64_t n = limit.fits_u64() ? std::min<uint64_t>(static_cast<uint64_t>(limit), rpc_surface::kMaxListItems)
                                        : rpc_surface::kMaxListItems;
    if (n == 0 || !offset.fits_u64()) {
      ENACT_TRY(page<T> first, list(page_request{1, 1}));
      return std::pair{std::vector<T>{}, first.total};
    }
    const auto off = static_cast<uint64_t>(offset);
    const uint64_t within = off % n;
    ENACT_TRY(page<T> p, list(page_request{off / n + 1, n}));
    std::vector<T> items(std::make_move_iterator(p.items.begin()), std::make_move_iterator(p.items.end()));
    if (within > 0 && p.items.size() == n) {
      ENACT_TRY(page<T> next, list(page_request{off / n + 2, n}));
      std::move(next.items.begin(), next.items.end(), std::back_inserter(items));
    }
    std::vector<T> out;
    for (size_t i = within; i < items.size() && out.size() < n; ++i)
      out.push_back(std::move(items[i]));
    return std::pair{std::move(out), p.total};
  }

  template <class Call, class View, class T, class F, class Convert>
  result<outcome> list_view(F&& list, const Call& c, const refusal& why, const address& sender, Convert&& convert) {
    auto s = slice<T>(std::forward<F>(list), c.offset, c.limit);
    if (!s)
      return refused(s.err(), why, sender);
    reg::list_page<View> out;
    for (const T& x : s->first)
      out.items.push_back(convert(x));
    out.total = u256{s->second};
    return returned(reg::encode_result<Call>(out));
  }

  static reg::group_view group_view(const group& g) { return {g.id, g.name, g.description, g.pkps, g.cid_hashes}; }
  static reg::wallet_view wallet_view(const wallet& w) {
    return {w.pkp_id, w.derivation_path, w.name, w.description,
            u256{static_cast<uint64_t>(std::max<int64_t>(w.created_at, 0))}};
  }
  static reg::action_view action_view(const action& a) {
    return {a.hashed_cid, a.cid, a.name, a.description,
            u256{static_cast<uint64_t>(std::max<int64_t>(a.created_at, 0))}};
  }
  static reg::usage_key_view usage_key_view(const usage_key& k) {
    return {k.account,          k.hash,          k.wallet,
            u256{k.expiration}, u256{k.balance}, k.name,
            k.description,      k.permissions,   u256{static_cast<uint64_t>(std::max<int64_t>(k.created_at, 0))}};
  }

  result<outcome> account_view(const result<account>& a, const refusal& why, const address& sender) {
    if (!a)
      return refused(a.err(), why, sender);
    auto balance = ledger.balance(a->hash);
    if (!balance)
      return refused(balance.err(), why, sender);
    auto wallets = ledger.wallet_count(a->hash);
    if (!wallets)
      return refused(wallets.err(), why, sender);
    reg::account_view v{a->hash,
                        a->admin,
                        a->managed,
                        a->name,
                        a->description,
                        a->email,
                        u256{static_cast<uint64_t>(std::max<int64_t>(a->created_at, 0))},
                        u256{*balance},
                        u256{*wallets}};
    return returned(reg::encode_result<reg::get_account_call>(v));
  }

  /// Runs one registry call with `sender` as msg.sender. Writes go straight to the ledger; the
  /// caller wraps them in a batch.
  result<outcome> run(const reg::call& any, const address& sender) {
    const write_context w{sender, 0};
    return std::visit(
        [&](const auto& c) -> result<outcome> {
          using C = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<C, reg::owner_call>) {
            const auto p = api_payers();
            return returned(reg::encode_result<C>(p.empty() ? address{} : p.front()));
          } else if constexpr (std::is_same_v<C, reg::api_payers_call>) {
            return returned(reg::encode_result<C>(api_payers()));
          } else if constexpr (std::is_same_v<C, reg::is_api_payer_call>) {
            return returned(reg::encode_result<C>(is_api_payer(c.who)));
          } else if constexpr (std::is_same_v<C, reg::set_api_payer_call>) {
            return reverted(reg::not_owner_error{sender});
          } else if constexpr (std::is_same_v<C, reg::new_account_call>) {
            account a;
            a.hash = c.api_key_hash;
            a.admin = c.admin;
            a.managed = c.managed;
            a.name = c.name;
            a.description = c.description;
            a.email = c.email;
            auto r = ledger.new_account(w, a);
            refusal why{c.api_key_hash};
            why.admin = c.admin;
            if (!r && r.code() == ledger_errc::duplicate)
              why.duplicate = r.err().message.starts_with("admin") ? "admin" : "apiKeyHash";
            return written(r, why, sender);
          } else if constexpr (std::is_same_v<C, reg::convert_to_chain_secured_call>) {
            refusal why{c.account_hash};
            why.duplicate = "newAdmin";
            why.admin = c.new_admin;
            return written(ledger.convert_to_chain_secured(w, c.account_hash, c.new_admin), why, sender);
          } else if constexpr (std::is_same_v<C, reg::get_account_call>) {
            return account_view(ledger.get_account(c.account_hash), refusal{c.account_hash}, sender);
          } else if constexpr (std::is_same_v<C, reg::account_by_admin_call>) {
            return account_view(ledger.account_by_admin(c.admin), refusal{}, sender);
          } else if constexpr (std::is_same_v<C, reg::set_usage_api_key_call> ||
                               std::is_same_v<C, reg::set_usage_api_key_with_wallet_call>) {
            if (!c.expiration.fits_u64())
              return reverted(reg::invalid_argument_error{over_64_bits("expiration")});
            if (!c.balance.fits_u64())
              return reverted(reg::invalid_argument_error{over_64_bits("balance")});
            usage_key k;
            k.hash = c.usage_key_hash;
            k.account = c.account_hash;
            if constexpr (std::is_same_v<C, reg::set_usage_api_key_with_wallet_call>)
              k.wallet = c.wallet;
            k.name = c.name;
            k.description = c.description;
            k.expiration = static_cast<uint64_t>(c.expiration);
            k.balance = static_cast<uint64_t>(c.balance);
            k.permissions = c.permissions;
            refusal why{c.account_hash};
            why.usage_key = c.usage_key_hash;
            why.duplicate = "usageKeyHash";
            return written(ledger.set_usage_key(w, k), why, sender);
          } else if constexpr (std::is_same_v<C, reg::update_usage_api_key_metadata_call>) {
            refusal why{c.account_hash};
            why.usage_key = c.usage_key_hash;
            return written(ledger.update_usage_key_metadata(w, c.account_hash, c.usage_key_hash, c.name, c.description),
                           why, sender);
          } else if constexpr (std::is_same_v<C, reg::remove_usage_api_key_call>) {
            refusal why{c.account_hash};
            why.usage_key = c.usage_key_hash;
            return written(ledger.remove_usage_key(w, c.account_hash, c.usage_key_hash), why, sender);
          } else if constexpr (std::is_same_v<C, reg::get_usage_api_key_call>) {
            auto k = ledger.find_usage_key(c.usage_key_hash);
            refusal why{};
            why.usage_key = c.usage_key_hash;
            if (!k)
              return refused(k.err(), why, sender);
            return returned(reg::encode_result<C>(usage_key_view(*k)));
          } else if constexpr (std::is_same_v<C, reg::list_usage_api_keys_call>) {
            return list_view<C, reg::usage_key_view, usage_key>(
                [&](page_request p) { return ledger.list_usage_keys(c.account_hash, p); }, c, refusal{c.account_hash},
                sender, usage_key_view);
          } else if constexpr (std::is_same_v<C, reg::add_group_call>) {
            group g;
            g.name = c.name;
            g.description = c.description;
            g.pkps = c.pkp_ids;
            g.cid_hashes = c.cid_hashes;
            auto r = ledger.add_group(w, c.account_hash, g);
            if (!r) {
              refusal why{c.account_hash};
              why.wallets = c.pkp_ids;
              return refused(r.err(), why, sender);
            }
            return returned(reg::encode_result<C>(r->id));
          } else if constexpr (std::is_same_v<C, reg::update_group_call>) {
            group g;
            g.id = c.group_id;
            g.name = c.name;
            g.description = c.description;
            g.pkps = c.pkp_ids;
            g.cid_hashes = c.cid_hashes;
            refusal why{c.account_hash, u256{c.group_id}};
            why.wallets = c.pkp_ids;
            return written(ledger.update_group(w, c.account_hash, g), why, sender);
          } else if constexpr (std::is_same_v<C, reg::remove_group_call>) {
            return written(ledger.remove_group(w, c.account_hash, c.group_id),
                           refusal{c.account_hash, u256{c.group_id}}, sender);
          } else if constexpr (std::is_same_v<C, reg::add_pkp_to_group_call> ||
                               std::is_same_v<C, reg::remove_pkp_from_group_call>) {
            refusal why{c.account_hash, u256{c.group_id}};
            why.wallets = {c.pkp_id};
            why.duplicate = "pkpId";
            if constexpr (std::is_same_v<C, reg::add_pkp_to_group_call>)
              return written(ledger.add_pkp_to_group(w, c.account_hash, c.group_id, c.pkp_id), why, sender);
            else
              return written(ledger.remove_pkp_from_group(w, c.account_hash, c.group_id, c.pkp_id), why, sender);
          } else if constexpr (std::is_same_v<C, reg::add_action_to_group_call> ||
                               std::is_same_v<C, reg::remove_action_from_group_call>) {
            refusal why{c.account_hash, u256{c.group_id}};
            why.hashed_cid = c.hashed_cid;
            why.duplicate = "hashedCid";
            if constexpr (std::is_same_v<C, reg::add_action_to_group_call>)
              return written(ledger.add_action_to_group(w, c.account_hash, c.group_id, c.hashed_cid), why, sender);
            else
              return written(ledger.remove_action_from_group(w, c.account_hash, c.group_id, c.hashed_cid), why, sender);
          } else if constexpr (std::is_same_v<C, reg::get_group_call>) {
            auto g = ledger.get_group(c.account_hash, c.group_id);
            if (!g)
              return refused(g.err(), refusal{c.account_hash, u256{c.group_id}}, sender);
            return returned(reg::encode_result<C>(group_view(*g)));
          } else if constexpr (std::is_same_v<C, reg::list_groups_call>) {
            return list_view<C, reg::group_view, group>(
                [&](page_request p) { return ledger.list_groups(c.account_hash, p); }, c, refusal{c.account_hash},
                sender, group_view);
          } else if constexpr (std::is_same_v<C, reg::register_wallet_derivation_call>) {
            wallet wl;
            wl.pkp_id = c.wallet;
            wl.derivation_path = c.derivation_path;
            wl.name = c.name;
            wl.description = c.description;
            refusal why{c.admin_hash};
            why.wallets = {c.wallet};
            why.duplicate = "wallet";
            return written(ledger.register_wallet(w, c.admin_hash, wl), why, sender);
          } else if constexpr (std::is_same_v<C, reg::get_wallet_call>) {
            auto wl = ledger.get_wallet(c.account_hash, c.wallet);
            refusal why{c.account_hash};
            why.wallets = {c.wallet};
            if (!wl)
              return refused(wl.err(), why, sender);
            return returned(reg::encode_result<C>(wallet_view(*wl)));
          } else if constexpr (std::is_same_v<C, reg::list_wallets_call>) {
            return list_view<C, reg::wallet_view, wallet>(
                [&](page_request p) { return ledger.list_wallets(c.account_hash, p); }, c, refusal{c.account_hash},
                sender, wallet_view);
          } else if constexpr (std::is_same_v<C, reg::list_wallets_in_group_call>) {
            return list_view<C, reg::wallet_view, wallet>(
                [&](page_request p) { return ledger.list_wallets_in_group(c.account_hash, c.group_id, p); }, c,
                refusal{c.account_hash, u256{c.group_id}}, sender, wallet_view);
          } else if constexpr (std::is_same_v<C, reg::add_action_call>) {
            action a;
            a.cid = c.cid;
            a.hashed_cid = c.hashed_cid;
            a.name = c.name;
            a.description = c.description;
            refusal why{c.account_hash};
            why.hashed_cid = c.hashed_cid;
            why.duplicate = "hashedCid";
            return written(ledger.add_action(w, c.account_hash, a), why, sender);
          } else if constexpr (std::is_same_v<C, reg::update_action_metadata_call>) {
            refusal why{c.account_hash};
            why.hashed_cid = c.hashed_cid;
            return written(ledger.update_action_metadata(w, c.account_hash, c.hashed_cid, c.name, c.description), why,
                           sender);
          } else if constexpr (std::is_same_v<C, reg::delete_action_call>) {
            refusal why{c.account_hash};
            why.hashed_cid = c.hashed_cid;
            return written(ledger.delete_action(w, c.account_hash, c.hashed_cid), why, sender);
          } else if constexpr (std::is_same_v<C, reg::get_action_call>) {
            auto a = ledger.get_action(c.account_hash, c.hashed_cid);
            refusal why{c.account_hash};
            why.hashed_cid = c.hashed_cid;
            if (!a)
              return refused(a.err(), why, sender);
            return returned(reg::encode_result<C>(action_view(*a)));
          } else if constexpr (std::is_same_v<C, reg::list_actions_call>) {
            return list_view<C, reg::action_view, action>(
                [&](page_request p) { return ledger.list_actions(c.account_hash, std::nullopt, p); }, c,
                refusal{c.account_hash}, sender, action_view);
          } else if constexpr (std::is_same_v<C, reg::list_actions_in_group_call>) {
            return list_view<C, reg::action_view, action>(
                [&](page_request p) { return ledger.list_actions(c.account_hash, c.group_id, p); }, c,
                refusal{c.account_hash, u256{c.group_id}}, sender, action_view);
          } else if constexpr (std::is_same_v<C, reg::credit_balance_call>) {
            auto b = ledger.balance(c.account_hash);
            if (!b)
              return refused(b.err(), refusal{c.account_hash}, sender);
            return returned(reg::encode_result<C>(u256{*b}));
          } else if constexpr (std::is_same_v<C, reg::debit_credits_call> ||
                               std::is_same_v<C, reg::record_payment_call> ||
                               std::is_same_v<C, reg::credit_payment_call>) {
            if (!is_api_payer(sender))
              return reverted(reg::not_api_payer_error{sender});
            return reverted(reg::invalid_argument_error{
                std::string(C::kSignature.substr(0, C::kSignature.find('('))) +
                ": not supported by the embedded registry (the server books credits itself)"});
          } else if constexpr (std::is_same_v<C, reg::charge_credits_call>) {
            auto a = ledger.get_account(c.account_hash);
            const bool admin = a && a->admin == sender;
            if (!is_api_payer(sender) && !admin)
              return reverted(reg::not_api_payer_error{sender});
            if (!a)
              return refused(a.err(), refusal{c.account_hash}, sender);
            if (c.amount != u256{})
              return reverted(reg::invalid_argument_error{
                  "chargeCredits: an amount above 0 is not supported by the embedded registry"});
            auto b = ledger.balance(c.account_hash);
            if (!b)
              return refused(b.err(), refusal{c.account_hash}, sender);
            return returned(reg::encode_result<C>(u256{*b}));
          } else if constexpr (std::is_same_v<C, reg::get_payment_call>) {
            auto p = ledger.get_payment(c.account_hash, c.intent_id);
            if (!p) {
              if (p.code() == ledger_errc::unknown_payment)
                return reverted(reg::unknown_payment_error{c.account_hash, c.intent_id});
              return refused(p.err(), refusal{c.account_hash}, sender);
            }
            reg::payment_view v{
                p->account,  p->intent_id, u256{p->amount_cents},
                p->provider, p->credited,  u256{static_cast<uint64_t>(std::max<int64_t>(p->created_at, 0))}};
            return returned(reg::encode_result<C>(v));
          } else if constexpr (std::is_same_v<C, reg::multicall_call>) {
            return reverted(
                reg::invalid_argument_error{"multicall: a nested multicall is not supported by the embedded registry"});
          } else {
            static_assert(!sizeof(C), "every registry call is handled");
          }
        },
        any);
  }

  static bool is_view(const reg::call& c) {
    return std::visit(
        [](const auto& x) {
          using C = std::decay_t<decltype(x)>;
          return std::is_same_v<C, reg::owner_call> || std::is_same_v<C, reg::api_payers_call> ||
                 std::is_same_v<C, reg::is_api_payer_call> || std::is_same_v<C, reg::get_account_call> ||
                 std::is_same_v<C, reg::account_by_admin_call> || std::is_same_v<C, reg::get_usage_api_key_call> ||
                 std::is_same_v<C, reg::list_usage_api_keys_call> || std::is_same_v<C, reg::get_group_call> ||
                 std::is_same_v<C, reg::list_groups_call> || std::is_same_v<C, reg::get_wallet_call> ||
                 std::is_same_v<C, reg::list_wallets_call> || std::is_same_v<C, reg::list_wallets_in_group_call> ||
                 std::is_same_v<C, reg::get_action_call> || std::is_same_v<C, reg::list_actions_call> ||
                 std::is_same_v<C, reg::list_actions_in_group_call> || std::is_same_v<C, reg::credit_balance_call> ||
                 std::is_same_v<C, reg::get_payment_call>;
        },
        c);
  }

  /// Executes calldata sent to the registry by `sender` with `value` wei attached: applied to
  /// the ledger when `commit`, a dry run otherwise. The error is a storage failure.
  result<outcome> execute(bytes_view calldata, const address& sender, const u256& value, bool commit) {
    // The registry has no payable function and no fallback: Solidity reverts without data.
    if (value != u256{})
      return outcome{true, {}};
    auto decoded = reg::decode_call(calldata);
    if (!decoded)
      return outcome{true, {}};
    const reg::call& c = *decoded;
    if (is_view(c))
      return run(c, sender);
    outcome out;
    bool storage_failed = false;
    auto r = ledger.batch(commit, [&]() -> result<void> {
      if (const auto* m = std::get_if<reg::multicall_call>(&c)) {
        std::vector<bytes> results;
        for (const bytes& sub : m->calls) {
          auto inner = reg::decode_call(sub);
          if (!inner) {
            out = outcome{true, {}};
            return fail(ledger_errc::invalid_argument, "reverted");
          }
          auto o = run(*inner, sender);
          if (!o) {
            storage_failed = true;
            return o.err();
          }
          if (o->reverted) {
            out = std::move(*o);
            return fail(ledger_errc::invalid_argument, "reverted");
          }
          results.push_back(std::move(o->data));
        }
        out = returned(reg::encode_result<reg::multicall_call>(results));
        return {};
      }
      auto o = run(c, sender);
      if (!o) {
        storage_failed = true;
        return o.err();
      }
      out = std::move(*o);
      if (out.reverted)
        return fail(ledger_errc::invalid_argument, "reverted");
      return {};
    });
    if (!r && (storage_failed || !out.reverted))
      return r.err();
    return out;
  }

  // --- methods ------------------------------------------------------------------------------

  struct call_object {
    address from{};
    std::optional<address> to;
    bytes data;
    u256 value;
  };

  call_object read_call_object(const json::value& v) {
    const auto* o = v.if_object();
    if (o == nullptr)
      invalid_params("transaction: expected an object");
    call_object c;
    if (const auto* f = o->if_contains("from"); f && !f->is_null())
      c.from = address_param(*f, "transaction.from");
    if (const auto* t = o->if_contains("to"); t && !t->is_null())
      c.to = address_param(*t, "transaction.to");
    const auto* input = o->if_contains("input");
    const auto* data = o->if_contains("data");
    if (input && !input->is_null())
      c.data = take_param(wire::parse_data(*input, "transaction.input"));
    if (data && !data->is_null()) {
      bytes d = take_param(wire::parse_data(*data, "transaction.data"));
      if (input && !input->is_null() && d != c.data)
        invalid_params("transaction: both \"data\" and \"input\" are set and differ");
      c.data = std::move(d);
    }
    if (const auto* val = o->if_contains("value"); val && !val->is_null())
      c.value = take_param(wire::parse_quantity(*val, "transaction.value"));
    return c;
  }

  [[noreturn]] void revert_error(const bytes& data) {
    if (data.empty())
      throw_rpc(kServerError, "execution reverted");
    std::string message = "execution reverted";
    const reg::registry_error e = reg::decode_revert(data);
    if (e.code == registry_errc::error_string)
      message += ": " + std::string(e.args.at("message").as_string());
    throw_rpc(kExecutionReverted, message, json::string(wire::data(data)));
  }

  [[noreturn]] void internal(const error& e) {
    if (report)
      report(e.message);
    throw_rpc(kInternalError, "internal error");
  }

  std::string not_the_registry(const std::optional<address>& to) const {
    if (!to)
      return "contract creation is not supported: this node serves only the permission registry "
             "at " +
             data_hex(settings.registry);
    return "transaction to " + data_hex(*to) + ": this node executes only the permission registry at " +
           data_hex(settings.registry);
  }

  json::value eth_call(const json::array& p) {
    const call_object c = read_call_object(param(p, 0, "transaction"));
    if (!c.to)
      throw_rpc(kServerError, not_the_registry(c.to));
    if (*c.to != settings.registry)
      return "0x";  // an account without code answers empty return data
    auto r = execute(c.data, c.from, c.value, false);
    if (!r)
      internal(r.err());
    if (r->reverted)
      revert_error(r->data);
    return json::string(wire::data(r->data));
  }

  json::value eth_estimate_gas(const json::array& p) {
    const call_object c = read_call_object(param(p, 0, "transaction"));
    if (!c.to || *c.to != settings.registry)
      throw_rpc(kServerError, not_the_registry(c.to));
    auto r = execute(c.data, c.from, c.value, false);
    if (!r)
      internal(r.err());
    if (r->reverted)
      revert_error(r->data);
    return json::string(quantity(rpc_surface::kGasPerCall));
  }

  json::value eth_send_raw_transaction(const json::array& p) {
    const bytes raw = take_param(wire::parse_data(param(p, 0, "transaction"), "transaction"));
    auto decoded = chain::decode(raw);
    if (!decoded) {
      if (decoded.code() == chain_errc::wrong_type)
        throw_rpc(kServerError, "transaction type not supported (only EIP-1559 type 2)");
      throw_rpc(kServerError, "invalid transaction: " + decoded.err().message);
    }
    const chain::decoded_tx& d = *decoded;
    if (d.tx.chain_id != settings.chain_id)
      throw_rpc(kServerError, "invalid sender: invalid chain id for signer: have " + std::to_string(d.tx.chain_id) +
                                  " want " + std::to_string(settings.chain_id));
    if (!d.tx.to || *d.tx.to != settings.registry)
      throw_rpc(kServerError, not_the_registry(d.tx.to));
    if (d.tx.gas_limit < kIntrinsicGas)
      throw_rpc(kServerError, "intrinsic gas too low: gas " + std::to_string(d.tx.gas_limit) + ", minimum needed " +
                                  std::to_string(kIntrinsicGas));

    std::lock_guard lock(mu);
    if (tx_by_hash(d.hash))
      throw_rpc(kServerError, "already known");
    const uint64_t next = nonce_of(d.from);
    if (d.tx.nonce < next)
      throw_rpc(kServerError, "nonce too low: address " + data_hex(d.from) + ", tx: " + std::to_string(d.tx.nonce) +
                                  " state: " + std::to_string(next));
    if (d.tx.nonce > next)
      throw_rpc(kServerError, "nonce too high: address " + data_hex(d.from) + ", tx: " + std::to_string(d.tx.nonce) +
                                  " state: " + std::to_string(next));
    sync();
    statement(db,
              "INSERT INTO pending (hash, sender, nonce, raw, after_sequence) "
              "VALUES (?, ?, ?, ?, (SELECT value FROM meta WHERE key = 'synced_sequence'))")
        .bind(d.hash, d.from, d.tx.nonce, raw)
        .run();
    auto r = execute(d.tx.data, d.from, d.tx.value, true);
    if (!r) {
      statement(db, "DELETE FROM pending WHERE hash = ?").bind(d.hash).run();
      internal(r.err());
    }
    claim c;
    c.tx.hash = d.hash;
    c.tx.from = d.from;
    c.tx.nonce = d.tx.nonce;
    c.tx.raw = raw;
    c.tx.status = !r->reverted;
    if (r->reverted)
      c.tx.revert_data = r->data;
    c.tx.gas_used = std::min(rpc_surface::kGasPerCall, d.tx.gas_limit);
    finish(c);
    return json::string(data_hex(d.hash));
  }

  json::value eth_get_logs(const json::array& p) {
    const auto* f = param(p, 0, "filter").if_object();
    if (f == nullptr)
      invalid_params("filter: expected an object");
    for (const auto& [key, v] : *f)
      if (key != "fromBlock" && key != "toBlock" && key != "blockHash" && key != "address" && key != "topics")
        invalid_params("filter." + std::string(key) + ": unknown field");
    std::lock_guard lock(mu);
    sync();
    uint64_t from = 0, to = 0;
    const auto* block_hash = f->if_contains("blockHash");
    if (block_hash && !block_hash->is_null()) {
      if (f->contains("fromBlock") || f->contains("toBlock"))
        invalid_params("filter: blockHash excludes fromBlock and toBlock");
      const auto b = block_by_hash(hash_param(*block_hash, "filter.blockHash"));
      if (!b)
        throw_rpc(kServerError, "unknown block");
      from = to = b->number;
    } else {
      const uint64_t latest = head();
      const auto bound = [&](const char* key) {
        const auto* v = f->if_contains(key);
        return v && !v->is_null() ? block_number_of(*v, std::string("filter.") + key) : latest;
      };
      from = bound("fromBlock");
      to = std::min(bound("toBlock"), latest);
      if (from > to)
        return json::array{};
    }
    if (const auto* a = f->if_contains("address"); a && !a->is_null()) {
      bool ours = false;
      if (const auto* list = a->if_array()) {
        for (const auto& x : *list)
          ours = address_param(x, "filter.address") == settings.registry || ours;
      } else {
        ours = address_param(*a, "filter.address") == settings.registry;
      }
      if (!ours)
        return json::array{};
    }
    // topics[i]: null = any, a hash, or an array of hashes (any of them; null inside = any).
    std::vector<std::optional<std::vector<hash256>>> want;
    if (const auto* t = f->if_contains("topics"); t && !t->is_null()) {
      const auto* list = t->if_array();
      if (list == nullptr)
        invalid_params("filter.topics: expected an array");
      for (size_t i = 0; i < list->size(); ++i) {
        const json::value& x = (*list)[i];
        const std::string what = "filter.topics[" + std::to_string(i) + "]";
        if (x.is_null()) {
          want.emplace_back();
        } else if (const auto* any = x.if_array()) {
          std::vector<hash256> options;
          bool wildcard = false;
          for (const auto& y : *any) {
            if (y.is_null())
              wildcard = true;
            else
              options.push_back(hash_param(y, what));
          }
          want.emplace_back(wildcard ? std::nullopt : std::optional(std::move(options)));
        } else {
          want.emplace_back(std::vector<hash256>{hash_param(x, what)});
        }
      }
    }
    json::array out;
    std::optional<block_row> b;
    std::optional<tx_row> t;
    // Read a bounded number at a time so that a huge range neither loads nor returns too much.
    constexpr size_t kPage = 4096;
    uint64_t at_block = from;
    int64_t at_index = -1;
    for (;;) {
      const std::vector<log_row> rows = logs_after(at_block, at_index, to, kPage);
      for (const log_row& l : rows) {
        bool match = want.size() <= l.topics.size();
        for (size_t i = 0; match && i < want.size(); ++i)
          if (want[i])
            match = std::find(want[i]->begin(), want[i]->end(), l.topics[i]) != want[i]->end();
        if (!match)
          continue;
        if (out.size() >= rpc_surface::kMaxLogs)
          throw_rpc(kLimitExceeded, "query returned more than " + std::to_string(rpc_surface::kMaxLogs) +
                                        " results; narrow the block range");
        if (!b || b->number != l.block) {
          b = block_at(l.block);
          t = tx_in_block(l.block);
          if (!b || !t)
            throw store_failure("rpc store: corrupt: block " + std::to_string(l.block));
        }
        out.emplace_back(log_json(l, *b, t->hash));
      }
      if (rows.size() < kPage)
        break;
      at_block = rows.back().block;
      at_index = static_cast<int64_t>(rows.back().log_index);
    }
    return out;
  }

  json::value eth_fee_history(const json::array& p) {
    const uint64_t count = std::min<uint64_t>(count_param(param(p, 0, "blockCount"), "blockCount"), 1024);
    std::lock_guard lock(mu);
    sync();
    const uint64_t newest = std::min(block_number_of(param(p, 1, "newestBlock"), "newestBlock"), head());
    const uint64_t n = std::min(count, newest + 1);
    const uint64_t oldest = newest + 1 - n;
    json::array base, ratio, reward;
    const json::array* percentiles = nullptr;
    if (const auto* r = optional_param(p, 2)) {
      percentiles = r->if_array();
      if (percentiles == nullptr)
        invalid_params("rewardPercentiles: expected an array");
    }
    for (uint64_t i = 0; i < n; ++i) {
      base.emplace_back(quantity(rpc_surface::kBaseFee));
      const auto t = tx_in_block(oldest + i);
      ratio.emplace_back(static_cast<double>(t ? t->gas_used : 0) / static_cast<double>(rpc_surface::kBlockGasLimit));
      if (percentiles) {
        json::array rs;
        for (size_t j = 0; j < percentiles->size(); ++j)
          rs.emplace_back(quantity(rpc_surface::kPriorityFee));
        reward.emplace_back(std::move(rs));
      }
    }
    base.emplace_back(quantity(rpc_surface::kBaseFee));  // the block after the newest
    json::object o{
        {"oldestBlock", quantity(oldest)}, {"baseFeePerGas", std::move(base)}, {"gasUsedRatio", std::move(ratio)}};
    if (percentiles)
      o["reward"] = std::move(reward);
    return o;
  }

  json::value dispatch(std::string_view method, const json::array& p) {
    if (method == "eth_chainId")
      return json::string(quantity(settings.chain_id));
    if (method == "net_version")
      return json::string(std::to_string(settings.chain_id));
    if (method == "web3_clientVersion")
      return json::string(kClientVersion);
    if (method == "net_listening")
      return true;
    if (method == "eth_syncing")
      return false;
    if (method == "eth_accounts")
      return json::array{};
    if (method == "eth_gasPrice")
      return json::string(quantity(rpc_surface::kBaseFee + rpc_surface::kPriorityFee));
    if (method == "eth_maxPriorityFeePerGas")
      return json::string(quantity(rpc_surface::kPriorityFee));
    if (method == "eth_getBalance") {
      (void)address_param(param(p, 0, "address"), "address");
      return json::string(rpc_surface::kBalance);
    }
    if (method == "eth_getCode") {
      const address a = address_param(param(p, 0, "address"), "address");
      return json::string(a == settings.registry ? wire::data(kRegistryCodeStub) : "0x");
    }
    if (method == "eth_getStorageAt") {
      (void)address_param(param(p, 0, "address"), "address");
      return json::string(data_hex(hash256{}));
    }
    if (method == "eth_call")
      return eth_call(p);
    if (method == "eth_estimateGas")
      return eth_estimate_gas(p);
    if (method == "eth_sendRawTransaction")
      return eth_send_raw_transaction(p);
    if (method == "eth_getLogs")
      return eth_get_logs(p);
    if (method == "eth_feeHistory")
      return eth_fee_history(p);
    if (method == "eth_blockNumber") {
      std::lock_guard lock(mu);
      sync();
      return json::string(quantity(head()));
    }
    if (method == "eth_getBlockByNumber" || method == "eth_getBlockByHash") {
      const bool by_hash = method == "eth_getBlockByHash";
      const json::value& which = param(p, 0, by_hash ? "blockHash" : "block");
      const json::value* full = optional_param(p, 1);
      if (full && !full->is_bool())
        invalid_params("argument 1: expected a boolean (full transactions)");
      std::lock_guard lock(mu);
      sync();
      const std::optional<block_row> b =
          by_hash ? block_by_hash(hash_param(which, "blockHash")) : block_at(block_number_of(which, "block"));
      if (!b)
        return nullptr;
      return block_json(*b, full && full->get_bool());
    }
    if (method == "eth_getTransactionCount") {
      const address a = address_param(param(p, 0, "address"), "address");
      std::lock_guard lock(mu);
      const json::value* tag = optional_param(p, 1);
      if (tag == nullptr)
        return json::string(quantity(nonce_of(a)));
      sync();
      return json::string(quantity(nonce_of(a, block_number_of(*tag, "block"))));
    }
    if (method == "eth_getTransactionByHash" || method == "eth_getTransactionReceipt") {
      const hash256 h = hash_param(param(p, 0, "transactionHash"), "transactionHash");
      std::lock_guard lock(mu);
      sync();
      const std::optional<tx_row> t = tx_by_hash(h);
      if (!t)
        return nullptr;
      const std::optional<block_row> b = block_at(t->block);
      if (!b)
        throw store_failure("rpc store: corrupt: block " + std::to_string(t->block));
      return method == "eth_getTransactionByHash" ? tx_json(*t, *b) : receipt_json(*t, *b);
    }
    throw_rpc(kMethodNotFound, "the method " + std::string(method) + " does not exist/is not available");
  }

  // --- the request boundary -----------------------------------------------------------------

  static json::object error_response(const json::value& id, const rpc_error& e) {
    json::object err{{"code", e.code}, {"message", e.message}};
    if (!e.data.is_null())
      err["data"] = e.data;
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
  }

  /// The response to one request object; nullopt for a notification.
  std::optional<json::object> answer(const json::value& request) {
    const auto* o = request.if_object();
    if (o == nullptr)
      return error_response(nullptr, {kInvalidRequest, "invalid request: expected an object"});
    json::value id = nullptr;
    const json::value* given_id = o->if_contains("id");
    if (given_id != nullptr) {
      if (!given_id->is_string() && !given_id->is_number() && !given_id->is_null())
        return error_response(nullptr, {kInvalidRequest,
                                        "invalid request: id must be a string, a number "
                                        "or null"});
      id = *given_id;
    }
    const auto* version = o->if_contains("jsonrpc");
    if (version == nullptr || !version->is_string() || version->get_string() != "2.0")
      return error_response(id, {kInvalidRequest, "invalid request: jsonrpc must be \"2.0\""});
    const auto* method = o->if_contains("method");
    if (method == nullptr || !method->is_string())
      return error_response(id, {kInvalidRequest, "invalid request: method must be a string"});
    static const json::array kNoParams;
    const json::array* params = &kNoParams;
    if (const auto* p = o->if_contains("params"); p != nullptr && !p->is_null()) {
      if (p->is_object())
        return error_response(id, {kInvalidParams, "invalid params: by-name params are not supported"});
      params = p->if_array();
      if (params == nullptr)
        return error_response(id, {kInvalidRequest, "invalid request: params must be an array"});
    }
    json::value out;
    try {
      out = dispatch(method->get_string(), *params);
    } catch (const rpc_error& e) {
      if (given_id == nullptr)
        return std::nullopt;
      return error_response(id, e);
    } catch (const std::exception& e) {
      if (report)
        report(std::string(method->get_string()) + ": " + e.what());
      if (given_id == nullptr)
        return std::nullopt;
      return error_response(id, {kInternalError, "internal error"});
    }
    if (given_id == nullptr)
      return std::nullopt;
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(out)}};
  }

  std::string handle(std::string_view body) {
    std::error_code ec;
    const json::value doc = json::parse(body, ec);
    if (ec)
      return json::serialize(error_response(nullptr, {kParseError, "parse error: " + ec.message()}));
    if (const auto* batch = doc.if_array()) {
      if (batch->empty())
        return json::serialize(error_response(nullptr, {kInvalidRequest, "invalid request: empty batch"}));
      if (batch->size() > rpc_surface::kMaxBatch)
        return json::serialize(error_response(
            nullptr, {kInvalidRequest, "invalid request: a batch of " + std::to_string(batch->size()) +
                                           " requests, at most " + std::to_string(rpc_surface::kMaxBatch)}));
      json::array out;
      for (const json::value& r : *batch)
        if (auto a = answer(r))
          out.emplace_back(std::move(*a));
      return out.empty() ? std::string() : json::serialize(out);
    }
    auto a = answer(doc);
    return a ? json::serialize(*a) : std::string();
  }
};

// =============================================================================================

rpc_surface::rpc_surface(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
rpc_surface::~rpc_surface() = default;

result<std::unique_ptr<rpc_surface>> rpc_surface::open(embedded_ledger& ledger, rpc_settings settings) {
  try {
    auto p = std::make_unique<impl>(ledger, std::move(settings));
    p->migrate();
    std::lock_guard lock(p->mu);
    p->recover();
    p->sync();
    return std::unique_ptr<rpc_surface>(new rpc_surface(std::move(p)));
  } catch (const std::exception& e) {
    return fail(ledger_errc::storage, e.what());
  }
}

std::string rpc_surface::handle(std::string_view body) { return impl_->handle(body); }

void rpc_surface::on_internal_error(std::function<void(const std::string&)> report) {
  impl_->report = std::move(report);
}

const rpc_settings& rpc_surface::settings() const { return impl_->settings; }

}  // namespace enact::ledger
