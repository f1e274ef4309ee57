// SPDX-License-Identifier: Apache-2.0
// ed25519.json: the PKP Ed25519 key (docs/protocol.md §1 "PKP Ed25519 key") — its seed by node's
// HKDF-SHA256, its public key, signatures and verification by @noble/curves, and the Solana
// address, key pair and signatures by @solana/web3.js (WebCrypto Ed25519 underneath), which must
// agree with noble on every byte.

import { hkdfSync } from 'node:crypto';
import { assertEq, ethers, Rng } from './common.mjs';

let ed25519, solana;
try {
  ({ ed25519 } = await import('@noble/curves/ed25519.js'));
  solana = await import('@solana/web3.js');
} catch (e) {
  console.error(`cannot load @noble/curves or @solana/web3.js (${e.message.split('\n')[0]})\n` +
    'install them with: npm ci --prefix tests/vectors');
  process.exit(2);
}

/** The libraries this file is computed with, added to the `libraries` field of ed25519.json. */
export const ED25519_LIBRARIES = ['@noble/curves', '@solana/web3.js'];

const PKP_SALT = 'enact/pkp/v2';

// RFC 8032 §7.1 TEST 1, 2 and 3: seed, public key, message, signature.
const RFC8032 = [
  ['9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', '',
    'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'],
  ['4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c', '72',
    '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00'],
  ['c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025', 'af82',
    '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a'],
];

const hex = (b) => ethers.hexlify(b);
const bytes = (h) => ethers.getBytes(h);

/** HKDF-SHA256(root, "enact/pkp/v2", "ed25519" ‖ account ‖ path, 32 bytes). */
function ed25519Seed(root, account, path) {
  const info = ethers.getBytes(ethers.concat([ethers.toUtf8Bytes('ed25519'), account, path]));
  return hex(new Uint8Array(hkdfSync('sha256', bytes(root), ethers.toUtf8Bytes(PKP_SALT), info, 32)));
}

/** Public key, address and signature of `message` under `seed`, from both libraries (asserted equal). */
async function keyAndSignature(seed, message, what) {
  const pub = hex(ed25519.getPublicKey(bytes(seed)));
  const sig = hex(ed25519.sign(bytes(message), bytes(seed)));
  if (!ed25519.verify(bytes(sig), bytes(message), bytes(pub))) throw new Error(`${what}: noble does not verify its own signature`);
  const pair = await solana.createKeyPairFromPrivateKeyBytes(bytes(seed), true);
  const address = await solana.getAddressFromPublicKey(pair.publicKey);
  assertEq(hex(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey))), pub, `${what}: public key`);
  assertEq(address, ethers.encodeBase58(pub), `${what}: base58 address`);
  const solSig = hex(await solana.signBytes(pair.privateKey, bytes(message)));
  assertEq(solSig, sig, `${what}: signature`);
  if (!(await solana.verifySignature(pair.publicKey, bytes(sig), bytes(message))))
    throw new Error(`${what}: @solana/web3.js does not verify the signature`);
  // A flipped bit in the message or the signature must not verify.
  const bad = bytes(sig).slice();
  bad[0] ^= 1;
  if (ed25519.verify(bad, bytes(message), bytes(pub))) throw new Error(`${what}: altered signature verifies`);
  return { pub, address, sig };
}

export async function genEd25519() {
  const vectors = [];
  for (const [i, [seed, pub, msg, sig]] of RFC8032.entries()) {
    const got = await keyAndSignature('0x' + seed, '0x' + msg, `rfc8032-test-${i + 1}`);
    assertEq(got.pub, '0x' + pub, `RFC 8032 TEST ${i + 1} public key`);
    assertEq(got.sig, '0x' + sig, `RFC 8032 TEST ${i + 1} signature`);
    vectors.push({ name: `rfc8032-test-${i + 1}`, seed: '0x' + seed, public_key: got.pub, solana_address: got.address,
                   message: '0x' + msg, signature: got.sig });
  }

  const rng = new Rng(0x65643235);
  const lengths = [0, 1, 31, 32, 33, 64, 111, 112, 113, 255, 1000];
  for (let i = 0; i < 40; i++) {
    const root = i === 0 ? '0x' + '00'.repeat(32) : rng.hex(32);
    const account = i === 0 ? '0x' + '00'.repeat(32) : rng.hex(32);
    const path = i === 0 ? '0x' + '00'.repeat(32) : rng.hex(32);
    const other = rng.hex(32);
    const message = rng.hex(i < lengths.length ? lengths[i] : rng.int(300));
    const seed = ed25519Seed(root, account, path);
    const got = await keyAndSignature(seed, message, `pkp-${i}`);
    const otherPub = hex(ed25519.getPublicKey(bytes(ed25519Seed(root, other, path))));
    if (otherPub === got.pub) throw new Error(`pkp-${i}: another account gave the same key`);
    vectors.push({ name: `pkp-${i}`, root_key: root, account_hash: account, derivation_path: path, seed,
                   public_key: got.pub, solana_address: got.address, message, signature: got.sig,
                   other_account_hash: other, other_account_public_key: otherPub });
  }
  return {
    file: 'ed25519.json',
    libraries: ED25519_LIBRARIES,
    description: 'Ed25519 (RFC 8032) and the PKP Ed25519 key (docs/protocol.md §1): rfc8032-test-1..3 are the RFC\'s §7.1 vectors (seed given); pkp-<i> derive the seed as HKDF-SHA256(root, "enact/pkp/v2", "ed25519" ‖ accountHash ‖ path) with node:crypto hkdfSync; public key and signature by @noble/curves ed25519, equal to @solana/web3.js createKeyPairFromPrivateKeyBytes/signBytes; solana_address by @solana/web3.js getAddressFromPublicKey (base58 of the public key); other_account_public_key: the same path under other_account_hash.',
    vectors,
  };
}
