// SPDX-License-Identifier: Apache-2.0
// Compiles one test contract with the registry's pinned solc-js (contracts/node_modules/solc) and
// writes <Name>.bin beside its source: the creation bytecode as 0x-hex, which the tests deploy on
// anvil. With `--check` on the command line it recompiles and fails when the committed file
// differs, so the deployed code always matches the source.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repo } from './harness.mjs';

/**
 * Builds contract `name` of `<dir>/<name>.sol` into `<dir>/<name>.bin` (or checks it); `script` is
 * the build script's path from the repository root, named in the message that asks to rebuild.
 * Exits 1 on a compilation error or a stale .bin under --check.
 */
export function buildContract(dir, name, script) {
  const solc = createRequire(join(repo, 'contracts', 'package.json'))('solc');
  const file = `${name}.sol`;
  const outFile = join(dir, `${name}.bin`);
  // Source unit named by file name only, so no absolute path reaches the metadata hash.
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(join(dir, file), 'utf8') } },
    settings: {
      evmVersion: 'cancun',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { [file]: { [name]: ['evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const problems = output.errors ?? [];
  for (const p of problems) process.stderr.write(p.formattedMessage ?? `${p.severity}: ${p.message}\n`);
  if (problems.some((p) => p.severity === 'error')) {
    process.stderr.write('build.mjs: compilation failed\n');
    process.exit(1);
  }
  const text = `0x${output.contracts[file][name].evm.bytecode.object}\n`;
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(outFile, 'utf8');
    } catch {}
    if (committed !== text) {
      process.stderr.write(`build.mjs: ${outFile} differs from what solc ${solc.version()} compiles; run node ${script}\n`);
      process.exit(1);
    }
    console.log(`${name}.bin matches solc ${solc.version()}`);
  } else {
    writeFileSync(outFile, text);
    console.log(`wrote ${outFile} (solc ${solc.version()})`);
  }
}
