// SPDX-License-Identifier: Apache-2.0
// A ChainSecured account's registry through the browser wallet (docs/chainsecured.md): the page
// encodes the registry call itself (abi.js, the functions of docs/protocol.md §3), the wallet
// sends it with eth_sendTransaction to the registry address of GET /core/v1/get_node_chain_config,
// and the page polls the wallet's eth_getTransactionReceipt until it is mined. Reads are the
// registry's views through the wallet's eth_call. A refusal is reported with the registry's custom
// error, decoded from the revert data the wallet gives (the estimation's error, or a mined
// receipt's revertReason). The server writes nothing here: the registry decides, with the wallet
// that signed as msg.sender.
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { decode, encodeCall, selector, signatureTypes } from "./abi.js";
import { kRegistryErrors, kRegistryFunctions } from "./registry_abi.js";
import { addressOf } from "./verify.js";
import { hasWallet, nodeChainConfig } from "./wallet.js";

const kReceiptPollMs = 500;
const kReceiptTries = 240; // two minutes
const kListLimit = 1000; // the most a list view answers per call (docs/chainsecured.md)

// The registry's custom errors (registry_abi.js, generated from the contract's build artifact).
const kErrors = kRegistryErrors.map((e) => ({ ...e, selector: selector(e.signature) }));

/** The registry function `name` (a key of registry_abi.js, as setUsageApiKeyWithWallet). */
function registryFunction(name) {
  const f = kRegistryFunctions[name];
  if (!f) throw new Error(`the registry has no function ${name}`);
  return f;
}

/** A uint256 as 0x and 64 hex digits (hashes, derivation paths). */
export const hex256 = (n) => `0x${BigInt(n).toString(16).padStart(64, "0")}`;
const show = (v) => (typeof v === "bigint" ? (v < 1n << 64n ? v.toString() : hex256(v)) : String(v));

/** A refused or failed registry write: `errorName` is the custom error's name when known. */
export class ChainError extends Error {
  constructor(message, errorName = "", transactionHash = "") {
    super(message);
    this.errorName = errorName;
    this.transactionHash = transactionHash;
  }
}

/** The registry's custom error in revert data (0x hex): { name, text }, or null when unknown. */
export function decodeRevert(data) {
  if (typeof data !== "string" || !/^0x[0-9a-fA-F]{8}/.test(data)) return null;
  const error = kErrors.find((e) => e.selector === data.slice(0, 10).toLowerCase());
  if (!error) return null;
  try {
    const values = decode(signatureTypes(error.signature), `0x${data.slice(10)}`);
    return { name: error.name, text: `${error.name}(${values.map((v, i) => `${error.names[i]}=${show(v)}`).join(", ")})` };
  } catch {
    return { name: error.name, text: `${error.name} (revert data ${data})` };
  }
}

// Wallets put a revert's data in different places of an EIP-1193 error.
function revertData(err) {
  const places = [err?.data, err?.data?.data, err?.data?.originalError?.data, err?.error?.data, err?.error?.data?.data, err?.info?.error?.data];
  return places.find((d) => typeof d === "string" && /^0x[0-9a-fA-F]{8}/.test(d)) ?? null;
}

function refused(what, err, hash = "") {
  const data = hash ? err : revertData(err);
  const known = decodeRevert(data);
  const where = hash ? ` in transaction ${hash}` : "";
  if (known) return new ChainError(`The registry refused ${what}${where}: ${known.text}.`, known.name, hash);
  const detail = hash ? `the transaction ${hash} reverted${data ? ` (revert data ${data})` : ""}` : (err?.message ?? String(err));
  return new ChainError(`The registry refused ${what}: ${detail}.`, "", hash);
}

async function wallet(method, params) {
  if (!hasWallet()) throw new Error("No browser wallet (EIP-1193) was found.");
  return window.ethereum.request(params === undefined ? { method } : { method, params });
}

/** The registry view `name` with `args`, decoded as its outputs, through the wallet's eth_call. */
export async function registryView(name, args) {
  const { signature, outputs } = registryFunction(name);
  const { contract_address: to } = await nodeChainConfig();
  let result;
  try {
    result = await wallet("eth_call", [{ to, data: encodeCall(signature, args) }, "latest"]);
  } catch (err) {
    throw refused(name, err);
  }
  return decode(outputs, result);
}

/**
 * Sends the registry write `name` (a key of registry_abi.js) with `args` from the wallet's current
 * account and waits for it to be mined: answers the receipt; `onSent(hash)` is told the hash once
 * the wallet sent it. Throws a ChainError naming the custom error when the registry refuses.
 */
export async function sendRegistry(name, args, onSent = () => {}) {
  const { signature } = registryFunction(name);
  const what = signature.slice(0, signature.indexOf("("));
  const { chain_id: chainId, contract_address: to } = await nodeChainConfig();
  const walletChain = BigInt(await wallet("eth_chainId"));
  if (walletChain !== BigInt(chainId)) throw new ChainError(`The wallet is on chain ${walletChain}; the registry is on chain ${chainId}. Switch the wallet's network first.`);
  const [from] = await wallet("eth_requestAccounts");
  const data = encodeCall(signature, args);
  let hash;
  try {
    hash = await wallet("eth_sendTransaction", [{ from, to, data }]);
  } catch (err) {
    throw refused(what, err);
  }
  onSent(hash);
  for (let i = 0; i < kReceiptTries; ++i) {
    const receipt = await wallet("eth_getTransactionReceipt", [hash]);
    if (receipt) {
      if (BigInt(receipt.status) === 1n) return receipt;
      let revert = receipt.revertReason ?? null;
      // A node whose receipts carry no revert data (anvil, geth): the call replayed at its block
      // gives it.
      if (!revert) revert = await wallet("eth_call", [{ from, to, data }, receipt.blockNumber]).then(() => null, revertData);
      throw refused(what, revert, hash);
    }
    await new Promise((resolve) => setTimeout(resolve, kReceiptPollMs));
  }
  throw new ChainError(`The transaction ${hash} was not mined within ${(kReceiptTries * kReceiptPollMs) / 1000} s.`, "", hash);
}

/** The account `admin` administers: { accountHash (BigInt), admin, name } (accountByAdmin). */
export async function accountOf(admin) {
  const [[accountHash, adminAddress, , name]] = await registryView("accountByAdmin", [admin]);
  return { accountHash, admin: adminAddress, name };
}

const nums = (list) => list.map(Number);

/** The account's usage keys in the shape of GET /list_api_keys (hash as 0x hex, no value). */
export async function listKeys(accountHash) {
  const [items] = await registryView("listUsageApiKeys", [accountHash, 0n, BigInt(kListLimit)]);
  return items.map(([, hash, walletAddress, expiration, balance, name, description, p, createdAt]) => ({
    hash: hex256(hash),
    wallet_address: walletAddress,
    expiration: Number(expiration),
    balance,
    name,
    description,
    created_at: Number(createdAt),
    can_create_groups: p[0],
    can_delete_groups: p[1],
    can_create_pkps: p[2],
    manage_ipfs_ids_in_groups: nums(p[3]),
    add_pkp_to_groups: nums(p[4]),
    remove_pkp_from_groups: nums(p[5]),
    execute_in_groups: nums(p[6]),
  }));
}

/** The account's groups in the shape of GET /list_groups. */
export async function listGroups(accountHash) {
  const [items] = await registryView("listGroups", [accountHash, 0n, BigInt(kListLimit)]);
  return items.map(([id, name, description, pkps, cids]) => ({ group_id: Number(id), name, description, pkp_ids_permitted: pkps, cid_hashes_permitted: cids.map(hex256) }));
}

/** The account's registered wallets (PKPs): { pkp_id, wallet_address, derivation_path, name, description, created_at }. */
export async function listWallets(accountHash) {
  const [items] = await registryView("listWallets", [accountHash, 0n, BigInt(kListLimit)]);
  return items.map(([address, path, name, description, createdAt]) => ({ pkp_id: address, wallet_address: address, derivation_path: hex256(path), name, description, created_at: Number(createdAt) }));
}

/** The account's actions in the shape of GET /list_actions. */
export async function listActions(accountHash) {
  const [items] = await registryView("listActions", [accountHash, 0n, BigInt(kListLimit)]);
  return items.map(([hashed, cid, name, description, createdAt]) => ({ hashed_cid: hex256(hashed), action_ipfs_cid: cid, name, description, created_at: Number(createdAt) }));
}

/** keccak256 of a text's UTF-8 bytes as a uint256 (usage key hashes, hashed CIDs; protocol.md §1). */
export const textHash = (text) => BigInt(`0x${bytesToHex(keccak_256(new TextEncoder().encode(text)))}`);

/**
 * A new usage key made in the page, as POST /add_usage_api_key issues them (protocol.md §1): 32
 * random bytes (a valid secp256k1 private key) in standard base64; its hash is keccak256 of that
 * text and its wallet the key's Ethereum address. { value, hash, walletAddress }.
 */
export function newUsageKey() {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    if (!secp256k1.utils.isValidSecretKey(bytes)) continue;
    const value = btoa(String.fromCharCode(...bytes));
    return { value, hash: textHash(value), walletAddress: addressOf(secp256k1.getPublicKey(bytes, false)) };
  }
}

/** The registry's Permissions tuple from the API's permission fields. */
export function permissionsTuple(p) {
  const ids = (list) => (list ?? []).map(BigInt);
  return [!!p.can_create_groups, !!p.can_delete_groups, !!p.can_create_pkps, ids(p.manage_ipfs_ids_in_groups), ids(p.add_pkp_to_groups), ids(p.remove_pkp_from_groups), ids(p.execute_in_groups)];
}

export const kSetUsageKey = "setUsageApiKeyWithWallet";
