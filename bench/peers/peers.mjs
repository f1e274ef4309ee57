// SPDX-License-Identifier: Apache-2.0
// The benchmark cases of bench/sdk_bench.cpp run with the ecosystem's own libraries — ethers,
// viem, @metamask/eth-sig-util and ipfs-only-hash — on the same inputs, for the enact/peer ratios
// in docs/benchmarks.md. Verification cases start from the envelope's JSON text, as a server does.
// Prints one JSON object: {case: {library: nanoseconds per operation}}.
//
//   node bench/peers/peers.mjs ENVELOPE_JSON_FILE [--quick]
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

// The libraries are the ones tests/vectors pins (npm ci --prefix tests/vectors).
const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'vectors', 'package.json'));
const ethers = require('ethers');
const viem = require('viem');
const sigUtil = require('@metamask/eth-sig-util');
const Hash = require('ipfs-only-hash');

const env = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const minMs = process.argv.includes('--quick') ? 200 : 1500;
const text = JSON.stringify(env.typed_data);
const signature = env.signature;
const expected = env.typed_data.message.address.toLowerCase();
const must = (addr) => {
  if (addr.toLowerCase() !== expected) throw new Error(`wrong signer ${addr}`);
};
const pattern = (n) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 0xff;
  return b;
};

async function measure(fn) {
  const deadline = BigInt(minMs) * 1000000n;
  for (let i = 0; i < 5; i++) await fn();  // warm-up (JIT)
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < deadline || n < 10) {
    await fn();
    n++;
    elapsed = process.hrtime.bigint() - start;
  }
  return Number(elapsed) / n;
}

const withoutDomain = (types) => {
  const t = { ...types };
  delete t.EIP712Domain;
  return t;
};

const setUsageApiKey =
  'function setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))';
const setUsageApiKeyArgs = [0x1234567890abcdefn, 0xfedcba0987654321n, 1900000000n, 1000000n, 'ci deploy key',
  'used by the deploy pipeline', [true, false, true, [1n, 2n, 3n], [1n, 2n, 3n], [], [1n, 2n, 3n]]];
const ethersIface = new ethers.Interface([setUsageApiKey]);
const viemAbi = viem.parseAbi([setUsageApiKey]);
// viem's parseAbi names no tuple components, so it takes the tuple as an array, as ethers does.
const viemArgs = setUsageApiKeyArgs;
if (ethersIface.encodeFunctionData('setUsageApiKey', setUsageApiKeyArgs) !==
    viem.encodeFunctionData({ abi: viemAbi, functionName: 'setUsageApiKey', args: viemArgs }))
  throw new Error('ethers and viem disagree on setUsageApiKey calldata');

const bytes32 = pattern(32);
const bytes4k = pattern(4096);
const file1k = pattern(1024);
const file1m = pattern(1 << 20);

const cases = {
  'keccak256/32': {
    ethers: () => ethers.keccak256(bytes32),
    viem: () => viem.keccak256(bytes32),
  },
  'keccak256/4096': {
    ethers: () => ethers.keccak256(bytes4k),
    viem: () => viem.keccak256(bytes4k),
  },
  envelope_digest: {
    ethers: () => {
      const td = JSON.parse(text);
      return ethers.TypedDataEncoder.hash(td.domain, withoutDomain(td.types), td.message);
    },
    viem: () => viem.hashTypedData(JSON.parse(text)),
    'eth-sig-util': () => sigUtil.TypedDataUtils.eip712Hash(JSON.parse(text), sigUtil.SignTypedDataVersion.V4),
  },
  envelope_verify: {
    ethers: () => {
      const td = JSON.parse(text);
      must(ethers.verifyTypedData(td.domain, withoutDomain(td.types), td.message, signature));
    },
    viem: async () => must(await viem.recoverTypedDataAddress({ ...JSON.parse(text), signature })),
    'eth-sig-util': () =>
      must(sigUtil.recoverTypedSignature({ data: JSON.parse(text), signature, version: sigUtil.SignTypedDataVersion.V4 })),
  },
  abi_encode_setUsageApiKey: {
    ethers: () => ethersIface.encodeFunctionData('setUsageApiKey', setUsageApiKeyArgs),
    viem: () => viem.encodeFunctionData({ abi: viemAbi, functionName: 'setUsageApiKey', args: viemArgs }),
  },
  'cid_v0/1024': { 'ipfs-only-hash': () => Hash.of(file1k) },
  'cid_v0/1048576': { 'ipfs-only-hash': () => Hash.of(file1m) },
};

const results = {};
for (const [name, libs] of Object.entries(cases)) {
  results[name] = {};
  for (const [lib, fn] of Object.entries(libs)) results[name][lib] = await measure(fn);
}
console.log(JSON.stringify(results));
