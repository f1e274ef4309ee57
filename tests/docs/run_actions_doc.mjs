// SPDX-License-Identifier: Apache-2.0
// docs/actions.md run as written: every ```js block preceded by `<!-- run: NAME -->` is uploaded
// as an action to a fresh `enact-server --dev` (SpiderMonkey, the default engine) and run with
// the params its page describes; its answer is checked with ethers and node's Ed25519:
//   intro    the payout signature recovers to the PKP over keccak256 of the message;
//   lit      the ported Lit action signs params.toSign when the forecast is warm, nothing when cold;
//   oracle   the price scaled with BigInt, the EIP-712 attestation recovered by verifyTypedData;
//   solana   the Ed25519 signature verifies with the Solana address's key; its base58 is ethers';
//   refused  a fetch of the cloud metadata address is a catchable "fetch: " error;
//   api      decrypt, signMessage, signTransaction (decoded by ethers) and a refused PKP.
// The forecast and the price feed are an HTTP server on 127.0.0.1, reached under
// --fetch-allow-loopback; nothing else is ever connected to.
//
//   node tests/docs/run_actions_doc.mjs path/to/enact-server docs/actions.md
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryArgs, check, devServerArgs, fail, finish, loadEthers, startEnactServer } from '../support/node/harness.mjs';

const [serverBinary, page] = binaryArgs('run_actions_doc.mjs', 'ENACT_SERVER', 'ACTIONS_MD');
const ethers = loadEthers();
const kExpected = ['intro', 'lit', 'oracle', 'solana', 'refused', 'api'];

// --- the page's runnable blocks -------------------------------------------------------------------
const blocks = new Map();
for (const m of readFileSync(page, 'utf8').matchAll(/<!-- run: (\w+) -->\n```js\n([\s\S]*?)\n```/g))
  blocks.set(m[1], m[2] + '\n');
check(JSON.stringify([...blocks.keys()]) === JSON.stringify(kExpected),
      `docs/actions.md marks the runnable examples ${kExpected}: found ${[...blocks.keys()]}`);

// --- the loopback feed ----------------------------------------------------------------------------
const seen = [];
const feed = createServer((req, res) => {
  seen.push(req.url);
  const answers = {
    '/eth-usd': { symbol: 'ETH', price: '3012.55' },
    '/forecast/warm': { properties: { periods: [{ temperature: 72 }] } },
    '/forecast/cold': { properties: { periods: [{ temperature: 41 }] } },
  };
  const body = answers[req.url];
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? { error: 'not found' }));
});
await new Promise((r) => feed.listen(0, '127.0.0.1', r));
const feedBase = `http://127.0.0.1:${feed.address().port}`;

// --- helpers --------------------------------------------------------------------------------------
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
const ed25519Key = (raw) => createPublicKey({
  key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(ethers.getBytes(raw))]), format: 'der', type: 'spki',
});
const bytesOf = (message) => (message.startsWith('0x') ? Buffer.from(ethers.getBytes(message)) : Buffer.from(message, 'utf8'));

const work = mkdtempSync(join(tmpdir(), 'enact-actions-doc-'));
const server = await startEnactServer(serverBinary, devServerArgs(work, '--no-triggers', '--sandbox-workers', '2',
                                                                  '--fetch-allow-loopback', 'true'));
try {
  const base = server.url;
  const a = await ok(base, '/new_account', { name: 'docs' });
  const intent = await ok(base, '/billing/create_payment_intent', { amount_cents: 1000 }, a.api_key);
  await ok(base, '/billing/confirm_payment', { payment_intent_id: intent.payment_intent_id }, a.api_key);
  const pkp = (await ok(base, '/create_wallet', { name: 'docs' }, a.api_key)).pkp_id;
  const cids = {};
  for (const [name, code] of blocks)
    cids[name] = await ok(base, '/upload_action', { code }, a.api_key);
  await ok(base, '/add_group', { name: 'docs', pkp_ids_permitted: [pkp],
                                 cid_hashes_permitted: Object.values(cids).map((c) => c.hashed_cid) }, a.api_key);
  const run = async (name, params) => {
    const r = await call(base, '/run_action', { action_ipfs_cid: cids[name].action_ipfs_cid, params }, a.api_key);
    check(r.status === 200, `${name} runs: ${r.status} ${r.text.slice(0, 600)}`);
    return r.json ?? {};
  };
  const recovers = (sig, digest) => sig && ethers.recoverAddress(digest, sig.signature) === pkp && sig.digest === digest;

  if (blocks.has('intro')) {
    const r = await run('intro', { pkp, to: '0xbob', amount: '5' });
    const message = 'pay 5 USDC to 0xbob';
    check(r.response?.message === message && r.response?.r === r.signatures?.payout?.r,
          `intro: the response: ${JSON.stringify(r.response)}`);
    check(recovers(r.signatures?.payout, ethers.keccak256(ethers.toUtf8Bytes(message))),
          `intro: signatures.payout recovers to the PKP: ${JSON.stringify(r.signatures)}`);
    check((r.logs ?? '').includes(`signed with ${pkp}`), `intro: the log names the PKP: ${r.logs}`);
  }

  if (blocks.has('lit')) {
    const toSign = ethers.keccak256(ethers.toUtf8Bytes('weather attestation'));
    const warm = await run('lit', { url: `${feedBase}/forecast/warm`, toSign, pkp, sigName: 'sig1' });
    check(recovers(warm.signatures?.sig1, toSign), `lit: warm, toSign signed by the PKP: ${JSON.stringify(warm.signatures)}`);
    check(JSON.stringify(warm.response) === JSON.stringify({ response: '{"temp":72}' }),
          `lit: warm, the response: ${JSON.stringify(warm.response)}`);
    const cold = await run('lit', { url: `${feedBase}/forecast/cold`, toSign, pkp, sigName: 'sig1' });
    check(Object.keys(cold.signatures ?? {}).length === 0 && cold.response === null,
          `lit: cold, nothing signed and no response: ${JSON.stringify(cold)}`);
  }

  if (blocks.has('oracle')) {
    const before = Math.floor(Date.now() / 1000);
    const r = await run('oracle', { pkp, feed: `${feedBase}/eth-usd` });
    const out = r.response ?? {};
    check(out.pair === 'ETH/USD' && out.price === '3012550000000000000000' && out.signer === pkp &&
          out.at >= before - 1 && out.at <= Math.floor(Date.now() / 1000) + 1,
          `oracle: the attested price: ${JSON.stringify(out)}`);
    const domain = { name: 'Enact price oracle', version: '1', chainId: 8453, verifyingContract: '0x000000000000000000000000000000000000dEaD' };
    const types = { Attestation: [{ name: 'pair', type: 'string' }, { name: 'price', type: 'uint256' }, { name: 'at', type: 'uint64' }] };
    const message = { pair: out.pair, price: out.price, at: out.at };
    let recovered = null;
    try { recovered = ethers.verifyTypedData(domain, types, message, out.signature); } catch (e) { fail(e, 'oracle: verifyTypedData'); }
    check(recovered === pkp && out.digest === ethers.TypedDataEncoder.hash(domain, types, message),
          `oracle: ethers recovers the PKP from the attestation: ${recovered}`);
    check(r.signatures?.attestation?.signature === out.signature, 'oracle: the attestation is signatures.attestation');
    check(seen.includes('/eth-usd'), `oracle: the feed was asked: ${seen}`);
  }

  if (blocks.has('refused')) {
    const asked = seen.length;
    const r = await run('refused', {});
    check(/^fetch: /.test(r.response?.refused ?? ''), `refused: a catchable fetch error: ${JSON.stringify(r.response)}`);
    check(seen.length === asked, 'refused: the feed saw no request');
  }

  if (blocks.has('solana')) {
    for (const message of ['gm from enact', '0x0100' + '5a'.repeat(62)]) {
      const out = (await run('solana', { pkp, message })).response ?? {};
      // The Solana address is the base58 of the 32-byte public key the signature verifies with.
      let verified = false;
      try {
        const publicKey = ethers.toBeHex(ethers.decodeBase58(out.address), 32);
        verified = verifySignature(null, bytesOf(message), ed25519Key(publicKey), Buffer.from(ethers.getBytes(out.signature)));
      } catch (e) { fail(e, 'solana: verifying'); }
      check(verified, `solana: the signature of ${message} verifies with node's Ed25519: ${JSON.stringify(out)}`);
      check(typeof out.signature === 'string' && out.signatureBase58 === ethers.encodeBase58(out.signature),
            `solana: the base58 signature equals ethers.encodeBase58: ${out.signatureBase58}`);
    }
  }

  if (blocks.has('api')) {
    const r = await run('api', { pkp });
    const out = r.response ?? {};
    check(out.opened === 'secret note', `api: decrypt opens what encrypt sealed: ${out.opened}`);
    check(ethers.verifyMessage('hello', out.personal ?? '0x') === pkp, 'api: signMessage recovers to the PKP');
    check(out.digest === ethers.sha256('0x' + '00'.repeat(32)), `api: sha256 of 32 zero bytes: ${out.digest}`);
    let tx = null;
    try { tx = ethers.Transaction.from(out.raw); } catch (e) { fail(e, 'api: parsing the transaction'); }
    check(tx && tx.type === 2 && tx.from === pkp && tx.chainId === 8453n && tx.value === 10n ** 15n &&
          tx.to === '0x000000000000000000000000000000000000dEaD', `api: the transaction decodes and recovers: ${out.raw}`);
    check(/is not usable in this run/.test(out.refusal ?? ''), `api: another PKP is refused: ${out.refusal}`);
  }
} catch (e) {
  fail(e);
} finally {
  await server.stop();
  feed.close();
  rmSync(work, { recursive: true, force: true });
}
finish('docs.actions');
