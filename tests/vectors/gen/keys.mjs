// SPDX-License-Identifier: Apache-2.0
// keys.json: keys, addresses and EIP-191 message signatures (ethers, viem).

import {
  assertEq, ethers, privateKeyToAccount, randomPrivateKey, randomText, Rng,
} from './common.mjs';

export async function genKeys() {
  const rng = new Rng(0x6b657973);
  const vectors = [];
  for (let i = 0; i < 50; i++) {
    const key = randomPrivateKey(rng);
    const wallet = new ethers.Wallet(key);
    // Mostly text messages (UTF-8), some raw byte strings; the hash covers `message_hex`.
    const text = rng.chance(0.8);
    const msgBytes = text ? ethers.toUtf8Bytes(rng.chance(0.1) ? '' : randomText(rng, 20)) : rng.bytes(rng.pick([1, 32, 65, 200]));
    const hash = ethers.hashMessage(msgBytes);
    const signature = await wallet.signMessage(msgBytes);
    const viemSig = await privateKeyToAccount(key).signMessage({ message: { raw: msgBytes } });
    assertEq(viemSig, signature, `keys ${i}: signMessage`);
    if (text) assertEq(ethers.hashMessage(ethers.toUtf8String(msgBytes)), hash, `keys ${i}: text hash`);
    assertEq(ethers.verifyMessage(msgBytes, signature), wallet.address, `keys ${i}: recover`);
    const v = { index: i, private_key: key, public_key: wallet.signingKey.publicKey, public_key_compressed: wallet.signingKey.compressedPublicKey, address: wallet.address };
    if (text) v.message = ethers.toUtf8String(msgBytes);
    v.message_hex = ethers.hexlify(msgBytes);
    v.eip191_hash = hash;
    v.signature = signature;
    vectors.push(v);
  }
  return {
    file: 'keys.json',
    description: 'secp256k1 keys: ethers Wallet address and public keys, EIP-191 hashMessage of a message, and Wallet.signMessage (equal to viem signMessage).',
    vectors,
  };
}
