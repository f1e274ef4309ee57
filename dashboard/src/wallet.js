// SPDX-License-Identifier: Apache-2.0
// The browser wallet (EIP-1193, window.ethereum) and the EIP-712 envelopes of docs/protocol.md §2
// "ChainSecured": domain {name "Svc ChainSecured", version "1", chainId of the node}, message
// {address, issuedAt}, signed with eth_signTypedData_v4. Used for the X-Wallet-Auth header
// (BillingAuth), the conversion to ChainSecured (ConvertAccount) and minting a PKP for the admin
// wallet (CreateWallet); the registry's address for chainsecured.js.

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

/** GET /core/v1/get_node_chain_config: { chain_id, contract_address, chain_name } (public). */
export async function nodeChainConfig() {
  const res = await fetch("/core/v1/get_node_chain_config", { cache: "no-store", credentials: "omit" });
  if (!res.ok) throw new Error(`GET /core/v1/get_node_chain_config: HTTP ${res.status}`);
  return res.json();
}

/** The envelope `primaryType` signed by `address`: { typed_data, signature }. */
export async function signEnvelope(primaryType, address) {
  const { chain_id: chainId } = await nodeChainConfig();
  const typedData = {
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
      ],
      [primaryType]: [
        { name: "address", type: "address" },
        { name: "issuedAt", type: "uint256" },
      ],
    },
    primaryType,
    domain: { name: "Svc ChainSecured", version: "1", chainId },
    message: { address, issuedAt: Math.floor(Date.now() / 1000) },
  };
  const signature = await window.ethereum.request({ method: "eth_signTypedData_v4", params: [address, JSON.stringify(typedData)] });
  return { typed_data: typedData, signature };
}

// The server accepts an envelope for ±300 s after issuedAt; one is reused for 240 s so the wallet
// is not asked on every request.
const kReuseMs = 240_000;
let billing = null; // { address, header, at }

/** The X-Wallet-Auth value for `address`: base64 of {"typed_data", "signature"} (BillingAuth). */
export async function walletAuthHeader(address) {
  if (billing && billing.address === address && Date.now() - billing.at < kReuseMs) return billing.header;
  const envelope = await signEnvelope("BillingAuth", address);
  const json = JSON.stringify(envelope);
  const header = btoa(String.fromCharCode(...new TextEncoder().encode(json)));
  billing = { address, header, at: Date.now() };
  return header;
}

export function forgetWalletAuth() {
  billing = null;
}
