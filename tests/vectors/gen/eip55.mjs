// SPDX-License-Identifier: Apache-2.0
// eip55.json: EIP-55 checksummed addresses (ethers).

import { ethers, Rng } from './common.mjs';

export function genEip55() {
  const rng = new Rng(0xe1755055);
  const vectors = [];
  const push = (lower) => vectors.push({ lowercase: lower, checksummed: ethers.getAddress(lower) });
  push('0x' + '00'.repeat(20));
  push('0x' + 'ff'.repeat(20));
  while (vectors.length < 200) push(rng.hex(20));
  return {
    file: 'eip55.json',
    description: 'EIP-55 mixed-case checksum addresses: lowercase hex to ethers getAddress.',
    vectors,
  };
}
