# SPDX-License-Identifier: Apache-2.0
"""Accounts in the shape of eth-account: a local key that signs EIP-191 messages and EIP-712 typed
data, the matching recovery functions, and EIP-55 checksum addresses.

>>> acct = Account.from_key("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
>>> signed = acct.sign_message("hello")
>>> recover_message("hello", signature=signed.signature) == acct.address
True

A text message is signed as its UTF-8 bytes (eth-account's ``encode_defunct(text=...)``), a bytes
message as is (``encode_defunct(primitive=...)``). Signatures are r ‖ s ‖ v with v = 27 or 28, as
ethers, viem, MetaMask and eth-account produce them; recovery also takes v = 0 or 1.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any, Mapping, NamedTuple, Optional, Union

from . import _native
from ._native import check as _check
from ._native import encode as _encode
from ._native import lib as _lib
from .errors import InvalidArgumentError

__all__ = [
    "Account",
    "SignedMessage",
    "recover_message",
    "recover_typed_data",
    "to_checksum_address",
    "is_checksum_address",
]

Message = Union[str, bytes, bytearray, memoryview]
Signature = Union[str, bytes, bytearray, memoryview]

_ADDRESS = re.compile(r"0[xX]([0-9a-fA-F]{40})\Z")
_KEY_HEX = re.compile(r"(?:0[xX])?([0-9a-fA-F]{64})\Z")


class SignedMessage(NamedTuple):
    """A signature with its digest, as eth-account's ``SignedMessage``: ``message_hash`` is the
    32-byte digest that was signed, ``signature`` the 65 bytes r ‖ s ‖ v."""

    message_hash: bytes
    r: int
    s: int
    v: int
    signature: bytes

    @property
    def signature_hex(self) -> str:
        """``"0x"`` + 130 hex digits, what eth_sign, personal_sign and eth_signTypedData_v4
        return."""
        return "0x" + self.signature.hex()


def _keccak(data: bytes) -> bytes:
    out = ctypes.create_string_buffer(32)
    _check(_lib.enact_keccak256(data, len(data), out))
    return out.raw


def to_checksum_address(address: str) -> str:
    """The EIP-55 form of ``"0x"`` + 40 hex digits given in any case (the checksum of a mixed-case
    input is not checked: see :func:`is_checksum_address`).

    Raises:
        InvalidArgumentError: not 0x followed by 40 hex digits.
    """
    if not isinstance(address, str):
        raise TypeError(f"address: expected str, got {type(address).__name__}")
    match = _ADDRESS.match(address)
    if not match:
        raise InvalidArgumentError(f"address: expected 0x and 40 hex digits, got {address!r}")
    lower = match.group(1).lower()
    digest = _keccak(lower.encode("ascii")).hex()
    return "0x" + "".join(c.upper() if int(digest[i], 16) >= 8 else c for i, c in enumerate(lower))


def is_checksum_address(address: Any) -> bool:
    """True when ``address`` is ``"0x"`` + 40 hex digits in exactly its EIP-55 case."""
    return isinstance(address, str) and bool(_ADDRESS.match(address)) and (
        to_checksum_address(address) == address
    )


def _message_bytes(message: Message) -> bytes:
    if isinstance(message, str):
        return message.encode("utf-8")
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    raise TypeError(f"message: expected str or bytes, got {type(message).__name__}")


def _signature_text(signature: Signature) -> str:
    if isinstance(signature, str):
        return signature
    if isinstance(signature, (bytes, bytearray, memoryview)):
        return "0x" + bytes(signature).hex()
    raise TypeError(f"signature: expected hex str or bytes, got {type(signature).__name__}")


def _signed(digest: bytes, signature_hex: str) -> SignedMessage:
    raw = bytes.fromhex(signature_hex[2:])
    return SignedMessage(
        message_hash=digest,
        r=int.from_bytes(raw[:32], "big"),
        s=int.from_bytes(raw[32:64], "big"),
        v=raw[64],
        signature=raw,
    )


def _personal_hash(data: bytes) -> bytes:
    return _keccak(b"\x19Ethereum Signed Message:\n" + str(len(data)).encode("ascii") + data)


def recover_message(message: Message, *, signature: Signature) -> str:
    """The EIP-55 address whose key signed the EIP-191 personal message ``message`` (eth-account's
    ``Account.recover_message``). Keyword-only ``signature``: hex text or 65 bytes.

    Raises:
        SignatureError: a malformed signature, or one from which no key recovers.
    """
    data = _message_bytes(message)
    out = ctypes.create_string_buffer(_native.ADDRESS_SIZE)
    _check(
        _lib.enact_message_recover(
            data, len(data), _encode(_signature_text(signature), "signature"), out
        )
    )
    return out.value.decode("ascii")


def _typed_data_document(
    full_message: Optional[Union[str, Mapping[str, Any]]],
    domain: Optional[Mapping[str, Any]],
    types: Optional[Mapping[str, Any]],
    message: Optional[Mapping[str, Any]],
    primary_type: Optional[str],
) -> Union[str, Mapping[str, Any]]:
    parts = (domain, types, message)
    if full_message is not None:
        if any(p is not None for p in parts) or primary_type is not None:
            raise InvalidArgumentError("give either the full typed data or its parts, not both")
        return full_message
    if any(p is None for p in parts):
        raise InvalidArgumentError("typed data: give full_message, or domain, types and message")
    types = dict(types)
    if primary_type is None:
        # eth-account's rule: the one type no other type refers to (EIP712Domain aside).
        names = [n for n in types if n != "EIP712Domain"]
        used = {f["type"].split("[")[0] for n in names for f in types[n]}
        roots = [n for n in names if n not in used]
        if len(roots) != 1:
            raise InvalidArgumentError(f"typed data: cannot tell the primary type among {roots}")
        primary_type = roots[0]
    if "EIP712Domain" not in types:
        order = ("name", "version", "chainId", "verifyingContract", "salt")
        kind = {"name": "string", "version": "string", "chainId": "uint256",
                "verifyingContract": "address", "salt": "bytes32"}
        types["EIP712Domain"] = [{"name": k, "type": kind[k]} for k in order if k in domain]
    return {"types": types, "primaryType": primary_type, "domain": dict(domain), "message": dict(message)}


def recover_typed_data(
    full_message: Optional[Union[str, Mapping[str, Any]]] = None,
    *,
    signature: Signature,
    domain: Optional[Mapping[str, Any]] = None,
    types: Optional[Mapping[str, Any]] = None,
    message: Optional[Mapping[str, Any]] = None,
    primary_type: Optional[str] = None,
) -> str:
    """The EIP-55 address whose key signed the EIP-712 typed data (eth-sig-util's
    ``recoverTypedSignature`` V4): the whole document (JSON text or dict), or its ``domain``,
    ``types`` and ``message``, with the signature keyword-only.

    Raises:
        ParseError: invalid typed data.
        SignatureError: a malformed signature, or one from which no key recovers.
    """
    from . import typed_data_recover

    document = _typed_data_document(full_message, domain, types, message, primary_type)
    return typed_data_recover(document, _signature_text(signature))


class Account:
    """A local secp256k1 key, as eth-account's ``LocalAccount``: ``Account.from_key(key)``, then
    ``address``, ``sign_message`` and ``sign_typed_data``. The repr never shows the key."""

    __slots__ = ("_key", "_address")

    def __init__(self, private_key: bytes, address: str) -> None:
        self._key = private_key
        self._address = address

    @classmethod
    def from_key(cls, private_key: Union[str, bytes, bytearray, memoryview]) -> "Account":
        """An account of a 32-byte key given as bytes or as 64 hex digits (``0x`` optional).

        Raises:
            InvalidArgumentError: not 32 bytes / 64 hex digits.
            CryptoError: zero, or not below the secp256k1 group order.
        """
        if isinstance(private_key, str):
            match = _KEY_HEX.match(private_key)
            if not match:
                raise InvalidArgumentError("private_key: expected 64 hex digits")
            key = bytes.fromhex(match.group(1))
        elif isinstance(private_key, (bytes, bytearray, memoryview)):
            key = bytes(private_key)
            if len(key) != 32:
                raise InvalidArgumentError(f"private_key: expected 32 bytes, got {len(key)}")
        else:
            raise TypeError(f"private_key: expected bytes or hex str, got {type(private_key).__name__}")
        out = ctypes.create_string_buffer(_native.ADDRESS_SIZE)
        _check(_lib.enact_private_key_address(key, out))
        return cls(key, out.value.decode("ascii"))

    @property
    def address(self) -> str:
        """The account's EIP-55 address."""
        return self._address

    @property
    def key(self) -> bytes:
        """The 32-byte private key."""
        return self._key

    def sign_message(self, message: Message) -> SignedMessage:
        """Signs the EIP-191 personal message (personal_sign, ethers' ``signMessage``): text as its
        UTF-8 bytes, bytes as they are."""
        data = _message_bytes(message)
        out = ctypes.create_string_buffer(_native.SIGNATURE_HEX_SIZE)
        _check(_lib.enact_message_sign(data, len(data), self._key, out))
        return _signed(_personal_hash(data), out.value.decode("ascii"))

    def sign_typed_data(
        self,
        full_message: Optional[Union[str, Mapping[str, Any]]] = None,
        *,
        domain: Optional[Mapping[str, Any]] = None,
        types: Optional[Mapping[str, Any]] = None,
        message: Optional[Mapping[str, Any]] = None,
        primary_type: Optional[str] = None,
    ) -> SignedMessage:
        """Signs EIP-712 typed data as eth_signTypedData_v4: the whole document (JSON text or
        dict), or keyword-only ``domain``, ``types`` and ``message`` (``EIP712Domain`` is derived
        from the domain's keys when absent; ``primary_type`` from the types when not given).

        Raises:
            ParseError: invalid typed data.
            InvalidArgumentError: both forms given, or a part missing.
        """
        from . import typed_data_hash, typed_data_sign

        document = _typed_data_document(full_message, domain, types, message, primary_type)
        return _signed(typed_data_hash(document), typed_data_sign(document, self._key))

    def __repr__(self) -> str:
        return f"Account(address={self._address!r})"
