// SPDX-License-Identifier: Apache-2.0
// The registry's usage keys, groups, wallets and actions (registry.test.mjs runs it).
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { kMaxUint256, ZERO, SET7, SET8, provider, payer, adminA, adminB, registry, deploy, send,
  sendOne, read, simulate, reverts, blockTime, H, A, cidHash, perms, somePerms, prepare
} from './registry_support.mjs';

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
