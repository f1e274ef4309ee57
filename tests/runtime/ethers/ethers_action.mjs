// SPDX-License-Identifier: Apache-2.0
// Actions as people write them with ethers, and the signing capabilities checked by ethers:
//   1. action_entry.mjs, importing ethers 6 from npm, bundled by esbuild (minified, tree-shaken)
//      into one script under the action code limit (256 KiB), runs on SpiderMonkey and calls
//      parseUnits, Interface.encodeFunctionData and verifyMessage; the results equal node's.
//   2. signing_action.js on both engines: Enact.getPublicKey (secp256k1 and ed25519, the Solana
//      address), Enact.signEd25519 (verified with node's Ed25519), Enact.signTypedData (recovered
//      with ethers.verifyTypedData), Enact.signTransaction (the raw transaction parsed and its
//      sender recovered by ethers.Transaction.from); and the refusals, each caught by the action
//      with nothing signed: a PKP the action may not use, another account's PKP, malformed typed
//      data, transactions with absurd fields.
//
//   node tests/runtime/ethers/ethers_action.mjs path/to/enact-server
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binaryArgs, check, devServerArgs, fail, finish, requirePinned, startEnactServer } from '../../support/node/harness.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const [serverBinary] = binaryArgs('ethers_action.mjs', 'ENACT_SERVER');
const ethers = requirePinned('runtime/ethers', 'ethers');
const esbuild = requirePinned('runtime/ethers', 'esbuild');
const kMaxCode = 256 * 1024;  // the server's action code limit (core service: max_action_code_bytes)

// --- the bundle -----------------------------------------------------------------------------------
// format "esm" with no exports is a plain script whose top-level await the action's async body
// allows; esbuild keeps only what the entry imports.
const built = await esbuild.build({
  entryPoints: [join(HERE, 'action_entry.mjs')], bundle: true, minify: true, treeShaking: true, format: 'esm',
  platform: 'browser', target: 'es2020', supported: { 'top-level-await': true }, write: false, logLevel: 'silent',
});
const bundle = built.outputFiles[0].text;
const bundleBytes = Buffer.byteLength(bundle);
console.log(`ethers bundle: ${bundleBytes} bytes (limit ${kMaxCode})`);
check(bundleBytes <= kMaxCode, `the minified ethers bundle fits the action code limit: ${bundleBytes} bytes`);
check(!/^\s*(import|export)\b/m.test(bundle), 'the bundle has no import or export statement left');

// --- helpers --------------------------------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'enact-ethers-action-'));
async function call(base, path, body, key) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers['x-api-key'] = key;
  const res = await fetch(`${base}/core/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, json, text };
}
async function ok(base, path, body, key) {
  const r = await call(base, path, body, key);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r.json;
}
async function account(base, name) {
  const a = await ok(base, '/new_account', { name });
  const intent = await ok(base, '/billing/create_payment_intent', { amount_cents: 1000 }, a.api_key);
  await ok(base, '/billing/confirm_payment', { payment_intent_id: intent.payment_intent_id }, a.api_key);
  return a;
}
const ed25519Key = (raw) => createPublicKey({
  key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(ethers.getBytes(raw))]), format: 'der', type: 'spki',
});
const bytesOf = (message) => (message.startsWith('0x') ? Buffer.from(ethers.getBytes(message)) : Buffer.from(message, 'utf8'));

const typedData = {
  types: {
    EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' },
                   { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }],
    Attestation: [{ name: 'feed', type: 'string' }, { name: 'price', type: 'uint256' },
                  { name: 'at', type: 'uint64' }, { name: 'tags', type: 'string[]' }],
  },
  primaryType: 'Attestation',
  domain: { name: 'Price oracle', version: '1', chainId: 8453, verifyingContract: '0x000000000000000000000000000000000000dEaD' },
  message: { feed: 'ETH/USD — spot', price: '341234567890000000000', at: 1764201600, tags: ['spot', 'median'] },
};
const tx = { chainId: 8453, nonce: 7, maxPriorityFeePerGas: '1000000000', maxFeePerGas: '0x9502f9000', gasLimit: 65000,
             to: '0x000000000000000000000000000000000000dEaD', value: '1230000000000000000', data: '0xa9059cbb' + '00'.repeat(64) };
const create = { chainId: 1, nonce: 0, maxPriorityFeePerGas: 0, maxFeePerGas: 1, gas: 100000, to: null, data: '0x6000' };
const badTyped = [
  '{"types": ',                                                      // not JSON
  { ...typedData, primaryType: 'Missing' },                          // undefined primary type
  { ...typedData, message: { ...typedData.message, price: '-1' } },  // out of range for uint256
  { ...typedData, types: { ...typedData.types, Attestation: [{ name: 'feed', type: 'strin' }] } },
  42,
];
const badTx = [
  { ...tx, chainId: 0 },
  { ...tx, nonce: '18446744073709551615' },
  { ...tx, gasLimit: 1 },
  { ...tx, gasLimit: '1000000000000' },
  { ...tx, maxPriorityFeePerGas: '0x99999999999' },
  { ...tx, value: '0x1' + '0'.repeat(64) },
  { ...tx, gasPrice: 1 },
  { ...tx, to: '0x1234' },
  { ...tx, data: '0xabc' },
  { ...tx, chainId: -1 },
  { ...tx, nonce: 1.5 },
  'not a transaction',
];

// --- one server per engine ------------------------------------------------------------------------
async function engine(name) {
  const flags = ['--no-triggers', '--sandbox-workers', '2'];
  if (name === 'duktape') flags.push('--action-engine', 'duktape');
  const server = await startEnactServer(serverBinary, devServerArgs(join(work, name), ...flags));
  const base = server.url;
  try {
    const a = await account(base, 'signer');
    const b = await account(base, 'neighbour');
    const p1 = await ok(base, '/create_wallet', { name: 'p1' }, a.api_key);
    const p2 = await ok(base, '/create_wallet', { name: 'p2' }, a.api_key);
    const foreign = await ok(base, '/create_wallet', { name: 'theirs' }, b.api_key);
    const signing = await ok(base, '/upload_action', { code: readFileSync(join(HERE, 'signing_action.js'), 'utf8') }, a.api_key);
    const uploaded = [signing.hashed_cid];
    let bundled = null;
    if (name === 'spidermonkey') {
      bundled = await ok(base, '/upload_action', { code: bundle }, a.api_key);
      uploaded.push(bundled.hashed_cid);
    }
    await ok(base, '/add_group', { name: 'signers', pkp_ids_permitted: [p1.pkp_id], cid_hashes_permitted: uploaded }, a.api_key);
    // p2 is the account's own but in no group with the action; another account's PKP listed in
    // this account's group must not be usable either.
    const stolen = await call(base, '/add_group', { name: 'theirs', pkp_ids_permitted: [foreign.pkp_id], cid_hashes_permitted: uploaded }, a.api_key);
    console.log(`${name}: adding another account's PKP to a group answers ${stolen.status}`);

    const params = { pkp: p1.pkp_id, outsider: p2.pkp_id, foreign: foreign.pkp_id, text: 'gm from enact ☀️',
                     hex: '0x00ff10' + '42'.repeat(40), typedData, tx, create, badTyped, badTx };
    const run = await call(base, '/run_action', { action_ipfs_cid: signing.action_ipfs_cid, params }, a.api_key);
    check(run.status === 200, `${name}: signing action ran: ${run.status} ${run.text.slice(0, 400)}`);
    if (run.status !== 200) return;
    const out = run.json.response;
    const sigs = run.json.signatures;

    // getPublicKey: the secp256k1 key is the PKP's address; the Ed25519 key's base58 is its Solana address.
    check(out.secp.ok && ethers.computeAddress(out.secp.ok.public_key) === p1.pkp_id && out.secp.ok.address === p1.pkp_id,
          `${name}: secp256k1 public key of the PKP: ${JSON.stringify(out.secp)}`);
    check(JSON.stringify(out.secpDefault) === JSON.stringify(out.secp), `${name}: secp256k1 is the default scheme`);
    const ed = out.ed.ok;
    check(ed && ed.scheme === 'ed25519' && ethers.getBytes(ed.public_key).length === 32 &&
          ed.address === ethers.encodeBase58(ed.public_key), `${name}: Ed25519 key and Solana address: ${JSON.stringify(out.ed)}`);

    // signEd25519 over UTF-8 text and over hex bytes, verified by node's Ed25519.
    for (const [field, message] of [['edText', params.text], ['edHex', params.hex]]) {
      const s = out[field].ok;
      check(s && s.public_key === ed?.public_key && s.solana_address === ed?.address &&
            verifySignature(null, bytesOf(message), ed25519Key(s.public_key), Buffer.from(ethers.getBytes(s.signature))),
            `${name}: ${field} verifies with node's Ed25519: ${JSON.stringify(out[field])}`);
    }

    // signTypedData: ethers recovers the PKP; the signature is also the run's signatures.permit.
    const { EIP712Domain, ...types } = typedData.types;
    for (const field of ['typed', 'typedText']) {
      const s = out[field].ok;
      check(s && ethers.verifyTypedData(typedData.domain, types, typedData.message, s.signature) === p1.pkp_id &&
            s.digest === ethers.TypedDataEncoder.hash(typedData.domain, types, typedData.message),
            `${name}: ${field} recovers to the PKP with ethers: ${JSON.stringify(out[field])}`);
    }
    check(sigs.permit && sigs.permit.signature === out.typed.ok?.signature, `${name}: signatures.permit is the typed-data signature`);
    check(JSON.stringify(Object.keys(sigs).sort()) === JSON.stringify(['permit', 'sig2']),
          `${name}: only the two typed-data signatures are in the run's signatures: ${Object.keys(sigs)}`);

    // signTransaction: ethers parses the raw transaction, its fields and its sender.
    for (const [field, want] of [['tx', tx], ['create', create]]) {
      const s = out[field].ok;
      let parsed = null;
      try { parsed = ethers.Transaction.from(s.raw); } catch (e) { fail(e, `${name}: parsing ${field}`); }
      check(parsed && parsed.type === 2 && parsed.from === p1.pkp_id && s.from === p1.pkp_id && parsed.hash === s.hash &&
            parsed.chainId === BigInt(want.chainId) && parsed.nonce === Number(want.nonce) &&
            parsed.maxPriorityFeePerGas === BigInt(want.maxPriorityFeePerGas) && parsed.maxFeePerGas === BigInt(want.maxFeePerGas) &&
            parsed.gasLimit === BigInt(want.gasLimit ?? want.gas) && parsed.to === (want.to ?? null) &&
            parsed.value === BigInt(want.value ?? 0) && parsed.data === want.data,
            `${name}: ${field} decodes with ethers and recovers to the PKP: ${JSON.stringify(out[field])}`);
    }

    // Refusals: each a catchable error, nothing signed.
    for (const m of ['signEd25519', 'getPublicKey', 'signTypedData', 'signTransaction']) {
      const o = out.outsider[m];
      check(!o.ok && /is not usable in this run/.test(o.error ?? '') && o.error.includes(p2.pkp_id),
            `${name}: ${m} with a PKP the action may not use is refused: ${JSON.stringify(o)}`);
      const f = out.foreign[m];
      check(!f.ok && /is not usable in this run|is not a key of this account|not found|unknown wallet/i.test(f.error ?? ''),
            `${name}: ${m} with another account's PKP is refused: ${JSON.stringify(f)}`);
    }
    out.badTyped.forEach((r, i) => check(!r.ok && /^signTypedData: /.test(r.error ?? ''),
                                         `${name}: malformed typed data ${i} is refused: ${JSON.stringify(r)}`));
    out.badTx.forEach((r, i) => check(!r.ok && /^signTransaction: /.test(r.error ?? ''),
                                      `${name}: absurd transaction ${i} (${JSON.stringify(badTx[i]).slice(0, 80)}) is refused: ${JSON.stringify(r)}`));
    check(!out.badEd.ok && /^signEd25519: /.test(out.badEd.error ?? ''), `${name}: bad hex message refused: ${JSON.stringify(out.badEd)}`);
    check(!out.badScheme.ok && /^getPublicKey: scheme/.test(out.badScheme.error ?? ''), `${name}: unknown scheme refused`);

    // --- ethers inside the action (SpiderMonkey: ethers needs BigInt) --------------------------
    if (bundled) {
      const signer = new ethers.Wallet(ethers.keccak256(ethers.toUtf8Bytes('ethers action signer')));
      const message = 'sign in to the oracle ✔';
      const p = { amount: '1234.5678', decimals: 18, to: '0x000000000000000000000000000000000000dEaD', message,
                  signature: await signer.signMessage(message), pkpId: p1.pkp_id };
      const r = await call(base, '/run_action', { action_ipfs_cid: bundled.action_ipfs_cid, params: p }, a.api_key);
      check(r.status === 200, `ethers bundle ran: ${r.status} ${r.text.slice(0, 600)}`);
      const got = r.json?.response ?? {};
      const amount = ethers.parseUnits(p.amount, p.decimals);
      const calldata = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)'])
        .encodeFunctionData('transfer', [p.to, amount]);
      check(got.amount === amount.toString(), `ethers.parseUnits in the action: ${got.amount}`);
      check(got.doubled === '2469.1356', `BigInt arithmetic and formatUnits in the action: ${got.doubled}`);
      check(got.calldata === calldata, `Interface.encodeFunctionData in the action: ${got.calldata}`);
      check(got.recovered === signer.address, `verifyMessage in the action: ${got.recovered}`);
      check(got.mine_recovered === p1.pkp_id, `verifyMessage of the PKP's Enact.signMessage: ${got.mine_recovered}`);
    }
  } finally {
    await server.stop();
  }
}

try {
  await engine('spidermonkey');
  await engine('duktape');
} catch (e) {
  fail(e);
} finally {
  rmSync(work, { recursive: true, force: true });
}
finish('runtime.ethers');
