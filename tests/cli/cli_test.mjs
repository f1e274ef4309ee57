// SPDX-License-Identifier: Apache-2.0
// End-to-end checks of the `enact` CLI: outputs against the interop vectors that ethers, viem,
// eth-sig-util, ipfs-only-hash and cron-parser produced, and the exit-code contract
// (0 success, 1 bad input, 2 bad usage) with a message on stderr.
//
//   node tests/cli/cli_test.mjs path/to/enact
import { mkdtempSync, writeFileSync, statSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, hkdfSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryArgs, check, cliRunner, finish, loadEthers, repo } from '../support/node/harness.mjs';

const [enact] = binaryArgs('cli_test.mjs', 'ENACT_BINARY');
const vectorsDir = join(repo, 'tests', 'vectors');
const vectors = (name) => JSON.parse(readFileSync(join(vectorsDir, `${name}.json`), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'enact-cli-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const { run, fails: expectFail } = cliRunner(enact);
function expectOut(args, want, what, input) {
  const r = run(args, input);
  check(r.code === 0 && r.out === want,
        `${what}: enact ${args.join(' ')}\n  want ${want}\n  got  ${r.out} (exit ${r.code}) ${r.err}`);
}
const file = (name, text) => {
  const p = join(work, name);
  writeFileSync(p, text);
  return p;
};

// typed data: digest (ethers and eth-sig-util agree), signature (viem), recovery.
for (const v of vectors('typed_data').vectors.slice(0, 25)) {
  const doc = file(`${v.name}.json`, JSON.stringify(v.document));
  expectOut(['typed-data', 'hash', doc], v.digest_ethers, `typed-data hash ${v.name}`);
  if (v.private_key) {
    const key = file(`${v.name}.key`, v.private_key + '\n');
    expectOut(['typed-data', 'sign', doc, '--key-file', key], v.signature_viem, `typed-data sign ${v.name}`);
    expectOut(['typed-data', 'recover', doc, v.signature_viem], v.signer, `typed-data recover ${v.name}`);
  }
}
// Reading the document from stdin.
{
  const v = vectors('typed_data').vectors[0];
  expectOut(['typed-data', 'hash', '-'], v.digest_ethers, 'typed-data hash from stdin', JSON.stringify(v.document));
}

// keys: address of a private key.
for (const v of vectors('keys').vectors.slice(0, 10)) {
  expectOut(['key', 'address', '--key-file', file(`k${v.index}`, v.private_key)], v.address, `key address ${v.index}`);
}

// ABI calldata (ethers Interface.encodeFunctionData) for calls whose arguments are plain scalars.
const scalar = (t) => /^(u?int\d*|address|bool|bytes\d*|string)$/.test(t);
let abiChecked = 0;
for (const c of vectors('abi').calls) {
  if (!c.types.every(scalar) || c.values.some((x) => typeof x !== 'string')) continue;
  if (c.types.includes('string') && c.values.some((x) => x.startsWith('0x'))) continue;
  expectOut(['abi', 'encode', c.signature, ...c.values], c.calldata, `abi encode ${c.name}`);
  abiChecked++;
}
check(abiChecked >= 5, `at least 5 ABI call vectors exercised (got ${abiChecked})`);
expectOut(['abi', 'decode', 'uint256,string', '0x' + '00'.repeat(31) + '07' + '00'.repeat(31) + '40' +
             '00'.repeat(31) + '02' + '6869' + '00'.repeat(30)],
          '7\nhi', 'abi decode');
expectOut(['abi', 'decode', 'uint256,string', '0x' + '00'.repeat(31) + '07' + '00'.repeat(31) + '40' +
             '00'.repeat(31) + '02' + '6869' + '00'.repeat(30), '--json'],
          '{"values":["7","hi"]}', 'abi decode --json');
expectOut(['abi', 'encode', '(uint256,string)', '7', 'hi'], '0x' + '00'.repeat(31) + '07' + '00'.repeat(31) + '40' +
             '00'.repeat(31) + '02' + '6869' + '00'.repeat(30), 'abi encode of a bare tuple');

// RLP both ways.
for (const v of vectors('rlp').vectors.slice(0, 40)) {
  const r = run(['rlp', 'decode', v.encoded, '--json']);
  check(r.code === 0, `rlp decode ${v.name}: exit ${r.code} ${r.err}`);
  if (r.code === 0) expectOut(['rlp', 'encode', JSON.stringify(JSON.parse(r.out).item)], v.encoded, `rlp round trip ${v.name}`);
}

// CIDs as ipfs add computes them.
for (const v of vectors('cid').vectors) {
  if (v.content !== 'pattern' || v.size > 300000) continue;
  const bytes = Buffer.alloc(v.size);
  for (let i = 0; i < v.size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  const p = join(work, v.name);
  writeFileSync(p, bytes);
  // The pattern is the one tests/vectors/generate.mjs hashes.
  expectOut(['cid', p], v.cid_v0, `cid ${v.name}`);
  expectOut(['cid', '--v1', p], v.cid_v1, `cid --v1 ${v.name}`);
}
expectOut(['cid', file('empty', '')], 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH', 'cid of empty file');

// cron: the next five firings (cron-parser).
for (const v of vectors('cron').vectors.slice(0, 30)) {
  expectOut(['cron', 'next', v.expression, '--after', v.start, '--count', String(v.next.length)],
            v.next.join('\n'), `cron next '${v.expression}'`);
}
// --after takes what JavaScript's toISOString() prints (milliseconds) and numeric offsets: the
// search starts at the whole second, in UTC.
{
  const at = new Date(Date.UTC(2026, 0, 1, 0, 30, 0, 500));
  expectOut(['cron', 'next', '0 * * * *', '--after', at.toISOString(), '--count', '2'],
            '2026-01-01T01:00:00Z\n2026-01-01T02:00:00Z', 'cron next --after toISOString()');
  expectOut(['cron', 'next', '0 * * * *', '--after', '2026-01-01T02:30:00+02:00', '--count', '1'],
            '2026-01-01T01:00:00Z', 'cron next --after with an offset');
  const r = run(['cron', 'next', '0 * * * *', '--after', '2026-01-01 00:30:00']);
  check(r.code !== 0 && /RFC 3339/.test(r.err), `cron next --after without T and zone: ${r.code} ${r.err}`);
}

// Keystore files: what ethers writes is read wherever a key file is taken (the password from the
// environment, never an argument), and what `keystore encrypt` writes ethers reads back.
{
  const ethers = loadEthers();
  const cli = cliRunner(enact);
  for (const v of vectors('keystore').vectors) {
    const ks = file(`ks-${v.id}.json`, v.keystore);
    cli.env = { ...process.env, ENACT_KEYSTORE_PASSWORD: v.password };
    const r = cli.run(['key', 'address', '--key-file', ks]);
    check(r.code === 0 && r.out === v.address, `key address of a ${v.source} ${v.kdf} keystore: ${r.code} ${r.out} ${r.err}`);
    cli.env = { ...process.env, ENACT_KEYSTORE_PASSWORD: v.password + 'x' };
    const wrong = cli.run(['key', 'address', '--key-file', ks]);
    check(wrong.code === 1 && /wrong password/.test(wrong.err), `wrong keystore password: ${wrong.code} ${wrong.err}`);
  }
  const hexKey = file('plain.key', vectors('keys').vectors[1].private_key + '\n');
  const pwFile = file('pw.txt', 'a p\u00e4ssword\n');
  for (const [kdf, extra] of [['scrypt', ['--scrypt-n', '1024']], ['pbkdf2', ['--pbkdf2-c', '2000']]]) {
    const out = join(work, `new-${kdf}.json`);
    cli.env = { ...process.env, ENACT_KEYSTORE_PASSWORD_FILE: pwFile };
    const w = cli.run(['keystore', 'encrypt', '--key-file', hexKey, '--out', out, '--kdf', kdf, ...extra]);
    check(w.code === 0 && w.out === vectors('keys').vectors[1].address, `keystore encrypt --kdf ${kdf}: ${w.code} ${w.out} ${w.err}`);
    check((statSync(out).mode & 0o777) === 0o600, `keystore encrypt writes 0600`);
    const back = ethers.decryptKeystoreJsonSync(readFileSync(out, 'utf8'), 'a p\u00e4ssword');
    check(back.privateKey === vectors('keys').vectors[1].private_key, `ethers reads the ${kdf} keystore enact wrote`);
    const again = cli.run(['keystore', 'encrypt', '--key-file', hexKey, '--out', out]);
    check(again.code === 1 && /exists/.test(again.err), `keystore encrypt never overwrites: ${again.err}`);
  }
  // No password source and no terminal: a clear refusal, not a hang.
  const env = { ...process.env };
  for (const k of ['ENACT_KEYSTORE_PASSWORD', 'ENACT_KEYSTORE_PASSWORD_FILE', 'ETH_PASSWORD']) delete env[k];
  const r = spawnSync(enact, ['key', 'address', '--key-file', join(work, 'new-scrypt.json')],
                      { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  check(r.status === 1 && /ENACT_KEYSTORE_PASSWORD/.test(r.stderr), `keystore without a password: ${r.status} ${r.stderr}`);
}

// Shell completion made from the command table: command words, then a command's flags after "-",
// and nothing (the shell's file names) for other arguments. zsh runs the same function through
// bashcompinit.
{
  for (const shell of ['bash', 'zsh']) {
    const script = run(['completion', shell]);
    check(script.code === 0 && script.out.includes('complete -o default'), `completion ${shell}: ${script.err}`);
    const path = file(`completion.${shell}`, script.out + '\n');
    const complete = (...words) => {
      const quoted = words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
      // zsh's bashcompinit runs the function under `emulate sh` (0-based arrays, word splitting).
      const call = `COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _enact; echo "\${COMPREPLY[*]}"`;
      const body = `source ${path}; ` + (shell === 'zsh' ? `emulate sh -c '${call.replace(/'/g, `'\\''`)}'` : call);
      const r = spawnSync(shell, ['-c', body], { encoding: 'utf8' });
      check(r.status === 0, `${shell} completion of '${words.join(' ')}' ran: ${r.status} ${r.stderr}`);
      return (r.stdout ?? '').trim().split(/\s+/).filter(Boolean).sort().join(' ');
    };
    const want = (got, expected, what) => check(got === expected, `${shell} completion ${what}: got '${got}', want '${expected}'`);
    want(complete('enact', 'typed-data', ''), 'hash recover sign', 'of a command group');
    // bash filters by the typed prefix; zsh's completion system does that after the function.
    if (shell === 'bash') want(complete('enact', 'keys'), 'keystore', 'of a command word prefix');
    want(complete('enact', 'cron', 'next', '0 * * * *', '--'), '--after --count --help --json', "of a command's flags");
    want(complete('enact', 'cid', ''), '', 'of a file argument (left to the shell)');
    check(complete('enact', '').split(' ').includes('typed-data'), `${shell} completion of the first word`);
  }
  expectFail(['completion', 'fish'], 2, /usage: enact completion bash\|zsh/, 'completion of an unknown shell');
}

// Envelope round trip, and each validation rule refusing with its own message.
{
  const key = file('owner.key', vectors('keys').vectors[0].private_key);
  const owner = vectors('keys').vectors[0].address;
  const registry = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
  const at = ['--now', '1800000100'];
  const r = run(['envelope', 'new', '--type', 'AddUsageApiKey', '--chain-id', '8453', '--contract', registry,
                 '--key-file', key, '--issued-at', '1800000000']);
  check(r.code === 0, `envelope new: exit ${r.code} ${r.err}`);
  const made = JSON.parse(r.out);
  check(made.typed_data.domain.version === '2' && made.typed_data.domain.verifyingContract === registry &&
        /^0x[0-9a-f]{64}$/.test(made.typed_data.message.nonce), `envelope new signs version 2 (${r.out})`);
  const env = file('env.json', r.out);
  const v2 = ['--type', 'AddUsageApiKey', '--chain-id', '8453', '--contract', registry, ...at];
  expectOut(['envelope', 'verify', env, ...v2], owner, 'envelope verify');
  expectOut(['envelope', 'verify', env, ...v2, '--signer', owner.toLowerCase()], owner,
            'envelope verify with expected signer');
  expectFail(['envelope', 'verify', env, '--type', 'CreateWallet', '--chain-id', '8453', '--contract', registry, ...at],
             1, /primaryType/, 'envelope for another flow');
  expectFail(['envelope', 'verify', env, '--type', 'AddUsageApiKey', '--chain-id', '1', '--contract', registry, ...at],
             1, /chainId/, 'envelope for another chain');
  expectFail(['envelope', 'verify', env, '--type', 'AddUsageApiKey', '--chain-id', '8453', '--contract',
              vectors('keys').vectors[1].address, ...at], 1, /verifyingContract/, 'envelope for another registry');
  expectFail(['envelope', 'verify', env, '--type', 'AddUsageApiKey', '--chain-id', '8453', ...at], 1, /--contract/,
             'a version 2 envelope checked without a registry');
  expectFail(['envelope', 'verify', env, '--type', 'AddUsageApiKey', '--chain-id', '8453', '--contract', registry,
              '--now', '1800000301'], 1, /issuedAt/, 'stale envelope');
  const parsed = JSON.parse(r.out);
  parsed.typed_data.message.address = vectors('keys').vectors[1].address;
  expectFail(['envelope', 'verify', file('forged.json', JSON.stringify(parsed)), ...v2], 1, /signature|signer/,
             'envelope with another address');

  // What viem signed for each version 2 vector, given the same members.
  const v2vectors = vectors('typed_data').vectors.filter((v) => v.name.startsWith('envelope2-'));
  check(v2vectors.length === 5, `five version 2 envelope vectors (got ${v2vectors.length})`);
  for (const v of v2vectors) {
    const d = v.document;
    const m = d.message;
    const args = ['envelope', 'new', '--type', d.primaryType, '--chain-id', String(d.domain.chainId), '--contract',
                  d.domain.verifyingContract, '--issued-at', String(m.issuedAt),
                  '--key-file', file(`${v.name}.key`, v.private_key)];
    if (m.nonce) args.push('--nonce', m.nonce);
    if (m.account) args.push('--account', m.account);
    if (m.method) {
      args.push('--method', m.method, '--path', m.path);
      if (m.method === 'POST') args.push('--body-file', file(`${v.name}.body`, '{"amount_cents":500}'));
    }
    const out = run(args);
    let got = null;
    try {
      got = JSON.parse(out.out);
    } catch {}
    check(out.code === 0 && got?.signature === v.signature_viem &&
          JSON.stringify(got?.typed_data.message) === JSON.stringify(m) &&
          JSON.stringify(got?.typed_data.domain) === JSON.stringify(d.domain),
          `envelope new ${v.name}: ${out.code} ${out.out} ${out.err}`);
    const verify = ['envelope', 'verify', file(`${v.name}.json`, out.out), '--type', d.primaryType, '--chain-id',
                    String(d.domain.chainId), '--contract', d.domain.verifyingContract, '--now', String(m.issuedAt)];
    if (m.account) {
      expectOut([...verify, '--account', m.account], v.signer, `envelope verify ${v.name}`);
      expectFail([...verify, '--account', '0x' + '00'.repeat(32)], 1, /account/, `${v.name} for another account`);
    } else if (m.method === 'GET') {
      expectOut([...verify, '--method', 'GET', '--path', m.path], v.signer, `envelope verify ${v.name}`);
      expectFail([...verify, '--method', 'GET', '--path', m.path.replace('20', '21')], 1, /not this request/,
                 `${v.name} for another target`);
      expectFail([...verify, '--method', 'POST', '--path', m.path], 1, /not this request/, `${v.name} for another method`);
    } else if (m.method === 'POST') {
      expectOut([...verify, '--method', 'POST', '--path', m.path, '--body-file', file('body.json', '{"amount_cents":500}')],
                v.signer, `envelope verify ${v.name}`);
      expectFail([...verify, '--method', 'POST', '--path', m.path, '--body-file', file('body2.json', '{"amount_cents":501}')],
                 1, /another body/, `${v.name} for another body`);
    } else {
      expectOut(verify, v.signer, `envelope verify ${v.name}`);
    }
  }

  // --count: one envelope per line, each with its own nonce (pre-signed envelopes to replay).
  const many = run(['envelope', 'new', '--type', 'CreateWallet', '--chain-id', '8453', '--contract', registry,
                    '--key-file', key, '--count', '3']);
  const lines = many.out.split('\n').map((l) => JSON.parse(l));
  check(many.code === 0 && lines.length === 3 && new Set(lines.map((e) => e.typed_data.message.nonce)).size === 3,
        `envelope new --count 3: ${many.code} ${many.out} ${many.err}`);

  // Version 1, the specification's form: accepted for the minting flows, refused (by default, as
  // the server does) for ConvertAccount and BillingAuth.
  const old = run(['envelope', 'new', '--version', '1', '--type', 'BillingAuth', '--chain-id', '8453', '--key-file', key]);
  const oldEnv = JSON.parse(old.out);
  check(old.code === 0 && oldEnv.typed_data.domain.version === '1' && !('nonce' in oldEnv.typed_data.message),
        `envelope new --version 1: ${old.out} ${old.err}`);
  expectFail(['envelope', 'verify', file('v1.json', old.out), '--type', 'BillingAuth', '--chain-id', '8453'], 1,
             /version 1/, 'a version 1 BillingAuth');
  expectOut(['envelope', 'verify', file('v1.json', old.out), '--type', 'BillingAuth', '--chain-id', '8453',
             '--accept-v1'], owner, 'a version 1 BillingAuth with --accept-v1');

  // Usage: what a version or kind does not carry is refused, not ignored.
  const base = ['envelope', 'new', '--chain-id', '8453', '--key-file', key];
  expectFail([...base, '--type', 'ConvertAccount', '--contract', registry], 2, /--account/, 'ConvertAccount without --account');
  expectFail([...base, '--type', 'CreateWallet'], 2, /--contract/, 'version 2 without --contract');
  expectFail([...base, '--type', 'CreateWallet', '--contract', registry, '--account', '0x' + '11'.repeat(32)], 2,
             /only a ConvertAccount/, '--account for another kind');
  expectFail([...base, '--type', 'BillingAuth', '--contract', registry, '--path', '/x'], 2, /--method/,
             'BillingAuth without --method');
  expectFail([...base, '--type', 'CreateWallet', '--contract', registry, '--method', 'GET'], 2, /only a BillingAuth/,
             '--method for another kind');
  expectFail([...base, '--type', 'CreateWallet', '--version', '1', '--contract', registry], 2, /version 2 member/,
             '--contract with --version 1');
  expectFail([...base, '--type', 'CreateWallet', '--contract', registry, '--nonce', '0x' + '11'.repeat(32), '--count', '2'],
             2, /--nonce with --count/, '--nonce with --count');
  expectFail([...base, '--type', 'CreateWallet', '--version', '3'], 2, /--version/, '--version 3');
}

// PKP derivation is deterministic and the key file written by `key new` is private.
{
  const ethers = loadEthers();
  const root = join(work, 'root.key');
  const r = run(['key', 'new', '--out', root]);
  check(r.code === 0 && /^0x[0-9a-fA-F]{40}$/.test(r.out), `key new --out: ${r.out} ${r.err}`);
  check((statSync(root).mode & 0o777) === 0o600, 'key file mode 0600');
  expectFail(['key', 'new', '--out', root], 1, /exists/, 'key new refuses to overwrite');
  const path = '0x' + '00'.repeat(31) + '01';
  const account = '0x' + '11'.repeat(32);
  const other = '0x' + '22'.repeat(32);
  const a = run(['pkp', 'derive', '--root-key-file', root, '--account', account, '--path', path]);
  const b = run(['pkp', 'derive', '--root-key-file', root, '--account', account, '--path', path]);
  const c = run(['pkp', 'derive', '--root-key-file', root, '--account', account, '--path', '0x' + '00'.repeat(31) + '02']);
  const d = run(['pkp', 'derive', '--root-key-file', root, '--account', other, '--path', path]);
  check(a.code === 0 && a.out === b.out && a.out !== c.out && /^0x[0-9a-fA-F]{40}\n[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(a.out),
        `pkp derive deterministic and path-dependent: ${a.out} ${b.out} ${c.out}`);
  // The second line is the Solana address: base58 of the Ed25519 public key whose RFC 8032 seed is
  // HKDF-SHA256(root, "enact/pkp/v2", "ed25519" ‖ account ‖ path) (docs/protocol.md §1), by node's crypto.
  const seed = hkdfSync('sha256', ethers.getBytes('0x' + readFileSync(root, 'utf8').trim().replace(/^0x/, '')),
                        ethers.toUtf8Bytes('enact/pkp/v2'),
                        ethers.getBytes(ethers.concat([ethers.toUtf8Bytes('ed25519'), account, path])), 32);
  const edKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'),
                                                        Buffer.from(seed)]), format: 'der', type: 'pkcs8' });
  const edPublic = createPublicKey(edKey).export({ format: 'der', type: 'spki' }).subarray(12);
  check(a.out.split('\n')[1] === ethers.encodeBase58(edPublic),
        `pkp derive: the Solana address is base58 of the Ed25519 key: ${a.out}`);
  check(d.code === 0 && d.out !== a.out, `pkp derive: the same path under another account is another key: ${a.out} ${d.out}`);
  expectFail(['pkp', 'derive', '--root-key-file', root, '--path', path], 2, /account/, 'pkp derive requires --account');
  check(!a.out.toLowerCase().includes(readFileSync(root, 'utf8').trim().slice(2)), 'pkp derive never prints the root key');
}

// Output forms (docs/cli.md): readable text by default, never a JSON document; with --json one JSON
// object on one line. Errors stay on stderr in both forms.
{
  const keyVec = vectors('keys').vectors[0];
  const keyPath = file('forms.key', keyVec.private_key);
  const td = file('forms.json', JSON.stringify(vectors('typed_data').vectors[0].document));
  const forms = [
    [['typed-data', 'hash', td], 'digest'],
    [['key', 'address', '--key-file', keyPath], 'address'],
    [['cron', 'next', '0 * * * *', '--after', '2026-01-01T00:00:00Z', '--count', '2'], 'next'],
    [['abi', 'decode', 'uint256', '0x' + '00'.repeat(31) + '07'], 'values'],
    [['rlp', 'decode', '0xc683646f67c101'], 'item'],
    [['cid', td], 'cid'],
  ];
  for (const [args, field] of forms) {
    const text = run(args);
    check(text.code === 0 && text.out !== '' && !/^[{[]/.test(text.out), `${args[0]} text form is readable: '${text.out}'`);
    const json = run([...args, '--json']);
    let v = null;
    try { v = JSON.parse(json.out); } catch {}
    check(json.code === 0 && !json.out.includes('\n') && v !== null && typeof v === 'object' && !Array.isArray(v) &&
          field in v, `${args[0]} --json prints one object with "${field}": '${json.out}'`);
  }
  check(run(['key', 'address', '--key-file', keyPath, '--json']).out === JSON.stringify({ address: keyVec.address }),
        'key address --json');
  check(run(['--json', 'key', 'address', '--key-file', keyPath]).out === JSON.stringify({ address: keyVec.address }),
        '--json before the command');
  // A usage error with --json: exit 2, the same one line and usage on stderr, nothing on stdout.
  const plain = run(['cron', 'next', '--count', '2']);
  const json = run(['cron', 'next', '--count', '2', '--json']);
  check(json.code === 2 && json.out === '' && json.err === plain.err && /missing EXPR/.test(json.err),
        `usage error with --json stays on stderr: exit ${json.code} '${json.out}' '${json.err}'`);
  expectFail(['cron', 'next', '* * * * *', '--json=yes'], 2, /--json takes no value/, '--json with a value');
  expectFail(['key', 'address', '--key-file', file('bad.key', 'zz'), '--json'], 1, /hex/, 'input error with --json');
  // A new key printed without --out: printed once, alone in the text form, under private_key with --json.
  const k = run(['key', 'new']);
  check(k.code === 0 && /^0x[0-9a-f]{64}$/.test(k.out), `key new prints the key alone: ${k.out}`);
  const kj = run(['key', 'new', '--json']);
  check(kj.code === 0 && /^\{"private_key":"0x[0-9a-f]{64}"\}$/.test(kj.out), `key new --json: ${kj.out}`);
}

// Usage errors exit 2, input errors exit 1, and say what was wrong.
expectFail([], 2, /usage/, 'no command');
expectFail(['frobnicate'], 2, /frobnicate/, 'unknown command');
expectFail(['cron', 'next'], 2, /EXPR/, 'missing argument');
expectFail(['cron', 'next', '* * * * *', '--bogus', '1'], 2, /bogus/, 'unknown option');
expectFail(['cron', 'next', '* * * * *', '--after', 'yesterday'], 2, /--after/, 'bad --after');
expectFail(['cron', 'next', '61 * * * *'], 1, /minute|61/, 'cron field out of range');
expectFail(['abi', 'encode', 'f(uint8)', '256'], 1, /argument 1/, 'uint8 overflow');
expectFail(['abi', 'encode', 'f(uint8)'], 2, /takes 1 arguments/, 'wrong argument count');
expectFail(['rlp', 'decode', '0x8100'], 1, /./, 'non-canonical RLP');
expectFail(['typed-data', 'hash', join(work, 'missing.json')], 1, /cannot open/, 'missing file');
expectFail(['typed-data', 'hash', file('bad.json', '{"types":')], 1, /./, 'malformed typed data');
expectFail(['key', 'address', '--key-file', file('short.key', '0x1234')], 1, /32-byte/, 'short key');
expectFail(['key', 'address', '--key-file', file('zero.key', '0x' + '00'.repeat(32))], 1, /not a valid/, 'zero key');
{
  const r = run(['cron', 'next', '--help']);
  check(r.code === 0 && /usage: enact cron next/.test(r.out), `cron next --help: ${r.out}`);
}
expectFail(['cron', 'next', '* * * * *', '--count'], 2, /--count needs a value/, 'option without its value');
expectFail(['cid', '--v1=yes', file('cid-flag.txt', 'x')], 2, /--v1 takes no value/, 'switch given a value');
expectFail(['cron', 'next', '* * * * *', '--bogus=1'], 2, /unknown option --bogus$/m, 'unknown option=value');
{
  // An option given twice: the last value counts; a value that looks like a negative number or
  // stdin's "-" is a value.
  const twice = run(['cron', 'next', '0 0 * * *', '--count', '5', '--count=1', '--after', '2026-01-01T00:00:00Z']);
  check(twice.code === 0 && twice.out.trim().split('\n').length === 1, `--count twice: ${twice.out} ${twice.err}`);
  const stdin = run(['cid', '-'], 'hello');
  check(stdin.code === 0 && /^Qm/.test(stdin.out), `cid - (stdin): ${stdin.out} ${stdin.err}`);
}
{
  // --version prints the project version (CMakeLists.txt project()); --help lists the options.
  const version = run(['--version']);
  const project = readFileSync(join(repo, 'CMakeLists.txt'), 'utf8').match(/project\(enact VERSION ([0-9.]+)/)[1];
  check(version.code === 0 && version.out === `enact ${project}`, `--version: ${version.out} ${version.err}`);
  const help = run(['--help']);
  check(help.code === 0 && /--version/.test(help.out) && /cron next/.test(help.out), `--help: ${help.out}`);
}

// `enact core …`: API keys never come from argv; failures name the API error code.
expectFail(['core', 'new-account', '--key', 'x'], 2, /ENACT_API_KEY.*--key-file/, 'core refuses --key on the command line');
expectFail(['core', 'account', '--key=x'], 2, /ENACT_API_KEY.*--key-file/, 'core refuses --key=VALUE');
expectFail(['core', 'keys', 'remove', '--usage-key', 'x'], 2, /--usage-key-file/, 'core refuses --usage-key');
expectFail(['core', 'account', '--url', 'http://127.0.0.1:1'], 1, /^enact core account: connection_failed: /,
           'core account against an unreachable server');
expectFail(['core', 'account', '--url', 'ftp://127.0.0.1'], 2, /--url/, 'core account with a bad --url');

// `enact core …` against a stand-in for the core service: the request it sends, the line it prints.
{
  const { createServer } = await import('node:http');
  const { execFile } = await import('node:child_process');
  const issuedKey = 'QUNDT1VOVC1LRVktMDAwMDAwMDAwMDAwMDAwMDAwMDA=';
  const seen = [];
  const answers = {
    'POST /core/v1/new_account': [200, { api_key: issuedKey, wallet_address: '0x' + '11'.repeat(20),
                                         api_key_hash: '0x' + 'aa'.repeat(32) }],
    'GET /core/v1/account': [200, { api_key_hash: '0x' + 'aa'.repeat(32), admin_wallet_address: '0x' + '11'.repeat(20),
                                    managed: true, name: 'acme', description: '',
                                    key: { kind: 'account', hash: '0x' + 'aa'.repeat(32) } }],
    'GET /core/v1/get_node_chain_config': [200, { chain_id: 8453, contract_address: '0x' + 'cc'.repeat(20),
                                                  chain_name: 'base' }],
    'GET /core/v1/list_groups': [403, { error: { code: 'forbidden', message: 'missing scope group:create' } }],
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, key: req.headers['x-api-key'], body });
      const [status, answer] = answers[`${req.method} ${req.url.split('?')[0]}`] ??
        [404, { error: { code: 'not_found', message: 'no route' } }];
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'r1' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  const runAsync = (args, env = {}, json = true) => new Promise((resolve) => {
    execFile(enact, [...args, '--url', url, ...(json ? ['--json'] : [])], { env: { ...process.env, ENACT_API_KEY: '', ...env } },
             (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout.trim(), err: stderr.trim() }));
  });

  let r = await runAsync(['core', 'chain-config']);
  {
    const cfg = r.code === 0 && !r.out.includes('\n') ? JSON.parse(r.out) : {};
    check(cfg.chain_id === 8453 && cfg.chain_name === 'base' &&
          cfg.contract_address?.toLowerCase() === '0x' + 'cc'.repeat(20),
          `core chain-config prints one JSON line: exit ${r.code} ${r.out} ${r.err}`);
  }

  const keyFile = join(work, 'account.key');
  r = await runAsync(['core', 'new-account', '--name', 'acme', '--key-out', keyFile]);
  check(r.code === 0 && !r.out.includes(issuedKey) && JSON.parse(r.out).key_file === keyFile,
        `core new-account --key-out prints no key: ${r.out} ${r.err}`);
  check(readFileSync(keyFile, 'utf8').trim() === issuedKey && (statSync(keyFile).mode & 0o777) === 0o600,
        'core new-account --key-out writes the key 0600');
  check(JSON.parse(seen.at(-1).body).name === 'acme' && seen.at(-1).key === undefined,
        `core new-account sends {"name"} and no key: ${JSON.stringify(seen.at(-1))}`);
  const before = seen.length;
  r = await runAsync(['core', 'new-account', '--name', 'acme', '--key-out', keyFile]);
  check(r.code === 1 && /exists/.test(r.err) && seen.length === before,
        `core new-account --key-out to an existing file fails before asking the service: ${r.err}`);
  r = await runAsync(['core', 'new-account', '--name', 'acme']);
  check(r.code === 0 && JSON.parse(r.out).api_key === issuedKey, `core new-account prints the key once: ${r.out}`);
  // The text form: aligned `key: value` lines, the key once.
  r = await runAsync(['core', 'new-account', '--name', 'acme'], {}, false);
  check(r.code === 0 && r.out.split(issuedKey).length === 2 && new RegExp(`^api_key: +${issuedKey}$`, 'm').test(r.out) &&
        /^wallet_address: 0x/m.test(r.out) && !r.out.startsWith('{'), `core new-account text prints the key once: ${r.out}`);
  r = await runAsync(['core', 'chain-config'], {}, false);
  check(r.code === 0 && /^chain_id: +8453$/m.test(r.out) && /^chain_name: +base$/m.test(r.out) &&
        r.out.split('\n').length === 3 && !r.out.startsWith('{'), `core chain-config text: ${r.out}`);
  // Columns aligned: every value starts where the longest key's value does.
  check(new Set(r.out.split('\n').map((l) => l.search(/(?<=: +)\S/))).size === 1, `core chain-config aligned: ${r.out}`);
  r = await runAsync(['core', 'groups', 'add', '--bogus'], {}, true);
  check(r.code === 2 && r.out === '' && /unknown option --bogus/.test(r.err), `core usage error with --json: ${r.code} ${r.err}`);

  r = await runAsync(['core', 'account', '--key-file', keyFile]);
  check(r.code === 0 && JSON.parse(r.out).name === 'acme' && seen.at(-1).key === issuedKey,
        `core account sends the key from --key-file: ${r.out} ${r.err}`);
  r = await runAsync(['core', 'account'], { ENACT_API_KEY: issuedKey });
  check(r.code === 0 && seen.at(-1).key === issuedKey, `core account sends the key from ENACT_API_KEY: ${r.err}`);

  r = await runAsync(['core', 'groups', 'list'], { ENACT_API_KEY: issuedKey });
  check(r.code === 1 && r.out === '' && r.err === 'enact core groups list: forbidden: missing scope group:create' &&
        !r.err.includes(issuedKey), `core groups list names the error code: exit ${r.code} ${r.err}`);
  server.close();
}

finish('cli');
