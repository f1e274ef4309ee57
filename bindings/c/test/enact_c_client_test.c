// SPDX-License-Identifier: Apache-2.0
/* The C API's core client. */
#include "enact_c_test.h"

/* ---- Core client --------------------------------------------------------------------------- */

void test_client(void) {
  enact_core_client* client;
  char* out = (char*)"untouched";

  /* Base URLs the client refuses. */
  CHECK(enact_core_client_new("ftp://127.0.0.1", NULL) == NULL, "ftp URL accepted");
  CHECK(strstr(enact_last_error(), "base_url") != NULL, "%s", enact_last_error());
  CHECK(enact_core_client_new("http://user:pw@127.0.0.1", "k") == NULL, "user-info accepted");
  CHECK(enact_core_client_new("http://127.0.0.1:0", NULL) == NULL, "port 0 accepted");
  CHECK(enact_core_client_new(NULL, NULL) == NULL, "NULL URL accepted");

  /* Nothing listens on port 1 of the loopback interface: a network error, no answer. */
  client = enact_core_client_new("http://127.0.0.1:1", "secret-api-key");
  CHECK(client != NULL, "client: %s", enact_last_error());
  if (client == NULL)
    return;
  CHECK(enact_core_client_status(client) == 0, "status before any call");
  CHECK(strcmp(enact_core_client_request_id(client), "") == 0, "request id before any call");
  CHECK_RC(enact_core_client_call(client, "POST", "/core/v1/new_account", "{}", &out), ENACT_ERR_NETWORK);
  CHECK(out == NULL, "out_json set on a network error");
  CHECK(strstr(enact_last_error(), "secret-api-key") == NULL, "key in message: %s", enact_last_error());
  CHECK(enact_core_client_status(client) == 0, "status %d", enact_core_client_status(client));
  enact_core_client_free(client);

  client = enact_core_client_new_ex("http://127.0.0.1:1/prefix", NULL, NULL, 2000, 2000, 0);
  CHECK(client != NULL, "client: %s", enact_last_error());
  if (client == NULL)
    return;
  CHECK_RC(enact_core_client_call(client, "GET", "/core/v1/get_node_chain_config", NULL, &out), ENACT_ERR_NETWORK);
  CHECK_RC(enact_core_client_set_api_key(client, "another-key"), ENACT_OK);
  CHECK_RC(enact_core_client_set_api_key(client, NULL), ENACT_OK);
  CHECK_RC(enact_core_client_set_api_key(NULL, "k"), ENACT_ERR_INVALID_ARGUMENT);

  /* Requests refused before anything is sent. */
  CHECK_RC(enact_core_client_call(client, "PUT", "/core/v1/account", NULL, &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK(strstr(enact_last_error(), "method") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_core_client_call(client, "get", "/core/v1/account", NULL, &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_core_client_call(client, "GET", "core/v1/account", NULL, &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_core_client_call(client, "GET", "/core/v1/account\r\nX-Evil: 1", NULL, &out),
           ENACT_ERR_INVALID_ARGUMENT);
  CHECK(strstr(enact_last_error(), "offset 16") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_core_client_call(client, "GET", "/core/v1/account", "{}", &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_core_client_call(client, "POST", "/core/v1/new_account", "{\"a\":", &out), ENACT_ERR_PARSE);
  CHECK_RC(enact_core_client_call(client, NULL, "/", NULL, &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_core_client_call(client, "GET", NULL, NULL, &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_core_client_call(client, "GET", "/", NULL, NULL), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_core_client_call(NULL, "GET", "/", NULL, &out), ENACT_ERR_INVALID_ARGUMENT);

  /* With the admin wallet's key: a key that is none is refused before anything is sent; a good
   * one needs the server's deployment first, which nothing answers here. */
  {
    uint8_t wallet_key[32];
    memset(wallet_key, 0, sizeof wallet_key);
    CHECK_RC(enact_core_client_call_wallet(client, "GET", "/core/v1/billing/balance", NULL, wallet_key, &out),
             ENACT_ERR_CRYPTO);
    CHECK_RC(enact_core_client_call_wallet(client, "GET", "/core/v1/billing/balance", NULL, NULL, &out),
             ENACT_ERR_INVALID_ARGUMENT);
    wallet_key[31] = 7;
    CHECK_RC(enact_core_client_call_wallet(client, "GET", "/core/v1/billing/balance", NULL, wallet_key, &out),
             ENACT_ERR_NETWORK);
    CHECK(out == NULL, "out_json set on a network error");
  }
  enact_core_client_free(client);

  enact_core_client_free(NULL);
  CHECK(enact_core_client_status(NULL) == 0, "status of NULL");
  CHECK(strcmp(enact_core_client_request_id(NULL), "") == 0, "request id of NULL");
}
