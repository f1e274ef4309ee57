// SPDX-License-Identifier: Apache-2.0
// verify_attestation: is this quote from genuine Intel TDX hardware, and is its platform up to
// date? Verifies an Intel DCAP quote (TDX v4/v5, or SGX v3) with the SDK's attest module
// (enact/attest/quote.hpp): its signatures, the PCK certificate chain up to Intel's SGX Root CA
// and — with collateral, as Intel PCS or a PCCS serves it — the TCB status. Prints the verdict
// and every check; the exit code is the verdict.
//
//   verify_attestation QUOTE [--collateral FILE] [--now UNIX] [--json]
//
// QUOTE is a binary quote, a `.hex` file (0x optional), or a `.json` answer of GET /attestation
// (or a dstack guest agent's GetQuote), whose event log is then replayed against the RTMRs.
// Exit: 0 pass, 1 fail, 2 the input could not be read or parsed.
#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "enact/attest/quote.hpp"
#include "enact/attest/report.hpp"
#include "enact/codec/hex.hpp"

namespace {

using namespace enact;

constexpr const char* kUsage = "usage: verify_attestation QUOTE [--collateral FILE] [--now UNIX] [--json]\n";

int usage(const char* why) {
  std::fprintf(stderr, "verify_attestation: %s\n%s", why, kUsage);
  return 2;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

int main(int argc, char** argv) {
  std::string quote_path, collateral_path;
  std::optional<int64_t> now;
  bool as_json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--json") {
      as_json = true;
    } else if (arg == "--collateral" || arg == "--now") {
      if (i + 1 >= argc)
        return usage("missing value");
      const std::string value = argv[++i];
      if (arg == "--collateral") {
        collateral_path = value;
      } else {
        try {
          size_t used = 0;
          now = std::stoll(value, &used);
          if (used != value.size())
            return usage("--now: expected Unix seconds");
        } catch (const std::exception&) {
          return usage("--now: expected Unix seconds");
        }
      }
    } else if (arg.starts_with("-") || !quote_path.empty()) {
      return usage("unexpected argument");
    } else {
      quote_path = arg;
    }
  }
  if (quote_path.empty())
    return usage("QUOTE is required");

  attest::quote_options options;
  options.now = now;  // unset: the current time
  if (!collateral_path.empty()) {
    const auto text = read_file(collateral_path);
    if (!text) {
      std::fprintf(stderr, "verify_attestation: %s: cannot open file\n", collateral_path.c_str());
      return 2;
    }
    auto collateral = attest::parse_collateral(*text);
    if (!collateral) {
      std::fprintf(stderr, "verify_attestation: %s: %s\n", collateral_path.c_str(), collateral.err().message.c_str());
      return 2;
    }
    options.collateral = std::move(*collateral);
  }
  const auto input = read_file(quote_path);
  if (!input) {
    std::fprintf(stderr, "verify_attestation: %s: cannot open file\n", quote_path.c_str());
    return 2;
  }

  // Malformed input is an error of the result; everything that parses gets a report, in which a
  // signature or certificate that does not verify is a failed check.
  result<attest::quote_report> report = [&]() -> result<attest::quote_report> {
    if (quote_path.ends_with(".json"))
      return attest::verify_attestation(*input, options);
    if (quote_path.ends_with(".hex")) {
      const auto b = input->find_first_not_of(" \t\r\n");
      const auto e = input->find_last_not_of(" \t\r\n");
      const std::string_view digits =
          b == std::string::npos ? std::string_view() : std::string_view(*input).substr(b, e - b + 1);
      ENACT_TRY(const bytes raw, codec::hex::decode(digits, "quote"));
      return attest::verify_quote(raw, options);
    }
    return attest::verify_quote(as_bytes(*input), options);
  }();
  if (!report) {
    std::fprintf(stderr, "verify_attestation: %s: %s\n", quote_path.c_str(), report.err().message.c_str());
    return 2;
  }

  if (as_json) {
    std::printf("%s\n", boost::json::serialize(attest::to_json(*report)).c_str());
  } else {
    std::printf("verdict: %s\n", std::string(attest::to_string(report->overall())).c_str());
    std::printf("tee: %s\n", report->parsed.is_tdx() ? "TDX" : "SGX");
    if (report->tcb) {
      std::printf("tcb_status: %s\n", std::string(attest::to_string(report->tcb->status)).c_str());
      std::string ids;
      for (const auto& id : report->tcb->advisory_ids)
        ids += (ids.empty() ? "" : " ") + id;
      std::printf("advisory_ids: %s\n", ids.c_str());
    }
    for (const attest::check& c : report->checks)
      std::printf("  [%s] %s: %s\n", c.passed ? "ok" : "FAIL", c.name.c_str(), c.detail.c_str());
  }
  return report->passed() ? 0 : 1;
}
