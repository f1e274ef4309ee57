// SPDX-License-Identifier: Apache-2.0
// Attack on conversion consent (docs/protocol.md §3; docs/security.md "Threat model"): an account is never
// handed to a wallet that did not ask for it. The attacker holds an API-mode account, whose
// account key is a secp256k1 key and whose address is the account's admin (docs/protocol.md §1). As that
// admin it signs convertToChainSecured(accountHash, victimWallet) itself. Before the rule, the
// victim wallet then administered an account the attacker prepared (its usage keys included):
// the victim could no longer create its own account (Duplicate("admin")), its signature mints
// derived for the attacker's account, X-Wallet-Auth credited it, and the attacker's usage key ran
// whatever the victim later listed with the victim's PKPs. Only a relay by an api payer (the
// server, after checking the new admin's ConvertAccount envelope) carries a new admin's consent;
// from anyone else the new admin must be the sender: NewAdminNotSender(accountHash, newAdmin).
//
//   1. over POST /rpc of a fresh `enact-server --dev`: the account and a usage key with
//      execute_in_groups [0] made over HTTP, then the account key's wallet converts to the victim
//      (a simulation and a mined transaction): refused, accountByAdmin(victim) still unknown, the
//      account unchanged and still API mode, the victim creates its own account; converting to
//      itself (the admin's own mode switch) still works;
//   2. the same on anvil against the Solidity registry (the committed build artifact), where the
//      revert data must be byte-equal to the embedded surface's, and the api payer's relay (the
//      consent path) converts.
//
//   node tests/security/attacks/conversion_consent.mjs path/to/enact-server
import {
  accountOf, abi, canonical, check, ethers, fail, finish, iface, kDevKeys, minedRefusal,
  onAnvilRegistry, refused, revertData, serverBinaryArg, SET7, SET8, startServer,
} from './registry_attack.mjs';

const serverBinary = serverBinaryArg('conversion_consent.mjs');
const kRunAnything = [false, false, false, [], [], [], [0n]];  // execute_in_groups [0]
// anvil's dev accounts 0..3: deployer, api payer, (unused), victim wallet; the victim is the same
// wallet on /rpc, so that the two backends' revert data can be compared.

// --- 1. enact-server --dev: HTTP and /rpc ---------------------------------------------------------

const { base, core, stop: stopServer } = await startServer(serverBinary, 'convert');

/** The account key as the ethers wallet it is (docs/protocol.md §1: 32 bytes, a secp256k1 private key). */
const walletOfKey = (key, provider) => new ethers.Wallet(ethers.hexlify(Buffer.from(key, 'base64')), provider);

const seen = {};  // the embedded surface's revert data and account, for step 2

try {
  // The attacker's API-mode account, made over HTTP, with a usage key that may run anything.
  const created = await core('POST', '/new_account', null, { name: 'prepared' });
  check(created.status === 200, `POST /new_account: ${created.status} ${JSON.stringify(created.body)}`);
  const accountKey = created.body.api_key;
  const h = created.body.api_key_hash;
  const usage = await core('POST', '/add_usage_api_key', accountKey, { name: 'backdoor', execute_in_groups: [0] });
  check(usage.status === 200, `POST /add_usage_api_key: ${usage.status} ${JSON.stringify(usage.body)}`);

  const config = (await core('GET', '/get_node_chain_config')).body;
  const provider = new ethers.JsonRpcProvider(`${base}/rpc`, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  const attacker = walletOfKey(accountKey, provider);
  check(attacker.address === ethers.getAddress(created.body.wallet_address),
        `the account key's wallet ${attacker.address} is the admin ${created.body.wallet_address}`);
  const victim = new ethers.Wallet(kDevKeys[3], provider);
  const asAttacker = new ethers.Contract(config.contract_address, abi, attacker);
  const asVictim = new ethers.Contract(config.contract_address, abi, victim);
  check((await accountOf(asAttacker, victim.address)) === null, 'before: the victim wallet administers no account');

  // The attack: the admin hands its prepared account to a wallet that never signed anything.
  seen.data = await refused('/rpc convertToChainSecured(h, victim) from the account key\'s wallet',
    asAttacker, 'convertToChainSecured', [h, victim.address],
    'NewAdminNotSender', { accountHash: h, newAdmin: victim.address });
  await minedRefusal('/rpc convertToChainSecured(h, victim) mined', provider, asAttacker,
                     'convertToChainSecured', [h, victim.address], 'NewAdminNotSender');
  check((await accountOf(asAttacker, victim.address)) === null, 'after: the victim wallet still administers no account');
  const view = await asAttacker.getAccount(h);
  check(view.admin === attacker.address && view.managed === true,
        `the account is unchanged (admin ${view.admin}, managed ${view.managed})`);
  const who = await core('GET', '/account', accountKey);
  check(who.status === 200 && who.body.managed === true, `the account key still works: ${who.status} ${JSON.stringify(who.body)}`);
  seen.hash = h;
  seen.accountKey = accountKey;

  // The victim's own account is still free for it.
  const mine = await (await asVictim.newAccount(canonical(victim.address), victim.address, false, 'mine', '', '')).wait();
  check(mine.status === 1, 'the victim wallet creates its own account');
  check((await accountOf(asVictim, victim.address)) === canonical(victim.address),
        'accountByAdmin(victim) is its own canonical account');

  // What stays allowed: the admin converts the account to itself (its own wallet, which signs).
  const self = await (await asAttacker.convertToChainSecured(h, attacker.address)).wait();
  check(self.status === 1, 'the admin converts its account to its own wallet');
  check((await asAttacker.getAccount(h)).managed === false, 'the account is ChainSecured now');
  provider.destroy();
} catch (e) {
  fail(e);
} finally {
  await stopServer();
}

// --- 2. the Solidity registry on anvil ------------------------------------------------------------

await onAnvilRegistry(async ({ provider, wallets: [owner, payer, , victim], as }) => {

    // The attacker's account as the server writes it in API mode (managed, admin = the account
    // key's wallet): the same key and hash as on /rpc, so that the revert data can be compared.
    const attacker = (seen.accountKey ? walletOfKey(seen.accountKey) : ethers.Wallet.createRandom()).connect(provider);
    const h = seen.hash ?? ethers.id('anvil prepared account key');
    await (await as(payer).newAccount(h, attacker.address, true, 'prepared', '', '')).wait();
    await (await as(payer).getFunction(SET7).send(h, ethers.id('anvil backdoor key'), 0n, 0n, 'backdoor', '', kRunAnything)).wait();
    await (await owner.sendTransaction({ to: attacker.address, value: ethers.parseEther('1') })).wait();
    const fromAdmin = attacker;

    const data = await refused('anvil convertToChainSecured(h, victim) from the admin',
      as(fromAdmin), 'convertToChainSecured', [h, victim.address],
      'NewAdminNotSender', { accountHash: h, newAdmin: victim.address });
    await minedRefusal('anvil convertToChainSecured(h, victim) mined', provider, as(fromAdmin),
                       'convertToChainSecured', [h, victim.address], 'NewAdminNotSender');
    check((await accountOf(as(owner), victim.address)) === null, 'anvil: the victim wallet still administers no account');
    check((await as(owner).getAccount(h)).managed === true, 'anvil: the account is still API mode');
    check(data === iface.encodeErrorResult('NewAdminNotSender', [h, victim.address]),
          'anvil: NewAdminNotSender revert data is the ABI encoding of (accountHash, newAdmin)');
    if (seen.data) check(seen.data === data, `NewAdminNotSender: /rpc ${seen.data} = anvil ${data}`);

    // The consent path: an api payer relays the conversion (the server checked the new admin's
    // ConvertAccount envelope before sending it).
    const relayed = await (await as(payer).convertToChainSecured(h, victim.address)).wait();
    check(relayed.status === 1, 'anvil: the api payer relays a conversion to another wallet');
    check((await accountOf(as(owner), victim.address)) === h, 'anvil: after the relay the new admin administers it');
});

finish('conversion consent attacks');
