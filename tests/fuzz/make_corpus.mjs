#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Seed corpora for the fuzz targets, extracted from the interop vectors (tests/vectors/*.json)
// and the TDX samples (tests/fixtures/tdx): one directory per target under --out, one file
// per seed, each laid out as that target's fuzz_<target>.cpp describes its input. Safe to run
// again (it rewrites the same files; libFuzzer's additions stay).
//
//   node tests/fuzz/make_corpus.mjs --out build-fuzz/corpus [--schema-binary build-fuzz/fuzz_schema]
//
// ethers (from tests/vectors/node_modules, installed by scripts/install-deps) signs the envelope
// seeds; without it those seeds are unsigned, and the envelope target then reaches the signature
// checks only by mutation. The schema seeds are written by fuzz_schema itself (from the route
// table's schemas), so they need the fuzz tree built first.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const VECTORS = join(ROOT, 'tests/vectors');
const TDX = join(ROOT, 'tests/fixtures/tdx');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const OUT = resolve(option('--out', join(ROOT, 'build-fuzz/corpus')));
const SCHEMA_BINARY = resolve(option('--schema-binary', join(OUT, '../fuzz_schema')));

let ethers = null;
try {
  ({ ethers } = createRequire(join(VECTORS, 'package.json'))('ethers'));
} catch {
  console.error('make_corpus: ethers not installed (npm ci --prefix tests/vectors); ' +
    'envelope seeds stay unsigned');
}

// --- helpers ---------------------------------------------------------------------------------

const counts = {};
/** Writes one seed (a Buffer or a string) for `target`; the name is a hash of the content. */
function seed(target, content) {
  const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  const dir = join(OUT, target);
  mkdirSync(dir, { recursive: true });
  const name = 'seed-' + createHash('sha1').update(data).digest('hex');
  writeFileSync(join(dir, name), data);
  counts[target] = (counts[target] ?? 0) + 1;
}
const withByte = (b, rest) => Buffer.concat([Buffer.from([b & 0xff]), Buffer.from(rest)]);
const fromHex = (h) => Buffer.from(h.replace(/^0x/i, ''), 'hex');
const vectors = (name) => JSON.parse(readFileSync(join(VECTORS, name), 'utf8'));
const tdx = (path) => readFileSync(join(TDX, path));
/** Every `step`-th element, so a large vector file gives a corpus of a useful size. */
const sample = (list, max) => list.filter((_, i) => i % Math.max(1, Math.ceil(list.length / max)) === 0);

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(buf) {
  let n = BigInt('0x' + (buf.toString('hex') || '0'));
  let out = '';
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of buf) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}
function base58Decode(s) {
  let n = 0n;
  for (const c of s) n = n * 58n + BigInt(B58.indexOf(c));
  let h = n.toString(16);
  if (h.length % 2) h = '0' + h;
  const body = n === 0n ? Buffer.alloc(0) : Buffer.from(h, 'hex');
  const zeros = s.length - s.replace(/^1+/, '').length;
  return Buffer.concat([Buffer.alloc(zeros), body]);
}
function base32(buf) {
  const A = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0, acc = 0, out = '';
  for (const b of buf) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += A[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += A[(acc << (5 - bits)) & 31];
  return out;
}
function base32Decode(s) {
  const A = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0, acc = 0;
  const out = [];
  for (const c of s) {
    acc = (acc << 5) | A.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
    acc &= (1 << bits) - 1;
  }
  return Buffer.from(out);
}
const be64 = (n) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};

const keys = vectors('keys.json').vectors;
const abi = vectors('abi.json');
const rlp = vectors('rlp.json').vectors;
const tx = vectors('tx1559.json').vectors;
const cid = vectors('cid.json').vectors;
const cron = vectors('cron.json').vectors;
const registry = vectors('registry.json');
const typed = vectors('typed_data.json').vectors;

// --- codecs ----------------------------------------------------------------------------------

const blobs = [
  ...sample(keys, 8).flatMap((k) => [k.private_key, k.public_key, k.address, k.message_hex]),
  ...sample(rlp, 8).map((v) => v.encoded),
  ...sample(tx, 4).map((v) => v.raw),
].map(fromHex);
blobs.push(Buffer.alloc(0), Buffer.from([0]), Buffer.from([0, 0, 1]), Buffer.alloc(32, 0xff));

for (const s of ['', '0x', '0X', '0xabc', '0xgg', 'DEADbeef', '00']) seed('hex', s);
for (const k of sample(keys, 8)) {
  seed('hex', k.private_key);
  seed('hex', k.address);
  seed('hex', k.public_key.slice(2).toUpperCase());
}
for (const b of blobs) {
  seed('base64', b.toString('base64'));
  seed('base64', b.toString('base64url'));
  seed('base58', base58(b));
  seed('base32', base32(b));
}
for (const s of ['', '=', 'QQ==', 'QR==', 'QQ', 'QUI=', 'A===', 'Zm9v\n']) seed('base64', s);
for (const s of ['', '1', '111', '0OIl', '2']) seed('base58', s);
for (const s of ['', 'a', 'ae', 'af', 'aaaaaaa', 'A', 'mzxw6===']) seed('base32', s);

// u256: decimal and hex texts, and 64-byte pairs for the divmod check.
for (const s of ['0', '00', '0x', '0x0', '-0', '-1', '0xFF', '1 ', '+1',
  '115792089237316195423570985008687907853269984665640564039457584007913129639935',
  '115792089237316195423570985008687907853269984665640564039457584007913129639936',
  '0x' + 'f'.repeat(64), '0x1' + '0'.repeat(64),
  '-57896044618658097711785492504343953926634992332820282019728792003956564819968',
  '-0x8' + '0'.repeat(63)]) seed('u256', s);
for (const v of sample(tx, 16)) {
  seed('u256', v.max_fee_per_gas);
  seed('u256', v.value ?? '0');
  seed('u256', '0x' + BigInt(v.max_fee_per_gas).toString(16));
}
for (const e of sample(abi.encodings.filter((e) => /^u?int/.test(e.types[0])), 16)) seed('u256', e.values[0]);
for (let i = 0; i + 1 < keys.length && i < 16; i += 2)
  seed('u256', Buffer.concat([fromHex(keys[i].private_key), fromHex(keys[i + 1].eip191_hash)]));
seed('u256', Buffer.concat([Buffer.alloc(32, 0xff), Buffer.from('00'.repeat(31) + '03', 'hex')]));
seed('u256', Buffer.concat([Buffer.alloc(32, 0xff), Buffer.from('00000001' + 'ff'.repeat(28), 'hex')]));

// --- RLP, ABI, transactions --------------------------------------------------------------------

for (const v of rlp) seed('rlp', fromHex(v.encoded));
for (const v of sample(tx, 20)) {
  seed('rlp', fromHex(v.raw).subarray(1));
  seed('tx1559', fromHex(v.raw));
  seed('tx1559', fromHex(v.unsigned));
}

// The ABI target's type table, read from its source so the two cannot drift apart.
const abiSource = readFileSync(join(HERE, 'fuzz_abi.cpp'), 'utf8');
const table = abiSource
  .slice(abiSource.indexOf('// BEGIN abi type table'), abiSource.indexOf('// END abi type table'))
  .split('\n')
  .map((l) => l.match(/^\s*"(.*)",\s*$/))
  .filter(Boolean)
  .map((m) => m[1]);
if (table.length === 0) throw new Error('make_corpus: no ABI type table in fuzz_abi.cpp');
const abiSeeds = [
  ...abi.encodings.map((e) => [e.types.join(','), fromHex(e.encoded)]),
  ...abi.calls.map((c) => [c.types.join(','), fromHex(c.calldata).subarray(4)]),
];
for (const [types, data] of abiSeeds) {
  const index = table.indexOf(types);
  if (index >= 0) seed('abi', withByte(index, data));
}
for (let i = 0; i < table.length; ++i) seed('abi', withByte(i, Buffer.alloc(64)));

// --- registry -----------------------------------------------------------------------------------

const selectors = new Map(registry.calls.map((c) => [c.signature, c.selector]));
for (const c of registry.calls) seed('registry', withByte(0, fromHex(c.calldata)));
for (const e of registry.events)
  seed('registry', withByte(1, Buffer.concat([Buffer.from([e.topics.length]),
    ...e.topics.map(fromHex), fromHex(e.data)])));
for (const e of registry.errors) seed('registry', withByte(2, fromHex(e.data)));
for (const r of registry.results) {
  const sel = selectors.get(r.signature) ?? (ethers ? ethers.id(r.signature).slice(0, 10) : null);
  if (sel) seed('registry', withByte(3, Buffer.concat([fromHex(sel), fromHex(r.data)])));
}

// --- JSON-RPC replies ------------------------------------------------------------------------

const reply = (body) => withByte(1, JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }));
for (const r of ['0x0', '0x1', '0xde0b6b3a7640000', '0x00', '0x', '0X1', '0x' + 'f'.repeat(64),
  '0x' + '1'.repeat(65), null, true, [], {}, ['0x1', '0x2'], { number: '0x10', hash: '0x' + 'ab'.repeat(32) }])
  seed('rpc', reply({ result: r }));
for (const v of sample(tx, 4)) seed('rpc', reply({ result: v.hash }));
for (const e of sample(registry.errors, 8)) {
  seed('rpc', reply({ error: { code: 3, message: 'execution reverted', data: e.data } }));
  seed('rpc', reply({ error: { code: -32000, message: 'execution reverted', data: { data: e.data } } }));
}
seed('rpc', reply({ error: { code: -32601, message: 'the method does not exist' } }));
seed('rpc', reply({ error: { code: 9223372036854775808, message: 'x' } }));
seed('rpc', withByte(1, '{"jsonrpc":"2.0","id":"1","result":"0x1"}'));
seed('rpc', withByte(2, '{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
seed('rpc', withByte(1, '{"jsonrpc":"2.0","id":1,"result":"0x1","error":null}'));
seed('rpc', withByte(1, '[{"jsonrpc":"2.0","id":1,"result":"0x1"}]'));

// --- typed data and envelopes ------------------------------------------------------------------

for (const v of typed) seed('typed_data', JSON.stringify(v.document));

const KINDS = ['CreateWallet', 'ConvertAccount', 'AddUsageApiKey', 'BillingAuth'];
const CHAIN_ID = 1;       // the envelope target's fixed expectation
const NOW = 1700000000;
function envelopeDocument(kind, address, issuedAt, chainId = CHAIN_ID) {
  return {
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }],
      [kind]: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }],
    },
    primaryType: kind,
    domain: { name: 'Svc ChainSecured', version: '1', chainId },
    message: { address, issuedAt },
  };
}
for (const [k, kind] of KINDS.entries()) {
  for (const key of keys.slice(0, 3)) {
    for (const issuedAt of [NOW, NOW - 300, NOW + 301]) {
      const doc = envelopeDocument(kind, key.address, issuedAt);
      let signature = '0x' + '00'.repeat(65);
      if (ethers) {
        const wallet = new ethers.Wallet(key.private_key);
        const { EIP712Domain, ...types } = doc.types;
        signature = await wallet.signTypedData(doc.domain, types, doc.message);
      }
      const text = JSON.stringify(doc);
      seed('envelope', Buffer.concat([Buffer.from([k]), Buffer.from(text), Buffer.from([0]),
        Buffer.from(signature)]));
      seed('envelope', withByte(k | 4, Buffer.from(JSON.stringify({ typed_data: doc, signature }))
        .toString('base64')));
      seed('typed_data', text);
    }
  }
}
// Version 2 (docs/protocol.md §2 "Envelope version 2"), for the target's registry, account and request.
const MEMBERS2 = {
  CreateWallet: [['address', 'address'], ['issuedAt', 'uint256'], ['nonce', 'bytes32']],
  AddUsageApiKey: [['address', 'address'], ['issuedAt', 'uint256'], ['nonce', 'bytes32']],
  ConvertAccount: [['address', 'address'], ['account', 'bytes32'], ['issuedAt', 'uint256'], ['nonce', 'bytes32']],
  BillingAuth: [['address', 'address'], ['method', 'string'], ['path', 'string'], ['bodyHash', 'bytes32'], ['issuedAt', 'uint256']],
};
const KECCAK_EMPTY = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';
function envelope2Document(kind, address, issuedAt) {
  const values = { address, issuedAt, nonce: '0x' + '22'.repeat(32), account: '0x' + '11'.repeat(32),
    method: 'GET', path: '/core/v1/billing/balance', bodyHash: KECCAK_EMPTY };
  return {
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }],
      [kind]: MEMBERS2[kind].map(([name, type]) => ({ name, type })),
    },
    primaryType: kind,
    domain: { name: 'Svc ChainSecured', version: '2', chainId: CHAIN_ID,
      verifyingContract: '0x000000000000000000000000000000000000c0de' },
    message: Object.fromEntries(MEMBERS2[kind].map(([name]) => [name, values[name]])),
  };
}
for (const [k, kind] of KINDS.entries()) {
  for (const key of keys.slice(0, 2)) {
    const doc = envelope2Document(kind, key.address, NOW);
    let signature = '0x' + '00'.repeat(65);
    if (ethers) {
      const { EIP712Domain, ...types } = doc.types;
      signature = await new ethers.Wallet(key.private_key).signTypedData(doc.domain, types, doc.message);
    }
    const text = JSON.stringify(doc);
    seed('envelope', Buffer.concat([Buffer.from([k]), Buffer.from(text), Buffer.from([0]), Buffer.from(signature)]));
    seed('envelope', withByte(k | 4, Buffer.from(JSON.stringify({ typed_data: doc, signature })).toString('base64')));
  }
}
seed('envelope', withByte(0, '{}\0'));
seed('envelope', withByte(4, 'e30='));

// --- CIDs and cron ---------------------------------------------------------------------------

for (const v of cid) {
  seed('cid', v.cid_v0);
  seed('cid', v.cid_v1);
  const v1 = base32Decode(v.cid_v1.slice(1));
  seed('cid', 'z' + base58(v1));
  seed('cid', v1);
  seed('cid', base58Decode(v.cid_v0));
}
for (const s of ['', 'Qm', 'b', 'z', 'f01', 'bafy']) seed('cid', s);

for (const v of cron) seed('cron', Buffer.concat([be64(Math.floor(Date.parse(v.start) / 1000)),
  Buffer.from(v.expression)]));
for (const [t, e] of [[0, '* * * * *'], [-62135596800, '0 0 29 2 *'], [253402300799, '* * * * * *'],
  [-(2n ** 63n), '@yearly'], [2n ** 63n - 1n, '@hourly'], [1700000000, '0 0 30 2 *']])
  seed('cron', Buffer.concat([be64(t), Buffer.from(e)]));

// --- attestation -------------------------------------------------------------------------------

if (existsSync(TDX)) {
  for (const f of ['dcap-qvl/tdx_quote.bin', 'dcap-qvl/tdx_quote_outdated.bin', 'dcap-qvl/sgx_quote.bin',
    'near-mpc/quote.bin', 'dstack/ra-tls-tdx_quote.bin'])
    seed('quote', withByte(0, tdx(f)));
  for (const f of ['dcap-qvl/tdx-quote.hex', 'dcap-qvl/quote-from-tappd.hex', 'dcap-qvl/near_gas_quote.hex',
    'dstack/simulator-legacy-quote.hex']) {
    seed('quote', withByte(1, tdx(f)));
    seed('quote', withByte(0, fromHex(tdx(f).toString('utf8').trim())));
  }
  for (const f of ['dstack/verifier-quote-report.json', 'dstack/tdx-lite-getquote.json',
    'dstack-examples/rtmr3-report.json']) {
    seed('quote', withByte(2, tdx(f)));
    seed('quote', withByte(3, JSON.parse(tdx(f)).event_log));
  }
  seed('quote', withByte(3, tdx('dstack/simulator-legacy-eventlog.json')));
  for (const f of ['dcap-qvl/tdx_quote_collateral.json', 'dcap-qvl/sgx_quote_collateral.json',
    'near-mpc/collateral.json'])
    seed('quote', withByte(4, tdx(f)));
  const tcbInfo = JSON.parse(tdx('near-mpc/tcb_info.json'));
  const info = { app_id: 'ab'.repeat(20), compose_hash: tcbInfo.compose_hash, tcb_info: tcbInfo };
  seed('quote', withByte(6, JSON.stringify(info)));
  seed('quote', withByte(6, JSON.stringify({ ...info, tcb_info: JSON.stringify(tcbInfo) })));
  seed('quote', withByte(6, JSON.parse(tcbInfo.app_compose).docker_compose_file));
} else {
  console.error(`make_corpus: ${TDX} not found; no quote seeds`);
}
// A DNS response (RFC 1035 §4.1) for example.com CAA with two records (RFC 8659 §4.1).
function caaRecord(flags, tag, value) {
  const rdata = Buffer.concat([Buffer.from([flags, tag.length]), Buffer.from(tag), Buffer.from(value)]);
  const rr = Buffer.alloc(12);
  rr.writeUInt16BE(0xc00c, 0);  // the name: a pointer to the question's
  rr.writeUInt16BE(257, 2);     // CAA
  rr.writeUInt16BE(1, 4);       // IN
  rr.writeUInt32BE(300, 6);
  rr.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([rr, rdata]);
}
const question = Buffer.concat([Buffer.from('\x07example\x03com\x00', 'latin1'),
  Buffer.from([0x01, 0x01, 0x00, 0x01])]);
const answers = [caaRecord(0, 'issue', 'letsencrypt.org; accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1'),
  caaRecord(128, 'iodef', 'mailto:security@example.com')];
const header = Buffer.from([0x12, 0x34, 0x81, 0x80, 0, 1, 0, answers.length, 0, 0, 0, 0]);
seed('quote', withByte(5, Buffer.concat([header, question, ...answers])));

// --- server request bodies ---------------------------------------------------------------------

if (existsSync(SCHEMA_BINARY)) {
  const dir = join(OUT, 'schema');
  mkdirSync(dir, { recursive: true });
  execFileSync(SCHEMA_BINARY, [], { env: { ...process.env, ENACT_FUZZ_SCHEMA_SEEDS: dir }, stdio: 'inherit' });
  counts.schema = readdirSync(dir).length;
} else {
  console.error(`make_corpus: ${SCHEMA_BINARY} not built; no schema seeds`);
}

console.log('make_corpus: ' + Object.entries(counts).map(([t, n]) => `${t} ${n}`).join(', ') +
  ` -> ${OUT}`);
