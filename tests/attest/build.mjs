// SPDX-License-Identifier: Apache-2.0
// Compiles tests/attest/Governance.sol with the registry's pinned solc-js
// (contracts/node_modules/solc) and writes Governance.bin: the creation bytecode as
// 0x-hex, which the governance test deploys on anvil. `node build.mjs --check` recompiles and fails
// when the committed file differs, so the deployed code always matches the source.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildContract } from '../support/node/solc_build.mjs';

buildContract(dirname(fileURLToPath(import.meta.url)), 'Governance', 'tests/attest/build.mjs');
