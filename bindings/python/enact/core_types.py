# SPDX-License-Identifier: Apache-2.0
"""The answers of the core service (``/core/v1``, docs/protocol.md §2) as frozen dataclasses, and
their decoding from JSON: every field without a default is required, and a missing or ill-typed
one raises :class:`~enact.errors.BadResponseError` naming its path. Hashes, addresses and
derivation paths stay ``"0x"`` hex text, as on the wire."""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, Tuple, Type, TypeVar

from .errors import BadResponseError

__all__ = [
    "Page",
    "NewAccount",
    "Permissions",
    "KeyIdentity",
    "AccountInfo",
    "NewUsageKey",
    "UsageKey",
    "Group",
    "Wallet",
    "Action",
    "UploadedAction",
    "ActionCode",
    "ActionSignature",
    "RunResult",
    "ChainConfig",
    "StripeConfig",
    "Balance",
    "PaymentIntent",
    "UsageCharge",
    "PaymentRecord",
    "PaymentReversal",
    "MintedWallet",
    "MintedUsageKey",
    "ChainSecuredAccount",
]

T = TypeVar("T")


# ---- answer types -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Permissions:
    """A usage key's permissions (docs/protocol.md §1 scopes): three flags and four group lists."""

    can_create_groups: bool = False
    can_delete_groups: bool = False
    can_create_pkps: bool = False
    manage_ipfs_ids_in_groups: Tuple[int, ...] = ()
    add_pkp_to_groups: Tuple[int, ...] = ()
    remove_pkp_from_groups: Tuple[int, ...] = ()
    execute_in_groups: Tuple[int, ...] = ()


@dataclass(frozen=True)
class NewAccount:
    api_key: str = field(repr=False)
    wallet_address: str
    api_key_hash: str


@dataclass(frozen=True)
class KeyIdentity:
    kind: str  # "account" or "usage"
    hash: str
    permissions: Optional[Permissions] = None


@dataclass(frozen=True)
class AccountInfo:
    api_key_hash: str
    admin_wallet_address: str
    managed: bool
    name: str
    description: str
    key: KeyIdentity


@dataclass(frozen=True)
class NewUsageKey:
    usage_api_key: str = field(repr=False)
    hash: str
    wallet_address: str


@dataclass(frozen=True)
class UsageKey:
    hash: str
    name: str
    description: str
    expiration: int
    created_at: int
    wallet_address: str
    permissions: Permissions


@dataclass(frozen=True)
class Group:
    group_id: int
    name: str
    description: str
    pkp_ids_permitted: Tuple[str, ...]
    cid_hashes_permitted: Tuple[str, ...]


@dataclass(frozen=True)
class Wallet:
    pkp_id: str
    wallet_address: str
    derivation_path: str
    name: str
    description: str
    # Base58 Solana address of the PKP's Ed25519 key; None when the server names none (the
    # wallet's registered derivation path is not a key of the account, or an older server).
    solana_address: Optional[str] = None
    # True for the wallet of a usage key minted by signature: no PKP, it never signs in a run
    # (False from an older server that sends nothing).
    usage_key_wallet: bool = False


@dataclass(frozen=True)
class Action:
    action_ipfs_cid: str
    hashed_cid: str
    name: str
    description: str


@dataclass(frozen=True)
class UploadedAction:
    action_ipfs_cid: str
    hashed_cid: str


@dataclass(frozen=True)
class ActionCode:
    action_ipfs_cid: str
    code: str


@dataclass(frozen=True)
class ActionSignature:
    signature: str
    r: str
    s: str
    v: int
    public_key: str
    digest: str


@dataclass(frozen=True)
class RunResult:
    response: Any
    logs: str
    signatures: Dict[str, ActionSignature]
    run_ms: int
    charged_credits: int


@dataclass(frozen=True)
class ChainConfig:
    chain_id: int
    contract_address: str
    chain_name: str


@dataclass(frozen=True)
class StripeConfig:
    publishable_key: str
    mode: Optional[str] = None


@dataclass(frozen=True)
class Balance:
    balance_credits: int
    currency: str
    mode: Optional[str] = None
    # Credits refunds and disputes took back beyond the balance; absent from older servers.
    owed_credits: int = 0


@dataclass(frozen=True)
class PaymentIntent:
    payment_intent_id: str
    client_secret: str = field(repr=False)
    amount_cents: int
    mode: Optional[str] = None


@dataclass(frozen=True)
class UsageCharge:
    run_id: str
    key_hash: str
    charged_credits: int
    charged_at: int


@dataclass(frozen=True)
class PaymentReversal:
    """A refund or dispute of a payment (docs/protocol.md §2 "Billing")."""

    kind: str  # "refund", "dispute", "dispute_won" (the amount a won dispute gave back)
    amount_cents: int
    event_id: str
    created_at: int


@dataclass(frozen=True)
class PaymentRecord:
    payment_intent_id: str
    amount_cents: int
    provider: str
    credited: bool
    created_at: int
    credited_at: int
    # Absent from a server that predates reversals.
    reversed_cents: int = 0
    reversals: Tuple[PaymentReversal, ...] = ()


@dataclass(frozen=True)
class MintedWallet:
    pkp_id: str
    wallet_address: str
    derivation_path: str
    solana_address: Optional[str] = None


@dataclass(frozen=True)
class MintedUsageKey:
    usage_api_key: str = field(repr=False)
    wallet_address: str
    derivation_path: str


@dataclass(frozen=True)
class ChainSecuredAccount:
    new_admin_wallet_address: str
    api_key_hash: str


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list endpoint; ``total`` counts every item of every page."""

    items: List[T]
    page_number: int
    page_size: int
    total: int


# ---- decoding -----------------------------------------------------------------------------------

_PERMISSION_FIELDS = tuple(f.name for f in dataclasses.fields(Permissions))


def _bad(what: str, expected: str, value: Any) -> BadResponseError:
    return BadResponseError(f"{what}: expected {expected}, got {json.dumps(value)[:80]}")


def _convert(hint: Any, value: Any, what: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin is typing.Union:  # Optional[X]
        inner = [a for a in args if a is not type(None)][0]
        return None if value is None else _convert(inner, value, what)
    if hint is bool:
        if not isinstance(value, bool):
            raise _bad(what, "a boolean", value)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(what, "an integer", value)
        return value
    if hint is str:
        if not isinstance(value, str):
            raise _bad(what, "a string", value)
        return value
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise _bad(what, "an array", value)
        items = [_convert(args[0], v, f"{what}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise _bad(what, "an object", value)
        return {k: _convert(args[1], v, f"{what}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        return decode(hint, value, what)
    raise TypeError(f"no decoder for {hint}")


def decode(cls: Type[T], value: Any, what: str) -> T:
    """An answer type from its JSON object: every field without a default is required."""
    if not isinstance(value, dict):
        raise _bad(what, "an object", value)
    hints = typing.get_type_hints(cls, vars(sys.modules[__name__]))
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name == "permissions" and cls is UsageKey:
            # A usage key's permissions are flat fields of its object.
            kwargs[f.name] = decode(Permissions, {k: value[k] for k in _PERMISSION_FIELDS if k in value},
                                     what)
            continue
        if f.name not in value:
            if f.default is dataclasses.MISSING:
                raise BadResponseError(f"{what}: missing field {f.name!r}")
            continue
        kwargs[f.name] = _convert(hints[f.name], value[f.name], f"{what}.{f.name}")
    return cls(**kwargs)


def decode_page(cls: Type[T], value: Any, what: str) -> Page[T]:
    if not isinstance(value, dict) or not isinstance(value.get("items"), list):
        raise _bad(what, "a page object with items", value)
    items = [decode(cls, item, f"{what}.items[{i}]") for i, item in enumerate(value["items"])]
    return Page(
        items=items,
        page_number=_convert(int, value.get("page_number"), f"{what}.page_number"),
        page_size=_convert(int, value.get("page_size"), f"{what}.page_size"),
        total=_convert(int, value.get("total"), f"{what}.total"),
    )


def field_of(value: Any, name: str, hint: Any, what: str) -> Any:
    if not isinstance(value, dict) or name not in value:
        raise BadResponseError(f"{what}: missing field {name!r}")
    return _convert(hint, value[name], f"{what}.{name}")
