# SPDX-License-Identifier: Apache-2.0
"""Exceptions raised by the enact package, one class per error code of the C API (enact.h).

Every exception derives from :class:`EnactError`, which carries the numeric ``code`` and the
library's message (it names the offending field and the reason). Errors about the caller's input
also derive from :class:`ValueError`.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Type

# Error codes of enact.h; stable across releases.
OK = 0
ERR_INVALID_ARGUMENT = -1
ERR_PARSE = -2
ERR_SIGNATURE_INVALID = -3
ERR_CRYPTO = -4
ERR_NETWORK = -5
ERR_HTTP = -6
ERR_BAD_RESPONSE = -7
ERR_OUT_OF_RANGE = -8
ERR_OUT_OF_MEMORY = -9
ERR_INTERNAL = -10
ERR_ENVELOPE_TOO_LARGE = -21
ERR_ENVELOPE_MALFORMED = -22
ERR_ENVELOPE_TYPES_NOT_CANONICAL = -23
ERR_ENVELOPE_WRONG_PRIMARY_TYPE = -24
ERR_ENVELOPE_DOMAIN_MISMATCH = -25
ERR_ENVELOPE_CHAIN_ID_MISMATCH = -26
ERR_ENVELOPE_EXPIRED = -27
ERR_ENVELOPE_SIGNATURE_MALFORMED = -28
ERR_ENVELOPE_SIGNER_MISMATCH = -29
ERR_ENVELOPE_VERSION_REFUSED = -30
ERR_ENVELOPE_CONTRACT_MISMATCH = -31
ERR_ENVELOPE_ACCOUNT_MISMATCH = -32
ERR_ENVELOPE_REQUEST_MISMATCH = -33
ERR_ENVELOPE_REPLAYED = -34


class EnactError(Exception):
    """Base class of every error the package raises.

    Attributes:
        code: the C API's error code (a negative int, see the ``ERR_*`` constants).
        message: the library's description of the failure.
    """

    code: int = ERR_INTERNAL

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidArgumentError(EnactError, ValueError):
    """An argument is missing or malformed: bad hex, a bad address, an unknown primaryType, a key
    of the wrong length, an integer out of its C range, a base URL the client cannot use."""

    code = ERR_INVALID_ARGUMENT


class ParseError(EnactError, ValueError):
    """Input text that does not parse or validate: typed data, JSON arguments, an ABI signature or
    values, a cron expression."""

    code = ERR_PARSE


class SignatureError(EnactError, ValueError):
    """A signature that is malformed (not 65 bytes, bad v, r or s, high s) or from which no key
    recovers."""

    code = ERR_SIGNATURE_INVALID


class CryptoError(EnactError, ValueError):
    """A private key that is not a valid secp256k1 scalar, or a failed key derivation."""

    code = ERR_CRYPTO


class OutOfRangeError(EnactError, ValueError):
    """A result outside what the library can represent (cron: no fire time up to year 9999)."""

    code = ERR_OUT_OF_RANGE


class OutOfMemoryError(EnactError, MemoryError):
    """The library could not allocate memory."""

    code = ERR_OUT_OF_MEMORY


class InternalError(EnactError):
    """An unexpected failure inside the library."""

    code = ERR_INTERNAL


class NetworkError(EnactError):
    """The service could not be reached: connection refused or broken, or a timeout."""

    code = ERR_NETWORK


class ServiceError(EnactError):
    """The service answered, but with an error (see :class:`HttpError`) or with something that is
    not what the API promises (see :class:`BadResponseError`).

    Attributes:
        status: the HTTP status of the answer (0 when there was none).
        body: the error body ``{"error": {"code", "message", "details"?}}`` (docs/protocol.md §0).
        error_code: ``body["error"]["code"]``, e.g. ``"unauthenticated"``.
        details: ``body["error"].get("details")`` (e.g. the stack of a failed action), or None.
        request_id: the answer's X-Request-Id, to find the server's log line ("" when none).
    """

    def __init__(
        self,
        message: str,
        code: Optional[int] = None,
        *,
        status: int = 0,
        body: Optional[Dict[str, Any]] = None,
        request_id: str = "",
    ) -> None:
        super().__init__(message, code)
        self.status = status
        self.body: Dict[str, Any] = body if body is not None else {}
        error = self.body.get("error") if isinstance(self.body.get("error"), dict) else {}
        self.error_code: str = str(error.get("code", ""))
        self.details: Any = error.get("details")
        self.request_id = request_id


class HttpError(ServiceError):
    """The service answered with an error status and a docs/protocol.md §0 error body. The
    subclass names the body's error code when it is one of the contract's (NotFoundError, ...)."""

    code = ERR_HTTP
    error_name = ""


# The service's error codes (docs/protocol.md §0): one HttpError subclass each, so a caller can
# catch e.g. NotFoundError; error_code still holds the wire name.
class InvalidRequestError(HttpError):
    """invalid_request (400): malformed JSON, a missing, unknown or ill-typed field, a bad value."""

    error_name = "invalid_request"


class TypedDataInvalidError(HttpError):
    """typed_data_invalid (400): the wallet-proof envelope is not the canonical typed data."""

    error_name = "typed_data_invalid"


class ChainIdMismatchError(HttpError):
    """chain_id_mismatch (400): the envelope names another chain than the server's."""

    error_name = "chain_id_mismatch"


class UnauthenticatedError(HttpError):
    """unauthenticated (401): no credential, or an unknown or deleted one."""

    error_name = "unauthenticated"


class SignatureInvalidError(HttpError):
    """signature_invalid (401): the envelope's signature is malformed or not the signer's."""

    error_name = "signature_invalid"


class SignatureExpiredError(HttpError):
    """signature_expired (401): issuedAt is too far from the server's clock."""

    error_name = "signature_expired"


class InsufficientCreditsError(HttpError):
    """insufficient_credits (402): the account cannot pay for the run."""

    error_name = "insufficient_credits"


class ForbiddenError(HttpError):
    """forbidden (403): the scope, the ownership or the account's mode does not allow it."""

    error_name = "forbidden"


class NotFoundError(HttpError):
    """not_found (404): an unknown group, PKP, action, run or payment intent."""

    error_name = "not_found"


class ConflictError(HttpError):
    """conflict (409): the state forbids it (already exists, already confirmed, converted)."""

    error_name = "conflict"


class PayloadTooLargeError(HttpError):
    """payload_too_large (413): the body or the code is over its limit."""

    error_name = "payload_too_large"


class ActionFailedError(HttpError):
    """action_failed (422): the action threw, timed out or broke a limit; ``details`` carries
    ``kind``, ``stack`` and ``logs``."""

    error_name = "action_failed"


class RateLimitedError(HttpError):
    """rate_limited (429): too many requests; retry later."""

    error_name = "rate_limited"


class UnavailableError(HttpError):
    """unavailable (503): the chain node, the IPFS gateway, the payment provider or the sandbox
    pool is unreachable or saturated (transient)."""

    error_name = "unavailable"


class ServerInternalError(HttpError):
    """internal (500): the server failed; ``request_id`` finds its log line."""

    error_name = "internal"


# Each subclass above, by the wire name of its code.
_HTTP_BY_NAME: Dict[str, Type[HttpError]] = {cls.error_name: cls for cls in HttpError.__subclasses__()}


class BadResponseError(ServiceError):
    """The service's answer is not what the API promises (not JSON, or the wrong shape)."""

    code = ERR_BAD_RESPONSE


class EnvelopeError(EnactError, ValueError):
    """A wallet-proof envelope failed verification; the subclass names the rule (docs/protocol.md §2)."""

    rule: str = ""


class EnvelopeTooLargeError(EnvelopeError):
    """Rule 1: serialized typed data over 4096 bytes."""

    code, rule = ERR_ENVELOPE_TOO_LARGE, "too_large"


class EnvelopeMalformedError(EnvelopeError):
    """Rules 2, 5 and 9: not JSON, the wrong shape, a bad chainId or message value."""

    code, rule = ERR_ENVELOPE_MALFORMED, "malformed"


class EnvelopeTypesNotCanonicalError(EnvelopeError):
    """Rule 3: ``types`` differ from the canonical envelope types of version 1 and 2."""

    code, rule = ERR_ENVELOPE_TYPES_NOT_CANONICAL, "types_not_canonical"


class EnvelopeWrongPrimaryTypeError(EnvelopeError):
    """Rule 4: a valid envelope for another flow."""

    code, rule = ERR_ENVELOPE_WRONG_PRIMARY_TYPE, "wrong_primary_type"


class EnvelopeDomainMismatchError(EnvelopeError):
    """Rule 5: domain keys, name or version differ."""

    code, rule = ERR_ENVELOPE_DOMAIN_MISMATCH, "domain_mismatch"


class EnvelopeChainIdMismatchError(EnvelopeError):
    """Rule 7: domain.chainId is not the expected chain."""

    code, rule = ERR_ENVELOPE_CHAIN_ID_MISMATCH, "chain_id_mismatch"


class EnvelopeExpiredError(EnvelopeError):
    """Rule 10: issuedAt outside now ± max_skew."""

    code, rule = ERR_ENVELOPE_EXPIRED, "expired"


class EnvelopeSignatureMalformedError(EnvelopeError):
    """Rule 13: the signature is not 0x + 130 hex digits, or no key recovers from it."""

    code, rule = ERR_ENVELOPE_SIGNATURE_MALFORMED, "signature_malformed"


class EnvelopeSignerMismatchError(EnvelopeError):
    """Rule 14: the signer is not message.address, or not the expected signer."""

    code, rule = ERR_ENVELOPE_SIGNER_MISMATCH, "signer_mismatch"


class EnvelopeVersionRefusedError(EnvelopeError):
    """Rule 6: a version 1 envelope where only version 2 is accepted."""

    code, rule = ERR_ENVELOPE_VERSION_REFUSED, "version_refused"


class EnvelopeContractMismatchError(EnvelopeError):
    """Rule 8: domain.verifyingContract is not the expected registry."""

    code, rule = ERR_ENVELOPE_CONTRACT_MISMATCH, "contract_mismatch"


class EnvelopeAccountMismatchError(EnvelopeError):
    """Rule 11: a version 2 ConvertAccount names another account."""

    code, rule = ERR_ENVELOPE_ACCOUNT_MISMATCH, "account_mismatch"


class EnvelopeRequestMismatchError(EnvelopeError):
    """Rule 12: a version 2 BillingAuth was signed for another method, target or body."""

    code, rule = ERR_ENVELOPE_REQUEST_MISMATCH, "request_mismatch"


class EnvelopeReplayedError(EnvelopeError):
    """A version 2 nonce used before (the server's nonce store; over HTTP it is a 401
    signature_expired)."""

    code, rule = ERR_ENVELOPE_REPLAYED, "replayed"


_BY_CODE: Dict[int, Type[EnactError]] = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        ParseError,
        SignatureError,
        CryptoError,
        NetworkError,
        HttpError,
        BadResponseError,
        OutOfRangeError,
        OutOfMemoryError,
        InternalError,
        EnvelopeTooLargeError,
        EnvelopeMalformedError,
        EnvelopeTypesNotCanonicalError,
        EnvelopeWrongPrimaryTypeError,
        EnvelopeDomainMismatchError,
        EnvelopeChainIdMismatchError,
        EnvelopeExpiredError,
        EnvelopeSignatureMalformedError,
        EnvelopeSignerMismatchError,
        EnvelopeVersionRefusedError,
        EnvelopeContractMismatchError,
        EnvelopeAccountMismatchError,
        EnvelopeRequestMismatchError,
        EnvelopeReplayedError,
    )
}


def error_for(
    code: int,
    message: str,
    *,
    status: int = 0,
    body_json: Optional[str] = None,
    request_id: str = "",
) -> EnactError:
    """The exception for a C API error code (an unknown code gives an :class:`EnactError` that
    keeps it)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return EnactError(message, code)
    if issubclass(cls, ServiceError):
        body: Dict[str, Any] = {}
        if body_json:
            try:
                parsed = json.loads(body_json)
                if isinstance(parsed, dict):
                    body = parsed
            except ValueError:
                pass
        if cls is HttpError:
            error = body.get("error") if isinstance(body.get("error"), dict) else {}
            cls = _HTTP_BY_NAME.get(str(error.get("code", "")), HttpError)
        return cls(message, status=status, body=body, request_id=request_id)
    return cls(message)
