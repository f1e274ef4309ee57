# SPDX-License-Identifier: Apache-2.0
"""enact: Python bindings of the enact SDK, over its C ABI (libenact_c.so) with ctypes.

Keccak-256, EIP-712 typed data (digest, signing, recovery), the wallet-proof envelope (versions 1
and 2: build, sign, verify), Solidity ABI call encoding, the CIDv0 of action code, cron next-fire times, PKP wallet
addresses and derivation paths; :class:`Account` (``from_key``, ``sign_message``,
``sign_typed_data``), :func:`recover_message`, :func:`recover_typed_data` and
:func:`to_checksum_address` in the shape of eth-account; and :class:`CoreClient`, the typed client
of the core service (one method per endpoint).

Failures raise subclasses of :class:`EnactError` (see :mod:`enact.errors`). The C library is found
through ``ENACT_C_LIBRARY``, next to this package (wheels bundle it), or by the system's loader.

Private keys are passed as 32-byte ``bytes``; the library wipes its own copies after each call,
but Python's immutable ``bytes`` cannot be wiped, so keep key material in as few objects as you
can.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import json
import time
from typing import Any, Mapping, Optional, Sequence, Union, overload

from . import _native
from ._native import check as _check
from ._native import encode as _encode
from ._native import int_in as _int_in
from ._native import lib as _lib
from ._native import take_string as _take_string
from . import account as _account
from . import core_types as _core_types
from .account import *  # noqa: F401,F403  (Account and the recovery functions: account.__all__)
from ._envelope import VerifiedEnvelope, envelope_build_v2, envelope_sign_v2, envelope_verify_v2
from .core import CoreClient
from .core_types import *  # noqa: F401,F403  (the answer types: core_types.__all__)
from .errors import (
    ActionFailedError,
    BadResponseError,
    ChainIdMismatchError,
    ConflictError,
    ForbiddenError,
    InsufficientCreditsError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    ServerInternalError,
    SignatureExpiredError,
    SignatureInvalidError,
    TypedDataInvalidError,
    UnauthenticatedError,
    UnavailableError,
    CryptoError,
    EnactError,
    EnvelopeAccountMismatchError,
    EnvelopeChainIdMismatchError,
    EnvelopeContractMismatchError,
    EnvelopeDomainMismatchError,
    EnvelopeError,
    EnvelopeExpiredError,
    EnvelopeMalformedError,
    EnvelopeReplayedError,
    EnvelopeRequestMismatchError,
    EnvelopeSignatureMalformedError,
    EnvelopeSignerMismatchError,
    EnvelopeTooLargeError,
    EnvelopeTypesNotCanonicalError,
    EnvelopeVersionRefusedError,
    EnvelopeWrongPrimaryTypeError,
    HttpError,
    InternalError,
    InvalidArgumentError,
    NetworkError,
    OutOfMemoryError,
    OutOfRangeError,
    ParseError,
    ServiceError,
    SignatureError,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "version",
    "keccak256",
    "typed_data_hash",
    "typed_data_sign",
    "typed_data_recover",
    "PRIMARY_TYPES",
    "envelope_build",
    "envelope_sign",
    "envelope_verify",
    "envelope_build_v2",
    "envelope_sign_v2",
    "envelope_verify_v2",
    "VerifiedEnvelope",
    "abi_encode_call",
    "cid_v0",
    "cron_next",
    "pkp_wallet_address",
    "pkp_api_mode_path",
    "EnactError",
    "InvalidArgumentError",
    "ParseError",
    "SignatureError",
    "CryptoError",
    "OutOfRangeError",
    "OutOfMemoryError",
    "InternalError",
    "NetworkError",
    "ServiceError",
    "HttpError",
    "InvalidRequestError",
    "TypedDataInvalidError",
    "ChainIdMismatchError",
    "UnauthenticatedError",
    "SignatureInvalidError",
    "SignatureExpiredError",
    "InsufficientCreditsError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "PayloadTooLargeError",
    "ActionFailedError",
    "RateLimitedError",
    "UnavailableError",
    "ServerInternalError",
    "BadResponseError",
    "EnvelopeError",
    "EnvelopeTooLargeError",
    "EnvelopeMalformedError",
    "EnvelopeTypesNotCanonicalError",
    "EnvelopeWrongPrimaryTypeError",
    "EnvelopeDomainMismatchError",
    "EnvelopeChainIdMismatchError",
    "EnvelopeExpiredError",
    "EnvelopeSignatureMalformedError",
    "EnvelopeSignerMismatchError",
    "EnvelopeVersionRefusedError",
    "EnvelopeContractMismatchError",
    "EnvelopeAccountMismatchError",
    "EnvelopeRequestMismatchError",
    "EnvelopeReplayedError",
] + _account.__all__ + ["CoreClient"] + _core_types.__all__

#: The envelope flows, one primaryType each (docs/protocol.md §2).
PRIMARY_TYPES = ("CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth")

JsonDocument = Union[str, Mapping[str, Any]]

_U64_MAX = (1 << 64) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


# ---- argument conversion ------------------------------------------------------------------------


def _json_text(doc: Any, what: str) -> bytes:
    """A JSON argument given as text (sent as is) or as Python data (serialized compactly)."""
    if isinstance(doc, str):
        return _encode(doc, what)
    if isinstance(doc, (bytes, bytearray)):
        raise TypeError(f"{what}: expected str or JSON-serializable data, got bytes")
    return _encode(json.dumps(doc, separators=(",", ":"), ensure_ascii=False), what)


def _fixed_bytes(value: Any, size: int, what: str) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}: expected {size} bytes, got {type(value).__name__}")
    data = bytes(value)
    if len(data) != size:
        raise InvalidArgumentError(f"{what}: expected {size} bytes, got {len(data)}")
    return data


def _u64(value: Any, what: str) -> int:
    return _int_in(value, 0, _U64_MAX, what)


def _out_string() -> ctypes.c_void_p:
    return ctypes.c_void_p()


# ---- library ------------------------------------------------------------------------------------


def version() -> str:
    """The version of the loaded C library, "MAJOR.MINOR.PATCH"."""
    return _lib.enact_version().decode("ascii")


# ---- hashing and typed data ---------------------------------------------------------------------


def keccak256(data: Union[bytes, bytearray, memoryview]) -> bytes:
    """Keccak-256 as Ethereum uses it (not SHA3-256) of ``data``; 32 bytes."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data: expected bytes, got {type(data).__name__}")
    data = bytes(data)
    out = ctypes.create_string_buffer(32)
    _check(_lib.enact_keccak256(data, len(data), out))
    return out.raw


def typed_data_hash(typed_data: JsonDocument) -> bytes:
    """The EIP-712 digest of a typed-data document (``{"types", "primaryType", "domain",
    "message"}``, as eth_signTypedData_v4 takes it), given as JSON text or as a dict.

    Raises:
        ParseError: the document is not valid typed data (the message names the path).
    """
    out = ctypes.create_string_buffer(32)
    _check(_lib.enact_typed_data_hash(_json_text(typed_data, "typed_data"), out))
    return out.raw


def typed_data_sign(typed_data: JsonDocument, private_key: bytes) -> str:
    """Signs the document's EIP-712 digest (RFC 6979, low s) with a 32-byte secp256k1 key; returns
    ``"0x"`` + r ‖ s ‖ v hex with v = 27 or 28, as eth_signTypedData_v4 does.

    Raises:
        ParseError: invalid typed data.
        CryptoError: the key is zero or not below the curve order.
    """
    key = _fixed_bytes(private_key, 32, "private_key")
    out = ctypes.create_string_buffer(_native.SIGNATURE_HEX_SIZE)
    _check(_lib.enact_typed_data_sign(_json_text(typed_data, "typed_data"), key, out))
    return out.value.decode("ascii")


def typed_data_recover(typed_data: JsonDocument, signature: str) -> str:
    """The EIP-55 address whose key made ``signature`` ("0x" + 130 hex digits) over the document's
    EIP-712 digest.

    Raises:
        ParseError: invalid typed data.
        SignatureError: a malformed signature, or one from which no key recovers.
    """
    out = ctypes.create_string_buffer(_native.ADDRESS_SIZE)
    _check(
        _lib.enact_typed_data_recover(
            _json_text(typed_data, "typed_data"), _encode(signature, "signature"), out
        )
    )
    return out.value.decode("ascii")


# ---- envelope -----------------------------------------------------------------------------------


def envelope_build(primary_type: str, address: str, *, issued_at: int, chain_id: int) -> dict:
    """The canonical version 1 wallet-proof envelope (typed data) for ``address``, for one flow
    (``primary_type`` in :data:`PRIMARY_TYPES`) on one chain at ``issued_at`` (unix seconds), ready
    for a wallet's eth_signTypedData_v4. ``issued_at`` and ``chain_id`` are keyword-only, so the
    two integers cannot be swapped.

    Raises:
        InvalidArgumentError: unknown primary type, or a malformed address (a mixed-case address
            must carry its EIP-55 checksum).
    """
    out = _out_string()
    _check(
        _lib.enact_envelope_build(
            _encode(primary_type, "primary_type"),
            _encode(address, "address"),
            _u64(issued_at, "issued_at"),
            _u64(chain_id, "chain_id"),
            ctypes.byref(out),
        )
    )
    return json.loads(_take_string(out) or "null")


def envelope_sign(primary_type: str, private_key: bytes, *, issued_at: int, chain_id: int) -> dict:
    """Builds the version 1 envelope for the key's own address and signs it; returns
    ``{"typed_data": {...}, "signature": "0x..."}``. The server takes version 1 for CreateWallet
    and AddUsageApiKey only, unless its operator opts in: see :func:`envelope_sign_v2`.

    Raises:
        InvalidArgumentError: unknown primary type.
        CryptoError: the key is not a valid secp256k1 private key.
    """
    key = _fixed_bytes(private_key, 32, "private_key")
    out = _out_string()
    _check(
        _lib.enact_envelope_sign(
            _encode(primary_type, "primary_type"),
            key,
            _u64(issued_at, "issued_at"),
            _u64(chain_id, "chain_id"),
            ctypes.byref(out),
        )
    )
    return json.loads(_take_string(out) or "null")


def envelope_verify(
    typed_data: JsonDocument,
    signature: str,
    *,
    expected_primary_type: str,
    chain_id: int,
    now: Optional[int] = None,
    max_skew: int = 300,
    expected_signer: Optional[str] = None,
) -> str:
    """The server's check of a signed version 1 envelope, rule by rule (docs/protocol.md §2);
    returns the signer's EIP-55 address. A version 2 envelope fails with
    EnvelopeContractMismatchError here: :func:`envelope_verify_v2` checks it.

    ``typed_data`` is the JSON text as received (its size is measured on that text) or a dict
    (measured on its compact serialization). ``now`` is unix seconds (default: the current time),
    ``max_skew`` the accepted distance of issuedAt from now in seconds (positive). With
    ``expected_signer``, the signer must also be that address.

    Raises:
        EnvelopeError: the subclass of the first rule that fails (EnvelopeExpiredError, ...).
        InvalidArgumentError: unknown expected primary type, or a malformed expected_signer.
    """
    when = int(time.time()) if now is None else _u64(now, "now")
    if _u64(max_skew, "max_skew") == 0:
        raise InvalidArgumentError("max_skew: must be positive")
    out = ctypes.create_string_buffer(_native.ADDRESS_SIZE)
    _check(
        _lib.enact_envelope_verify(
            _json_text(typed_data, "typed_data"),
            _encode(signature, "signature"),
            _encode(expected_primary_type, "expected_primary_type"),
            _u64(chain_id, "chain_id"),
            when,
            max_skew,
            None if expected_signer is None else _encode(expected_signer, "expected_signer"),
            out,
        )
    )
    return out.value.decode("ascii")


# ---- ABI, CID, cron, PKP ------------------------------------------------------------------------


def abi_encode_call(signature: str, args: Union[str, Sequence[Any]]) -> str:
    """Call data for a function, ``"0x"`` + hex of selector ‖ ABI-encoded arguments.

    ``signature`` is ``"transfer(address,uint256)"`` or a human-readable form with parameter
    names; ``args`` a list of values in ethers' JSON style (integers as int or decimal/0x strings,
    addresses and bytes as 0x hex, tuples and arrays as lists), or that list as JSON text.

    Raises:
        ParseError: a bad signature, wrong argument count, or a value that does not fit its type.
    """
    out = _out_string()
    _check(
        _lib.enact_abi_encode_call(
            _encode(signature, "signature"), _json_text(args, "args"), ctypes.byref(out)
        )
    )
    return _take_string(out) or ""


def cid_v0(data: Union[bytes, bytearray, memoryview]) -> str:
    """The CIDv0 (``Qm...``) ``ipfs add`` gives ``data`` with default settings: the action CID of
    docs/protocol.md §1."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data: expected bytes, got {type(data).__name__}")
    data = bytes(data)
    out = ctypes.create_string_buffer(_native.CID_V0_SIZE)
    _check(_lib.enact_cid_v0(data, len(data), out))
    return out.value.decode("ascii")


@overload
def cron_next(expression: str, after: int) -> int: ...
@overload
def cron_next(expression: str, after: _dt.datetime) -> _dt.datetime: ...


def cron_next(expression: str, after: Union[int, _dt.datetime]) -> Union[int, _dt.datetime]:
    """The first time strictly after ``after`` at which a 5- or 6-field cron expression (or a
    macro such as ``"@hourly"``) fires, in UTC, as cron-parser computes it.

    ``after`` is unix seconds (the result is too) or a timezone-aware datetime (the result is an
    aware UTC datetime; fractions of a second are dropped).

    Raises:
        ParseError: an invalid expression (the message names the field).
        OutOfRangeError: no fire time up to the year 9999.
    """
    if isinstance(after, _dt.datetime):
        if after.tzinfo is None:
            raise InvalidArgumentError("after: a naive datetime is ambiguous; give a timezone")
        seconds = int(after.timestamp() // 1)
    else:
        seconds = _int_in(after, _I64_MIN, _I64_MAX, "after")
    out = ctypes.c_int64()
    _check(_lib.enact_cron_next(_encode(expression, "expression"), seconds, ctypes.byref(out)))
    if isinstance(after, _dt.datetime):
        return _dt.datetime.fromtimestamp(out.value, _dt.timezone.utc)
    return out.value


def pkp_wallet_address(root_key: bytes, *, account_hash: bytes, derivation_path: bytes) -> str:
    """The EIP-55 wallet address (pkp_id) of the PKP of the owning account `account_hash` at this
    32-byte derivation path under a 32-byte root key (docs/protocol.md §1: the same path under another
    account is another key). Keyword-only, so the two 32-byte values cannot be swapped."""
    root = _fixed_bytes(root_key, 32, "root_key")
    account = _fixed_bytes(account_hash, 32, "account_hash")
    path = _fixed_bytes(derivation_path, 32, "derivation_path")
    out = ctypes.create_string_buffer(_native.ADDRESS_SIZE)
    _check(_lib.enact_pkp_account_wallet_address(root, account, path, out))
    return out.value.decode("ascii")


def pkp_api_mode_path(api_key_hash: bytes, index: int) -> bytes:
    """The derivation path of an API-mode PKP: keccak256(api_key_hash ‖ uint256(index))."""
    key_hash = _fixed_bytes(api_key_hash, 32, "api_key_hash")
    out = ctypes.create_string_buffer(32)
    _check(_lib.enact_pkp_api_mode_path(key_hash, _u64(index, "index"), out))
    return out.raw
