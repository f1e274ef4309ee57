// SPDX-License-Identifier: Apache-2.0
// The ChainSecured journey and the conversion journey (docs/chainsecured.md) against enact-server
// on the evm ledger: anvil, a registry deployed by `enact-server deploy-registry` for the data
// directory's api payer (and anvil's second dev account as a second api payer), the server started
// with --ledger evm on it; the wallets write to anvil with `enact chain …`, the server mints, bills
// and runs. An API-mode account is converted on anvil by its account key's wallet to itself (to
// another wallet only with that wallet's consent: the CLI refuses before sending, the registry
// reverts NewAdminNotSender) and through the server with a new admin's ConvertAccount envelope.
// Then the refusals that concern admin writes and relays: a stranger's write reverts
// NotAdmin, an api payer's relay for a converted (unmanaged) account reverts RelayNotAllowed while
// the same relay for a managed account goes through.
//
//   node tests/cli/chain_evm_journey.mjs path/to/enact path/to/enact-server
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  binaryArgs, check, cliRunner, devServerArgs, fail, finish, jsonRpc, loadEthers, repo, startEnactServer,
} from '../support/node/harness.mjs';

const [enact, serverBinary] = binaryArgs('chain_evm_journey.mjs', 'ENACT', 'ENACT_SERVER');
if (!existsSync(join(repo, 'tests', 'anvil', 'node_modules', '@foundry-rs'))) {
  console.error('anvil is not installed: npm ci --prefix tests/anvil');
  process.exit(1);
}
const ethers = loadEthers();
const { startAnvil } = await import(join(repo, 'tests', 'anvil', 'anvil.mjs'));
const work = mkdtempSync(join(tmpdir(), 'enact-chain-evm-'));
const kChainId = 31337;
// anvil's first two dev accounts (mnemonic "test test ... junk").
const kDeployerKey = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const kRelayerKey = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const kRelayer = new ethers.Wallet(kRelayerKey).address;

const cli = cliRunner(enact, { cwd: work });
const { run, json, fails } = cli;
const path = (name) => join(work, name);
const isTx = (o) => /^0x[0-9a-f]{64}$/.test(o.transaction_hash) && Number.isInteger(o.block_number);

/// The version 2 ConvertAccount envelope of docs/protocol.md §2 signed by `wallet` for the server at
/// `url` (its chain id and registry), naming the account `accountHash` it converts.
async function convertEnvelope(wallet, url, accountHash) {
  const config = await (await fetch(`${url}/core/v1/get_node_chain_config`)).json();
  const typed = {
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' },
                     { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }],
      ConvertAccount: [{ name: 'address', type: 'address' }, { name: 'account', type: 'bytes32' },
                       { name: 'issuedAt', type: 'uint256' }, { name: 'nonce', type: 'bytes32' }],
    },
    primaryType: 'ConvertAccount',
    domain: { name: 'Svc ChainSecured', version: '2', chainId: config.chain_id, verifyingContract: config.contract_address },
    message: { address: wallet.address, account: accountHash, issuedAt: Math.floor(Date.now() / 1000),
               nonce: ethers.hexlify(ethers.randomBytes(32)) },
  };
  const signature = await wallet.signTypedData(typed.domain, { ConvertAccount: typed.types.ConvertAccount },
                                               typed.message);
  return { typed_data: typed, signature, new_admin_wallet_address: wallet.address };
}

const node = await startAnvil({ chainId: kChainId });
let server = null;
try {
  // The registry, for the data directory's api payer and anvil's second dev account.
  writeFileSync(path('deployer.key'), kDeployerKey + '\n', { mode: 0o600 });
  const deployed = spawnSync(serverBinary, ['deploy-registry', '--rpc-url', node.url, '--key-file', path('deployer.key'),
                                            '--data-dir', path('data'), '--api-payer', kRelayer], { encoding: 'utf8' });
  const registry = deployed.stdout.trim();
  if (deployed.status !== 0 || !/^0x[0-9a-fA-F]{40}$/.test(registry))
    throw new Error(`deploy-registry: exit ${deployed.status}\n${deployed.stderr}`);

  server = await startEnactServer(serverBinary,
                                  devServerArgs(path('data'), '--no-triggers', '--ledger', 'evm', '--rpc-url', node.url,
                                                '--registry-address', registry, '--chain-id', String(kChainId)),
                                  { timeoutMs: 60000 });
  const { url } = server;
  cli.env = { ...process.env, ENACT_URL: url, ENACT_RPC_URL: node.url };
  delete cli.env.ENACT_REGISTRY;  // read from the server's chain config
  delete cli.env.ENACT_API_KEY;

  const config = json(['core', 'chain-config'], 'chain-config');
  check(config.contract_address === registry && config.chain_id === kChainId, `the server's registry (${JSON.stringify(config)})`);
  const payers = json(['core', 'api-payers'], 'api-payers').api_payers ?? [];
  check(payers.length === 2 && payers.includes(kRelayer), `two api payers (${JSON.stringify(payers)})`);
  // Gas for the api payers and the wallets that send transactions (the operator funds them).
  const fund = (a) => jsonRpc(node.url, 'anvil_setBalance', [a, '0x3635c9adc5dea00000']);
  for (const p of payers) await fund(p);

  // ---- 1. The ChainSecured journey: the wallet writes to anvil, the server mints and runs.
  const owner = run(['key', 'new', '--out', 'owner.key']).out;
  check(/^0x[0-9a-fA-F]{40}$/.test(owner), `key new prints the address (${owner})`);
  await fund(owner);
  const accountHash = ethers.keccak256(owner);
  const acct = json(['chain', 'new-account', '--name', 'demo', '--key-file', 'owner.key'], 'new-account on anvil');
  check(acct.account_hash === accountHash && acct.admin === owner && acct.managed === false && isTx(acct),
        `new-account (${JSON.stringify(acct)})`);

  // A PKP minted by the server for the wallet's signature (/create_wallet_with_signature),
  // registered on anvil by the wallet.
  const pkp = json(['chain', 'register-wallet', '--name', 'signer', '--key-file', 'owner.key'], 'register-wallet');
  check(pkp.minted === true && /^0x[0-9a-fA-F]{40}$/.test(pkp.pkp_id) && pkp.account_hash === accountHash && isTx(pkp),
        `register-wallet mints and registers (${JSON.stringify(pkp)})`);

  // A usage key minted for the wallet's signature (/add_usage_api_key_with_signature), set on anvil.
  const key = json(['chain', 'set-usage-key', '--name', 'runner', '--execute-in-groups', '1', '--key-out', 'usage.key',
                    '--key-file', 'owner.key'], 'set-usage-key (mint)');
  const usageKey = existsSync(path('usage.key')) ? readFileSync(path('usage.key'), 'utf8').trim() : '';
  check(key.usage_key_hash === ethers.keccak256(ethers.toUtf8Bytes(usageKey)) && isTx(key) &&
        key.permissions?.execute_in_groups?.[0] === 1, `set-usage-key (${JSON.stringify(key)})`);

  // The action's code on the server, its metadata and a group with the PKP on anvil.
  writeFileSync(path('action.js'), 'Enact.setResponse({signer: Enact.getAddress({pkpId: params.pkp})});\n');
  const up = json(['core', 'actions', 'upload', 'action.js', '--key-file', 'usage.key'], 'upload with the usage key');
  const action = json(['chain', 'add-action', up.action_ipfs_cid, '--name', 'sign', '--key-file', 'owner.key'], 'add-action');
  check(action.hashed_cid === up.hashed_cid && isTx(action), 'add-action hashes the CID');
  const group = json(['chain', 'add-group', '--name', 'signers', '--pkps', pkp.pkp_id, '--cid-hashes', up.action_ipfs_cid,
                      '--key-file', 'owner.key'], 'add-group');
  check(group.group_id === 1 && isTx(group), `add-group prints the id (${JSON.stringify(group)})`);

  // Credits paid by the wallet (X-Wallet-Auth), then the usage key runs the action with the PKP.
  const intent = json(['core', 'billing', 'create-intent', '--amount-cents', '500', '--wallet-key-file', 'owner.key'],
                      'create-intent by the wallet');
  const paid = json(['core', 'billing', 'confirm', intent.payment_intent_id, '--wallet-key-file', 'owner.key'],
                    'confirm by the wallet');
  check(paid.balance_credits === 500, `500 credits (${JSON.stringify(paid)})`);
  const ran = json(['core', 'run', '--cid', up.action_ipfs_cid, '--pkp', pkp.pkp_id, '--params',
                    JSON.stringify({ pkp: pkp.pkp_id }), '--key-file', 'usage.key'], 'run through the server');
  check(ran.response?.signer === pkp.pkp_id && ran.charged_credits === 1, `the action ran with the PKP (${JSON.stringify(ran)})`);
  const onChain = json(['chain', 'account', '--key-file', 'owner.key'], 'account on anvil');
  // Credits live in the metering store, not the registry: its account record has no balance.
  check(onChain.accountHash === accountHash && onChain.managed === false && !('balance' in onChain) &&
        onChain.walletCount === 2, `the account on anvil (${JSON.stringify(onChain)})`);
  const keys = json(['chain', 'list-keys', '--account', accountHash], 'list-keys');
  check(keys.total === 1 && keys.items?.[0]?.usageKeyHash === key.usage_key_hash, `list-keys (${JSON.stringify(keys)})`);

  // ---- 2. Conversion of an API-mode account by its admin wallet on anvil.
  const api = json(['core', 'new-account', '--name', 'api mode', '--key-out', 'acct.key'], 'core new-account');
  const apiHash = api.api_key_hash;
  const apiGroup = json(['core', 'groups', 'add', '--name', 'team', '--key-file', 'acct.key'], 'core groups add');
  check(apiGroup.group_id === 1, `the API-mode group (${JSON.stringify(apiGroup)})`);
  json(['core', 'keys', 'add', '--name', 'worker', '--execute-in-groups', '1', '--key-out', 'worker.key',
        '--key-file', 'acct.key'], 'core keys add');
  // A relay by the second api payer for a managed account goes through (the control of row 3).
  run(['key', 'new', '--out', 'stranger.key']);
  writeFileSync(path('relayer.key'), kRelayerKey + '\n', { mode: 0o600 });
  const relayed = json(['chain', 'add-group', '--name', 'relayed', '--account', apiHash, '--key-file', 'relayer.key'],
                       'an api payer relays for a managed account');
  check(relayed.group_id === 2 && isTx(relayed), `the relay for a managed account (${JSON.stringify(relayed)})`);
  const before = json(['chain', 'account', '--account', apiHash], 'account before');
  check(before.managed === true, `API mode is managed (${JSON.stringify(before)})`);
  const groupsBefore = json(['chain', 'list-groups', '--account', apiHash], 'list-groups before');
  const keysBefore = json(['chain', 'list-keys', '--account', apiHash], 'list-keys before');
  check(groupsBefore.total === 2 && keysBefore.total === 1, 'two groups and one key before conversion');

  // The account key's own secp256k1 key is the admin wallet (docs/protocol.md §1). It converts the account
  // to itself: the registry hands an account to another wallet only with that wallet's consent
  // (NewAdminNotSender otherwise; 2b is the consent path through the server).
  const accountKeyHex = '0x' + Buffer.from(readFileSync(path('acct.key'), 'utf8').trim(), 'base64').toString('hex');
  writeFileSync(path('acct.hex'), accountKeyHex + '\n', { mode: 0o600 });
  const acctWallet = new ethers.Wallet(accountKeyHex);
  const newAdmin = acctWallet.address;
  await fund(newAdmin);
  const strangerAddress = run(['key', 'address', '--key-file', 'stranger.key']).out;
  await fund(strangerAddress);
  fails(['chain', 'convert', '--account', apiHash, '--new-admin', strangerAddress, '--key-file', 'acct.hex'], 1,
        /--new-admin 0x[0-9a-fA-F]{40} is not the key's wallet .*NewAdminNotSender.*ConvertAccount/,
        'convert to another wallet is refused before anything is sent');
  // Sent with ethers, past the CLI's own check, the registry on anvil refuses it.
  const provider = new ethers.JsonRpcProvider(node.url, kChainId, { staticNetwork: true });
  const onNode = new ethers.Contract(registry, ['function convertToChainSecured(uint256,address)',
                                                'error NewAdminNotSender(uint256 accountHash, address newAdmin)'],
                                     acctWallet.connect(provider));
  let refusedOnNode = null;
  try {
    await onNode.convertToChainSecured.staticCall(apiHash, strangerAddress);
  } catch (e) {
    refusedOnNode = onNode.interface.parseError(e?.data ?? e?.info?.error?.data ?? '0x');
  } finally {
    provider.destroy();
  }
  check(refusedOnNode?.name === 'NewAdminNotSender' && refusedOnNode.args[1] === ethers.getAddress(strangerAddress),
        `the registry on anvil refuses a conversion to another wallet (${refusedOnNode?.name})`);
  const conv = json(['chain', 'convert', '--account', apiHash, '--key-file', 'acct.hex'], 'convert on anvil');
  check(conv.account_hash === apiHash && conv.new_admin_wallet_address === newAdmin && isTx(conv),
        `convert (${JSON.stringify(conv)})`);
  const after = json(['chain', 'account', '--account', apiHash], 'account after');
  check(after.managed === false && after.admin === newAdmin.toLowerCase(), `unmanaged, same admin (${JSON.stringify(after)})`);
  check(JSON.stringify(json(['chain', 'list-groups', '--account', apiHash], 'list-groups after')) === JSON.stringify(groupsBefore),
        'the groups are unchanged');
  check(JSON.stringify(json(['chain', 'list-keys', '--account', apiHash], 'list-keys after')) === JSON.stringify(keysBefore),
        'the usage keys are unchanged');
  // The server reads the converted account from the chain: the account key is no longer an API
  // key (its wallet writes on-chain instead).
  const oldKeyWrite = run(['core', 'groups', 'add', '--name', 'x', '--key-file', 'acct.key']);
  check(oldKeyWrite.code === 1 && /unauthenticated: .*converted to ChainSecured/.test(oldKeyWrite.err),
        `the old account key no longer writes through the server (exit ${oldKeyWrite.code}, '${oldKeyWrite.err}')`);
  fails(['chain', 'convert', '--account', apiHash, '--key-file', 'acct.hex'], 1,
        /AlreadyUnmanaged\(accountHash=/, 'a second conversion');
  // The usage key still works, and billing follows the admin wallet.
  const seen = json(['core', 'account', '--key-file', 'worker.key'], 'the usage key after conversion');
  check(seen.api_key_hash === apiHash && seen.managed === false && seen.admin_wallet_address === newAdmin,
        `the usage key still authenticates; the server sees the conversion (${JSON.stringify(seen)})`);
  const billed = json(['core', 'billing', 'balance', '--wallet-key-file', 'acct.hex'], 'balance by the admin wallet');
  check(billed.balance_credits === 0, `billing by the admin's wallet (${JSON.stringify(billed)})`);
  check(json(['chain', 'add-group', '--name', 'by admin wallet', '--account', apiHash, '--key-file', 'acct.hex'],
             'add-group by the admin wallet').group_id === 3, 'the admin wallet writes on anvil');

  // ---- 2b. Conversion through the server: /convert_to_chain_secured_account with a ConvertAccount
  // envelope signed by the new admin; the server relays convertToChainSecured on anvil.
  const api2 = json(['core', 'new-account', '--name', 'api mode 2', '--key-out', 'acct2.key'], 'core new-account 2');
  const key2 = readFileSync(path('acct2.key'), 'utf8').trim();
  json(['core', 'groups', 'add', '--name', 'team2', '--key-file', 'acct2.key'], 'core groups add 2');
  const admin2 = ethers.Wallet.createRandom();
  const post = async (body) => {
    const res = await fetch(`${url}/core/v1/convert_to_chain_secured_account`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'X-Api-Key': key2 }, body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  const c1 = await post(await convertEnvelope(admin2, url, api2.api_key_hash));
  check(c1.status === 200 && c1.body?.api_key_hash === api2.api_key_hash &&
        c1.body?.new_admin_wallet_address?.toLowerCase() === admin2.address.toLowerCase(),
        `the server converts (${c1.status} ${JSON.stringify(c1.body)})`);
  const after2 = json(['chain', 'account', '--account', api2.api_key_hash], 'account 2 after');
  check(after2.managed === false && after2.admin === admin2.address.toLowerCase(),
        `converted on anvil by the server (${JSON.stringify(after2)})`);
  check(json(['chain', 'list-groups', '--account', api2.api_key_hash], 'list-groups 2').total === 1, 'its group kept');
  const c2 = await post(await convertEnvelope(ethers.Wallet.createRandom(), url, api2.api_key_hash));
  check(c2.status === 401 && c2.body?.error?.code === 'unauthenticated',
        `a second conversion with the former master key answers 401 (got ${c2.status} ${JSON.stringify(c2.body)})`);
  fails(['core', 'groups', 'add', '--name', 'x', '--key-file', 'acct2.key'], 1, /unauthenticated: .*converted to ChainSecured/,
        'the old account key of the account the server converted no longer writes');

  // ---- 3. Refusals on anvil.
  fails(['chain', 'add-group', '--name', 'x', '--account', accountHash, '--key-file', 'stranger.key'], 1,
        /addGroup: .*NotAdmin\(accountHash=0x[0-9a-f]{64}, sender=0x[0-9a-f]{40}\) \(revert data 0x/,
        'a non-admin write reverts NotAdmin');
  fails(['chain', 'add-group', '--name', 'x', '--account', apiHash, '--key-file', 'relayer.key'], 1,
        /addGroup: .*RelayNotAllowed\(/, 'an api payer relay for a converted account reverts RelayNotAllowed');
  fails(['chain', 'add-group', '--name', 'x', '--account', accountHash, '--key-file', 'relayer.key'], 1,
        /addGroup: .*RelayNotAllowed\(/, 'an api payer relay for a ChainSecured account reverts RelayNotAllowed');
  fails(['chain', 'new-account', '--name', 'again', '--key-file', 'owner.key'], 1, /Duplicate\(what=apiKeyHash\)/,
        'a second account for the wallet');
} catch (err) {
  fail(err);
} finally {
  if (server) await server.stop();
  await node.stop();
}

rmSync(work, { recursive: true, force: true });
finish('chain evm journey');
