// The permission registry contract (contracts/PermissionRegistry.sol) on anvil:
// deploys the committed build artifact and checks every function, custom error and event of
// IPermissionRegistry against the rules the embedded ledger enforces (API.md §3,
// server/ledger/embedded_ledger.hpp). Run: node --test registry.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ethers } from 'ethers';
import { startAnvil } from '../anvil/anvil.mjs';

const artifact = JSON.parse(readFileSync(
  new URL('../../contracts/build/PermissionRegistry.json', import.meta.url), 'utf8'));
const iface = new ethers.Interface(artifact.abi);

// anvil's dev accounts (mnemonic "test test test test test test test test test test test junk").
const kDevKeys = [
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
const kChainId = 31337;
const kMaxInt64 = (1n << 63n) - 1n;
const kMaxUint256 = ethers.MaxUint256;
const ZERO = ethers.ZeroAddress;
const SET7 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))';
const SET8 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]),address)';

// Event parameter names are the keys of the server's ledger event data (ledger.hpp `event`).
const kEventParams = {
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
  CreditsDebited: ['accountHash', 'amount', 'balance'],
  PaymentCredited: ['accountHash', 'paymentIntentId', 'amountCents', 'provider', 'balance'],
  PaymentRecorded: ['accountHash', 'paymentIntentId', 'amountCents', 'provider'],
  WriteCharged: ['accountHash', 'amount', 'balance'],
  ApiPayerSet: ['payer', 'allowed'],
};

// --- chain, contract and bookkeeping of what the tests touched ----------------------------------

let node;
let provider;
let signers;       // ethers.Wallet for each dev key
let owner, payer, payer2, adminA, adminB, adminC, stranger, spare;
let registry;      // connected to the provider (views)
const called = new Set();    // function signatures exercised
const reverted = new Set();  // custom errors observed
const emitted = new Set();   // events observed
const gas = {};

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

async function deploy(payers = [payer.address, payer2.address]) {
  const factory = new ethers.ContractFactory(artifact.abi, artifact.bytecode, owner);
  const c = await factory.deploy(payers);
  await c.waitForDeployment();
  registry = c.connect(provider);
  return c;
}

/** Plain JS value of an ABI value: tuples as objects by component name, arrays as arrays. */
function plain(type, value) {
  if (type.isTuple()) return Object.fromEntries(type.components.map((c, i) => [c.name, plain(c, value[i])]));
  if (type.isArray()) return Array.from(value, (x) => plain(type.arrayChildren, x));
  return value;
}
function plainArgs(inputs, values) {
  return Object.fromEntries(inputs.map((p, i) => [p.name, plain(p, values[i])]));
}

function fn(name) {
  const f = registry.getFunction(name);
  called.add(f.fragment.format('sighash'));
  return f;
}

/** Sends `name(...args)` from `signer`; returns the receipt and its decoded logs. */
async function send(signer, name, ...args) {
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
async function sendOne(signer, name, args, eventName, eventArgs) {
  const r = await send(signer, name, ...args);
  assert.equal(r.events.length, 1, `${name}: one event`);
  assert.equal(r.events[0].name, eventName);
  if (eventArgs) assert.deepEqual(r.events[0].args, eventArgs);
  return r;
}

/** A view (or a simulated write, with `from`): its outputs, one value or an object by name. */
async function read(name, ...args) {
  const f = fn(name);
  const result = await f.staticCallResult(...args);
  const outs = f.fragment.outputs;
  if (outs.length === 1) return plain(outs[0], result[0]);
  return plainArgs(outs, result);
}
async function simulate(signer, name, ...args) {
  fn(name);
  const f = registry.connect(signer).getFunction(name);
  const result = await f.staticCallResult(...args);
  const outs = f.fragment.outputs;
  return outs.length === 1 ? plain(outs[0], result[0]) : plainArgs(outs, result);
}

function decodeRevert(e) {
  const data = e?.data ?? e?.info?.error?.data;
  assert.ok(typeof data === 'string' && data.startsWith('0x'), `revert data expected, got: ${e?.message ?? e}`);
  return data;
}

/** Expects `name(...args)` from `signer` (null: no sender) to revert with `error` and `errorArgs`. */
async function reverts(signer, name, args, error, errorArgs) {
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

async function snapshot() {
  return provider.send('evm_snapshot', []);
}
async function restore(id) {
  assert.equal(await provider.send('evm_revert', [id]), true);
}
async function blockTime(receipt) {
  return BigInt((await provider.getBlock(receipt.blockNumber)).timestamp);
}

// --- identifiers ----------------------------------------------------------------------------

const H = (tag) => BigInt(ethers.id(`hash ${tag}`));
/** API.md §1: the hash of an account a wallet creates, keccak256(abi.encodePacked(wallet)). */
const canonical = (wallet) => BigInt(ethers.solidityPackedKeccak256(['address'], [wallet]));
const A = (tag) => ethers.getAddress(ethers.dataSlice(ethers.id(`address ${tag}`), 12));
const cidHash = (cid) => BigInt(ethers.keccak256(ethers.toUtf8Bytes(cid)));
const perms = (over = {}) => ({
  canCreateGroups: false, canDeleteGroups: false, canCreatePkps: false,
  manageIpfsIdsInGroups: [], addPkpToGroups: [], removePkpFromGroups: [], executeInGroups: [],
  ...over,
});
const somePerms = perms({ canCreateGroups: true, canCreatePkps: true, addPkpToGroups: [1n, 2n], executeInGroups: [0n] });

/** An account with one of everything (like the conformance suite's `prepare`). A managed one is
 *  created by the api payer; an unmanaged one by its admin, under its canonical hash (API.md §3). */
async function prepare(tag, managed, admin) {
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
function writeOps(p) {
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

// --- tests ------------------------------------------------------------------------------------

describe('build artifact', () => {
  test('ABI events carry the ledger event data keys', () => {
    const events = iface.fragments.filter((f) => f.type === 'event');
    assert.deepEqual(events.map((e) => e.name).sort(), Object.keys(kEventParams).sort());
    for (const e of events) assert.deepEqual(e.inputs.map((i) => i.name), kEventParams[e.name], e.name);
  });

  test('deployed code is the artifact and within EIP-170', async () => {
    const c = await deploy();
    const code = await provider.getCode(await c.getAddress());
    assert.equal(code, artifact.deployedBytecode);
    assert.ok((code.length - 2) / 2 <= 24576, `deployed size ${(code.length - 2) / 2}`);
  });
});

describe('registry administration', () => {
  before(() => deploy());

  test('owner and api payers from the constructor', async () => {
    assert.equal(await read('owner'), owner.address);
    assert.deepEqual(await read('apiPayers'), [payer.address, payer2.address]);
    assert.equal(await read('isApiPayer', payer.address), true);
    assert.equal(await read('isApiPayer', stranger.address), false);
  });

  test('setApiPayer: owner only, keeps the order, events', async () => {
    await reverts(payer, 'setApiPayer', [stranger.address, true], 'NotOwner', { sender: payer.address });
    await reverts(owner, 'setApiPayer', [ZERO, true], 'InvalidArgument', { reason: 'payer: zero address' });
    await sendOne(owner, 'setApiPayer', [spare.address, true], 'ApiPayerSet', { payer: spare.address, allowed: true });
    assert.deepEqual(await read('apiPayers'), [payer.address, payer2.address, spare.address]);
    await sendOne(owner, 'setApiPayer', [payer2.address, false], 'ApiPayerSet', { payer: payer2.address, allowed: false });
    assert.deepEqual(await read('apiPayers'), [payer.address, spare.address]);
    assert.equal(await read('isApiPayer', payer2.address), false);
    // Idempotent: allowing twice lists once.
    await send(owner, 'setApiPayer', spare.address, true);
    assert.deepEqual(await read('apiPayers'), [payer.address, spare.address]);
  });

  test('a removed api payer relays no more', async () => {
    const h = H('admin test');
    await reverts(payer2, 'newAccount', [h, A('admin test'), true, 'n', '', ''], 'NotAdmin', { accountHash: h, sender: payer2.address });
    await send(spare, 'newAccount', h, A('admin test'), true, 'n', '', '');
  });
});

describe('accounts', () => {
  before(() => deploy());

  test('newAccount: event, views, who may create', async () => {
    const h = H('acct 1');
    const { receipt } = await sendOne(payer, 'newAccount', [h, adminA.address, true, 'account 1', 'first', 'a@example.org'], 'AccountCreated',
      { accountHash: h, adminWalletAddress: adminA.address, managed: true, name: 'account 1', description: 'first' });
    const t = await blockTime(receipt);
    const want = {
      accountHash: h, admin: adminA.address, managed: true, name: 'account 1', description: 'first',
      email: 'a@example.org', createdAt: t, balance: 0n, walletCount: 0n,
    };
    assert.deepEqual(await read('getAccount', h), want);
    assert.deepEqual(await read('accountByAdmin', adminA.address), want);
    // A wallet may create its own account, unmanaged and under its canonical hash (the identity
    // rules are tested below); a relay only a managed one.
    await sendOne(adminC, 'newAccount', [canonical(adminC.address), adminC.address, false, 'account 3', '', ''], 'AccountCreated');
    assert.equal((await read('getAccount', canonical(adminC.address))).managed, false);
    const h4 = H('acct 4');
    await reverts(payer, 'newAccount', [h4, A('4'), false, 'n', '', ''], 'RelayNotAllowed', { accountHash: h4, sender: payer.address });
    await reverts(stranger, 'newAccount', [h4, A('4'), true, 'n', '', ''], 'NotAdmin', { accountHash: h4, sender: stranger.address });
    await reverts(stranger, 'newAccount', [h4, A('4'), false, 'n', '', ''], 'NotAdmin', { accountHash: h4, sender: stranger.address });
  });

  test('newAccount: duplicates and argument bounds', async () => {
    const h = H('acct 5');
    await reverts(payer, 'newAccount', [H('acct 1'), A('5'), true, 'n', '', ''], 'Duplicate', { what: 'apiKeyHash' });
    await reverts(payer, 'newAccount', [h, adminA.address, true, 'n', '', ''], 'Duplicate', { what: 'admin' });
    const bad = [
      [[h, ZERO, true, 'n', '', ''], 'admin: zero address'],
      [[h, A('5'), true, '', '', ''], 'name: must not be empty'],
      [[h, A('5'), true, 'n'.repeat(257), '', ''], 'name: longer than 256 bytes'],
      [[h, A('5'), true, 'n', 'd'.repeat(4097), ''], 'description: longer than 4096 bytes'],
      [[h, A('5'), true, 'n', '', 'e'.repeat(257)], 'email: longer than 256 bytes'],
      // Bytes, not characters: 129 two-byte characters are 258 bytes.
      [[h, A('5'), true, 'é'.repeat(129), '', ''], 'name: longer than 256 bytes'],
    ];
    for (const [args, reason] of bad) await reverts(payer, 'newAccount', args, 'InvalidArgument', { reason });
    // Checks run in order: sender before arguments (a stranger learns nothing about them).
    await reverts(stranger, 'newAccount', [h, ZERO, true, '', '', ''], 'NotAdmin');
    await send(payer, 'newAccount', h, A('5'), true, 'n'.repeat(256), 'd'.repeat(4096), 'e'.repeat(256));
    const a = await read('getAccount', h);
    assert.equal(a.name.length, 256);
    assert.equal(a.description.length, 4096);
    assert.equal(a.email.length, 256);
  });

  test('unknown accounts', async () => {
    const ghost = H('ghost');
    await reverts(null, 'getAccount', [ghost], 'UnknownAccount', { accountHash: ghost });
    await reverts(null, 'accountByAdmin', [stranger.address], 'UnknownAccount', { accountHash: 0n });
    await reverts(null, 'accountByAdmin', [ZERO], 'UnknownAccount', { accountHash: 0n });
  });
});

describe('sender rule of every write', () => {
  let m, m2, u, ghost;
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);    // written through the api payer
    m2 = await prepare('m2', true, adminB);  // written by its own admin
    u = await prepare('u', false, adminC);   // unmanaged: its admin only
    ghost = { ...m, hash: H('no such account') };
  });

  const names = writeOps({ hash: 0n, tag: '' }).map(([name]) => name);
  for (const [i, name] of names.entries()) {
    test(name, async () => {
      const snap = await snapshot();
      try {
        const [, argsM, eventName] = writeOps(m)[i];
        const [, argsM2] = writeOps(m2)[i];
        const [, argsU] = writeOps(u)[i];
        const [, argsGhost] = writeOps(ghost)[i];
        await reverts(payer, name, argsGhost, 'UnknownAccount', { accountHash: ghost.hash });
        await reverts(stranger, name, argsM, 'NotAdmin', { accountHash: m.hash, sender: stranger.address });
        await reverts(stranger, name, argsU, 'NotAdmin', { accountHash: u.hash, sender: stranger.address });
        await reverts(adminB, name, argsM, 'NotAdmin', { accountHash: m.hash, sender: adminB.address });
        await reverts(payer, name, argsU, 'RelayNotAllowed', { accountHash: u.hash, sender: payer.address });
        await reverts(payer2, name, argsU, 'RelayNotAllowed', { accountHash: u.hash, sender: payer2.address });
        await sendOne(payer, name, argsM, eventName);
        if (name === 'convertToChainSecured') {
          // The admin (not an api payer) converts only to itself: consent of the new admin.
          await reverts(adminB, name, argsM2, 'NewAdminNotSender', { accountHash: m2.hash, newAdmin: argsM2[1] });
          await sendOne(adminB, name, [m2.hash, adminB.address], eventName);
        } else await sendOne(adminB, name, argsM2, eventName);
        if (name === 'convertToChainSecured') await reverts(adminC, name, argsU, 'AlreadyUnmanaged', { accountHash: u.hash });
        else await sendOne(adminC, name, argsU, eventName);
      } finally {
        await restore(snap);
      }
    });
  }
});

describe('conversion to ChainSecured', () => {
  let m, m2;
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    m2 = await prepare('m2', true, adminB);
  });

  test('one-way: the admin changes, the relay is refused from then on', async () => {
    const newAdmin = adminC;
    await reverts(payer, 'convertToChainSecured', [m.hash, ZERO], 'InvalidArgument', { reason: 'newAdmin: zero address' });
    await reverts(payer, 'convertToChainSecured', [m.hash, adminB.address], 'Duplicate', { what: 'newAdmin' });
    await sendOne(payer, 'convertToChainSecured', [m.hash, newAdmin.address], 'AccountConverted',
      { accountHash: m.hash, previousAdmin: adminA.address, newAdmin: newAdmin.address });
    const a = await read('getAccount', m.hash);
    assert.equal(a.managed, false);
    assert.equal(a.admin, newAdmin.address);
    assert.equal((await read('accountByAdmin', newAdmin.address)).accountHash, m.hash);
    await reverts(null, 'accountByAdmin', [adminA.address], 'UnknownAccount', { accountHash: 0n });
    // State survives the conversion.
    assert.equal((await read('getUsageApiKey', m.key)).accountHash, m.hash);
    assert.equal(a.walletCount, 2n);
    assert.equal((await read('listGroups', m.hash, 0n, 10n)).total, 1n);

    await reverts(newAdmin, 'convertToChainSecured', [m.hash, A('x')], 'AlreadyUnmanaged', { accountHash: m.hash });
    await reverts(payer, 'convertToChainSecured', [m.hash, A('x')], 'RelayNotAllowed', { accountHash: m.hash, sender: payer.address });
    await reverts(adminA, 'convertToChainSecured', [m.hash, A('x')], 'NotAdmin', { accountHash: m.hash, sender: adminA.address });
    await reverts(payer, 'addGroup', [m.hash, 'x', '', [], []], 'RelayNotAllowed');
    await reverts(adminA, 'addGroup', [m.hash, 'x', '', [], []], 'NotAdmin');
    assert.equal(await simulate(newAdmin, 'addGroup', m.hash, 'x', '', [], []), 2n);
  });

  test('the admin may convert; onto its own address is a mode switch', async () => {
    await sendOne(adminB, 'convertToChainSecured', [m2.hash, adminB.address], 'AccountConverted',
      { accountHash: m2.hash, previousAdmin: adminB.address, newAdmin: adminB.address });
    const a = await read('getAccount', m2.hash);
    assert.equal(a.managed, false);
    assert.equal(a.admin, adminB.address);
    assert.equal((await read('accountByAdmin', adminB.address)).accountHash, m2.hash);
  });

  // The attack: an account holder (API mode: its account key's wallet is the admin) hands the
  // account it prepared, usage keys included, to a victim wallet that never signed anything; the
  // victim could then not create its own account, and its mints and billing would land there.
  test('no account is handed to a wallet without its consent (NewAdminNotSender)', async () => {
    await deploy();
    const p = await prepare('p', true, adminA);
    const victim = spare;
    await reverts(adminA, 'convertToChainSecured', [p.hash, victim.address], 'NewAdminNotSender',
      { accountHash: p.hash, newAdmin: victim.address });
    // Mined (the estimate skipped), it fails the same way and changes nothing.
    const tx = await registry.connect(adminA).getFunction('convertToChainSecured')
      .send(p.hash, victim.address, { gasLimit: 500000n });
    await assert.rejects(tx.wait(), (e) => e.code === 'CALL_EXCEPTION' && e.receipt?.status === 0);
    await reverts(null, 'accountByAdmin', [victim.address], 'UnknownAccount', { accountHash: 0n });
    assert.equal((await read('getAccount', p.hash)).managed, true);
    await reverts(adminA, 'convertToChainSecured', [p.hash, ZERO], 'InvalidArgument', { reason: 'newAdmin: zero address' });
    // The victim's own account is still free for it; then no relay hands it a second one.
    await sendOne(victim, 'newAccount', [canonical(victim.address), victim.address, false, 'mine', '', ''], 'AccountCreated');
    assert.equal((await read('accountByAdmin', victim.address)).accountHash, canonical(victim.address));
    await reverts(payer, 'convertToChainSecured', [p.hash, victim.address], 'Duplicate', { what: 'newAdmin' });
    // An api payer's relay carries a new admin's consent (the server checked its
    // ConvertAccount envelope) and may name another wallet.
    await sendOne(payer, 'convertToChainSecured', [p.hash, stranger.address], 'AccountConverted',
      { accountHash: p.hash, previousAdmin: adminA.address, newAdmin: stranger.address });
    await reverts(stranger, 'convertToChainSecured', [p.hash, victim.address], 'AlreadyUnmanaged', { accountHash: p.hash });
  });
});

describe('usage keys', () => {
  let m, m2;
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    m2 = await prepare('m2', true, adminB);
  });

  test('both setUsageApiKey overloads: event and stored fields', async () => {
    const k = H('key big');
    const p = perms({ canDeleteGroups: true, manageIpfsIdsInGroups: [3n, 1n], removePkpFromGroups: [0n], executeInGroups: [kMaxUint256] });
    const { receipt } = await sendOne(payer, SET8, [m.hash, k, kMaxUint256, kMaxUint256, 'big', 'all bits', p, A('kw')], 'UsageApiKeySet',
      { accountHash: m.hash, usageKeyHash: k, wallet: A('kw'), expiration: kMaxUint256, balance: kMaxUint256, name: 'big', description: 'all bits', permissions: p });
    const t = await blockTime(receipt);
    assert.deepEqual(await read('getUsageApiKey', k), {
      accountHash: m.hash, usageKeyHash: k, wallet: A('kw'), expiration: kMaxUint256, balance: kMaxUint256,
      name: 'big', description: 'all bits', permissions: p, createdAt: t,
    });
    // The 7-argument form records no wallet.
    const k7 = H('key seven');
    await sendOne(payer, SET7, [m.hash, k7, 5n, 6n, 'seven', '', somePerms], 'UsageApiKeySet',
      { accountHash: m.hash, usageKeyHash: k7, wallet: ZERO, expiration: 5n, balance: 6n, name: 'seven', description: '', permissions: somePerms });
    const got = await read('getUsageApiKey', k7);
    assert.equal(got.wallet, ZERO);
    assert.deepEqual(got.permissions, somePerms);
    assert.deepEqual((await read('listUsageApiKeys', m.hash, 0n, 10n)).items.map((x) => x.usageKeyHash), [m.key, k, k7]);
  });

  test('replacing keeps creation time and position; a hash belongs to one account', async () => {
    const before_ = await read('getUsageApiKey', m.key);
    await provider.send('evm_increaseTime', [100]);
    await send(payer, SET7, m.hash, m.key, 1n, 2n, 'replaced', 'r', perms());
    const after_ = await read('getUsageApiKey', m.key);
    assert.equal(after_.createdAt, before_.createdAt);
    assert.equal(after_.name, 'replaced');
    assert.equal(after_.wallet, ZERO);
    assert.deepEqual(after_.permissions, perms());
    assert.equal((await read('listUsageApiKeys', m.hash, 0n, 1n)).items[0].usageKeyHash, m.key);
    await reverts(adminB, SET8, [m2.hash, m.key, 0n, 0n, 'stolen', '', perms(), ZERO], 'UsageKeyOfAnotherAccount', { accountHash: m2.hash, usageKeyHash: m.key });
    await reverts(payer, SET7, [m.hash, H('k nameless'), 0n, 0n, '', '', perms()], 'InvalidArgument', { reason: 'name: must not be empty' });
    await reverts(payer, SET7, [m.hash, H('k'), 0n, 0n, 'n', 'd'.repeat(4097), perms()], 'InvalidArgument', { reason: 'description: longer than 4096 bytes' });
  });

  test('updateUsageApiKeyMetadata and removeUsageApiKey', async () => {
    const k = H('key big');
    await sendOne(payer, 'updateUsageApiKeyMetadata', [m.hash, k, 'n2', 'd2'], 'UsageApiKeyMetadataUpdated',
      { accountHash: m.hash, usageKeyHash: k, name: 'n2', description: 'd2' });
    const got = await read('getUsageApiKey', k);
    assert.equal(got.name, 'n2');
    assert.equal(got.description, 'd2');
    assert.deepEqual(got.permissions.manageIpfsIdsInGroups, [3n, 1n]);
    await reverts(payer, 'updateUsageApiKeyMetadata', [m.hash, k, '', ''], 'InvalidArgument', { reason: 'name: must not be empty' });
    await reverts(payer, 'updateUsageApiKeyMetadata', [m.hash, H('none'), 'x', ''], 'UnknownUsageKey', { accountHash: m.hash, usageKeyHash: H('none') });
    await reverts(adminB, 'updateUsageApiKeyMetadata', [m2.hash, k, 'x', ''], 'UnknownUsageKey', { accountHash: m2.hash, usageKeyHash: k });
    await reverts(adminB, 'removeUsageApiKey', [m2.hash, k], 'UnknownUsageKey', { accountHash: m2.hash, usageKeyHash: k });

    await sendOne(payer, 'removeUsageApiKey', [m.hash, k], 'UsageApiKeyRemoved', { accountHash: m.hash, usageKeyHash: k });
    await reverts(null, 'getUsageApiKey', [k], 'UnknownUsageKey', { accountHash: 0n, usageKeyHash: k });
    await reverts(payer, 'removeUsageApiKey', [m.hash, k], 'UnknownUsageKey', { accountHash: m.hash, usageKeyHash: k });
    // The rest keep their order; the hash may be set again, and then comes last.
    const list = async () => (await read('listUsageApiKeys', m.hash, 0n, 10n)).items.map((x) => x.usageKeyHash);
    assert.deepEqual(await list(), [m.key, H('key seven')]);
    await send(payer, SET7, m.hash, k, 0n, 0n, 'again', '', perms());
    assert.deepEqual(await list(), [m.key, H('key seven'), k]);
    // Removed from another account's perspective too: m2 may now take a removed hash.
    await send(payer, 'removeUsageApiKey', m.hash, k);
    await send(adminB, SET7, m2.hash, k, 0n, 0n, 'm2 now', '', perms());
    assert.equal((await read('getUsageApiKey', k)).accountHash, m2.hash);
    await reverts(null, 'listUsageApiKeys', [H('ghost'), 0n, 10n], 'UnknownAccount', { accountHash: H('ghost') });
  });
});

describe('groups', () => {
  let m, m2;
  const anyCid = cidHash('QmNotRegisteredAnywhere');
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    m2 = await prepare('m2', true, adminB);
  });

  test('addGroup: ids per account, never reused; event and views', async () => {
    assert.equal(await simulate(payer, 'addGroup', m.hash, 'two', 'two description', [], []), 2n);
    await sendOne(payer, 'addGroup', [m.hash, 'two', 'two description', [m.walletFree, m.walletInGroup], [anyCid, m.cidInGroup]], 'GroupAdded',
      { accountHash: m.hash, groupId: 2n, name: 'two', description: 'two description', pkpIds: [m.walletFree, m.walletInGroup], cidHashes: [anyCid, m.cidInGroup] });
    assert.deepEqual(await read('getGroup', m.hash, 2n),
      { groupId: 2n, name: 'two', description: 'two description', pkpIds: [m.walletFree, m.walletInGroup], cidHashes: [anyCid, m.cidInGroup] });
    await send(payer, 'addGroup', m.hash, 'three', '', [], []);
    await sendOne(payer, 'removeGroup', [m.hash, 3n], 'GroupRemoved', { accountHash: m.hash, groupId: 3n });
    await reverts(null, 'getGroup', [m.hash, 3n], 'UnknownGroup', { accountHash: m.hash, groupId: 3n });
    await reverts(payer, 'removeGroup', [m.hash, 3n], 'UnknownGroup', { accountHash: m.hash, groupId: 3n });
    await reverts(payer, 'removeGroup', [m.hash, 0n], 'UnknownGroup', { accountHash: m.hash, groupId: 0n });
    await reverts(adminB, 'removeGroup', [m2.hash, 2n], 'UnknownGroup', { accountHash: m2.hash, groupId: 2n });
    await reverts(null, 'getGroup', [m.hash, 0n], 'UnknownGroup', { accountHash: m.hash, groupId: 0n });
    await reverts(null, 'getGroup', [H('ghost'), 1n], 'UnknownAccount', { accountHash: H('ghost') });
    await send(payer, 'addGroup', m.hash, 'four', '', [], []);
    const all = await read('listGroups', m.hash, 0n, 100n);
    assert.equal(all.total, 3n);
    assert.deepEqual(all.items.map((g) => g.groupId), [1n, 2n, 4n]);
    assert.deepEqual(all.items[1].pkpIds, [m.walletFree, m.walletInGroup]);
    assert.equal((await read('listGroups', m2.hash, 0n, 100n)).total, 1n);
  });

  test('member sets: registered PKPs, nothing twice (checked first)', async () => {
    const w = payer;
    await reverts(w, 'addGroup', [m.hash, 'x', '', [A('unregistered')], []], 'UnknownWallet', { accountHash: m.hash, wallet: A('unregistered') });
    await reverts(w, 'addGroup', [m.hash, 'x', '', [m2.walletFree], []], 'UnknownWallet', { accountHash: m.hash, wallet: m2.walletFree });
    await reverts(w, 'addGroup', [m.hash, 'x', '', [m.walletFree, m.walletInGroup, m.walletFree], []], 'InvalidArgument', { reason: 'pkpIds[2]: listed twice' });
    await reverts(w, 'addGroup', [m.hash, 'x', '', [], [anyCid, anyCid]], 'InvalidArgument', { reason: 'cidHashes[1]: listed twice' });
    await reverts(w, 'addGroup', [m.hash, 'x', '', [A('u'), A('u')], []], 'InvalidArgument', { reason: 'pkpIds[1]: listed twice' });
    await reverts(w, 'addGroup', [m.hash, '', '', [], []], 'InvalidArgument', { reason: 'name: must not be empty' });
    await reverts(w, 'addGroup', [m.hash, 'g'.repeat(257), '', [], []], 'InvalidArgument', { reason: 'name: longer than 256 bytes' });
    await reverts(w, 'updateGroup', [m.hash, 99n, 'u', '', [], []], 'UnknownGroup', { accountHash: m.hash, groupId: 99n });
    await reverts(w, 'updateGroup', [m.hash, 0n, 'u', '', [], []], 'UnknownGroup', { accountHash: m.hash, groupId: 0n });
    await reverts(w, 'updateGroup', [m.hash, 2n, 'u', '', [A('unregistered')], []], 'UnknownWallet', { accountHash: m.hash, wallet: A('unregistered') });
    await reverts(w, 'updateGroup', [m.hash, 2n, '', '', [], []], 'InvalidArgument', { reason: 'name: must not be empty' });
  });

  test('updateGroup replaces everything', async () => {
    await sendOne(payer, 'updateGroup', [m.hash, 2n, 'updated', 'u', [m.walletInGroup], [anyCid]], 'GroupUpdated',
      { accountHash: m.hash, groupId: 2n, name: 'updated', description: 'u', pkpIds: [m.walletInGroup], cidHashes: [anyCid] });
    assert.deepEqual(await read('getGroup', m.hash, 2n),
      { groupId: 2n, name: 'updated', description: 'u', pkpIds: [m.walletInGroup], cidHashes: [anyCid] });
  });

  test('single members in insertion order', async () => {
    await sendOne(payer, 'addPkpToGroup', [m.hash, 2n, m.walletFree], 'PkpAddedToGroup', { accountHash: m.hash, groupId: 2n, pkpId: m.walletFree });
    assert.deepEqual((await read('getGroup', m.hash, 2n)).pkpIds, [m.walletInGroup, m.walletFree]);
    await reverts(payer, 'addPkpToGroup', [m.hash, 2n, m.walletFree], 'Duplicate', { what: 'pkpId' });
    await reverts(payer, 'addPkpToGroup', [m.hash, 2n, A('unregistered')], 'UnknownWallet', { accountHash: m.hash, wallet: A('unregistered') });
    await reverts(payer, 'addPkpToGroup', [m.hash, 7n, m.walletFree], 'UnknownGroup', { accountHash: m.hash, groupId: 7n });
    await sendOne(payer, 'removePkpFromGroup', [m.hash, 2n, m.walletInGroup], 'PkpRemovedFromGroup', { accountHash: m.hash, groupId: 2n, pkpId: m.walletInGroup });
    assert.deepEqual((await read('getGroup', m.hash, 2n)).pkpIds, [m.walletFree]);
    await reverts(payer, 'removePkpFromGroup', [m.hash, 2n, m.walletInGroup], 'UnknownWallet', { accountHash: m.hash, wallet: m.walletInGroup });
    await reverts(payer, 'removePkpFromGroup', [m.hash, 7n, m.walletFree], 'UnknownGroup', { accountHash: m.hash, groupId: 7n });

    await sendOne(payer, 'addActionToGroup', [m.hash, 2n, m.cidInGroup], 'ActionAddedToGroup', { accountHash: m.hash, groupId: 2n, hashedCid: m.cidInGroup });
    assert.deepEqual((await read('getGroup', m.hash, 2n)).cidHashes, [anyCid, m.cidInGroup]);
    await reverts(payer, 'addActionToGroup', [m.hash, 2n, anyCid], 'Duplicate', { what: 'hashedCid' });
    await reverts(payer, 'addActionToGroup', [m.hash, 7n, anyCid], 'UnknownGroup', { accountHash: m.hash, groupId: 7n });
    await sendOne(payer, 'removeActionFromGroup', [m.hash, 2n, anyCid], 'ActionRemovedFromGroup', { accountHash: m.hash, groupId: 2n, hashedCid: anyCid });
    assert.deepEqual((await read('getGroup', m.hash, 2n)).cidHashes, [m.cidInGroup]);
    await reverts(payer, 'removeActionFromGroup', [m.hash, 2n, anyCid], 'UnknownAction', { accountHash: m.hash, hashedCid: anyCid });
    await reverts(payer, 'removeActionFromGroup', [m.hash, 7n, anyCid], 'UnknownGroup', { accountHash: m.hash, groupId: 7n });
  });

  test('removal from the middle keeps the order of the rest', async () => {
    const pkps = [1, 2, 3, 4, 5].map((i) => A(`m order ${i}`));
    for (const p of pkps) await send(payer, 'registerWalletDerivation', m.hash, p, 0n, 'w', '');
    const cids = [1, 2, 3, 4, 5].map((i) => H(`order cid ${i}`));
    await send(payer, 'addGroup', m.hash, 'order', '', pkps, cids);
    await send(payer, 'removePkpFromGroup', m.hash, 5n, pkps[1]);
    await send(payer, 'removePkpFromGroup', m.hash, 5n, pkps[0]);
    await send(payer, 'removeActionFromGroup', m.hash, 5n, cids[2]);
    await send(payer, 'removeActionFromGroup', m.hash, 5n, cids[4]);
    const g = await read('getGroup', m.hash, 5n);
    assert.deepEqual(g.pkpIds, [pkps[2], pkps[3], pkps[4]]);
    assert.deepEqual(g.cidHashes, [cids[0], cids[1], cids[3]]);
  });

  test('listWalletsInGroup and listActionsInGroup', async () => {
    await send(payer, 'addPkpToGroup', m.hash, 1n, m.walletFree);
    const ws = await read('listWalletsInGroup', m.hash, 1n, 0n, 20n);
    assert.equal(ws.total, 2n);
    assert.deepEqual(ws.items.map((w) => w.wallet), [m.walletInGroup, m.walletFree]);
    assert.equal(ws.items[1].name, 'wallet 2');
    assert.equal(ws.items[1].derivationPath, H('m path 2'));
    assert.equal((await read('listWalletsInGroup', m.hash, 4n, 0n, 20n)).total, 0n);
    await reverts(null, 'listWalletsInGroup', [m.hash, 3n, 0n, 20n], 'UnknownGroup', { accountHash: m.hash, groupId: 3n });
    await reverts(null, 'listWalletsInGroup', [H('ghost'), 1n, 0n, 20n], 'UnknownAccount', { accountHash: H('ghost') });

    await send(payer, 'addActionToGroup', m.hash, 1n, anyCid);
    const as = await read('listActionsInGroup', m.hash, 1n, 0n, 20n);
    assert.equal(as.total, 2n);
    assert.deepEqual(as.items[0], { hashedCid: m.cidInGroup, cid: m.cid, name: 'action', description: 'does things', createdAt: as.items[0].createdAt });
    assert.ok(as.items[0].createdAt > 0n);
    assert.deepEqual(as.items[1], { hashedCid: anyCid, cid: '', name: '', description: '', createdAt: 0n });
    await reverts(null, 'listActionsInGroup', [m.hash, 3n, 0n, 20n], 'UnknownGroup', { accountHash: m.hash, groupId: 3n });
    await reverts(null, 'listActionsInGroup', [H('ghost'), 1n, 0n, 20n], 'UnknownAccount', { accountHash: H('ghost') });
  });
});

describe('wallets', () => {
  let m, m2;
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    m2 = await prepare('m2', true, adminB);
  });

  test('registerWalletDerivation: event, views, count', async () => {
    const w3 = A('m wallet 3');
    const { receipt } = await sendOne(payer, 'registerWalletDerivation', [m.hash, w3, kMaxUint256, 'wallet 3', 'third'], 'WalletDerivationRegistered',
      { accountHash: m.hash, wallet: w3, derivationPath: kMaxUint256, name: 'wallet 3', description: 'third' });
    assert.deepEqual(await read('getWallet', m.hash, w3),
      { wallet: w3, derivationPath: kMaxUint256, name: 'wallet 3', description: 'third', createdAt: await blockTime(receipt) });
    assert.equal((await read('getAccount', m.hash)).walletCount, 3n);
    assert.equal((await read('getAccount', m2.hash)).walletCount, 2n);
    const all = await read('listWallets', m.hash, 0n, 20n);
    assert.equal(all.total, 3n);
    assert.deepEqual(all.items.map((w) => w.wallet), [m.walletInGroup, m.walletFree, w3]);
  });

  test('refusals', async () => {
    await reverts(payer, 'registerWalletDerivation', [m.hash, m.walletFree, 0n, 'again', ''], 'Duplicate', { what: 'wallet' });
    await reverts(payer, 'registerWalletDerivation', [m.hash, ZERO, 0n, 'w', ''], 'InvalidArgument', { reason: 'wallet: zero address' });
    await reverts(payer, 'registerWalletDerivation', [m.hash, A('w4'), 0n, '', ''], 'InvalidArgument', { reason: 'name: must not be empty' });
    await reverts(payer, 'registerWalletDerivation', [m.hash, A('w4'), 0n, 'w', 'd'.repeat(4097)], 'InvalidArgument', { reason: 'description: longer than 4096 bytes' });
    await reverts(null, 'getWallet', [m.hash, A('nope')], 'UnknownWallet', { accountHash: m.hash, wallet: A('nope') });
    await reverts(null, 'getWallet', [m2.hash, A('m wallet 3')], 'UnknownWallet', { accountHash: m2.hash, wallet: A('m wallet 3') });
    await reverts(null, 'getWallet', [H('ghost'), A('nope')], 'UnknownAccount', { accountHash: H('ghost') });
    await reverts(null, 'listWallets', [H('ghost'), 0n, 1n], 'UnknownAccount', { accountHash: H('ghost') });
    // The same wallet may be registered in two accounts (the registry is per account).
    await send(adminB, 'registerWalletDerivation', m2.hash, A('m wallet 3'), 1n, 'shared', '');
  });
});

describe('actions', () => {
  let m, m2;
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    m2 = await prepare('m2', true, adminB);
  });

  test('addAction: event, views, refusals', async () => {
    const a = cidHash('QmActionA');
    const { receipt } = await sendOne(payer, 'addAction', [m.hash, a, 'QmActionA', 'a', 'first'], 'ActionAdded',
      { accountHash: m.hash, hashedCid: a, cid: 'QmActionA', name: 'a', description: 'first' });
    assert.deepEqual(await read('getAction', m.hash, a),
      { hashedCid: a, cid: 'QmActionA', name: 'a', description: 'first', createdAt: await blockTime(receipt) });
    await reverts(payer, 'addAction', [m.hash, a, 'QmActionA', 'a', ''], 'Duplicate', { what: 'hashedCid' });
    await send(adminB, 'addAction', m2.hash, a, 'QmActionA', 'a in m2', '');  // per account
    await reverts(payer, 'addAction', [m.hash, H('x'), 'QmBad', 'b', ''], 'InvalidArgument', { reason: 'hashedCid: not keccak256 of cid' });
    await reverts(payer, 'addAction', [m.hash, cidHash(''), '', 'b', ''], 'InvalidArgument', { reason: 'cid: must not be empty' });
    const long = `Qm${'x'.repeat(255)}`;
    await reverts(payer, 'addAction', [m.hash, cidHash(long), long, 'b', ''], 'InvalidArgument', { reason: 'cid: longer than 256 bytes' });
    await reverts(payer, 'addAction', [m.hash, cidHash('QmBad'), 'QmBad', '', ''], 'InvalidArgument', { reason: 'name: must not be empty' });
    const longest = `Qm${'x'.repeat(254)}`;
    await send(payer, 'addAction', m.hash, cidHash(longest), longest, 'longest', '');
    await reverts(null, 'getAction', [m.hash, H('none')], 'UnknownAction', { accountHash: m.hash, hashedCid: H('none') });
    await reverts(null, 'getAction', [H('ghost'), H('none')], 'UnknownAccount', { accountHash: H('ghost') });
  });

  test('updateActionMetadata', async () => {
    const a = cidHash('QmActionA');
    await sendOne(payer, 'updateActionMetadata', [m.hash, a, 'a2', 'd2'], 'ActionMetadataUpdated',
      { accountHash: m.hash, hashedCid: a, name: 'a2', description: 'd2' });
    const got = await read('getAction', m.hash, a);
    assert.equal(got.name, 'a2');
    assert.equal(got.cid, 'QmActionA');
    assert.equal((await read('getAction', m2.hash, a)).name, 'a in m2');
    await reverts(payer, 'updateActionMetadata', [m.hash, H('none'), 'x', ''], 'UnknownAction', { accountHash: m.hash, hashedCid: H('none') });
    await reverts(payer, 'updateActionMetadata', [m.hash, a, '', ''], 'InvalidArgument', { reason: 'name: must not be empty' });
  });

  test('deleteAction removes the hash from every group of the account only', async () => {
    const a = cidHash('QmActionA');
    const unregistered = cidHash('QmUnregistered');
    await send(payer, 'addActionToGroup', m.hash, 1n, unregistered);
    await send(payer, 'addActionToGroup', m.hash, 1n, a);
    await send(payer, 'addGroup', m.hash, 'g2', '', [], [a]);
    await send(payer, 'addGroup', m.hash, 'g3', '', [], [unregistered]);
    await send(payer, 'removeGroup', m.hash, 3n);  // a gap the deletion steps over
    await send(adminB, 'addActionToGroup', m2.hash, 1n, a);
    await sendOne(payer, 'deleteAction', [m.hash, a], 'ActionDeleted', { accountHash: m.hash, hashedCid: a });
    await reverts(null, 'getAction', [m.hash, a], 'UnknownAction', { accountHash: m.hash, hashedCid: a });
    await reverts(payer, 'deleteAction', [m.hash, a], 'UnknownAction', { accountHash: m.hash, hashedCid: a });
    assert.deepEqual((await read('getGroup', m.hash, 1n)).cidHashes, [m.cidInGroup, unregistered]);
    assert.deepEqual((await read('getGroup', m.hash, 2n)).cidHashes, []);
    assert.deepEqual((await read('getGroup', m2.hash, 1n)).cidHashes, [m2.cidInGroup, a]);
    assert.equal((await read('getAction', m2.hash, a)).name, 'a in m2');
    const list = await read('listActions', m.hash, 0n, 20n);
    assert.equal(list.total, 2n);
    assert.deepEqual(list.items.map((x) => x.hashedCid), [m.cidInGroup, cidHash(`Qm${'x'.repeat(254)}`)]);
    // Registered again: last in the list.
    await send(payer, 'addAction', m.hash, a, 'QmActionA', 'back', '');
    assert.deepEqual((await read('listActions', m.hash, 0n, 20n)).items.map((x) => x.hashedCid).at(-1), a);
    await reverts(null, 'listActions', [H('ghost'), 0n, 1n], 'UnknownAccount', { accountHash: H('ghost') });
  });
});

describe('pagination: offset, limit, total, creation order', () => {
  let h;
  const pkps = [], keys = [], cids = [], groups = [];
  before(async () => {
    await deploy();
    h = H('paged');
    await send(payer, 'newAccount', h, adminA.address, true, 'paged', '', '');
    // Values descend while creation ascends, so creation order differs from value order.
    for (let i = 0; i < 7; ++i) {
      const tag = 200 - i;
      const pkp = ethers.getAddress(`0x${tag.toString(16).padStart(2, '0')}${'00'.repeat(18)}01`);
      await send(payer, 'registerWalletDerivation', h, pkp, BigInt(tag), `w${i}`, '');
      pkps.push(pkp);
      const key = BigInt(tag) << 240n;
      await send(payer, SET7, h, key, 0n, 0n, `k${i}`, '', perms());
      keys.push(key);
      const cid = `QmPage${7 - i}`;
      await send(payer, 'addAction', h, cidHash(cid), cid, `a${i}`, '');
      cids.push(cidHash(cid));
      await send(payer, 'addGroup', h, `g${i}`, '', [], []);
      groups.push(BigInt(i + 1));
    }
  });

  async function checkPaging(name, args, key, expected) {
    const seen = [];
    // Pages of 3: full ones, the rest, then one past the end (empty).
    for (let n = 0n; n <= BigInt(Math.ceil(expected.length / 3)); ++n) {
      const offset = n * 3n;
      const page = await read(name, ...args, offset, 3n);
      assert.equal(page.total, BigInt(expected.length), `${name} total`);
      const want = Math.max(0, Math.min(3, expected.length - Number(offset)));
      assert.equal(page.items.length, want, `${name} offset ${offset}`);
      seen.push(...page.items.map(key));
    }
    assert.deepEqual(seen, expected, name);
    assert.equal((await read(name, ...args, 0n, kMaxUint256)).items.length, expected.length);
    assert.equal((await read(name, ...args, 0n, 0n)).items.length, 0);
    const beyond = await read(name, ...args, kMaxUint256, kMaxUint256);
    assert.equal(beyond.items.length, 0);
    assert.equal(beyond.total, BigInt(expected.length));
  }

  test('account lists', async () => {
    await checkPaging('listWallets', [h], (x) => x.wallet, pkps);
    await checkPaging('listUsageApiKeys', [h], (x) => x.usageKeyHash, keys);
    await checkPaging('listActions', [h], (x) => x.hashedCid, cids);
    await checkPaging('listGroups', [h], (x) => x.groupId, groups);
  });

  test('after removals, in groups, and on empty accounts', async () => {
    await send(payer, 'removeGroup', h, 1n);
    await send(payer, 'removeGroup', h, 4n);
    await send(payer, 'removeUsageApiKey', h, keys[3]);
    await send(payer, 'deleteAction', h, cids[0]);
    await checkPaging('listGroups', [h], (x) => x.groupId, [2n, 3n, 5n, 6n, 7n]);
    await checkPaging('listUsageApiKeys', [h], (x) => x.usageKeyHash, keys.filter((_, i) => i !== 3));
    await checkPaging('listActions', [h], (x) => x.hashedCid, cids.slice(1));
    // A group's own order (here the reverse of registration).
    await send(payer, 'addGroup', h, 'big', '', [...pkps].reverse(), [...cids.slice(1)].reverse());
    await checkPaging('listWalletsInGroup', [h, 8n], (x) => x.wallet, [...pkps].reverse());
    await checkPaging('listActionsInGroup', [h, 8n], (x) => x.hashedCid, [...cids.slice(1)].reverse());
    const last = await read('listGroups', h, 3n, 3n);
    assert.deepEqual(last.items.map((g) => g.groupId), [6n, 7n, 8n]);
    assert.deepEqual(last.items[2].pkpIds, [...pkps].reverse());
    await send(payer, 'newAccount', H('empty'), A('empty admin'), true, 'empty', '', '');
    for (const name of ['listGroups', 'listWallets', 'listActions', 'listUsageApiKeys']) {
      assert.deepEqual(await read(name, H('empty'), 0n, 20n), { items: [], total: 0n }, name);
    }
  });
});

describe('credits and payments', () => {
  let m, m2;
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    m2 = await prepare('m2', true, adminB);
  });

  test('recordPayment: api payers only, bounds, duplicates across accounts', async () => {
    await reverts(adminA, 'recordPayment', [m.hash, 'pi_1', 500n, 'stripe'], 'NotApiPayer', { sender: adminA.address });
    await reverts(stranger, 'recordPayment', [m.hash, 'pi_1', 500n, 'stripe'], 'NotApiPayer', { sender: stranger.address });
    const { receipt } = await sendOne(payer, 'recordPayment', [m.hash, 'pi_1', 500n, 'stripe'], 'PaymentRecorded',
      { accountHash: m.hash, paymentIntentId: 'pi_1', amountCents: 500n, provider: 'stripe' });
    assert.deepEqual(await read('getPayment', m.hash, 'pi_1'),
      { accountHash: m.hash, intentId: 'pi_1', amountCents: 500n, provider: 'stripe', credited: false, createdAt: await blockTime(receipt) });
    assert.equal(await read('creditBalance', m.hash), 0n);
    await reverts(payer, 'recordPayment', [m.hash, 'pi_1', 500n, 'stripe'], 'Duplicate', { what: 'intentId' });
    await reverts(payer, 'recordPayment', [m2.hash, 'pi_1', 500n, 'stripe'], 'Duplicate', { what: 'intentId' });
    const bad = [
      [[m.hash, 'pi_0', 0n, 'dev'], 'amountCents: out of range'],
      [[m.hash, 'pi_0', kMaxInt64 + 1n, 'dev'], 'amountCents: out of range'],
      [[m.hash, '', 1n, 'dev'], 'intentId: must not be empty'],
      [[m.hash, 'i'.repeat(257), 1n, 'dev'], 'intentId: longer than 256 bytes'],
      [[m.hash, 'pi_0', 1n, ''], 'provider: must not be empty'],
      [[m.hash, 'pi_0', 1n, 'p'.repeat(65)], 'provider: longer than 64 bytes'],
    ];
    for (const [args, reason] of bad) await reverts(payer, 'recordPayment', args, 'InvalidArgument', { reason });
    await reverts(payer, 'recordPayment', [H('ghost'), 'pi_g', 1n, 'dev'], 'UnknownAccount', { accountHash: H('ghost') });
    await reverts(null, 'getPayment', [m.hash, 'pi_unknown'], 'UnknownPayment', { accountHash: m.hash, intentId: 'pi_unknown' });
    await reverts(null, 'getPayment', [m2.hash, 'pi_1'], 'UnknownPayment', { accountHash: m2.hash, intentId: 'pi_1' });
    await reverts(null, 'getPayment', [H('ghost'), 'pi_1'], 'UnknownAccount', { accountHash: H('ghost') });
  });

  test('creditPayment: once, to its own account', async () => {
    await reverts(adminA, 'creditPayment', [m.hash, 'pi_1'], 'NotApiPayer', { sender: adminA.address });
    await reverts(payer, 'creditPayment', [m2.hash, 'pi_1'], 'UnknownPayment', { accountHash: m2.hash, intentId: 'pi_1' });
    await reverts(payer, 'creditPayment', [m.hash, 'pi_unknown'], 'UnknownPayment', { accountHash: m.hash, intentId: 'pi_unknown' });
    await reverts(payer, 'creditPayment', [H('ghost'), 'pi_1'], 'UnknownAccount', { accountHash: H('ghost') });
    assert.equal(await simulate(payer, 'creditPayment', m.hash, 'pi_1'), 500n);
    await sendOne(payer, 'creditPayment', [m.hash, 'pi_1'], 'PaymentCredited',
      { accountHash: m.hash, paymentIntentId: 'pi_1', amountCents: 500n, provider: 'stripe', balance: 500n });
    assert.equal((await read('getPayment', m.hash, 'pi_1')).credited, true);
    await reverts(payer2, 'creditPayment', [m.hash, 'pi_1'], 'AlreadyCredited', { accountHash: m.hash, intentId: 'pi_1' });
    await send(payer, 'recordPayment', m.hash, 'pi_2', 1200n, 'dev');
    await send(payer2, 'creditPayment', m.hash, 'pi_2');
    assert.equal(await read('creditBalance', m.hash), 1700n);
    assert.equal((await read('getAccount', m.hash)).balance, 1700n);
    assert.equal(await read('creditBalance', m2.hash), 0n);
    await reverts(null, 'creditBalance', [H('ghost')], 'UnknownAccount', { accountHash: H('ghost') });
  });

  test('balances stay within int64', async () => {
    await send(payer, 'recordPayment', m2.hash, 'pi_max', kMaxInt64, 'dev');
    await send(payer, 'creditPayment', m2.hash, 'pi_max');
    await send(payer, 'recordPayment', m2.hash, 'pi_one_more', 1n, 'dev');
    await reverts(payer, 'creditPayment', [m2.hash, 'pi_one_more'], 'InvalidArgument', { reason: 'amountCents: balance would overflow' });
    await send(payer, 'debitCredits', m2.hash, 1n);
    await send(payer, 'creditPayment', m2.hash, 'pi_one_more');
    assert.equal(await read('creditBalance', m2.hash), kMaxInt64);
  });

  test('debitCredits: the run-action price', async () => {
    await reverts(adminA, 'debitCredits', [m.hash, 1n], 'NotApiPayer', { sender: adminA.address });
    await reverts(payer, 'debitCredits', [m.hash, 0n], 'InvalidArgument', { reason: 'amount: must be at least 1' });
    await reverts(payer, 'debitCredits', [H('ghost'), 1n], 'UnknownAccount', { accountHash: H('ghost') });
    await reverts(payer, 'debitCredits', [m.hash, 1701n], 'InsufficientCredits', { accountHash: m.hash, balance: 1700n, required: 1701n });
    assert.equal(await simulate(payer, 'debitCredits', m.hash, 1500n), 200n);
    await sendOne(payer, 'debitCredits', [m.hash, 1500n], 'CreditsDebited', { accountHash: m.hash, amount: 1500n, balance: 200n });
    assert.equal(await read('creditBalance', m.hash), 200n);
  });

  test('chargeCredits: api payers and the account\'s own admin', async () => {
    await sendOne(payer, 'chargeCredits', [m.hash, 10n], 'WriteCharged', { accountHash: m.hash, amount: 10n, balance: 190n });
    await sendOne(adminA, 'chargeCredits', [m.hash, 20n], 'WriteCharged', { accountHash: m.hash, amount: 20n, balance: 170n });
    await reverts(adminB, 'chargeCredits', [m.hash, 1n], 'NotApiPayer', { sender: adminB.address });
    await reverts(stranger, 'chargeCredits', [m.hash, 1n], 'NotApiPayer', { sender: stranger.address });
    await reverts(payer, 'chargeCredits', [H('ghost'), 1n], 'UnknownAccount', { accountHash: H('ghost') });
    await reverts(payer, 'chargeCredits', [m.hash, 171n], 'InsufficientCredits', { accountHash: m.hash, balance: 170n, required: 171n });
    // A zero charge changes nothing and logs nothing.
    assert.equal(await simulate(payer, 'chargeCredits', m.hash, 0n), 170n);
    const { events } = await send(payer, 'chargeCredits', m.hash, 0n);
    assert.deepEqual(events, []);
    assert.equal(await read('creditBalance', m.hash), 170n);
  });
});

describe('multicall', () => {
  let m, u;
  const encode = (name, ...args) => iface.encodeFunctionData(name, args);
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    u = await prepare('u', false, adminC);
    await send(payer, 'recordPayment', m.hash, 'pi_mc', 10n, 'dev');
    await send(payer, 'creditPayment', m.hash, 'pi_mc');
  });

  test('a write and its charge in one transaction', async () => {
    const calls = [encode('addGroup', m.hash, 'paid', '', [], []), encode('chargeCredits', m.hash, 3n)];
    const results = await simulate(payer, 'multicall', calls);
    assert.equal(iface.decodeFunctionResult('addGroup', results[0])[0], 2n);
    assert.equal(iface.decodeFunctionResult('chargeCredits', results[1])[0], 7n);
    const { events } = await send(payer, 'multicall', calls);
    assert.deepEqual(events.map((e) => e.name), ['GroupAdded', 'WriteCharged']);
    assert.equal(events[0].args.groupId, 2n);
    assert.deepEqual(events[1].args, { accountHash: m.hash, amount: 3n, balance: 7n });
    assert.equal(await read('creditBalance', m.hash), 7n);
  });

  test('all or nothing; the failing call\'s revert data re-thrown unchanged', async () => {
    const charge = encode('chargeCredits', m.hash, 8n);
    const alone = await reverts(payer, 'chargeCredits', [m.hash, 8n], 'InsufficientCredits', { accountHash: m.hash, balance: 7n, required: 8n });
    const calls = [encode('addGroup', m.hash, 'unpaid', '', [], []), charge];
    const batched = await reverts(payer, 'multicall', [calls], 'InsufficientCredits', { accountHash: m.hash, balance: 7n, required: 8n });
    assert.equal(batched, alone);
    // Mined: the transaction fails and the first call's group does not exist.
    const tx = await registry.connect(payer).multicall(calls, { gasLimit: 1_000_000n });
    await assert.rejects(tx.wait(), (e) => e.code === 'CALL_EXCEPTION' && e.receipt?.status === 0);
    await reverts(null, 'getGroup', [m.hash, 3n], 'UnknownGroup');
    assert.equal(await read('creditBalance', m.hash), 7n);
    assert.equal(await simulate(payer, 'addGroup', m.hash, 'next', '', [], []), 3n);
    // A failing write before a charge: the write's error, whatever follows.
    const data = await reverts(payer, 'multicall', [[encode('removeGroup', m.hash, 99n), encode('chargeCredits', m.hash, 1n)]],
      'UnknownGroup', { accountHash: m.hash, groupId: 99n });
    assert.equal(data, await reverts(payer, 'removeGroup', [m.hash, 99n], 'UnknownGroup'));
  });

  test('every call runs with the caller as msg.sender', async () => {
    await reverts(stranger, 'multicall', [[encode('addGroup', m.hash, 'x', '', [], [])]], 'NotAdmin', { accountHash: m.hash, sender: stranger.address });
    await reverts(payer, 'multicall', [[encode('addGroup', u.hash, 'x', '', [], [])]], 'RelayNotAllowed', { accountHash: u.hash, sender: payer.address });
    const { events } = await send(adminC, 'multicall', [encode('addGroup', u.hash, 'x', '', [], []), encode('removeGroup', u.hash, 1n)]);
    assert.deepEqual(events.map((e) => e.name), ['GroupAdded', 'GroupRemoved']);
    assert.deepEqual((await simulate(adminC, 'multicall', [])), []);
  });
});

// API.md §3 "Identity rules", tried as an attacker would with nothing but public data (a victim's
// account hash, usage-key hashes and wallet addresses are all in the registry's logs). Each of
// these writes succeeded before the rules existed.
describe('identity rules', () => {
  let m;        // the victim: a managed account with a usage key, written by the api payer
  let own;      // the attacker's own ChainSecured account (stranger's wallet)
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    own = canonical(stranger.address);
    await sendOne(stranger, 'newAccount', [own, stranger.address, false, 'attacker', '', ''], 'AccountCreated',
      { accountHash: own, adminWalletAddress: stranger.address, managed: false, name: 'attacker', description: '' });
  });

  test('a wallet creates no account under a hash of its choosing (a victim usage key\'s)', async () => {
    // With the victim's usage-key hash as the account hash, the victim's key would authenticate
    // as the attacker's account.
    await reverts(spare, 'newAccount', [m.key, spare.address, false, 'squat', '', ''], 'AccountHashNotCanonical',
      { apiKeyHash: m.key, admin: spare.address });
    await reverts(spare, 'newAccount', [H('any'), spare.address, false, 'squat', '', ''], 'AccountHashNotCanonical',
      { apiKeyHash: H('any'), admin: spare.address });
    assert.equal((await read('getUsageApiKey', m.key)).accountHash, m.hash);
    await reverts(null, 'getAccount', [m.key], 'UnknownAccount', { accountHash: m.key });
  });

  test('a wallet creates no managed account (ManagedNotAllowed), even under its own hash', async () => {
    const h = canonical(spare.address);
    await reverts(spare, 'newAccount', [h, spare.address, true, 'relayable', '', ''], 'ManagedNotAllowed',
      { apiKeyHash: h, sender: spare.address });
    await reverts(spare, 'newAccount', [H('m'), spare.address, true, 'relayable', '', ''], 'ManagedNotAllowed',
      { apiKeyHash: H('m'), sender: spare.address });
  });

  test('no wallet squats another wallet\'s canonical hash', async () => {
    const victimHash = canonical(adminC.address);
    // Naming the victim as admin: only the victim may (NotAdmin); naming itself: not canonical.
    await reverts(spare, 'newAccount', [victimHash, adminC.address, false, 'squat', '', ''], 'NotAdmin',
      { accountHash: victimHash, sender: spare.address });
    await reverts(spare, 'newAccount', [victimHash, spare.address, false, 'squat', '', ''], 'AccountHashNotCanonical',
      { apiKeyHash: victimHash, admin: spare.address });
    // The victim's own account is still free for it.
    await sendOne(adminC, 'newAccount', [victimHash, adminC.address, false, 'mine', '', ''], 'AccountCreated');
    assert.equal((await read('accountByAdmin', adminC.address)).accountHash, victimHash);
    // Its second attempt is a Duplicate; the canonical rule runs before the state checks.
    await reverts(adminC, 'newAccount', [victimHash, adminC.address, false, 'again', '', ''], 'Duplicate', { what: 'apiKeyHash' });
  });

  test('newAccount refuses a usage key\'s hash, whoever sends it (HashIsUsageKey)', async () => {
    await reverts(payer, 'newAccount', [m.key, A('payer made'), true, 'n', '', ''], 'HashIsUsageKey', { apiKeyHash: m.key });
    // The api payer keeps creating API-mode accounts under any other hash.
    await sendOne(payer, 'newAccount', [H('api mode'), A('payer made'), true, 'n', '', ''], 'AccountCreated');
  });

  test('setUsageApiKey refuses an account hash (HashIsAccount)', async () => {
    // A usage key under the victim's account hash would make the victim's account key a usage
    // key of the attacker's account (and the reverse lookup ambiguous).
    await reverts(stranger, SET8, [own, m.hash, 0n, 0n, 'k', '', perms(), ZERO], 'HashIsAccount', { usageKeyHash: m.hash });
    await reverts(stranger, SET7, [own, own, 0n, 0n, 'k', '', perms()], 'HashIsAccount', { usageKeyHash: own });
    await reverts(payer, SET7, [m.hash, m.hash, 0n, 0n, 'k', '', perms()], 'HashIsAccount', { usageKeyHash: m.hash });
    // The sender rule comes first: a stranger learns nothing from writing to another account.
    await reverts(stranger, SET7, [m.hash, own, 0n, 0n, 'k', '', perms()], 'NotAdmin');
  });

  test('setUsageApiKey refuses another account\'s usage key (UsageKeyOfAnotherAccount)', async () => {
    await reverts(stranger, SET8, [own, m.key, 0n, 0n, 'stolen', '', perms({ executeInGroups: [0n] }), stranger.address],
      'UsageKeyOfAnotherAccount', { accountHash: own, usageKeyHash: m.key });
    const k = await read('getUsageApiKey', m.key);
    assert.equal(k.accountHash, m.hash);
    assert.equal(k.name, 'key 1');
  });

  test('positive: a fresh key, and replacing one\'s own key under the same hash', async () => {
    const mine = H('attacker key');
    await sendOne(stranger, SET7, [own, mine, 0n, 0n, 'mine', '', perms()], 'UsageApiKeySet');
    await sendOne(stranger, SET8, [own, mine, 0n, 0n, 'mine again', '', somePerms, A('mine')], 'UsageApiKeySet');
    assert.equal((await read('getUsageApiKey', mine)).name, 'mine again');
    await sendOne(payer, SET7, [m.hash, m.key, 0n, 0n, 'replaced', '', perms()], 'UsageApiKeySet');
    // A removed key's hash is free again, for its account or another.
    await sendOne(stranger, 'removeUsageApiKey', [own, mine], 'UsageApiKeyRemoved');
    await sendOne(payer, SET7, [m.hash, mine, 0n, 0n, 'reused', '', perms()], 'UsageApiKeySet');
  });
});

describe('gas of the main writes', () => {
  let deployment;
  before(async () => {
    deployment = await (await deploy()).deploymentTransaction().wait();
  });

  test('newAccount, setUsageApiKey, addGroup with 2 PKPs, registerWalletDerivation', async (t) => {
    t.diagnostic(`gas deployment (2 api payers): ${deployment.gasUsed}`);
    const h = H('gas');
    const used = async (label, signer, name, ...args) => {
      const { receipt } = await send(signer, name, ...args);
      gas[label] = receipt.gasUsed;
      t.diagnostic(`gas ${label}: ${receipt.gasUsed}`);
    };
    // A typical API-mode account: base64 key hash, short strings.
    await used('newAccount', payer, 'newAccount', h, adminA.address, true, 'My account', 'An account for gas figures', 'owner@example.org');
    await used('registerWalletDerivation', payer, 'registerWalletDerivation', h, A('gas w1'), H('path 1'), 'wallet 1', 'signing key');
    await used('registerWalletDerivation (second, no description)', payer, 'registerWalletDerivation', h, A('gas w2'), H('path 2'), 'wallet 2', '');
    await used('setUsageApiKey', payer, SET8, h, H('gas key'), 1900000000n, 0n, 'ci key', 'runs the deploy action',
      perms({ canCreateGroups: true, executeInGroups: [1n], addPkpToGroups: [1n] }), A('gas key wallet'));
    await used('addGroup (2 PKPs, 1 CID)', payer, 'addGroup', h, 'signers', 'the deploy group', [A('gas w1'), A('gas w2')], [cidHash('QmGas')]);
    const size = (artifact.deployedBytecode.length - 2) / 2;
    t.diagnostic(`deployed size: ${size} bytes`);
    for (const v of Object.values(gas)) assert.ok(v < 1_000_000n);
  });
});

describe('coverage of the interface', () => {
  test('every function called, every error and event observed', () => {
    const fns = iface.fragments.filter((f) => f.type === 'function').map((f) => f.format('sighash'));
    assert.deepEqual(fns.filter((f) => !called.has(f)), []);
    const errors = iface.fragments.filter((f) => f.type === 'error').map((f) => f.name);
    assert.deepEqual(errors.filter((e) => !reverted.has(e)), []);
    assert.deepEqual(Object.keys(kEventParams).filter((e) => !emitted.has(e)), []);
  });
});
