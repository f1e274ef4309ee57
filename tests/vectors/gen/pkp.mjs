// SPDX-License-Identifier: Apache-2.0
// pkp.json: PKP key derivation (docs/protocol.md §1) with node:crypto HKDF-SHA256 and ethers.

import { hkdfSync } from 'node:crypto';
import { assertEq, assertNe, ethers, Rng, SECP256K1_N } from './common.mjs';

const PKP_SALT = 'enact/pkp/v2';
const PKP_LEGACY_SALT = 'enact/pkp/v1';
const SERVER_SALT = 'enact/server/v1';

/** HKDF-SHA256(ikm = root, salt, info, 32 bytes) with node's crypto, as hex. */
function pkpHkdf(root, info, salt = PKP_SALT) {
  return ethers.hexlify(new Uint8Array(hkdfSync('sha256', ethers.getBytes(root), ethers.toUtf8Bytes(salt), info, 32)));
}

/** info = label ‖ account ‖ path [‖ counter byte]; the legacy rule had no account. */
function pkpInfo(label, account, path, counter) {
  const parts = [ethers.toUtf8Bytes(label)];
  if (account !== null) parts.push(ethers.getBytes(account));
  parts.push(ethers.getBytes(path));
  if (counter > 0) parts.push(new Uint8Array([counter]));
  return ethers.getBytes(ethers.concat(parts));
}

/** The first HKDF output for info(counter) that is a valid scalar, trying counters 0 (no byte), 1, 2, …. */
function firstValidScalar(root, salt, infoFor) {
  for (let counter = 0; counter <= 255; counter++) {
    const k = pkpHkdf(root, infoFor(counter), salt);
    const v = BigInt(k);
    if (v > 0n && v < SECP256K1_N) return { key: k, counter };
  }
  throw new Error('no valid signing scalar');
}

/** The PKP signing key of (account, path). */
function pkpSigningKey(root, account, path) {
  return firstValidScalar(root, PKP_SALT, (c) => pkpInfo('sign', account, path, c));
}

export function genPkp() {
  // RFC 5869 A.1 first, so a node whose hkdfSync were wrong could not produce vectors.
  const rfc = ethers.hexlify(new Uint8Array(hkdfSync('sha256', ethers.getBytes('0x' + '0b'.repeat(22)),
    ethers.getBytes('0x000102030405060708090a0b0c'), ethers.getBytes('0xf0f1f2f3f4f5f6f7f8f9'), 42)));
  assertEq(rfc, '0x3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865', 'RFC 5869 A.1 HKDF');

  const rng = new Rng(0x706b7031);
  const coder = ethers.AbiCoder.defaultAbiCoder();
  const U64_MAX = (1n << 64n) - 1n;
  const vectors = [];
  // [root, path source]: fixed edges first (all-zero and all-ones root and path, API-mode
  // indexes 0 and 2^64 - 1), then random roots with random or API-mode paths.
  const fixed = [
    { name: 'zero-root-zero-path', root: '0x' + '00'.repeat(32), path: { random: '0x' + '00'.repeat(32) } },
    { name: 'ones-root-ones-path', root: '0x' + 'ff'.repeat(32), path: { random: '0x' + 'ff'.repeat(32) } },
    { name: 'api-index-0', root: null, path: { index: 0n } },
    { name: 'api-index-max', root: null, path: { index: U64_MAX } },
  ];
  const total = 32;
  for (let i = 0; i < total; i++) {
    const f = fixed[i];
    const name = f ? f.name : `random-${i - fixed.length}`;
    const root = f?.root ?? rng.hex(32);
    let src = f?.path;
    if (!src) {
      src = rng.chance(0.5)
        ? { random: rng.hex(32) }
        : { index: rng.chance(0.3) ? BigInt(rng.int(16)) : rng.bits(rng.pick([8, 32, 53, 64])) };
    }
    const v = { name, root_key: root };
    let path;
    let account;
    if (src.random) {
      v.path_kind = 'random';
      path = src.random;
      // A signature-minted wallet belongs to its signer's account: keccak256(abi.encodePacked(wallet)).
      const wallet = ethers.getAddress(rng.hex(20));
      account = ethers.solidityPackedKeccak256(['address'], [wallet]);
    } else {
      const apiKeyHash = rng.hex(32);
      path = ethers.keccak256(coder.encode(['uint256', 'uint256'], [apiKeyHash, src.index]));
      assertEq(path, ethers.solidityPackedKeccak256(['uint256', 'uint256'], [apiKeyHash, src.index]), `pkp ${name}: abi.encode of two uint256 is their packed form`);
      v.path_kind = 'api';
      v.api_key_hash = apiKeyHash;
      v.index = src.index.toString();
      account = apiKeyHash;  // an API-mode PKP belongs to the account whose hash made its path
    }
    v.account_hash = account;
    v.derivation_path = path;
    const { key, counter } = pkpSigningKey(root, account, path);
    const signing = new ethers.SigningKey(key);
    const digest = rng.hex(32);
    const sig = signing.sign(digest);
    assertEq(ethers.recoverAddress(digest, sig), ethers.computeAddress(signing.publicKey), `pkp ${name}: recover`);
    v.signing_key = key;
    v.counter = counter;
    v.public_key = signing.publicKey;
    v.address = ethers.computeAddress(key);
    v.symmetric_key = pkpHkdf(root, pkpInfo('sym', account, path, 0));
    v.digest = digest;
    v.signature = sig.serialized;
    // The same path under another account is another key (docs/protocol.md §1 "owning account").
    const otherAccount = rng.hex(32);
    v.other_account_hash = otherAccount;
    v.other_account_address = ethers.computeAddress(pkpSigningKey(root, otherAccount, path).key);
    assertNe(v.other_account_address, v.address, `pkp ${name}: another account, another key`);
    // The earlier path-only rule, kept only to recognise a data directory from before.
    v.legacy_address = ethers.computeAddress(firstValidScalar(root, PKP_LEGACY_SALT, (c) => pkpInfo('sign', null, path, c)).key);
    vectors.push(v);
  }
  // The server's own keys (docs/protocol.md §1 "server keys"): HKDF-SHA256(root, "enact/server/v1", purpose).
  const serverKeys = [];
  for (let i = 0; i < 4; i++) {
    const root = i === 0 ? '0x' + '00'.repeat(32) : rng.hex(32);
    for (const purpose of ['api-payer/0', 'api-payer/1', 'triggers/usage-key-seal/v1']) {
      const signing = firstValidScalar(root, SERVER_SALT, (c) => {
        const parts = [ethers.toUtf8Bytes(purpose)];
        if (c > 0) parts.push(new Uint8Array([c]));
        return ethers.getBytes(ethers.concat(parts));
      });
      serverKeys.push({ purpose, root_key: root, key: pkpHkdf(root, ethers.toUtf8Bytes(purpose), SERVER_SALT),
                        signing_key: signing.key, signing_address: ethers.computeAddress(signing.key) });
    }
  }
  return {
    file: 'pkp.json',
    description: 'PKP derivation (docs/protocol.md §1): signing key HKDF-SHA256(root, "enact/pkp/v2", "sign" ‖ accountHash ‖ path [‖ counter]) and symmetric key (info "sym" ‖ accountHash ‖ path) from node:crypto hkdfSync, the address from ethers computeAddress, API-mode paths keccak256(AbiCoder.encode(["uint256","uint256"], [apiKeyHash, index])) owned by apiKeyHash, signature-minted paths owned by keccak256(abi.encodePacked(wallet)), ethers SigningKey.sign(digest); other_account_address: the same path under another account; legacy_address: the earlier path-only rule (salt "enact/pkp/v1"); server_keys: HKDF-SHA256(root, "enact/server/v1", purpose [‖ counter]).',
    sections: { vectors, server_keys: serverKeys },
  };
}
