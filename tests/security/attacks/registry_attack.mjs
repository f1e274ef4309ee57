// SPDX-License-Identifier: Apache-2.0
// What the registry attack scripts share (registry_identity.mjs, conversion_consent.mjs): ethers
// and anvil from the repository's pinned npm packages, the registry's ABI from the committed build
// artifact, a check counter, revert decoding, and a fresh `enact-server --dev` on loopback with a
// raw client of its core API.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryArgs, check, devServerArgs, fail, loadEthers, repo, startEnactServer } from '../../support/node/harness.mjs';

export { check, fail, finish, tally } from '../../support/node/harness.mjs';
export const ethers = loadEthers();
export const { startAnvil } = await import(join(repo, 'tests', 'anvil', 'anvil.mjs'));
const artifact = JSON.parse(
  readFileSync(join(repo, 'contracts', 'build', 'PermissionRegistry.json'), 'utf8'));
export const abi = artifact.abi;
export const bytecode = artifact.bytecode;
export const iface = new ethers.Interface(artifact.abi);
export const SET7 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]))';
export const SET8 = 'setUsageApiKey(uint256,uint256,uint256,uint256,string,string,(bool,bool,bool,uint256[],uint256[],uint256[],uint256[]),address)';
// anvil's dev accounts 0..3, by their well-known private keys.
export const kDevKeys = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
];

/** The server binary named on the command line of `script`, or exit 2 with its usage. */
export const serverBinaryArg = (script) => binaryArgs(script, 'ENACT_SERVER')[0];

/** docs/protocol.md §1: the hash of an account a wallet creates. */
export const canonical = (wallet) => ethers.solidityPackedKeccak256(['address'], [wallet]);

/** The revert data of `promise` (a staticCall or a send that fails its estimate), or null. */
export async function revertData(promise) {
  try {
    await promise;
  } catch (e) {
    const data = e?.data ?? e?.info?.error?.data;
    return typeof data === 'string' && data.startsWith('0x') ? data : null;
  }
  return null;
}

/**
 * Expects a simulation of `contract[fn](...args)` to revert with `error` (and `errorArgs` as
 * decoded, when given); returns the revert data. `label` names the attack.
 */
export async function refused(label, contract, fn, args, error, errorArgs) {
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
            (typeof got === 'string' ? got.toLowerCase() === String(want).toLowerCase()
                                     : BigInt(want === '' ? 0 : want) === BigInt(got)),
            `${label}: ${error}.${p.name} = ${got}, expected ${want}`);
    }
  }
  return data;
}

/** A mined attempt: status 0 (gas given, so no estimate stops it first), and the receipt's
 *  revert reason where the node keeps one. */
export async function minedRefusal(label, provider, contract, fn, args, error) {
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
export async function accountOf(contract, wallet) {
  try {
    return ethers.toBeHex((await contract.accountByAdmin(wallet)).accountHash, 32);
  } catch (e) {
    const data = e?.data ?? e?.info?.error?.data;
    check(typeof data === 'string' && iface.parseError(data)?.name === 'UnknownAccount',
          `accountByAdmin(${wallet}): ${e.shortMessage ?? e.message}`);
    return null;
  }
}

/**
 * `enact-server --dev` on 127.0.0.1:0 with a fresh data directory (prefix `tag`), without the
 * trigger service: { base, core(method, path, key, body), stop() }.
 */
export async function startServer(binary, tag) {
  const work = mkdtempSync(join(tmpdir(), `enact-attack-${tag}-`));
  const server = await startEnactServer(binary, devServerArgs(join(work, 'data'), '--no-triggers'));
  const base = server.url;
  const core = async (method, path, key, body) => {
    const headers = { 'content-type': 'application/json' };
    if (key) headers['x-api-key'] = key;
    const res = await fetch(`${base}/core/v1${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: await res.json() };
  };
  const stop = async () => {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  };
  return { base, core, stop };
}

/**
 * Runs `body({ provider, wallets, as })` against a fresh anvil with the registry deployed by dev
 * account 0 for dev account 1 as its api payer: `wallets` are dev accounts 0..3, `as(w)` the
 * registry connected to w. An exception counts as a failure; anvil is stopped in any case.
 */
export async function onAnvilRegistry(body) {
  const node = await startAnvil({ chainId: 31337 });
  try {
    const provider = new ethers.JsonRpcProvider(node.url, 31337, { staticNetwork: true, cacheTimeout: -1 });
    provider.pollingInterval = 20;
    const wallets = kDevKeys.map((k) => new ethers.Wallet(k, provider));
    const deployed = await new ethers.ContractFactory(abi, bytecode, wallets[0]).deploy([wallets[1].address]);
    await deployed.waitForDeployment();
    const at = await deployed.getAddress();
    await body({ provider, wallets, as: (w) => new ethers.Contract(at, abi, w) });
    provider.destroy();
  } catch (e) {
    fail(e);
  } finally {
    await node.stop();
  }
}
