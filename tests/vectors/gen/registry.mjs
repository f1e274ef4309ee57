// SPDX-License-Identifier: Apache-2.0
// registry.json: the permission registry's ABI (contracts/IPermissionRegistry.sol) through an ethers Interface.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEq, ethers, HERE, randomText, randomUint, Rng } from './common.mjs';

// The interface in ethers' human-readable form, written from IPermissionRegistry.sol and checked
// against it (REGISTRY_SOL below). Arguments are written in the JSON forms of the SDK's registry
// bindings (enact/chain/registry.hpp), which are those of the embedded ledger's events: uint256
// hashes as 0x + 64 hex digits, other uint256 as JSON numbers (decimal strings above 2^53 - 1),
// addresses lowercase, Permissions as an object with the snake_case permission fields.

const REG_PERMISSIONS = 'tuple(bool canCreateGroups, bool canDeleteGroups, bool canCreatePkps, uint256[] manageIpfsIdsInGroups, uint256[] addPkpToGroups, uint256[] removePkpFromGroups, uint256[] executeInGroups)';
const REG_ACCOUNT_VIEW = 'tuple(uint256 accountHash, address admin, bool managed, string name, string description, string email, uint256 createdAt, uint256 walletCount)';
const REG_USAGE_KEY_VIEW = `tuple(uint256 accountHash, uint256 usageKeyHash, address wallet, uint256 expiration, uint256 balance, string name, string description, ${REG_PERMISSIONS} permissions, uint256 createdAt)`;
const REG_GROUP_VIEW = 'tuple(uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes)';
const REG_WALLET_VIEW = 'tuple(address wallet, uint256 derivationPath, string name, string description, uint256 createdAt)';
const REG_ACTION_VIEW = 'tuple(uint256 hashedCid, string cid, string name, string description, uint256 createdAt)';

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
  'error Duplicate(string what)',
  'error InvalidArgument(string reason)',
  'error NotOwner(address sender)',
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

export function genRegistry() {
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
