// SPDX-License-Identifier: Apache-2.0
// The registry's build artifact, administration, accounts, the sender rule of every write, and
// conversion to ChainSecured (registry.test.mjs runs it).
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { artifact, iface, ZERO, kEventParams, provider, owner, payer, payer2, adminA, adminB,
  adminC, stranger, spare, registry, deploy, send, sendOne, read, simulate, reverts, snapshot,
  restore, blockTime, H, canonical, A, prepare, writeOps } from './registry_support.mjs';

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
      email: 'a@example.org', createdAt: t, walletCount: 0n,
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
