// SPDX-License-Identifier: Apache-2.0
// Shared by every vector family: the reference libraries, the seeded PRNG, value generators, assertions.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

/** The tests/vectors directory. */
export const HERE = join(dirname(fileURLToPath(import.meta.url)), '..');

// Imported dynamically so that a missing node_modules gives a clear instruction.
export let TypedDataUtils, SignTypedDataVersion, CronExpressionParser, ethers, Hash, privateKeyToAccount;
try {
  ({ TypedDataUtils, SignTypedDataVersion } = await import('@metamask/eth-sig-util'));
  ({ CronExpressionParser } = await import('cron-parser'));
  ({ ethers } = await import('ethers'));
  Hash = (await import('ipfs-only-hash')).default;
  ({ privateKeyToAccount } = await import('viem/accounts'));
} catch (e) {
  console.error(`cannot load the reference libraries (${e.message.split('\n')[0]})\n` +
    'install them with: npm ci --prefix tests/vectors');
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness: sfc32 seeded through splitmix32. Each vector file has its own seed,
// so changing one generator never shifts the vectors of another.

function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Rng {
  constructor(seed) {
    const sm = splitmix32(seed);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    for (let i = 0; i < 16; i++) this.u32();
  }
  /** sfc32: one uniformly distributed 32-bit unsigned integer. */
  u32() {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t >>> 0;
  }
  /** Uniform integer in [0, n), n <= 2^32, by rejection (no modulo bias). */
  int(n) {
    if (n <= 0) throw new Error('Rng.int: empty range');
    const limit = Math.floor(0x100000000 / n) * n;
    for (;;) {
      const x = this.u32();
      if (x < limit) return x % n;
    }
  }
  /** Uniform integer in [lo, hi]. */
  range(lo, hi) { return lo + this.int(hi - lo + 1); }
  /** true with probability p (p in [0, 1], resolution 2^-32). */
  chance(p) { return this.u32() < p * 0x100000000; }
  pick(arr) { return arr[this.int(arr.length)]; }
  bytes(n) {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }
  hex(n) { return ethers.hexlify(this.bytes(n)); }
  /** Uniform BigInt in [0, 2^bits). */
  bits(bits) {
    let v = 0n;
    for (let got = 0; got < bits; got += 32) v = (v << 32n) | BigInt(this.u32());
    const extra = (Math.ceil(bits / 32) * 32) - bits;
    return v >> BigInt(extra);
  }
  /** Fisher-Yates shuffle, in place. */
  shuffle(arr) {
    for (let i = arr.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [arr[i], arr[j]] = [arr[j], arr[i]];
    }
    return arr;
  }
}

// ---------------------------------------------------------------------------------------------
// Shared value generators.

export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export function randomPrivateKey(rng) {
  for (;;) {
    const k = rng.hex(32);
    const v = BigInt(k);
    if (v > 0n && v < SECP256K1_N) return k;
  }
}

/** An unsigned N-bit value, biased towards the edges (0, 1, max, powers of two). */
export function randomUint(rng, bits) {
  const max = (1n << BigInt(bits)) - 1n;
  switch (rng.int(8)) {
    case 0: return rng.pick([0n, 1n, max, max - 1n]);
    case 1: return 1n << BigInt(rng.int(bits));
    case 2: return rng.bits(rng.range(1, Math.min(bits, 53)));
    default: return rng.bits(rng.range(1, bits));
  }
}

/** A signed N-bit value, biased towards the edges (min, max, -1, 0). */
export function randomInt(rng, bits) {
  const max = (1n << BigInt(bits - 1)) - 1n;
  const min = -(1n << BigInt(bits - 1));
  switch (rng.int(8)) {
    case 0: return rng.pick([0n, 1n, -1n, max, min, min + 1n]);
    case 1: return (rng.chance(0.5) ? -1n : 1n) * rng.bits(rng.range(1, Math.min(bits - 1, 53)));
    default: {
      const v = rng.bits(rng.range(1, bits - 1));
      return rng.chance(0.5) ? -v - (rng.chance(0.5) ? 1n : 0n) : v;
    }
  }
}

// Pieces of text chosen to stress UTF-8 handling: ASCII with JSON escapes, Latin-1, precomposed
// and combining accents, CJK, Hangul, right-to-left scripts, emoji (astral plane, ZWJ sequences,
// flags, skin tones), zero-width characters. Never a lone surrogate: the libraries do not agree
// on those (ethers throws, Buffer replaces with U+FFFD).
const TEXT_PIECES = [
  'a', 'b', 'Z', '0', '9', ' ', 'hello', 'Enact', '_', '-', '.', ',', '"', '\\', '/', '\n', '\t',
  '{', '}', '[', ']', '\'', '<', '>', '&', '%', '+', '=',
  'é', 'ñ', 'ß', 'ø', '©', '°', '€', '£',
  'e\u0301', 'a\u0308', 'n\u0303', 'o\u0302\u0323', '\u0915\u094d\u0937',
  '漢字', '中文', '日本語', 'テスト', 'ひらがな', '한국어', '𠮷',
  'عربي', 'עברית', 'Ελληνικά', 'Кириллица',
  '😀', '🚀', '👍🏽', '👩\u200d💻', '👨\u200d👩\u200d👧\u200d👦', '🇨🇭', '❤️', '\u200b', '\ufeff',
];

export function randomText(rng, maxPieces = 12) {
  const n = rng.int(maxPieces + 1);
  let s = '';
  for (let i = 0; i < n; i++) s += rng.pick(TEXT_PIECES);
  return s;
}

export function randomAddress(rng) { return ethers.getAddress(rng.hex(20)); }

const IDENT_HEAD = 'abcdefghijklmnopqrstuvwxyz';
const IDENT_TAIL = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';

export function randomIdent(rng, len) {
  let s = rng.pick(IDENT_HEAD);
  for (let i = 1; i < len; i++) s += rng.pick(IDENT_TAIL);
  return s;
}

const UINT_TYPES = Array.from({ length: 32 }, (_, i) => `uint${(i + 1) * 8}`);
const INT_TYPES = Array.from({ length: 32 }, (_, i) => `int${(i + 1) * 8}`);
const BYTESN_TYPES = Array.from({ length: 32 }, (_, i) => `bytes${i + 1}`);
export const ATOMIC_TYPES = [...UINT_TYPES, ...INT_TYPES, ...BYTESN_TYPES, 'address', 'bool', 'bytes', 'string'];

export function assertEq(actual, expected, what) {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(`${what}: libraries disagree\n  got:      ${stringify(actual)}\n  expected: ${stringify(expected)}`);
  }
}

export function assertNe(actual, other, what) {
  if (isDeepStrictEqual(actual, other)) throw new Error(`${what}: expected values to differ, both ${stringify(actual)}`);
}

function stringify(v) {
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
}
