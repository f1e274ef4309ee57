// SPDX-License-Identifier: Apache-2.0
#include "storage/pg.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

#include "enact/codec/hex.hpp"
#include "enact/secret.hpp"

namespace enact::storage::pg {
namespace {

std::string trimmed(const char* msg) {
  std::string s = msg != nullptr ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

}  // namespace

void result_closer::operator()(pg_result* r) const noexcept { PQclear(r); }

// ---------------------------------------------------------------------------------------------
// args

void args::add(uint64_t v) {
  add(static_cast<int64_t>(std::min<uint64_t>(v, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))));
}

void args::push(std::string v, bool null, int format) {
  data_.push_back(std::move(v));
  null_.push_back(null);
  formats_.push_back(format);
}

void args::finish() {
  ptrs_.clear();
  lens_.clear();
  for (size_t i = 0; i < data_.size(); ++i) {
    ptrs_.push_back(null_[i] ? nullptr : data_[i].data());
    lens_.push_back(static_cast<int>(data_[i].size()));
  }
}

// ---------------------------------------------------------------------------------------------
// rows

rows::rows(result_ptr r) : r_(std::move(r)), n_(PQntuples(r_.get())) {}

int rows::columns() const noexcept { return PQnfields(r_.get()); }

int64_t rows::affected() const {
  const char* s = PQcmdTuples(r_.get());
  int64_t n = 0;
  std::from_chars(s, s + std::strlen(s), n);
  return n;
}

bool rows::is_null(int col) const { return PQgetisnull(r_.get(), row_, col) != 0; }

std::string_view rows::raw(int col) const {
  return {PQgetvalue(r_.get(), row_, col), static_cast<size_t>(PQgetlength(r_.get(), row_, col))};
}

int64_t rows::i64(int col) const {
  const std::string_view s = raw(col);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    throw failure("postgres: corrupt row: expected an integer in column " + std::to_string(col), "");
  return v;
}

bytes rows::blob(int col) const {
  const std::string_view s = raw(col);
  if (!s.starts_with("\\x") || s.size() % 2 != 0)
    throw failure("postgres: corrupt row: bytea not in hex form", "");
  auto out = codec::hex::decode(s.substr(2));
  if (!out)
    throw failure("postgres: corrupt row: bad hex in bytea", "");
  return std::move(*out);
}

// ---------------------------------------------------------------------------------------------
// connection

connection::connection(const std::string& url, const std::string& setup) {
  c_ = PQconnectdb(url.c_str());
  if (c_ == nullptr)
    throw failure("postgres: connect: out of memory", "");
  if (PQstatus(c_) != CONNECTION_OK) {
    // libpq's message names host and port, never the password.
    const std::string msg = "postgres: connect: " + trimmed(PQerrorMessage(c_));
    PQfinish(c_);
    throw failure(msg, "");
  }
  try {
    if (PQsetClientEncoding(c_, "UTF8") != 0)
      fail_now("set client encoding");
    exec_simple("SET bytea_output = 'hex'; SET client_min_messages = warning");  // no NOTICEs of idempotent DDL
    if (!setup.empty())
      exec_simple(setup);
  } catch (...) {
    PQfinish(c_);
    throw;
  }
}

connection::~connection() { PQfinish(c_); }

bool connection::broken() const noexcept { return PQstatus(c_) != CONNECTION_OK; }

bool connection::in_transaction() const noexcept {
  return PQtransactionStatus(c_) != PQTRANS_IDLE && PQtransactionStatus(c_) != PQTRANS_UNKNOWN;
}

bool connection::readable() const noexcept {
  pollfd p{PQsocket(c_), POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

rows connection::exec_args(std::string_view sql, args p) {
  p.finish();
  const std::string& name = prepared(sql, p.size());
  result_ptr r(PQexecPrepared(c_, name.c_str(), p.size(), p.values(), p.lengths(), p.formats(), 0));
  check(r.get(), "statement");
  return rows(std::move(r));
}

rows connection::exec_params(const std::string& sql, args p) {
  p.finish();
  result_ptr r(PQexecParams(c_, sql.c_str(), p.size(), nullptr, p.values(), p.lengths(), p.formats(), 0));
  check(r.get(), "statement");
  return rows(std::move(r));
}

void connection::exec_simple(const std::string& sql) {
  result_ptr r(PQexec(c_, sql.c_str()));
  check(r.get(), "exec");
}

void connection::rollback() noexcept {
  if (!broken() && in_transaction())
    PQclear(PQexec(c_, "ROLLBACK"));
}

void connection::fail_now(std::string_view what) const {
  throw failure("postgres: " + std::string(what) + ": " + trimmed(PQerrorMessage(c_)), "");
}

void connection::check(pg_result* r, std::string_view what) const {
  if (r == nullptr)
    fail_now(what);
  const auto st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
    return;
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  throw failure("postgres: " + std::string(what) + ": " + trimmed(PQresultErrorMessage(r)),
                state != nullptr ? state : "");
}

const std::string& connection::prepared(std::string_view sql, int n) {
  if (auto it = cache_.find(std::string(sql)); it != cache_.end())
    return it->second;
  std::string name = "s" + std::to_string(cache_.size());
  result_ptr r(PQprepare(c_, name.c_str(), std::string(sql).c_str(), n, nullptr));
  check(r.get(), "prepare");
  return cache_.emplace(std::string(sql), std::move(name)).first->second;
}

// A batch of the metering store's run path is sent in pipeline mode: its group commit measured
// one round trip per batch instead of one per statement (docs/architecture.md §4 "Group commit").
pipeline_outcome connection::pipeline(const std::vector<pipelined>& batch) {
  std::vector<std::string> names;
  names.reserve(batch.size());
  for (const pipelined& s : batch)
    names.push_back(prepared(*s.text, 0));  // before the pipeline: PQprepare waits for its answer
  const auto broke = [&](std::string_view what) {
    const std::string why = trimmed(PQerrorMessage(c_));
    throw failure("postgres: batch: " + std::string(what) + (why.empty() ? "" : ": " + why), "");
  };
  if (PQenterPipelineMode(c_) != 1)
    broke("cannot enter pipeline mode");
  std::vector<args> params;
  params.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    args& p = params.emplace_back(batch[i].params);
    p.finish();
    if (PQsendQueryPrepared(c_, names[i].c_str(), p.size(), p.values(), p.lengths(), p.formats(), 0) != 1)
      broke("cannot send the batch");
  }
  if (PQpipelineSync(c_) != 1)
    broke("cannot send the batch");
  pipeline_outcome out;
  out.answers.reserve(batch.size());
  bool failed = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    result_ptr r(PQgetResult(c_));
    if (!r)
      broke("the batch's answer ended early");
    const auto st = PQresultStatus(r.get());
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
      out.answers.emplace_back(std::move(r));
    } else if (st == PGRES_FATAL_ERROR) {
      failed = true;
      out.error = PQresultErrorMessage(r.get());
      const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
      out.retryable = failure("", state != nullptr ? state : "").retryable();
    } else if (st == PGRES_PIPELINE_ABORTED) {
      failed = true;  // skipped after the statement that failed
    } else {
      broke("unexpected answer in the batch");
    }
    // The end of this statement's results (nullptr), after its one result.
    if (result_ptr extra(PQgetResult(c_)); extra)
      broke("more than one answer to a statement of the batch");
  }
  // The Sync's answer: the implicit transaction ended (committed unless a statement failed).
  {
    result_ptr r(PQgetResult(c_));
    if (!r)
      broke("the batch's answer ended early");
    if (PQresultStatus(r.get()) != PGRES_PIPELINE_SYNC)
      broke("the batch did not end with its Sync");
  }
  if (PQexitPipelineMode(c_) != 1)
    broke("cannot leave pipeline mode");
  out.committed = !failed;
  if (failed)
    out.answers.clear();
  return out;
}

// ---------------------------------------------------------------------------------------------
// pool, transactions

std::string lock_timeout_statement(int seconds) {
  if (seconds < 1)
    throw std::invalid_argument("lock timeout: at least 1 second, not " + std::to_string(seconds));
  return "SET lock_timeout = '" + std::to_string(seconds) + "s'";
}

pool::pool(std::string url, pool_options options)
    : storage::pool<connection>(
          options.size, [this] { return std::make_unique<connection>(url_, setup_); },
          [](connection& c) { return !c.broken() && !c.in_transaction(); }),
      url_(std::move(url)),
      setup_(std::move(options.setup)) {}

pool::~pool() {
  close_idle();
  detail::secure_wipe(url_.data(), url_.size());
}

void transact(pool& p, const std::function<bool(connection&)>& body, const retry& r) {
  for (int attempt = 1;; ++attempt) {
    try {
      auto lease = p.acquire();
      connection& c = *lease;
      try {
        c.exec_simple("BEGIN");
        if (body(c))
          c.exec_simple("COMMIT");
        else
          c.rollback();
        return;
      } catch (...) {
        c.rollback();
        throw;
      }
    } catch (const failure& e) {
      const bool again = e.retryable() || (r.unique_violation && e.unique_violation());
      if (!again || attempt >= r.attempts)
        throw;
    }
  }
}

void migrate(pool& p, const std::string& lock, const std::string& version_table, std::span<const char* const> steps) {
  transact(p, [&](connection& c) {
    c.exec_simple(lock);
    c.exec_simple("CREATE TABLE IF NOT EXISTS " + version_table + " (version integer NOT NULL)");
    rows v = c.exec_params("SELECT version FROM " + version_table, args{});
    const bool recorded = v.next();
    int64_t version = recorded ? v.i64(0) : 0;
    const auto latest = static_cast<int64_t>(steps.size());
    if (version > latest)
      throw failure("postgres: schema version " + std::to_string(version) + " is newer than this build's " +
                        std::to_string(latest),
                    "");
    for (; version < latest; ++version)
      c.exec_simple(steps[static_cast<size_t>(version)]);
    c.exec_simple(recorded ? "UPDATE " + version_table + " SET version = " + std::to_string(latest)
                           : "INSERT INTO " + version_table + " (version) VALUES (" + std::to_string(latest) + ")");
    return true;
  });
}

}  // namespace enact::storage::pg
