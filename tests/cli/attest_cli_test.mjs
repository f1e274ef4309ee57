// SPDX-License-Identifier: Apache-2.0
// ctest cli.attest: `enact attest verify` against an `enact-server --dev` it starts (simulated TEE:
// the recorded real TDX quote of server/tee/fixtures and the development evidence set), checking
// every check's outcome against what that backend must give, and the usage-error contract. With
// the pinned anvil installed (npm ci --prefix tests/anvil), also the governance check end to end:
// tests/attest/Governance.sol's code put at the recorded app_id's address and its compose hash
// allowed, then not.
//
// usage: node attest_cli_test.mjs <enact binary> <enact-server binary>
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  binaryArgs, check, cliRunner, devServerArgs, finish, jsonRpc, loadEthers, repo, startEnactServer,
} from '../support/node/harness.mjs';

const [enact, serverBinary] = binaryArgs('attest_cli_test.mjs', '<enact>', '<enact-server>');
const work = mkdtempSync(join(tmpdir(), 'enact-attest-cli-'));
const { run } = cliRunner(enact, { cwd: work, timeout: 120000 });
/// `enact attest verify … --json`, which must exit `code` and print one JSON object.
function verify(args, code, what) {
  const r = run(['attest', 'verify', ...args, '--json']);
  let v = null;
  try {
    v = JSON.parse(r.out);
  } catch {}
  check(r.code === code && v !== null && !r.out.includes('\n'),
        `${what}: exit ${r.code} (want ${code}), stdout '${r.out.slice(0, 300)}', stderr '${r.err}'`);
  return v ?? {};
}
/// name → passed, for one report's checks.
function outcomes(report) {
  return Object.fromEntries((report?.checks ?? []).map((c) => [c.name, c.passed]));
}
function expectChecks(report, want, what) {
  const got = outcomes(report);
  check(JSON.stringify(Object.keys(got)) === JSON.stringify(Object.keys(want)),
        `${what}: checks made ${JSON.stringify(Object.keys(got))}, want ${JSON.stringify(Object.keys(want))}`);
  for (const [name, passed] of Object.entries(want))
    check(got[name] === passed, `${what}.${name}: passed=${got[name]}, want ${passed}`);
}

// The recorded quote's PCK leaf is valid 2024-08-02 to 2031-08-02; verify at a fixed time inside
// it (2025-01-01T00:00:00Z) so the outcome does not depend on the day the test runs.
const kAt = '1735689600';
// What server/tee/fixtures/README.md states about the recording.
const kAppId = '06768e6df639ce3be65e9e5321f8b2d82dbffb01';
const kComposeHash = '06768e6df639ce3be65e9e5321f8b2d82dbffb01c74323462d34c2feb9653aff';

// Check 1 on the recorded quote: genuine hardware (signature, QE report, PCK chain to Intel's root
// at kAt, production TD), and the event log replays to its RTMRs. No collateral: no TCB checks.
const kQuoteChecks = {
  quote_signature: true, qe_report_signature: true, qe_report_data: true, pck_chain: true, debug_disabled: true,
  event_log_digests: true, rtmr0: true, rtmr1: true, rtmr2: true, rtmr3: true,
};
// The evidence quote.json carries the same recorded quote, verified without an event log.
const kEvidenceQuoteChecks = {
  quote_signature: true, qe_report_signature: true, qe_report_data: true, pck_chain: true, debug_disabled: true,
};
// Check 2: app_compose hashes to compose_hash, which the measured log holds, as it holds app_id;
// the compose file's quay.io/jupyter/base-notebook is not pinned by digest, so images_pinned fails.
const kAppChecks = { compose_hash: true, compose_hash_event: true, app_id_event: true, images_pinned: false };
// Check 3: the development evidence set's quote.json holds the recorded quote, whose report_data
// is all zero, not SHA-256(sha256sum.txt) — the simulation cannot bind its certificate, and says
// so; the listed files hash as listed. certificate (plain http) and the CAA checks (no public
// domain) are skipped.
const kNetworkChecks = { report_data: false, file_hashes: true };

const server = await startEnactServer(serverBinary, devServerArgs(join(work, 'data'), '--no-triggers'));
let anvil = null;
try {
  // 1. Every check with its outcome (no --rpc-url: governance skipped).
  const r = verify(['--url', server.url, '--at', kAt], 1, 'verify against enact-server --dev');
  check(r.verdict === 'fail' && r.simulated === true && r.url === server.url,
        `verdict fail, simulated, url (${r.verdict}, ${r.simulated}, ${r.url})`);
  expectChecks(r.quote, kQuoteChecks, 'quote');
  check(r.quote?.facts?.verified_at === '2025-01-01T00:00:00Z', `--at is the verification time (${r.quote?.facts?.verified_at})`);
  expectChecks(r.app, kAppChecks, 'app');
  check(JSON.stringify(r.app?.facts?.unpinned_images) === '["quay.io/jupyter/base-notebook"]',
        `unpinned image named (${JSON.stringify(r.app?.facts?.unpinned_images)})`);
  expectChecks(r.evidence_quote, kEvidenceQuoteChecks, 'evidence_quote');
  expectChecks(r.network, kNetworkChecks, 'network');
  check(r.network?.facts?.report_data === '0'.repeat(128), `evidence report_data is all zero (${r.network?.facts?.report_data})`);
  check(!('served_cert_sha256' in (r.network?.facts ?? {})), 'no served certificate over plain http');
  check(r.governance === undefined, 'governance not made without --rpc-url');
  const skipped = Object.fromEntries((r.skipped_checks ?? []).map((s) => [s.check, s.reason]));
  check(JSON.stringify(Object.keys(skipped).sort()) ===
        JSON.stringify(['governance', 'network.caa_account', 'network.caa_restricts_issuance', 'network.certificate']),
        `skipped checks (${JSON.stringify(skipped)})`);
  check(/plain http/.test(skipped['network.certificate'] ?? ''), 'certificate skipped because of plain http');
  check(/--domain/.test(skipped['network.caa_account'] ?? ''), 'CAA skipped for want of --domain');
  check(/--rpc-url/.test(skipped.governance ?? ''), 'governance skipped for want of --rpc-url');

  // --domain localhost: still no CAA lookup (a local name has no public records).
  const local = verify(['--url', server.url, '--at', kAt, '--domain', 'localhost'], 1, '--domain localhost');
  const localSkip = (local.skipped_checks ?? []).find((s) => s.check === 'network.caa_account');
  check(/localhost is local/.test(localSkip?.reason ?? ''), `--domain localhost skips CAA (${JSON.stringify(localSkip)})`);

  // A time outside the PCK chain's validity (2000-01-01): the chain check fails, nothing else moves.
  const early = verify(['--url', server.url, '--at', '946684800'], 1, '--at before the PCK chain');
  check(outcomes(early.quote).pck_chain === false && outcomes(early.quote).quote_signature === true,
        `pck_chain fails at 2000-01-01 (${JSON.stringify(outcomes(early.quote))})`);

  // The human table: one line per check, skip lines with reasons, the verdict.
  const table = run(['attest', 'verify', server.url, '--at', kAt]);  // URL positional, as documented
  check(table.code === 1, `table run exits 1 (${table.code}, ${table.err})`);
  for (const line of [/^pass  quote\.rtmr3 /m, /^FAIL  app\.images_pinned .*base-notebook/m, /^FAIL  network\.report_data /m,
                      /^pass  network\.file_hashes /m, /^skip  network\.certificate +plain http/m, /^skip  governance /m,
                      /"simulated": true/, /^verdict: FAIL \(21 checks made, 2 failed, 4 skipped\)$/m])
    check(line.test(table.out), `table has ${line}\n${table.out}`);

  // Usage errors exit 2; an unreachable service exits 1.
  for (const [args, pattern] of [
    [[], /--url/],
    [['--url', 'ftp://127.0.0.1:1'], /http:\/\/ or https:\/\//],
    [['--url', `${server.url}/core/v1`], /origin/],
    [['--url', server.url, '--at', 'yesterday'], /--at/],
    [['--url', server.url, 'extra'], /./],
  ]) {
    const u = run(['attest', 'verify', ...args]);
    check(u.code === 2 && pattern.test(u.err), `usage error ${JSON.stringify(args)}: exit ${u.code}, stderr '${u.err}'`);
  }
  const down = run(['attest', 'verify', '--url', 'http://127.0.0.1:1']);
  check(down.code === 1 && /GET \/attestation/.test(down.err), `unreachable: exit ${down.code}, stderr '${down.err}'`);

  // https: a TLS proxy in front of the server with a certificate of its own (not the evidence
  // certificate, whose key the development set does not keep). The handshake's certificate is
  // read and compared: network.certificate is made, and fails, as it must for a foreign key.
  const tls = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
                                    '-keyout', join(work, 'tls.key'), '-out', join(work, 'tls.pem'), '-subj', '/CN=localhost',
                                    '-days', '2'], { encoding: 'utf8' });
  if (tls.status === 0) {
    const https = await import('node:https');
    const http = await import('node:http');
    const { X509Certificate, createHash } = await import('node:crypto');
    const upstream = new URL(server.url);
    const proxy = https.createServer({ key: readFileSync(join(work, 'tls.key')), cert: readFileSync(join(work, 'tls.pem')) },
      (req, res) => {
        const up = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
                                (u) => { res.writeHead(u.statusCode, u.headers); u.pipe(res); });
        req.pipe(up);
      });
    await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = proxy.address().port;
      // spawnSync would block the proxy's event loop: run the CLI asynchronously here.
      const out = await new Promise((resolve) => {
        const child = spawn(enact, ['attest', 'verify', '--url', `https://localhost:${port}`, '--at', kAt, '--json'], { cwd: work });
        let text = '';
        child.stdout.on('data', (c) => { text += c; });
        child.on('exit', (code) => resolve({ code, text }));
      });
      let v = {};
      try { v = JSON.parse(out.text); } catch {}
      const served = createHash('sha256').update(new X509Certificate(readFileSync(join(work, 'tls.pem'))).raw).digest('hex');
      check(out.code === 1 && outcomes(v.network).certificate === false && v.network?.facts?.served_cert_sha256 === served,
            `https: the handshake certificate is compared (exit ${out.code}, ${JSON.stringify(v.network?.facts)})`);
      check(!(v.skipped_checks ?? []).some((s) => s.check === 'network.certificate'), 'https: certificate not skipped');
      expectChecks(v.quote, kQuoteChecks, 'quote over https');
    } finally {
      proxy.close();
    }
  } else {
    console.log('cli.attest: no openssl command; the https handshake case not run');
  }

  // 2. Governance through --rpc-url, when the pinned anvil is installed.
  if (existsSync(join(repo, 'tests', 'anvil', 'node_modules', '@foundry-rs'))) {
    const { startAnvil } = await import(join(repo, 'tests', 'anvil', 'anvil.mjs'));
    anvil = await startAnvil({ chainId: 31337 });
    const rpc = (method, params) => jsonRpc(anvil.url, method, params);
    const [from] = await rpc('eth_accounts', []);
    const appContract = `0x${kAppId}`;

    // No code at 0x+app_id: eth_call returns nothing, which is not an ABI bool.
    const none = verify(['--url', server.url, '--at', kAt, '--rpc-url', anvil.url], 1, 'governance, no contract');
    expectChecks(none.governance, { compose_hash_allowed: false }, 'governance (no contract)');

    // Governance.sol's runtime code at 0x+app_id (anvil_setCode), then allow(compose_hash).
    const creation = readFileSync(join(repo, 'tests', 'attest', 'Governance.bin'), 'utf8').trim();
    const deployTx = await rpc('eth_sendTransaction', [{ from, data: creation }]);
    // anvil may answer null for a moment after eth_sendTransaction: poll for the receipt.
    const mined = async (hash) => {
      for (const deadline = Date.now() + 10000; Date.now() < deadline;) {
        const r = await rpc('eth_getTransactionReceipt', [hash]);
        if (r !== null) return r;
        await new Promise((res) => setTimeout(res, 10));
      }
      throw new Error(`no receipt for ${hash}`);
    };
    const receipt = await mined(deployTx);
    const runtime = await rpc('eth_getCode', [receipt.contractAddress, 'latest']);
    await rpc('anvil_setCode', [appContract, runtime]);
    const notYet = verify([server.url, '--at', kAt, '--rpc', anvil.url], 1, 'governance, hash not allowed');
    expectChecks(notYet.governance, { compose_hash_allowed: false }, 'governance (not allowed)');
    check(notYet.governance?.facts?.allowed === false, `allowed false (${JSON.stringify(notYet.governance?.facts)})`);

    const allowSelector = await selectorOf('allow(bytes32)');
    await mined(await rpc('eth_sendTransaction', [{ from, to: appContract, data: allowSelector + kComposeHash }]));
    const allowed = verify(['--url', server.url, '--at', kAt, '--rpc-url', anvil.url], 1, 'governance, hash allowed');
    expectChecks(allowed.governance, { compose_hash_allowed: true }, 'governance (allowed)');
    check(!(allowed.skipped_checks ?? []).some((s) => s.check === 'governance'), 'governance no longer skipped');
    // Everything else is as before: the verdict still fails on images_pinned and report_data.
    check(allowed.verdict === 'fail', 'verdict still fail (images_pinned, report_data)');
  } else {
    console.log('cli.attest: tests/anvil not installed; governance through --rpc-url not run');
  }
} finally {
  await server.stop();
  await anvil?.stop();
}

/// bytes4(keccak256(signature)) with the pinned ethers of tests/vectors.
async function selectorOf(signature) {
  return loadEthers().id(signature).slice(0, 10);
}

// 3. `enact attest verify-quote` over every DCAP case of tests/fixtures/tdx/expectations.json
// whose quote is a file of its own (binary or hex): exit 0 and the expected TCB status and
// advisories for the genuine ones, exit 1 for the ones that must not verify; then a flipped byte.
{
  const shared = join(repo, 'tests', 'fixtures', 'tdx');
  const expectations = JSON.parse(readFileSync(join(shared, 'expectations.json'), 'utf8'));
  let cases = 0;
  for (const c of expectations.dcap_cases) {
    if (c.quote.includes('#') || !c.collateral) continue;
    // "collateral_edit": "delete key K" — the case's collateral without K (another platform's
    // collateral minus the PCK chain it names).
    let collateral = join(shared, c.collateral);
    if (c.collateral_edit) {
      const m = /^delete key (\w+)$/.exec(c.collateral_edit);
      if (!m) continue;
      const edited = JSON.parse(readFileSync(collateral, 'utf8'));
      delete edited[m[1]];
      collateral = join(work, `${c.id}-collateral.json`);
      writeFileSync(collateral, JSON.stringify(edited));
    }
    cases++;
    const r = run(['attest', 'verify-quote', join(shared, c.quote), '--collateral',
                   collateral, '--now', String(c.now), '--json']);
    let v = null;
    try { v = JSON.parse(r.out); } catch {}
    const want = c.expect === 'ok' ? 0 : 1;
    check(r.code === want && v !== null && v.ok === (want === 0),
          `verify-quote ${c.id}: exit ${r.code} (want ${want}), stdout '${r.out.slice(0, 300)}', stderr '${r.err}'`);
    if (c.expect === 'ok' && v) {
      check(v.tcb_status === c.status, `verify-quote ${c.id}: tcb_status ${v.tcb_status}, want ${c.status}`);
      check(JSON.stringify(v.advisory_ids) === JSON.stringify(c.advisory_ids),
            `verify-quote ${c.id}: advisories ${JSON.stringify(v.advisory_ids)}, want ${JSON.stringify(c.advisory_ids)}`);
      check(v.checks.every((k) => k.passed), `verify-quote ${c.id}: every check passed`);
    }
  }
  check(cases >= 8, `verify-quote: ${cases} DCAP cases run`);

  // The table form, and a quote without collateral: signatures and chain only.
  const up = expectations.dcap_cases.find((c) => c.id === 'dcapqvl-tdx-uptodate');
  const table = run(['attest', 'verify-quote', join(shared, up.quote), '--now', String(up.now)]);
  check(table.code === 0 && /pass\s+quote_signature/.test(table.out) && /not assessed/.test(table.out) &&
        /verdict: pass/.test(table.out), `verify-quote table: exit ${table.code}, '${table.out.slice(0, 400)}'`);

  // One flipped byte in the quote body (a TD report byte): the quote signature fails, exit 1.
  const original = readFileSync(join(shared, up.quote));
  const flipped = Buffer.from(original);
  flipped[48 + 100] ^= 0x01;
  const flippedPath = join(work, 'flipped.bin');
  writeFileSync(flippedPath, flipped);
  const bad = run(['attest', 'verify-quote', flippedPath, '--collateral', join(shared, up.collateral),
                   '--now', String(up.now), '--json']);
  let b = null;
  try { b = JSON.parse(bad.out); } catch {}
  check(bad.code === 1 && b?.ok === false &&
        b.checks.some((k) => k.name === 'quote_signature' && !k.passed),
        `verify-quote flipped byte: exit ${bad.code}, '${bad.out.slice(0, 300)}'`);
  // The same quote as hex text verifies like the binary.
  const hexPath = join(work, 'quote.hex');
  writeFileSync(hexPath, `0x${original.toString('hex')}\n`);
  const hexRun = run(['attest', 'verify-quote', hexPath, '--now', String(up.now), '--json']);
  check(hexRun.code === 0, `verify-quote hex file: exit ${hexRun.code}, '${hexRun.out.slice(0, 200)}'`);
  // Not a quote at all; a missing file; no FILE.
  const junkPath = join(work, 'junk.bin');
  writeFileSync(junkPath, 'not a quote');
  const junk = run(['attest', 'verify-quote', junkPath, '--json']);
  check(junk.code === 1 && /"ok":false/.test(junk.out) && /"error"/.test(junk.out),
        `verify-quote junk: exit ${junk.code}, '${junk.out}'`);
  const missing = run(['attest', 'verify-quote', join(work, 'absent.bin')]);
  check(missing.code !== 0 && missing.err.length > 0, `verify-quote missing file: exit ${missing.code}`);
  const noFile = run(['attest', 'verify-quote']);
  check(noFile.code === 2, `verify-quote without FILE: exit ${noFile.code}, '${noFile.err}'`);
}

rmSync(work, { recursive: true, force: true });
finish('cli.attest');
