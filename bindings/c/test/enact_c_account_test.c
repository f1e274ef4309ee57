// SPDX-License-Identifier: Apache-2.0
/* Accounts and EIP-191 personal messages: the key's address, personal_sign and recovery against
 * keys.json (ethers Wallet.address and signMessage, equal to viem's), and the refusals. */
#include "enact_c_test.h"

void test_account(void) {
  char* keys = vector_file("keys.json");
  char *cursor = keys, *line, *key_hex = NULL, *address = NULL, *message_hex = NULL;
  int vectors = 0;
  uint8_t key[32], message[2048];
  char out_address[ENACT_ADDRESS_SIZE], signature[ENACT_SIGNATURE_HEX_SIZE];

  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if ((value = field(line, "private_key")) != NULL) {
      key_hex = unquote(value);
    } else if ((value = field(line, "address")) != NULL) {
      address = unquote(value);
    } else if ((value = field(line, "message_hex")) != NULL) {
      message_hex = unquote(value);
    } else if ((value = field(line, "signature")) != NULL && key_hex && address && message_hex) {
      const char* want = unquote(value);
      long n = from_hex(message_hex, message, sizeof message);
      CHECK(from_hex(key_hex, key, sizeof key) == 32 && n >= 0, "keys.json vector %d: hex", vectors);
      if (n < 0)
        continue;
      CHECK_RC(enact_private_key_address(key, out_address), ENACT_OK);
      CHECK(strcmp(out_address, address) == 0, "vector %d: address %s, expected %s", vectors, out_address, address);
      CHECK_RC(enact_message_sign(message, (size_t)n, key, signature), ENACT_OK);
      CHECK(strcmp(signature, want) == 0, "vector %d: signature %s, expected %s", vectors, signature, want);
      CHECK_RC(enact_message_recover(message, (size_t)n, want, out_address), ENACT_OK);
      CHECK(strcmp(out_address, address) == 0, "vector %d: recovered %s", vectors, out_address);
      ++vectors;
      key_hex = address = message_hex = NULL;
    }
  }
  CHECK(vectors >= 4, "keys.json: %d vectors read", vectors);
  free(keys);

  /* The empty message signs and recovers; a changed message recovers another signer. */
  memset(key, 0x11, sizeof key);
  CHECK_RC(enact_private_key_address(key, out_address), ENACT_OK);
  CHECK_RC(enact_message_sign(NULL, 0, key, signature), ENACT_OK);
  {
    char signer[ENACT_ADDRESS_SIZE];
    CHECK_RC(enact_message_recover(NULL, 0, signature, signer), ENACT_OK);
    CHECK(strcmp(signer, out_address) == 0, "empty message recovered %s", signer);
    CHECK_RC(enact_message_recover((const uint8_t*)"x", 1, signature, signer), ENACT_OK);
    CHECK(strcmp(signer, out_address) != 0, "another message recovered the same signer");
  }

  /* Refusals: a zero key, NULL arguments, malformed signatures (each output emptied). */
  memset(key, 0, sizeof key);
  CHECK_RC(enact_private_key_address(key, out_address), ENACT_ERR_CRYPTO);
  CHECK(out_address[0] == '\0', "a failed call left an address");
  CHECK_RC(enact_message_sign((const uint8_t*)"m", 1, key, signature), ENACT_ERR_CRYPTO);
  CHECK(signature[0] == '\0', "a failed call left a signature");
  CHECK_RC(enact_private_key_address(NULL, out_address), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_message_sign(NULL, 1, key, signature), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_message_sign((const uint8_t*)"m", 1, NULL, signature), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_message_recover((const uint8_t*)"m", 1, NULL, out_address), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_message_recover((const uint8_t*)"m", 1, "0x1234", out_address), ENACT_ERR_SIGNATURE_INVALID);
  CHECK_RC(enact_message_recover((const uint8_t*)"m", 1, "not hex", out_address), ENACT_ERR_SIGNATURE_INVALID);
}
