#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Interop vector generator: computes JSON test vectors with the Ethereum/IPFS ecosystem's own
// libraries (ethers, viem, @metamask/eth-sig-util, ipfs-only-hash, cron-parser) for the C++ unit
// tests to read. Every input comes from a seeded PRNG, so the output is a pure function of this
// script, its modules under gen/ (one per vector family) and the package versions pinned in
// package-lock.json.
//
//   node tests/vectors/generate.mjs          write the *.json vector files beside this script
//   node tests/vectors/generate.mjs --check  regenerate in memory; exit 1 if a committed file differs
//
// The field meanings and the rules adopted to keep the libraries in agreement are in README.md.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

// The generators, one module per vector family; gen/common.mjs loads the reference libraries.
import { genTypedData } from './gen/typed_data.mjs';
import { genAbi } from './gen/abi.mjs';
import { genRlp } from './gen/rlp.mjs';
import { genEip55 } from './gen/eip55.mjs';
import { genCid } from './gen/cid.mjs';
import { genCron } from './gen/cron.mjs';
import { genKeys } from './gen/keys.mjs';
import { genPkp } from './gen/pkp.mjs';
import { genTx1559 } from './gen/tx1559.mjs';
import { genRegistry } from './gen/registry.mjs';
import { genKeystore } from './gen/keystore.mjs';
import { genEd25519 } from './gen/ed25519.mjs';
import { genStripeWebhook } from './gen/stripe_webhook.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

const GENERATOR = 'tests/vectors/generate.mjs';

const version = (name) => JSON.parse(readFileSync(join(HERE, 'node_modules', name, 'package.json'), 'utf8')).version;

function libraryVersions() {
  return {
    '@metamask/eth-sig-util': version('@metamask/eth-sig-util'),
    'cron-parser': version('cron-parser'),
    ethers: version('ethers'),
    'ipfs-only-hash': version('ipfs-only-hash'),
    viem: version('viem'),
  };
}

// ---------------------------------------------------------------------------------------------
// Output: one field per line inside each vector, values compact, so diffs stay reviewable.

function render(result, libs) {
  const lines = ['{'];
  // A generator that uses libraries beyond the common ones names them in `result.libraries`; they
  // are listed in its own file only, so adding one leaves the other files as they were.
  const own = Object.fromEntries((result.libraries ?? []).map((name) => [name, version(name)]));
  const head = { description: result.description, generator: GENERATOR, libraries: { ...libs, ...own } };
  for (const [k, v] of Object.entries(head)) lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)},`);
  const sections = result.sections ?? { vectors: result.vectors };
  const names = Object.keys(sections);
  names.forEach((sec, si) => {
    lines.push(`  ${JSON.stringify(sec)}: [`);
    const vs = sections[sec];
    vs.forEach((v, vi) => {
      lines.push('    {');
      const entries = Object.entries(v);
      entries.forEach(([k, x], ki) => lines.push(`      ${JSON.stringify(k)}: ${JSON.stringify(x)}${ki + 1 < entries.length ? ',' : ''}`));
      lines.push(`    }${vi + 1 < vs.length ? ',' : ''}`);
    });
    lines.push(`  ]${si + 1 < names.length ? ',' : ''}`);
  });
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** First differing entry between two renderings of a file, for --check. */
function describeDiff(file, committed, fresh) {
  let a;
  try {
    a = JSON.parse(committed);
  } catch (e) {
    return `${file}: committed file is not valid JSON (${e.message})`;
  }
  const b = JSON.parse(fresh);
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (isDeepStrictEqual(a[key], b[key])) continue;
    if (Array.isArray(a[key]) && Array.isArray(b[key])) {
      const n = Math.max(a[key].length, b[key].length);
      for (let i = 0; i < n; i++) {
        if (isDeepStrictEqual(a[key][i], b[key][i])) continue;
        const clip = (x) => { const s = JSON.stringify(x) ?? '(absent)'; return s.length > 400 ? `${s.slice(0, 400)}…` : s; };
        return `${file}: ${key}[${i}] differs (committed ${a[key].length} entries, regenerated ${b[key].length})\n` +
          `  committed:   ${clip(a[key][i])}\n  regenerated: ${clip(b[key][i])}`;
      }
    }
    return `${file}: field "${key}" differs\n  committed:   ${JSON.stringify(a[key])}\n  regenerated: ${JSON.stringify(b[key])}`;
  }
  const la = committed.split('\n');
  const lb = fresh.split('\n');
  const i = la.findIndex((l, k) => l !== lb[k]);
  return `${file}: same content, different formatting at line ${i + 1}`;
}

async function main() {
  const check = process.argv.includes('--check');
  const libs = libraryVersions();
  const generators = [genTypedData, genAbi, genRlp, genEip55, genCid, genCron, genKeys, genPkp, genEd25519, genTx1559, genRegistry, genKeystore, genStripeWebhook];
  let failed = false;
  let total = 0;
  for (const gen of generators) {
    const result = await gen();
    const text = render(result, libs);
    total += Buffer.byteLength(text);
    const path = join(HERE, result.file);
    const count = result.sections
      ? Object.entries(result.sections).map(([k, v]) => `${v.length} ${k}`).join(', ')
      : `${result.vectors.length} vectors`;
    const rejected = result.rejected && Object.keys(result.rejected).length
      ? `; skipped: ${Object.entries(result.rejected).map(([r, n]) => `${n}× ${r}`).join('; ')}`
      : '';
    if (check) {
      let committed = null;
      try {
        committed = readFileSync(path, 'utf8');
      } catch {
        console.error(`${result.file}: missing (run node ${GENERATOR})`);
        failed = true;
        continue;
      }
      if (committed !== text) {
        console.error(describeDiff(result.file, committed, text));
        failed = true;
      } else {
        console.log(`${result.file}: up to date (${count})`);
      }
    } else {
      writeFileSync(path, text);
      console.log(`${result.file}: ${count}, ${Buffer.byteLength(text)} bytes${rejected}`);
    }
  }
  if (!check) console.log(`total ${total} bytes`);
  if (total > 3 * 1024 * 1024) throw new Error(`vector files total ${total} bytes, over the 3 MiB budget`);
  if (failed) {
    console.error(`vectors differ from what ${GENERATOR} produces: regenerate with node ${GENERATOR} and review the diff`);
    process.exit(1);
  }
}

await main();
