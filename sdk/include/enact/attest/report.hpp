// SPDX-License-Identifier: Apache-2.0
// What every attestation check returns (docs/protocol.md §5): a list of
// named check items — what was checked, whether it held and why — with an overall verdict and the
// facts the check parsed, so a client sees everything that passed as well as what failed. Input
// that is malformed (a truncated quote, JSON that does not parse, a missing field) is not reported
// on: it is an `attest_errc` failure of the result<T> the check returns. This header also holds
// that error enum, shared by the whole attest module, and the JSON form of a checklist.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "enact/error.hpp"
#include "enact/result.hpp"

namespace enact {

enum class attest_errc {
  truncated = 1,          // the data ends before a field it declares
  bad_length,             // a declared size disagrees with the data it frames
  unsupported_version,    // quote version or body type outside the supported set
  unsupported_tee,        // TEE type that is neither SGX (0) nor TDX (0x81)
  unsupported_key_type,   // attestation key type other than ECDSA-256-with-P-256 (2)
  unsupported_cert_type,  // certification data other than QE report (6) / PCK chain (5)
  bad_json,               // the text is not JSON
  bad_field,              // a field is missing, of the wrong type or malformed
  bad_certificate,        // a certificate or CRL given as input does not parse
  lookup_failed,          // a DNS lookup failed (an absent record is not a failure)
};

}  // namespace enact
ENACT_ERRC(attest_errc, attest_category, "enact.attest", "data too short", "inconsistent length", "unsupported version",
           "unsupported TEE type", "unsupported attestation key type", "unsupported certification data type",
           "invalid JSON", "invalid field", "invalid certificate", "lookup failed")

namespace enact::attest {

/// One named check: `detail` says why it passed or failed, in words a person can act on.
struct check {
  std::string name;
  bool passed = false;
  std::string detail;

  friend bool operator==(const check&, const check&) = default;
};

enum class verdict { pass, fail };

[[nodiscard]] constexpr std::string_view to_string(verdict v) noexcept { return v == verdict::pass ? "pass" : "fail"; }

/// The checks of one report, in the order they were made. Each report type derives from it and
/// adds the facts it parsed.
struct checklist {
  std::vector<check> checks;

  /// pass when there is at least one check and every check passed.
  [[nodiscard]] verdict overall() const noexcept {
    if (checks.empty())
      return verdict::fail;
    for (const auto& c : checks)
      if (!c.passed)
        return verdict::fail;
    return verdict::pass;
  }
  [[nodiscard]] bool passed() const noexcept { return overall() == verdict::pass; }

  /// The first check with this name, or nullptr.
  [[nodiscard]] const check* find(std::string_view name) const noexcept {
    for (const auto& c : checks)
      if (c.name == name)
        return &c;
    return nullptr;
  }
  /// Names of the checks that failed, in order.
  [[nodiscard]] std::vector<std::string> failed() const {
    std::vector<std::string> out;
    for (const auto& c : checks)
      if (!c.passed)
        out.push_back(c.name);
    return out;
  }

  void add(std::string name, bool passed, std::string detail) {
    checks.push_back(check{std::move(name), passed, std::move(detail)});
  }
};

/// `{"verdict": "pass"|"fail", "checks": [{"name", "passed", "detail"}, ...]}`; each report's
/// `to_json` adds its facts under "facts".
[[nodiscard]] boost::json::object to_json(const checklist& list);

}  // namespace enact::attest
