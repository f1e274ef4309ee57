// SPDX-License-Identifier: Apache-2.0
/* Links the packaged libenact_c.so through enact.h only: the version, and an EIP-191 signature
 * whose signer recovers to the key's address. */
#include <enact.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  uint8_t key[32];
  char address[ENACT_ADDRESS_SIZE];
  char signer[ENACT_ADDRESS_SIZE];
  char signature[ENACT_SIGNATURE_HEX_SIZE];
  memset(key, 0x01, sizeof key);
  if (enact_private_key_address(key, address) != ENACT_OK ||
      enact_message_sign((const uint8_t*)"test_package", 12, key, signature) != ENACT_OK ||
      enact_message_recover((const uint8_t*)"test_package", 12, signature, signer) != ENACT_OK ||
      strcmp(address, signer) != 0) {
    printf("test_package_c failed: %s\n", enact_last_error());
    return 1;
  }
  printf("test_package_c ok: libenact_c %s, %s\n", enact_version(), signer);
  return 0;
}
