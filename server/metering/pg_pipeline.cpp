// SPDX-License-Identifier: Apache-2.0
// The metering store's pipelined batches (pg_pipeline.hpp) on libpq.
#include "metering/pg_pipeline.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "enact/secret.hpp"

namespace enact::metering::pg {
namespace {

/// Whether the idle session `c` has something to read (or its socket failed): never so for a live
/// idle session of this store, which listens for nothing.
bool readable(PGconn* c) {
  pollfd p{PQsocket(c), POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

/// A PGresult freed when it goes.
class owned_result {
 public:
  explicit owned_result(PGresult* r) : r_(r) {}
  ~owned_result() { PQclear(r_); }
  owned_result(const owned_result&) = delete;
  owned_result& operator=(const owned_result&) = delete;
  [[nodiscard]] PGresult* get() const noexcept { return r_; }
  [[nodiscard]] ExecStatusType status() const noexcept { return PQresultStatus(r_); }

 private:
  PGresult* r_;
};

sql::rows rows_of(const PGresult* r) {
  sql::rows out;
  const char* affected = PQcmdTuples(const_cast<PGresult*>(r));
  out.affected = affected != nullptr && *affected != '\0' ? std::stoll(affected) : 0;
  const int n = PQntuples(r), fields = PQnfields(r);
  out.data.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& row = out.data.emplace_back();
    for (int f = 0; f < fields; ++f)
      row.push_back(PQgetisnull(r, i, f) != 0 ? std::nullopt : std::optional<std::string>(PQgetvalue(r, i, f)));
  }
  return out;
}

}  // namespace

pipeline::pipeline(std::string url, std::string setup) : url_(std::move(url)), setup_(std::move(setup)) {}

pipeline::~pipeline() {
  close();
  enact::detail::secure_wipe(url_.data(), url_.size());
}

void pipeline::close() noexcept {
  if (c_ != nullptr)
    PQfinish(c_);
  c_ = nullptr;
  names_.clear();
}

void pipeline::broken(const std::string& what) {
  const std::string why = c_ != nullptr ? PQerrorMessage(c_) : "";
  close();
  throw std::runtime_error("metering batch: " + what + (why.empty() ? "" : ": " + why));
}

void pipeline::connect() {
  c_ = PQconnectdb(url_.c_str());
  if (PQstatus(c_) != CONNECTION_OK)
    broken("cannot connect");
  const owned_result r(PQexec(c_, setup_.c_str()));
  if (r.status() != PGRES_COMMAND_OK)
    broken("connection setup failed");
}

const std::string& pipeline::prepared(const std::string* text) {
  for (const auto& [t, name] : names_)
    if (t == text)
      return name;
  std::string name = "metering_pipelined_" + std::to_string(names_.size());
  const owned_result r(PQprepare(c_, name.c_str(), text->c_str(), 0, nullptr));
  if (r.status() != PGRES_COMMAND_OK) {
    if (PQstatus(c_) != CONNECTION_OK)
      broken("cannot prepare a statement");
    throw std::runtime_error(std::string("metering batch: cannot prepare a statement: ") +
                             PQresultErrorMessage(r.get()));
  }
  return names_.emplace_back(text, std::move(name)).second;
}

pipeline::outcome pipeline::run(const std::vector<statement>& batch) {
  // Broke since the last batch (the server restarted, or ended the session): a new one. libpq
  // notices a connection the server closed only when it reads; an idle session has nothing to
  // read, so anything there (the server's FATAL message, the end of the stream) ends it. The batch
  // is not sent yet, so nothing is lost by starting over.
  if (c_ != nullptr && (PQstatus(c_) != CONNECTION_OK || readable(c_)))
    close();
  if (c_ == nullptr)
    connect();
  std::vector<std::string> names;
  names.reserve(batch.size());
  for (const statement& s : batch)
    names.push_back(prepared(s.text));  // before the pipeline: PQprepare waits for its answer
  if (PQenterPipelineMode(c_) != 1)
    broken("cannot enter pipeline mode");
  for (size_t i = 0; i < batch.size(); ++i) {
    std::vector<std::string> text;
    text.reserve(batch[i].params.size());
    for (const sql::param& p : batch[i].params)
      text.push_back(std::holds_alternative<int64_t>(p) ? std::to_string(std::get<int64_t>(p))
                                                        : std::get<std::string>(p));
    std::vector<const char*> values;
    values.reserve(text.size());
    for (const std::string& t : text)
      values.push_back(t.c_str());
    if (PQsendQueryPrepared(c_, names[i].c_str(), static_cast<int>(values.size()), values.data(), nullptr, nullptr,
                            0) != 1)
      broken("cannot send the batch");
  }
  if (PQpipelineSync(c_) != 1)
    broken("cannot send the batch");
  outcome out;
  out.rows.reserve(batch.size());
  bool failed = false;
  for (size_t i = 0; i < batch.size(); ++i) {
    PGresult* got = PQgetResult(c_);
    if (got == nullptr)
      broken("the batch's answer ended early");
    const owned_result r(got);
    if (r.status() == PGRES_TUPLES_OK || r.status() == PGRES_COMMAND_OK) {
      out.rows.push_back(rows_of(r.get()));
    } else if (r.status() == PGRES_FATAL_ERROR) {
      failed = true;
      out.error = PQresultErrorMessage(r.get());
      const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
      out.retryable = state != nullptr && (std::string_view(state) == "40P01" || std::string_view(state) == "40001");
    } else if (r.status() == PGRES_PIPELINE_ABORTED) {
      failed = true;  // skipped after the statement that failed
    } else {
      broken("unexpected answer in the batch");
    }
    // The end of this statement's results (nullptr), after its one result.
    if (PGresult* extra = PQgetResult(c_); extra != nullptr) {
      PQclear(extra);
      broken("more than one answer to a statement of the batch");
    }
  }
  // The Sync's answer: the implicit transaction ended (committed unless a statement failed).
  {
    PGresult* got = PQgetResult(c_);
    if (got == nullptr)
      broken("the batch's answer ended early");
    const owned_result r(got);
    if (r.status() != PGRES_PIPELINE_SYNC)
      broken("the batch did not end with its Sync");
  }
  if (PQexitPipelineMode(c_) != 1)
    broken("cannot leave pipeline mode");
  out.committed = !failed;
  if (failed)
    out.rows.clear();
  return out;
}

}  // namespace enact::metering::pg
