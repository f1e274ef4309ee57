#include "core/errors.hpp"

#include "billing/payment_provider.hpp"
#include "enact/eip712/envelope.hpp"
#include "ledger/ledger.hpp"
#include "runtime/runtime.hpp"

namespace enact {
namespace detail {
const std::error_category& core_category() noexcept {
  static const errc_category<core_errc> c(
      "enact.core",
      {"", "invalid_request", "typed_data_invalid", "chain_id_mismatch", "unauthenticated",
       "signature_invalid", "signature_expired", "insufficient_credits", "forbidden", "not_found",
       "conflict", "payload_too_large", "action_failed", "rate_limited", "unavailable",
       "internal"});
  return c;
}
}  // namespace detail
}  // namespace enact

namespace enact::core {
namespace {

struct row {
  core_errc code;
  std::string_view name;
  int status;
};
constexpr row kRows[] = {
    {core_errc::invalid_request, "invalid_request", 400},
    {core_errc::typed_data_invalid, "typed_data_invalid", 400},
    {core_errc::chain_id_mismatch, "chain_id_mismatch", 400},
    {core_errc::unauthenticated, "unauthenticated", 401},
    {core_errc::signature_invalid, "signature_invalid", 401},
    {core_errc::signature_expired, "signature_expired", 401},
    {core_errc::insufficient_credits, "insufficient_credits", 402},
    {core_errc::forbidden, "forbidden", 403},
    {core_errc::not_found, "not_found", 404},
    {core_errc::conflict, "conflict", 409},
    {core_errc::payload_too_large, "payload_too_large", 413},
    {core_errc::action_failed, "action_failed", 422},
    {core_errc::rate_limited, "rate_limited", 429},
    {core_errc::unavailable, "unavailable", 503},
    {core_errc::internal, "internal", 500},
};

core_errc from_ledger(ledger_errc e) {
  switch (e) {
    case ledger_errc::not_admin:
    case ledger_errc::relay_not_allowed:
      return core_errc::forbidden;
    case ledger_errc::already_unmanaged:
    case ledger_errc::duplicate:
    case ledger_errc::already_credited:
      return core_errc::conflict;
    case ledger_errc::unknown_account:
    case ledger_errc::unknown_usage_key:
    case ledger_errc::unknown_group:
    case ledger_errc::unknown_wallet:
    case ledger_errc::unknown_action:
    case ledger_errc::unknown_payment:
      return core_errc::not_found;
    case ledger_errc::insufficient_credits:
      return core_errc::insufficient_credits;
    case ledger_errc::invalid_argument:
      return core_errc::invalid_request;
    case ledger_errc::storage:
      return core_errc::unavailable;
  }
  return core_errc::internal;
}

core_errc from_envelope(envelope_errc e) {
  switch (e) {
    case envelope_errc::too_large:
    case envelope_errc::types_not_canonical:
    case envelope_errc::wrong_primary_type:
    case envelope_errc::domain_mismatch:
      return core_errc::typed_data_invalid;
    case envelope_errc::malformed:
      return core_errc::invalid_request;
    case envelope_errc::chain_id_mismatch:
      return core_errc::chain_id_mismatch;
    case envelope_errc::expired:
      return core_errc::signature_expired;
    case envelope_errc::signature_malformed:
    case envelope_errc::signer_mismatch:
      return core_errc::signature_invalid;
  }
  return core_errc::internal;
}

core_errc from_billing(billing_errc e) {
  switch (e) {
    case billing_errc::unknown_intent:
      return core_errc::not_found;
    case billing_errc::invalid_amount:
      return core_errc::invalid_request;
    case billing_errc::provider_error:
      return core_errc::conflict;
    case billing_errc::unavailable:
    case billing_errc::bad_response:
      return core_errc::unavailable;
  }
  return core_errc::internal;
}

}  // namespace

std::string_view code_name(core_errc c) noexcept {
  for (const auto& r : kRows)
    if (r.code == c)
      return r.name;
  return "internal";
}

int status_of(core_errc c) noexcept {
  for (const auto& r : kRows)
    if (r.code == c)
      return r.status;
  return 500;
}

http_error to_http(const error& e) {
  const auto& cat = e.code.category();
  core_errc code = core_errc::internal;
  if (cat == detail::core_category())
    code = static_cast<core_errc>(e.code.value());
  else if (cat == detail::ledger_category())
    code = from_ledger(static_cast<ledger_errc>(e.code.value()));
  else if (cat == detail::envelope_category())
    code = from_envelope(static_cast<envelope_errc>(e.code.value()));
  else if (cat == runtime::detail::runtime_category())
    code = static_cast<runtime::runtime_errc>(e.code.value()) == runtime::runtime_errc::invalid_request
               ? core_errc::invalid_request
               : core_errc::unavailable;
  else if (cat == detail::billing_category())
    code = from_billing(static_cast<billing_errc>(e.code.value()));
  else if (std::string_view(cat.name()).starts_with("enact."))
    // A codec, scope, CID or cron parse error: the request carried a bad value.
    code = core_errc::invalid_request;
  http_error out{status_of(code), code, e.message, nullptr};
  // Storage failures and bugs never describe internals to the caller.
  if (code == core_errc::internal)
    out.message = "internal error";
  else if (cat == detail::ledger_category() &&
           static_cast<ledger_errc>(e.code.value()) == ledger_errc::storage)
    out.message = "the permission ledger is unavailable";
  return out;
}

boost::json::object error_body(const http_error& e) {
  boost::json::object err{{"code", code_name(e.code)}, {"message", e.message}};
  if (!e.details.is_null())
    err["details"] = e.details;
  return boost::json::object{{"error", std::move(err)}};
}

}  // namespace enact::core
