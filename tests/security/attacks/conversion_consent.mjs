// Attack on conversion consent (API.md §3; docs/security.md "Threat model"): an account is never
// handed to a wallet that did not ask for it. The attacker holds an API-mode account, whose
// account key is a secp256k1 key and whose address is the account's admin (API.md §1). As that
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
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const serverBinary = process.argv[2];
if (!serverBinary) {
  console.error('usage: node conversion_consent.mjs ENACT_SERVER');
  process.exit(2);
}
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ethers = createRequire(join(repo, 'tests', 'vectors', 'package.json'))('ethers');
const { startAnvil } = await import(join(repo, 'tests', 'anvil', 'anvil.mjs'));
const artifact = JSON.parse(
  readFileSync(join(repo, 'server', 'ledger', 'contracts', 'build', 'PermissionRegistry.json'), 'utf8'));
const iface = new ethers.Interface(artifact.abi);
const SET7 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))';
const kRunAnything = [false, false, false, [], [], [], [0n]];  // execute_in_groups [0]
// anvil's dev accounts 0..2 (deployer, api payer, victim wallet); the victim is the same wallet on
// /rpc, so that the two backends' revert data can be compared.
const kDevKeys = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
];

let failures = 0;
let checks = 0;
function check(cond, what) {
  checks++;
  if (!cond) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}

/** API.md §1: the hash of an account a wallet creates. */
const canonical = (wallet) => ethers.solidityPackedKeccak256(['address'], [wallet]);

/** The revert data of `promise` (a staticCall or a send that fails its estimate), or null. */
async function revertData(promise) {
  try {
    await promise;
  } catch (e) {
    const data = e?.data ?? e?.info?.error?.data;
    return typeof data === 'string' && data.startsWith('0x') ? data : null;
  }
  return null;
}

/** Expects `contract[fn](...args)` to revert with `error` and `errorArgs`; returns the revert data. */
async function refused(label, contract, fn, args, error, errorArgs) {
  const data = await revertData(contract.getFunction(fn).staticCall(...args));
  check(data !== null, `${label}: the write succeeded (expected ${error})`);
  if (data === null) return null;
  const parsed = iface.parseError(data);
  check(parsed?.name === error, `${label}: reverted ${parsed?.name ?? data}, expected ${error}`);
  if (parsed?.name === error && errorArgs) {
    for (const [i, p] of parsed.fragment.inputs.entries()) {
      const want = errorArgs[p.name];
      const got = parsed.args[i];
      check(want === undefined ||
            (typeof got === 'string' ? got.toLowerCase() === String(want).toLowerCase() : BigInt(want) === BigInt(got)),
            `${label}: ${error}.${p.name} = ${got}, expected ${want}`);
    }
  }
  return data;
}

/** A mined attempt: status 0 (gas given, so the estimate does not stop it first). */
async function minedRefusal(label, provider, contract, fn, args, error) {
  const tx = await contract.getFunction(fn).send(...args, { gasLimit: 1_000_000n });
  let receipt = null;
  try {
    receipt = await tx.wait();
  } catch (e) {
    receipt = e?.receipt ?? null;
  }
  check(receipt !== null && receipt.status === 0, `${label}: mined with status ${receipt?.status}, expected 0`);
  const raw = await provider.send('eth_getTransactionReceipt', [tx.hash]);
  if (raw.revertReason) {
    check(iface.parseError(raw.revertReason)?.name === error,
          `${label}: receipt revertReason ${raw.revertReason}, expected ${error}`);
  }
}

/** accountByAdmin(wallet): its account hash, or null when it administers none (UnknownAccount). */
async function accountOf(contract, wallet) {
  try {
    return ethers.toBeHex((await contract.accountByAdmin(wallet)).accountHash, 32);
  } catch (e) {
    const data = e?.data ?? e?.info?.error?.data;
    check(typeof data === 'string' && iface.parseError(data)?.name === 'UnknownAccount',
          `accountByAdmin(${wallet}): ${e.shortMessage ?? e.message}`);
    return null;
  }
}

// --- 1. enact-server --dev: HTTP and /rpc ---------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'enact-attack-convert-'));
const server = spawn(serverBinary, ['--dev', '--listen', '127.0.0.1:0', '--data-dir', join(work, 'data'),
                                    '--no-triggers'],
                     { stdio: ['ignore', 'pipe', 'ignore'] });
const base = await new Promise((resolve, reject) => {
  let out = '';
  const timer = setTimeout(() => reject(new Error('enact-server did not start')), 30000);
  server.stdout.on('data', (chunk) => {
    out += chunk;
    const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (m) {
      clearTimeout(timer);
      resolve(m[1]);
    }
  });
  server.on('exit', (code) => reject(new Error(`enact-server exited (${code})`)));
});

async function core(method, path, key, body) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers['x-api-key'] = key;
  const res = await fetch(`${base}/core/v1${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() };
}

/** The account key as the ethers wallet it is (API.md §1: 32 bytes, a secp256k1 private key). */
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
  const victim = new ethers.Wallet(kDevKeys[2], provider);
  const asAttacker = new ethers.Contract(config.contract_address, artifact.abi, attacker);
  const asVictim = new ethers.Contract(config.contract_address, artifact.abi, victim);
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
  failures++;
  console.error(`FAIL: ${e.stack ?? e}`);
} finally {
  server.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}

// --- 2. the Solidity registry on anvil ------------------------------------------------------------

const node = await startAnvil({ chainId: 31337 });
try {
  const provider = new ethers.JsonRpcProvider(node.url, 31337, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  const [owner, payer, victim] = kDevKeys.map((k) => new ethers.Wallet(k, provider));
  const deployed = await new ethers.ContractFactory(artifact.abi, artifact.bytecode, owner).deploy([payer.address]);
  await deployed.waitForDeployment();
  const at = await deployed.getAddress();
  const as = (w) => new ethers.Contract(at, artifact.abi, w);

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
  provider.destroy();
} catch (e) {
  failures++;
  console.error(`FAIL: ${e.stack ?? e}`);
} finally {
  await node.stop();
}

console.log(`conversion consent attacks: ${checks} checks, ${failures} failures`);
process.exit(failures === 0 ? 0 : 1);
