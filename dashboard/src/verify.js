// SPDX-License-Identifier: Apache-2.0
// Checking a run's secp256k1 signature in the page, without trusting the server's word: the
// public key recovered from (digest, r, s, v) must be the one the answer names, the signature must
// verify under it, and the key's Ethereum address must be the PKP's (docs/actions.md, signEcdsa).
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";

const unhex = (s) => hexToBytes(s.startsWith("0x") ? s.slice(2) : s);

/** The lower-case 0x address of an uncompressed (65-byte) secp256k1 public key. */
export function addressOf(publicKey) {
  return `0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(12))}`;
}

/**
 * Checks one entry of a run's `signatures`: { ok, recovered, address, reason }. `pkp` is the PKP
 * the run signed with (its address), compared case-insensitively.
 */
export function verifySignature(sig, pkp) {
  try {
    const rs = unhex(sig.signature).slice(0, 64);
    const digest = unhex(sig.digest);
    const v = Number(sig.v);
    if (rs.length !== 64 || digest.length !== 32 || (v !== 27 && v !== 28))
      return { ok: false, reason: "not a 65-byte signature over a 32-byte digest" };
    const rec = new Uint8Array(65);
    rec[0] = v - 27;
    rec.set(rs, 1);
    const recovered = secp256k1.Point.fromBytes(secp256k1.recoverPublicKey(rec, digest, { prehash: false })).toBytes(false);
    const named = secp256k1.Point.fromBytes(unhex(sig.public_key)).toBytes(false);
    const address = addressOf(recovered);
    if (bytesToHex(recovered) !== bytesToHex(named)) return { ok: false, address, reason: "recovers to another public key than the answer names" };
    if (!secp256k1.verify(rs, digest, named, { prehash: false })) return { ok: false, address, reason: "does not verify" };
    if (pkp && address !== pkp.toLowerCase()) return { ok: false, address, reason: `signed by ${address}, not the PKP ${pkp}` };
    return { ok: true, address, reason: `valid: signed by ${address}` };
  } catch (err) {
    return { ok: false, reason: `malformed: ${err.message}` };
  }
}
