// SPDX-License-Identifier: Apache-2.0
// Compiles the permission registry with the pinned solc-js (standard JSON) and writes
// build/PermissionRegistry.json: {contractName, solcVersion, settings, abi, bytecode,
// deployedBytecode}, byte-for-byte reproducible. `node build.mjs --check` recompiles and fails
// when the committed file differs, so the artifact the server deploys always matches the source.
import { readFileSync, writeFileSync, mkdirSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const here = dirname(fileURLToPath(import.meta.url));
const contractName = 'PermissionRegistry';
const outFile = join(here, 'build', `${contractName}.json`);
// EIP-170: public chains refuse deployed code above this size.
const kMaxDeployedBytes = 24576;

// Settings recorded in the artifact. evmVersion is pinned rather than solc's default so the
// bytecode runs on chains that have not adopted the newest hardfork (cancun: PUSH0, MCOPY).
// The legacy pipeline (viaIR off) compiles this contract without stack limits and gives code
// about 1.3 KB smaller than viaIR at the same gas, which keeps room under EIP-170.
const settings = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  viaIR: false,
};

function compile() {
  // Every .sol file here, by its file name: imports are "./X.sol", so source unit names stay
  // relative and no absolute path reaches the metadata (the bytecode is the same on any machine).
  const sources = {};
  for (const f of readdirSync(here).filter((f) => f.endsWith('.sol')).sort())
    sources[f] = { content: readFileSync(join(here, f), 'utf8') };
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      ...settings,
      outputSelection: {
        [`${contractName}.sol`]: {
          [contractName]: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'],
        },
        [`I${contractName}.sol`]: { [`I${contractName}`]: ['abi'] },
      },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const problems = output.errors ?? [];
  for (const p of problems) process.stderr.write(p.formattedMessage ?? `${p.severity}: ${p.message}\n`);
  if (problems.some((p) => p.severity === 'error')) {
    process.stderr.write('build.mjs: compilation failed\n');
    process.exit(1);
  }
  const c = output.contracts[`${contractName}.sol`][contractName];
  // The contract's external surface is exactly the interface clients code against.
  const surface = (abi) => abi.filter((f) => f.type !== 'constructor')
    .map((f) => `${f.type} ${f.name}(${(f.inputs ?? []).map((i) => i.type).join(',')})`).sort();
  const mine = surface(c.abi);
  const declared = surface(output.contracts[`I${contractName}.sol`][`I${contractName}`].abi);
  const extra = mine.filter((x) => !declared.includes(x));
  const missing = declared.filter((x) => !mine.includes(x));
  if (extra.length || missing.length) {
    process.stderr.write(`build.mjs: ${contractName} differs from I${contractName}: extra ${JSON.stringify(extra)}, missing ${JSON.stringify(missing)}\n`);
    process.exit(1);
  }
  const artifact = {
    contractName,
    solcVersion: solc.version(),
    settings,
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
  };
  return `${JSON.stringify(artifact, null, 2)}\n`;
}

const check = process.argv.includes('--check');
const text = compile();
const deployedBytes = (JSON.parse(text).deployedBytecode.length - 2) / 2;
console.log(`${contractName}: deployed size ${deployedBytes} bytes (EIP-170 limit ${kMaxDeployedBytes}), solc ${solc.version()}`);
if (deployedBytes > kMaxDeployedBytes) {
  process.stderr.write(`build.mjs: deployed bytecode of ${deployedBytes} bytes exceeds the EIP-170 limit of ${kMaxDeployedBytes}\n`);
  process.exit(1);
}
if (check) {
  const committed = existsSync(outFile) ? readFileSync(outFile, 'utf8') : null;
  if (committed !== text) {
    process.stderr.write(
      committed === null
        ? `build.mjs --check: ${outFile} is missing; run \`node build.mjs\` and commit it\n`
        : `build.mjs --check: ${outFile} differs from what the sources compile to; run \`node build.mjs\` and commit it\n`);
    process.exit(1);
  }
  console.log(`${outFile}: up to date`);
} else {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, text);
  console.log(`wrote ${outFile}`);
}
