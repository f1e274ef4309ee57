// SPDX-License-Identifier: Apache-2.0
// The registry tests' chain, contract and helpers (registry.test.mjs imports the tests): anvil with
// the dev keys, the deployed artifact, sending and reading by function name, revert decoding, and
// the record of what the tests called, saw revert and saw emitted (checked at the end).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ethers } from 'ethers';
import { startAnvil } from '../anvil/anvil.mjs';

export const artifact = JSON.parse(readFileSync(
  new URL('../../contracts/build/PermissionRegistry.json', import.meta.url), 'utf8'));
export const iface = new ethers.Interface(artifact.abi);

// anvil's dev accounts (mnemonic "test test test test test test test test test test test junk").
export const kDevKeys = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
];
export const kChainId = 31337;
export const kMaxInt64 = (1n << 63n) - 1n;
export const kMaxUint256 = ethers.MaxUint256;
export const ZERO = ethers.ZeroAddress;
export const SET7 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))';
export const SET8 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]),address)';

// Event parameter names are the keys of the server's ledger event data (ledger.hpp `event`).
export const kEventParams = {
  AccountCreated: ['accountHash', 'adminWalletAddress', 'managed', 'name', 'description'],
  AccountConverted: ['accountHash', 'previousAdmin', 'newAdmin'],
  UsageApiKeySet: ['accountHash', 'usageKeyHash', 'wallet', 'expiration', 'balance', 'name', 'description', 'permissions'],
  UsageApiKeyMetadataUpdated: ['accountHash', 'usageKeyHash', 'name', 'description'],
  UsageApiKeyRemoved: ['accountHash', 'usageKeyHash'],
  GroupAdded: ['accountHash', 'groupId', 'name', 'description', 'pkpIds', 'cidHashes'],
  GroupUpdated: ['accountHash', 'groupId', 'name', 'description', 'pkpIds', 'cidHashes'],
  GroupRemoved: ['accountHash', 'groupId'],
  PkpAddedToGroup: ['accountHash', 'groupId', 'pkpId'],
  PkpRemovedFromGroup: ['accountHash', 'groupId', 'pkpId'],
  ActionAddedToGroup: ['accountHash', 'groupId', 'hashedCid'],
  ActionRemovedFromGroup: ['accountHash', 'groupId', 'hashedCid'],
  WalletDerivationRegistered: ['accountHash', 'wallet', 'derivationPath', 'name', 'description'],
  ActionAdded: ['accountHash', 'hashedCid', 'cid', 'name', 'description'],
  ActionMetadataUpdated: ['accountHash', 'hashedCid', 'name', 'description'],
  ActionDeleted: ['accountHash', 'hashedCid'],
  ApiPayerSet: ['payer', 'allowed'],
};

// --- chain, contract and bookkeeping of what the tests touched ----------------------------------

export let node;
export let provider;
export let signers;       // ethers.Wallet for each dev key
export let owner, payer, payer2, adminA, adminB, adminC, stranger, spare;
export let registry;      // connected to the provider (views)
export const called = new Set();    // function signatures exercised
export const reverted = new Set();  // custom errors observed
export const emitted = new Set();   // events observed
export const gas = {};

before(async () => {
  node = await startAnvil({ chainId: kChainId });
  provider = new ethers.JsonRpcProvider(node.url, kChainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  signers = kDevKeys.map((k) => new ethers.Wallet(k, provider));
  [owner, payer, payer2, adminA, adminB, adminC, stranger, spare] = signers;
});

after(async () => {
  provider?.destroy();
  await node?.stop();
});

export async function deploy(payers = [payer.address, payer2.address]) {
  const factory = new ethers.ContractFactory(artifact.abi, artifact.bytecode, owner);
  const c = await factory.deploy(payers);
  await c.waitForDeployment();
  registry = c.connect(provider);
  return c;
}

/** Plain JS value of an ABI value: tuples as objects by component name, arrays as arrays. */
export function plain(type, value) {
  if (type.isTuple()) return Object.fromEntries(type.components.map((c, i) => [c.name, plain(c, value[i])]));
  if (type.isArray()) return Array.from(value, (x) => plain(type.arrayChildren, x));
  return value;
}
export function plainArgs(inputs, values) {
  return Object.fromEntries(inputs.map((p, i) => [p.name, plain(p, values[i])]));
}

export function fn(name) {
  const f = registry.getFunction(name);
  called.add(f.fragment.format('sighash'));
  return f;
}

/** Sends `name(...args)` from `signer`; returns the receipt and its decoded logs. */
export async function send(signer, name, ...args) {
  const f = fn(name);
  const tx = await registry.connect(signer).getFunction(name).send(...args);
  const receipt = await tx.wait();
  const events = receipt.logs.map((log) => {
    const parsed = iface.parseLog(log);
    emitted.add(parsed.name);
    return { name: parsed.name, args: plainArgs(parsed.fragment.inputs, parsed.args) };
  });
  assert.ok(f.fragment);
  return { receipt, events };
}

/** Sends and checks the one event the write emits. */
export async function sendOne(signer, name, args, eventName, eventArgs) {
  const r = await send(signer, name, ...args);
  assert.equal(r.events.length, 1, `${name}: one event`);
  assert.equal(r.events[0].name, eventName);
  if (eventArgs) assert.deepEqual(r.events[0].args, eventArgs);
  return r;
}

/** A view (or a simulated write, with `from`): its outputs, one value or an object by name. */
export async function read(name, ...args) {
  const f = fn(name);
  const result = await f.staticCallResult(...args);
  const outs = f.fragment.outputs;
  if (outs.length === 1) return plain(outs[0], result[0]);
  return plainArgs(outs, result);
}
export async function simulate(signer, name, ...args) {
  fn(name);
  const f = registry.connect(signer).getFunction(name);
  const result = await f.staticCallResult(...args);
  const outs = f.fragment.outputs;
  return outs.length === 1 ? plain(outs[0], result[0]) : plainArgs(outs, result);
}

export function decodeRevert(e) {
  const data = e?.data ?? e?.info?.error?.data;
  assert.ok(typeof data === 'string' && data.startsWith('0x'), `revert data expected, got: ${e?.message ?? e}`);
  return data;
}

/** Expects `name(...args)` from `signer` (null: no sender) to revert with `error` and `errorArgs`. */
export async function reverts(signer, name, args, error, errorArgs) {
  fn(name);
  const f = (signer ? registry.connect(signer) : registry).getFunction(name);
  let data;
  try {
    await f.staticCall(...args);
  } catch (e) {
    data = decodeRevert(e);
  }
  assert.ok(data !== undefined, `${name} succeeded, expected ${error}`);
  const parsed = iface.parseError(data);
  assert.ok(parsed, `${name}: undecodable revert data ${data}`);
  reverted.add(parsed.name);
  assert.equal(parsed.name, error, `${name}: ${parsed.name}(${parsed.args.join(', ')})`);
  if (errorArgs !== undefined) assert.deepEqual(plainArgs(parsed.fragment.inputs, parsed.args), errorArgs);
  return data;
}

export async function snapshot() {
  return provider.send('evm_snapshot', []);
}
export async function restore(id) {
  assert.equal(await provider.send('evm_revert', [id]), true);
}
export async function blockTime(receipt) {
  return BigInt((await provider.getBlock(receipt.blockNumber)).timestamp);
}

// --- identifiers ----------------------------------------------------------------------------

export const H = (tag) => BigInt(ethers.id(`hash ${tag}`));
/** docs/protocol.md §1: the hash of an account a wallet creates, keccak256(abi.encodePacked(wallet)). */
export const canonical = (wallet) => BigInt(ethers.solidityPackedKeccak256(['address'], [wallet]));
export const A = (tag) => ethers.getAddress(ethers.dataSlice(ethers.id(`address ${tag}`), 12));
export const cidHash = (cid) => BigInt(ethers.keccak256(ethers.toUtf8Bytes(cid)));
export const perms = (over = {}) => ({
  canCreateGroups: false, canDeleteGroups: false, canCreatePkps: false,
  manageIpfsIdsInGroups: [], addPkpToGroups: [], removePkpFromGroups: [], executeInGroups: [],
  ...over,
});
export const somePerms = perms({ canCreateGroups: true, canCreatePkps: true, addPkpToGroups: [1n, 2n], executeInGroups: [0n] });

/** An account with one of everything (like the conformance suite's `prepare`). A managed one is
 *  created by the api payer; an unmanaged one by its admin, under its canonical hash (docs/protocol.md §3). */
export async function prepare(tag, managed, admin) {
  const p = {
    hash: managed ? H(`account ${tag}`) : canonical(admin.address), admin, tag,
    walletInGroup: A(`${tag} wallet 1`), walletFree: A(`${tag} wallet 2`),
    key: H(`${tag} key 1`), cid: `QmPrepared${tag}`, group: 1n,
  };
  p.cidInGroup = cidHash(p.cid);
  await send(managed ? payer : admin, 'newAccount', p.hash, admin.address, managed, `account ${tag}`, 'conformance account', `${tag}@example.org`);
  await send(admin, 'registerWalletDerivation', p.hash, p.walletInGroup, H(`${tag} path 1`), 'wallet 1', 'pkp');
  await send(admin, 'registerWalletDerivation', p.hash, p.walletFree, H(`${tag} path 2`), 'wallet 2', 'pkp');
  await send(admin, 'addAction', p.hash, p.cidInGroup, p.cid, 'action', 'does things');
  await send(admin, 'addGroup', p.hash, 'g', 'g description', [p.walletInGroup], [p.cidInGroup]);
  await send(admin, SET8, p.hash, p.key, 1900000000n, 5n, 'key 1', 'usage', somePerms, A(`${tag} key wallet 1`));
  return p;
}

/** Every account write, each valid once on a `prepare`d account: [name, args, event]. */
export function writeOps(p) {
  return [
    [SET8, [p.hash, H(`${p.tag} key 2`), 0n, 0n, 'key 2', '', somePerms, A('key 2')], 'UsageApiKeySet'],
    [SET7, [p.hash, H(`${p.tag} key 3`), 0n, 0n, 'key 3', '', perms()], 'UsageApiKeySet'],
    ['updateUsageApiKeyMetadata', [p.hash, p.key, 'renamed', ''], 'UsageApiKeyMetadataUpdated'],
    ['removeUsageApiKey', [p.hash, p.key], 'UsageApiKeyRemoved'],
    ['addGroup', [p.hash, 'new', '', [p.walletFree], []], 'GroupAdded'],
    ['updateGroup', [p.hash, p.group, 'updated', '', [p.walletFree], [H('x')]], 'GroupUpdated'],
    ['removeGroup', [p.hash, p.group], 'GroupRemoved'],
    ['addPkpToGroup', [p.hash, p.group, p.walletFree], 'PkpAddedToGroup'],
    ['removePkpFromGroup', [p.hash, p.group, p.walletInGroup], 'PkpRemovedFromGroup'],
    ['addActionToGroup', [p.hash, p.group, H('x')], 'ActionAddedToGroup'],
    ['removeActionFromGroup', [p.hash, p.group, p.cidInGroup], 'ActionRemovedFromGroup'],
    ['registerWalletDerivation', [p.hash, A(`${p.tag} wallet 3`), 7n, 'wallet 3', ''], 'WalletDerivationRegistered'],
    ['addAction', [p.hash, cidHash('QmNewAction'), 'QmNewAction', 'new', ''], 'ActionAdded'],
    ['updateActionMetadata', [p.hash, p.cidInGroup, 'renamed', 'd'], 'ActionMetadataUpdated'],
    ['deleteAction', [p.hash, p.cidInGroup], 'ActionDeleted'],
    ['convertToChainSecured', [p.hash, A(`${p.tag} new admin`)], 'AccountConverted'],
  ];
}
