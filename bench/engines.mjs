// SPDX-License-Identifier: Apache-2.0
// The engines section of docs/benchmarks.md from what bench/engines collected in one run: wrk's
// outputs for each target and connection count, and enact_engine_bench's JSON. Writes the table
// between `<!-- report:engines begin -->` and `<!-- report:engines end -->`, or prints it.
//
//   node bench/engines.mjs WORK_DIR BUILD_TYPE SECONDS WORKERS MACHINE WRITE(0|1)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [work, buildType, seconds, workers, machine, write] = process.argv.slice(2);
const doc = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'benchmarks.md');
const date = new Date().toISOString().slice(0, 10);

// wrk --latency: requests/s, p50, p99 (in µs), and the answers that were not 2xx.
const micros = (v) => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v);
  return m ? Number(m[1]) * { us: 1, ms: 1e3, s: 1e6 }[m[2]] : NaN;
};
function wrk(target, conns) {
  const text = readFileSync(join(work, `${target}-${conns}.txt`), 'utf8');
  const field = (re) => (re.exec(text) ?? [])[1];
  return {
    rps: Number(field(/Requests\/sec:\s+([\d.]+)/)),
    p50: micros(field(/^\s+50%\s+(\S+)/m)),
    p99: micros(field(/^\s+99%\s+(\S+)/m)),
    bad: Number(field(/Non-2xx or 3xx responses:\s+(\d+)/) ?? 0) + Number(field(/Socket errors:.*timeout (\d+)/) ?? 0),
  };
}
// enact_engine_bench: the median real and CPU time per run, in µs, by benchmark name.
const floors = {};
for (const f of ['floor-a.json', 'floor-b.json']) {
  for (const b of JSON.parse(readFileSync(join(work, f), 'utf8')).benchmarks) {
    if (b.aggregate_name !== 'median' || b.error_occurred) continue;
    const unit = { ns: 1e-3, us: 1, ms: 1e3, s: 1e6 }[b.time_unit];
    floors[b.run_name] = { real: b.real_time * unit, cpu: b.cpu_time * unit };
  }
}

const us = (v) => (v >= 1000 ? (v / 1000).toFixed(2) + ' ms' : v.toFixed(0) + ' µs');
const n = (v) => Math.round(v).toLocaleString('en-US');
const x = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? (a / b).toFixed(2) + '×' : '—');
const table = (head, rows) => {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => '| ' + r.map((c, i) => c.padEnd(w[i])).join(' | ') + ' |';
  return [line(head), '|' + w.map((k) => '-'.repeat(k + 2)).join('|') + '|', ...rows.map(line)].join('\n');
};

const http = {};
for (const t of ['spidermonkey-trivial', 'duktape-trivial', 'deno-trivial', 'spidermonkey-sign', 'duktape-sign'])
  http[t] = { 1: wrk(t, 1), 8: wrk(t, 8) };
const deno = http['deno-trivial'];
const label = {
  'spidermonkey-trivial': 'SpiderMonkey, trivial action', 'duktape-trivial': 'Duktape, trivial action',
  'deno-trivial': 'Deno host, trivial action (a new Worker per run)', 'spidermonkey-sign': 'SpiderMonkey, signEcdsa once',
  'duktape-sign': 'Duktape, signEcdsa once',
};
const httpTable = table(
  ['case', 'p50, 1 conn', 'p99, 1 conn', 'runs/s, 1 conn', 'runs/s, 8 conns', 'p50, 8 conns', 'non-2xx', 'runs/s ÷ Deno (8)', 'p50 ÷ Deno (1)'],
  Object.entries(http).map(([t, r]) => [label[t], us(r[1].p50), us(r[1].p99), n(r[1].rps), n(r[8].rps), us(r[8].p50),
    String(r[1].bad + r[8].bad), t === 'deno-trivial' ? '1.00×' : x(r[8].rps, deno[8].rps),
    t === 'deno-trivial' ? '1.00×' : x(r[1].p50, deno[1].p50)]));

const f = (k) => floors[k] ?? { real: NaN, cpu: NaN };
const engineRows = [
  ['Duktape', 'bare_duktape', 'sandbox_duktape', 'sandbox_duktape_ready', 'duktape-trivial'],
  ['SpiderMonkey', 'bare_spidermonkey', 'sandbox_spidermonkey', 'sandbox_spidermonkey_ready', 'spidermonkey-trivial'],
].map(([name, bare, sandbox, ready, target]) => {
  const b = f(bare);
  const perRun1 = 1e6 / http[target][1].rps;  // wall time per run on one connection
  const perRun8 = 1e6 / http[target][8].rps;  // wall time per run at 8 connections (both cores busy)
  return [name, `${us(b.real)} (CPU ${us(b.cpu)})`, `${us(f(sandbox).real)} · ${x(f(sandbox).real, b.real)}`,
    `${us(f(ready).real)} · ${x(f(ready).real, b.real)}`,
    `${us(perRun1)} · ${x(perRun1, b.real)}`, `${us(perRun8)} · ${x(perRun8, b.real)}`];
});
const floorTable = table(
  ['engine', 'bare floor: create, run, (destroy)', 'worker code path in-process · ÷ floor',
    'heap or realm made ahead, freed after · ÷ floor',
    'HTTP, 1 conn: wall per run · ÷ floor', 'HTTP, 8 conns: wall per run · ÷ floor'],
  engineRows);

const sm = http['spidermonkey-trivial'];
const targets = [
  `SpiderMonkey trivial p50 on one connection ${us(sm[1].p50)} (target < 2 ms: ${sm[1].p50 < 2000 ? 'met' : 'missed'})`,
  `${n(sm[8].rps)} runs/s at 8 connections (target ≥ 2,000: ${sm[8].rps >= 2000 ? 'met' : 'missed'})`,
  `${x(sm[8].rps, deno[8].rps)} the Deno host's throughput (target ≥ 20×: ${sm[8].rps >= 20 * deno[8].rps ? 'met' : 'missed'})`,
  `Duktape bare heap ${us(f('bare_duktape').real)} and ${n(http['duktape-trivial'][8].rps)} runs/s at 8 connections ` +
    '(last report: 126 µs, 5,204 runs/s)',
];

const section = `Action engines side by side (\`bench/engines\`, ${date}, ${buildType} build, ${seconds} s per HTTP case, ` +
  `${workers} sandbox workers per server; ${machine}). \`POST /core/v1/run_action\` by CID with a usage key over HTTP ` +
  `(wrk on loopback, 1 thread for 1 connection, 2 for 8), each engine in its own enact-server, and the same trivial ` +
  `action in the Deno host of bench/peers/deno (a new Worker, so a fresh V8 isolate, per request); the cases of one ` +
  `connection count ran one after another:\n\n${httpTable}\n\n` +
  `Each engine against its own floor (enact_engine_bench in-process, medians of 3; ÷ floor is wall time over the bare ` +
  `floor's wall time):\n\n${floorTable}\n\nAgainst the targets: ${targets.join('; ')}.`;

if (write === '1') {
  const text = readFileSync(doc, 'utf8');
  const begin = '<!-- report:engines begin -->';
  const end = '<!-- report:engines end -->';
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`docs/benchmarks.md has no ${begin} … ${end} markers`);
  writeFileSync(doc, text.slice(0, i + begin.length) + '\n' + section + '\n' + text.slice(j));
  console.log('bench/engines: docs/benchmarks.md updated');
} else {
  console.log(section);
}
