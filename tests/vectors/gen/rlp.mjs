// SPDX-License-Identifier: Apache-2.0
// rlp.json: RLP encodings (ethers).

import { assertEq, ethers, Rng } from './common.mjs';

function randomRlpString(rng) {
  switch (rng.int(12)) {
    case 0: return '0x';
    case 1: return ethers.hexlify(new Uint8Array([rng.int(0x80)]));
    case 2: return ethers.hexlify(new Uint8Array([0x80 + rng.int(0x80)]));
    case 3: return rng.hex(55);
    case 4: return rng.hex(56);
    case 5: return rng.hex(rng.chance(0.15) ? 1024 : rng.pick([255, 256, 57]));
    case 6: return ethers.hexlify(new Uint8Array([rng.pick([0x00, 0x7f, 0x80, 0x81, 0xb7, 0xb8, 0xbf, 0xc0, 0xf7, 0xf8, 0xff])]));
    default: return rng.hex(rng.range(2, 54));
  }
}

function randomRlpItem(rng, depth) {
  if (depth >= 4 || rng.chance(depth === 0 ? 0.2 : 0.6)) return randomRlpString(rng);
  const r = rng.int(10);
  // Long lists (payload over 55 bytes) mostly near the root, to keep the file small.
  const n = r === 0 ? 0 : r < 8 || depth > 1 ? rng.range(1, 4) : rng.range(5, 12);
  return Array.from({ length: n }, () => randomRlpItem(rng, depth + 1));
}

export function genRlp() {
  const rng = new Rng(0x41c0ffee);
  const vectors = [];
  const push = (name, decoded) => {
    const encoded = ethers.encodeRlp(decoded);
    assertEq(ethers.decodeRlp(encoded), decoded, `${name}: decode round-trip`);
    vectors.push({ name, decoded, encoded });
  };
  // Boundaries of the encoding (Ethereum Yellow Paper, appendix B).
  push('empty-string', '0x');
  push('byte-00', '0x00');
  push('byte-7f', '0x7f');
  push('byte-80', '0x80');
  push('byte-ff', '0xff');
  push('string-55', '0x' + 'ab'.repeat(55));
  push('string-56', '0x' + 'ab'.repeat(56));
  push('string-1024', '0x' + 'cd'.repeat(1024));
  push('empty-list', []);
  push('list-of-empty-list', [[]]);
  push('set-theoretic-three', [[], [[]], [[], [[]]]]);
  push('list-payload-55', ['0x' + '11'.repeat(53)]);
  push('list-payload-56', ['0x' + '11'.repeat(54)]);
  push('dog-cat', [ethers.hexlify(ethers.toUtf8Bytes('cat')), ethers.hexlify(ethers.toUtf8Bytes('dog'))]);
  for (let i = 0; vectors.length < 220; i++) push(`random-${i}`, randomRlpItem(rng, 0));
  return {
    file: 'rlp.json',
    description: 'RLP: nested byte strings and lists encoded with ethers encodeRlp; `decoded` has exactly the shape of ethers decodeRlp(encoded).',
    vectors,
  };
}
