// SPDX-License-Identifier: Apache-2.0
// The core service's request and response types under their client names: each is the wire model's
// type of enact/api/core.hpp (one definition, shared with the server), so code written against
// `enact::client::group` and code written against `enact::api::group` use the same type.
#pragma once

#include "enact/api/core.hpp"

namespace enact::client {

namespace json = boost::json;

using api::account_info;
using api::action;
using api::action_code;
using api::action_metadata;
using api::action_signature;
using api::chain_config;
using api::chain_secured_account;
using api::credit_balance;
using api::group;
using api::key_identity;
using api::minted_usage_key;
using api::minted_wallet;
using api::new_account_request;
using api::new_account_response;
using api::new_action;
using api::new_group;
using api::new_usage_key;
using api::new_wallet;
using api::page;
using api::page_request;
using api::payment_intent;
using api::payment_record;
using api::run_action_request;
using api::run_action_result;
using api::stripe_config;
using api::uploaded_action;
using api::usage_charge;
using api::usage_key_info;
using api::usage_key_spec;
using api::wallet;

}  // namespace enact::client
