// SPDX-License-Identifier: Apache-2.0
// TCB info (Intel PCS TCB info v2/v3) and QE identity (enclave identity v2) as the verifier reads
// them, and the TCB matching rules of Intel's QVL (TcbLevelCheck, TdxModuleCheck, QE identity
// check). Internal to the attest module.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "enact/attest/quote.hpp"
#include "enact/result.hpp"

namespace enact::attest::detail {

struct tcb_level {
  std::array<uint8_t, 16> sgx{};
  uint16_t pce_svn = 0;
  std::optional<std::array<uint8_t, 16>> tdx;  // TDX TCB info
  tcb_status status = tcb_status::revoked;
  std::string date;
  std::vector<std::string> advisories;
};

struct isv_level {
  uint16_t isvsvn = 0;
  tcb_status status = tcb_status::revoked;
  std::string date;
  std::vector<std::string> advisories;
};

struct tdx_module_identity {
  std::string id;  // "TDX_01"…; empty for the top-level tdxModule
  crypto::hash384 mrsigner{};
  std::array<uint8_t, 8> attributes{};
  std::array<uint8_t, 8> attributes_mask{};
  std::vector<isv_level> levels;
};

struct tcb_info {
  std::string id;  // "TDX", "SGX" (absent in v2: empty)
  uint32_t version = 0;
  int64_t issue_date = 0;
  int64_t next_update = 0;
  std::array<uint8_t, 6> fmspc{};
  std::array<uint8_t, 2> pce_id{};
  uint32_t tcb_evaluation_data_number = 0;
  std::vector<tcb_level> levels;  // canonical order: highest first
  std::optional<tdx_module_identity> tdx_module;
  std::vector<tdx_module_identity> tdx_module_identities;
};

struct qe_identity {
  std::string id;  // "QE", "TD_QE"
  uint32_t version = 0;
  int64_t issue_date = 0;
  int64_t next_update = 0;
  uint32_t tcb_evaluation_data_number = 0;
  uint32_t miscselect = 0;
  uint32_t miscselect_mask = 0;
  std::array<uint8_t, 16> attributes{};
  std::array<uint8_t, 16> attributes_mask{};
  hash256 mrsigner{};
  uint16_t isvprodid = 0;
  std::vector<isv_level> levels;  // highest isvsvn first
};

/// Errors: bad_json, bad_field (naming the field).
[[nodiscard]] result<tcb_info> parse_tcb_info(std::string_view json);
[[nodiscard]] result<qe_identity> parse_qe_identity(std::string_view json);

/// "2025-06-19T10:16:03Z" as Unix seconds (enact/codec/rfc3339.hpp: a fraction is dropped, an
/// offset converted to UTC).
[[nodiscard]] std::optional<int64_t> parse_utc(std::string_view text);

/// Intel QVL convergeTcbStatuses: only an OutOfDate or Revoked component (QE, TDX module)
/// changes the platform status.
[[nodiscard]] tcb_status converge(tcb_status platform, tcb_status component) noexcept;

/// The first level (in canonical order) the platform meets, or nullptr: PCE SVN and every SGX
/// component at least the level's, and for TDX every TEE TCB SVN byte at least the level's.
[[nodiscard]] const tcb_level* match_platform(const tcb_info& info, const pck_facts& pck,
                                              const std::array<uint8_t, 16>* tee_tcb_svn);

/// The first level whose isvsvn the given one reaches, or nullptr.
[[nodiscard]] const isv_level* match_isv(const std::vector<isv_level>& levels, uint16_t isvsvn);

}  // namespace enact::attest::detail
