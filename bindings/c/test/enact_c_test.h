// SPDX-License-Identifier: Apache-2.0
/* What the C API tests share (enact_c_test.c runs them, from enact_c_*_test.c): the check
 * counters and macros, the vector-file scanner and hex helpers (defined in enact_c_test.c), and
 * the test of each part of the API. */
#ifndef ENACT_C_TEST_H
#define ENACT_C_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enact.h"

/* Checks made and checks failed, printed by main. */
extern int checks;
extern int failures;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
    }                                                                          \
  } while (0)

/* A call's result code is `want`, and a failure left a message. */
#define CHECK_RC(call, want)                                                                                         \
  do {                                                                                                               \
    int rc_ = (call);                                                                                                \
    CHECK(rc_ == (want), "%s returned %d (%s), expected %d (%s); last error: %s", #call, rc_, enact_error_name(rc_), \
          (int)(want), enact_error_name(want), enact_last_error());                                                  \
    if ((want) != ENACT_OK && rc_ == (want))                                                                         \
      CHECK(enact_last_error()[0] != '\0', "%s: no message", #call);                                                 \
  } while (0)

/* ---- Helpers: the vector files and hex (enact_c_test.c) ------------------------------------ */

/* The whole file at `path`, NUL-terminated (its size in *size unless NULL); exits 2 when unreadable. */
char* read_file(const char* path, size_t* size);
/* The file `name` of tests/vectors/ (ENACT_VECTORS_DIR), read as by read_file. */
char* vector_file(const char* name);
/* Iterates over the lines of a buffer: returns the next line (NUL-terminated in place) or NULL. */
char* next_line(char** cursor);
/* The value text of a `"key": value` line (trailing comma removed), or NULL for another key. */
char* field(char* line, const char* key);
/* A JSON string value without escapes ("0x…", names): the text between the quotes, in place. */
char* unquote(char* value);
/* Decodes "0x…" into out (at most cap bytes); returns the byte count, or -1. */
long from_hex(const char* hex, uint8_t* out, size_t cap);
/* "0x" and the lowercase hex of data[0..n) into out (3 + 2n bytes). */
void to_hex(const uint8_t* data, size_t n, char* out);
/* 1 when `want` is "0x" and the lowercase hex of data[0..n) (n at most 64), else 0. */
int same_hex(const uint8_t* data, size_t n, const char* want);
/* Unix seconds of "YYYY-MM-DDTHH:MM:SSZ" (proleptic Gregorian, UTC), or -1. */
long long parse_utc(const char* s);
/* In `json`, the text of the object that follows `"key":`, in a new buffer; NULL when absent. */
char* object_after(const char* json, const char* key);
/* `text` with the first occurrence of `from` replaced by `to` (new buffer). */
char* replaced(const char* text, const char* from, const char* to);

/* ---- The tests, one per part of the API ------------------------------------------------------ */

void test_library(void);
void test_keccak(void);
void test_typed_data(void);
void test_account(void);
void test_envelope(void);
void test_envelope_v2(void);
void test_abi(void);
void test_cid(void);
void test_cron(void);
void test_pkp(void);
void test_client(void);

#endif /* ENACT_C_TEST_H */
