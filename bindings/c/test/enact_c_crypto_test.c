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
                              ENACT_ERR_ENVELOPE_SIGNER_MISMATCH,
                              ENACT_ERR_ENVELOPE_VERSION_REFUSED,
                              ENACT_ERR_ENVELOPE_CONTRACT_MISMATCH,
                              ENACT_ERR_ENVELOPE_ACCOUNT_MISMATCH,
                              ENACT_ERR_ENVELOPE_REQUEST_MISMATCH,
                              ENACT_ERR_ENVELOPE_REPLAYED};
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
  CHECK(strcmp(enact_error_name(ENACT_ERR_ENVELOPE_REQUEST_MISMATCH), "envelope_request_mismatch") == 0, "%s",
        enact_error_name(ENACT_ERR_ENVELOPE_REQUEST_MISMATCH));
  CHECK(strcmp(enact_error_name(-11), "unknown") == 0, "%s", enact_error_name(-11));
  CHECK(strcmp(enact_error_name(-35), "unknown") == 0, "%s", enact_error_name(-35));
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

/* ---- Envelope version 2 -------------------------------------------------------------------- */

/* tests/vectors/typed_data.json, envelope2-*: digests by ethers and eth-sig-util, signatures by
 * viem, all with one key for the registry below. */
#define V2_KEY "0xc04fe42d55029562e7b7ad40575947728a423f526959fbf56e8d3abc362a9e4b"
#define V2_SIGNER "0xBb904cD370fAB68f99826d5D2b35315300738E65"
#define V2_REGISTRY "0x574650Cd99D3830FE6D274c7a7843CDc00E17938"
#define V2_POST_BODY "{\"amount_cents\":500}"
static const struct {
  const char* primary;
  uint64_t chain_id;
  uint64_t issued_at;
  const char* nonce;   /* NULL: none */
  const char* account; /* NULL: none */
  const char* method;  /* NULL: none */
  const char* path;
  const char* body;
  const char* digest;
  const char* signature;
} kEnvelopes2[] = {
    {"CreateWallet", 175188u, 1735689600u, "0xdff168556c59916774da1368fbe416cf7b83c223b84d83e2a954627115391984", NULL,
     NULL, NULL, NULL, "0x4eb1cead9f2aff4a209fc611a11cccbfaf2d9a1181ab1b3d485db11287f0fe0e",
     "0x310b71506bcdfe59c659505da45780ea803e548de7df63cb9e2023867775167f752c1f2535e32b6cd43e2b130fd8d695db867f8639d94"
     "208910f5c896a0218131c"},
    {"AddUsageApiKey", 4294967311u, 1735689601u, "0x1c898443bf6fe0e0af85aa46bc06d2dbcaec2bda2cb6087f9802854286466470",
     NULL, NULL, NULL, NULL, "0xc357e56c68ed4352009b8c1c01f2303f2102310122d47fea7ecbadefe5eab018",
     "0x2749f9d4012948c0d4cfedb501493e72f79aa6f1a4db770a67cbe67be61deee70c23d2376745a8a51b0b6359efc957b5e805b30bb821d9"
     "e32b220c82bbc8fd6f1b"},
    {"ConvertAccount", 175188u, 1735689602u, "0x65cd2e13aef3b610b3cea877f5343804677a6e02eb0746cf0f60fbe9940e6ade",
     "0xd844bb55167ab332117049e2ccd3d8863d241bcc80f46302310a6d942a90e851", NULL, NULL, NULL,
     "0x27eea83f15dae8b3052f38b8098d1dc48f39f9950afd82adc7ee47c37b9241f7",
     "0x70604e97fe0e28a0e3e7e609605e0656cc72ed00a4f0fcedb3364abe66918df94372a3625738c89406f7a76903e5a4591932c0e8588d3d7"
     "b"
     "aa9a93915dc91af81b"},
    {"BillingAuth", 175188u, 1735689603u, NULL, NULL, "GET", "/core/v1/billing/usage?limit=20&cursor=abc", "",
     "0x2c7e4c151a5632ec0609e0c5dcaebe980792b55740444bc0dcf77927b36ae86b",
     "0x333dd70885e53c9c41fb4460339241864cf0a70e7eb339f2b4017905b684de291da0c103fa89dfd84035edc74eabe9ff414da9ccc2d431b"
     "9"
     "6e1d7944c147f4911c"},
    {"BillingAuth", 175188u, 1735689604u, NULL, NULL, "POST", "/core/v1/billing/create_payment_intent", V2_POST_BODY,
     "0xf8a514b585d07aa48a45103fd26984d5aebe5c09ba490a1f8ae4d3aa894d3e05",
     "0xc7230600983f0f761778b8adc5cd517e35f8ad1454c1fc165feb0befb52e2f0310cc7fa867a215e7e4d03643321805d36a0826563431b99"
     "9"
     "a390bcd4ea881d721c"},
};

void test_envelope_v2(void) {
  uint8_t key[32], nonce[32], account[32], hash[32], got_nonce[32];
  char address[ENACT_ADDRESS_SIZE];
  char* json = NULL;
  int version = -1;
  size_t i;

  CHECK(from_hex(V2_KEY, key, sizeof key) == 32, "key");
  for (i = 0; i < sizeof kEnvelopes2 / sizeof kEnvelopes2[0]; ++i) {
    const char* primary = kEnvelopes2[i].primary;
    const uint8_t* n = NULL;
    const uint8_t* a = NULL;
    const uint8_t* body = (const uint8_t*)kEnvelopes2[i].body;
    const size_t body_len = body != NULL ? strlen(kEnvelopes2[i].body) : 0;
    char *typed, *sig_at;
    char sig[ENACT_SIGNATURE_HEX_SIZE];
    if (kEnvelopes2[i].nonce != NULL) {
      CHECK(from_hex(kEnvelopes2[i].nonce, nonce, sizeof nonce) == 32, "nonce");
      n = nonce;
    }
    if (kEnvelopes2[i].account != NULL) {
      CHECK(from_hex(kEnvelopes2[i].account, account, sizeof account) == 32, "account");
      a = account;
    }
    if (body_len == 0)
      body = NULL;

    /* The built document hashes to what ethers and eth-sig-util computed. */
    CHECK_RC(enact_envelope_build_v2(primary, V2_SIGNER, kEnvelopes2[i].issued_at, kEnvelopes2[i].chain_id, V2_REGISTRY,
                                     n, a, kEnvelopes2[i].method, kEnvelopes2[i].path, body, body_len, &json),
             ENACT_OK);
    if (json == NULL)
      continue;
    CHECK_RC(enact_typed_data_hash(json, hash), ENACT_OK);
    CHECK(same_hex(hash, 32, kEnvelopes2[i].digest), "%s #%u: digest of the built envelope", primary, (unsigned)i);
    enact_free(json);
    json = NULL;

    /* Signed here, it carries viem's signature (RFC 6979), and verifies for the same binding. */
    CHECK_RC(enact_envelope_sign_v2(primary, key, kEnvelopes2[i].issued_at, kEnvelopes2[i].chain_id, V2_REGISTRY, n, a,
                                    kEnvelopes2[i].method, kEnvelopes2[i].path, body, body_len, &json),
             ENACT_OK);
    if (json == NULL)
      continue;
    CHECK(strstr(json, kEnvelopes2[i].signature) != NULL, "%s #%u: signature %s", primary, (unsigned)i, json);
    typed = object_after(json, "typed_data");
    sig_at = strstr(json, "\"signature\":\"");
    CHECK(typed != NULL && sig_at != NULL, "signed envelope shape: %s", json);
    if (typed != NULL && sig_at != NULL) {
      memcpy(sig, sig_at + 13, ENACT_SIGNATURE_HEX_SIZE - 1);
      sig[ENACT_SIGNATURE_HEX_SIZE - 1] = '\0';
      CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, V2_REGISTRY, a,
                                        kEnvelopes2[i].method, kEnvelopes2[i].path, body, body_len, 0,
                                        kEnvelopes2[i].issued_at, 0, V2_SIGNER, address, &version, got_nonce),
               ENACT_OK);
      CHECK(strcmp(address, V2_SIGNER) == 0 && version == 2, "%s: signer %s, version %d", primary, address, version);
      CHECK(n == NULL ? same_hex(got_nonce, 32,
                                 "0x"
                                 "0000000000000000000000000000000000000000000000000000000000000000")
                      : memcmp(got_nonce, n, 32) == 0,
            "%s: nonce reported", primary);
      /* Another deployment, another registry: refused. */
      CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id + 1, V2_REGISTRY, a,
                                        kEnvelopes2[i].method, kEnvelopes2[i].path, body, body_len, 0,
                                        kEnvelopes2[i].issued_at, 0, NULL, address, NULL, NULL),
               ENACT_ERR_ENVELOPE_CHAIN_ID_MISMATCH);
      CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, COW, a, kEnvelopes2[i].method,
                                        kEnvelopes2[i].path, body, body_len, 0, kEnvelopes2[i].issued_at, 0, NULL,
                                        address, NULL, NULL),
               ENACT_ERR_ENVELOPE_CONTRACT_MISMATCH);
      /* The version 1 check has no registry: a version 2 envelope is never taken for one. */
      CHECK_RC(enact_envelope_verify(typed, sig, primary, kEnvelopes2[i].chain_id, kEnvelopes2[i].issued_at, 0, NULL,
                                     address),
               ENACT_ERR_ENVELOPE_CONTRACT_MISMATCH);
      if (a != NULL) {
        uint8_t other[32];
        memcpy(other, a, 32);
        other[0] ^= 1;
        CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, V2_REGISTRY, other, NULL, NULL,
                                          NULL, 0, 0, kEnvelopes2[i].issued_at, 0, NULL, address, NULL, NULL),
                 ENACT_ERR_ENVELOPE_ACCOUNT_MISMATCH);
      }
      if (kEnvelopes2[i].method != NULL) {
        CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, V2_REGISTRY, NULL,
                                          kEnvelopes2[i].method, "/core/v1/billing/balance", body, body_len, 0,
                                          kEnvelopes2[i].issued_at, 0, NULL, address, NULL, NULL),
                 ENACT_ERR_ENVELOPE_REQUEST_MISMATCH);
        CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, V2_REGISTRY, NULL, "PUT",
                                          kEnvelopes2[i].path, body, body_len, 0, kEnvelopes2[i].issued_at, 0, NULL,
                                          address, NULL, NULL),
                 ENACT_ERR_ENVELOPE_REQUEST_MISMATCH);
        CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, V2_REGISTRY, NULL,
                                          kEnvelopes2[i].method, kEnvelopes2[i].path, (const uint8_t*)"{}", 2, 0,
                                          kEnvelopes2[i].issued_at, 0, NULL, address, NULL, NULL),
                 ENACT_ERR_ENVELOPE_REQUEST_MISMATCH);
        /* Checked without the request it binds. */
        CHECK_RC(enact_envelope_verify_v2(typed, sig, primary, kEnvelopes2[i].chain_id, V2_REGISTRY, NULL, NULL, NULL,
                                          NULL, 0, 0, kEnvelopes2[i].issued_at, 0, NULL, address, NULL, NULL),
                 ENACT_ERR_ENVELOPE_REQUEST_MISMATCH);
      }
    }
    free(typed);
    enact_free(json);
    json = NULL;
  }

  /* A fresh random nonce when none is given: two envelopes, two nonces. */
  {
    char* second = NULL;
    CHECK_RC(enact_envelope_sign_v2("CreateWallet", key, 1735689600u, 1u, V2_REGISTRY, NULL, NULL, NULL, NULL, NULL, 0,
                                    &json),
             ENACT_OK);
    CHECK_RC(enact_envelope_sign_v2("CreateWallet", key, 1735689600u, 1u, V2_REGISTRY, NULL, NULL, NULL, NULL, NULL, 0,
                                    &second),
             ENACT_OK);
    CHECK(json != NULL && second != NULL && strcmp(json, second) != 0, "random nonces differ");
    enact_free(second);
  }

  /* Version 1 where only version 2 is accepted; accepted with accept_v1. */
  {
    char *v1 = NULL, *typed, *sig_at;
    char sig[ENACT_SIGNATURE_HEX_SIZE];
    CHECK_RC(enact_envelope_sign("BillingAuth", key, 1735689600u, 1u, &v1), ENACT_OK);
    typed = v1 ? object_after(v1, "typed_data") : NULL;
    sig_at = v1 ? strstr(v1, "\"signature\":\"") : NULL;
    if (typed != NULL && sig_at != NULL) {
      memcpy(sig, sig_at + 13, ENACT_SIGNATURE_HEX_SIZE - 1);
      sig[ENACT_SIGNATURE_HEX_SIZE - 1] = '\0';
      CHECK_RC(enact_envelope_verify_v2(typed, sig, "BillingAuth", 1u, V2_REGISTRY, NULL, "GET", "/x", NULL, 0, 0,
                                        1735689600u, 0, NULL, address, &version, NULL),
               ENACT_ERR_ENVELOPE_VERSION_REFUSED);
      CHECK_RC(enact_envelope_verify_v2(typed, sig, "BillingAuth", 1u, V2_REGISTRY, NULL, "GET", "/x", NULL, 0, 1,
                                        1735689600u, 0, NULL, address, &version, NULL),
               ENACT_OK);
      CHECK(version == 1, "version %d", version);
    }
    free(typed);
    enact_free(v1);
  }

  /* Each kind takes its own members and refuses the others. */
  enact_free(json);
  json = (char*)"untouched";
  CHECK_RC(enact_envelope_build_v2("CreateWallet", V2_SIGNER, 1u, 1u, V2_REGISTRY, NULL, account, NULL, NULL, NULL, 0,
                                   &json),
           ENACT_ERR_INVALID_ARGUMENT);
  CHECK(json == NULL && strstr(enact_last_error(), "account") != NULL, "%s", enact_last_error());
  CHECK_RC(
      enact_envelope_build_v2("CreateWallet", V2_SIGNER, 1u, 1u, V2_REGISTRY, NULL, NULL, "GET", "/", NULL, 0, &json),
      ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(
      enact_envelope_build_v2("ConvertAccount", V2_SIGNER, 1u, 1u, V2_REGISTRY, NULL, NULL, NULL, NULL, NULL, 0, &json),
      ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(
      enact_envelope_build_v2("BillingAuth", V2_SIGNER, 1u, 1u, V2_REGISTRY, nonce, NULL, "GET", "/", NULL, 0, &json),
      ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(
      enact_envelope_build_v2("BillingAuth", V2_SIGNER, 1u, 1u, V2_REGISTRY, NULL, NULL, "GET", NULL, NULL, 0, &json),
      ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(
      enact_envelope_build_v2("BillingAuth", V2_SIGNER, 1u, 1u, V2_REGISTRY, NULL, NULL, "POST", "/", NULL, 3, &json),
      ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_build_v2("CreateWallet", V2_SIGNER, 1u, 1u, NULL, NULL, NULL, NULL, NULL, NULL, 0, &json),
           ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_build_v2("CreateWallet", V2_SIGNER, 1u, 1u, "0x12", NULL, NULL, NULL, NULL, NULL, 0, &json),
           ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_verify_v2("{}", "0x", "CreateWallet", 1u, V2_REGISTRY, NULL, "GET", NULL, NULL, 0, 0, 1u, 0,
                                    NULL, address, NULL, NULL),
           ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_envelope_verify_v2("{}", "0x", "CreateWallet", 1u, NULL, NULL, NULL, NULL, NULL, 0, 0, 1u, 0, NULL,
                                    address, NULL, NULL),
           ENACT_ERR_INVALID_ARGUMENT);
  memset(key, 0, sizeof key);
  CHECK_RC(enact_envelope_sign_v2("CreateWallet", key, 1u, 1u, V2_REGISTRY, NULL, NULL, NULL, NULL, NULL, 0, &json),
           ENACT_ERR_CRYPTO);
}
