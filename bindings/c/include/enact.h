// SPDX-License-Identifier: Apache-2.0
/* enact C API: a stable C99 interface to the enact SDK (libenact_c.so), for C programs and for
 * foreign-function bindings (the Python package uses it through ctypes). It covers Keccak-256,
 * EIP-712 typed data (digest, signing, recovery), the wallet-proof envelope (versions 1 and 2:
 * build, sign and the server's verification), Solidity ABI encoding of a function call, the CIDv0 of action
 * code, cron next-fire times, PKP wallet addresses, and a JSON-in/JSON-out client of the core
 * service (docs/protocol.md §2).
 *
 * Conventions shared by every function:
 * - Return value: ENACT_OK (0) on success, one of the negative ENACT_ERR_* codes below on failure.
 *   The codes are stable: a released value never changes meaning. On failure a message naming the
 *   field and the reason is available from enact_last_error() in the same thread.
 * - No exception, signal or abort crosses this interface; any unexpected failure inside the
 *   library is ENACT_ERR_INTERNAL.
 * - Strings are NUL-terminated UTF-8. A `char**` output receives a string allocated by the library,
 *   to be released with enact_free(); on failure it is set to NULL (except where a function says
 *   otherwise). A fixed-size `char out[N]` output is always NUL-terminated: the empty string on
 *   failure.
 * - Private and root keys are passed as 32 raw bytes. The library copies them into memory it
 *   wipes before returning; the caller keeps responsibility for its own copy.
 * - Functions are thread-safe, except that one enact_core_client must not be used by two threads
 *   at once.
 */
#ifndef ENACT_H
#define ENACT_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(ENACT_C_BUILDING)
#define ENACT_C_API __declspec(dllexport)
#else
#define ENACT_C_API __declspec(dllimport)
#endif
#elif defined(ENACT_C_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define ENACT_C_API __attribute__((visibility("default")))
#else
#define ENACT_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes ---------------------------------------------------------------------------- */

/** Success. */
#define ENACT_OK 0
/** A required pointer is NULL, or an argument is malformed: hex that does not decode, an address
 *  that is not 0x + 40 hex digits (or has a wrong EIP-55 checksum), an unknown primaryType or HTTP
 *  method, a base URL the client cannot use. */
#define ENACT_ERR_INVALID_ARGUMENT (-1)
/** Input text that does not parse or validate: a typed-data document, JSON arguments, an ABI
 *  function signature or argument values, a cron expression. */
#define ENACT_ERR_PARSE (-2)
/** A signature that is not 65 bytes of hex, has an invalid v, r or s (high s included, EIP-2), or
 *  from which no public key recovers. */
#define ENACT_ERR_SIGNATURE_INVALID (-3)
/** A private key that is not a valid secp256k1 scalar, or a key derivation that failed. */
#define ENACT_ERR_CRYPTO (-4)
/** No usable connection to the server: refused, broken or timed out. */
#define ENACT_ERR_NETWORK (-5)
/** The server answered with an error status; the call's out_json holds its error body
 *  {"error": {"code", "message", "details"?}} (docs/protocol.md §0) and enact_core_client_status() the
 *  status. */
#define ENACT_ERR_HTTP (-6)
/** The server's answer is not what docs/protocol.md promises (not JSON, wrong shape); out_json holds an
 *  error body with code "bad_response". */
#define ENACT_ERR_BAD_RESPONSE (-7)
/** The result lies outside what the function can represent (cron: no fire time up to year
 *  9999). */
#define ENACT_ERR_OUT_OF_RANGE (-8)
/** Memory allocation failed. */
#define ENACT_ERR_OUT_OF_MEMORY (-9)
/** An unexpected failure inside the library. */
#define ENACT_ERR_INTERNAL (-10)

/* Wallet-proof envelope verification: one code per rule of enact_envelope_verify_v2, rules numbered
 * as in the SDK's enact/eip712/envelope.hpp (the SDK's envelope_errc value n is
 * ENACT_ERR_ENVELOPE_BASE - n). */
#define ENACT_ERR_ENVELOPE_BASE (-20)
/** Rule 1: serialized typed data over 4096 bytes. */
#define ENACT_ERR_ENVELOPE_TOO_LARGE (-21)
/** Rules 2, 5 (chainId not an unsigned integer) and 9: not JSON, wrong shape, bad message. */
#define ENACT_ERR_ENVELOPE_MALFORMED (-22)
/** Rule 3: `types` differ from the canonical envelope types of version 1 and 2. */
#define ENACT_ERR_ENVELOPE_TYPES_NOT_CANONICAL (-23)
/** Rule 4: a valid envelope for another flow. */
#define ENACT_ERR_ENVELOPE_WRONG_PRIMARY_TYPE (-24)
/** Rule 5: domain keys, name or version differ. */
#define ENACT_ERR_ENVELOPE_DOMAIN_MISMATCH (-25)
/** Rule 7: domain.chainId is not the expected chain. */
#define ENACT_ERR_ENVELOPE_CHAIN_ID_MISMATCH (-26)
/** Rule 10: issuedAt outside now ± max_skew. */
#define ENACT_ERR_ENVELOPE_EXPIRED (-27)
/** Rule 13: the signature is not 0x + 130 hex, or no key recovers from it. */
#define ENACT_ERR_ENVELOPE_SIGNATURE_MALFORMED (-28)
/** Rule 14: the signer is not message.address, or not the expected signer. */
#define ENACT_ERR_ENVELOPE_SIGNER_MISMATCH (-29)
/** Rule 6: a version 1 envelope where only version 2 is accepted. */
#define ENACT_ERR_ENVELOPE_VERSION_REFUSED (-30)
/** Rule 8: domain.verifyingContract is not the expected registry (or none was given). */
#define ENACT_ERR_ENVELOPE_CONTRACT_MISMATCH (-31)
/** Rule 11: a version 2 ConvertAccount names another account. */
#define ENACT_ERR_ENVELOPE_ACCOUNT_MISMATCH (-32)
/** Rule 12: a version 2 BillingAuth was signed for another method, target or body. */
#define ENACT_ERR_ENVELOPE_REQUEST_MISMATCH (-33)
/** A version 2 nonce used before: the server's nonce store reports it, no function here returns it. */
#define ENACT_ERR_ENVELOPE_REPLAYED (-34)

/* ---- Sizes of fixed outputs (terminating NUL included) -------------------------------------- */

/** "0x" + 40 hex digits, EIP-55 checksummed. */
#define ENACT_ADDRESS_SIZE 43
/** "0x" + 130 hex digits: r ‖ s ‖ v with v = 27 or 28. */
#define ENACT_SIGNATURE_HEX_SIZE 133
/** A CIDv0: "Qm" + 44 base58btc characters. */
#define ENACT_CID_V0_SIZE 47

/* ---- Library -------------------------------------------------------------------------------- */

/** The library version, "MAJOR.MINOR.PATCH" (static storage). The shared library's SONAME carries
 *  the major version: a program built against one major version keeps working with any later
 *  minor version. */
ENACT_C_API const char* enact_version(void);

/** The message of the most recent failure in the calling thread, or "" when none failed yet. The
 *  pointer stays valid until the next failing call in this thread. Never NULL. */
ENACT_C_API const char* enact_last_error(void);

/** A short stable name for an error code ("invalid_argument", "parse", ..., "envelope_expired");
 *  "unknown" for a value that is no code (static storage, never NULL). */
ENACT_C_API const char* enact_error_name(int code);

/** Releases a string returned through a `char**` output. The memory is overwritten before it is
 *  released, since answers may carry key values. NULL is ignored. Only pass pointers this library
 *  returned. */
ENACT_C_API void enact_free(void* p);

/* ---- Hashing -------------------------------------------------------------------------------- */

/** Keccak-256 (Ethereum's, not SHA3-256) of `len` bytes at `data` into `out`. `data` may be NULL
 *  when `len` is 0. Errors: INVALID_ARGUMENT. */
ENACT_C_API int enact_keccak256(const uint8_t* data, size_t len, uint8_t out[32]);

/* ---- EIP-712 typed data --------------------------------------------------------------------- */

/** The EIP-712 signing digest of a typed-data document as eth_signTypedData_v4 takes it
 *  ({"types", "primaryType", "domain", "message"}): crypto::keccak256(0x19 0x01 ‖ domainSeparator ‖
 *  hashStruct(message)). Errors: INVALID_ARGUMENT, PARSE (the message names the offending path,
 *  e.g. "message.to.wallet: ..."). */
ENACT_C_API int enact_typed_data_hash(const char* typed_data_json, uint8_t out[32]);

/** Signs the document's digest with a 32-byte private key (RFC 6979, low s); writes "0x" + r ‖ s ‖
 *  v hex with v = 27 or 28, exactly what eth_signTypedData_v4 returns. Errors: INVALID_ARGUMENT,
 *  PARSE, CRYPTO (key is zero or not below the group order). */
ENACT_C_API int enact_typed_data_sign(const char* typed_data_json, const uint8_t private_key[32],
                                      char out_signature[ENACT_SIGNATURE_HEX_SIZE]);

/** The EIP-55 address whose key made `signature_hex` ("0x" + 130 hex, v in 0/1/27/28) over the
 *  document's digest. Errors: INVALID_ARGUMENT, PARSE, SIGNATURE_INVALID. */
ENACT_C_API int enact_typed_data_recover(const char* typed_data_json, const char* signature_hex,
                                         char out_address[ENACT_ADDRESS_SIZE]);

/* ---- Accounts and EIP-191 personal messages ------------------------------------------------- */

/** The EIP-55 address of a 32-byte secp256k1 private key: the last 20 bytes of keccak256 of its
 *  public key. Errors: INVALID_ARGUMENT, CRYPTO (key is zero or not below the group order). */
ENACT_C_API int enact_private_key_address(const uint8_t private_key[32], char out_address[ENACT_ADDRESS_SIZE]);

/** Signs the EIP-191 personal message of `len` bytes at `message` (the digest
 *  keccak256("\x19Ethereum Signed Message:\n" ‖ decimal length ‖ message), RFC 6979, low s);
 *  writes "0x" + r ‖ s ‖ v hex with v = 27 or 28, what personal_sign and ethers' signMessage
 *  return. `message` may be NULL when `len` is 0. Errors: INVALID_ARGUMENT, CRYPTO. */
ENACT_C_API int enact_message_sign(const uint8_t* message, size_t len, const uint8_t private_key[32],
                                   char out_signature[ENACT_SIGNATURE_HEX_SIZE]);

/** The EIP-55 address whose key made `signature_hex` ("0x" + 130 hex, v in 0/1/27/28) over the
 *  EIP-191 personal message at `message`. Errors: INVALID_ARGUMENT, SIGNATURE_INVALID. */
ENACT_C_API int enact_message_recover(const uint8_t* message, size_t len, const char* signature_hex,
                                      char out_address[ENACT_ADDRESS_SIZE]);

/* ---- Wallet-proof envelope (docs/protocol.md §2 ChainSecured and Billing) ----------------------------- */
/* Two versions (docs/protocol.md §2 "Envelope version 2"). Version 2 names the deployment (its
 * chain and registry, chain_id and contract_address of GET /core/v1/get_node_chain_config) and
 * what the signature authorizes: CreateWallet, AddUsageApiKey and ConvertAccount carry a nonce
 * the server accepts once (sign a new envelope for every request), ConvertAccount the hash of the
 * account converted (keccak256 of its account key's text), BillingAuth one request (its method,
 * its target exactly as sent with the query, keccak256 of its body). The server refuses version 1
 * for ConvertAccount and BillingAuth unless its operator opts in. */

/** The canonical version 1 envelope typed data for `address` as compact JSON, ready for a
 *  wallet's eth_signTypedData_v4. `primary_type` is "CreateWallet", "ConvertAccount",
 *  "AddUsageApiKey" or "BillingAuth"; `issued_at` in unix seconds. Errors: INVALID_ARGUMENT
 *  (unknown primary type, bad address). */
ENACT_C_API int enact_envelope_build(const char* primary_type, const char* address, uint64_t issued_at,
                                     uint64_t chain_id, char** out_json);

/** Builds the version 1 envelope for the key's own address and signs it; writes
 *  {"typed_data": {...}, "signature": "0x..."} as compact JSON (the body part the ChainSecured
 *  endpoints take). Errors: INVALID_ARGUMENT, CRYPTO. */
ENACT_C_API int enact_envelope_sign(const char* primary_type, const uint8_t private_key[32], uint64_t issued_at,
                                    uint64_t chain_id, char** out_json);

/** The canonical version 2 envelope typed data for `address` as compact JSON, for the deployment
 *  (`chain_id`, `verifying_contract`: the registry's address). What the kind carries, and only
 *  that (the others must be NULL): `nonce` (32 bytes; NULL: a fresh random one) for
 *  CreateWallet, AddUsageApiKey and ConvertAccount; `account` (32 bytes, required) for
 *  ConvertAccount; `method` ("GET", "POST"), `path` (the request target as sent: path and query)
 *  and the `body_len` bytes at `body` (NULL when 0; their keccak256 is signed) for BillingAuth.
 *  Errors: INVALID_ARGUMENT (unknown primary type, bad address, a member missing or given to a
 *  kind that does not carry it), CRYPTO (no randomness). */
ENACT_C_API int enact_envelope_build_v2(const char* primary_type, const char* address, uint64_t issued_at,
                                        uint64_t chain_id, const char* verifying_contract, const uint8_t nonce[32],
                                        const uint8_t account[32], const char* method, const char* path,
                                        const uint8_t* body, size_t body_len, char** out_json);

/** Builds the version 2 envelope of enact_envelope_build_v2 for the key's own address and signs
 *  it; writes {"typed_data": {...}, "signature": "0x..."} as compact JSON. Errors: those of
 *  enact_envelope_build_v2, CRYPTO (bad key). */
ENACT_C_API int enact_envelope_sign_v2(const char* primary_type, const uint8_t private_key[32], uint64_t issued_at,
                                       uint64_t chain_id, const char* verifying_contract, const uint8_t nonce[32],
                                       const uint8_t account[32], const char* method, const char* path,
                                       const uint8_t* body, size_t body_len, char** out_json);

/** The server's check of a signed envelope, rule by rule in the order of docs/protocol.md §2; stops at the
 *  first failure and returns that rule's ENACT_ERR_ENVELOPE_* code. `now` is unix seconds (0: the
 *  system clock), `max_skew` the accepted distance of issuedAt from now in seconds (0: the default,
 *  300). `expected_signer` may be NULL; when set, the signer must also equal it. On success writes
 *  the signer's EIP-55 address. This checks version 1 only: a version 2 envelope is
 *  ENACT_ERR_ENVELOPE_CONTRACT_MISMATCH (use enact_envelope_verify_v2). Errors: INVALID_ARGUMENT
 *  (NULL input, unknown expected primary type, bad expected_signer), ENACT_ERR_ENVELOPE_*. */
ENACT_C_API int enact_envelope_verify(const char* typed_data_json, const char* signature_hex,
                                      const char* expected_primary_type, uint64_t chain_id, uint64_t now,
                                      uint64_t max_skew, const char* expected_signer,
                                      char out_address[ENACT_ADDRESS_SIZE]);

/** The server's check of a version 2 (or, with `accept_v1` non-zero, version 1) envelope for the
 *  deployment (`chain_id`, `verifying_contract`). `account` (32 bytes; NULL: none) is the account
 *  a ConvertAccount must name; `method` and `path` (both or neither; NULL: none) and the
 *  `body_len` bytes at `body` the request a BillingAuth must authorize; an envelope whose kind
 *  binds one, checked without it, is ACCOUNT_MISMATCH or REQUEST_MISMATCH. `now`, `max_skew` and
 *  `expected_signer` as for enact_envelope_verify. On success writes the signer's address, and
 *  when not NULL the version (1 or 2) to `out_version` and the nonce to `out_nonce` (32 zero
 *  bytes when the envelope carries none). The nonce's single use is the server's to check.
 *  Errors: INVALID_ARGUMENT, ENACT_ERR_ENVELOPE_*. */
ENACT_C_API int enact_envelope_verify_v2(const char* typed_data_json, const char* signature_hex,
                                         const char* expected_primary_type, uint64_t chain_id,
                                         const char* verifying_contract, const uint8_t account[32], const char* method,
                                         const char* path, const uint8_t* body, size_t body_len, int accept_v1,
                                         uint64_t now, uint64_t max_skew, const char* expected_signer,
                                         char out_address[ENACT_ADDRESS_SIZE], int* out_version, uint8_t out_nonce[32]);

/* ---- Solidity ABI --------------------------------------------------------------------------- */

/** Call data for a function: selector ‖ ABI encoding of the arguments, as "0x" + lowercase hex.
 *  `signature` is "transfer(address,uint256)" or a human-readable form with parameter names;
 *  `args_json` is a JSON array of the values in ethers' style (integers as decimal or 0x strings or
 *  exact JSON numbers, addresses and bytes as 0x hex, arrays and tuples as JSON arrays). Errors:
 *  INVALID_ARGUMENT, PARSE. */
ENACT_C_API int enact_abi_encode_call(const char* signature, const char* args_json, char** out_hex);

/* ---- IPFS ----------------------------------------------------------------------------------- */

/** The CIDv0 `ipfs add` gives these bytes with default settings (the action CID of docs/protocol.md §1).
 *  `data` may be NULL when `len` is 0. Errors: INVALID_ARGUMENT. */
ENACT_C_API int enact_cid_v0(const uint8_t* data, size_t len, char out_cid[ENACT_CID_V0_SIZE]);

/* ---- Cron ----------------------------------------------------------------------------------- */

/** The first time strictly after `after` (unix seconds, UTC) at which a 5- or 6-field cron
 *  expression (or macro such as "@hourly") fires, as cron-parser computes it with tz UTC.
 *  Errors: INVALID_ARGUMENT, PARSE, OUT_OF_RANGE (no fire time within years 1 to 9999). On failure
 *  *out_next is 0. */
ENACT_C_API int enact_cron_next(const char* expression, int64_t after, int64_t* out_next);

/* ---- PKP ------------------------------------------------------------------------------------ */

/** The wallet address (pkp_id) of the PKP of the owning account `account_hash` at this 32-byte
 *  derivation path under a 32-byte root key (docs/protocol.md §1: HKDF-SHA256 signing key with info
 *  "sign" ‖ account_hash ‖ path, then its address; the same path under another account is
 *  another key). Errors: INVALID_ARGUMENT, CRYPTO. It replaces enact_pkp_wallet_address, whose
 *  path-only derivation is gone: the name changed with the arguments, so a program built against
 *  the old declaration fails to load instead of passing its output buffer as the path. */
ENACT_C_API int enact_pkp_account_wallet_address(const uint8_t root_key[32], const uint8_t account_hash[32],
                                                 const uint8_t derivation_path[32],
                                                 char out_address[ENACT_ADDRESS_SIZE]);

/** The derivation path of an API-mode PKP: crypto::keccak256(api_key_hash ‖ uint256(index)). Errors:
 *  INVALID_ARGUMENT. */
ENACT_C_API int enact_pkp_api_mode_path(const uint8_t api_key_hash[32], uint64_t index, uint8_t out_path[32]);

/* ---- Core service client -------------------------------------------------------------------- */

/** A client of one core service (opaque). Not for concurrent use: one per thread. */
typedef struct enact_core_client enact_core_client;

/** A client of the service at `base_url` ("http(s)://host[:port]" optionally followed by a path
 *  prefix), sending `api_key` (the key's text as issued; NULL or "" for none) as X-Api-Key.
 *  Defaults: connect timeout 5 s, read timeout 30 s, 2 retries of a GET (POSTs are sent once).
 *  Returns NULL on failure (a base URL with user-info, a query or a bad port; out of memory), with
 *  the reason in enact_last_error(). */
ENACT_C_API enact_core_client* enact_core_client_new(const char* base_url, const char* api_key);

/** As enact_core_client_new, with a CA bundle for https (`ca_file`: PEM path, NULL or "" for the
 *  system store), timeouts in milliseconds (0: the default) and the number of further attempts
 *  of a failed GET. */
ENACT_C_API enact_core_client* enact_core_client_new_ex(const char* base_url, const char* api_key, const char* ca_file,
                                                        uint32_t connect_timeout_ms, uint32_t read_timeout_ms,
                                                        uint32_t max_retries);

/** Replaces the API key sent with later calls (NULL or "": none), e.g. with the key new_account
 *  returned. Errors: INVALID_ARGUMENT. */
ENACT_C_API int enact_core_client_set_api_key(enact_core_client* client, const char* api_key);

/** Sends one request: `method` "GET" or "POST", `path` below the base URL with its query
 *  ("/core/v1/get_node_chain_config", "/core/v1/list_groups?page_number=0&page_size=10"),
 *  `json_body` the POST body (NULL for GET; NULL for a POST means "{}"). On success *out_json is
 *  the answer's JSON. On ENACT_ERR_HTTP and ENACT_ERR_BAD_RESPONSE *out_json is the error body
 *  {"error": {"code", "message", "details"?}}, with any credential the request carried scrubbed;
 *  on other failures it is NULL. Errors: INVALID_ARGUMENT, PARSE (json_body is not JSON), NETWORK,
 *  HTTP, BAD_RESPONSE. */
ENACT_C_API int enact_core_client_call(enact_core_client* client, const char* method, const char* path,
                                       const char* json_body, char** out_json);

/** As enact_core_client_call, sent without the API key and with an X-Wallet-Auth header instead:
 *  a version 2 BillingAuth of the 32-byte `wallet_key` (the account's admin wallet) signed for
 *  exactly this request as written (method, the base URL's path prefix and `path` with its query,
 *  the body) and for the server's deployment (asked once per client with
 *  GET /core/v1/get_node_chain_config). For the billing endpoints (docs/protocol.md §2). Errors:
 *  those of enact_core_client_call, CRYPTO (bad key). */
ENACT_C_API int enact_core_client_call_wallet(enact_core_client* client, const char* method, const char* path,
                                              const char* json_body, const uint8_t wallet_key[32], char** out_json);

/** The HTTP status of the last call's answer; 0 before any call and when there was no answer. */
ENACT_C_API int enact_core_client_status(const enact_core_client* client);

/** The X-Request-Id of the last call's answer ("" when none), valid until the next call on this
 *  client. Never NULL. */
ENACT_C_API const char* enact_core_client_request_id(const enact_core_client* client);

/** Destroys the client and wipes its API key. NULL is ignored. */
ENACT_C_API void enact_core_client_free(enact_core_client* client);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ENACT_H */
