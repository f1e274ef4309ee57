// SPDX-License-Identifier: Apache-2.0
/* The C API's library calls and errors, Keccak-256, EIP-712 typed data and envelopes. */
#include "enact_c_test.h"

/* ---- Library, errors ----------------------------------------------------------------------- */

void test_library(void) {
  static const int codes[] = {ENACT_OK,
                              ENACT_ERR_INVALID_ARGUMENT,
                              ENACT_ERR_PARSE,
                              ENACT_ERR_SIGNATURE_INVALID,
                              ENACT_ERR_CRYPTO,
                              ENACT_ERR_NETWORK,
                              ENACT_ERR_HTTP,
                              ENACT_ERR_BAD_RESPONSE,
                              ENACT_ERR_OUT_OF_RANGE,
                              ENACT_ERR_OUT_OF_MEMORY,
                              ENACT_ERR_INTERNAL,
                              ENACT_ERR_ENVELOPE_TOO_LARGE,
                              ENACT_ERR_ENVELOPE_MALFORMED,
                              ENACT_ERR_ENVELOPE_TYPES_NOT_CANONICAL,
                              ENACT_ERR_ENVELOPE_WRONG_PRIMARY_TYPE,
                              ENACT_ERR_ENVELOPE_DOMAIN_MISMATCH,
                              ENACT_ERR_ENVELOPE_CHAIN_ID_MISMATCH,
                              ENACT_ERR_ENVELOPE_EXPIRED,
                              ENACT_ERR_ENVELOPE_SIGNATURE_MALFORMED,
                              ENACT_ERR_ENVELOPE_SIGNER_MISMATCH};
  size_t i, j;

  CHECK(strcmp(enact_version(), ENACT_EXPECTED_VERSION) == 0, "version %s", enact_version());
  /* Nothing failed yet in this thread. */
  CHECK(enact_last_error() != NULL && enact_last_error()[0] == '\0', "last error '%s'", enact_last_error());

  /* Every code has its own name; a value that is no code has none. */
  for (i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
    CHECK(strcmp(enact_error_name(codes[i]), "unknown") != 0, "code %d has no name", codes[i]);
    for (j = 0; j < i; ++j)
      CHECK(strcmp(enact_error_name(codes[i]), enact_error_name(codes[j])) != 0, "codes %d and %d share a name",
            codes[i], codes[j]);
  }
  CHECK(strcmp(enact_error_name(ENACT_ERR_ENVELOPE_EXPIRED), "envelope_expired") == 0, "%s",
        enact_error_name(ENACT_ERR_ENVELOPE_EXPIRED));
  CHECK(strcmp(enact_error_name(-11), "unknown") == 0, "%s", enact_error_name(-11));
  CHECK(strcmp(enact_error_name(1), "unknown") == 0, "%s", enact_error_name(1));

  enact_free(NULL);
}

/* ---- Keccak-256 ---------------------------------------------------------------------------- */

void test_keccak(void) {
  static const char prefix[] =
      "\x19"
      "Ethereum Signed Message:\n";
  uint8_t out[32];
  char* keys = vector_file("keys.json");
  char *cursor = keys, *line, *message = NULL;
  int vectors = 0;

  /* The empty string and "abc": Keccak team's KeccakKAT (ShortMsgKAT_256, Len = 0 and 24). */
  CHECK_RC(enact_keccak256(NULL, 0, out), ENACT_OK);
  CHECK(same_hex(out, 32, "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"), "keccak256('')");
  CHECK_RC(enact_keccak256((const uint8_t*)"abc", 3, out), ENACT_OK);
  CHECK(same_hex(out, 32, "0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"), "keccak256('abc')");

  /* keys.json: eip191_hash = keccak256("\x19Ethereum Signed Message:\n" ‖ len ‖ message), from
   * ethers hashMessage. */
  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if ((value = field(line, "message_hex")) != NULL) {
      message = unquote(value);
    } else if ((value = field(line, "eip191_hash")) != NULL && message != NULL) {
      uint8_t buf[4096];
      long n;
      int head = snprintf((char*)buf, sizeof buf, "%s", prefix);
      n = from_hex(message, buf + head + 20, sizeof buf - (size_t)head - 20);
      CHECK(n >= 0, "keys.json: message_hex");
      if (n < 0)
        continue;
      head += snprintf((char*)buf + head, 20, "%ld", n);
      memmove(buf + head, buf + strlen(prefix) + 20, (size_t)n);
      CHECK_RC(enact_keccak256(buf, (size_t)head + (size_t)n, out), ENACT_OK);
      CHECK(same_hex(out, 32, unquote(value)), "keys.json vector %d: eip191_hash", vectors);
      ++vectors;
      message = NULL;
    }
  }
  CHECK(vectors >= 4, "keys.json: %d vectors read", vectors);
  free(keys);

  CHECK_RC(enact_keccak256(NULL, 3, out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK(strstr(enact_last_error(), "data") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_keccak256((const uint8_t*)"abc", 3, NULL), ENACT_ERR_INVALID_ARGUMENT);
}

/* ---- EIP-712 typed data -------------------------------------------------------------------- */

static const char kMail[] =
    "{\"types\":{\"EIP712Domain\":[{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"version\","
    "\"type\":\"string\"},{\"name\":\"chainId\",\"type\":\"uint256\"},{\"name\":"
    "\"verifyingContract\",\"type\":\"address\"}],\"Person\":[{\"name\":\"name\",\"type\":"
    "\"string\"},{\"name\":\"wallet\",\"type\":\"address\"}],\"Mail\":[{\"name\":\"from\","
    "\"type\":\"Person\"},{\"name\":\"to\",\"type\":\"Person\"},{\"name\":\"contents\",\"type\":"
    "\"string\"}]},\"primaryType\":\"Mail\",\"domain\":{\"name\":\"Ether Mail\",\"version\":\"1\","
    "\"chainId\":1,\"verifyingContract\":\"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC\"},"
    "\"message\":{\"from\":{\"name\":\"Cow\",\"wallet\":"
    "\"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826\"},\"to\":{\"name\":\"Bob\",\"wallet\":"
    "\"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB\"},\"contents\":\"Hello, Bob!\"}}";

void test_typed_data(void) {
  char* file = vector_file("typed_data.json");
  char *cursor = file, *line;
  char *name = NULL, *document = NULL, *digest = NULL, *key = NULL, *signer = NULL;
  int vectors = 0, saw_mail = 0;
  uint8_t hash[32], zero_key[32], high_key[32];
  char address[ENACT_ADDRESS_SIZE], signature[ENACT_SIGNATURE_HEX_SIZE];

  /* typed_data.json, every vector: the digest (ethers TypedDataEncoder.hash, equal to
   * eth-sig-util), recovery of viem's signature, and our signature equal to viem's (RFC 6979). */
  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if ((value = field(line, "name")) != NULL) {
      name = unquote(value);
      document = digest = key = signer = NULL;
    } else if ((value = field(line, "document")) != NULL) {
      document = value;
    } else if ((value = field(line, "digest_ethers")) != NULL) {
      digest = unquote(value);
    } else if ((value = field(line, "private_key")) != NULL) {
      key = unquote(value);
    } else if ((value = field(line, "signer")) != NULL) {
      signer = unquote(value);
    } else if ((value = field(line, "signature_viem")) != NULL) {
      const char* want_sig = unquote(value);
      uint8_t priv[32];
      CHECK(name && document && digest && key && signer && want_sig, "typed_data.json: fields");
      if (!(name && document && digest && key && signer && want_sig))
        continue;
      CHECK_RC(enact_typed_data_hash(document, hash), ENACT_OK);
      CHECK(same_hex(hash, 32, digest), "%s: digest", name);
      CHECK_RC(enact_typed_data_recover(document, want_sig, address), ENACT_OK);
      CHECK(strcmp(address, signer) == 0, "%s: recovered %s, expected %s", name, address, signer);
      CHECK(from_hex(key, priv, 32) == 32, "%s: private_key", name);
      CHECK_RC(enact_typed_data_sign(document, priv, signature), ENACT_OK);
      CHECK(strcmp(signature, want_sig) == 0, "%s: signature %s", name, signature);
      saw_mail |= strcmp(name, "eip712-mail") == 0;
      ++vectors;
      name = NULL;
    }
  }
  CHECK(vectors >= 300 && saw_mail, "typed_data.json: %d vectors read", vectors);
  free(file);

  /* EIP-712's own example (eip712-mail): digest from the EIP's Example.js. */
  CHECK_RC(enact_typed_data_hash(kMail, hash), ENACT_OK);
  CHECK(same_hex(hash, 32, "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2"), "eip712-mail digest");

  /* Bad documents: not JSON, a bad value named by its path; outputs cleared. */
  memset(hash, 0xaa, sizeof hash);
  CHECK_RC(enact_typed_data_hash("{\"types\":", hash), ENACT_ERR_PARSE);
  CHECK(hash[0] == 0 && hash[31] == 0, "hash cleared on failure");
  {
    char* bad = replaced(kMail, "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB", "0x1234");
    CHECK_RC(enact_typed_data_hash(bad, hash), ENACT_ERR_PARSE);
    CHECK(strstr(enact_last_error(), "message.to.wallet") != NULL, "%s", enact_last_error());
    free(bad);
  }
  CHECK_RC(enact_typed_data_hash(NULL, hash), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_typed_data_hash(kMail, NULL), ENACT_ERR_INVALID_ARGUMENT);

  /* Signatures that are not 65 bytes of hex, high s, or from which no key recovers. */
  strcpy(address, "junk");
  CHECK_RC(enact_typed_data_recover(kMail, "0x1234", address), ENACT_ERR_SIGNATURE_INVALID);
  CHECK(address[0] == '\0', "address cleared on failure");
  CHECK(strstr(enact_last_error(), "signature") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_typed_data_recover(kMail, "not hex", address), ENACT_ERR_SIGNATURE_INVALID);
  /* r = 1, s = n - 1 (high s, EIP-2), v = 27. */
  CHECK_RC(enact_typed_data_recover(kMail,
                                    "0x0000000000000000000000000000000000000000000000000000000000000001"
                                    "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140"
                                    "1b",
                                    address),
           ENACT_ERR_SIGNATURE_INVALID);
  CHECK_RC(enact_typed_data_recover(kMail, NULL, address), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_typed_data_recover("[]", "0x1234", address), ENACT_ERR_PARSE);

  /* Keys that are no secp256k1 scalar: zero, and 2^256 - 1 (above the group order). */
  memset(zero_key, 0, sizeof zero_key);
  memset(high_key, 0xff, sizeof high_key);
  strcpy(signature, "junk");
  CHECK_RC(enact_typed_data_sign(kMail, zero_key, signature), ENACT_ERR_CRYPTO);
  CHECK(signature[0] == '\0', "signature cleared on failure");
  CHECK_RC(enact_typed_data_sign(kMail, high_key, signature), ENACT_ERR_CRYPTO);
  CHECK_RC(enact_typed_data_sign(kMail, NULL, signature), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_typed_data_sign("null", high_key, signature), ENACT_ERR_PARSE);
}

/* ---- Envelope ------------------------------------------------------------------------------ */

/* tests/unit/envelope_test.cpp: @metamask/eth-sig-util 8.2.0 signTypedData (V4) with key
 * keccak256("cow") of the envelope for chainId 175188, issuedAt 1700000000, the cow address. */
#define COW "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"
#define CHAIN 175188u
#define ISSUED 1700000000u
static const struct {
  const char* primary;
  const char* digest;
  const char* signature;
} kEnvelopes[] = {
    {"CreateWallet", "0x9a74860d472e30e72a8641ab1c6be12fef09eb610dded8df34c0e9b9a2a273a0",
     "0x78730a429a997e23785320e2ac016dbf8c66c2c67bf22681ce84dfe54a9857ec23e312fdc13f5d69788b5b706"
     "ab20068620c91d8472b0a526e5caa1b3f6f76421b"},
    {"ConvertAccount", "0xd200e3e77834aba46ae7fd8d55dc6cdf02aa4faadfd0f5a78614ca7a41bf7f13",
     "0x4f1d515e7e76b06f31fde1abd067045e2bd0825127b783d7a4c793c6aa92af8a7847d877cba26ac9392e42322"
     "3629c8ccd72755a042fa2323bf278637f2c306b1c"},
    {"AddUsageApiKey", "0xdf3db34ef668f7e372c80f9cbacb01ec94a26bc5103057aa106e33738ba6e992",
     "0xc1587d792ecd342aa0e0ef64740e13e67cd1d85dce2669681653515cb385826d374e8d46b984fa53dd761a5aa"
     "2e7beb5d0fb29ae6ae1e4d4aec18f06bddbe8dd1b"},
    {"BillingAuth", "0x58ec3274a3dee0ff805e32885d8acdf36bf823c8eb69b63b665c226871feedcd",
     "0x5353f394c950082066ba1077b6192758add0efba85b3c9c0c8c737ac26720eca2c3512cad953373c5c1a15b6f"
     "c811d147cd1a983ceedf9cc7ff43806be45bfbd1c"},
};

/* The good CreateWallet envelope `typed` (signature `sig`) with `from` replaced by `to` is refused
 * by enact_envelope_verify with `want`. */
static void check_edit_refused(const char* typed, const char* sig, const char* from, const char* to, int want,
                               char address[ENACT_ADDRESS_SIZE]) {
  char* edited = replaced(typed, from, to);
  CHECK(edited != NULL, "envelope text: %s", typed);
  if (edited == NULL)
    return;
  const int failed_before = failures;
  CHECK_RC(enact_envelope_verify(edited, sig, "CreateWallet", CHAIN, ISSUED, 0, NULL, address), want);
  if (failures != failed_before)
    fprintf(stderr, "  (the envelope with '%s' replaced by '%s')\n", from, to);
  free(edited);
}

static void cow_key(uint8_t key[32]) { CHECK_RC(enact_keccak256((const uint8_t*)"cow", 3, key), ENACT_OK); }

void test_envelope(void) {
  uint8_t key[32], hash[32];
  char address[ENACT_ADDRESS_SIZE];
  char* json = NULL;
  char* signed_json = NULL;
  char *typed = NULL, *sig_at;
  size_t i;

  cow_key(key);
  for (i = 0; i < sizeof kEnvelopes / sizeof kEnvelopes[0]; ++i) {
    const char* primary = kEnvelopes[i].primary;
    CHECK_RC(enact_envelope_build(primary, COW, ISSUED, CHAIN, &json), ENACT_OK);
    CHECK(json != NULL, "%s: no JSON", primary);
    if (json == NULL)
      continue;
    CHECK_RC(enact_typed_data_hash(json, hash), ENACT_OK);
    CHECK(same_hex(hash, 32, kEnvelopes[i].digest), "%s: digest of the built envelope", primary);
    CHECK_RC(enact_envelope_verify(json, kEnvelopes[i].signature, primary, CHAIN, ISSUED, 0, NULL, address), ENACT_OK);
    CHECK(strcmp(address, COW) == 0, "%s: signer %s", primary, address);
    enact_free(json);
    json = NULL;

    CHECK_RC(enact_envelope_sign(primary, key, ISSUED, CHAIN, &signed_json), ENACT_OK);
    CHECK(signed_json != NULL && strstr(signed_json, kEnvelopes[i].signature) != NULL, "%s: signed envelope %s",
          primary, signed_json ? signed_json : "(null)");
    enact_free(signed_json);
    signed_json = NULL;
  }

  /* The rules of enact_envelope_verify, each with its own code, on a good CreateWallet envelope. */
  CHECK_RC(enact_envelope_sign("CreateWallet", key, ISSUED, CHAIN, &signed_json), ENACT_OK);
  if (signed_json == NULL)
    return;
  typed = object_after(signed_json, "typed_data");
  sig_at = strstr(signed_json, "\"signature\":\"");
  CHECK(typed != NULL && sig_at != NULL, "signed envelope shape: %s", signed_json);
  if (typed != NULL && sig_at != NULL) {
    char sig[ENACT_SIGNATURE_HEX_SIZE];
    char big[5000];
    memcpy(sig, sig_at + 13, ENACT_SIGNATURE_HEX_SIZE - 1);
    sig[ENACT_SIGNATURE_HEX_SIZE - 1] = '\0';

    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED, 0, NULL, address), ENACT_OK);
    CHECK(strcmp(address, COW) == 0, "signer %s", address);
    /* issuedAt window: both bounds included, default 300 s. */
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED + 300, 0, NULL, address), ENACT_OK);
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED - 300, 0, COW, address), ENACT_OK);

    /* 1: over 4096 bytes as received (whitespace counts). */
    memset(big, ' ', sizeof big);
    big[0] = '{';
    strcpy(big + sizeof big - strlen(typed), typed + 1);
    CHECK_RC(enact_envelope_verify(big, sig, "CreateWallet", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_ENVELOPE_TOO_LARGE);
    /* 2: not JSON. */
    CHECK_RC(enact_envelope_verify("{\"types\"", sig, "CreateWallet", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_ENVELOPE_MALFORMED);
    CHECK(address[0] == '\0', "address cleared on failure");
    /* 3: a member type changed. */
    check_edit_refused(typed, sig, "\"issuedAt\",\"type\":\"uint256\"", "\"issuedAt\",\"type\":\"uint64\"",
                       ENACT_ERR_ENVELOPE_TYPES_NOT_CANONICAL, address);
    /* 4: a valid envelope for another flow. */
    CHECK_RC(enact_envelope_verify(typed, sig, "BillingAuth", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_ENVELOPE_WRONG_PRIMARY_TYPE);
    /* 5: another domain name. */
    check_edit_refused(typed, sig, "Svc ChainSecured", "Svc ChainSecureX", ENACT_ERR_ENVELOPE_DOMAIN_MISMATCH, address);
    /* 6: another chain. */
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN + 1, ISSUED, 0, NULL, address),
             ENACT_ERR_ENVELOPE_CHAIN_ID_MISMATCH);
    /* 7: a message address that is not one. */
    check_edit_refused(typed, sig, COW, "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD8", ENACT_ERR_ENVELOPE_MALFORMED,
                       address);
    /* 8: one second outside the window, either side; a wider window accepts it. */
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED + 301, 0, NULL, address),
             ENACT_ERR_ENVELOPE_EXPIRED);
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED - 301, 0, NULL, address),
             ENACT_ERR_ENVELOPE_EXPIRED);
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED + 301, 600, NULL, address), ENACT_OK);
    /* now = 0 is the system clock, long after 2023-11-14. */
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, 0, 0, NULL, address), ENACT_ERR_ENVELOPE_EXPIRED);
    /* 9: not 65 bytes. */
    CHECK_RC(enact_envelope_verify(typed, "0x00", "CreateWallet", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_ENVELOPE_SIGNATURE_MALFORMED);
    /* 10: a good signature by another key than the expected signer; another flow's signature. */
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED, 0,
                                   "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf", address),
             ENACT_ERR_ENVELOPE_SIGNER_MISMATCH);
    CHECK_RC(enact_envelope_verify(typed, kEnvelopes[3].signature, "CreateWallet", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_ENVELOPE_SIGNER_MISMATCH);

    /* Arguments. */
    CHECK_RC(enact_envelope_verify(typed, sig, "Transfer", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(enact_last_error(), "expected_primary_type") != NULL, "%s", enact_last_error());
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED, 0, "0x12", address),
             ENACT_ERR_INVALID_ARGUMENT);
    CHECK_RC(enact_envelope_verify(NULL, sig, "CreateWallet", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_INVALID_ARGUMENT);
    CHECK_RC(enact_envelope_verify(typed, NULL, "CreateWallet", CHAIN, ISSUED, 0, NULL, address),
             ENACT_ERR_INVALID_ARGUMENT);
    CHECK_RC(enact_envelope_verify(typed, sig, "CreateWallet", CHAIN, ISSUED, 0, NULL, NULL),
             ENACT_ERR_INVALID_ARGUMENT);
  }
  free(typed);
  enact_free(signed_json);

  json = (char*)"untouched";
  CHECK_RC(enact_envelope_build("createWallet", COW, ISSUED, CHAIN, &json), ENACT_ERR_INVALID_ARGUMENT);
  CHECK(json == NULL, "out_json cleared on failure");
  CHECK_RC(enact_envelope_build("CreateWallet", "0x1234", ISSUED, CHAIN, &json), ENACT_ERR_INVALID_ARGUMENT);
  /* A mixed-case address with a wrong EIP-55 checksum. */
  CHECK_RC(enact_envelope_build("CreateWallet", "0xcD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826", ISSUED, CHAIN, &json),
           ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_build(NULL, COW, ISSUED, CHAIN, &json), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_build("CreateWallet", COW, ISSUED, CHAIN, NULL), ENACT_ERR_INVALID_ARGUMENT);
  memset(key, 0, sizeof key);
  CHECK_RC(enact_envelope_sign("BillingAuth", key, ISSUED, CHAIN, &json), ENACT_ERR_CRYPTO);
  CHECK_RC(enact_envelope_sign("Billing", key, ISSUED, CHAIN, &json), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_sign("BillingAuth", NULL, ISSUED, CHAIN, &json), ENACT_ERR_INVALID_ARGUMENT);
}
