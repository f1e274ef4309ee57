// SPDX-License-Identifier: Apache-2.0
// The browser wallet (EIP-1193, window.ethereum) and the EIP-712 envelopes of docs/protocol.md §2
// "Envelope version 2", signed with eth_signTypedData_v4 for the server's deployment (chain id and
// registry of GET /core/v1/get_node_chain_config). Used for the X-Wallet-Auth header (a
// BillingAuth bound to one request), the conversion to ChainSecured (ConvertAccount, naming the
// account converted) and minting a PKP for the admin wallet (CreateWallet); the registry's address
// for chainsecured.js.
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex } from "@noble/hashes/utils.js";

/** Whether the page has a wallet. */
export function hasWallet() {
  return typeof window.ethereum?.request === "function";
}

/** The wallet's first account (asks the wallet to connect). */
export async function connectWallet() {
  if (!hasWallet()) throw new Error("No browser wallet (EIP-1193) was found.");
  const accounts = await window.ethereum.request({ method: "eth_requestAccounts" });
  if (!accounts?.length) throw new Error("The wallet shared no account.");
  return accounts[0];
}

// The deployment is asked once per page load; a failed answer is asked again next time.
let chainConfig = null;

/** GET /core/v1/get_node_chain_config: { chain_id, contract_address, chain_name } (public). */
export function nodeChainConfig() {
  chainConfig ??= fetch("/core/v1/get_node_chain_config", { cache: "no-store", credentials: "omit" }).then((res) => {
    if (!res.ok) throw new Error(`GET /core/v1/get_node_chain_config: HTTP ${res.status}`);
    return res.json();
  });
  chainConfig.catch(() => {
    chainConfig = null;
  });
  return chainConfig;
}

/** keccak256 of bytes or of a text's UTF-8 bytes, as 0x hex. */
export const keccakHex = (data) => `0x${bytesToHex(keccak_256(typeof data === "string" ? new TextEncoder().encode(data) : data))}`;

// The members of each version 2 message, in the order of docs/protocol.md §2.
const kMembers = {
  CreateWallet: [["address", "address"], ["issuedAt", "uint256"], ["nonce", "bytes32"]],
  AddUsageApiKey: [["address", "address"], ["issuedAt", "uint256"], ["nonce", "bytes32"]],
  ConvertAccount: [["address", "address"], ["account", "bytes32"], ["issuedAt", "uint256"], ["nonce", "bytes32"]],
  BillingAuth: [["address", "address"], ["method", "string"], ["path", "string"], ["bodyHash", "bytes32"], ["issuedAt", "uint256"]],
};

// Serializes the wallet's signature requests, so that a page that needs several asks for them one
// after another rather than stacking prompts.
let signing = Promise.resolve();

/**
 * The version 2 envelope `primaryType` signed by `address`: { typed_data, signature }. `members`
 * carries what the flow binds: { account } (0x hex, the converted account's hash) for
 * ConvertAccount, { method, path, bodyHash } for BillingAuth; the nonce of the others is 32 random
 * bytes, accepted once by the server.
 */
export async function signEnvelope(primaryType, address, members = {}) {
  const { chain_id: chainId, contract_address: verifyingContract } = await nodeChainConfig();
  const fields = kMembers[primaryType];
  if (!fields) throw new Error(`Unknown envelope type ${primaryType}.`);
  const typedData = (issuedAt) => {
    const values = { address, issuedAt, nonce: `0x${bytesToHex(crypto.getRandomValues(new Uint8Array(32)))}`, ...members };
    return {
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
        [primaryType]: fields.map(([name, type]) => ({ name, type })),
      },
      primaryType,
      domain: { name: "Svc ChainSecured", version: "2", chainId, verifyingContract },
      message: Object.fromEntries(fields.map(([name]) => [name, values[name]])),
    };
  };
  // Issued when the wallet is asked, after any prompt before it in the queue.
  const ask = signing.then(async () => {
    const doc = typedData(Math.floor(Date.now() / 1000));
    const signature = await window.ethereum.request({ method: "eth_signTypedData_v4", params: [address, JSON.stringify(doc)] });
    return { typed_data: doc, signature };
  });
  signing = ask.catch(() => {});
  return ask;
}

// A BillingAuth authorizes one request (method, target, body) for ±300 s after issuedAt, and may
// be sent again within that time: one is kept for 240 s and reused only for the identical request,
// so a page drawn twice does not ask the wallet twice. Requests in flight share their signature.
const kReuseMs = 240_000;
const billing = new Map(); // "address method target bodyHash" -> { header (a promise), at }

/**
 * The X-Wallet-Auth value for `address` and the request `method` `target` (path and query exactly
 * as fetched) with the body text `body` ("" when none): base64 of {"typed_data", "signature"}.
 */
export function walletAuthHeader(address, method, target, body) {
  const bodyHash = keccakHex(body);
  const id = [address.toLowerCase(), method, target, bodyHash].join(" ");
  const now = Date.now();
  for (const [k, v] of billing) if (now - v.at >= kReuseMs) billing.delete(k);
  const kept = billing.get(id);
  if (kept) return kept.header;
  const header = signEnvelope("BillingAuth", address, { method, path: target, bodyHash }).then((envelope) => {
    const json = JSON.stringify(envelope);
    return btoa(String.fromCharCode(...new TextEncoder().encode(json)));
  });
  billing.set(id, { header, at: now });
  header.catch(() => billing.delete(id));
  return header;
}

export function forgetWalletAuth() {
  billing.clear();
}
