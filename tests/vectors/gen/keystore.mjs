// SPDX-License-Identifier: Apache-2.0
// keystore.json: Web3 Secret Storage v3 files. scrypt files are written by ethers
// (encryptKeystoreJsonSync with a given salt, IV and id, its "x-ethers" metadata dropped because
// it carries the time of writing); ethers writes no PBKDF2 files, so those are built here from
// ethers' pbkdf2 and node's AES-128-CTR and then read back by ethers' decryptKeystoreJsonSync,
// which must give the key. The two example files of the Web3 Secret Storage definition are
// included as published and checked the same way: its PBKDF2 example only, because the scrypt
// example's n = 2^18 with r = 1 breaks RFC 7914's N < 2^(16·r), which ethers (noble) and OpenSSL
// both enforce.

import { createCipheriv } from 'node:crypto';
import { ethers, Rng } from './common.mjs';

const SPEC_KEY = '0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d';
const SPEC_FILES = [
  {
    crypto: {
      cipher: 'aes-128-ctr', cipherparams: { iv: '6087dab2f9fdbbfaddc31a909735c1e6' },
      ciphertext: '5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46', kdf: 'pbkdf2',
      kdfparams: { c: 262144, dklen: 32, prf: 'hmac-sha256',
                   salt: 'ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd' },
      mac: '517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2',
    },
    id: '3198bc9c-6672-5ab3-d995-4942343ae5b6', version: 3,
  },
];

const strip = (h) => h.replace(/^0x/, '');

export function genKeystore() {
  const rng = new Rng(0x6b657973);
  const vectors = [];
  const passwords = ['', 'correct horse battery staple', 'p\u00e4ssw\u00f6rd \u2013 \u{1f511}', 'x'];

  // scrypt, as ethers writes it.
  [[1024, 8, 1], [2048, 8, 1], [4096, 1, 2], [1024, 2, 3]].forEach(([N, r, p], i) => {
    const wallet = new ethers.Wallet(rng.hex(32));
    const salt = rng.hex(32), iv = rng.hex(16);
    const file = JSON.parse(ethers.encryptKeystoreJsonSync(
      { address: wallet.address, privateKey: wallet.privateKey }, passwords[i],
      { salt, iv, uuid: rng.bytes(16), scrypt: { N, r, p } }));
    delete file['x-ethers'];
    const id = file.id;
    vectors.push({ source: 'ethers', kdf: 'scrypt', password: passwords[i], private_key: wallet.privateKey,
                   address: wallet.address, salt: strip(salt), iv: strip(iv), id, n: N, r, p, c: 0,
                   keystore: JSON.stringify(file) });
  });

  // PBKDF2-HMAC-SHA256, built by hand and read back by ethers.
  [[1000, 'correct horse battery staple'], [4096, ''], [1, 'p\u00e4ssw\u00f6rd']].forEach(([c, password]) => {
    const wallet = new ethers.Wallet(rng.hex(32));
    const salt = rng.hex(32), iv = rng.hex(16);
    const id = ethers.uuidV4(rng.bytes(16));
    const dk = ethers.getBytes(ethers.pbkdf2(ethers.toUtf8Bytes(password), salt, c, 32, 'sha256'));
    const cipher = createCipheriv('aes-128-ctr', dk.slice(0, 16), ethers.getBytes(iv));
    const ciphertext = Buffer.concat([cipher.update(ethers.getBytes(wallet.privateKey)), cipher.final()]);
    const mac = ethers.keccak256(ethers.concat([dk.slice(16, 32), ciphertext]));
    const file = {
      address: strip(wallet.address.toLowerCase()),
      crypto: { cipher: 'aes-128-ctr', cipherparams: { iv: strip(iv) }, ciphertext: ciphertext.toString('hex'),
                kdf: 'pbkdf2', kdfparams: { c, dklen: 32, prf: 'hmac-sha256', salt: strip(salt) }, mac: strip(mac) },
      id, version: 3,
    };
    const back = ethers.decryptKeystoreJsonSync(JSON.stringify(file), password);
    if (back.privateKey !== wallet.privateKey) throw new Error('ethers does not read the PBKDF2 keystore back');
    vectors.push({ source: 'built, read by ethers', kdf: 'pbkdf2', password, private_key: wallet.privateKey,
                   address: wallet.address, salt: strip(salt), iv: strip(iv), id, n: 0, r: 0, p: 0, c,
                   keystore: JSON.stringify(file) });
  });

  // The specification's example (no address field).
  for (const file of SPEC_FILES) {
    const back = ethers.decryptKeystoreJsonSync(JSON.stringify(file), 'testpassword');
    if (back.privateKey !== SPEC_KEY) throw new Error('ethers does not read the specification example');
    const k = file.crypto.kdfparams;
    vectors.push({ source: 'Web3 Secret Storage definition', kdf: file.crypto.kdf, password: 'testpassword',
                   private_key: SPEC_KEY, address: back.address, salt: k.salt, iv: file.crypto.cipherparams.iv,
                   id: file.id, n: k.n ?? 0, r: k.r ?? 0, p: k.p ?? 0, c: k.c ?? 0, keystore: JSON.stringify(file) });
  }
  return {
    file: 'keystore.json',
    description: 'Web3 Secret Storage v3 keystore files (scrypt from ethers, PBKDF2 read back by ethers, the definition\'s PBKDF2 example).',
    vectors,
  };
}
