// SPDX-License-Identifier: Apache-2.0
#include "core/errors.hpp"

#include "billing/payment_provider.hpp"
#include "enact/eip712/envelope.hpp"
#include "ledger/ledger.hpp"
#include "metering/store.hpp"
#include "runtime/runtime.hpp"
#include "tee/errors.hpp"

namespace enact::core {

namespace {

api_errc from_ledger(ledger_errc e) {
  switch (e) {
    case ledger_errc::not_admin:
    case ledger_errc::relay_not_allowed:
    // docs/protocol.md §3 identity rules: what a wallet may not create at all (its ledger message says
    // which hash it must use) is forbidden; a hash another account or key holds is a conflict.
    case ledger_errc::hash_not_canonical:
    case ledger_errc::managed_not_allowed:
    // An account is handed to another wallet only with its consent (its ConvertAccount envelope).
    case ledger_errc::new_admin_not_sender:
      return api_errc::forbidden;
    case ledger_errc::already_unmanaged:
    case ledger_errc::duplicate:
    case ledger_errc::hash_is_usage_key:
    case ledger_errc::hash_is_account:
    case ledger_errc::usage_key_of_another_account:
      return api_errc::conflict;
    case ledger_errc::unknown_account:
    case ledger_errc::unknown_usage_key:
    case ledger_errc::unknown_group:
    case ledger_errc::unknown_wallet:
    case ledger_errc::unknown_action:
      return api_errc::not_found;
    case ledger_errc::invalid_argument:
      return api_errc::invalid_request;
    case ledger_errc::storage:
      return api_errc::unavailable;
  }
  return api_errc::internal;
}

api_errc from_envelope(envelope_errc e) {
  switch (e) {
    case envelope_errc::too_large:
    case envelope_errc::types_not_canonical:
    case envelope_errc::wrong_primary_type:
    case envelope_errc::domain_mismatch:
    case envelope_errc::version_refused:
      return api_errc::typed_data_invalid;
    case envelope_errc::malformed:
      return api_errc::invalid_request;
    // Another deployment: its chain id or its registry.
    case envelope_errc::chain_id_mismatch:
    case envelope_errc::contract_mismatch:
      return api_errc::chain_id_mismatch;
    // No longer usable: sign a new one.
    case envelope_errc::expired:
    case envelope_errc::replayed:
      return api_errc::signature_expired;
    case envelope_errc::signature_malformed:
    case envelope_errc::signer_mismatch:
    case envelope_errc::account_mismatch:
    case envelope_errc::request_mismatch:
      return api_errc::signature_invalid;
  }
  return api_errc::internal;
}

api_errc from_billing(billing_errc e) {
  switch (e) {
    case billing_errc::unknown_intent:
      return api_errc::not_found;
    case billing_errc::invalid_amount:
      return api_errc::invalid_request;
    case billing_errc::provider_error:
      return api_errc::conflict;
    case billing_errc::unavailable:
    case billing_errc::bad_response:
      return api_errc::unavailable;
    // A provider's webhook (POST /billing/stripe/webhook).
    case billing_errc::no_webhook:
      return api_errc::not_found;
    case billing_errc::signature_invalid:
      return api_errc::signature_invalid;
    case billing_errc::signature_expired:
      return api_errc::signature_expired;
    case billing_errc::bad_event:
      return api_errc::invalid_request;
  }
  return api_errc::internal;
}

api_errc from_metering(metering::metering_errc e) {
  switch (e) {
    // docs/protocol.md §0 402: a usage key's spending cap is the balance it may spend.
    case metering::metering_errc::insufficient_credits:
    case metering::metering_errc::cap_exceeded:
      return api_errc::insufficient_credits;
    case metering::metering_errc::unknown_payment:
      return api_errc::not_found;
    case metering::metering_errc::duplicate_payment:
      return api_errc::conflict;
    case metering::metering_errc::invalid_argument:
      return api_errc::invalid_request;
    case metering::metering_errc::storage:
      return api_errc::unavailable;
    case metering::metering_errc::unknown_reservation:  // a hold the server made itself: a bug
    case metering::metering_errc::over_reserved:
    case metering::metering_errc::unknown_claim:  // an idempotency claim the server made itself
      return api_errc::internal;
  }
  return api_errc::internal;
}

}  // namespace

http_error to_http(const error& e) {
  const auto& cat = e.code.category();
  api_errc code = api_errc::internal;
  if (cat == detail::ledger_category())
    code = from_ledger(static_cast<ledger_errc>(e.code.value()));
  else if (cat == detail::envelope_category())
    code = from_envelope(static_cast<envelope_errc>(e.code.value()));
  else if (cat == runtime::detail::runtime_category())
    code = static_cast<runtime::runtime_errc>(e.code.value()) == runtime::runtime_errc::invalid_request
               ? api_errc::invalid_request
               : api_errc::unavailable;
  else if (cat == detail::billing_category())
    code = from_billing(static_cast<billing_errc>(e.code.value()));
  else if (cat == metering::detail::metering_category())
    code = from_metering(static_cast<metering::metering_errc>(e.code.value()));
  else if (cat == tee::tee_category())
    code = tee::to_api_errc(static_cast<tee::tee_errc>(e.code.value()));
  else
    return http::to_http(e);  // api_errc itself, the SDK's parse errors, and bugs
  http_error out = http::make_error(code, e.message);
  // Storage failures and bugs never describe internals to the caller.
  if (code == api_errc::internal)
    out.message = "internal error";
  else if (cat == detail::ledger_category() && static_cast<ledger_errc>(e.code.value()) == ledger_errc::storage)
    out.message = "the permission ledger is unavailable";
  else if (cat == metering::detail::metering_category() &&
           static_cast<metering::metering_errc>(e.code.value()) == metering::metering_errc::storage)
    out.message = "the metering store is unavailable";
  else if (cat == detail::ledger_category() &&
           static_cast<ledger_errc>(e.code.value()) == ledger_errc::relay_not_allowed)
    // Core-api spec, Authentication 6: the registry refuses api_payer relays for such accounts.
    out.message =
        "this account is ChainSecured: the server no longer relays its writes; send them "
        "on-chain from the admin wallet";
  return out;
}

}  // namespace enact::core
