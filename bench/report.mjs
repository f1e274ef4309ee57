// SPDX-License-Identifier: Apache-2.0
// Writes the generated tables of docs/benchmarks.md from the outputs bench/report collected in
// one run. Each table sits between `<!-- report:NAME begin -->` and `<!-- report:NAME end -->`;
// a table whose benchmark was not run this time (its output file is missing) is left as it is.
//
//   node bench/report.mjs WORK_DIR DATE MACHINE HTTP_SECONDS MIN_TIME WRITE(0|1) DOC
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [work, date, machine, seconds, minTime, write, doc] = process.argv.slice(2);
const load = (name) => (existsSync(join(work, name)) ? JSON.parse(readFileSync(join(work, name), 'utf8')) : null);

/** Median real time per run in ns, by run name (the BM_ prefix dropped). */
const medians = (j) => {
  if (!j) return null;
  const out = {};
  for (const b of j.benchmarks) {
    if (b.aggregate_name !== 'median') continue;
    out[b.run_name.replace(/^BM_/, '')] = b.real_time * { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[b.time_unit];
  }
  return out;
};
const ops = (t) => {
  const v = 1e9 / t;
  return v >= 1e6 ? (v / 1e6).toFixed(2) + ' M/s' : v >= 1e3 ? (v / 1e3).toFixed(1) + ' k/s' : v.toFixed(1) + ' /s';
};
const dur = (t) => (t >= 1e6 ? (t / 1e6).toFixed(2) + ' ms' : t >= 1e3 ? (t / 1e3).toFixed(1) + ' µs' : t.toFixed(0) + ' ns');
const x = (a, b) => (a / b).toFixed(2) + '×';
const table = (head, rows) => {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => '| ' + r.map((c, i) => c.padEnd(w[i])).join(' | ') + ' |';
  return [line(head), '|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|', ...rows.map(line)].join('\n');
};
const have = (m, names) => m && names.every((n) => m[n] !== undefined);

const sections = {};
const sdk = medians(load('sdk.json'));
const stamp = `${date}, \`bench/report\`, min time ${minTime} s, medians of 3`;

if (sdk) {
  const base = [
    ['envelope verify (parse, 5 rules, digest, recover)', 'envelope_verify', 'baseline_recover_keccak'],
    ['envelope EIP-712 digest from JSON text (generic encoder)', 'envelope_digest', 'baseline_recover_keccak'],
    ['envelope sign', 'envelope_sign', 'baseline_recover_keccak'],
    ['CIDv0 of 1 KiB', 'cid_v0/1024', 'baseline_sha256/1024'],
    ['CIDv1 of 1 KiB', 'cid_v1/1024', 'baseline_sha256/1024'],
    ['CIDv0 of 1 MiB', 'cid_v0/1048576', 'baseline_sha256/1048576'],
    ['CIDv1 of 1 MiB', 'cid_v1/1048576', 'baseline_sha256/1048576'],
  ].filter(([, e, b]) => have(sdk, [e, b]));
  const baseName = { baseline_recover_keccak: 'libsecp256k1 recover + 2× keccak', 'baseline_sha256/1024': 'SHA-256 of 1 KiB',
    'baseline_sha256/1048576': 'SHA-256 of 1 MiB' };
  sections.sdk = `SDK hot paths against their floors (${stamp}):\n\n` +
    table(['case', 'enact', 'baseline', 'baseline ops', 'enact time / baseline time'],
      base.map(([label, e, b]) => [label, ops(sdk[e]), baseName[b], ops(sdk[b]), x(sdk[e], sdk[b])])) +
    (have(sdk, ['rlp_decode_tx_like']) ? `\n\nNo baseline: RLP decode of a 12-field transaction (4 KiB data) ${ops(sdk.rlp_decode_tx_like)}.` : '');
}

const peers = load('peers.json');
if (sdk && peers) {
  const libs = ['ethers', 'viem', 'eth-sig-util', 'ipfs-only-hash'];
  const labels = { 'keccak256/32': 'keccak256 32 B', 'keccak256/4096': 'keccak256 4 KiB', envelope_digest: 'envelope digest',
    envelope_verify: 'envelope verify', abi_encode_setUsageApiKey: 'ABI encode setUsageApiKey', 'cid_v0/1024': 'CIDv0 1 KiB',
    'cid_v0/1048576': 'CIDv0 1 MiB' };
  sections.peers = `The same cases in the ecosystem's libraries (Node, \`--quick\` timing; enact × = how many times faster enact is):\n\n` +
    table(['case', 'enact', ...libs.map((l) => `${l} (enact ×)`)],
      Object.entries(peers).filter(([c]) => sdk[c] !== undefined).map(([c, r]) => [labels[c] ?? c, ops(sdk[c]),
        ...libs.map((l) => (r[l] ? `${ops(r[l])} (${(r[l] / sdk[c]).toFixed(1)}×)` : '—'))]));
}

const attest = medians(load('attest.json'));
if (attest) {
  const rows = [
    ['TDX quote: signatures, QE report, PCK chain', 'attest_verify_quote', 'attest_floor_ecdsa', '4 ECDSA-P256 verifications (OpenSSL)'],
    ['TDX quote with collateral (TCB info, QE identity, CRLs)', 'attest_verify_quote_collateral', 'attest_floor_ecdsa_collateral',
      '9 ECDSA-P256 verifications (OpenSSL)'],
  ].filter(([, e, b]) => have(attest, [e, b]));
  sections.attest = `Attestation (${stamp}):\n\n` + table(['case', 'enact', 'baseline', 'baseline time', 'enact / baseline'],
    rows.map(([l, e, b, bn]) => [l, dur(attest[e]), bn, dur(attest[b]), x(attest[e], attest[b])]));
}

const rt = medians(load('runtime.json'));
if (rt && rt.bare_duktape) {
  const names = Object.keys(rt);
  const pool = (n) => names.find((k) => k.startsWith('pool') && k.includes(`threads:${n}`));
  const rows = [
    ['bare Duktape heap: create, evaluate, destroy (floor)', 'bare_duktape'],
    ["the worker's code path in-process (Enact API, limits, heap)", 'sandbox_inprocess'],
    ['the same with the heap created ahead (a warm worker)', 'sandbox_prepared'],
    ['through the worker pool, 1 calling thread', pool(1)],
    ['through the worker pool, 2 calling threads (wall time ÷ runs)', pool(2)],
  ].filter(([, k]) => k && rt[k] !== undefined);
  sections.runtime = `Action sandbox, trivial action (${stamp}):\n\n` + table(['case', 'time per run', 'ratio to the bare heap'],
    rows.map(([l, k]) => [l, dur(rt[k]), x(rt[k], rt.bare_duktape)]));
}

const ledger = medians(load('ledger.json'));
if (ledger) {
  const reads = [['get_account', 'get_account'], ['find_usage_key (credential lookup)', 'find_usage_key'],
    ['all_groups (execution rule, 10 groups)', 'all_groups']].filter(([, k]) =>
    have(ledger, [`${k}/embedded`, `${k}/evm_cache_on`, `${k}/evm_cache_off`]));
  sections.ledger = `Permission-ledger reads, evm ledger on anvil (loopback JSON-RPC) against the embedded SQLite ledger ` +
    `holding the same state (${stamp}):\n\n` +
    table(['read', 'embedded (baseline)', 'evm, cache on', 'cache on / embedded', 'evm, cache off', 'cache off / embedded'],
      reads.map(([l, k]) => {
        const e = ledger[`${k}/embedded`], on = ledger[`${k}/evm_cache_on`], off = ledger[`${k}/evm_cache_off`];
        return [l, dur(e), dur(on), x(on, e), dur(off), x(off, e)];
      }));
}

const http = {};
for (const n of ['baseline', 'baseline1', 'reads', 'writes', 'envelope', 'envelope1', 'envelope2', 'run']) {
  const j = load(`http-${n}.json`);
  if (j) http[n] = j;
}
if (http.baseline && http.baseline1) {
  const rows = [
    ['GET get_node_chain_config (no auth, no ledger): baseline', 'baseline', 8, 'baseline'],
    ['GET list_groups (usage key, page of 20)', 'reads', 8, 'baseline'],
    ['POST add_group (usage key, one ledger write)', 'writes', 8, 'baseline'],
    ['POST create_wallet_with_signature (valid version 1 envelope, replayed)', 'envelope', 8, 'baseline'],
    ['POST create_wallet_with_signature (version 2, a fresh nonce each: one metering write)', 'envelope2', 8, 'baseline'],
    ['POST run_action (trivial action by CID)', 'run', 8, 'baseline'],
    ['GET get_node_chain_config, 1 connection: baseline', 'baseline1', 1, 'baseline1'],
    ['POST create_wallet_with_signature, 1 connection', 'envelope1', 1, 'baseline1'],
  ].filter(([, k]) => http[k]);
  const ms = (v) => (v >= 1 ? v.toFixed(2) + ' ms' : (v * 1000).toFixed(0) + ' µs');
  sections.http = `enact-server over HTTP (Release, embedded SQLite ledger, \`--dev\`), wrk with 2 threads on the same 2 cores, ` +
    `${seconds} s per case (${date}); each case against the baseline route at the same connection count:\n\n` +
    table(['case', 'conns', 'req/s', 'p50', 'p99', 'non-2xx', 'req/s ÷ baseline', 'p50 ÷ baseline'],
      rows.map(([l, k, c, b]) => [l, String(c), http[k].rps.toFixed(0), ms(http[k].p50), ms(http[k].p99),
        String(http[k].non2xx) + (http[k].errors ? ` (${http[k].errors})` : ''),
        (http[k].rps / http[b].rps).toFixed(2) + '×', (http[k].p50 / http[b].p50).toFixed(2) + '×']));
}

const sched = { minute: load('scheduler-minute.json'), hourly: load('scheduler-hourly.json') };
if (sched.minute || sched.hourly) {
  const shapes = [
    ['every minute (`S * * * * *`, spread over the minute)', 'minute', 60],
    ['hourly (`S M * * * *`, spread over the hour)', 'hourly', 3600],
  ].filter(([, k]) => sched[k]);
  const ms = (v) => v.toFixed(0) + ' ms';
  sections.scheduler = `The trigger scheduler with 100,000 schedule triggers in a SQLite store with synchronous FULL ` +
    `(Release, \`enact_scheduler_bench --schedules 100000 --seconds 70\`, ${date}): lateness is from a firing's planned ` +
    `time to the commit of its queued run, over the firings planned after the scheduler started; the target is a p99 ` +
    `under 1 s:\n\n` +
    table(['pattern', 'firings/s', 'fired', 'index load', 'p50', 'p99', 'max', 'commits', 'p99 ÷ 1 s target'],
      shapes.map(([l, k, period]) => {
        const r = sched[k];
        return [l, (r.schedules / period).toFixed(0), String(r.fired), r.load_s.toFixed(2) + ' s', ms(r.p50_ms),
          ms(r.p99_ms), ms(r.max_ms), String(r.commits), (r.p99_ms / 1000).toFixed(2) + '×'];
      }));
}

sections.machine = `Machine of the last \`bench/report\` run: ${machine}. Absolute figures depend on what else the ` +
  `machine ran (the load average includes the benchmarks' own load and wrk); the ratios, each measured in the same ` +
  `run as its baseline, are what to compare.`;

let text = readFileSync(doc, 'utf8');
const missing = [];
for (const [name, body] of Object.entries(sections)) {
  const re = new RegExp(`(<!-- report:${name} begin -->)[\\s\\S]*?(<!-- report:${name} end -->)`);
  if (!re.test(text)) { missing.push(name); continue; }
  text = text.replace(re, (_, a, b) => `${a}\n${body}\n${b}`);
}
if (missing.length) console.error(`bench/report: no markers for ${missing.join(', ')} in ${doc}`);
if (write === '1') {
  writeFileSync(doc, text);
  console.error(`bench/report: wrote ${Object.keys(sections).filter((s) => !missing.includes(s)).join(', ')} into ${doc}`);
} else {
  for (const [name, body] of Object.entries(sections)) console.log(`## ${name}\n\n${body}\n`);
}
