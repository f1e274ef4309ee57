# SPDX-License-Identifier: Apache-2.0
"""Loading of libenact_c.so and the ctypes prototypes of the C API (bindings/c/include/enact.h).

The library is looked up, in order: the path in the ``ENACT_C_LIBRARY`` environment variable
(when set, nothing else is tried); a copy bundled next to this file (what the wheel ships); the
system's dynamic loader by SONAME (``libenact_c.so.0``, e.g. from the Debian package).
"""

from __future__ import annotations

import ctypes
import os
from typing import List, Optional, Tuple

from .errors import InvalidArgumentError, error_for

SONAME = "libenact_c.so.0"
_BUNDLED = ("libenact_c.so.0", "libenact_c.so", "libenact_c.dylib", "enact_c.dll")

ADDRESS_SIZE = 43
SIGNATURE_HEX_SIZE = 133
CID_V0_SIZE = 47


def _candidates() -> List[str]:
    override = os.environ.get("ENACT_C_LIBRARY")
    if override:
        return [override]
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = [os.path.join(here, name) for name in _BUNDLED]
    return [path for path in bundled if os.path.exists(path)] + [SONAME]


def _load() -> Tuple[ctypes.CDLL, str]:
    errors = []
    for candidate in _candidates():
        try:
            return ctypes.CDLL(candidate), candidate
        except OSError as e:
            errors.append(f"{candidate}: {e}")
    raise ImportError(
        "enact: cannot load the C library libenact_c (set ENACT_C_LIBRARY to its path): "
        + "; ".join(errors)
    )


lib, library_path = _load()

_c = ctypes
_u8p = _c.c_char_p  # byte buffers in and out (bytes or create_string_buffer)
_str = _c.c_char_p
_out = _c.POINTER(_c.c_void_p)  # char** outputs, released with enact_free


def _proto(name: str, restype, *argtypes) -> None:
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


_proto("enact_version", _c.c_char_p)
_proto("enact_last_error", _c.c_char_p)
_proto("enact_error_name", _c.c_char_p, _c.c_int)
_proto("enact_free", None, _c.c_void_p)
_proto("enact_keccak256", _c.c_int, _u8p, _c.c_size_t, _u8p)
_proto("enact_typed_data_hash", _c.c_int, _str, _u8p)
_proto("enact_typed_data_sign", _c.c_int, _str, _u8p, _u8p)
_proto("enact_typed_data_recover", _c.c_int, _str, _str, _u8p)
_proto("enact_private_key_address", _c.c_int, _u8p, _u8p)
_proto("enact_message_sign", _c.c_int, _u8p, _c.c_size_t, _u8p, _u8p)
_proto("enact_message_recover", _c.c_int, _u8p, _c.c_size_t, _str, _u8p)
_proto("enact_envelope_build", _c.c_int, _str, _str, _c.c_uint64, _c.c_uint64, _out)
_proto("enact_envelope_sign", _c.c_int, _str, _u8p, _c.c_uint64, _c.c_uint64, _out)
_proto(
    "enact_envelope_verify",
    _c.c_int,
    _str,
    _str,
    _str,
    _c.c_uint64,
    _c.c_uint64,
    _c.c_uint64,
    _str,
    _u8p,
)
_proto(
    "enact_envelope_build_v2",
    _c.c_int,
    _str,
    _str,
    _c.c_uint64,
    _c.c_uint64,
    _str,
    _u8p,
    _u8p,
    _str,
    _str,
    _u8p,
    _c.c_size_t,
    _out,
)
_proto(
    "enact_envelope_sign_v2",
    _c.c_int,
    _str,
    _u8p,
    _c.c_uint64,
    _c.c_uint64,
    _str,
    _u8p,
    _u8p,
    _str,
    _str,
    _u8p,
    _c.c_size_t,
    _out,
)
_proto(
    "enact_envelope_verify_v2",
    _c.c_int,
    _str,
    _str,
    _str,
    _c.c_uint64,
    _str,
    _u8p,
    _str,
    _str,
    _u8p,
    _c.c_size_t,
    _c.c_int,
    _c.c_uint64,
    _c.c_uint64,
    _str,
    _u8p,
    _c.POINTER(_c.c_int),
    _u8p,
)
_proto("enact_abi_encode_call", _c.c_int, _str, _str, _out)
_proto("enact_cid_v0", _c.c_int, _u8p, _c.c_size_t, _u8p)
_proto("enact_cron_next", _c.c_int, _str, _c.c_int64, _c.POINTER(_c.c_int64))
_proto("enact_pkp_account_wallet_address", _c.c_int, _u8p, _u8p, _u8p, _u8p)
_proto("enact_pkp_api_mode_path", _c.c_int, _u8p, _c.c_uint64, _u8p)
_proto("enact_core_client_new", _c.c_void_p, _str, _str)
_proto(
    "enact_core_client_new_ex",
    _c.c_void_p,
    _str,
    _str,
    _str,
    _c.c_uint32,
    _c.c_uint32,
    _c.c_uint32,
)
_proto("enact_core_client_set_api_key", _c.c_int, _c.c_void_p, _str)
_proto("enact_core_client_call", _c.c_int, _c.c_void_p, _str, _str, _str, _out)
_proto("enact_core_client_call_wallet", _c.c_int, _c.c_void_p, _str, _str, _str, _u8p, _out)
_proto("enact_core_client_status", _c.c_int, _c.c_void_p)
_proto("enact_core_client_request_id", _c.c_char_p, _c.c_void_p)
_proto("enact_core_client_free", None, _c.c_void_p)


def last_error() -> str:
    """The C library's message for the last failure in the calling thread ("" when none)."""
    return lib.enact_last_error().decode("utf-8", "replace")


def check(rc: int) -> None:
    """Raises the exception of a failed call's code (read in the thread that made the call)."""
    if rc != 0:
        raise error_for(rc, last_error())


def take_string(p: ctypes.c_void_p) -> Optional[str]:
    """The text of a string the library returned, which is then released (and wiped)."""
    if not p.value:
        return None
    try:
        return ctypes.string_at(p.value).decode("utf-8")
    finally:
        lib.enact_free(p)
        p.value = None


def int_in(value: object, low: int, high: int, what: str) -> int:
    """An integer argument checked against its C type's range: ctypes would silently wrap an
    out-of-range one, and bool is an int but never meant here."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected int, got {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidArgumentError(f"{what}: {value} outside {low}..{high}")
    return value


def encode(text: str, what: str) -> bytes:
    """UTF-8 of an argument, refused when it holds a NUL (C would silently cut it there)."""
    if not isinstance(text, str):
        raise TypeError(f"{what}: expected str, got {type(text).__name__}")
    if "\0" in text:
        raise InvalidArgumentError(f"{what}: contains a NUL character")
    return text.encode("utf-8")
