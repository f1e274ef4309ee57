# SPDX-License-Identifier: Apache-2.0
"""The wallet-proof envelope of version 2 (docs/protocol.md §2 "Envelope version 2") over the C
API's enact_envelope_*_v2: re-exported by the package, and used by :class:`enact.CoreClient` to
sign for the server's deployment. Kept apart from ``enact/__init__.py`` so that the client module
can import it without importing the package that imports the client.
"""

from __future__ import annotations

import ctypes
import json
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

from . import _native
from ._native import check as _check
from ._native import encode as _encode
from ._native import int_in as _int_in
from ._native import lib as _lib
from ._native import take_string as _take_string
from .errors import InvalidArgumentError

__all__ = ["VerifiedEnvelope", "envelope_build_v2", "envelope_sign_v2", "envelope_verify_v2"]

_U64_MAX = (1 << 64) - 1

Bytes32 = Union[bytes, bytearray, memoryview, str]
Body = Union[bytes, bytearray, memoryview, str, None]


@dataclass(frozen=True)
class VerifiedEnvelope:
    """What a passing envelope says: its signer (EIP-55), its version (1 or 2) and its nonce
    (``"0x"`` + 64 hex digits; None for version 1 and BillingAuth, which carry none). A nonce's
    single use is the server's to check."""

    signer: str
    version: int
    nonce: Optional[str]


def _u64(value: Any, what: str) -> int:
    return _int_in(value, 0, _U64_MAX, what)


def _bytes32(value: Optional[Bytes32], what: str) -> Optional[bytes]:
    """32 bytes given as bytes or as ``"0x"`` + 64 hex digits (how hashes appear in answers)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value[2:] if value[:2] in ("0x", "0X") else None
        try:
            data = bytes.fromhex(text) if text is not None and len(text) == 64 else None
        except ValueError:
            data = None
        if data is None:
            raise InvalidArgumentError(f"{what}: expected 0x + 64 hex digits")
        return data
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}: expected 32 bytes or 0x hex, got {type(value).__name__}")
    data = bytes(value)
    if len(data) != 32:
        raise InvalidArgumentError(f"{what}: expected 32 bytes, got {len(data)}")
    return data


def _body(body: Body) -> Optional[bytes]:
    if body is None:
        return None
    if isinstance(body, str):
        return body.encode("utf-8")
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError(f"body: expected bytes or str, got {type(body).__name__}")
    return bytes(body)


def _key(private_key: Any, what: str = "private_key") -> bytes:
    if not isinstance(private_key, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}: expected 32 bytes, got {type(private_key).__name__}")
    data = bytes(private_key)
    if len(data) != 32:
        raise InvalidArgumentError(f"{what}: expected 32 bytes, got {len(data)}")
    return data


def _members(nonce: Optional[Bytes32], account: Optional[Bytes32], method: Optional[str], path: Optional[str],
             body: Body) -> tuple:
    data = _body(body)
    return (
        _bytes32(nonce, "nonce"),
        _bytes32(account, "account"),
        None if method is None else _encode(method, "method"),
        None if path is None else _encode(path, "path"),
        data if data else None,
        len(data) if data else 0,
    )


def envelope_build_v2(primary_type: str, address: str, *, issued_at: int, chain_id: int, verifying_contract: str,
                      nonce: Optional[Bytes32] = None, account: Optional[Bytes32] = None,
                      method: Optional[str] = None, path: Optional[str] = None, body: Body = None) -> dict:
    """The canonical version 2 envelope (typed data) for ``address`` on the deployment
    (``chain_id``, ``verifying_contract``: chain_id and contract_address of
    :meth:`CoreClient.get_node_chain_config`), ready for a wallet's eth_signTypedData_v4.

    Each flow takes its own members and refuses the others: ``nonce`` (32 bytes or 0x hex; None: a
    fresh random one, which the server accepts once) for CreateWallet, AddUsageApiKey and
    ConvertAccount; ``account`` (the converted account's ``api_key_hash``) for ConvertAccount;
    ``method``, ``path`` (the request target exactly as sent, with its query) and ``body`` (the
    bytes sent; a str is sent as UTF-8) for BillingAuth.

    Raises:
        InvalidArgumentError: unknown primary type, a bad address, a member missing or given to a
            flow that does not carry it.
    """
    out = ctypes.c_void_p()
    _check(_lib.enact_envelope_build_v2(
        _encode(primary_type, "primary_type"), _encode(address, "address"), _u64(issued_at, "issued_at"),
        _u64(chain_id, "chain_id"), _encode(verifying_contract, "verifying_contract"),
        *_members(nonce, account, method, path, body), ctypes.byref(out)))
    return json.loads(_take_string(out) or "null")


def envelope_sign_v2(primary_type: str, private_key: bytes, *, issued_at: int, chain_id: int,
                     verifying_contract: str, nonce: Optional[Bytes32] = None, account: Optional[Bytes32] = None,
                     method: Optional[str] = None, path: Optional[str] = None, body: Body = None) -> dict:
    """:func:`envelope_build_v2` for the key's own address, signed; returns
    ``{"typed_data": {...}, "signature": "0x..."}``, the body part the ChainSecured endpoints take
    (a BillingAuth goes in X-Wallet-Auth: :meth:`CoreClient.call` with ``wallet_key`` signs it).

    Raises:
        InvalidArgumentError: as :func:`envelope_build_v2`.
        CryptoError: the key is not a valid secp256k1 private key.
    """
    out = ctypes.c_void_p()
    _check(_lib.enact_envelope_sign_v2(
        _encode(primary_type, "primary_type"), _key(private_key), _u64(issued_at, "issued_at"),
        _u64(chain_id, "chain_id"), _encode(verifying_contract, "verifying_contract"),
        *_members(nonce, account, method, path, body), ctypes.byref(out)))
    return json.loads(_take_string(out) or "null")


def envelope_verify_v2(typed_data: Union[str, Mapping[str, Any]], signature: str, *, expected_primary_type: str,
                       chain_id: int, verifying_contract: str, account: Optional[Bytes32] = None,
                       method: Optional[str] = None, path: Optional[str] = None, body: Body = None,
                       accept_v1: bool = False, now: Optional[int] = None, max_skew: int = 300,
                       expected_signer: Optional[str] = None) -> VerifiedEnvelope:
    """The server's check of a version 2 envelope (and of version 1 with ``accept_v1``) for the
    deployment, rule by rule (docs/protocol.md §2). ``account`` is the account a ConvertAccount
    must name; ``method``, ``path`` and ``body`` the request a BillingAuth must authorize (an
    envelope checked without what its flow binds fails). ``now``, ``max_skew`` and
    ``expected_signer`` as for :func:`enact.envelope_verify`.

    Raises:
        EnvelopeError: the subclass of the first rule that fails (EnvelopeRequestMismatchError, ...).
        InvalidArgumentError: a malformed argument.
    """
    if isinstance(typed_data, str):
        text = _encode(typed_data, "typed_data")
    else:
        text = _encode(json.dumps(typed_data, separators=(",", ":"), ensure_ascii=False), "typed_data")
    when = int(time.time()) if now is None else _u64(now, "now")
    if _u64(max_skew, "max_skew") == 0:
        raise InvalidArgumentError("max_skew: must be positive")
    if (method is None) != (path is None):
        raise InvalidArgumentError("method and path: give both (the request a BillingAuth authorizes) or neither")
    data = _body(body)
    if data is not None and method is None:
        raise InvalidArgumentError("body: given without method and path")
    out = ctypes.create_string_buffer(_native.ADDRESS_SIZE)
    version = ctypes.c_int(0)
    nonce = ctypes.create_string_buffer(32)
    _check(_lib.enact_envelope_verify_v2(
        text, _encode(signature, "signature"), _encode(expected_primary_type, "expected_primary_type"),
        _u64(chain_id, "chain_id"), _encode(verifying_contract, "verifying_contract"),
        _bytes32(account, "account"), None if method is None else _encode(method, "method"),
        None if path is None else _encode(path, "path"), data if data else None, len(data) if data else 0,
        1 if accept_v1 else 0, when, max_skew,
        None if expected_signer is None else _encode(expected_signer, "expected_signer"), out,
        ctypes.byref(version), nonce))
    carries_nonce = version.value == 2 and expected_primary_type != "BillingAuth"
    return VerifiedEnvelope(out.value.decode("ascii"), version.value,
                            "0x" + nonce.raw.hex() if carries_nonce else None)
