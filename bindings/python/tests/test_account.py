# SPDX-License-Identifier: Apache-2.0
"""The eth-account-shaped API: Account.from_key, address, sign_message, sign_typed_data,
recover_message, recover_typed_data and to_checksum_address, against the interop vectors of
tests/vectors/ (keys.json: ethers Wallet and viem signMessage; typed_data.json: viem and
eth-sig-util; eip55.json: ethers getAddress)."""

from __future__ import annotations

import json
import os
import unittest

import enact

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.environ.get(
    "ENACT_VECTORS_DIR", os.path.join(HERE, "..", "..", "..", "tests", "vectors")
)


def vectors(name: str) -> list:
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return json.load(f)["vectors"]


def b(hex_text: str) -> bytes:
    assert hex_text.startswith("0x")
    return bytes.fromhex(hex_text[2:])


KEYS = vectors("keys.json")
TYPED = vectors("typed_data.json")


class ChecksumAddressTest(unittest.TestCase):
    def test_vectors(self):
        cases = vectors("eip55.json")
        self.assertGreater(len(cases), 5)
        for v in cases:
            with self.subTest(v["lowercase"]):
                self.assertEqual(enact.to_checksum_address(v["lowercase"]), v["checksummed"])
                self.assertEqual(enact.to_checksum_address(v["lowercase"].upper().replace("0X", "0x")),
                                 v["checksummed"])
                self.assertTrue(enact.is_checksum_address(v["checksummed"]))

    def test_wrong_case_is_not_a_checksum(self):
        good = "0xd727d0933EE4Ee9D2Fdcf16f337f116cfaf023BE"
        self.assertTrue(enact.is_checksum_address(good))
        self.assertFalse(enact.is_checksum_address(good.replace("E", "e", 1)))
        self.assertFalse(enact.is_checksum_address(good.lower()))
        self.assertFalse(enact.is_checksum_address(b"0x" + b"00" * 20))

    def test_bad_input(self):
        for bad in ("", "0x", "d727d0933ee4ee9d2fdcf16f337f116cfaf023be", "0x" + "g" * 40,
                    "0x" + "0" * 39, "0x" + "0" * 41):
            with self.subTest(bad), self.assertRaises(enact.InvalidArgumentError):
                enact.to_checksum_address(bad)
        with self.assertRaises(TypeError):
            enact.to_checksum_address(b"0x" + b"0" * 40)


class AccountTest(unittest.TestCase):
    def test_address_from_key(self):
        for v in KEYS:
            with self.subTest(v["index"]):
                self.assertEqual(enact.Account.from_key(v["private_key"]).address, v["address"])
                self.assertEqual(enact.Account.from_key(b(v["private_key"])).address, v["address"])
                self.assertEqual(enact.Account.from_key(v["private_key"][2:]).address, v["address"])

    def test_sign_message_matches_ethers(self):
        texts = 0
        for v in KEYS:
            account = enact.Account.from_key(v["private_key"])
            raw = b(v["signature"])
            with self.subTest(v["index"], form="bytes"):
                signed = account.sign_message(b(v["message_hex"]))
                self.assertEqual(signed.signature_hex, v["signature"])
                self.assertEqual(signed.message_hash, b(v["eip191_hash"]))
                self.assertEqual((signed.r, signed.s, signed.v),
                                 (int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:64], "big"), raw[64]))
                self.assertIn(signed.v, (27, 28))
            if "message" in v:  # a text message signs as its UTF-8 bytes
                texts += 1
                with self.subTest(v["index"], form="text"):
                    self.assertEqual(account.sign_message(v["message"]).signature, raw)
        self.assertGreater(texts, 5)

    def test_recover_message(self):
        for v in KEYS:
            message = v.get("message", b(v["message_hex"]))
            with self.subTest(v["index"]):
                self.assertEqual(enact.recover_message(message, signature=v["signature"]), v["address"])
                self.assertEqual(enact.recover_message(b(v["message_hex"]), signature=b(v["signature"])),
                                 v["address"])
                # v as 0/1 recovers the same signer.
                raw = bytearray(b(v["signature"]))
                raw[64] -= 27
                self.assertEqual(enact.recover_message(message, signature=bytes(raw)), v["address"])
                # Another message recovers someone else.
                self.assertNotEqual(enact.recover_message(b(v["message_hex"]) + b".", signature=v["signature"]),
                                    v["address"])

    def test_empty_message(self):
        account = enact.Account.from_key(KEYS[0]["private_key"])
        signed = account.sign_message(b"")
        self.assertEqual(enact.recover_message("", signature=signed.signature), account.address)

    def test_sign_typed_data_matches_viem(self):
        self.assertGreater(len(TYPED), 5)
        for v in TYPED:
            account = enact.Account.from_key(v["private_key"])
            with self.subTest(v["name"]):
                self.assertEqual(account.address, v["signer"])
                signed = account.sign_typed_data(v["document"])
                self.assertEqual(signed.signature_hex, v["signature_viem"])
                self.assertEqual(signed.message_hash, b(v["digest_ethers"]))
                self.assertEqual(signed.message_hash, b(v["digest_eth_sig_util"]))
                self.assertEqual(enact.recover_typed_data(v["document"], signature=v["signature_viem"]),
                                 v["signer"])
                self.assertEqual(enact.recover_typed_data(json.dumps(v["document"]),
                                                          signature=b(v["signature_viem"])),
                                 v["signer"])

    def test_typed_data_parts(self):
        v = TYPED[0]
        doc = v["document"]
        account = enact.Account.from_key(v["private_key"])
        parts = dict(domain=doc["domain"], types=doc["types"], message=doc["message"])
        self.assertEqual(account.sign_typed_data(**parts).signature_hex, v["signature_viem"])
        self.assertEqual(account.sign_typed_data(**parts, primary_type=doc["primaryType"]).signature_hex,
                         v["signature_viem"])
        # EIP712Domain derived from the domain's keys, as eth-account does.
        types = {k: t for k, t in doc["types"].items() if k != "EIP712Domain"}
        self.assertEqual(account.sign_typed_data(domain=doc["domain"], types=types,
                                                 message=doc["message"]).signature_hex, v["signature_viem"])
        self.assertEqual(enact.recover_typed_data(signature=v["signature_viem"], **parts), account.address)
        with self.assertRaises(enact.InvalidArgumentError):
            account.sign_typed_data(doc, domain=doc["domain"])
        with self.assertRaises(enact.InvalidArgumentError):
            account.sign_typed_data(domain=doc["domain"], types=doc["types"])

    def test_keyword_only_signature(self):
        v = KEYS[0]
        with self.assertRaises(TypeError):
            enact.recover_message(v["message"], v["signature"])  # type: ignore[misc]
        with self.assertRaises(TypeError):
            enact.recover_typed_data(TYPED[0]["document"], v["signature"])  # type: ignore[misc]

    def test_bad_keys_and_signatures(self):
        for bad, cls in (("0x" + "00" * 32, enact.CryptoError),
                         ("0x" + "ff" * 32, enact.CryptoError),
                         ("0x1234", enact.InvalidArgumentError),
                         (b"\x01" * 31, enact.InvalidArgumentError)):
            with self.subTest(bad), self.assertRaises(cls):
                enact.Account.from_key(bad)
        with self.assertRaises(TypeError):
            enact.Account.from_key(1234)  # type: ignore[arg-type]
        account = enact.Account.from_key(KEYS[0]["private_key"])
        with self.assertRaises(TypeError):
            account.sign_message(42)  # type: ignore[arg-type]
        for bad in ("0x", "0x" + "00" * 65, KEYS[0]["signature"][:-2], "zz"):
            with self.subTest(bad), self.assertRaises(enact.SignatureError):
                enact.recover_message("x", signature=bad)

    def test_repr_hides_the_key(self):
        v = KEYS[0]
        account = enact.Account.from_key(v["private_key"])
        self.assertIn(v["address"], repr(account))
        self.assertNotIn(v["private_key"][2:], repr(account).lower())
        self.assertEqual(account.key, b(v["private_key"]))


if __name__ == "__main__":
    unittest.main()
