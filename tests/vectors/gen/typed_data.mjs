// SPDX-License-Identifier: Apache-2.0
// typed_data.json: EIP-712 typed data (ethers, @metamask/eth-sig-util, viem).

import {
  assertEq, ATOMIC_TYPES, ethers, privateKeyToAccount, randomAddress, randomIdent, randomInt,
  randomPrivateKey, randomText, randomUint, Rng, SignTypedDataVersion, TypedDataUtils,
} from './common.mjs';

const DOMAIN_FIELDS = [
  ['name', 'string'], ['version', 'string'], ['chainId', 'uint256'],
  ['verifyingContract', 'address'], ['salt', 'bytes32'],
];

/**
 * A JSON number where it is exact (|v| <= 2^53 - 1), otherwise a decimal string; non-negative
 * values are sometimes a 0x hex string. Negative values are never hex: eth-sig-util and viem
 * reject "-0x…" (BigInt() does not parse it), ethers accepts it.
 */
function jsonInteger(rng, v) {
  const safe = v >= -BigInt(Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER);
  const r = rng.int(10);
  if (safe && r < 5) return Number(v);
  if (v >= 0n && r < 8) return `0x${v.toString(16)}`;
  return v.toString(10);
}

function typedAtomicValue(rng, type) {
  if (type.startsWith('uint')) return jsonInteger(rng, randomUint(rng, Number(type.slice(4))));
  if (type.startsWith('int')) return jsonInteger(rng, randomInt(rng, Number(type.slice(3))));
  if (type === 'address') {
    const a = randomAddress(rng);
    return rng.chance(0.5) ? a : a.toLowerCase();
  }
  if (type === 'bool') return rng.chance(0.5);
  if (type === 'string') return rng.chance(0.1) ? '' : randomText(rng);
  if (type === 'bytes') return rng.hex(rng.chance(0.15) ? 0 : rng.range(1, rng.chance(0.2) ? 100 : 40));
  if (type.startsWith('bytes')) return rng.hex(Number(type.slice(5)));
  throw new Error(`unknown atomic type ${type}`);
}

/** Random struct-type graph: level-1 primary type, referencing types of deeper levels only (no cycles). */
function randomTypedDataTypes(rng, usedNames) {
  const types = {};
  const levels = [[], [], [], []]; // names by depth 1..3
  const freshName = () => {
    for (;;) {
      const n = rng.pick(['Mail', 'Person', 'Order', 'Item', 'Permit', 'Grant', 'Asset', 'Entry', 'Node', 'Group', 'Scope', 'Key']) +
        (rng.chance(0.5) ? randomIdent(rng, rng.range(1, 4)).replace(/^./, (c) => c.toUpperCase()) : String(rng.int(100)));
      if (!usedNames.has(n)) {
        usedNames.add(n);
        return n;
      }
    }
  };
  const primary = freshName();
  const makeStruct = (name, depth) => {
    levels[depth].push(name);
    const fields = [];
    const fieldNames = new Set();
    const nFields = rng.chance(0.04) ? 0 : rng.range(1, depth === 1 ? 7 : 5);
    for (let i = 0; i < nFields; i++) {
      let fname;
      do fname = randomIdent(rng, rng.range(1, 10)); while (fieldNames.has(fname));
      fieldNames.add(fname);
      let base;
      if (depth < 3 && rng.chance(0.3)) {
        // A struct reference: reuse a deeper type sometimes, so one type is reached by several paths.
        const deeper = levels.slice(depth + 1).flat();
        if (deeper.length && rng.chance(0.35)) base = rng.pick(deeper);
        else {
          base = freshName();
          makeStruct(base, depth + 1);
        }
      } else {
        base = rng.pick(ATOMIC_TYPES);
      }
      let t = base;
      const dims = rng.chance(0.3) ? (rng.chance(0.25) ? 2 : 1) : 0;
      for (let d = 0; d < dims; d++) t += rng.chance(0.5) ? '[]' : `[${rng.range(1, 3)}]`;
      fields.push({ name: fname, type: t });
    }
    types[name] = fields;
  };
  makeStruct(primary, 1);
  return { types, primary };
}

function typedValue(rng, types, type) {
  const m = type.match(/^(.*)\[(\d*)\]$/);
  if (m) {
    const len = m[2] === '' ? (rng.chance(0.15) ? 0 : rng.range(1, 3)) : Number(m[2]);
    return Array.from({ length: len }, () => typedValue(rng, types, m[1]));
  }
  if (types[type]) {
    const obj = {};
    for (const f of types[type]) obj[f.name] = typedValue(rng, types, f.type);
    return obj;
  }
  return typedAtomicValue(rng, type);
}

function randomDomain(rng) {
  const domain = {};
  const fields = [];
  for (const [name, type] of DOMAIN_FIELDS) {
    if (!rng.chance(0.6)) continue;
    fields.push({ name, type });
    switch (name) {
      case 'name': domain.name = rng.chance(0.5) ? rng.pick(['Ether Mail', 'Svc ChainSecured', 'Permit2', 'USD Coin']) : randomText(rng, 5); break;
      case 'version': domain.version = rng.pick(['1', '2', '1.0.0', 'v4', '']); break;
      case 'chainId': {
        const id = rng.pick([1n, 10n, 56n, 137n, 8453n, 42161n, 11155111n, 175188n, rng.bits(rng.range(1, 64)), rng.bits(256)]);
        const r = rng.int(4);
        domain.chainId = id <= BigInt(Number.MAX_SAFE_INTEGER) && r < 2 ? Number(id) : r === 3 ? `0x${id.toString(16)}` : id.toString(10);
        break;
      }
      case 'verifyingContract': {
        const a = randomAddress(rng);
        domain.verifyingContract = rng.chance(0.7) ? a : a.toLowerCase();
        break;
      }
      case 'salt': domain.salt = rng.hex(32); break;
    }
  }
  return { domain, fields };
}

/** Typed data as ethers takes it: types without EIP712Domain (ethers derives it from the domain). */
function ethersTypes(doc) {
  const t = { ...doc.types };
  delete t.EIP712Domain;
  return t;
}

async function typedDataVector(name, doc, key) {
  const types = ethersTypes(doc);
  const enc = ethers.TypedDataEncoder.from(types);
  if (enc.primaryType !== doc.primaryType) throw new Error(`ethers infers primary type ${enc.primaryType}, document says ${doc.primaryType}`);
  const digestEthers = ethers.TypedDataEncoder.hash(doc.domain, types, doc.message);
  const digestEsu = ethers.hexlify(TypedDataUtils.eip712Hash(doc, SignTypedDataVersion.V4));
  assertEq(digestEsu, digestEthers, `${name}: digest`);
  const encodeType = enc.encodeType(doc.primaryType);
  assertEq(TypedDataUtils.encodeType(doc.primaryType, doc.types), encodeType, `${name}: encodeType`);
  const domainSeparator = ethers.TypedDataEncoder.hashDomain(doc.domain);
  assertEq(ethers.hexlify(TypedDataUtils.hashStruct('EIP712Domain', doc.domain, doc.types, SignTypedDataVersion.V4)),
    domainSeparator, `${name}: domain separator`);
  const hashStruct = enc.hash(doc.message);
  const wallet = new ethers.Wallet(key);
  const sigViem = await privateKeyToAccount(key).signTypedData(doc);
  const sigEthers = await wallet.signTypedData(doc.domain, types, doc.message);
  assertEq(sigViem, sigEthers, `${name}: signature`);
  assertEq(ethers.verifyTypedData(doc.domain, types, doc.message, sigViem), wallet.address, `${name}: recover`);
  return {
    name,
    document: doc,
    encode_type: encodeType,
    domain_separator: domainSeparator,
    hash_struct: hashStruct,
    digest_ethers: digestEthers,
    digest_eth_sig_util: digestEsu,
    private_key: key,
    signer: wallet.address,
    signature_viem: sigViem,
  };
}

/** Fixed, well-known documents. */
function fixedTypedData() {
  // EIP-712's own example (eips.ethereum.org/EIPS/eip-712, "Example"), signed with keccak256("cow").
  const mail = {
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' },
      ],
      Person: [{ name: 'name', type: 'string' }, { name: 'wallet', type: 'address' }],
      Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person' }, { name: 'contents', type: 'string' }],
    },
    primaryType: 'Mail',
    domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
    message: {
      from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
      to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
      contents: 'Hello, Bob!',
    },
  };
  // eth-sig-util's V4 example with arrays of structs (Person.wallets, Mail.to as Person[]).
  const mailArrays = {
    types: {
      EIP712Domain: mail.types.EIP712Domain,
      Person: [{ name: 'name', type: 'string' }, { name: 'wallets', type: 'address[]' }],
      Mail: [{ name: 'from', type: 'Person' }, { name: 'to', type: 'Person[]' }, { name: 'contents', type: 'string' }],
      Group: [{ name: 'name', type: 'string' }, { name: 'members', type: 'Person[]' }],
    },
    primaryType: 'Mail',
    domain: mail.domain,
    message: {
      from: { name: 'Cow', wallets: ['0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826', '0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF'] },
      to: [{ name: 'Bob', wallets: ['0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB', '0xB0BdaBea57B0BDABeA57b0bdABEA57b0BDabEa57', '0xB0B0b0b0b0b0B000000000000000000000000000'] }],
      contents: 'Hello, Bob!',
    },
  };
  // Group is unused by Mail: ethers rejects unreachable types, so the vector keeps only reachable ones.
  delete mailArrays.types.Group;
  // The project's ChainSecured envelope shape (docs/protocol.md §2), with a fixed issuedAt.
  const chainSecured = {
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }],
      CreateWallet: [
        { name: 'address', type: 'address' }, { name: 'name', type: 'string' },
        { name: 'description', type: 'string' }, { name: 'issuedAt', type: 'uint256' },
      ],
    },
    primaryType: 'CreateWallet',
    domain: { name: 'Svc ChainSecured', version: '1', chainId: 175188 },
    message: { address: '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf', name: 'my wallet', description: '', issuedAt: 1735689600 },
  };
  const cow = ethers.keccak256(ethers.toUtf8Bytes('cow'));
  // The canonical wallet-proof envelope of each primary type (sdk eip712/envelope.hpp): what
  // the ChainSecured endpoints and X-Wallet-Auth accept, signed here by the reference libraries.
  const envelopeKey = ethers.keccak256(ethers.toUtf8Bytes('envelope owner'));
  const envelopeAddress = new ethers.Wallet(envelopeKey).address;
  const envelopeOf = (primary, chainId, issuedAt) => ({
    types: {
      EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }],
      [primary]: [{ name: 'address', type: 'address' }, { name: 'issuedAt', type: 'uint256' }],
    },
    primaryType: primary,
    domain: { name: 'Svc ChainSecured', version: '1', chainId },
    message: { address: envelopeAddress, issuedAt },
  });
  // Version 2 (docs/protocol.md §2 "Envelope version 2"): the domain names the registry and each
  // message what it authorizes.
  const word = (label) => ethers.keccak256(ethers.toUtf8Bytes(label));
  const registry = ethers.getAddress('0x' + word('registry').slice(26));
  const members2 = {
    CreateWallet: [['address', 'address'], ['issuedAt', 'uint256'], ['nonce', 'bytes32']],
    AddUsageApiKey: [['address', 'address'], ['issuedAt', 'uint256'], ['nonce', 'bytes32']],
    ConvertAccount: [['address', 'address'], ['account', 'bytes32'], ['issuedAt', 'uint256'], ['nonce', 'bytes32']],
    BillingAuth: [['address', 'address'], ['method', 'string'], ['path', 'string'], ['bodyHash', 'bytes32'], ['issuedAt', 'uint256']],
  };
  const envelope2Of = (primary, chainId, values) => ({
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' }, { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' },
      ],
      [primary]: members2[primary].map(([name, type]) => ({ name, type })),
    },
    primaryType: primary,
    domain: { name: 'Svc ChainSecured', version: '2', chainId, verifyingContract: registry },
    message: { address: envelopeAddress, ...values },
  });
  return [
    ['eip712-mail', mail, cow],
    ['eth-sig-util-mail-arrays', mailArrays, cow],
    ['chain-secured-create-wallet', chainSecured, '0x' + '00'.repeat(31) + '01'],
    ['envelope-create-wallet', envelopeOf('CreateWallet', 175188, 1735689600), envelopeKey],
    ['envelope-add-usage-api-key', envelopeOf('AddUsageApiKey', 175188, 1735689601), envelopeKey],
    ['envelope-convert-account', envelopeOf('ConvertAccount', 31337, 1735689602), envelopeKey],
    ['envelope-billing-auth', envelopeOf('BillingAuth', 175188, 1735689603), envelopeKey],
    ['envelope2-create-wallet', envelope2Of('CreateWallet', 175188, { issuedAt: 1735689600, nonce: word('nonce 1') }), envelopeKey],
    ['envelope2-add-usage-api-key', envelope2Of('AddUsageApiKey', 4294967311, { issuedAt: 1735689601, nonce: word('nonce 2') }), envelopeKey],
    ['envelope2-convert-account', envelope2Of('ConvertAccount', 175188, { account: word('account'), issuedAt: 1735689602, nonce: word('nonce 3') }), envelopeKey],
    ['envelope2-billing-auth', envelope2Of('BillingAuth', 175188, {
      method: 'GET', path: '/core/v1/billing/usage?limit=20&cursor=abc', bodyHash: ethers.keccak256('0x'), issuedAt: 1735689603,
    }), envelopeKey],
    ['envelope2-billing-auth-post', envelope2Of('BillingAuth', 175188, {
      method: 'POST', path: '/core/v1/billing/create_payment_intent', bodyHash: ethers.keccak256(ethers.toUtf8Bytes('{"amount_cents":500}')), issuedAt: 1735689604,
    }), envelopeKey],
  ];
}

export async function genTypedData() {
  const rng = new Rng(0x7d712001);
  const vectors = [];
  const fixed = fixedTypedData();
  const fixedCount = fixed.length;
  for (const [name, doc, key] of fixed) vectors.push(await typedDataVector(name, doc, key));
  // The EIP's published signature for its Mail example.
  assertEq(vectors[0].digest_ethers, '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2', 'eip712-mail digest');
  assertEq(vectors[0].signature_viem,
    '0x4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b915621c',
    'eip712-mail signature');
  const seenAtomic = new Set();
  const rejected = {};
  const target = 320;
  for (let i = 0; vectors.length < target + fixedCount; i++) {
    const usedNames = new Set();
    const { types, primary } = randomTypedDataTypes(rng, usedNames);
    const { domain, fields } = randomDomain(rng);
    // Types listed in a shuffled order: the encoding must not depend on it.
    const ordered = { EIP712Domain: fields };
    for (const n of rng.shuffle(Object.keys(types))) ordered[n] = types[n];
    const doc = { types: ordered, primaryType: primary, domain, message: typedValue(rng, types, primary) };
    const key = randomPrivateKey(rng);
    try {
      vectors.push(await typedDataVector(`random-${i}`, doc, key));
    } catch (e) {
      if (/libraries disagree/.test(e.message)) throw e;
      const reason = e.shortMessage ?? e.message.split('\n')[0];
      rejected[reason] = (rejected[reason] ?? 0) + 1;
      continue;
    }
    for (const fs of Object.values(types)) for (const f of fs) seenAtomic.add(f.type.replace(/\[\d*\]/g, ''));
  }
  const missing = ATOMIC_TYPES.filter((t) => !seenAtomic.has(t));
  if (missing.length) throw new Error(`typed_data: atomic types never generated: ${missing.join(', ')}`);
  return {
    file: 'typed_data.json',
    description: 'EIP-712 typed data (eth_signTypedData_v4 documents): digests from ethers and eth-sig-util, encodeType, domain separator, struct hash, and a signature from viem (equal to ethers Wallet.signTypedData).',
    vectors,
    rejected,
  };
}
