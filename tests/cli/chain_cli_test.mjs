// SPDX-License-Identifier: Apache-2.0
// End-to-end checks of `enact chain …`: the ChainSecured journey of docs/chainsecured.md against a
// fresh enact-server --dev (its embedded ledger's /rpc), each command's JSON line, the refusals
// (a revert names the registry's custom error, exit 1; a loose key file, exit 1; usage, exit 2),
// and the same commands against anvil with a registry that `enact chain deploy` put there.
//
//   node tests/cli/chain_cli_test.mjs path/to/enact path/to/enact-server
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  binaryArgs, check, cliRunner, devServerArgs, fail, finish, loadEthers, repo, startEnactServer,
} from '../support/node/harness.mjs';

const [enact, serverBinary] = binaryArgs('chain_cli_test.mjs', 'ENACT', 'ENACT_SERVER');
const ethers = loadEthers();
const work = mkdtempSync(join(tmpdir(), 'enact-chain-cli-'));
const cli = cliRunner(enact, { cwd: work });
const { run, json, fails } = cli;
const path = (name) => join(work, name);
const isTx = (o) => /^0x[0-9a-f]{64}$/.test(o.transaction_hash) && Number.isInteger(o.block_number);

const server = await startEnactServer(serverBinary, devServerArgs(path('data'), '--no-triggers'));
try {
  cli.env = { ...process.env, ENACT_URL: server.url };
  delete cli.env.ENACT_RPC_URL;
  delete cli.env.ETH_RPC_URL;
  delete cli.env.ENACT_REGISTRY;
  delete cli.env.ENACT_API_KEY;

  // The owner's wallet key, 0600.
  const owner = run(['key', 'new', '--out', 'owner.key']).out;
  check(/^0x[0-9a-fA-F]{40}$/.test(owner), `key new prints the address (${owner})`);
  check((statSync(path('owner.key')).mode & 0o777) === 0o600, 'owner.key is 0600');

  // 1. The account, created on-chain by the wallet.
  const acct = json(['chain', 'new-account', '--name', 'demo', '--key-file', 'owner.key'], 'new-account');
  const accountHash = ethers.keccak256(owner);
  check(acct.account_hash === accountHash && acct.admin === owner && acct.managed === false && isTx(acct),
        `new-account: keccak256(abi.encodePacked(admin)) (${JSON.stringify(acct)})`);
  fails(['chain', 'new-account', '--name', 'again', '--key-file', 'owner.key'], 1,
        /newAccount: .*Duplicate\(what=apiKeyHash\) \(revert data 0x/, 'a second account is a Duplicate revert');

  // 2. A PKP minted for the wallet's signature and registered.
  const pkp = json(['chain', 'register-wallet', '--name', 'signer', '--key-file', 'owner.key'], 'register-wallet');
  check(pkp.minted === true && /^0x[0-9a-fA-F]{40}$/.test(pkp.pkp_id) && /^0x[0-9a-f]{64}$/.test(pkp.derivation_path) &&
        pkp.account_hash === accountHash && isTx(pkp), `register-wallet mints and registers (${JSON.stringify(pkp)})`);
  fails(['chain', 'register-wallet', '--name', 'again', '--wallet', pkp.pkp_id, '--derivation-path', pkp.derivation_path,
         '--key-file', 'owner.key'], 1, /Duplicate\(what=wallet\)/, 'the same wallet twice');
  fails(['chain', 'register-wallet', '--name', 'x', '--wallet', pkp.pkp_id, '--key-file', 'owner.key'], 2,
        /both --wallet and --derivation-path/, '--wallet without --derivation-path');

  // 3. A usage key minted, its wallet registered, the key set: written 0600, never printed.
  const key = json(['chain', 'set-usage-key', '--name', 'runner', '--execute-in-groups', '1', '--key-out', 'usage.key',
                    '--key-file', 'owner.key'], 'set-usage-key (mint)');
  const usageKey = readFileSync(path('usage.key'), 'utf8').trim();
  check(key.usage_key_hash === ethers.keccak256(ethers.toUtf8Bytes(usageKey)) && key.key_file === 'usage.key' &&
        key.usage_api_key === undefined && key.permissions.execute_in_groups[0] === 1 && isTx(key),
        `set-usage-key writes the key and sets its hash (${JSON.stringify(key)})`);
  check(key.wallet_address === new ethers.Wallet(ethers.hexlify(ethers.decodeBase64(usageKey))).address,
        'the usage key wallet is the key\'s own address');
  check((statSync(path('usage.key')).mode & 0o777) === 0o600, 'usage.key is 0600');
  // Updating the same key from its file (8-argument form, wallet derived from the key).
  const again = json(['chain', 'set-usage-key', '--name', 'runner', '--execute-in-groups', '1,2', '--usage-key-file',
                      'usage.key', '--key-file', 'owner.key'], 'set-usage-key (update)');
  check(again.usage_key_hash === key.usage_key_hash && again.wallet_address === key.wallet_address,
        'set-usage-key --usage-key-file updates the same key');

  // 4. An action in a group with the PKP.
  writeFileSync(path('action.js'), 'Enact.setResponse({signer: Enact.getAddress({pkpId: params.pkp})});\n');
  const up = json(['core', 'actions', 'upload', 'action.js', '--key-file', 'usage.key'], 'upload with the usage key');
  const group = json(['chain', 'add-group', '--name', 'signers', '--pkps', pkp.pkp_id, '--cid-hashes', up.action_ipfs_cid,
                      '--key-file', 'owner.key'], 'add-group');
  check(group.group_id === 1 && isTx(group), `add-group prints the id (${JSON.stringify(group)})`);
  const action = json(['chain', 'add-action', up.action_ipfs_cid, '--name', 'sign', '--key-file', 'owner.key'], 'add-action');
  check(action.hashed_cid === up.hashed_cid, 'add-action hashes the CID');

  // 5. Credits by wallet-signed billing, then the usage key runs the action with the PKP.
  const intent = json(['core', 'billing', 'create-intent', '--amount-cents', '500', '--wallet-key-file', 'owner.key'], 'intent');
  json(['core', 'billing', 'confirm', intent.payment_intent_id, '--wallet-key-file', 'owner.key'], 'confirm');
  const ran = json(['core', 'run', '--cid', up.action_ipfs_cid, '--pkp', pkp.pkp_id, '--params',
                    JSON.stringify({ pkp: pkp.pkp_id }), '--key-file', 'usage.key'], 'run');
  check(ran.response?.signer === pkp.pkp_id && ran.charged_credits === 1, `the action ran with the PKP (${JSON.stringify(ran)})`);
  // The code read back (GET /get_action_code) by the usage key that may run it: the file byte for
  // byte, the same in the JSON form; a CID the key may not read is the service's not_found (exit 1).
  const code = json(['core', 'actions', 'code', up.action_ipfs_cid, '--key-file', 'usage.key'], 'actions code');
  check(code.action_ipfs_cid === up.action_ipfs_cid && code.code === readFileSync(path('action.js'), 'utf8'),
        `actions code --json gives back the uploaded file (${JSON.stringify(code)})`);
  const text = run(['core', 'actions', 'code', up.action_ipfs_cid, '--key-file', 'usage.key']);
  check(text.code === 0 && text.out === readFileSync(path('action.js'), 'utf8').trim(),
        `actions code prints the code itself (${text.code} '${text.out}' ${text.err})`);
  fails(['core', 'actions', 'code', 'QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn', '--key-file', 'usage.key'], 1,
        /not_found/, 'actions code of a CID nobody let this key read');
  fails(['core', 'actions', 'code', 'not-a-cid', '--key-file', 'usage.key'], 2, /CID/, 'actions code of a malformed CID');
  const billed = json(['core', 'billing', 'balance', '--wallet-key-file', 'owner.key'], 'balance after the run');
  check(billed.balance_credits === 499, `500 credits bought, one run charged (${JSON.stringify(billed)})`);

  // 6. Reads.
  const account = json(['chain', 'account', '--key-file', 'owner.key'], 'account');
  check(account.accountHash === accountHash && account.admin === owner.toLowerCase() && account.managed === false &&
        // Credits live in the metering store; the registry's account record has no balance.
        !('balance' in account) && account.walletCount === 2, `chain account (${JSON.stringify(account)})`);
  check(json(['chain', 'account', '--admin', owner], 'account --admin').accountHash === accountHash, 'account --admin');
  check(json(['chain', 'account', '--account', accountHash], 'account --account').name === 'demo', 'account --account');
  const groups = json(['chain', 'list-groups', '--key-file', 'owner.key'], 'list-groups');
  check(groups.total === 1 && groups.items[0].groupId === 1 && groups.items[0].cidHashes[0] === up.hashed_cid,
        `list-groups (${JSON.stringify(groups)})`);
  // The text form of the same reads (docs/cli.md "Output"): `key: value` lines, lists as blocks.
  const accountText = run(['chain', 'account', '--key-file', 'owner.key']);
  check(accountText.code === 0 && new RegExp(`^accountHash: +${accountHash}$`, 'm').test(accountText.out) &&
        /^managed: +false$/m.test(accountText.out) && !accountText.out.startsWith('{'), `chain account text: ${accountText.out}`);
  const groupsText = run(['chain', 'list-groups', '--key-file', 'owner.key']);
  check(groupsText.code === 0 && /^items:\n  - groupId: +1$/m.test(groupsText.out) &&
        new RegExp(`^      - ${up.hashed_cid}$`, 'm').test(groupsText.out) && /^total: +1$/m.test(groupsText.out),
        `chain list-groups text: ${groupsText.out}`);
  fails(['chain', 'list-groups', '--key-file', 'owner.key', '--limit', 'x', '--json'], 2, /--limit/, 'usage error with --json');
  const keys = json(['chain', 'list-keys', '--account', accountHash], 'list-keys');
  check(keys.total === 1 && keys.items[0].usageKeyHash === key.usage_key_hash &&
        JSON.stringify(keys.items[0].permissions.execute_in_groups) === '[1,2]', `list-keys (${JSON.stringify(keys)})`);
  const wallets = json(['chain', 'list-wallets', '--key-file', 'owner.key'], 'list-wallets');
  check(wallets.total === 2, 'list-wallets: the PKP and the usage key wallet');
  check(wallets.items.find((w) => w.wallet.toLowerCase() === pkp.pkp_id.toLowerCase())?.usageKeyWallet === false &&
        wallets.items.find((w) => w.wallet.toLowerCase() === key.wallet_address.toLowerCase())?.usageKeyWallet === true,
        `list-wallets labels the usage key's wallet (${JSON.stringify(wallets.items)})`);
  check(json(['chain', 'list-wallets', '--group', '1', '--key-file', 'owner.key'], 'list-wallets --group').total === 1,
        'list-wallets --group');
  const actions = json(['chain', 'list-actions', '--group', '1', '--key-file', 'owner.key'], 'list-actions --group');
  check(actions.total === 1 && actions.items[0].name === 'sign', 'list-actions --group');
  check(json(['chain', 'list-groups', '--offset', '1', '--key-file', 'owner.key'], 'offset').items.length === 0, '--offset');

  // 7. Group edits.
  const other = ethers.Wallet.createRandom().address;
  fails(['chain', 'add-pkp', '1', other, '--key-file', 'owner.key'], 1, /UnknownWallet\(accountHash=/, 'an unregistered PKP');
  const removed = json(['chain', 'remove-pkp', '1', pkp.pkp_id, '--key-file', 'owner.key'], 'remove-pkp');
  check(removed.group_id === 1 && isTx(removed), 'remove-pkp');
  json(['chain', 'add-pkp', '1', pkp.pkp_id, '--key-file', 'owner.key'], 'add-pkp');
  json(['chain', 'remove-action-from-group', '1', up.action_ipfs_cid, '--key-file', 'owner.key'], 'remove-action-from-group');
  json(['chain', 'add-action-to-group', '1', up.hashed_cid, '--key-file', 'owner.key'], 'add-action-to-group');
  const updated = json(['chain', 'update-group', '1', '--name', 'renamed', '--key-file', 'owner.key'], 'update-group');
  check(updated.group.name === 'renamed' && updated.group.pkpIds.length === 1 && updated.group.cidHashes.length === 1,
        `update-group keeps what is not given (${JSON.stringify(updated)})`);
  const second = json(['chain', 'add-group', '--name', 'tmp', '--key-file', 'owner.key'], 'add-group 2');
  check(second.group_id === 2, 'the second group is 2');
  json(['chain', 'remove-group', '2', '--key-file', 'owner.key'], 'remove-group');
  fails(['chain', 'remove-group', '2', '--key-file', 'owner.key'], 1, /removeGroup: .*UnknownGroup\(.*groupId=2\)/, 'removed twice');

  // 8. Refusals: another wallet, loose key files, keys on the command line, usage.
  run(['key', 'new', '--out', 'stranger.key']);
  fails(['chain', 'add-group', '--name', 'x', '--account', accountHash, '--key-file', 'stranger.key'], 1,
        /addGroup: .*NotAdmin\(accountHash=0x[0-9a-f]{64}, sender=0x[0-9a-f]{40}\) \(revert data 0x/, 'a stranger');
  fails(['chain', 'account', '--key-file', 'stranger.key'], 1, /administers no account/, 'a wallet without account');
  writeFileSync(path('loose.key'), readFileSync(path('owner.key')));
  chmodSync(path('loose.key'), 0o644);
  fails(['chain', 'list-groups', '--key-file', 'loose.key'], 1, /readable by its group or others \(mode 0644\)/, 'a loose key file');
  fails(['chain', 'new-account', '--name', 'x', '--private-key', '0x01'], 2, /not accepted on the command line/, '--private-key');
  fails(['chain', 'add-group', '--key-file', 'owner.key'], 2, /missing --name/, 'missing --name');
  fails(['chain', 'remove-group', 'one', '--key-file', 'owner.key'], 2, /GROUP_ID: expected a non-negative integer/, 'a bad id');
  fails(['chain', 'list-groups', '--bogus'], 2, /unknown option --bogus/, 'an unknown option');
  fails(['chain', 'list-groups'], 2, /give --account HASH/, 'no account named');
  fails(['chain', 'deploy', '--key-file', 'owner.key', '--rpc-url', `${server.url}/rpc`], 1,
        /contract creation is not supported/, 'deploy on the embedded ledger');

  // 9. Removing the usage key stops it at once.
  json(['chain', 'remove-usage-key', '--usage-key-file', 'usage.key', '--key-file', 'owner.key'], 'remove-usage-key');
  const denied = run(['core', 'account', '--key-file', 'usage.key']);
  check(denied.code === 1 && /unauthenticated/.test(denied.err), `a removed key is refused (${denied.err})`);

  // 10. An API-mode account converted on-chain by its admin wallet (the account key's own key), to
  // itself: handing it to another wallet needs that wallet's consent (its ConvertAccount envelope
  // through the server), so the CLI refuses another --new-admin before sending anything.
  const api = json(['core', 'new-account', '--name', 'api mode', '--key-out', 'acct.key'], 'core new-account');
  const accountKeyHex = '0x' + Buffer.from(readFileSync(path('acct.key'), 'utf8').trim(), 'base64').toString('hex');
  writeFileSync(path('acct.hex'), accountKeyHex + '\n', { mode: 0o600 });
  const admin = run(['key', 'address', '--key-file', 'acct.hex']).out;
  check(admin === api.wallet_address, `the account key's wallet is the admin (${admin}, ${api.wallet_address})`);
  const stranger = run(['key', 'address', '--key-file', 'stranger.key']).out;
  fails(['chain', 'convert', '--account', api.api_key_hash, '--new-admin', stranger, '--key-file', 'acct.hex'], 1,
        /is not the key's wallet .*NewAdminNotSender/, 'convert to another wallet');
  check(json(['chain', 'account', '--account', api.api_key_hash], 'still API mode').managed === true,
        'the refused conversion sent nothing');
  const conv = json(['chain', 'convert', '--account', api.api_key_hash, '--key-file', 'acct.hex'], 'convert');
  check(conv.account_hash === api.api_key_hash && conv.new_admin_wallet_address === admin && isTx(conv),
        `convert (${JSON.stringify(conv)})`);
  const converted = json(['chain', 'account', '--admin', admin], 'the converted account');
  check(converted.accountHash === api.api_key_hash && converted.managed === false &&
        converted.admin === admin.toLowerCase(), 'the admin wallet administers the account, unmanaged');
  fails(['core', 'groups', 'add', '--name', 'x', '--key-file', 'acct.key'], 1, /unauthenticated/,
        'the old account key no longer writes');
  fails(['chain', 'convert', '--new-admin', admin, '--key-file', 'acct.hex'], 1, /AlreadyUnmanaged\(accountHash=/,
        'a second conversion');
  check(json(['chain', 'add-group', '--name', 'by admin wallet', '--key-file', 'acct.hex'], 'add-group by the admin wallet')
        .group_id === 1, 'the admin wallet writes on-chain');

  // --help of every chain command.
  for (const c of ['new-account', 'register-wallet', 'set-usage-key', 'remove-usage-key', 'add-group', 'update-group',
                   'remove-group', 'add-pkp', 'remove-pkp', 'add-action', 'add-action-to-group',
                   'remove-action-from-group', 'convert', 'account', 'list-groups', 'list-keys', 'list-wallets',
                   'list-actions', 'deploy']) {
    const r = run(['chain', c, '--help']);
    check(r.code === 0 && r.out.startsWith(`usage: enact chain ${c} `), `chain ${c} --help`);
  }
} catch (err) {
  fail(err);
} finally {
  await server.stop();
}

// The same commands against anvil, on a registry `enact chain deploy` puts there.
const anvilModule = join(repo, 'tests', 'anvil', 'anvil.mjs');
if (existsSync(join(repo, 'tests', 'anvil', 'node_modules', '@foundry-rs'))) {
  const { startAnvil } = await import(anvilModule);
  const node = await startAnvil({ chainId: 31337 });
  try {
    // ETH_RPC_URL, the variable foundry's cast reads, names the node when ENACT_RPC_URL is unset.
    cli.env = { ...process.env, ETH_RPC_URL: node.url };
    delete cli.env.ENACT_RPC_URL;
    delete cli.env.ENACT_URL;
    delete cli.env.ENACT_REGISTRY;
    // anvil's first dev account (mnemonic "test test ... junk").
    writeFileSync(path('anvil.key'), '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80\n', { mode: 0o600 });
    const dep = json(['chain', 'deploy', '--key-file', 'anvil.key', '--api-payers', '0x0000000000000000000000000000000000000001'],
                     'deploy on anvil');
    check(/^0x[0-9a-fA-F]{40}$/.test(dep.contract_address) && dep.owner === '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' &&
          isTx(dep), `deploy prints the registry (${JSON.stringify(dep)})`);
    cli.env.ENACT_REGISTRY = dep.contract_address;
    const a = json(['chain', 'new-account', '--name', 'on anvil', '--key-file', 'anvil.key'], 'new-account on anvil');
    check(a.account_hash === ethers.keccak256(dep.owner), 'new-account on anvil');
    const w = ethers.Wallet.createRandom().address;
    json(['chain', 'register-wallet', '--name', 'pkp', '--wallet', w, '--derivation-path', ethers.ZeroHash.replace(/0$/, '1'),
          '--key-file', 'anvil.key'], 'register-wallet on anvil');
    const g = json(['chain', 'add-group', '--name', 'g', '--pkps', w, '--key-file', 'anvil.key'], 'add-group on anvil');
    check(g.group_id === 1, 'add-group on anvil gives group 1');
    const acc = json(['chain', 'account', '--key-file', 'anvil.key'], 'account on anvil');
    check(acc.name === 'on anvil' && acc.walletCount === 1, 'account on anvil');
    fails(['chain', 'add-pkp', '1', w, '--key-file', 'anvil.key'], 1, /Duplicate\(what=pkpId\)/, 'a revert on anvil');
  } catch (err) {
    fail(err, 'anvil');
  } finally {
    await node.stop();
  }
} else {
  console.log('anvil not installed (npm ci --prefix tests/anvil): the anvil part is skipped');
}

rmSync(work, { recursive: true, force: true });
finish('chain cli');
