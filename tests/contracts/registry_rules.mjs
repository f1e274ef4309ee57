// SPDX-License-Identifier: Apache-2.0
// The registry's pagination, the absence of credits, multicall, identity rules and the gas of its
// main writes (registry.test.mjs runs it).
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { artifact, iface, kMaxUint256, ZERO, SET7, SET8, provider, payer, adminA, adminC, stranger, spare,
  registry, gas, deploy, send, sendOne, read, simulate, reverts, H, canonical, A, cidHash, perms, somePerms, prepare
} from './registry_support.mjs';

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

// The registry keeps permissions only (docs/architecture.md §4): the credit functions of earlier
// versions are gone, so no sender — api payer, admin or stranger — moves credits on the chain, and
// an account record carries no balance to trust.
describe('no credits on the chain', () => {
  let m;
  // The credit functions an earlier registry had, by signature, with arguments that fit them.
  const retired = [
    ['creditBalance(uint256)', (h) => [h]],
    ['debitCredits(uint256,uint256)', (h) => [h, 1n]],
    ['chargeCredits(uint256,uint256)', (h) => [h, 1n]],
    ['recordPayment(uint256,string,uint256,string)', (h) => [h, 'pi_1', 500n, 'dev']],
    ['creditPayment(uint256,string)', (h) => [h, 'pi_1']],
    ['getPayment(uint256,string)', (h) => [h, 'pi_1']],
  ];
  const calldata = (sig, args) => {
    const f = ethers.FunctionFragment.from(`function ${sig}`);
    return ethers.concat([ethers.id(sig).slice(0, 10), ethers.AbiCoder.defaultAbiCoder().encode(f.inputs, args)]);
  };
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
  });

  test('the interface has no credit function, event or error', () => {
    const names = iface.fragments.map((f) => f.name).filter((n) => n);
    for (const n of ['creditBalance', 'debitCredits', 'chargeCredits', 'recordPayment', 'creditPayment', 'getPayment',
      'CreditsDebited', 'PaymentCredited', 'PaymentRecorded', 'WriteCharged', 'InsufficientCredits', 'UnknownPayment',
      'AlreadyCredited', 'NotApiPayer']) {
      assert.ok(!names.includes(n), `${n} is still in the ABI`);
    }
  });

  test('each retired selector reverts without data, from an api payer, the admin and a stranger', async () => {
    const target = await registry.getAddress();
    for (const [sig, args] of retired) {
      for (const from of [payer, adminA, stranger]) {
        const data = calldata(sig, args(m.hash));
        let failure;
        try {
          await provider.call({ to: target, from: from.address, data });
        } catch (e) {
          failure = e;
        }
        assert.ok(failure, `${sig} from ${from.address} did not revert`);
        assert.ok([undefined, null, '0x'].includes(failure.data ?? failure.info?.error?.data), `${sig}: revert data`);
      }
      // Sent for real (gas given, so no estimate refuses it first): mined, failed, nothing logged.
      const tx = await payer.sendTransaction({ to: target, data: calldata(sig, args(m.hash)), gasLimit: 200_000n });
      await assert.rejects(tx.wait(), (e) => e.code === 'CALL_EXCEPTION' && e.receipt?.status === 0 && e.receipt.logs.length === 0);
    }
  });

  test('nor inside a multicall: the batch reverts whole', async () => {
    const calls = [iface.encodeFunctionData('addGroup', [m.hash, 'free', '', [], []]),
      calldata('debitCredits(uint256,uint256)', [m.hash, 1n])];
    let failure;
    try {
      await registry.connect(payer).multicall.staticCall(calls);
    } catch (e) {
      failure = e;
    }
    assert.ok(failure, 'the multicall with a retired selector succeeded');
    await reverts(null, 'getGroup', [m.hash, 2n], 'UnknownGroup');
  });

  test('an account record holds no balance', async () => {
    const a = await read('getAccount', m.hash);
    assert.deepEqual(Object.keys(a), ['accountHash', 'admin', 'managed', 'name', 'description', 'email', 'createdAt', 'walletCount']);
  });
});

describe('multicall', () => {
  let m, u;
  const encode = (name, ...args) => iface.encodeFunctionData(name, args);
  before(async () => {
    await deploy();
    m = await prepare('m', true, adminA);
    u = await prepare('u', false, adminC);
  });

  test('several writes in one transaction', async () => {
    const calls = [encode('addGroup', m.hash, 'first', '', [], []), encode('addGroup', m.hash, 'second', '', [], [])];
    const results = await simulate(payer, 'multicall', calls);
    assert.equal(iface.decodeFunctionResult('addGroup', results[0])[0], 2n);
    assert.equal(iface.decodeFunctionResult('addGroup', results[1])[0], 3n);
    const { events } = await send(payer, 'multicall', calls);
    assert.deepEqual(events.map((e) => e.name), ['GroupAdded', 'GroupAdded']);
    assert.deepEqual(events.map((e) => e.args.groupId), [2n, 3n]);
  });

  test('all or nothing; the failing call\'s revert data re-thrown unchanged', async () => {
    const failing = encode('removeGroup', m.hash, 99n);
    const alone = await reverts(payer, 'removeGroup', [m.hash, 99n], 'UnknownGroup', { accountHash: m.hash, groupId: 99n });
    const calls = [encode('addGroup', m.hash, 'undone', '', [], []), failing];
    const batched = await reverts(payer, 'multicall', [calls], 'UnknownGroup', { accountHash: m.hash, groupId: 99n });
    assert.equal(batched, alone);
    // Mined: the transaction fails and the first call's group does not exist.
    const tx = await registry.connect(payer).multicall(calls, { gasLimit: 1_000_000n });
    await assert.rejects(tx.wait(), (e) => e.code === 'CALL_EXCEPTION' && e.receipt?.status === 0);
    await reverts(null, 'getGroup', [m.hash, 4n], 'UnknownGroup');
    assert.equal(await simulate(payer, 'addGroup', m.hash, 'next', '', [], []), 4n);
    // A failing first call: its error, whatever follows.
    const data = await reverts(payer, 'multicall', [[failing, encode('addGroup', m.hash, 'after', '', [], [])]],
      'UnknownGroup', { accountHash: m.hash, groupId: 99n });
    assert.equal(data, alone);
  });

  test('every call runs with the caller as msg.sender', async () => {
    await reverts(stranger, 'multicall', [[encode('addGroup', m.hash, 'x', '', [], [])]], 'NotAdmin', { accountHash: m.hash, sender: stranger.address });
    await reverts(payer, 'multicall', [[encode('addGroup', u.hash, 'x', '', [], [])]], 'RelayNotAllowed', { accountHash: u.hash, sender: payer.address });
    const { events } = await send(adminC, 'multicall', [encode('addGroup', u.hash, 'x', '', [], []), encode('removeGroup', u.hash, 1n)]);
    assert.deepEqual(events.map((e) => e.name), ['GroupAdded', 'GroupRemoved']);
    assert.deepEqual((await simulate(adminC, 'multicall', [])), []);
  });
});

// docs/protocol.md §3 "Identity rules", tried as an attacker would with nothing but public data (a victim's
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
