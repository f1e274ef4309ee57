// Compiles tests/triggers/Emitter.sol with the registry's pinned solc-js
// (server/ledger/contracts/node_modules/solc) and writes Emitter.bin: the creation bytecode as
// 0x-hex, which the chain watcher test and the backfill benchmark deploy on anvil. `node build.mjs --check` recompiles and fails
// when the committed file differs, so the deployed code always matches the source.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const solc = createRequire(join(here, '..', '..', 'server', 'ledger', 'contracts', 'package.json'))('solc');
const outFile = join(here, 'Emitter.bin');

// Source unit named by file name only, so no absolute path reaches the metadata hash.
const input = {
  language: 'Solidity',
  sources: { 'Emitter.sol': { content: readFileSync(join(here, 'Emitter.sol'), 'utf8') } },
  settings: {
    evmVersion: 'cancun',
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { 'Emitter.sol': { Emitter: ['evm.bytecode.object'] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const problems = output.errors ?? [];
for (const p of problems) process.stderr.write(p.formattedMessage ?? `${p.severity}: ${p.message}\n`);
if (problems.some((p) => p.severity === 'error')) {
  process.stderr.write('build.mjs: compilation failed\n');
  process.exit(1);
}
const text = `0x${output.contracts['Emitter.sol'].Emitter.evm.bytecode.object}\n`;
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(outFile, 'utf8');
  } catch {}
  if (committed !== text) {
    process.stderr.write(`build.mjs: ${outFile} differs from what solc ${solc.version()} compiles; run node tests/triggers/Emitter.build.mjs\n`);
    process.exit(1);
  }
  console.log(`Emitter.bin matches solc ${solc.version()}`);
} else {
  writeFileSync(outFile, text);
  console.log(`wrote ${outFile} (solc ${solc.version()})`);
}
