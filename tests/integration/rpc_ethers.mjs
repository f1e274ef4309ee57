// SPDX-License-Identifier: Apache-2.0
// ethers 6 against the embedded ledger's JSON-RPC surface (POST /rpc of enact-server --dev): a
// JsonRpcProvider (batching on, as by default), a Wallet and a Contract built from the registry's
// build artifact perform newAccount, registerWalletDerivation, setUsageApiKey (both overloads)
// and addGroup, read them back with the views and with eth_getLogs, and see the registry's
// refusals as ethers sees a node's: a revert decoded into the custom error's name and arguments
// (staticCall, estimateGas), a mined transaction with status 0, "nonce too low".
//
//   node tests/integration/rpc_ethers.mjs path/to/enact-server
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  binaryArgs, check, devServerArgs, fail, finish, loadEthers, rejects, repo, startEnactServer,
} from '../support/node/harness.mjs';

const [serverBinary] = binaryArgs('rpc_ethers.mjs', 'ENACT_SERVER');
const ethers = loadEthers();
const artifact = JSON.parse(
  readFileSync(join(repo, 'contracts', 'build', 'PermissionRegistry.json'), 'utf8'));

// --- the server ---------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'enact-rpc-ethers-'));
const server = await startEnactServer(serverBinary, devServerArgs(join(work, 'data'), '--no-triggers'));
const base = server.url;

try {
  const config = await (await fetch(`${base}/core/v1/get_node_chain_config`)).json();
  // ethers answers a request repeated within cacheTimeout (250 ms) from its cache: transactions
  // here are mined at once, so back-to-back sends would reuse a stale nonce count.
  const provider = new ethers.JsonRpcProvider(`${base}/rpc`, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  const network = await provider.getNetwork();
  check(network.chainId === BigInt(config.chain_id), `chain id ${network.chainId} = ${config.chain_id}`);
  check((await provider.getCode(config.contract_address)) !== '0x', 'the registry has code');

  const owner = new ethers.Wallet(ethers.keccak256(ethers.toUtf8Bytes('rpc ethers owner')), provider);
  const stranger = new ethers.Wallet(ethers.keccak256(ethers.toUtf8Bytes('rpc ethers stranger')), provider);
  const registry = new ethers.Contract(config.contract_address, artifact.abi, owner);
  const iface = registry.interface;
  // docs/protocol.md §1: an account created on-chain by a wallet is keccak256(abi.encodePacked(admin)).
  const accountHash = ethers.keccak256(ethers.solidityPacked(['address'], [owner.address]));

  // newAccount(managed = false): the wallet's ChainSecured account.
  const created = await (await registry.newAccount(accountHash, owner.address, false, 'ethers account',
                                                   'made by ethers', '')).wait();
  check(created.status === 1, 'newAccount mined with status 1');
  const createdLog = created.logs.map((l) => iface.parseLog(l)).find((l) => l?.name === 'AccountCreated');
  check(createdLog && createdLog.args.accountHash === BigInt(accountHash) &&
        createdLog.args.adminWalletAddress === owner.address && createdLog.args.managed === false,
        'the receipt carries AccountCreated');
  const account = await registry.getAccount(accountHash);
  check(account.admin === owner.address && account.managed === false && account.name === 'ethers account',
        `getAccount reads the account back: ${account}`);
  check((await registry.accountByAdmin(owner.address)).accountHash === BigInt(accountHash), 'accountByAdmin');

  // registerWalletDerivation: a PKP of the account.
  const pkp = ethers.Wallet.createRandom().address;
  const path = ethers.hexlify(ethers.randomBytes(32));
  check((await (await registry.registerWalletDerivation(accountHash, pkp, path, 'pkp', 'a wallet')).wait()).status === 1,
        'registerWalletDerivation mined');
  const w = await registry.getWallet(accountHash, pkp);
  check(w.wallet === pkp && w.derivationPath === BigInt(path) && w.name === 'pkp', 'getWallet reads it back');

  // setUsageApiKey, both overloads.
  const keyHash = ethers.keccak256(ethers.toUtf8Bytes('a usage key as base64'));
  const keyWallet = ethers.Wallet.createRandom().address;
  const perms = [false, false, false, [], [], [], [0n]];
  const set8 = registry['setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]),address)'];
  check((await (await set8(accountHash, keyHash, 0, 0, 'runner', '', perms, keyWallet)).wait()).status === 1,
        'setUsageApiKey (8 arguments) mined');
  const key = await registry.getUsageApiKey(keyHash);
  check(key.accountHash === BigInt(accountHash) && key.wallet === keyWallet && key.name === 'runner' &&
        key.permissions.executeInGroups.length === 1 && key.permissions.executeInGroups[0] === 0n,
        'getUsageApiKey reads the key back');
  const keyHash7 = ethers.keccak256(ethers.toUtf8Bytes('another usage key'));
  const set7 = registry['setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))'];
  check((await (await set7(accountHash, keyHash7, 4102444800n, 5, 'second', 'd', [true, false, true, [1n], [], [], []])).wait()).status === 1,
        'setUsageApiKey (7 arguments) mined');
  const keys = await registry.listUsageApiKeys(accountHash, 0, 10);
  check(keys.total === 2n && keys.items.length === 2 && keys.items[1].wallet === ethers.ZeroAddress &&
        keys.items[1].expiration === 4102444800n, 'listUsageApiKeys lists both');

  // addGroup: staticCall gives the id it will assign; the log carries it too.
  const cidHash = ethers.keccak256(ethers.toUtf8Bytes('QmSomeActionCid'));
  const nextId = await registry.addGroup.staticCall(accountHash, 'g', 'group', [pkp], [cidHash]);
  check(nextId === 1n, `addGroup.staticCall answers the next id (${nextId})`);
  const groupReceipt = await (await registry.addGroup(accountHash, 'g', 'group', [pkp], [cidHash])).wait();
  const added = groupReceipt.logs.map((l) => iface.parseLog(l)).find((l) => l?.name === 'GroupAdded');
  check(added && added.args.groupId === 1n && added.args.pkpIds[0] === pkp, 'GroupAdded in the receipt');
  const group = await registry.getGroup(accountHash, 1);
  check(group.name === 'g' && group.pkpIds.length === 1 && group.cidHashes[0] === BigInt(cidHash),
        'getGroup reads the group back');
  const groups = await registry.listGroups(accountHash, 0, 10);
  check(groups.total === 1n && groups.items[0].groupId === 1n, 'listGroups');
  const inGroup = await registry.listActionsInGroup(accountHash, 1, 0, 10);
  check(inGroup.total === 1n && inGroup.items[0].hashedCid === BigInt(cidHash) && inGroup.items[0].cid === '',
        'listActionsInGroup shows the unregistered hash');

  // eth_getLogs through a query filter: every write of the account, in order.
  const logs = await registry.queryFilter(registry.filters.GroupAdded(accountHash), 0, 'latest');
  check(logs.length === 1 && logs[0].args.groupId === 1n, 'queryFilter(GroupAdded) finds the group');
  const all = await provider.getLogs({ address: config.contract_address, topics: [null, accountHash], fromBlock: 0 });
  const names = all.map((l) => iface.parseLog(l).name);
  check(JSON.stringify(names) === JSON.stringify(['AccountCreated', 'WalletDerivationRegistered', 'UsageApiKeySet',
                                                  'UsageApiKeySet', 'GroupAdded']),
        `the account's logs in order: ${names}`);

  // Transactions and blocks as ethers reads them.
  const tx = await provider.getTransaction(groupReceipt.hash);
  check(tx.from === owner.address && tx.to === config.contract_address && tx.nonce === 4 &&
        tx.data === registry.interface.encodeFunctionData('addGroup', [accountHash, 'g', 'group', [pkp], [cidHash]]),
        'getTransaction gives the signed transaction back');
  const block = await provider.getBlock(groupReceipt.blockNumber);
  check(block.hash === groupReceipt.blockHash && block.transactions[0] === groupReceipt.hash, 'getBlock');
  check(await provider.getTransactionCount(owner.address, 'pending') === 5, 'nonce count');

  // Refusals, decoded by ethers into the custom errors.
  const asStranger = registry.connect(stranger);
  let e = await rejects(asStranger.addGroup.staticCall(accountHash, 'x', '', [], []), 'stranger staticCall');
  check(e?.code === 'CALL_EXCEPTION' && e?.revert?.name === 'NotAdmin' &&
        e.revert.args[0] === BigInt(accountHash) && e.revert.args[1] === stranger.address,
        `a stranger's write reverts NotAdmin(accountHash, sender) (${e?.shortMessage})`);
  e = await rejects(asStranger.addGroup(accountHash, 'x', '', [], []), 'stranger send');
  check(e?.code === 'CALL_EXCEPTION' && e.data && iface.parseError(e.data)?.name === 'NotAdmin',
        `sending it fails in estimateGas with NotAdmin's revert data (${e?.shortMessage})`);
  e = await rejects(registry.registerWalletDerivation.staticCall(accountHash, pkp, path, 'again', ''), 'duplicate');
  check(e?.revert?.name === 'Duplicate' && e.revert.args[0] === 'wallet', 'a duplicate wallet reverts Duplicate("wallet")');
  // The credit functions of earlier registries are gone (credits are the metering store's): their
  // selectors revert without data, as on a contract that lacks them.
  const debit = new ethers.Interface(['function debitCredits(uint256 accountHash, uint256 amount) returns (uint256)']);
  check(!iface.getFunction('debitCredits'), 'the registry ABI has no debitCredits');
  e = await rejects(provider.call({ to: config.contract_address, from: stranger.address,
    data: debit.encodeFunctionData('debitCredits', [accountHash, 1]) }), 'debitCredits');
  check(e?.code === 'CALL_EXCEPTION' && (e.data === null || e.data === undefined || e.data === '0x'),
        `a retired credit selector reverts without data (${e?.shortMessage})`);
  e = await rejects(registry.getGroup(accountHash, 9), 'unknown group');
  check(e?.revert?.name === 'UnknownGroup' && e.revert.args[1] === 9n, 'getGroup of an unknown id reverts UnknownGroup');

  // A transaction sent past estimation (explicit gas limit) is mined with status 0.
  const failed = await asStranger.addGroup(accountHash, 'x', '', [], [], { gasLimit: 300000 });
  e = await rejects(failed.wait(), 'status 0');
  check(e?.code === 'CALL_EXCEPTION' && e.receipt?.status === 0, 'a reverted transaction has status 0');
  const rawReceipt = await provider.send('eth_getTransactionReceipt', [failed.hash]);
  check(rawReceipt.revertReason && iface.parseError(rawReceipt.revertReason)?.name === 'NotAdmin',
        'its receipt carries the revert data as revertReason');
  check(await provider.getTransactionCount(stranger.address) === 1, 'the reverted transaction used its nonce');

  // Nonce too low: the same nonce again.
  const signed = await owner.signTransaction(await owner.populateTransaction({
    to: config.contract_address, nonce: 0, gasLimit: 300000,
    data: iface.encodeFunctionData('removeGroup', [accountHash, 1]) }));
  e = await rejects(provider.broadcastTransaction(signed), 'nonce too low');
  check(e?.code === 'NONCE_EXPIRED', `a used nonce is NONCE_EXPIRED (${e?.code})`);

  // A method the surface does not have.
  e = await rejects(provider.send('eth_newFilter', [{}]), 'unsupported method');
  check(e?.code === 'UNSUPPORTED_OPERATION' || e?.error?.code === -32601, 'an unknown method is -32601');
  provider.destroy();
} catch (err) {
  fail(err);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}

finish('rpc_ethers');
