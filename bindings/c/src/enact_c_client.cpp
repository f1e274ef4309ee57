// SPDX-License-Identifier: Apache-2.0
// The C API's core service client: the generic JSON call is the typed client's own request path
// (core_client::call) without a typed wrapper.
#include <boost/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "enact.h"
#include "enact/client/api_error.hpp"
#include "enact/client/core_client.hpp"
#include "enact/client/options.hpp"
#include "enact/crypto/secp256k1.hpp"
#include "entry_point.hpp"

namespace json = boost::json;
using namespace enact_c;

struct enact_core_client {
  enact::client::core_client core;
  int status = 0;
  std::string request_id;

  enact_core_client(enact::client::client_options options, enact::Secret key)
      : core(std::move(options), std::move(key)) {}
};

namespace {

// Header characters a request path may not contain (CR/LF would split the request line).
std::optional<size_t> bad_path_char(std::string_view path) noexcept {
  for (size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c <= 0x20 || c == 0x7f)
      return i;
  }
  return std::nullopt;
}

// The docs/protocol.md §0 error body of a failed call, rebuilt from what the transport kept of it.
std::string error_body(const enact::api_error& e) {
  json::object error{{"code", e.code_name()}, {"message", e.message()}};
  if (!e.details().is_null())
    error["details"] = e.details();
  return json::serialize(json::object{{"error", std::move(error)}});
}

enact_core_client* new_client(const char* base_url, const char* api_key, const char* ca_file,
                              uint32_t connect_timeout_ms, uint32_t read_timeout_ms, uint32_t max_retries) noexcept {
  enact_core_client* client = nullptr;
  guarded([&] {
    if (base_url == nullptr)
      return invalid("base_url: NULL");
    enact::client::client_options options;
    options.base_url = base_url;
    if (ca_file != nullptr)
      options.ca_file = ca_file;
    if (connect_timeout_ms != 0)
      options.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
    if (read_timeout_ms != 0)
      options.read_timeout = std::chrono::milliseconds(read_timeout_ms);
    options.max_retries = max_retries;
    options.user_agent = "enact-c/" ENACT_VERSION_STRING;
    enact::Secret key;
    if (api_key != nullptr)
      key = enact::Secret(enact::as_bytes(std::string_view(api_key)));
    try {
      client = new enact_core_client(std::move(options), std::move(key));
    } catch (const enact::api_error& e) {
      // The only refusal the transport makes at construction: a base URL it cannot use.
      return set_error(ENACT_ERR_INVALID_ARGUMENT, e.message());
    }
    return ENACT_OK;
  });
  return client;
}

// One request of the JSON client: with the API key, or (by_wallet) with a BillingAuth of wallet_key.
int client_call(enact_core_client* client, const char* method, const char* path, const char* json_body, bool by_wallet,
                const uint8_t* wallet_key, char** out_json) noexcept {
  return guarded([&] {
    output(out_json, "out_json");
    require(client, "client");
    if (method == nullptr || path == nullptr)
      return invalid(method == nullptr ? "method: NULL" : "path: NULL");
    const std::string_view m = method;
    if (m != "GET" && m != "POST")
      return invalid("method: expected GET or POST, got '" + std::string(m) + "'");
    const bool is_get = m == "GET";
    const std::string_view target = path;
    if (target.empty() || target.front() != '/')
      return invalid("path: must start with '/'");
    if (const auto at = bad_path_char(target))
      return invalid("path: invalid character at offset " + std::to_string(*at));
    if (by_wallet) {
      require(wallet_key, "wallet_key");
      (void)enact::crypto::secp256k1::public_key_of(key_from(wallet_key)).value();
    }
    if (is_get && json_body != nullptr)
      return invalid("json_body: a GET request has no body; pass NULL");
    std::string_view body;
    if (!is_get) {
      body = json_body != nullptr ? std::string_view(json_body) : "{}";
      boost::system::error_code ec;
      (void)json::parse(body, ec);
      if (ec)
        return set_error(ENACT_ERR_PARSE, "json_body: not JSON (" + ec.message() + ")");
    }
    client->status = 0;
    client->request_id.clear();
    try {
      const auto answer =
          by_wallet ? client->core.call(m, target, body, key_from(wallet_key)) : client->core.call(m, target, body);
      client->status = answer.status;
      client->request_id = answer.request_id;
      *out_json = new_string(answer.body);
      return ENACT_OK;
    } catch (const enact::api_error& e) {
      client->status = e.status();
      client->request_id = e.request_id();
      const int code = code_of(e.code());
      if (code == ENACT_ERR_NETWORK)
        return set_error(code, e.what());
      if (e.status() == 0 && e.errc() == enact::api_errc::invalid_request)
        return set_error(ENACT_ERR_INVALID_ARGUMENT, e.message());
      *out_json = new_string(error_body(e));
      return set_error(code, e.what());
    }
  });
}

}  // namespace

extern "C" {

enact_core_client* enact_core_client_new(const char* base_url, const char* api_key) {
  const enact::client::client_options defaults;
  return new_client(base_url, api_key, nullptr, static_cast<uint32_t>(defaults.connect_timeout.count()),
                    static_cast<uint32_t>(defaults.read_timeout.count()), defaults.max_retries);
}

enact_core_client* enact_core_client_new_ex(const char* base_url, const char* api_key, const char* ca_file,
                                            uint32_t connect_timeout_ms, uint32_t read_timeout_ms,
                                            uint32_t max_retries) {
  return new_client(base_url, api_key, ca_file, connect_timeout_ms, read_timeout_ms, max_retries);
}

int enact_core_client_set_api_key(enact_core_client* client, const char* api_key) {
  return guarded([&] {
    require(client, "client");
    client->core.set_api_key(api_key != nullptr ? enact::Secret(enact::as_bytes(std::string_view(api_key)))
                                                : enact::Secret());
    return ENACT_OK;
  });
}

int enact_core_client_call(enact_core_client* client, const char* method, const char* path, const char* json_body,
                           char** out_json) {
  return client_call(client, method, path, json_body, false, nullptr, out_json);
}

int enact_core_client_call_wallet(enact_core_client* client, const char* method, const char* path,
                                  const char* json_body, const uint8_t wallet_key[32], char** out_json) {
  return client_call(client, method, path, json_body, true, wallet_key, out_json);
}

int enact_core_client_status(const enact_core_client* client) { return client != nullptr ? client->status : 0; }

const char* enact_core_client_request_id(const enact_core_client* client) {
  return client != nullptr ? client->request_id.c_str() : "";
}

void enact_core_client_free(enact_core_client* client) { delete client; }

}  // extern "C"
