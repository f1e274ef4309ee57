// SPDX-License-Identifier: Apache-2.0
/* The C API's ABI encoding, CIDs, cron schedules and PKP derivation. */
#include "enact_c_test.h"

/* ---- ABI ----------------------------------------------------------------------------------- */

void test_abi(void) {
  char* file = vector_file("abi.json");
  char *cursor = file, *line, *name = NULL, *signature = NULL, *values = NULL;
  char* out = NULL;
  int in_calls = 0, vectors = 0;

  /* abi.json "calls": ethers Interface.encodeFunctionData of each signature and values. */
  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if (strstr(line, "\"calls\": [") != NULL) {
      in_calls = 1;
    } else if (!in_calls) {
      continue;
    } else if ((value = field(line, "name")) != NULL) {
      name = unquote(value);
      signature = values = NULL;
    } else if ((value = field(line, "signature")) != NULL) {
      signature = unquote(value);
    } else if ((value = field(line, "values")) != NULL) {
      values = value;
    } else if ((value = field(line, "calldata")) != NULL) {
      const char* want = unquote(value);
      CHECK(name && signature && values && want, "abi.json: fields");
      if (!(name && signature && values && want))
        continue;
      CHECK_RC(enact_abi_encode_call(signature, values, &out), ENACT_OK);
      CHECK(out != NULL && strcmp(out, want) == 0, "%s: %s", name, out ? out : "(null)");
      enact_free(out);
      out = NULL;
      ++vectors;
    }
  }
  CHECK(vectors >= 40, "abi.json: %d calls read", vectors);
  free(file);

  /* Human-readable signature with names; values as JSON numbers and strings. Call data from
   * ethers Interface.encodeFunctionData("transfer", ["0x…dEaD", 1000000000000000000n]) (the
   * abi.json vector fixed-0-transfer). */
  CHECK_RC(enact_abi_encode_call("transfer(address to, uint256 amount)",
                                 "[\"0x000000000000000000000000000000000000dEaD\","
                                 "\"0xde0b6b3a7640000\"]",
                                 &out),
           ENACT_OK);
  CHECK(out != NULL && strcmp(out,
                              "0xa9059cbb000000000000000000000000000000000000000000000000000000000000"
                              "dead0000000000000000000000000000000000000000000000000de0b6b3a7640000") == 0,
        "transfer: %s", out ? out : "(null)");
  enact_free(out);

  out = (char*)"untouched";
  CHECK_RC(enact_abi_encode_call("transfer(address,uint256", "[]", &out), ENACT_ERR_PARSE);
  CHECK(out == NULL, "out_hex cleared on failure");
  CHECK_RC(enact_abi_encode_call("transfer(address,uint256)", "[1,", &out), ENACT_ERR_PARSE);
  CHECK(strstr(enact_last_error(), "args_json") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_abi_encode_call("transfer(address,uint256)", "{}", &out), ENACT_ERR_PARSE);
  CHECK_RC(enact_abi_encode_call("transfer(address,uint256)", "[\"0x000000000000000000000000000000000000dEaD\"]", &out),
           ENACT_ERR_PARSE);
  CHECK(strstr(enact_last_error(), "takes 2 arguments, got 1") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_abi_encode_call("f(uint8)", "[256]", &out), ENACT_ERR_PARSE);
  CHECK(strstr(enact_last_error(), "arg 0") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_abi_encode_call("f(bool)", "[\"yes\"]", &out), ENACT_ERR_PARSE);
  CHECK_RC(enact_abi_encode_call(NULL, "[]", &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_abi_encode_call("f()", NULL, &out), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_abi_encode_call("f()", "[]", NULL), ENACT_ERR_INVALID_ARGUMENT);
}

/* ---- CID ----------------------------------------------------------------------------------- */

void test_cid(void) {
  char* file = vector_file("cid.json");
  char *cursor = file, *line, *name = NULL;
  long long size = -1;
  int pattern = 0, vectors = 0;
  char cid[ENACT_CID_V0_SIZE];

  /* cid.json: ipfs-only-hash of pattern content (byte i = (i * 31 + 7) & 0xff), sizes 0 to
   * 45613057 bytes (one chunk, chunk boundaries, a second tree level). */
  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if ((value = field(line, "name")) != NULL) {
      name = unquote(value);
      size = -1;
      pattern = 0;
    } else if ((value = field(line, "size")) != NULL) {
      size = atoll(value);
    } else if ((value = field(line, "content")) != NULL) {
      pattern = strcmp(value, "\"pattern\"") == 0;
    } else if ((value = field(line, "cid_v0")) != NULL && pattern && size >= 0) {
      uint8_t* data = (uint8_t*)malloc((size_t)size + 1);
      long long i;
      for (i = 0; i < size; ++i)
        data[i] = (uint8_t)((i * 31 + 7) & 0xff);
      CHECK_RC(enact_cid_v0(size ? data : NULL, (size_t)size, cid), ENACT_OK);
      CHECK(strcmp(cid, unquote(value)) == 0, "%s: %s", name, cid);
      free(data);
      ++vectors;
    }
  }
  CHECK(vectors >= 10, "cid.json: %d pattern vectors read", vectors);
  free(file);

  /* cid.json hello-world: "hello world\n". */
  CHECK_RC(enact_cid_v0((const uint8_t*)"hello world\n", 12, cid), ENACT_OK);
  CHECK(strcmp(cid, "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o") == 0, "%s", cid);

  strcpy(cid, "junk");
  CHECK_RC(enact_cid_v0(NULL, 1, cid), ENACT_ERR_INVALID_ARGUMENT);
  CHECK(cid[0] == '\0', "cid cleared on failure");
  CHECK_RC(enact_cid_v0((const uint8_t*)"x", 1, NULL), ENACT_ERR_INVALID_ARGUMENT);
}

/* ---- Cron ---------------------------------------------------------------------------------- */

void test_cron(void) {
  char* file = vector_file("cron.json");
  char *cursor = file, *line, *expression = NULL;
  long long start = -1;
  int vectors = 0;
  int64_t next = 0;

  /* cron.json: cron-parser 5 CronExpressionParser.parse(expression, {currentDate: start,
   * tz: "UTC"}), the next five fire times; each is the next after the one before. */
  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if ((value = field(line, "expression")) != NULL) {
      expression = unquote(value);
    } else if ((value = field(line, "start")) != NULL) {
      start = parse_utc(unquote(value));
    } else if ((value = field(line, "next")) != NULL && expression != NULL && start >= 0) {
      int64_t after = (int64_t)start;
      char* item = value;
      int k = 0;
      while ((item = strchr(item, '"')) != NULL) {
        long long want = parse_utc(item + 1);
        CHECK(want > 0, "cron.json: bad time near %s", item);
        CHECK_RC(enact_cron_next(expression, after, &next), ENACT_OK);
        CHECK(next == want, "'%s' after %lld: %lld, expected %lld", expression, (long long)after, (long long)next,
              want);
        after = (int64_t)want;
        item = strchr(item + 1, '"') + 1;
        ++k;
      }
      CHECK(k == 5, "'%s': %d times read", expression, k);
      expression = NULL;
      ++vectors;
    }
  }
  CHECK(vectors >= 200, "cron.json: %d vectors read", vectors);
  free(file);

  next = 7;
  CHECK_RC(enact_cron_next("61 * * * *", 0, &next), ENACT_ERR_PARSE);
  CHECK(next == 0, "out_next cleared on failure");
  CHECK(strstr(enact_last_error(), "minute") != NULL, "%s", enact_last_error());
  CHECK_RC(enact_cron_next("* * *", 0, &next), ENACT_ERR_PARSE);
  /* 9999-12-31T23:59:59Z: no later fire time in range. */
  CHECK_RC(enact_cron_next("* * * * *", 253402300799LL, &next), ENACT_ERR_OUT_OF_RANGE);
  CHECK_RC(enact_cron_next(NULL, 0, &next), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_cron_next("* * * * *", 0, NULL), ENACT_ERR_INVALID_ARGUMENT);
}

/* ---- PKP ----------------------------------------------------------------------------------- */

void test_pkp(void) {
  char* file = vector_file("pkp.json");
  char *cursor = file, *line, *name = NULL, *root = NULL, *key_hash = NULL, *index = NULL, *path = NULL,
       *account = NULL;
  int vectors = 0, api_paths = 0;
  uint8_t root_key[32], path_bytes[32], hash[32], out_path[32], account_bytes[32];
  char address[ENACT_ADDRESS_SIZE];

  /* pkp.json: signing key from node:crypto hkdfSync, address from ethers computeAddress; API-mode
   * paths keccak256(AbiCoder.encode(["uint256","uint256"], [apiKeyHash, index])). */
  while ((line = next_line(&cursor)) != NULL) {
    char* value;
    if ((value = field(line, "name")) != NULL) {
      name = unquote(value);
      root = key_hash = index = path = account = NULL;
    } else if ((value = field(line, "root_key")) != NULL) {
      root = unquote(value);
    } else if ((value = field(line, "api_key_hash")) != NULL) {
      key_hash = unquote(value);
    } else if ((value = field(line, "index")) != NULL) {
      index = unquote(value);
    } else if ((value = field(line, "account_hash")) != NULL) {
      account = unquote(value);
    } else if ((value = field(line, "derivation_path")) != NULL) {
      path = unquote(value);
    } else if ((value = field(line, "address")) != NULL && name && root && path && account) {
      CHECK(from_hex(root, root_key, 32) == 32 && from_hex(path, path_bytes, 32) == 32 &&
                from_hex(account, account_bytes, 32) == 32,
            "%s: hex", name);
      CHECK_RC(enact_pkp_account_wallet_address(root_key, account_bytes, path_bytes, address), ENACT_OK);
      CHECK(strcmp(address, unquote(value)) == 0, "%s: %s", name, address);
      if (key_hash != NULL && index != NULL) {
        CHECK(from_hex(key_hash, hash, 32) == 32, "%s: api_key_hash", name);
        CHECK_RC(enact_pkp_api_mode_path(hash, (uint64_t)strtoull(index, NULL, 10), out_path), ENACT_OK);
        CHECK(same_hex(out_path, 32, path), "%s: api-mode path", name);
        ++api_paths;
      }
      ++vectors;
      name = NULL;
    }
  }
  CHECK(vectors >= 30 && api_paths >= 10, "pkp.json: %d vectors, %d API-mode paths", vectors, api_paths);
  free(file);

  strcpy(address, "junk");
  CHECK_RC(enact_pkp_account_wallet_address(NULL, account_bytes, path_bytes, address), ENACT_ERR_INVALID_ARGUMENT);
  CHECK(address[0] == '\0', "address cleared on failure");
  CHECK_RC(enact_pkp_account_wallet_address(root_key, NULL, path_bytes, address), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_pkp_account_wallet_address(root_key, account_bytes, NULL, address), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_pkp_account_wallet_address(root_key, account_bytes, path_bytes, NULL), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_pkp_api_mode_path(NULL, 0, out_path), ENACT_ERR_INVALID_ARGUMENT);
  CHECK_RC(enact_pkp_api_mode_path(hash, 0, NULL), ENACT_ERR_INVALID_ARGUMENT);
}
