// SPDX-License-Identifier: Apache-2.0
/* Uses the installed libenact_c.so through enact.h as a C application would: hashing, typed-data
 * recovery, the CID of some bytes, a typed error with its message, and the client's network error
 * (nothing listens on port 1). */
#include <enact.h>

#include <stdio.h>
#include <string.h>

static int fail(const char* what) {
  printf("c consumer failed: %s (%s)\n", what, enact_last_error());
  return 1;
}

int main(void) {
  /* keccak256("") is the well-known empty hash. */
  static const uint8_t empty_hash[4] = {0xc5, 0xd2, 0x46, 0x01};
  uint8_t hash[32];
  char cid[ENACT_CID_V0_SIZE];
  char address[ENACT_ADDRESS_SIZE];
  char* out = NULL;
  enact_core_client* client;
  int rc;

  if (enact_keccak256(NULL, 0, hash) != ENACT_OK || memcmp(hash, empty_hash, 4) != 0)
    return fail("keccak256");
  /* ipfs add of "hello world\n" (tests/vectors/cid.json, hello-world). */
  if (enact_cid_v0((const uint8_t*)"hello world\n", 12, cid) != ENACT_OK ||
      strcmp(cid, "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o") != 0)
    return fail("cid");
  if (enact_typed_data_recover("{}", "0x00", address) != ENACT_ERR_PARSE || enact_last_error()[0] == '\0')
    return fail("typed data error");
  client = enact_core_client_new_ex("http://127.0.0.1:1", NULL, NULL, 2000, 2000, 0);
  if (client == NULL)
    return fail("client");
  rc = enact_core_client_call(client, "GET", "/core/v1/get_node_chain_config", NULL, &out);
  enact_core_client_free(client);
  if (rc != ENACT_ERR_NETWORK || out != NULL)
    return fail("client call");
  printf("c consumer ok (libenact_c %s)\n", enact_version());
  return 0;
}
