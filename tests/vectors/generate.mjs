#!/usr/bin/env node
// Interop vector generator: computes JSON test vectors with the Ethereum/IPFS ecosystem's own
// libraries (ethers, viem, @metamask/eth-sig-util, ipfs-only-hash, cron-parser) for the C++ unit
// tests to read. Every input comes from a seeded PRNG, so the output is a pure function of this
// script and the package versions pinned in package-lock.json.
//
//   node tests/vectors/generate.mjs          write the *.json vector files beside this script
//   node tests/vectors/generate.mjs --check  regenerate in memory; exit 1 if a committed file differs
//
// The field meanings and the rules adopted to keep the libraries in agreement are in README.md.

import { hkdfSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));

// Imported dynamically so that a missing node_modules gives a clear instruction.
let TypedDataUtils, SignTypedDataVersion, CronExpressionParser, ethers, Hash, privateKeyToAccount;
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
const GENERATOR = 'tests/vectors/generate.mjs';

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

class Rng {
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

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

function randomPrivateKey(rng) {
  for (;;) {
    const k = rng.hex(32);
    const v = BigInt(k);
    if (v > 0n && v < SECP256K1_N) return k;
  }
}

/** An unsigned N-bit value, biased towards the edges (0, 1, max, powers of two). */
function randomUint(rng, bits) {
  const max = (1n << BigInt(bits)) - 1n;
  switch (rng.int(8)) {
    case 0: return rng.pick([0n, 1n, max, max - 1n]);
    case 1: return 1n << BigInt(rng.int(bits));
    case 2: return rng.bits(rng.range(1, Math.min(bits, 53)));
    default: return rng.bits(rng.range(1, bits));
  }
}

/** A signed N-bit value, biased towards the edges (min, max, -1, 0). */
function randomInt(rng, bits) {
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

function randomText(rng, maxPieces = 12) {
  const n = rng.int(maxPieces + 1);
  let s = '';
  for (let i = 0; i < n; i++) s += rng.pick(TEXT_PIECES);
  return s;
}

function randomAddress(rng) { return ethers.getAddress(rng.hex(20)); }

const IDENT_HEAD = 'abcdefghijklmnopqrstuvwxyz';
const IDENT_TAIL = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';

function randomIdent(rng, len) {
  let s = rng.pick(IDENT_HEAD);
  for (let i = 1; i < len; i++) s += rng.pick(IDENT_TAIL);
  return s;
}

const UINT_TYPES = Array.from({ length: 32 }, (_, i) => `uint${(i + 1) * 8}`);
const INT_TYPES = Array.from({ length: 32 }, (_, i) => `int${(i + 1) * 8}`);
const BYTESN_TYPES = Array.from({ length: 32 }, (_, i) => `bytes${i + 1}`);
const ATOMIC_TYPES = [...UINT_TYPES, ...INT_TYPES, ...BYTESN_TYPES, 'address', 'bool', 'bytes', 'string'];

function libraryVersions() {
  const version = (name) =>
    JSON.parse(readFileSync(join(HERE, 'node_modules', name, 'package.json'), 'utf8')).version;
  return {
    '@metamask/eth-sig-util': version('@metamask/eth-sig-util'),
    'cron-parser': version('cron-parser'),
    ethers: version('ethers'),
    'ipfs-only-hash': version('ipfs-only-hash'),
    viem: version('viem'),
  };
}

function assertEq(actual, expected, what) {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(`${what}: libraries disagree\n  got:      ${stringify(actual)}\n  expected: ${stringify(expected)}`);
  }
}

function assertNe(actual, other, what) {
  if (isDeepStrictEqual(actual, other)) throw new Error(`${what}: expected values to differ, both ${stringify(actual)}`);
}

function stringify(v) {
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

// ---------------------------------------------------------------------------------------------
// 1. EIP-712 typed data.

const DOMAIN_FIELDS = [
  ['name', 'string'], ['version', 'string'], ['chainId', 'uint256'],
  ['verifyingContract', 'address'], ['salt', 'bytes32'],
];

/**
 * A JSON number where it is exact (|v| <= 2^53 - 1), otherwise a decimal string; non-negative
 * values are sometimes a 0x hex string. Negative values are never hex: eth-sig-util and viem
 * reject "-0x…" (BigInt() does not parse it), ethers accepts it.
 */
function jsonInteger(rng, v) {
  const safe = v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER);
  const r = rng.int(10);
  if (safe && r < 5) return Number(v);
  if (v >= 0n && r < 8) return `0x${v.toString(16)}`;
  return v.toString(10);
}

function typedAtomicValue(rng, type) {
  if (type.startsWith('uint')) return jsonInteger(rng, randomUint(rng, Number(type.slice(4))));
  if (type.startsWith('int')) return jsonInteger(rng, randomInt(rng, Number(type.slice(3))));
  if (type === 'address') {
    const a = randomAddress(rng);
    return rng.chance(0.5) ? a : a.toLowerCase();
  }
  if (type === 'bool') return rng.chance(0.5);
  if (type === 'string') return rng.chance(0.1) ? '' : randomText(rng);
  if (type === 'bytes') return rng.hex(rng.chance(0.15) ? 0 : rng.range(1, rng.chance(0.2) ? 100 : 40));
  if (type.startsWith('bytes')) return rng.hex(Number(type.slice(5)));
  throw new Error(`unknown atomic type ${type}`);
}

/** Random struct-type graph: level-1 primary type, referencing types of deeper levels only (no cycles). */
function randomTypedDataTypes(rng, usedNames) {
  const types = {};
  const levels = [[], [], [], []]; // names by depth 1..3
  const freshName = () => {
    for (;;) {
      const n = rng.pick(['Mail', 'Person', 'Order', 'Item', 'Permit', 'Grant', 'Asset', 'Entry', 'Node', 'Group', 'Scope', 'Key']) +
        (rng.chance(0.5) ? randomIdent(rng, rng.range(1, 4)).replace(/^./, (c) => c.toUpperCase()) : String(rng.int(100)));
      if (!usedNames.has(n)) {
        usedNames.add(n);
        return n;
      }
    }
  };
  const primary = freshName();
  const makeStruct = (name, depth) => {
    levels[depth].push(name);
    const fields = [];
    const fieldNames = new Set();
    const nFields = rng.chance(0.04) ? 0 : rng.range(1, depth === 1 ? 7 : 5);
    for (let i = 0; i < nFields; i++) {
      let fname;
      do fname = randomIdent(rng, rng.range(1, 10)); while (fieldNames.has(fname));
      fieldNames.add(fname);
      let base;
      if (depth < 3 && rng.chance(0.3)) {
        // A struct reference: reuse a deeper type sometimes, so one type is reached by several paths.
        const deeper = levels.slice(depth + 1).flat();
        if (deeper.length && rng.chance(0.35)) base = rng.pick(deeper);
        else {
          base = freshName();
          makeStruct(base, depth + 1);
        }
      } else {
        base = rng.pick(ATOMIC_TYPES);
      }
      let t = base;
      const dims = rng.chance(0.3) ? (rng.chance(0.25) ? 2 : 1) : 0;
      for (let d = 0; d < dims; d++) t += rng.chance(0.5) ? '[]' : `[${rng.range(1, 3)}]`;
      fields.push({ name: fname, type: t });
    }
    types[name] = fields;
  };
  makeStruct(primary, 1);
  return { types, primary };
}

function typedValue(rng, types, type) {
  const m = type.match(/^(.*)\[(\d*)\]$/);
  if (m) {
    const len = m[2] === '' ? (rng.chance(0.15) ? 0 : rng.range(1, 3)) : Number(m[2]);
    return Array.from({ length: len }, () => typedValue(rng, types, m[1]));
  }
  if (types[type]) {
    const obj = {};
    for (const f of types[type]) obj[f.name] = typedValue(rng, types, f.type);
    return obj;
  }
  return typedAtomicValue(rng, type);
}

function randomDomain(rng) {
  const domain = {};
  const fields = [];
  for (const [name, type] of DOMAIN_FIELDS) {
    if (!rng.chance(0.6)) continue;
    fields.push({ name, type });
    switch (name) {
      case 'name': domain.name = rng.chance(0.5) ? rng.pick(['Ether Mail', 'Svc ChainSecured', 'Permit2', 'USD Coin']) : randomText(rng, 5); break;
      case 'version': domain.version = rng.pick(['1', '2', '1.0.0', 'v4', '']); break;
      case 'chainId': {
        const id = rng.pick([1n, 10n, 56n, 137n, 8453n, 42161n, 11155111n, 175188n, rng.bits(rng.range(1, 64)), rng.bits(256)]);
        const r = rng.int(4);
        domain.chainId = id <= BigInt(Number.MAX_SAFE_INTEGER) && r < 2 ? Number(id) : r === 3 ? `0x${id.toString(16)}` : id.toString(10);
        break;
      }
      case 'verifyingContract': {
        const a = randomAddress(rng);
        domain.verifyingContract = rng.chance(0.7) ? a : a.toLowerCase();
        break;
      }
      case 'salt': domain.salt = rng.hex(32); break;
    }
  }
  return { domain, fields };
}

/** Typed data as ethers takes it: types without EIP712Domain (ethers derives it from the domain). */
function ethersTypes(doc) {
  const t = { ...doc.types };
  delete t.EIP712Domain;
  return t;
}

async function typedDataVector(name, doc, key) {
  const types = ethersTypes(doc);
  const enc = ethers.TypedDataEncoder.from(types);
  if (enc.primaryType !== doc.primaryType) throw new Error(`ethers infers primary type ${enc.primaryType}, document says ${doc.primaryType}`);
  const digestEthers = ethers.TypedDataEncoder.hash(doc.domain, types, doc.message);
  const digestEsu = ethers.hexlify(TypedDataUtils.eip712Hash(doc, SignTypedDataVersion.V4));
  assertEq(digestEsu, digestEthers, `${name}: digest`);
  const encodeType = enc.encodeType(doc.primaryType);
  assertEq(TypedDataUtils.encodeType(doc.primaryType, doc.types), encodeType, `${name}: encodeType`);
  const domainSeparator = ethers.TypedDataEncoder.hashDomain(doc.domain);
  assertEq(ethers.hexlify(TypedDataUtils.hashStruct('EIP712Domain', doc.domain, doc.types, SignTypedDataVersion.V4)),
    domainSeparator, `${name}: domain separator`);
  const hashStruct = enc.hash(doc.message);
  const wallet = new ethers.Wallet(key);
  const sigViem = await privateKeyToAccount(key).signTypedData(doc);
  const sigEthers = await wallet.signTypedData(doc.domain, types, doc.message);
  assertEq(sigViem, sigEthers, `${name}: signature`);
  assertEq(ethers.verifyTypedData(doc.domain, types, doc.message, sigViem), wallet.address, `${name}: recover`);
  return {
    name,
    document: doc,
    encode_type: encodeType,
    domain_separator: domainSeparator,
    hash_struct: hashStruct,
    digest_ethers: digestEthers,
    digest_eth_sig_util: digestEsu,
    private_key: key,
    signer: wallet.address,
    signature_viem: sigViem,
  };
}

/** Fixed, well-known documents. */
function fixedTypedData() {
  // EIP-712's own example (eips.ethereum.org/EIPS/eip-712, "Example"), signed with keccak256("cow").
  const mail = {
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' },
      ],
      Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
      Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person' }, { name: 'contents', type: 'string' }],
    },
    primaryType: 'Mail',
    domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
    message: {
      from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
      to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
      contents: 'Hello, Bob!',
    },
  };
  // eth-sig-util's V4 example with arrays of structs (Person.wallets, Mail.to as Person[]).
  const mailArrays = {
    types: {
      EIP712Domain: mail.types.EIP712Domain,
      Person: [{ name: 'name', type: 'string' }, { name: 'wallets', type: 'address[]' }],
      Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person[]' }, { name: 'contents', type: 'string' }],
      Group: [{ name: 'name', type: 'string' }, { name: 'members', type: 'Person[]' }],
    },
    primaryType: 'Mail',
    domain: mail.domain,
    message: {
      from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826', '0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF'] },
      to: [{ name: 'Bob', wallets: ['0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB', '0xB0BdaBea57B0BDABeA57b0bdABEA57b0BDabEa57', '0xB0B0b0b0b0b0B000000000000000000000000000'] }],
      contents: 'Hello, Bob!',
    },
  };
  // Group is unused by Mail: ethers rejects unreachable types, so the vector keeps only reachable ones.
  delete mailArrays.types.Group;
  // The project's ChainSecured envelope shape (API.md §2), with a fixed issuedAt.
  const chainSecured = {
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }],
      CreateWallet: [
        { name: 'address', type: 'address' }, { name: 'name', type: 'string' },
        { name: 'description', type: 'string' }, { name: 'issuedAt', type: 'uint256' },
      ],
    },
    primaryType: 'CreateWallet',
    domain: { name: 'Svc ChainSecured', version: '1', chainId: 175188 },
    message: { address: '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf', name: 'my wallet', description: '', issuedAt: 1735689600 },
  };
  const cow = ethers.keccak256(ethers.toUtf8Bytes('cow'));
  // The canonical wallet-proof envelope of each primary type (sdk eip712/envelope.hpp): what
  // the ChainSecured endpoints and X-Wallet-Auth accept, signed here by the reference libraries.
  const envelopeKey = ethers.keccak256(ethers.toUtf8Bytes('envelope owner'));
  const envelopeAddress = new ethers.Wallet(envelopeKey).address;
  const envelopeOf = (primary, chainId, issuedAt) => ({
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }],
      [primary]: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }],
    },
    primaryType: primary,
    domain: { name: 'Svc ChainSecured', version: '1', chainId },
    message: { address: envelopeAddress, issuedAt },
  });
  return [
    ['eip712-mail', mail, cow],
    ['eth-sig-util-mail-arrays', mailArrays, cow],
    ['chain-secured-create-wallet', chainSecured, '0x' + '00'.repeat(31) + '01'],
    ['envelope-create-wallet', envelopeOf('CreateWallet', 175188, 1735689600), envelopeKey],
    ['envelope-add-usage-api-key', envelopeOf('AddUsageApiKey', 175188, 1735689601), envelopeKey],
    ['envelope-convert-account', envelopeOf('ConvertAccount', 31337, 1735689602), envelopeKey],
    ['envelope-billing-auth', envelopeOf('BillingAuth', 175188, 1735689603), envelopeKey],
  ];
}

async function genTypedData() {
  const rng = new Rng(0x7d712001);
  const vectors = [];
  const fixed = fixedTypedData();
  const fixedCount = fixed.length;
  for (const [name, doc, key] of fixed) vectors.push(await typedDataVector(name, doc, key));
  // The EIP's published signature for its Mail example.
  assertEq(vectors[0].digest_ethers, '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2', 'eip712-mail digest');
  assertEq(vectors[0].signature_viem,
    '0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b915621c',
    'eip712-mail signature');
  const seenAtomic = new Set();
  const rejected = {};
  const target = 320;
  for (let i = 0; vectors.length < target + fixedCount; i++) {
    const usedNames = new Set();
    const { types, primary } = randomTypedDataTypes(rng, usedNames);
    const { domain, fields } = randomDomain(rng);
    // Types listed in a shuffled order: the encoding must not depend on it.
    const ordered = { EIP712Domain: fields };
    for (const n of rng.shuffle(Object.keys(types))) ordered[n] = types[n];
    const doc = { types: ordered, primaryType: primary, domain, message: typedValue(rng, types, primary) };
    const key = randomPrivateKey(rng);
    try {
      vectors.push(await typedDataVector(`random-${i}`, doc, key));
    } catch (e) {
      if (/libraries disagree/.test(e.message)) throw e;
      const reason = e.shortMessage ?? e.message.split('\n')[0];
      rejected[reason] = (rejected[reason] ?? 0) + 1;
      continue;
    }
    for (const fs of Object.values(types)) for (const f of fs) seenAtomic.add(f.type.replace(/\[\d*\]/g, ''));
  }
  const missing = ATOMIC_TYPES.filter((t) => !seenAtomic.has(t));
  if (missing.length) throw new Error(`typed_data: atomic types never generated: ${missing.join(', ')}`);
  return {
    file: 'typed_data.json',
    description: 'EIP-712 typed data (eth_signTypedData_v4 documents): digests from ethers and eth-sig-util, encodeType, domain separator, struct hash, and a signature from viem (equal to ethers Wallet.signTypedData).',
    vectors,
    rejected,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. ABI encoding.

/** Random ABI type: atomic, T[], T[k] or a tuple, nested up to `depth` levels. */
function randomAbiType(rng, depth) {
  const r = rng.int(100);
  if (depth >= 3 || r < 60) return rng.pick(ATOMIC_TYPES);
  if (r < 75) return `${randomAbiType(rng, depth + 1)}[]`;
  if (r < 87) return `${randomAbiType(rng, depth + 1)}[${rng.range(1, 3)}]`;
  // No empty tuple: Solidity has had no empty struct since 0.5.0, and a zero-size type is an error there.
  const n = rng.range(1, 4);
  return `(${Array.from({ length: n }, () => randomAbiType(rng, depth + 1)).join(',')})`;
}

/** Splits "(a,(b,c)[],d)" into its top-level component types. */
function tupleComponents(type) {
  const inner = type.slice(1, -1);
  const out = [];
  let depthP = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '(') depthP++;
    else if (inner[i] === ')') depthP--;
    else if (inner[i] === ',' && depthP === 0) {
      out.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  if (inner.length) out.push(inner.slice(start));
  return out;
}

/** A JSON value for an ABI type: ints as decimal strings, checksummed addresses, lowercase hex. */
function abiValue(rng, type) {
  const m = type.match(/^(.*)\[(\d*)\]$/);
  if (m) {
    const len = m[2] === '' ? (rng.chance(0.15) ? 0 : rng.range(1, 3)) : Number(m[2]);
    return Array.from({ length: len }, () => abiValue(rng, m[1]));
  }
  if (type.startsWith('(')) return tupleComponents(type).map((t) => abiValue(rng, t));
  if (type.startsWith('uint')) return randomUint(rng, Number(type.slice(4))).toString();
  if (type.startsWith('int')) return randomInt(rng, Number(type.slice(3))).toString();
  if (type === 'address') return randomAddress(rng);
  if (type === 'bool') return rng.chance(0.5);
  if (type === 'string') return rng.chance(0.1) ? '' : randomText(rng);
  if (type === 'bytes') return rng.hex(rng.pick([0, 1, 31, 32, 33, 64, rng.range(1, 80)]));
  if (type.startsWith('bytes')) return rng.hex(Number(type.slice(5)));
  throw new Error(`unknown ABI type ${type}`);
}

/** ethers' decoded Result → the JSON shape of abiValue. */
function abiToJson(v) {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return Array.from(v, abiToJson);
  return v;
}

function abiVector(name, types, values) {
  const coder = ethers.AbiCoder.defaultAbiCoder();
  const encoded = coder.encode(types, values);
  assertEq(abiToJson(coder.decode(types, encoded)), values, `${name}: decode round-trip`);
  return { name, types, values, encoded };
}

const FIXED_FUNCTIONS = [
  ['transfer(address,uint256)', ['0x000000000000000000000000000000000000dEaD', '1000000000000000000']],
  ['approve(address,uint256)', ['0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D', (2n ** 256n - 1n).toString()]],
  ['balanceOf(address)', ['0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045']],
  ['f()', []],
  ['f(uint256,string)', ['42', 'hello']],
  ['baz(uint32,bool)', ['69', true]], // Solidity ABI spec example: 0xcdcd77c0…
  ['sam(bytes,bool,uint256[])', ['0x64617665', true, ['1', '2', '3']]], // Solidity ABI spec example
  ['f(uint256,uint32[],bytes10,bytes)', ['291', ['1110', '1929'], '0x31323334353637383930', '0x48656c6c6f2c20776f726c6421']], // Solidity ABI spec
  ['g(uint256[][],string[])', [[['1', '2'], ['3']], ['one', 'two', 'three']]], // Solidity ABI spec
  ['setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))', [
    BigInt('0x' + '5a'.repeat(32)).toString(), '98765432109876543210', '1767225600', '0', 'ci key', 'used by the nightly job',
    [true, false, true, ['1', '2'], [], ['3'], ['18446744073709551615', '0']],
  ]],
];

function functionVector(name, signature, values) {
  const iface = new ethers.Interface([`function ${signature}`]);
  const fragment = iface.fragments[0];
  const canonical = fragment.format('sighash');
  assertEq(canonical, signature, `${name}: canonical signature`);
  const selector = iface.getFunction(fragment.name).selector;
  assertEq(selector, ethers.id(signature).slice(0, 10), `${name}: selector`);
  const calldata = iface.encodeFunctionData(fragment.name, values);
  const types = fragment.inputs.map((p) => p.format('sighash'));
  assertEq(calldata, selector + ethers.AbiCoder.defaultAbiCoder().encode(types, values).slice(2), `${name}: calldata`);
  assertEq(abiToJson(iface.decodeFunctionData(fragment.name, calldata)), values, `${name}: calldata round-trip`);
  return { name, signature, types, values, selector, calldata };
}

function genAbi() {
  const rng = new Rng(0xab1c0de2);
  const encodings = [];
  // Every atomic type alone at least once, with an edge value.
  for (const t of ATOMIC_TYPES) encodings.push(abiVector(`atomic-${t}`, [t], [abiValue(rng, t)]));
  encodings.push(abiVector('empty', [], []));
  for (let i = 0; encodings.length < 360; i++) {
    const n = rng.range(1, 6);
    const types = Array.from({ length: n }, () => randomAbiType(rng, 0));
    const values = types.map((t) => abiValue(rng, t));
    encodings.push(abiVector(`random-${i}`, types, values));
  }
  const calls = [];
  FIXED_FUNCTIONS.forEach(([sig, values], i) => calls.push(functionVector(`fixed-${i}-${sig.slice(0, sig.indexOf('('))}`, sig, values)));
  for (let i = 0; calls.length < 40; i++) {
    const name = randomIdent(rng, rng.range(1, 12));
    const types = Array.from({ length: rng.range(1, 5) }, () => randomAbiType(rng, 1));
    calls.push(functionVector(`random-${i}`, `${name}(${types.join(',')})`, types.map((t) => abiValue(rng, t))));
  }
  // Solidity ABI specification, "Examples": baz(69, true).
  assertEq(calls.find((c) => c.signature === 'baz(uint32,bool)').calldata,
    '0xcdcd77c000000000000000000000000000000000000000000000000000000000000000450000000000000000000000000000000000000000000000000000000000000001',
    'baz calldata');
  return {
    file: 'abi.json',
    description: 'Solidity ABI: random type lists encoded with ethers AbiCoder.defaultAbiCoder() (decode round-trip asserted), and function calls encoded with ethers Interface.encodeFunctionData.',
    sections: { encodings, calls },
  };
}

// ---------------------------------------------------------------------------------------------
// 3. RLP.

function randomRlpString(rng) {
  switch (rng.int(12)) {
    case 0: return '0x';
    case 1: return ethers.hexlify(new Uint8Array([rng.int(0x80)]));
    case 2: return ethers.hexlify(new Uint8Array([0x80 + rng.int(0x80)]));
    case 3: return rng.hex(55);
    case 4: return rng.hex(56);
    case 5: return rng.hex(rng.chance(0.15) ? 1024 : rng.pick([255, 256, 57]));
    case 6: return ethers.hexlify(new Uint8Array([rng.pick([0x00, 0x7f, 0x80, 0x81, 0xb7, 0xb8, 0xbf, 0xc0, 0xf7, 0xf8, 0xff])]));
    default: return rng.hex(rng.range(2, 54));
  }
}

function randomRlpItem(rng, depth) {
  if (depth >= 4 || rng.chance(depth === 0 ? 0.2 : 0.6)) return randomRlpString(rng);
  const r = rng.int(10);
  // Long lists (payload over 55 bytes) mostly near the root, to keep the file small.
  const n = r === 0 ? 0 : r < 8 || depth > 1 ? rng.range(1, 4) : rng.range(5, 12);
  return Array.from({ length: n }, () => randomRlpItem(rng, depth + 1));
}

function genRlp() {
  const rng = new Rng(0x41c0ffee);
  const vectors = [];
  const push = (name, decoded) => {
    const encoded = ethers.encodeRlp(decoded);
    assertEq(ethers.decodeRlp(encoded), decoded, `${name}: decode round-trip`);
    vectors.push({ name, decoded, encoded });
  };
  // Boundaries of the encoding (Ethereum Yellow Paper, appendix B).
  push('empty-string', '0x');
  push('byte-00', '0x00');
  push('byte-7f', '0x7f');
  push('byte-80', '0x80');
  push('byte-ff', '0xff');
  push('string-55', '0x' + 'ab'.repeat(55));
  push('string-56', '0x' + 'ab'.repeat(56));
  push('string-1024', '0x' + 'cd'.repeat(1024));
  push('empty-list', []);
  push('list-of-empty-list', [[]]);
  push('set-theoretic-three', [[], [[]], [[], [[]]]]);
  push('list-payload-55', ['0x' + '11'.repeat(53)]);
  push('list-payload-56', ['0x' + '11'.repeat(54)]);
  push('dog-cat', [ethers.hexlify(ethers.toUtf8Bytes('cat')), ethers.hexlify(ethers.toUtf8Bytes('dog'))]);
  for (let i = 0; vectors.length < 220; i++) push(`random-${i}`, randomRlpItem(rng, 0));
  return {
    file: 'rlp.json',
    description: 'RLP: nested byte strings and lists encoded with ethers encodeRlp; `decoded` has exactly the shape of ethers decodeRlp(encoded).',
    vectors,
  };
}

// ---------------------------------------------------------------------------------------------
// 4. EIP-55.

function genEip55() {
  const rng = new Rng(0xe1755055);
  const vectors = [];
  const push = (lower) => vectors.push({ lowercase: lower, checksummed: ethers.getAddress(lower) });
  push('0x' + '00'.repeat(20));
  push('0x' + 'ff'.repeat(20));
  while (vectors.length < 200) push(rng.hex(20));
  return {
    file: 'eip55.json',
    description: 'EIP-55 mixed-case checksum addresses: lowercase hex to ethers getAddress.',
    vectors,
  };
}

// ---------------------------------------------------------------------------------------------
// 5. IPFS CIDs.

/** The deterministic content the C++ test regenerates: byte i = (i * 31 + 7) & 0xff. */
function patternContent(size) {
  const buf = new Uint8Array(size);
  for (let i = 0; i < size; i++) buf[i] = (i * 31 + 7) & 0xff;
  return buf;
}

const JS_SNIPPET = `// Enact action: sign a greeting
const greeting = \`héllo, \${params.name ?? "wörld"} 👋 — 你好\`;
const sig = await Enact.signMessage({ pkpId: params.pkpId, message: greeting });
Enact.setResponse({ greeting, sig });
`;

async function cidVector(name, content, extra) {
  const v0 = await Hash.of(content, {});
  const v1 = await Hash.of(content, { cidVersion: 1, rawLeaves: true });
  return { name, ...extra, cid_v0: v0, cid_v1: v1, hashed_cid: ethers.keccak256(ethers.toUtf8Bytes(v0)) };
}

async function genCid() {
  const vectors = [];
  const chunk = 262144;
  for (const size of [0, 1, 11, 1024, chunk - 1, chunk, chunk + 1, 174 * chunk, 174 * chunk + 1, 5 * 1024 * 1024]) {
    vectors.push(await cidVector(`pattern-${size}`, patternContent(size), { size, content: 'pattern' }));
  }
  for (const [name, text] of [['hello-world', 'hello world\n'], ['js-snippet', JS_SNIPPET]]) {
    const bytes = ethers.toUtf8Bytes(text);
    vectors.push(await cidVector(name, bytes, { size: bytes.length, content: 'utf8', content_utf8: text }));
  }
  // Well-known values: the empty file and "hello world\n" as `ipfs add` prints them.
  assertEq(vectors[0].cid_v0, 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH', 'empty file CIDv0');
  assertEq(vectors.find((v) => v.name === 'hello-world').cid_v0, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', 'hello world CIDv0');
  return {
    file: 'cid.json',
    description: 'IPFS CIDs of UnixFS files as `ipfs add` computes them (ipfs-only-hash: 256 KiB fixed chunks, balanced DAG, 174 links per node): CIDv0 with dag-pb leaves, CIDv1 with raw leaves (--cid-version=1), and keccak256 of the CIDv0 string. Pattern content: byte i = (i * 31 + 7) & 0xff.',
    vectors,
  };
}

// ---------------------------------------------------------------------------------------------
// 6. Cron.

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** One cron field over [lo, hi]: *, value, list, range, range/step, * /step; names optional. */
function randomCronField(rng, lo, hi, names, allowStar = true) {
  // Names replace both ends of a range or neither (no "SEP-11"); 7 (Sunday again) has no name.
  const offset = names === MONTH_NAMES ? 1 : 0;
  const named = (v) => names[v - offset];
  const atom = () => {
    const r = rng.int(10);
    const useNames = names && rng.chance(0.4);
    if (r < 4) {
      const v = rng.range(lo, hi);
      return useNames && named(v) ? named(v) : String(v);
    }
    if (r < 7) {
      const a = rng.range(lo, hi - 1);
      const b = rng.range(a + 1, hi);
      return useNames && named(a) && named(b) ? `${named(a)}-${named(b)}` : `${a}-${b}`;
    }
    const a = rng.range(lo, hi - 1);
    return `${a}-${rng.range(a + 1, hi)}/${rng.range(1, Math.max(1, Math.floor((hi - lo) / 2)))}`;
  };
  const r = rng.int(10);
  if (allowStar && r < 3) return '*';
  if (r < 4) return `*/${rng.range(1, Math.max(2, Math.floor((hi - lo + 1) / 2)))}`;
  if (r < 7) return atom();
  // A list of distinct atoms (cron-parser rejects duplicate values).
  const n = rng.range(2, 4);
  return Array.from({ length: n }, atom).join(',');
}

function randomCronExpression(rng) {
  const six = rng.chance(0.3);
  const fields = [];
  if (six) fields.push(rng.chance(0.4) ? String(rng.int(60)) : randomCronField(rng, 0, 59));
  fields.push(rng.chance(0.3) ? String(rng.int(60)) : randomCronField(rng, 0, 59));
  fields.push(rng.chance(0.3) ? String(rng.int(24)) : randomCronField(rng, 0, 23));
  fields.push(rng.chance(0.5) ? '*' : randomCronField(rng, 1, 31));
  fields.push(rng.chance(0.6) ? '*' : randomCronField(rng, 1, 12, MONTH_NAMES));
  fields.push(rng.chance(0.5) ? '*' : randomCronField(rng, 0, 7, DAY_NAMES));
  return fields.join(' ');
}

const FIXED_CRON = [
  '* * * * *', '*/5 * * * *', '0 * * * *', '0 0 * * *', '30 2 * * 1-5', '0 9-17 * * MON-FRI',
  '0 0 1 * *', '0 0 1 1 *', '0 0 29 2 *', '0 12 29 FEB *', '0 0 31 * *', '59 23 31 12 *',
  '0 0 13 * FRI', '0 0 1,15 * MON', '0 0 */2 * MON', '0 0 * * 0', '0 0 * * 7', '0 0 * * SUN',
  '15 10 * JAN,JUL *', '*/15 * * * * *', '0 */10 * * * *', '30 0 0 1 1 *', '0 0 0 29 2 *',
  '5-10/2 1,3,5 * * *', '0 0 1-7 * MON', '0 4 8-14 * *', '0 22 * * 1-5', '23 0-20/2 * * *',
  '0 0,12 1 */2 *', '0 0 * * 5-7', '0 0 * DEC SAT', '1 2 3 4 5',
  '@hourly', '@daily', '@weekly', '@monthly', '@yearly',
];

/** Vector expressions use only the portable syntax; cron-parser's extensions are skipped. */
function usesExtension(expr) {
  return /[LW#?H]/.test(expr.replace(/JUL|JUN|JAN|APR|MAR|MAY|AUG|SEP|OCT|NOV|DEC|FEB|MON|TUE|WED|THU|FRI|SAT|SUN/g, ''));
}

function isoSeconds(d) {
  const s = d.toISOString();
  if (!s.endsWith('.000Z')) throw new Error(`fire time with milliseconds: ${s}`);
  return s.replace('.000Z', 'Z');
}

function genCron() {
  const rng = new Rng(0xc4011234);
  const vectors = [];
  const skipped = {};
  const lo = Date.UTC(2020, 0, 1) / 1000;
  const hi = Date.UTC(2040, 0, 1) / 1000;
  const candidates = [...FIXED_CRON];
  const fixedCount = FIXED_CRON.length;
  for (let i = 0; vectors.length < 200; i++) {
    const expr = i < candidates.length ? candidates[i] : randomCronExpression(rng);
    if (usesExtension(expr)) {
      skipped['uses a cron-parser extension (L, W, #, ?, H)'] = (skipped['uses a cron-parser extension (L, W, #, ?, H)'] ?? 0) + 1;
      continue;
    }
    // Start instants at whole seconds: random, at the end of a month or year, or exactly on a
    // fire time (which must not be returned: next() is strictly after the start).
    let start;
    switch (rng.int(6)) {
      case 0: start = Date.UTC(rng.range(2020, 2039), rng.int(12), 1) / 1000 - rng.pick([0, 1, 60]); break;
      case 1: start = Date.UTC(rng.range(2020, 2039), 1, 28, 23, 59, 59) / 1000; break;
      default: start = rng.range(lo, hi); break;
    }
    let next;
    try {
      const it = CronExpressionParser.parse(expr, { currentDate: new Date(start * 1000), tz: 'UTC' });
      next = Array.from({ length: 5 }, () => isoSeconds(it.next().toDate()));
    } catch (e) {
      const reason = e.message.split('\n')[0].replace(/: .*/, '');
      skipped[reason] = (skipped[reason] ?? 0) + 1;
      continue;
    }
    const onFire = rng.chance(0.15) && i >= fixedCount;
    if (onFire) {
      // Restart from the first fire time itself.
      start = Date.parse(next[0]) / 1000;
      const it = CronExpressionParser.parse(expr, { currentDate: new Date(start * 1000), tz: 'UTC' });
      next = Array.from({ length: 5 }, () => isoSeconds(it.next().toDate()));
    }
    vectors.push({ expression: expr, start: isoSeconds(new Date(start * 1000)), next });
  }
  return {
    file: 'cron.json',
    description: 'Cron schedules: the next 5 fire times strictly after `start`, from cron-parser CronExpressionParser.parse(expression, {currentDate: start, tz: "UTC"}).',
    vectors,
    rejected: skipped,
  };
}

// ---------------------------------------------------------------------------------------------
// 7. Keys, EIP-191.

async function genKeys() {
  const rng = new Rng(0x6b657973);
  const vectors = [];
  for (let i = 0; i < 50; i++) {
    const key = randomPrivateKey(rng);
    const wallet = new ethers.Wallet(key);
    // Mostly text messages (UTF-8), some raw byte strings; the hash covers `message_hex`.
    const text = rng.chance(0.8);
    const msgBytes = text ? ethers.toUtf8Bytes(rng.chance(0.1) ? '' : randomText(rng, 20)) : rng.bytes(rng.pick([1, 32, 65, 200]));
    const hash = ethers.hashMessage(msgBytes);
    const signature = await wallet.signMessage(msgBytes);
    const viemSig = await privateKeyToAccount(key).signMessage({ message: { raw: msgBytes } });
    assertEq(viemSig, signature, `keys ${i}: signMessage`);
    if (text) assertEq(ethers.hashMessage(ethers.toUtf8String(msgBytes)), hash, `keys ${i}: text hash`);
    assertEq(ethers.verifyMessage(msgBytes, signature), wallet.address, `keys ${i}: recover`);
    const v = { index: i, private_key: key, public_key: wallet.signingKey.publicKey, public_key_compressed: wallet.signingKey.compressedPublicKey, address: wallet.address };
    if (text) v.message = ethers.toUtf8String(msgBytes);
    v.message_hex = ethers.hexlify(msgBytes);
    v.eip191_hash = hash;
    v.signature = signature;
    vectors.push(v);
  }
  return {
    file: 'keys.json',
    description: 'secp256k1 keys: ethers Wallet address and public keys, EIP-191 hashMessage of a message, and Wallet.signMessage (equal to viem signMessage).',
    vectors,
  };
}

// ---------------------------------------------------------------------------------------------
// 8. PKP derivation (API.md §1).

const PKP_SALT = 'enact/pkp/v2';
const PKP_LEGACY_SALT = 'enact/pkp/v1';
const SERVER_SALT = 'enact/server/v1';

/** HKDF-SHA256(ikm = root, salt, info, 32 bytes) with node's crypto, as hex. */
function pkpHkdf(root, info, salt = PKP_SALT) {
  return ethers.hexlify(new Uint8Array(hkdfSync('sha256', ethers.getBytes(root), ethers.toUtf8Bytes(salt), info, 32)));
}

/** info = label ‖ account ‖ path [‖ counter byte]; the legacy rule had no account. */
function pkpInfo(label, account, path, counter) {
  const parts = [ethers.toUtf8Bytes(label)];
  if (account !== null) parts.push(ethers.getBytes(account));
  parts.push(ethers.getBytes(path));
  if (counter > 0) parts.push(new Uint8Array([counter]));
  return ethers.getBytes(ethers.concat(parts));
}

/** The first HKDF output for info(counter) that is a valid scalar, trying counters 0 (no byte), 1, 2, …. */
function firstValidScalar(root, salt, infoFor) {
  for (let counter = 0; counter <= 255; counter++) {
    const k = pkpHkdf(root, infoFor(counter), salt);
    const v = BigInt(k);
    if (v > 0n && v < SECP256K1_N) return { key: k, counter };
  }
  throw new Error('no valid signing scalar');
}

/** The PKP signing key of (account, path). */
function pkpSigningKey(root, account, path) {
  return firstValidScalar(root, PKP_SALT, (c) => pkpInfo('sign', account, path, c));
}

function genPkp() {
  // RFC 5869 A.1 first, so a node whose hkdfSync were wrong could not produce vectors.
  const rfc = ethers.hexlify(new Uint8Array(hkdfSync('sha256', ethers.getBytes('0x' + '0b'.repeat(22)),
    ethers.getBytes('0x000102030405060708090a0b0c'), ethers.getBytes('0xf0f1f2f3f4f5f6f7f8f9'), 42)));
  assertEq(rfc, '0x3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865', 'RFC 5869 A.1 HKDF');

  const rng = new Rng(0x706b7031);
  const coder = ethers.AbiCoder.defaultAbiCoder();
  const U64_MAX = (1n << 64n) - 1n;
  const vectors = [];
  // [root, path source]: fixed edges first (all-zero and all-ones root and path, API-mode
  // indexes 0 and 2^64 - 1), then random roots with random or API-mode paths.
  const fixed = [
    { name: 'zero-root-zero-path', root: '0x' + '00'.repeat(32), path: { random: '0x' + '00'.repeat(32) } },
    { name: 'ones-root-ones-path', root: '0x' + 'ff'.repeat(32), path: { random: '0x' + 'ff'.repeat(32) } },
    { name: 'api-index-0', root: null, path: { index: 0n } },
    { name: 'api-index-max', root: null, path: { index: U64_MAX } },
  ];
  const total = 32;
  for (let i = 0; i < total; i++) {
    const f = fixed[i];
    const name = f ? f.name : `random-${i - fixed.length}`;
    const root = f?.root ?? rng.hex(32);
    let src = f?.path;
    if (!src) {
      src = rng.chance(0.5)
        ? { random: rng.hex(32) }
        : { index: rng.chance(0.3) ? BigInt(rng.int(16)) : rng.bits(rng.pick([8, 32, 53, 64])) };
    }
    const v = { name, root_key: root };
    let path;
    let account;
    if (src.random) {
      v.path_kind = 'random';
      path = src.random;
      // A signature-minted wallet belongs to its signer's account: keccak256(abi.encodePacked(wallet)).
      const wallet = ethers.getAddress(rng.hex(20));
      account = ethers.solidityPackedKeccak256(['address'], [wallet]);
    } else {
      const apiKeyHash = rng.hex(32);
      path = ethers.keccak256(coder.encode(['uint256', 'uint256'], [apiKeyHash, src.index]));
      assertEq(path, ethers.solidityPackedKeccak256(['uint256', 'uint256'], [apiKeyHash, src.index]), `pkp ${name}: abi.encode of two uint256 is their packed form`);
      v.path_kind = 'api';
      v.api_key_hash = apiKeyHash;
      v.index = src.index.toString();
      account = apiKeyHash;  // an API-mode PKP belongs to the account whose hash made its path
    }
    v.account_hash = account;
    v.derivation_path = path;
    const { key, counter } = pkpSigningKey(root, account, path);
    const signing = new ethers.SigningKey(key);
    const digest = rng.hex(32);
    const sig = signing.sign(digest);
    assertEq(ethers.recoverAddress(digest, sig), ethers.computeAddress(signing.publicKey), `pkp ${name}: recover`);
    v.signing_key = key;
    v.counter = counter;
    v.public_key = signing.publicKey;
    v.address = ethers.computeAddress(key);
    v.symmetric_key = pkpHkdf(root, pkpInfo('sym', account, path, 0));
    v.digest = digest;
    v.signature = sig.serialized;
    // The same path under another account is another key (API.md §1 "owning account").
    const otherAccount = rng.hex(32);
    v.other_account_hash = otherAccount;
    v.other_account_address = ethers.computeAddress(pkpSigningKey(root, otherAccount, path).key);
    assertNe(v.other_account_address, v.address, `pkp ${name}: another account, another key`);
    // The earlier path-only rule, kept only to recognise a data directory from before.
    v.legacy_address = ethers.computeAddress(firstValidScalar(root, PKP_LEGACY_SALT, (c) => pkpInfo('sign', null, path, c)).key);
    vectors.push(v);
  }
  // The server's own keys (API.md §1 "server keys"): HKDF-SHA256(root, "enact/server/v1", purpose).
  const serverKeys = [];
  for (let i = 0; i < 4; i++) {
    const root = i === 0 ? '0x' + '00'.repeat(32) : rng.hex(32);
    for (const purpose of ['api-payer/0', 'api-payer/1', 'triggers/usage-key-seal/v1']) {
      const signing = firstValidScalar(root, SERVER_SALT, (c) => {
        const parts = [ethers.toUtf8Bytes(purpose)];
        if (c > 0) parts.push(new Uint8Array([c]));
        return ethers.getBytes(ethers.concat(parts));
      });
      serverKeys.push({ purpose, root_key: root, key: pkpHkdf(root, ethers.toUtf8Bytes(purpose), SERVER_SALT),
                        signing_key: signing.key, signing_address: ethers.computeAddress(signing.key) });
    }
  }
  return {
    file: 'pkp.json',
    description: 'PKP derivation (API.md §1): signing key HKDF-SHA256(root, "enact/pkp/v2", "sign" ‖ accountHash ‖ path [‖ counter]) and symmetric key (info "sym" ‖ accountHash ‖ path) from node:crypto hkdfSync, the address from ethers computeAddress, API-mode paths keccak256(AbiCoder.encode(["uint256","uint256"], [apiKeyHash, index])) owned by apiKeyHash, signature-minted paths owned by keccak256(abi.encodePacked(wallet)), ethers SigningKey.sign(digest); other_account_address: the same path under another account; legacy_address: the earlier path-only rule (salt "enact/pkp/v1"); server_keys: HKDF-SHA256(root, "enact/server/v1", purpose [‖ counter]).',
    sections: { vectors, server_keys: serverKeys },
  };
}

// ---------------------------------------------------------------------------------------------
// 9. EIP-1559 transactions.

const U64_MAX_TX = (1n << 64n) - 1n;
const U256_MAX_TX = (1n << 256n) - 1n;
// ethers holds a nonce in a JS number, so its largest is 2^53 - 1 (EIP-2681 allows 2^64 - 1).
const NONCE_MAX_TX = (1n << 53n) - 1n;

/** Data of a transaction: empty, a 4-byte selector, ABI-sized calldata, or a large init code. */
function randomTxData(rng) {
  switch (rng.int(6)) {
    case 0: return '0x';
    case 1: return rng.hex(4);
    case 2: return rng.hex(4 + 32 * rng.range(1, 6));
    case 3: return rng.hex(rng.pick([1, 55, 56, 255, 256]));
    case 4: return rng.hex(rng.range(1000, 3000));
    default: return rng.hex(rng.range(1, 120));
  }
}

async function genTx1559() {
  const rng = new Rng(0x74783135);
  const vectors = [];
  // Fixed edges first (all integers zero; all integers at their maximum; contract creation with
  // empty data), then random transactions.
  const fixed = [
    { name: 'all-zero', chainId: 0n, nonce: 0n, maxPriorityFeePerGas: 0n, maxFeePerGas: 0n, gasLimit: 0n, to: '0x' + '00'.repeat(20), value: 0n, data: '0x' },
    { name: 'all-max', chainId: U64_MAX_TX, nonce: NONCE_MAX_TX, maxPriorityFeePerGas: U256_MAX_TX, maxFeePerGas: U256_MAX_TX, gasLimit: U64_MAX_TX, to: '0x' + 'ff'.repeat(20), value: U256_MAX_TX, data: '0xff' },
    { name: 'create-empty', chainId: 1n, nonce: 0n, maxPriorityFeePerGas: 1000000000n, maxFeePerGas: 30000000000n, gasLimit: 53000n, to: null, value: 0n, data: '0x' },
  ];
  for (let i = 0; i < 100; i++) {
    const f = fixed[i];
    const name = f ? f.name : `random-${i - fixed.length}`;
    const key = randomPrivateKey(rng);
    const fields = f ?? {
      chainId: rng.pick([1n, 10n, 137n, 8453n, 11155111n, randomUint(rng, 64)]),
      nonce: randomUint(rng, 53),
      maxPriorityFeePerGas: randomUint(rng, 256),
      maxFeePerGas: randomUint(rng, 256),
      gasLimit: randomUint(rng, 64),
      to: rng.chance(0.2) ? null : rng.hex(20),
      value: randomUint(rng, 256),
      data: randomTxData(rng),
    };
    const tx = { type: 2, ...fields, accessList: [] };
    delete tx.name;
    // ethers refuses a priority fee above the fee cap (a validity rule, not an encoding one).
    if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) {
      [tx.maxPriorityFeePerGas, tx.maxFeePerGas] = [tx.maxFeePerGas, tx.maxPriorityFeePerGas];
    }
    if (tx.to !== null) tx.to = ethers.getAddress(tx.to);
    const wallet = new ethers.Wallet(key);
    const raw = await wallet.signTransaction(tx);
    const unsigned = ethers.Transaction.from(tx).unsignedSerialized;
    const parsed = ethers.Transaction.from(raw);
    assertEq(parsed.from, wallet.address, `tx1559 ${name}: recovered sender`);
    assertEq(parsed.unsignedSerialized, unsigned, `tx1559 ${name}: unsigned serialization`);
    assertEq(parsed.unsignedHash, ethers.keccak256(unsigned), `tx1559 ${name}: signing hash`);
    assertEq(parsed.hash, ethers.keccak256(raw), `tx1559 ${name}: tx hash`);
    vectors.push({
      name,
      private_key: key,
      from: wallet.address,
      chain_id: tx.chainId.toString(),
      nonce: tx.nonce.toString(),
      max_priority_fee_per_gas: tx.maxPriorityFeePerGas.toString(),
      max_fee_per_gas: tx.maxFeePerGas.toString(),
      gas_limit: tx.gasLimit.toString(),
      to: tx.to,
      value: tx.value.toString(),
      data: tx.data,
      unsigned: unsigned,
      signing_hash: parsed.unsignedHash,
      y_parity: parsed.signature.yParity,
      r: parsed.signature.r,
      s: parsed.signature.s,
      raw,
      hash: parsed.hash,
    });
  }
  return {
    file: 'tx1559.json',
    description: 'EIP-1559 (type 2) transactions with an empty access list: ethers Wallet.signTransaction, the unsigned serialization and signing hash from ethers Transaction (unsignedSerialized, unsignedHash), and the transaction hash keccak256(raw).',
    vectors,
  };
}

// ---------------------------------------------------------------------------------------------
// 10. Permission registry ABI (contracts/IPermissionRegistry.sol).
//
// The interface in ethers' human-readable form, written from IPermissionRegistry.sol and checked
// against it (REGISTRY_SOL below). Arguments are written in the JSON forms of the SDK's registry
// bindings (enact/chain/registry.hpp), which are those of the embedded ledger's events: uint256
// hashes as 0x + 64 hex digits, other uint256 as JSON numbers (decimal strings above 2^53 - 1),
// addresses lowercase, Permissions as an object with the snake_case permission fields.

const REG_PERMISSIONS = 'tuple(bool canCreateGroups, bool canDeleteGroups, bool canCreatePkps, uint256[] manageIpfsIdsInGroups, uint256[] addPkpToGroups, uint256[] removePkpFromGroups, uint256[] executeInGroups)';
const REG_ACCOUNT_VIEW = 'tuple(uint256 accountHash, address admin, bool managed, string name, string description, string email, uint256 createdAt, uint256 balance, uint256 walletCount)';
const REG_USAGE_KEY_VIEW = `tuple(uint256 accountHash, uint256 usageKeyHash, address wallet, uint256 expiration, uint256 balance, string name, string description, ${REG_PERMISSIONS} permissions, uint256 createdAt)`;
const REG_GROUP_VIEW = 'tuple(uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes)';
const REG_WALLET_VIEW = 'tuple(address wallet, uint256 derivationPath, string name, string description, uint256 createdAt)';
const REG_ACTION_VIEW = 'tuple(uint256 hashedCid, string cid, string name, string description, uint256 createdAt)';
const REG_PAYMENT_VIEW = 'tuple(uint256 accountHash, string intentId, uint256 amountCents, string provider, bool credited, uint256 createdAt)';

const REGISTRY_ABI = [
  // errors
  'error NotAdmin(uint256 accountHash, address sender)',
  'error RelayNotAllowed(uint256 accountHash, address sender)',
  'error AlreadyUnmanaged(uint256 accountHash)',
  'error UnknownAccount(uint256 accountHash)',
  'error UnknownUsageKey(uint256 accountHash, uint256 usageKeyHash)',
  'error UnknownGroup(uint256 accountHash, uint256 groupId)',
  'error UnknownWallet(uint256 accountHash, address wallet)',
  'error UnknownAction(uint256 accountHash, uint256 hashedCid)',
  'error UnknownPayment(uint256 accountHash, string intentId)',
  'error Duplicate(string what)',
  'error AlreadyCredited(uint256 accountHash, string intentId)',
  'error InsufficientCredits(uint256 accountHash, uint256 balance, uint256 required)',
  'error InvalidArgument(string reason)',
  'error NotOwner(address sender)',
  'error NotApiPayer(address sender)',
  'error AccountHashNotCanonical(uint256 apiKeyHash, address admin)',
  'error ManagedNotAllowed(uint256 apiKeyHash, address sender)',
  'error HashIsUsageKey(uint256 apiKeyHash)',
  'error HashIsAccount(uint256 usageKeyHash)',
  'error UsageKeyOfAnotherAccount(uint256 accountHash, uint256 usageKeyHash)',
  'error NewAdminNotSender(uint256 accountHash, address newAdmin)',
  // events
  'event AccountCreated(uint256 indexed accountHash, address adminWalletAddress, bool managed, string name, string description)',
  'event AccountConverted(uint256 indexed accountHash, address previousAdmin, address newAdmin)',
  `event UsageApiKeySet(uint256 indexed accountHash, uint256 usageKeyHash, address wallet, uint256 expiration, uint256 balance, string name, string description, ${REG_PERMISSIONS} permissions)`,
  'event UsageApiKeyMetadataUpdated(uint256 indexed accountHash, uint256 usageKeyHash, string name, string description)',
  'event UsageApiKeyRemoved(uint256 indexed accountHash, uint256 usageKeyHash)',
  'event GroupAdded(uint256 indexed accountHash, uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes)',
  'event GroupUpdated(uint256 indexed accountHash, uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes)',
  'event GroupRemoved(uint256 indexed accountHash, uint256 groupId)',
  'event PkpAddedToGroup(uint256 indexed accountHash, uint256 groupId, address pkpId)',
  'event PkpRemovedFromGroup(uint256 indexed accountHash, uint256 groupId, address pkpId)',
  'event ActionAddedToGroup(uint256 indexed accountHash, uint256 groupId, uint256 hashedCid)',
  'event ActionRemovedFromGroup(uint256 indexed accountHash, uint256 groupId, uint256 hashedCid)',
  'event WalletDerivationRegistered(uint256 indexed accountHash, address wallet, uint256 derivationPath, string name, string description)',
  'event ActionAdded(uint256 indexed accountHash, uint256 hashedCid, string cid, string name, string description)',
  'event ActionMetadataUpdated(uint256 indexed accountHash, uint256 hashedCid, string name, string description)',
  'event ActionDeleted(uint256 indexed accountHash, uint256 hashedCid)',
  'event CreditsDebited(uint256 indexed accountHash, uint256 amount, uint256 balance)',
  'event PaymentCredited(uint256 indexed accountHash, string paymentIntentId, uint256 amountCents, string provider, uint256 balance)',
  'event PaymentRecorded(uint256 indexed accountHash, string paymentIntentId, uint256 amountCents, string provider)',
  'event WriteCharged(uint256 indexed accountHash, uint256 amount, uint256 balance)',
  'event ApiPayerSet(address indexed payer, bool allowed)',
  // registry administration
  'function owner() view returns (address)',
  'function apiPayers() view returns (address[])',
  'function isApiPayer(address who) view returns (bool)',
  'function setApiPayer(address payer, bool allowed)',
  // accounts
  'function newAccount(uint256 apiKeyHash, address admin, bool managed, string name, string description, string email)',
  'function convertToChainSecured(uint256 accountHash, address newAdmin)',
  `function getAccount(uint256 accountHash) view returns (${REG_ACCOUNT_VIEW})`,
  `function accountByAdmin(address admin) view returns (${REG_ACCOUNT_VIEW})`,
  // usage keys
  `function setUsageApiKey(uint256 accountHash, uint256 usageKeyHash, uint256 expiration, uint256 balance, string name, string description, ${REG_PERMISSIONS} p)`,
  `function setUsageApiKey(uint256 accountHash, uint256 usageKeyHash, uint256 expiration, uint256 balance, string name, string description, ${REG_PERMISSIONS} p, address wallet)`,
  'function updateUsageApiKeyMetadata(uint256 accountHash, uint256 usageKeyHash, string name, string description)',
  'function removeUsageApiKey(uint256 accountHash, uint256 usageKeyHash)',
  `function getUsageApiKey(uint256 usageKeyHash) view returns (${REG_USAGE_KEY_VIEW})`,
  `function listUsageApiKeys(uint256 accountHash, uint256 offset, uint256 limit) view returns (${REG_USAGE_KEY_VIEW}[] items, uint256 total)`,
  // groups
  'function addGroup(uint256 accountHash, string name, string description, address[] pkpIds, uint256[] cidHashes) returns (uint256 groupId)',
  'function updateGroup(uint256 accountHash, uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes)',
  'function removeGroup(uint256 accountHash, uint256 groupId)',
  'function addPkpToGroup(uint256 accountHash, uint256 groupId, address pkpId)',
  'function removePkpFromGroup(uint256 accountHash, uint256 groupId, address pkpId)',
  'function addActionToGroup(uint256 accountHash, uint256 groupId, uint256 hashedCid)',
  'function removeActionFromGroup(uint256 accountHash, uint256 groupId, uint256 hashedCid)',
  `function getGroup(uint256 accountHash, uint256 groupId) view returns (${REG_GROUP_VIEW})`,
  `function listGroups(uint256 accountHash, uint256 offset, uint256 limit) view returns (${REG_GROUP_VIEW}[] items, uint256 total)`,
  // PKP registry
  'function registerWalletDerivation(uint256 adminHash, address wallet, uint256 derivationPath, string name, string description)',
  `function getWallet(uint256 accountHash, address wallet) view returns (${REG_WALLET_VIEW})`,
  `function listWallets(uint256 accountHash, uint256 offset, uint256 limit) view returns (${REG_WALLET_VIEW}[] items, uint256 total)`,
  `function listWalletsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 limit) view returns (${REG_WALLET_VIEW}[] items, uint256 total)`,
  // actions
  'function addAction(uint256 accountHash, uint256 hashedCid, string cid, string name, string description)',
  'function updateActionMetadata(uint256 accountHash, uint256 hashedCid, string name, string description)',
  'function deleteAction(uint256 accountHash, uint256 hashedCid)',
  `function getAction(uint256 accountHash, uint256 hashedCid) view returns (${REG_ACTION_VIEW})`,
  `function listActions(uint256 accountHash, uint256 offset, uint256 limit) view returns (${REG_ACTION_VIEW}[] items, uint256 total)`,
  `function listActionsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 limit) view returns (${REG_ACTION_VIEW}[] items, uint256 total)`,
  // credits and payments
  'function creditBalance(uint256 accountHash) view returns (uint256)',
  'function debitCredits(uint256 accountHash, uint256 amount) returns (uint256 balance)',
  'function chargeCredits(uint256 accountHash, uint256 amount) returns (uint256 balance)',
  'function recordPayment(uint256 accountHash, string intentId, uint256 amountCents, string provider)',
  'function creditPayment(uint256 accountHash, string intentId) returns (uint256 balance)',
  `function getPayment(uint256 accountHash, string intentId) view returns (${REG_PAYMENT_VIEW})`,
  // batching
  'function multicall(bytes[] calls) returns (bytes[] results)',
];

// Solidity's built-in reverts (Solidity docs, "Panic via assert and Error via require").
const REGISTRY_BUILTIN_ERRORS = ['error Error(string message)', 'error Panic(uint256 code)'];

const REGISTRY_SOL = 'contracts/IPermissionRegistry.sol';

/**
 * The declarations of IPermissionRegistry.sol as ethers fragments: comments stripped, struct
 * names replaced by their tuple, data locations and `external` dropped. Used to check that
 * REGISTRY_ABI mirrors the contract, names, mutability and return values included.
 */
function registrySolFragments() {
  const src = readFileSync(join(HERE, '..', '..', REGISTRY_SOL), 'utf8').replace(/\/\/[^\n]*/g, '');
  const structs = new Map();
  for (const m of src.matchAll(/struct\s+(\w+)\s*\{([^}]*)\}/g)) {
    const fields = m[2].split(';').map((f) => f.trim().replace(/\s+/g, ' ')).filter((f) => f);
    structs.set(m[1], fields);
  }
  const expand = (text) => text.replace(/\b([A-Z]\w*)\b/g, (name) =>
    (structs.has(name) ? `tuple(${structs.get(name).map(expand).join(', ')})` : name));
  const body = src.slice(src.indexOf('{', src.indexOf('interface IPermissionRegistry')) + 1);
  const out = [];
  for (const m of body.matchAll(/\b(function|event|error)\s+[^;]*;/g)) {
    const decl = m[0].slice(0, -1).replace(/\s+/g, ' ')
      .replace(/\b(calldata|memory|external)\b ?/g, '').trim();
    // Expand struct names in parameter lists only (not the declared name itself).
    const open = decl.indexOf('(');
    out.push(ethers.Fragment.from(decl.slice(0, open) + expand(decl.slice(open))));
  }
  return out;
}

const REG_HASH_PARAMS = new Set(['accountHash', 'usageKeyHash', 'apiKeyHash', 'adminHash', 'hashedCid', 'cidHashes', 'derivationPath']);
const REG_GROUP_PARAMS = new Set(['groupId', 'manageIpfsIdsInGroups', 'addPkpToGroups', 'removePkpFromGroups', 'executeInGroups']);
const REG_PERMISSION_KEYS = {
  canCreateGroups: 'can_create_groups', canDeleteGroups: 'can_delete_groups', canCreatePkps: 'can_create_pkps',
  manageIpfsIdsInGroups: 'manage_ipfs_ids_in_groups', addPkpToGroups: 'add_pkp_to_groups',
  removePkpFromGroups: 'remove_pkp_from_groups', executeInGroups: 'execute_in_groups',
};
const U64_MAX_REG = (1n << 64n) - 1n;
const U256_MAX_REG = (1n << 256n) - 1n;

/** uint256 kind of a parameter: a hash, a group id (64 bits in the SDK) or a counter. */
function regKind(name, inError) {
  if (REG_HASH_PARAMS.has(name)) return 'hash';
  // An error reports the group id it was asked for, which may exceed 64 bits.
  if (REG_GROUP_PARAMS.has(name) && !inError) return 'group';
  return 'counter';
}

function isPermissions(p) { return p.baseType === 'tuple' && p.components[0]?.name === 'canCreateGroups'; }

function regJsonUint(v) { return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString(); }

/** A JSON argument value for ethers ParamType `p`; mode: 'min', 'max' or 'random'. */
function regValue(rng, p, mode, kind, ctx) {
  switch (p.baseType) {
    case 'uint256': {
      if (kind === 'hash') return mode === 'min' ? `0x${'00'.repeat(32)}` : mode === 'max' ? `0x${'ff'.repeat(32)}` : rng.hex(32);
      const max = kind === 'group' ? U64_MAX_REG : U256_MAX_REG;
      if (mode === 'min') return 0;
      if (mode === 'max') return regJsonUint(max);
      if (kind === 'group' && rng.chance(0.6)) return rng.range(1, 200);
      return regJsonUint(randomUint(rng, kind === 'group' ? 64 : 256));
    }
    case 'address': return mode === 'min' ? `0x${'00'.repeat(20)}` : mode === 'max' ? `0x${'ff'.repeat(20)}` : rng.hex(20);
    case 'bool': return mode === 'min' ? false : mode === 'max' ? true : rng.chance(0.5);
    case 'string': return mode === 'min' ? '' : mode === 'max' ? `${'€'.repeat(40)}${randomText(rng, 8)}` : randomText(rng);
    case 'bytes': {
      if (ctx.calldata && mode !== 'min') return rng.pick(ctx.calldata);
      return mode === 'min' ? '0x' : rng.hex(mode === 'max' ? 100 : rng.range(0, 70));
    }
    case 'array': {
      const n = mode === 'min' ? 0 : mode === 'max' ? 3 : rng.range(0, 3);
      return Array.from({ length: n }, () => regValue(rng, p.arrayChildren, mode, kind, ctx));
    }
    case 'tuple': {
      const o = {};
      for (const c of p.components) {
        const key = isPermissions(p) ? REG_PERMISSION_KEYS[c.name] : c.name;
        o[key] = regValue(rng, c, mode, regKind(c.name, ctx.inError), ctx);
      }
      return o;
    }
    default: throw new Error(`registry: no generator for ${p.type}`);
  }
}

/** JSON form → the value ethers encodes. */
function regToEthers(p, v) {
  switch (p.baseType) {
    case 'uint256': return BigInt(v);
    case 'array': return v.map((x) => regToEthers(p.arrayChildren, x));
    case 'tuple': return p.components.map((c) => regToEthers(c, v[isPermissions(p) ? REG_PERMISSION_KEYS[c.name] : c.name]));
    default: return v;
  }
}

/** A value ethers decoded → the JSON form, to assert the round trip. */
function regFromEthers(p, x, kind, inError) {
  switch (p.baseType) {
    case 'uint256': return kind === 'hash' ? ethers.toBeHex(x, 32) : regJsonUint(x);
    case 'address': return x.toLowerCase();
    case 'array': return Array.from(x, (e) => regFromEthers(p.arrayChildren, e, kind, inError));
    case 'tuple': {
      const o = {};
      p.components.forEach((c, i) => {
        o[isPermissions(p) ? REG_PERMISSION_KEYS[c.name] : c.name] = regFromEthers(c, x[i], regKind(c.name, inError), inError);
      });
      return o;
    }
    default: return x;
  }
}

/** Arguments of a parameter list as a JSON object keyed by parameter name. */
function regArgs(rng, params, mode, ctx) {
  const o = {};
  for (const p of params) o[p.name] = regValue(rng, p, mode, regKind(p.name, ctx.inError), ctx);
  return o;
}

function regDecoded(params, result, inError) {
  const o = {};
  params.forEach((p, i) => { o[p.name] = regFromEthers(p, result[i], regKind(p.name, inError), inError); });
  return o;
}

const REG_MODES = ['min', 'max', 'random', 'random'];

function genRegistry() {
  const rng = new Rng(0x7265679e);
  const iface = new ethers.Interface(REGISTRY_ABI);
  const builtin = new ethers.Interface(REGISTRY_BUILTIN_ERRORS);

  // The human-readable ABI above says exactly what the contract source declares.
  const full = (f) => f.format('full');
  const fromSol = registrySolFragments().map(full).sort();
  const written = iface.fragments.map(full).sort();
  assertEq(written, fromSol, `registry: REGISTRY_ABI against ${REGISTRY_SOL}`);

  const overloaded = (f) => iface.fragments.filter((g) => g.type === f.type && g.name === f.name).length > 1;
  const label = (f, i) => `${f.name}${overloaded(f) ? `/${f.inputs.length}` : ''}-${i}`;

  const calls = [];
  const results = [];
  const functions = iface.fragments.filter((f) => f.type === 'function');
  for (const f of functions) {
    const signature = f.format('sighash');
    assertEq(f.selector, ethers.id(signature).slice(0, 10), `registry ${signature}: selector`);
    const modes = f.inputs.length === 0 ? ['min'] : REG_MODES;
    modes.forEach((mode, i) => {
      const ctx = { calldata: calls.length ? calls.slice(-20).map((c) => c.calldata) : null };
      const args = regArgs(rng, f.inputs, mode, ctx);
      const calldata = iface.encodeFunctionData(f, f.inputs.map((p) => regToEthers(p, args[p.name])));
      assertEq(regDecoded(f.inputs, iface.decodeFunctionData(f, calldata), false), args, `registry ${signature}: calldata round trip`);
      calls.push({ name: label(f, i), signature, selector: f.selector, args, calldata });
    });
    if (f.outputs.length === 0) continue;
    REG_MODES.forEach((mode, i) => {
      const ctx = { calldata: calls.slice(-20).map((c) => c.calldata) };
      const values = f.outputs.map((p) => regValue(rng, p, mode, regKind(p.name, false), ctx));
      const data = iface.encodeFunctionResult(f, f.outputs.map((p, k) => regToEthers(p, values[k])));
      const back = iface.decodeFunctionResult(f, data);
      // Two return values are a list page (items, total); one is returned as it is.
      const list = f.outputs.length === 2;
      const json = list ? { [f.outputs[0].name]: values[0], [f.outputs[1].name]: values[1] } : values[0];
      const decodedJson = list
        ? regDecoded(f.outputs, back, false)
        : regFromEthers(f.outputs[0], back[0], regKind(f.outputs[0].name, false), false);
      assertEq(decodedJson, json, `registry ${signature}: result round trip`);
      results.push({ name: label(f, i), signature, result: json, data });
    });
  }

  const events = [];
  for (const f of iface.fragments.filter((x) => x.type === 'event')) {
    const signature = f.format('sighash');
    assertEq(f.topicHash, ethers.id(signature), `registry ${signature}: topic0`);
    REG_MODES.forEach((mode, i) => {
      const args = regArgs(rng, f.inputs, mode, {});
      const log = iface.encodeEventLog(f, f.inputs.map((p) => regToEthers(p, args[p.name])));
      assertEq(regDecoded(f.inputs, iface.decodeEventLog(f, log.data, log.topics), false), args, `registry ${signature}: log round trip`);
      events.push({ name: label(f, i), signature, topic0: f.topicHash, args, topics: log.topics, data: log.data });
    });
  }

  const errors = [];
  const errorFragments = [
    ...iface.fragments.filter((x) => x.type === 'error').map((f) => [iface, f]),
    ...builtin.fragments.map((f) => [builtin, f]),
  ];
  for (const [owner, f] of errorFragments) {
    const signature = f.format('sighash');
    assertEq(f.selector, ethers.id(signature).slice(0, 10), `registry ${signature}: selector`);
    REG_MODES.forEach((mode, i) => {
      const args = regArgs(rng, f.inputs, mode, { inError: true });
      const data = owner.encodeErrorResult(f, f.inputs.map((p) => regToEthers(p, args[p.name])));
      assertEq(regDecoded(f.inputs, owner.decodeErrorResult(f, data), true), args, `registry ${signature}: revert round trip`);
      errors.push({ name: label(f, i), signature, selector: f.selector, args, data });
    });
  }
  // Solidity's own encodings of the built-ins: require(false, "Not enough Ether provided.") and
  // an arithmetic overflow (Panic(0x11)).
  assertEq(builtin.encodeErrorResult('Error', ['Not enough Ether provided.']),
    '0x08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000000000001a4e6f7420656e6f7567682045746865722070726f76696465642e000000000000',
    'registry: Error(string) encoding');
  assertEq(builtin.encodeErrorResult('Panic', [0x11n]),
    '0x4e487b710000000000000000000000000000000000000000000000000000000000000011', 'registry: Panic(uint256) encoding');

  return {
    file: 'registry.json',
    description: `Permission registry ABI: an ethers Interface of human-readable signatures mirroring ${REGISTRY_SOL} (checked against its declarations); calldata from Interface.encodeFunctionData, return data from encodeFunctionResult, logs from encodeEventLog, revert data from encodeErrorResult (plus Error(string) and Panic(uint256)); arguments in the JSON forms of enact/chain/registry.hpp.`,
    sections: { calls, results, events, errors },
  };
}

// ---------------------------------------------------------------------------------------------
// Output: one field per line inside each vector, values compact, so diffs stay reviewable.

function render(result, libs) {
  const lines = ['{'];
  const head = { description: result.description, generator: GENERATOR, libraries: libs };
  for (const [k, v] of Object.entries(head)) lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  const sections = result.sections ?? { vectors: result.vectors };
  const names = Object.keys(sections);
  names.forEach((sec, si) => {
    lines.push(`  ${JSON.stringify(sec)}: [`);
    const vs = sections[sec];
    vs.forEach((v, vi) => {
      lines.push('    {');
      const entries = Object.entries(v);
      entries.forEach(([k, x], ki) => lines.push(`      ${JSON.stringify(k)}: ${JSON.stringify(x)}${ki + 1 < entries.length ? ',' : ''}`));
      lines.push(`    }${vi + 1 < vs.length ? ',' : ''}`);
    });
    lines.push(`  ]${si + 1 < names.length ? ',' : ''}`);
  });
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** First differing entry between two renderings of a file, for --check. */
function describeDiff(file, committed, fresh) {
  let a;
  try {
    a = JSON.parse(committed);
  } catch (e) {
    return `${file}: committed file is not valid JSON (${e.message})`;
  }
  const b = JSON.parse(fresh);
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (isDeepStrictEqual(a[key], b[key])) continue;
    if (Array.isArray(a[key]) && Array.isArray(b[key])) {
      const n = Math.max(a[key].length, b[key].length);
      for (let i = 0; i < n; i++) {
        if (isDeepStrictEqual(a[key][i], b[key][i])) continue;
        const clip = (x) => { const s = JSON.stringify(x) ?? '(absent)'; return s.length > 400 ? `${s.slice(0, 400)}…` : s; };
        return `${file}: ${key}[${i}] differs (committed ${a[key].length} entries, regenerated ${b[key].length})\n` +
          `  committed:   ${clip(a[key][i])}\n  regenerated: ${clip(b[key][i])}`;
      }
    }
    return `${file}: field "${key}" differs\n  committed:   ${JSON.stringify(a[key])}\n  regenerated: ${JSON.stringify(b[key])}`;
  }
  const la = committed.split('\n');
  const lb = fresh.split('\n');
  const i = la.findIndex((l, k) => l !== lb[k]);
  return `${file}: same content, different formatting at line ${i + 1}`;
}

async function main() {
  const check = process.argv.includes('--check');
  const libs = libraryVersions();
  const generators = [genTypedData, genAbi, genRlp, genEip55, genCid, genCron, genKeys, genPkp, genTx1559, genRegistry];
  let failed = false;
  let total = 0;
  for (const gen of generators) {
    const result = await gen();
    const text = render(result, libs);
    total += Buffer.byteLength(text);
    const path = join(HERE, result.file);
    const count = result.sections
      ? Object.entries(result.sections).map(([k, v]) => `${v.length} ${k}`).join(', ')
      : `${result.vectors.length} vectors`;
    const rejected = result.rejected && Object.keys(result.rejected).length
      ? `; skipped: ${Object.entries(result.rejected).map(([r, n]) => `${n}× ${r}`).join('; ')}`
      : '';
    if (check) {
      let committed = null;
      try {
        committed = readFileSync(path, 'utf8');
      } catch {
        console.error(`${result.file}: missing (run node ${GENERATOR})`);
        failed = true;
        continue;
      }
      if (committed !== text) {
        console.error(describeDiff(result.file, committed, text));
        failed = true;
      } else {
        console.log(`${result.file}: up to date (${count})`);
      }
    } else {
      writeFileSync(path, text);
      console.log(`${result.file}: ${count}, ${Buffer.byteLength(text)} bytes${rejected}`);
    }
  }
  if (!check) console.log(`total ${total} bytes`);
  if (total > 3 * 1024 * 1024) throw new Error(`vector files total ${total} bytes, over the 3 MiB budget`);
  if (failed) {
    console.error(`vectors differ from what ${GENERATOR} produces: regenerate with node ${GENERATOR} and review the diff`);
    process.exit(1);
  }
}

await main();
