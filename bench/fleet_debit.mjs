// SPDX-License-Identifier: Apache-2.0
// The cost of a per-run debit transaction on a chain node, measured directly: what every run paid
// before credits moved to the metering store (docs/architecture.md §4). The registry no longer has
// a debit function, so the stand-in is the registry write that touches the same kind of state (a
// usage key's `balance` word, rewritten by setUsageApiKey with every other field kept), sent by an
// api payer and waited for until its receipt, as the evm ledger's relayed writes are.
//
//   node bench/fleet_debit.mjs RPC_URL REGISTRY KEY_HASH [N]
// Prints one JSON line: {"n", "p50_ms", "p99_ms", "mean_ms"}. The sender is anvil's dev account 1,
// which the caller made an api payer of REGISTRY (deploy-registry --api-payer); anvil signs for it
// (eth_sendTransaction), and the receipt is polled as the evm ledger polls.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const { ethers } = require("../tests/vectors/node_modules/ethers");

const [url, registry, keyHash, count] = process.argv.slice(2);
if (!keyHash) {
  console.error("usage: node bench/fleet_debit.mjs RPC_URL REGISTRY KEY_HASH [N]");
  process.exit(2);
}
const n = Number(count ?? 50);
const abi = JSON.parse(readFileSync(new URL("../contracts/build/PermissionRegistry.json", import.meta.url))).abi;
const registryAbi = new ethers.Interface(abi);
// anvil's dev account 1, unlocked on anvil: the node signs (eth_sendTransaction).
const from = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

let id = 0;
async function rpc(method, params) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

const keyCall = registryAbi.encodeFunctionData("getUsageApiKey", [keyHash]);
const k = registryAbi.decodeFunctionResult("getUsageApiKey", await rpc("eth_call", [{ to: registry, data: keyCall }, "latest"]))[0];
const permissions = [k.permissions[0], k.permissions[1], k.permissions[2], [...k.permissions[3]], [...k.permissions[4]],
  [...k.permissions[5]], [...k.permissions[6]]];
const setKey = registryAbi.getFunction(
  "setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]),address)",
);
const times = [];
for (let i = 0; i < n; i++) {
  const data = registryAbi.encodeFunctionData(setKey, [k.accountHash, keyHash, k.expiration, 1000000n + BigInt(i), k.name,
    k.description, permissions, k.wallet]);
  const start = process.hrtime.bigint();
  const hash = await rpc("eth_sendTransaction", [{ from, to: registry, data }]);
  let receipt = null;
  // Polled as the evm ledger polls: from 1 ms, doubling up to 100 ms.
  for (let pause = 1; !receipt; pause = Math.min(pause * 2, 100)) {
    receipt = await rpc("eth_getTransactionReceipt", [hash]);
    if (!receipt) await new Promise((r) => setTimeout(r, pause));
  }
  if (receipt.status !== "0x1") throw new Error("write reverted");
  times.push(Number(process.hrtime.bigint() - start) / 1e6);
}
times.sort((a, b) => a - b);
const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(JSON.stringify({ n, p50_ms: +at(0.5).toFixed(2), p99_ms: +at(0.99).toFixed(2), mean_ms: +mean.toFixed(2) }));
