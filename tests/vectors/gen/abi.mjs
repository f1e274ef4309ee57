// SPDX-License-Identifier: Apache-2.0
// abi.json: Solidity ABI encodings and function calldata (ethers).

import {
  assertEq, ATOMIC_TYPES, ethers, randomAddress, randomIdent, randomInt, randomText, randomUint,
  Rng,
} from './common.mjs';

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

export function genAbi() {
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
