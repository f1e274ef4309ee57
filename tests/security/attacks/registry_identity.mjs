// SPDX-License-Identifier: Apache-2.0
// Attacks on the registry's identity rules (docs/protocol.md §3 "Identity rules"), tried as an attacker
// would with nothing but public data: a victim's account hash and usage-key hashes are in every
// registry log (eth_getLogs), a wallet's address is public. Each attack below succeeded before
// the rules existed; each must now be refused with the registry's custom error, and the victim's
// credentials must still authenticate as the victim's account.
//
//   1. over POST /rpc of a fresh `enact-server --dev` (the embedded ledger's JSON-RPC surface),
//      with an ethers wallet and the victim created over HTTP:
//      (a) newAccount under the hash of the victim's usage key — AccountHashNotCanonical (and
//          ManagedNotAllowed for a managed one); the victim's usage key still authenticates as
//          the victim (GET /core/v1/account);
//      (b) newAccount under another wallet's canonical hash keccak256(abi.encodePacked(victim)) —
//          AccountHashNotCanonical, or NotAdmin when naming the victim as admin; the victim's
//          wallet then creates its own account;
//      (c) setUsageApiKey from the attacker's own account under the victim's account hash —
//          HashIsAccount — or the victim's usage-key hash — UsageKeyOfAnotherAccount; a mined
//          attempt has status 0 and the receipt's revert data;
//   2. (d) the same writes on anvil against the Solidity registry (the committed build artifact),
//      where the revert data must be byte-equal to the embedded surface's.
//
//   node tests/security/attacks/registry_identity.mjs path/to/enact-server
import {
  accountOf, abi, canonical, check, ethers, fail, finish, iface, kDevKeys, minedRefusal,
  onAnvilRegistry, refused, revertData, serverBinaryArg, SET7, SET8, startServer,
} from './registry_attack.mjs';

const serverBinary = serverBinaryArg('registry_identity.mjs');
const kAllPerms = [true, true, true, [0n], [0n], [0n], [0n]];
// anvil's dev accounts 0..3 (deployer, api payer, attacker, victim wallet); the attacker and the
// victim wallet are the same on /rpc, so that the two backends' revert data can be compared.
const kProbe = ethers.id('probe hash');
const kNoPerms = [false, false, false, [], [], [], []];

// --- 1. enact-server --dev: HTTP and /rpc ---------------------------------------------------------

const { base, core, stop: stopServer } = await startServer(serverBinary, 'identity');

const revertsSeen = {};  // error name -> revert data on the embedded surface, for step 2

try {
  // The victim: an API-mode account and a usage key that may run anything, made over HTTP.
  const created = await core('POST', '/new_account', null, { name: 'victim' });
  check(created.status === 200, `POST /new_account: ${created.status} ${JSON.stringify(created.body)}`);
  const victimKey = created.body.api_key;
  const victimHash = created.body.api_key_hash;
  const usage = await core('POST', '/add_usage_api_key', victimKey, {
    name: 'ci', can_create_groups: true, can_create_pkps: true, execute_in_groups: [0],
  });
  check(usage.status === 200, `POST /add_usage_api_key: ${usage.status} ${JSON.stringify(usage.body)}`);
  const victimUsageKey = usage.body.usage_api_key;
  const victimUsageHash = usage.body.hash;
  const whoIs = async (key) => (await core('GET', '/account', key)).body;
  const before = await whoIs(victimUsageKey);
  check(before.api_key_hash === victimHash && before.key?.kind === 'usage',
        `the victim's usage key authenticates as the victim: ${JSON.stringify(before)}`);

  const config = (await core('GET', '/get_node_chain_config')).body;
  const provider = new ethers.JsonRpcProvider(`${base}/rpc`, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  // Public knowledge: the victim's hashes are in the registry's logs.
  const logs = await provider.getLogs({ address: config.contract_address, fromBlock: 0, toBlock: 'latest' });
  const parsedLogs = logs.map((l) => iface.parseLog(l)).filter(Boolean);
  check(parsedLogs.some((l) => l.name === 'UsageApiKeySet' && ethers.toBeHex(l.args.usageKeyHash, 32) === victimUsageHash),
        'the victim usage key hash is public in eth_getLogs');

  const attacker = new ethers.Wallet(kDevKeys[2], provider);
  const victimWallet = new ethers.Wallet(kDevKeys[3], provider);
  const asAttacker = new ethers.Contract(config.contract_address, abi, attacker);
  const asVictimWallet = new ethers.Contract(config.contract_address, abi, victimWallet);

  // (a) an account under the victim's usage-key hash.
  revertsSeen.AccountHashNotCanonical = await refused('(a) /rpc newAccount under the victim usage-key hash',
    asAttacker, 'newAccount', [victimUsageHash, attacker.address, false, 'evil', '', ''],
    'AccountHashNotCanonical', { apiKeyHash: victimUsageHash, admin: attacker.address });
  revertsSeen.ManagedNotAllowed = await refused('(a) /rpc newAccount (managed) under the victim usage-key hash',
    asAttacker, 'newAccount', [victimUsageHash, attacker.address, true, 'evil', '', ''],
    'ManagedNotAllowed', { apiKeyHash: victimUsageHash, sender: attacker.address });
  await minedRefusal('(a) /rpc newAccount mined', provider, asAttacker, 'newAccount',
                     [victimUsageHash, attacker.address, false, 'evil', '', ''], 'AccountHashNotCanonical');
  revertsSeen.probeNotCanonical = await revertData(asAttacker.newAccount.staticCall(kProbe, attacker.address, false, 'p', '', ''));
  revertsSeen.probeManaged = await revertData(asAttacker.newAccount.staticCall(kProbe, attacker.address, true, 'p', '', ''));
  const after = await whoIs(victimUsageKey);
  check(after.api_key_hash === victimHash && after.key?.kind === 'usage' && after.key?.hash === victimUsageHash,
        `(a) the victim's usage key still authenticates as the victim: ${JSON.stringify(after)}`);
  check((await core('GET', '/account', victimKey)).body.api_key_hash === victimHash, '(a) the victim account key too');

  // (b) squatting the victim wallet's canonical hash before it creates its account.
  const victimWalletHash = canonical(victimWallet.address);
  revertsSeen.NotAdmin = await refused('(b) /rpc newAccount naming the victim wallet as admin',
    asAttacker, 'newAccount', [victimWalletHash, victimWallet.address, false, 'squat', '', ''],
    'NotAdmin', { accountHash: victimWalletHash, sender: attacker.address });
  await refused('(b) /rpc newAccount under the victim wallet canonical hash',
    asAttacker, 'newAccount', [victimWalletHash, attacker.address, false, 'squat', '', ''],
    'AccountHashNotCanonical', { apiKeyHash: victimWalletHash, admin: attacker.address });
  const victimCreated = await (await asVictimWallet.newAccount(victimWalletHash, victimWallet.address, false, 'mine', '', '')).wait();
  check(victimCreated.status === 1, '(b) the victim wallet creates its own account');
  check((await asVictimWallet.accountByAdmin(victimWallet.address)).accountHash === BigInt(victimWalletHash),
        '(b) accountByAdmin(victim wallet) is its canonical hash');

  // (c) the attacker's own account, then usage keys under the victim's hashes.
  const own = canonical(attacker.address);
  const mine = await (await asAttacker.newAccount(own, attacker.address, false, 'attacker', '', '')).wait();
  check(mine.status === 1, '(c) the attacker creates its own canonical account');
  revertsSeen.HashIsAccount = await refused('(c) /rpc setUsageApiKey under the victim account hash',
    asAttacker, SET8, [own, victimHash, 0n, 0n, 'stolen', '', kAllPerms, attacker.address],
    'HashIsAccount', { usageKeyHash: victimHash });
  revertsSeen.UsageKeyOfAnotherAccount = await refused('(c) /rpc setUsageApiKey under the victim usage-key hash',
    asAttacker, SET7, [own, victimUsageHash, 0n, 0n, 'stolen', '', kAllPerms],
    'UsageKeyOfAnotherAccount', { accountHash: own, usageKeyHash: victimUsageHash });
  await minedRefusal('(c) /rpc setUsageApiKey mined', provider, asAttacker, SET7,
                     [own, victimHash, 0n, 0n, 'stolen', '', kAllPerms], 'HashIsAccount');
  const afterC = await whoIs(victimKey);
  check(afterC.api_key_hash === victimHash && afterC.key?.kind === 'account',
        `(c) the victim's account key still authenticates as the victim account: ${JSON.stringify(afterC)}`);
  const afterCUsage = await whoIs(victimUsageKey);
  check(afterCUsage.api_key_hash === victimHash && afterCUsage.key?.kind === 'usage',
        `(c) the victim's usage key still authenticates as the victim: ${JSON.stringify(afterCUsage)}`);
  // The attacker's own keys still work: a fresh hash, replaced under the same hash.
  const fresh = ethers.id('attacker fresh key');
  check((await (await asAttacker.getFunction(SET7).send(own, fresh, 0n, 0n, 'mine', '', kNoPerms)).wait()).status === 1,
        '(c) a fresh usage key of its own is accepted');
  check((await (await asAttacker.getFunction(SET7).send(own, fresh, 0n, 0n, 'mine 2', '', kNoPerms)).wait()).status === 1,
        '(c) replacing its own key under the same hash is accepted');
  // The squat the namespace rule stops: an account (API mode, through the server) under a usage
  // key's hash. No wallet reaches it (the canonical rule refuses first) unless the wallet's own
  // canonical hash is a usage key.
  const squatted = ethers.Wallet.createRandom().connect(provider);
  await (await asAttacker.getFunction(SET7).send(own, canonical(squatted.address), 0n, 0n, 'squat', '', kNoPerms)).wait();
  const asSquatted = new ethers.Contract(config.contract_address, abi, squatted);
  revertsSeen.HashIsUsageKey = await refused('/rpc newAccount under a hash that is a usage key',
    asSquatted, 'newAccount', [canonical(squatted.address), squatted.address, false, 'n', '', ''],
    'HashIsUsageKey', { apiKeyHash: canonical(squatted.address) });
  provider.destroy();
} catch (e) {
  fail(e);
} finally {
  await stopServer();
}

// --- 2. (d) the Solidity registry on anvil ------------------------------------------------------

await onAnvilRegistry(async ({ provider, wallets: [owner, payer, attacker, victimWallet], as }) => {

    // The victim, as the server writes it in API mode: a managed account and a usage key.
    const victimHash = ethers.id('anvil victim account key');
    const victimUsageHash = ethers.id('anvil victim usage key');
    await (await as(payer).newAccount(victimHash, ethers.Wallet.createRandom().address, true, 'victim', '', '')).wait();
    await (await as(payer).getFunction(SET7).send(victimHash, victimUsageHash, 0n, 0n, 'ci', '', kAllPerms)).wait();

    const data = {};
    data.AccountHashNotCanonical = await refused('(d) anvil newAccount under the victim usage-key hash',
      as(attacker), 'newAccount', [victimUsageHash, attacker.address, false, 'evil', '', ''],
      'AccountHashNotCanonical', { apiKeyHash: victimUsageHash, admin: attacker.address });
    data.ManagedNotAllowed = await refused('(d) anvil newAccount (managed) under the victim usage-key hash',
      as(attacker), 'newAccount', [victimUsageHash, attacker.address, true, 'evil', '', ''],
      'ManagedNotAllowed', { apiKeyHash: victimUsageHash, sender: attacker.address });
    await minedRefusal('(d) anvil newAccount mined', provider, as(attacker), 'newAccount',
                       [victimUsageHash, attacker.address, false, 'evil', '', ''], 'AccountHashNotCanonical');
    const victimWalletHash = canonical(victimWallet.address);
    await refused('(d) anvil newAccount under the victim wallet canonical hash',
      as(attacker), 'newAccount', [victimWalletHash, attacker.address, false, 'squat', '', ''],
      'AccountHashNotCanonical', { apiKeyHash: victimWalletHash, admin: attacker.address });
    await refused('(d) anvil newAccount naming the victim wallet as admin',
      as(attacker), 'newAccount', [victimWalletHash, victimWallet.address, false, 'squat', '', ''],
      'NotAdmin', { accountHash: victimWalletHash, sender: attacker.address });
    check((await (await as(victimWallet).newAccount(victimWalletHash, victimWallet.address, false, 'mine', '', '')).wait()).status === 1,
          '(d) the victim wallet creates its own account on anvil');

    const own = canonical(attacker.address);
    await (await as(attacker).newAccount(own, attacker.address, false, 'attacker', '', '')).wait();
    data.HashIsAccount = await refused('(d) anvil setUsageApiKey under the victim account hash',
      as(attacker), SET8, [own, victimHash, 0n, 0n, 'stolen', '', kAllPerms, attacker.address],
      'HashIsAccount', { usageKeyHash: victimHash });
    data.UsageKeyOfAnotherAccount = await refused('(d) anvil setUsageApiKey under the victim usage-key hash',
      as(attacker), SET7, [own, victimUsageHash, 0n, 0n, 'stolen', '', kAllPerms],
      'UsageKeyOfAnotherAccount', { accountHash: own, usageKeyHash: victimUsageHash });
    await minedRefusal('(d) anvil setUsageApiKey mined', provider, as(attacker), SET7,
                       [own, victimHash, 0n, 0n, 'stolen', '', kAllPerms], 'HashIsAccount');
    data.HashIsUsageKey = await refused('(d) anvil newAccount (api payer) under a usage-key hash',
      as(payer), 'newAccount', [victimUsageHash, ethers.Wallet.createRandom().address, true, 'n', '', ''],
      'HashIsUsageKey', { apiKeyHash: victimUsageHash });
    const key = await as(attacker).getUsageApiKey(victimUsageHash);
    check(key.accountHash === BigInt(victimHash), '(d) the victim usage key still belongs to the victim account');
    check((await revertData(as(attacker).getAccount(victimUsageHash))) !== null, '(d) no account under the victim usage-key hash');

    // Every identity refusal is the same custom error on both backends; with the same sender and
    // hash (the probe), the revert data are byte-equal.
    for (const name of ['AccountHashNotCanonical', 'ManagedNotAllowed', 'HashIsAccount', 'UsageKeyOfAnotherAccount', 'HashIsUsageKey'])
      check(revertsSeen[name] && data[name] && revertsSeen[name].slice(0, 10) === data[name].slice(0, 10),
            `${name}: one selector on /rpc and on the Solidity registry`);
    const probeNotCanonical = await revertData(as(attacker).newAccount.staticCall(kProbe, attacker.address, false, 'p', '', ''));
    check(probeNotCanonical === iface.encodeErrorResult('AccountHashNotCanonical', [kProbe, attacker.address]),
          '(d) AccountHashNotCanonical revert data is the ABI encoding of (apiKeyHash, admin)');
    check(revertsSeen.probeNotCanonical === probeNotCanonical,
          `AccountHashNotCanonical: /rpc ${revertsSeen.probeNotCanonical} = anvil ${probeNotCanonical}`);
    const probeManaged = await revertData(as(attacker).newAccount.staticCall(kProbe, attacker.address, true, 'p', '', ''));
    check(revertsSeen.probeManaged === probeManaged,
          `ManagedNotAllowed: /rpc ${revertsSeen.probeManaged} = anvil ${probeManaged}`);
});

finish('registry identity attacks');
