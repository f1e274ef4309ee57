# SPDX-License-Identifier: Apache-2.0
"""The typed client of the core service (``/core/v1``, docs/protocol.md §2): one method per
endpoint, taking its fields as arguments and returning a frozen dataclass of the answer (the types
are in :mod:`enact.core_types`).

Failures raise :class:`~enact.errors.HttpError` subclasses named after the server's error code
(``NotFoundError``, ``UnauthenticatedError``, ...; ``error_code``, ``status``, ``details`` and
``request_id`` describe the answer), :class:`~enact.errors.NetworkError` when nothing answered,
and :class:`~enact.errors.BadResponseError` when the answer lacks a field or has the wrong type.
Hashes, addresses and derivation paths are ``"0x"`` hex text, as on the wire.

Wallet proofs are envelopes of version 2 (docs/protocol.md §2 "Envelope version 2"). Given a
wallet's key, the client signs them itself for the server's deployment (the chain id and registry
of :meth:`CoreClient.get_node_chain_config`, asked once per client and kept): a fresh single-use
nonce for every ChainSecured call, and for billing a BillingAuth bound to the one request sent.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence
from urllib.parse import urlencode

from . import _native
from ._native import encode as _encode
from ._native import int_in as _int_in
from ._native import lib as _lib
from ._native import take_string as _take_string
from .core_types import (
    AccountInfo,
    Action,
    ActionCode,
    Balance,
    ChainConfig,
    ChainSecuredAccount,
    Group,
    MintedUsageKey,
    MintedWallet,
    NewAccount,
    NewUsageKey,
    Page,
    PaymentIntent,
    PaymentRecord,
    Permissions,
    RunResult,
    StripeConfig,
    UploadedAction,
    UsageCharge,
    UsageKey,
    Wallet,
    decode,
    decode_page,
    field_of,
)
from ._envelope import _key as _wallet_key
from ._envelope import envelope_sign_v2
from .errors import ChainIdMismatchError, InvalidArgumentError, error_for

__all__ = ["CoreClient"]

_U32_MAX = (1 << 32) - 1
_U64_MAX = (1 << 64) - 1


# ---- argument checks ----------------------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected str, got {type(value).__name__}")
    return value


def _optional(body: Dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        body[name] = value


def _permissions_body(permissions: Optional[Permissions]) -> Dict[str, Any]:
    if permissions is None:
        return {}
    if not isinstance(permissions, Permissions):
        raise TypeError("permissions: expected enact.Permissions")
    body: Dict[str, Any] = {}
    for name in (f.name for f in dataclasses.fields(Permissions)):
        value = getattr(permissions, name)
        body[name] = list(value) if isinstance(value, (tuple, list)) else bool(value)
    return body


def _envelope_body(proof: Mapping[str, Any]) -> Dict[str, Any]:
    # What envelope_sign returns, or the same two fields from a browser wallet.
    if not isinstance(proof, Mapping) or "typed_data" not in proof or "signature" not in proof:
        raise InvalidArgumentError("proof: expected {'typed_data': ..., 'signature': '0x...'}")
    typed_data = proof["typed_data"]
    if isinstance(typed_data, str):
        typed_data = json.loads(typed_data)
    return {"typed_data": typed_data, "signature": _text(proof["signature"], "signature")}


class CoreClient:
    """A client of one core service (docs/protocol.md §2). Each method sends one request (a failed
    GET is retried up to ``max_retries`` times) and returns the answer's type.

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
        self._chain: Optional[ChainConfig] = None  # the deployment wallet proofs are signed for
        self._account_hash = self._hash_of(api_key)
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

    @staticmethod
    def _hash_of(api_key: Optional[str]) -> Optional[str]:
        # The account a ConvertAccount envelope names: keccak256 of the key's text (api_key_hash).
        if api_key is None:
            return None
        out = ctypes.create_string_buffer(32)
        data = _encode(api_key, "api_key")
        _native.check(_lib.enact_keccak256(data, len(data), out))
        return "0x" + out.raw.hex()

    def _live(self) -> int:
        if not self._handle:
            raise InvalidArgumentError("client: already closed")
        return self._handle

    def set_api_key(self, api_key: Optional[str]) -> None:
        """Replaces the API key sent with later calls (None: none), e.g. with the key that
        :meth:`new_account` returned."""
        _native.check(
            _lib.enact_core_client_set_api_key(
                self._live(), None if api_key is None else _encode(api_key, "api_key")
            )
        )
        self._account_hash = self._hash_of(api_key)

    # ---- the request path ----

    def call(self, method: str, path: str, body: Any = None, *, wallet_key: Optional[bytes] = None) -> Any:
        """The untyped request path the typed methods use: sends ``method`` ("GET" or "POST") to
        ``path`` (below the base URL, with its query) and returns the decoded JSON answer. For an
        endpoint newer than this package; ``body`` (POST only) is JSON text (sent as is) or
        JSON-serializable data, None sends ``{}``. With ``wallet_key`` (the admin wallet's 32-byte
        key, for the billing endpoints) the request carries no API key but a version 2 BillingAuth
        signed for exactly this request as sent.

        Raises:
            NetworkError: no connection, or a timeout.
            HttpError: an error answer (the subclass of its error code).
            BadResponseError: an answer that is not JSON.
            InvalidArgumentError, ParseError: a request refused before sending.
            CryptoError: ``wallet_key`` is not a valid secp256k1 key.
        """
        handle = self._live()
        out = ctypes.c_void_p()
        if body is not None and not isinstance(body, str):
            body = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
        args = (handle, _encode(method, "method"), _encode(path, "path"), None if body is None else _encode(body, "body"))
        if wallet_key is None:
            rc = _lib.enact_core_client_call(*args, ctypes.byref(out))
        else:
            rc = _lib.enact_core_client_call_wallet(*args, _wallet_key(wallet_key, "wallet_key"), ctypes.byref(out))
        text = _take_string(out)
        if rc != 0:
            raise error_for(rc, _native.last_error(), status=self.status, body_json=text,
                            request_id=self.request_id)
        return json.loads(text) if text is not None else None

    def _get(self, endpoint: str, *, wallet_key: Optional[bytes] = None, **query: Any) -> Any:
        params = {k: v for k, v in query.items() if v is not None}
        target = "/core/v1" + endpoint + ("?" + urlencode(params) if params else "")
        return self.call("GET", target, wallet_key=wallet_key)

    def _post(self, endpoint: str, body: Any, *, wallet_key: Optional[bytes] = None) -> Any:
        return self.call("POST", "/core/v1" + endpoint, body, wallet_key=wallet_key)

    @staticmethod
    def _page(page_number: int, page_size: int) -> Dict[str, int]:
        return {
            "page_number": _int_in(page_number, 1, _U64_MAX, "page_number"),
            "page_size": _int_in(page_size, 1, _U64_MAX, "page_size"),
        }

    # ---- accounts and keys ----

    def new_account(self, name: str, *, description: Optional[str] = None,
                    email: Optional[str] = None) -> NewAccount:
        """POST /new_account (no credential): a new account; its ``api_key`` is shown once."""
        body = {"name": _text(name, "name")}
        _optional(body, "description", description)
        _optional(body, "email", email)
        return decode(NewAccount, self._post("/new_account", body), "new_account")

    def account(self) -> AccountInfo:
        """GET /account: who this client's key belongs to."""
        return decode(AccountInfo, self._get("/account"), "account")

    def add_usage_api_key(self, name: str, *, description: Optional[str] = None,
                          expiration: Optional[int] = None,
                          permissions: Optional[Permissions] = None) -> NewUsageKey:
        """POST /add_usage_api_key: a usage key with these permissions (none when omitted);
        ``expiration`` in unix seconds. Its value is shown once."""
        body: Dict[str, Any] = {"name": _text(name, "name")}
        _optional(body, "description", description)
        if expiration is not None:
            body["expiration"] = _int_in(expiration, 0, _U64_MAX, "expiration")
        body.update(_permissions_body(permissions))
        return decode(NewUsageKey, self._post("/add_usage_api_key", body), "add_usage_api_key")

    def list_api_keys(self, *, page_number: int = 1, page_size: int = 20) -> Page[UsageKey]:
        """GET /list_api_keys."""
        return decode_page(UsageKey, self._get("/list_api_keys", **self._page(page_number, page_size)),
                            "list_api_keys")

    def update_usage_api_key(self, usage_api_key: str, *, name: str, description: Optional[str] = None,
                             expiration: Optional[int] = None,
                             permissions: Optional[Permissions] = None) -> str:
        """POST /update_usage_api_key: replaces every permission (omitted ones reset); returns the
        key's hash."""
        body: Dict[str, Any] = {"usage_api_key": _text(usage_api_key, "usage_api_key"),
                                "name": _text(name, "name")}
        _optional(body, "description", description)
        if expiration is not None:
            body["expiration"] = _int_in(expiration, 0, _U64_MAX, "expiration")
        body.update(_permissions_body(permissions))
        return field_of(self._post("/update_usage_api_key", body), "hash", str, "update_usage_api_key")

    def update_usage_api_key_metadata(self, usage_api_key: str, *, name: str, description: str) -> str:
        """POST /update_usage_api_key_metadata; returns the key's hash."""
        body = {"usage_api_key": _text(usage_api_key, "usage_api_key"), "name": _text(name, "name"),
                "description": _text(description, "description")}
        return field_of(self._post("/update_usage_api_key_metadata", body), "hash", str,
                      "update_usage_api_key_metadata")

    def remove_usage_api_key(self, usage_api_key: str) -> str:
        """POST /remove_usage_api_key; returns the removed key's hash."""
        body = {"usage_api_key": _text(usage_api_key, "usage_api_key")}
        return field_of(self._post("/remove_usage_api_key", body), "hash", str, "remove_usage_api_key")

    # ---- groups ----

    def add_group(self, name: str, *, description: Optional[str] = None,
                  pkp_ids_permitted: Sequence[str] = (),
                  cid_hashes_permitted: Sequence[str] = ()) -> Group:
        """POST /add_group."""
        body: Dict[str, Any] = {"name": _text(name, "name"), "pkp_ids_permitted": list(pkp_ids_permitted),
                                "cid_hashes_permitted": list(cid_hashes_permitted)}
        _optional(body, "description", description)
        return decode(Group, self._post("/add_group", body), "add_group")

    def list_groups(self, *, page_number: int = 1, page_size: int = 20) -> Page[Group]:
        """GET /list_groups."""
        return decode_page(Group, self._get("/list_groups", **self._page(page_number, page_size)),
                            "list_groups")

    def get_group(self, group_id: int) -> Group:
        """GET /get_group; NotFoundError when the account has no such group."""
        return decode(Group, self._get("/get_group", group_id=_int_in(group_id, 0, _U64_MAX, "group_id")),
                       "get_group")

    def update_group(self, group_id: int, *, name: str, description: str,
                     pkp_ids_permitted: Sequence[str], cid_hashes_permitted: Sequence[str]) -> Group:
        """POST /update_group: replaces name, description and both sets."""
        body = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"), "name": _text(name, "name"),
                "description": _text(description, "description"),
                "pkp_ids_permitted": list(pkp_ids_permitted),
                "cid_hashes_permitted": list(cid_hashes_permitted)}
        return decode(Group, self._post("/update_group", body), "update_group")

    def remove_group(self, group_id: int) -> int:
        """POST /remove_group; returns the removed group's id."""
        body = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id")}
        return field_of(self._post("/remove_group", body), "group_id", int, "remove_group")

    # ---- wallets ----

    def create_wallet(self, name: str, *, description: Optional[str] = None) -> Wallet:
        """POST /create_wallet: a PKP of the account."""
        body = {"name": _text(name, "name")}
        _optional(body, "description", description)
        return decode(Wallet, self._post("/create_wallet", body), "create_wallet")

    def list_wallets(self, *, page_number: int = 1, page_size: int = 20) -> Page[Wallet]:
        """GET /list_wallets."""
        return decode_page(Wallet, self._get("/list_wallets", **self._page(page_number, page_size)),
                            "list_wallets")

    def list_wallets_in_group(self, group_id: int, *, page_number: int = 1,
                              page_size: int = 20) -> Page[Wallet]:
        """GET /list_wallets_in_group."""
        query = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"), **self._page(page_number, page_size)}
        return decode_page(Wallet, self._get("/list_wallets_in_group", **query), "list_wallets_in_group")

    def add_pkp_to_group(self, group_id: int, pkp_id: str) -> Group:
        """POST /add_pkp_to_group."""
        body = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"), "pkp_id": _text(pkp_id, "pkp_id")}
        return decode(Group, self._post("/add_pkp_to_group", body), "add_pkp_to_group")

    def remove_pkp_from_group(self, group_id: int, pkp_id: str) -> Group:
        """POST /remove_pkp_from_group."""
        body = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"), "pkp_id": _text(pkp_id, "pkp_id")}
        return decode(Group, self._post("/remove_pkp_from_group", body), "remove_pkp_from_group")

    # ---- actions ----

    def add_action(self, action_ipfs_cid: str, *, name: str, description: Optional[str] = None) -> Action:
        """POST /add_action."""
        body = {"action_ipfs_cid": _text(action_ipfs_cid, "action_ipfs_cid"), "name": _text(name, "name")}
        _optional(body, "description", description)
        return decode(Action, self._post("/add_action", body), "add_action")

    def add_action_to_group(self, group_id: int, action_ipfs_cid: str) -> Group:
        """POST /add_action_to_group."""
        body = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"),
                "action_ipfs_cid": _text(action_ipfs_cid, "action_ipfs_cid")}
        return decode(Group, self._post("/add_action_to_group", body), "add_action_to_group")

    def remove_action_from_group(self, group_id: int, hashed_cid: str) -> Group:
        """POST /remove_action_from_group."""
        body = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"),
                "hashed_cid": _text(hashed_cid, "hashed_cid")}
        return decode(Group, self._post("/remove_action_from_group", body), "remove_action_from_group")

    def update_action_metadata(self, hashed_cid: str, *, name: str, description: str) -> Action:
        """POST /update_action_metadata."""
        body = {"hashed_cid": _text(hashed_cid, "hashed_cid"), "name": _text(name, "name"),
                "description": _text(description, "description")}
        return decode(Action, self._post("/update_action_metadata", body), "update_action_metadata")

    def delete_action(self, hashed_cid: str) -> str:
        """POST /delete_action; returns the deleted action's hashed CID."""
        body = {"hashed_cid": _text(hashed_cid, "hashed_cid")}
        return field_of(self._post("/delete_action", body), "hashed_cid", str, "delete_action")

    def list_actions(self, *, group_id: Optional[int] = None, page_number: int = 1,
                     page_size: int = 20) -> Page[Action]:
        """GET /list_actions: of one group, or (group_id None) of the whole account."""
        query: Dict[str, Any] = dict(self._page(page_number, page_size))
        if group_id is not None:
            query = {"group_id": _int_in(group_id, 0, _U64_MAX, "group_id"), **query}
        return decode_page(Action, self._get("/list_actions", **query), "list_actions")

    def upload_action(self, code: str) -> UploadedAction:
        """POST /upload_action: stores the code in the server's content store."""
        return decode(UploadedAction, self._post("/upload_action", {"code": _text(code, "code")}),
                       "upload_action")

    def get_action_code(self, action_ipfs_cid: str) -> ActionCode:
        """GET /get_action_code: the code of an action of the account, read back from the
        server's content store, for the CID exactly as registered. A usage key reads the actions
        it may run or manage; any other CID raises NotFoundError."""
        return decode(ActionCode, self._get("/get_action_code", action_ipfs_cid=_text(action_ipfs_cid,
                                                                                     "action_ipfs_cid")),
                      "get_action_code")

    def run_action(self, *, code: Optional[str] = None, action_ipfs_cid: Optional[str] = None,
                   pkp_id: Optional[str] = None, params: Optional[Mapping[str, Any]] = None) -> RunResult:
        """POST /run_action: runs ``code`` or the stored ``action_ipfs_cid`` with ``params``. An
        action that throws, times out or breaks a limit raises ActionFailedError (``details``
        carries ``kind``, ``stack`` and ``logs``). Never retried."""
        if (code is None) == (action_ipfs_cid is None):
            raise InvalidArgumentError("run_action: give exactly one of code and action_ipfs_cid")
        body: Dict[str, Any] = {}
        _optional(body, "code", code)
        _optional(body, "action_ipfs_cid", action_ipfs_cid)
        _optional(body, "pkp_id", pkp_id)
        body["params"] = dict(params or {})
        return decode(RunResult, self._post("/run_action", body), "run_action")

    # ---- public utility ----

    def get_node_chain_config(self) -> ChainConfig:
        """GET /get_node_chain_config (no credential). Asks each time, and keeps the answer as the
        deployment wallet proofs are signed for."""
        self._chain = decode(ChainConfig, self._get("/get_node_chain_config"), "get_node_chain_config")
        return self._chain

    def deployment(self) -> ChainConfig:
        """The deployment version 2 envelopes for this server name (its chain_id and
        contract_address): :meth:`get_node_chain_config`, asked on first use and kept."""
        return self._chain if self._chain is not None else self.get_node_chain_config()

    def _sign(self, primary_type: str, key: Any, chain_id: Optional[int], **members: Any) -> Dict[str, Any]:
        # A version 2 envelope issued now with a fresh nonce, for the server's deployment; a chain
        # the caller names that is not the server's is refused before anything is signed or sent.
        chain = self.deployment()
        if chain_id is not None and chain_id != chain.chain_id:
            raise ChainIdMismatchError(
                f"chain id {chain_id} is not the server's ({chain.chain_id}, get_node_chain_config): "
                "no envelope was signed or sent")
        return envelope_sign_v2(primary_type, _wallet_key(key, "wallet_key"), issued_at=int(time.time()),
                                chain_id=chain.chain_id, verifying_contract=chain.contract_address, **members)

    def get_api_payers(self) -> List[str]:
        """GET /get_api_payers (no credential)."""
        return field_of(self._get("/get_api_payers"), "api_payers", List[str], "get_api_payers")

    def get_admin_api_payer(self) -> str:
        """GET /get_admin_api_payer (no credential)."""
        return field_of(self._get("/get_admin_api_payer"), "admin_api_payer", str, "get_admin_api_payer")

    def get_svc_action_ipfs_id(self, code: str) -> str:
        """POST /get_svc_action_ipfs_id: the CID the server computes for ``code``."""
        answer = self._post("/get_svc_action_ipfs_id", json.dumps(_text(code, "code")))
        return field_of(answer, "action_ipfs_cid", str, "get_svc_action_ipfs_id")

    def get_stripe_config(self) -> StripeConfig:
        """GET /billing/stripe_config (no credential)."""
        return decode(StripeConfig, self._get("/billing/stripe_config"), "stripe_config")

    # ---- billing: with this client's API key, or with the admin wallet ----
    # Given ``wallet_key`` (the account's admin wallet, 32 bytes), a call sends no API key but a
    # version 2 BillingAuth signed for exactly that request (a retried GET carries the same one,
    # valid for 300 s).

    def balance(self, *, wallet_key: Optional[bytes] = None) -> Balance:
        """GET /billing/balance."""
        return decode(Balance, self._get("/billing/balance", wallet_key=wallet_key), "balance")

    def create_payment_intent(self, *, amount_cents: int, wallet_key: Optional[bytes] = None) -> PaymentIntent:
        """POST /billing/create_payment_intent; at least 500 cents (the server refuses less)."""
        body = {"amount_cents": _int_in(amount_cents, 1, _U64_MAX, "amount_cents")}
        return decode(PaymentIntent, self._post("/billing/create_payment_intent", body, wallet_key=wallet_key),
                      "create_payment_intent")

    def confirm_payment(self, payment_intent_id: str, *, wallet_key: Optional[bytes] = None) -> int:
        """POST /billing/confirm_payment: credits once (a second confirm is a ConflictError);
        returns the new balance in credits."""
        body = {"payment_intent_id": _text(payment_intent_id, "payment_intent_id")}
        return field_of(self._post("/billing/confirm_payment", body, wallet_key=wallet_key), "balance_credits", int,
                        "confirm_payment")

    def billing_usage(self, *, page_number: int = 1, page_size: int = 20,
                      wallet_key: Optional[bytes] = None) -> Page[UsageCharge]:
        """GET /billing/usage: settled charges, newest first."""
        return decode_page(UsageCharge, self._get("/billing/usage", wallet_key=wallet_key,
                                                  **self._page(page_number, page_size)), "billing_usage")

    def billing_payments(self, *, page_number: int = 1, page_size: int = 20,
                         wallet_key: Optional[bytes] = None) -> Page[PaymentRecord]:
        """GET /billing/payments: payment intents, credited or open, newest first."""
        return decode_page(PaymentRecord, self._get("/billing/payments", wallet_key=wallet_key,
                                                    **self._page(page_number, page_size)), "billing_payments")

    # ---- ChainSecured: wallet-signed envelopes ----
    # Each takes ``proof``, what :func:`enact.envelope_sign_v2` returns ({"typed_data",
    # "signature"}) for the endpoint's primaryType and the server's deployment, or the same from a
    # browser wallet's eth_signTypedData_v4; its nonce is accepted once, so a proof is for one call
    # (a retry included). Or ``wallet_key``: the client signs a version 2 envelope issued now with a
    # fresh nonce; with ``chain_id`` too, a chain that is not the server's raises
    # ChainIdMismatchError (status 0) before anything is signed or sent.

    @staticmethod
    def _one_of(proof: Any, key: Any, key_name: str) -> None:
        if (proof is None) == (key is None):
            raise InvalidArgumentError(f"give proof or {key_name}, not both or neither")

    def create_wallet_with_signature(self, proof: Optional[Mapping[str, Any]] = None, *,
                                     wallet_key: Optional[bytes] = None,
                                     chain_id: Optional[int] = None) -> MintedWallet:
        """POST /create_wallet_with_signature (primaryType CreateWallet, no credential)."""
        self._one_of(proof, wallet_key, "wallet_key")
        if proof is None:
            proof = self._sign("CreateWallet", wallet_key, chain_id)
        return decode(MintedWallet, self._post("/create_wallet_with_signature", _envelope_body(proof)),
                      "create_wallet_with_signature")

    def add_usage_api_key_with_signature(self, proof: Optional[Mapping[str, Any]] = None, *,
                                         wallet_key: Optional[bytes] = None,
                                         chain_id: Optional[int] = None) -> MintedUsageKey:
        """POST /add_usage_api_key_with_signature (primaryType AddUsageApiKey, no credential)."""
        self._one_of(proof, wallet_key, "wallet_key")
        if proof is None:
            proof = self._sign("AddUsageApiKey", wallet_key, chain_id)
        return decode(MintedUsageKey, self._post("/add_usage_api_key_with_signature", _envelope_body(proof)),
                      "add_usage_api_key_with_signature")

    def convert_to_chain_secured_account(self, new_admin_wallet_address: Optional[str] = None,
                                         proof: Optional[Mapping[str, Any]] = None, *,
                                         new_admin_key: Optional[bytes] = None,
                                         chain_id: Optional[int] = None) -> ChainSecuredAccount:
        """POST /convert_to_chain_secured_account (primaryType ConvertAccount, signed by the new
        admin; with this client's account key, whose account a version 2 envelope names). One-way.
        Give ``new_admin_wallet_address`` and ``proof``, or ``new_admin_key`` alone."""
        self._one_of(proof, new_admin_key, "new_admin_key")
        if proof is None:
            if new_admin_wallet_address is not None:
                raise InvalidArgumentError("new_admin_key: the new admin is its address; drop new_admin_wallet_address")
            if self._account_hash is None:
                raise InvalidArgumentError("convert_to_chain_secured_account: the client has no account key to convert")
            key = _wallet_key(new_admin_key, "new_admin_key")
            proof = self._sign("ConvertAccount", key, chain_id, account=self._account_hash)
            new_admin_wallet_address = proof["typed_data"]["message"]["address"]
        elif new_admin_wallet_address is None:
            raise InvalidArgumentError("new_admin_wallet_address: required with proof")
        body = {"new_admin_wallet_address": _text(new_admin_wallet_address, "new_admin_wallet_address"),
                **_envelope_body(proof)}
        return decode(ChainSecuredAccount, self._post("/convert_to_chain_secured_account", body),
                      "convert_to_chain_secured_account")

    # ---- the last answer, and the handle ----

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
        if _lib is not None and getattr(self, "_handle", None):
            self.close()
