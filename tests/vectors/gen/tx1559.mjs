// SPDX-License-Identifier: Apache-2.0
// tx1559.json: signed EIP-1559 transactions (ethers).

import { assertEq, ethers, randomPrivateKey, randomUint, Rng } from './common.mjs';

const U64_MAX_TX = (1n << 64n) - 1n;
const U256_MAX_TX = (1n << 256n) - 1n;
// ethers holds a nonce in a JS number, so its largest is 2^53 - 1 (EIP-2681 allows 2^64 - 1).
const NONCE_MAX_TX = (1n << 53n) - 1n;

/** Data of a transaction: empty, a 4-byte selector, ABI-sized calldata, or a large init code. */
function randomTxData(rng) {
  switch (rng.int(6)) {
    case 0: return '0x';
    case 1: return rng.hex(4);
    case 2: return rng.hex(4 + 32 * rng.range(1, 6));
    case 3: return rng.hex(rng.pick([1, 55, 56, 255, 256]));
    case 4: return rng.hex(rng.range(1000, 3000));
    default: return rng.hex(rng.range(1, 120));
  }
}

export async function genTx1559() {
  const rng = new Rng(0x74783135);
  const vectors = [];
  // Fixed edges first (all integers zero; all integers at their maximum; contract creation with
  // empty data), then random transactions.
  const fixed = [
    { name: 'all-zero', chainId: 0n, nonce: 0n, maxPriorityFeePerGas: 0n, maxFeePerGas: 0n, gasLimit: 0n, to: '0x' + '00'.repeat(20), value: 0n, data: '0x' },
    { name: 'all-max', chainId: U64_MAX_TX, nonce: NONCE_MAX_TX, maxPriorityFeePerGas: U256_MAX_TX, maxFeePerGas: U256_MAX_TX, gasLimit: U64_MAX_TX, to: '0x' + 'ff'.repeat(20), value: U256_MAX_TX, data: '0xff' },
    { name: 'create-empty', chainId: 1n, nonce: 0n, maxPriorityFeePerGas: 1000000000n, maxFeePerGas: 30000000000n, gasLimit: 53000n, to: null, value: 0n, data: '0x' },
  ];
  for (let i = 0; i < 100; i++) {
    const f = fixed[i];
    const name = f ? f.name : `random-${i - fixed.length}`;
    const key = randomPrivateKey(rng);
    const fields = f ?? {
      chainId: rng.pick([1n, 10n, 137n, 8453n, 11155111n, randomUint(rng, 64)]),
      nonce: randomUint(rng, 53),
      maxPriorityFeePerGas: randomUint(rng, 256),
      maxFeePerGas: randomUint(rng, 256),
      gasLimit: randomUint(rng, 64),
      to: rng.chance(0.2) ? null : rng.hex(20),
      value: randomUint(rng, 256),
      data: randomTxData(rng),
    };
    const tx = { type: 2, ...fields, accessList: [] };
    delete tx.name;
    // ethers refuses a priority fee above the fee cap (a validity rule, not an encoding one).
    if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) {
      [tx.maxPriorityFeePerGas, tx.maxFeePerGas] = [tx.maxFeePerGas, tx.maxPriorityFeePerGas];
    }
    if (tx.to !== null) tx.to = ethers.getAddress(tx.to);
    const wallet = new ethers.Wallet(key);
    const raw = await wallet.signTransaction(tx);
    const unsigned = ethers.Transaction.from(tx).unsignedSerialized;
    const parsed = ethers.Transaction.from(raw);
    assertEq(parsed.from, wallet.address, `tx1559 ${name}: recovered sender`);
    assertEq(parsed.unsignedSerialized, unsigned, `tx1559 ${name}: unsigned serialization`);
    assertEq(parsed.unsignedHash, ethers.keccak256(unsigned), `tx1559 ${name}: signing hash`);
    assertEq(parsed.hash, ethers.keccak256(raw), `tx1559 ${name}: tx hash`);
    vectors.push({
      name,
      private_key: key,
      from: wallet.address,
      chain_id: tx.chainId.toString(),
      nonce: tx.nonce.toString(),
      max_priority_fee_per_gas: tx.maxPriorityFeePerGas.toString(),
      max_fee_per_gas: tx.maxFeePerGas.toString(),
      gas_limit: tx.gasLimit.toString(),
      to: tx.to,
      value: tx.value.toString(),
      data: tx.data,
      unsigned: unsigned,
      signing_hash: parsed.unsignedHash,
      y_parity: parsed.signature.yParity,
      r: parsed.signature.r,
      s: parsed.signature.s,
      raw,
      hash: parsed.hash,
    });
  }
  return {
    file: 'tx1559.json',
    description: 'EIP-1559 (type 2) transactions with an empty access list: ethers Wallet.signTransaction, the unsigned serialization and signing hash from ethers Transaction (unsignedSerialized, unsignedHash), and the transaction hash keccak256(raw).',
    vectors,
  };
}
