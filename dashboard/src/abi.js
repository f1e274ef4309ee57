// SPDX-License-Identifier: Apache-2.0
// The Solidity ABI as far as the permission registry needs it (docs/protocol.md §3): encoding a
// call from its signature and arguments, decoding a view's answer and a custom error's revert
// data. Types are written as in a signature: uint256, address, bool, string, bytes, T[] and
// tuples "(T1,T2,…)"; uint256 values are BigInt (numbers and 0x strings are accepted on input).
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";

const kWord = 64; // hex digits of one 32-byte word

/** Splits "a,(b,c)[],d" at its top-level commas. */
function splitTop(list) {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; ++i) {
    if (list[i] === "(") ++depth;
    else if (list[i] === ")") --depth;
    else if (list[i] === "," && depth === 0) {
      out.push(list.slice(start, i));
      start = i + 1;
    }
  }
  if (list.length) out.push(list.slice(start));
  return out;
}

function parse(type) {
  if (type.endsWith("[]")) return { kind: "array", inner: parse(type.slice(0, -2)) };
  if (type.startsWith("(")) return { kind: "tuple", parts: splitTop(type.slice(1, -1)).map(parse) };
  if (!["uint256", "address", "bool", "string", "bytes"].includes(type)) throw new Error(`ABI type ${type} is not supported`);
  return { kind: type };
}

const isDynamic = (t) => t.kind === "string" || t.kind === "bytes" || t.kind === "array" || (t.kind === "tuple" && t.parts.some(isDynamic));
const headWords = (t) => (t.kind === "tuple" && !isDynamic(t) ? t.parts.reduce((n, p) => n + headWords(p), 0) : 1);

/** The argument types of "name(T1,T2)". */
export function signatureTypes(signature) {
  return splitTop(signature.slice(signature.indexOf("(") + 1, -1));
}

/** The 4-byte selector of a function or error signature, 0x hex. */
export function selector(signature) {
  return `0x${bytesToHex(keccak_256(new TextEncoder().encode(signature)).slice(0, 4))}`;
}

function word(value) {
  const n = BigInt(value);
  if (n < 0n || n >= 1n << 256n) throw new Error(`${value} does not fit in a uint256`);
  return n.toString(16).padStart(kWord, "0");
}

function bytesTail(bytes) {
  const hex = bytesToHex(bytes);
  return word(bytes.length) + hex.padEnd(Math.ceil(hex.length / kWord) * kWord, "0");
}

function encodeOne(t, v) {
  switch (t.kind) {
    case "uint256":
      return word(v);
    case "bool":
      return word(v ? 1 : 0);
    case "address":
      if (!/^0x[0-9a-fA-F]{40}$/.test(v)) throw new Error(`${v} is not an address`);
      return v.slice(2).toLowerCase().padStart(kWord, "0");
    case "string":
      return bytesTail(new TextEncoder().encode(v));
    case "bytes":
      return bytesTail(hexToBytes(v.replace(/^0x/, "")));
    case "array":
      return word(v.length) + encodeTuple(v.map(() => t.inner), v);
    default:
      return encodeTuple(t.parts, v);
  }
}

function encodeTuple(types, values) {
  if (types.length !== values.length) throw new Error(`${values.length} values for ${types.length} ABI types`);
  let offset = types.reduce((n, t) => n + headWords(t), 0) * 32;
  let head = "";
  let tail = "";
  types.forEach((t, i) => {
    const enc = encodeOne(t, values[i]);
    if (!isDynamic(t)) return void (head += enc);
    head += word(offset);
    tail += enc;
    offset += enc.length / 2;
  });
  return head + tail;
}

/** The calldata of `signature` ("addGroup(uint256,string,…)") with `args`, 0x hex. */
export function encodeCall(signature, args) {
  return selector(signature) + encodeTuple(signatureTypes(signature).map(parse), args);
}

/** An address in its EIP-55 mixed-case form. */
export function checksumAddress(address) {
  const lower = address.slice(2).toLowerCase();
  const hash = bytesToHex(keccak_256(new TextEncoder().encode(lower)));
  let out = "0x";
  for (let i = 0; i < 40; ++i) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i];
  return out;
}

function wordAt(hex, at) {
  if (at + kWord > hex.length) throw new Error("ABI data is too short");
  return BigInt(`0x${hex.slice(at, at + kWord)}`);
}

// `at` and the offsets are in hex digits of `hex` (without 0x).
function decodeOne(t, hex, at) {
  switch (t.kind) {
    case "uint256":
      return wordAt(hex, at);
    case "bool":
      return wordAt(hex, at) !== 0n;
    case "address":
      wordAt(hex, at);
      return checksumAddress(`0x${hex.slice(at + 24, at + kWord)}`);
    case "string":
    case "bytes": {
      const n = Number(wordAt(hex, at)) * 2;
      if (at + kWord + n > hex.length) throw new Error("ABI data is too short");
      const body = hex.slice(at + kWord, at + kWord + n);
      return t.kind === "bytes" ? `0x${body}` : new TextDecoder().decode(hexToBytes(body));
    }
    case "array": {
      const n = Number(wordAt(hex, at));
      if (n > hex.length / kWord) throw new Error("ABI array longer than its data");
      return decodeTuple(Array(n).fill(t.inner), hex, at + kWord);
    }
    default:
      return decodeTuple(t.parts, hex, at);
  }
}

function decodeTuple(types, hex, base) {
  let at = base;
  return types.map((t) => {
    const value = isDynamic(t) ? decodeOne(t, hex, base + Number(wordAt(hex, at)) * 2) : decodeOne(t, hex, at);
    at += headWords(t) * kWord;
    return value;
  });
}

/** The values of ABI data (0x hex) holding `types` (signature-style strings). */
export function decode(types, data) {
  return decodeTuple(types.map(parse), data.replace(/^0x/, ""), 0);
}
