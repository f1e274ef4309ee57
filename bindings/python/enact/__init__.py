# SPDX-License-Identifier: Apache-2.0
"""enact: Python bindings of the enact SDK, over its C ABI (libenact_c.so) with ctypes.

Keccak-256, EIP-712 typed data (digest, signing, recovery), the wallet-proof envelope (build, sign,
verify), Solidity ABI call encoding, the CIDv0 of action code, cron next-fire times, PKP wallet
addresses and derivation paths, and :class:`CoreClient`, a JSON client of the core service.

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
from ._native import lib as _lib
from ._native import take_string as _take_string
from .errors import (
    BadResponseError,
    CryptoError,
    EnactError,
    EnvelopeChainIdMismatchError,
    EnvelopeDomainMismatchError,
    EnvelopeError,
    EnvelopeExpiredError,
    EnvelopeMalformedError,
    EnvelopeSignatureMalformedError,
    EnvelopeSignerMismatchError,
    EnvelopeTooLargeError,
    EnvelopeTypesNotCanonicalError,
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
    error_for,
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
    "abi_encode_call",
    "cid_v0",
    "cron_next",
    "pkp_wallet_address",
    "pkp_api_mode_path",
    "CoreClient",
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
]

#: The envelope flows, one primaryType each (docs/protocol.md §2).
PRIMARY_TYPES = ("CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth")

JsonDocument = Union[str, Mapping[str, Any]]

_U64_MAX = (1 << 64) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_U32_MAX = (1 << 32) - 1


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


def _int_in(value: Any, low: int, high: int, what: str) -> int:
    # ctypes would silently wrap an out-of-range integer; bool is an int but never meant here.
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected int, got {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidArgumentError(f"{what}: {value} outside {low}..{high}")
    return value


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


def envelope_build(primary_type: str, address: str, issued_at: int, chain_id: int) -> dict:
    """The canonical wallet-proof envelope (typed data) for ``address``, for one flow
    (``primary_type`` in :data:`PRIMARY_TYPES`) on one chain at ``issued_at`` (unix seconds), ready
    for a wallet's eth_signTypedData_v4.

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


def envelope_sign(primary_type: str, private_key: bytes, issued_at: int, chain_id: int) -> dict:
    """Builds the envelope for the key's own address and signs it; returns
    ``{"typed_data": {...}, "signature": "0x..."}``, the body the ChainSecured endpoints take.

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
    expected_primary_type: str,
    chain_id: int,
    *,
    now: Optional[int] = None,
    max_skew: int = 300,
    expected_signer: Optional[str] = None,
) -> str:
    """The server's check of a signed envelope, rule by rule (docs/protocol.md §2); returns the signer's
    EIP-55 address.

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


# ---- core service client ------------------------------------------------------------------------


class CoreClient:
    """A JSON client of one core service (docs/protocol.md §2): each call sends one request (a failed GET
    is retried up to ``max_retries`` times) and returns the decoded JSON answer.

    Not for concurrent use: give each thread its own client. Use it as a context manager, or call
    :meth:`close`, to release it (and wipe the API key it holds) promptly.

    Raises (from the constructor):
        InvalidArgumentError: a base URL the client refuses (not http(s), user-info, a query).
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        ca_file: Optional[str] = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        max_retries: int = 2,
    ) -> None:
        """``base_url`` is ``http(s)://host[:port]`` with an optional path prefix; ``api_key`` the
        account or usage key's text as issued (None: no credential); ``ca_file`` a PEM bundle for
        https (None: the system's); timeouts in seconds."""
        self._handle: Optional[int] = None
        connect_ms = self._millis(connect_timeout, "connect_timeout")
        read_ms = self._millis(read_timeout, "read_timeout")
        handle = _lib.enact_core_client_new_ex(
            _encode(base_url, "base_url"),
            None if api_key is None else _encode(api_key, "api_key"),
            None if ca_file is None else _encode(ca_file, "ca_file"),
            connect_ms,
            read_ms,
            _int_in(max_retries, 0, _U32_MAX, "max_retries"),
        )
        if not handle:
            raise InvalidArgumentError(_native.last_error())
        self._handle = handle

    @staticmethod
    def _millis(seconds: float, what: str) -> int:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"{what}: expected seconds as a number")
        millis = int(round(seconds * 1000))
        if not 1 <= millis <= _U32_MAX:
            raise InvalidArgumentError(f"{what}: {seconds} s outside 0.001..{_U32_MAX // 1000}")
        return millis

    def _live(self) -> int:
        if not self._handle:
            raise InvalidArgumentError("client: already closed")
        return self._handle

    def set_api_key(self, api_key: Optional[str]) -> None:
        """Replaces the API key sent with later calls (None: none), e.g. with the key that
        ``/core/v1/new_account`` returned."""
        _check(
            _lib.enact_core_client_set_api_key(
                self._live(), None if api_key is None else _encode(api_key, "api_key")
            )
        )

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """Sends ``method`` ("GET" or "POST") to ``path`` (below the base URL, with its query,
        e.g. ``"/core/v1/list_groups?page_number=0&page_size=10"``) and returns the JSON answer.
        ``body`` (POST only) is JSON text or JSON-serializable data; None sends ``{}``.

        Raises:
            NetworkError: no connection, or a timeout.
            HttpError: an error answer; ``status``, ``error_code``, ``body``, ``details`` and
                ``request_id`` describe it.
            BadResponseError: an answer that is not what the API promises.
            InvalidArgumentError, ParseError: a request refused before sending.
        """
        handle = self._live()
        out = _out_string()
        rc = _lib.enact_core_client_call(
            handle,
            _encode(method, "method"),
            _encode(path, "path"),
            None if body is None else _json_text(body, "body"),
            ctypes.byref(out),
        )
        text = _take_string(out)
        if rc != 0:
            raise error_for(
                rc,
                _native.last_error(),
                status=self.status,
                body_json=text,
                request_id=self.request_id,
            )
        return json.loads(text) if text is not None else None

    def get(self, path: str) -> Any:
        """``call("GET", path)``."""
        return self.call("GET", path)

    def post(self, path: str, body: Any = None) -> Any:
        """``call("POST", path, body)``."""
        return self.call("POST", path, body)

    @property
    def status(self) -> int:
        """HTTP status of the last call's answer (0 before any call, and when there was none)."""
        return int(_lib.enact_core_client_status(self._handle)) if self._handle else 0

    @property
    def request_id(self) -> str:
        """X-Request-Id of the last call's answer ("" when none)."""
        if not self._handle:
            return ""
        return _lib.enact_core_client_request_id(self._handle).decode("utf-8", "replace")

    def close(self) -> None:
        """Releases the client and wipes its API key; later calls raise. Idempotent."""
        handle, self._handle = self._handle, None
        if handle:
            _lib.enact_core_client_free(handle)

    def __enter__(self) -> "CoreClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # At interpreter exit the module's globals may already be gone.
        if _lib is not None:
            self.close()
