// SPDX-License-Identifier: Apache-2.0
// cid.json: IPFS CIDs of UnixFS files (ipfs-only-hash).

import { assertEq, ethers, Hash } from './common.mjs';

/** The deterministic content the C++ test regenerates: byte i = (i * 31 + 7) & 0xff. */
function patternContent(size) {
  const buf = new Uint8Array(size);
  for (let i = 0; i < size; i++) buf[i] = (i * 31 + 7) & 0xff;
  return buf;
}

const JS_SNIPPET = `// Enact action: sign a greeting
const greeting = \`héllo, \${params.name ?? "wörld"} 👋 — 你好\`;
const sig = await Enact.signMessage({ pkpId: params.pkpId, message: greeting });
Enact.setResponse({ greeting, sig });
`;

async function cidVector(name, content, extra) {
  const v0 = await Hash.of(content, {});
  const v1 = await Hash.of(content, { cidVersion: 1, rawLeaves: true });
  return { name, ...extra, cid_v0: v0, cid_v1: v1, hashed_cid: ethers.keccak256(ethers.toUtf8Bytes(v0)) };
}

export async function genCid() {
  const vectors = [];
  const chunk = 262144;
  for (const size of [0, 1, 11, 1024, chunk - 1, chunk, chunk + 1, 174 * chunk, 174 * chunk + 1, 5 * 1024 * 1024]) {
    vectors.push(await cidVector(`pattern-${size}`, patternContent(size), { size, content: 'pattern' }));
  }
  for (const [name, text] of [['hello-world', 'hello world\n'], ['js-snippet', JS_SNIPPET]]) {
    const bytes = ethers.toUtf8Bytes(text);
    vectors.push(await cidVector(name, bytes, { size: bytes.length, content: 'utf8', content_utf8: text }));
  }
  // Well-known values: the empty file and "hello world\n" as `ipfs add` prints them.
  assertEq(vectors[0].cid_v0, 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH', 'empty file CIDv0');
  assertEq(vectors.find((v) => v.name === 'hello-world').cid_v0, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', 'hello world CIDv0');
  return {
    file: 'cid.json',
    description: 'IPFS CIDs of UnixFS files as `ipfs add` computes them (ipfs-only-hash: 256 KiB fixed chunks, balanced DAG, 174 links per node): CIDv0 with dag-pb leaves, CIDv1 with raw leaves (--cid-version=1), and keccak256 of the CIDv0 string. Pattern content: byte i = (i * 31 + 7) & 0xff.',
    vectors,
  };
}
