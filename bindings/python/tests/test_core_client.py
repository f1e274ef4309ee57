# SPDX-License-Identifier: Apache-2.0
"""The typed CoreClient: requests refused before sending, answers decoded into their types (and
refused when a field is missing or ill-typed), and, with ENACT_SERVER_BINARY set, every group of
endpoints against a real `enact-server --dev` that the test starts on a loopback port, with the
server's error codes raised as their HttpError subclasses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import enact
from enact import core_types


class RefusedBeforeSendingTest(unittest.TestCase):
    def test_refused_base_urls(self):
        for url in ("ftp://127.0.0.1", "http://user:pw@127.0.0.1", "http://127.0.0.1:0",
                    "http://127.0.0.1/?q=1"):
            with self.subTest(url), self.assertRaises(enact.InvalidArgumentError) as ctx:
                enact.CoreClient(url)
            self.assertIn("base_url", ctx.exception.message)

    def test_closed_port_is_a_network_error(self):
        # Nothing listens on port 1 of the loopback interface.
        with enact.CoreClient("http://127.0.0.1:1", "secret-api-key", max_retries=0) as client:
            for call in (client.account, lambda: client.new_account("x")):
                with self.assertRaises(enact.NetworkError) as ctx:
                    call()
                self.assertNotIn("secret-api-key", ctx.exception.message)
            self.assertEqual(client.status, 0)
            self.assertEqual(client.request_id, "")

    def test_arguments_checked_before_sending(self):
        client = enact.CoreClient("http://127.0.0.1:1", connect_timeout=1, read_timeout=1)
        with self.assertRaises(TypeError):
            client.list_groups(1, 20)  # type: ignore[misc]  page arguments are keyword-only
        with self.assertRaises(enact.InvalidArgumentError):
            client.list_groups(page_number=0)
        with self.assertRaises(enact.InvalidArgumentError):
            client.get_group(-1)
        with self.assertRaises(TypeError):
            client.get_group(True)
        with self.assertRaises(TypeError):
            client.create_payment_intent(500)  # type: ignore[misc]
        with self.assertRaises(enact.InvalidArgumentError):
            client.run_action(code="1", action_ipfs_cid="Qm")
        with self.assertRaises(enact.InvalidArgumentError):
            client.run_action()
        with self.assertRaises(enact.InvalidArgumentError):
            client.create_wallet_with_signature({"signature": "0x"})
        with self.assertRaises(enact.InvalidArgumentError):
            client.create_wallet_with_signature()
        with self.assertRaises(TypeError):
            client.balance(wallet_key="00" * 32)  # type: ignore[arg-type]
        with self.assertRaises(enact.InvalidArgumentError):
            client.convert_to_chain_secured_account(new_admin_key=bytes(range(32)))  # no account key
        with self.assertRaises(TypeError):
            client.add_usage_api_key("k", permissions={"can_create_groups": True})  # type: ignore[arg-type]
        for args, cls in ((("PUT", "/core/v1/account"), enact.InvalidArgumentError),
                          (("GET", "core/v1/account"), enact.InvalidArgumentError),
                          (("GET", "/core/v1/account\r\nX-Evil: 1"), enact.InvalidArgumentError),
                          (("POST", "/core/v1/new_account", '{"a":'), enact.ParseError)):
            with self.subTest(args=args), self.assertRaises(cls):
                client.call(*args)
        client.close()
        client.close()
        with self.assertRaises(enact.InvalidArgumentError):
            client.account()


class DecodeTest(unittest.TestCase):
    GROUP = {"group_id": 3, "name": "g", "description": "", "pkp_ids_permitted": ["0x" + "11" * 20],
             "cid_hashes_permitted": []}

    def test_types(self):
        g = core_types.decode(enact.Group, self.GROUP, "group")
        self.assertEqual(g, enact.Group(3, "g", "", ("0x" + "11" * 20,), ()))
        page = core_types.decode_page(enact.Group, {"items": [self.GROUP], "page_number": 1, "page_size": 20,
                                               "total": 1}, "list_groups")
        self.assertEqual((page.items, page.total), ([g], 1))
        key = core_types.decode(enact.UsageKey, {
            "hash": "0x" + "22" * 32, "name": "k", "description": "", "expiration": 0, "created_at": 5,
            "wallet_address": "0x" + "33" * 20, "can_create_groups": True, "can_delete_groups": False,
            "can_create_pkps": False, "manage_ipfs_ids_in_groups": [1], "add_pkp_to_groups": [],
            "remove_pkp_from_groups": [], "execute_in_groups": [2, 3]}, "key")
        self.assertEqual(key.permissions, enact.Permissions(can_create_groups=True,
                                                            manage_ipfs_ids_in_groups=(1,),
                                                            execute_in_groups=(2, 3)))

    def test_bad_answers(self):
        for change in ({"group_id": "3"}, {"group_id": True}, {"name": None}, {"pkp_ids_permitted": "x"},
                       {"pkp_ids_permitted": [1]}):
            with self.subTest(change), self.assertRaises(enact.BadResponseError):
                core_types.decode(enact.Group, {**self.GROUP, **change}, "group")
        missing = dict(self.GROUP)
        del missing["description"]
        with self.assertRaises(enact.BadResponseError) as ctx:
            core_types.decode(enact.Group, missing, "group")
        self.assertIn("description", ctx.exception.message)
        with self.assertRaises(enact.BadResponseError):
            core_types.decode_page(enact.Group, {"items": {}, "page_number": 1, "page_size": 1, "total": 0}, "p")
        with self.assertRaises(enact.BadResponseError):
            core_types.field_of({"hash": 1}, "hash", str, "remove_usage_api_key")

    def test_secrets_not_in_repr(self):
        created = enact.NewAccount(api_key="secret-value", wallet_address="0x", api_key_hash="0x")
        self.assertNotIn("secret-value", repr(created))

    def test_error_classes_by_server_code(self):
        body = json.dumps({"error": {"code": "not_found", "message": "no group"}})
        e = enact.errors.error_for(enact.errors.ERR_HTTP, "404", status=404, body_json=body)
        self.assertIs(type(e), enact.NotFoundError)
        self.assertEqual((e.error_code, e.status), ("not_found", 404))
        unknown = json.dumps({"error": {"code": "future_code", "message": "?"}})
        self.assertIs(type(enact.errors.error_for(enact.errors.ERR_HTTP, "x", body_json=unknown)),
                      enact.HttpError)


@unittest.skipUnless(os.environ.get("ENACT_SERVER_BINARY"), "ENACT_SERVER_BINARY not set")
class ServerTest(unittest.TestCase):
    """Every group of endpoints against `enact-server --dev` (offline defaults) on loopback."""

    @classmethod
    def setUpClass(cls):
        binary = os.environ["ENACT_SERVER_BINARY"]
        if not os.path.exists(binary):
            raise unittest.SkipTest(f"{binary} not built")
        cls.data = tempfile.mkdtemp(prefix="enact-py-")
        cls.log = open(os.path.join(cls.data, "stderr.log"), "wb")
        cls.server = subprocess.Popen(
            [binary, "--dev", "--listen", "127.0.0.1:0", "--data-dir", os.path.join(cls.data, "data")],
            stdout=subprocess.PIPE, stderr=cls.log)
        # The first stdout line: "enact-server <version> listening on http://127.0.0.1:PORT".
        banner = cls.server.stdout.readline().decode()
        marker = "listening on http://127.0.0.1:"
        if marker not in banner:
            cls.tearDownClass()
            raise RuntimeError(f"enact-server did not start: {banner!r}")
        cls.base_url = "http://127.0.0.1:" + banner.split(marker)[1].split()[0]

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(timeout=30)
        cls.server.stdout.close()
        cls.log.close()
        shutil.rmtree(cls.data, ignore_errors=True)

    def new_client(self) -> enact.CoreClient:
        client = enact.CoreClient(self.base_url)
        self.addCleanup(client.close)
        created = client.new_account("py", description="python test")
        self.assertTrue(enact.is_checksum_address(created.wallet_address))
        client.set_api_key(created.api_key)
        return client

    def test_public_endpoints(self):
        with enact.CoreClient(self.base_url) as client:
            config = client.get_node_chain_config()
            self.assertIsInstance(config, enact.ChainConfig)
            self.assertGreater(config.chain_id, 0)
            self.assertEqual(client.status, 200)
            self.assertNotEqual(client.request_id, "")
            self.assertTrue(all(enact.is_checksum_address(a) for a in client.get_api_payers()))
            self.assertTrue(client.get_admin_api_payer().startswith("0x"))
            self.assertEqual(client.get_svc_action_ipfs_id("return 1;"), enact.cid_v0(b"return 1;"))
            self.assertIsInstance(client.get_stripe_config(), enact.StripeConfig)

    def test_a_method_per_endpoint(self):
        # Every operation of the server's OpenAPI document has its typed method, except what
        # only a payment provider calls.
        renamed = {"/billing/balance": "balance", "/billing/stripe_config": "get_stripe_config",
                   "/billing/usage": "billing_usage", "/billing/payments": "billing_payments"}
        not_for_clients = {"/billing/stripe/webhook"}
        with enact.CoreClient(self.base_url) as client:
            paths = client.call("GET", "/core/v1/openapi.json")["paths"]
        self.assertGreater(len(paths), 30)
        for path in set(paths) - not_for_clients:
            name = renamed.get(path, path.rsplit("/", 1)[-1])
            with self.subTest(path):
                self.assertTrue(callable(getattr(enact.CoreClient, name, None)), f"no CoreClient.{name}")

    def test_account_and_errors(self):
        client = self.new_client()
        account = client.account()
        self.assertEqual(account.key.kind, "account")
        self.assertEqual(account.name, "py")
        with enact.CoreClient(self.base_url, "not-a-key") as stranger:
            with self.assertRaises(enact.UnauthenticatedError) as ctx:
                stranger.account()
        e = ctx.exception
        self.assertEqual((e.status, e.error_code), (401, "unauthenticated"))
        self.assertNotEqual(e.request_id, "")
        self.assertNotIn("not-a-key", json.dumps(e.body))
        with self.assertRaises(enact.NotFoundError) as ctx:
            client.get_group(987654)
        self.assertEqual(ctx.exception.status, 404)
        with self.assertRaises(enact.InvalidRequestError):
            client.new_account("")

    def test_groups_wallets_and_keys(self):
        client = self.new_client()
        group = client.add_group("g1", description="first")
        self.assertEqual(client.get_group(group.group_id), group)
        wallet = client.create_wallet("w1")
        self.assertTrue(enact.is_checksum_address(wallet.pkp_id))
        # Base58 of a 32-byte Ed25519 public key: 32 to 44 characters of the Bitcoin alphabet.
        self.assertRegex(wallet.solana_address or "", r"^[1-9A-HJ-NP-Za-km-z]{32,44}$")
        group = client.add_pkp_to_group(group.group_id, wallet.pkp_id)
        self.assertEqual(group.pkp_ids_permitted, (wallet.pkp_id,))
        self.assertEqual(client.list_wallets_in_group(group.group_id).items, [wallet])
        self.assertEqual(client.list_wallets(page_size=1).total, 1)
        updated = client.update_group(group.group_id, name="g2", description="renamed",
                                      pkp_ids_permitted=[], cid_hashes_permitted=[])
        self.assertEqual((updated.name, updated.pkp_ids_permitted), ("g2", ()))
        groups = client.list_groups(page_number=1, page_size=10)
        self.assertEqual((groups.total, groups.items[0].name), (1, "g2"))

        perms = enact.Permissions(can_create_groups=True, execute_in_groups=(group.group_id,))
        key = client.add_usage_api_key("runner", permissions=perms)
        listed = client.list_api_keys().items
        self.assertEqual([(k.hash, k.permissions) for k in listed], [(key.hash, perms)])
        self.assertEqual(client.update_usage_api_key_metadata(key.usage_api_key, name="r2", description="d"),
                         key.hash)
        self.assertEqual(client.update_usage_api_key(key.usage_api_key, name="r3"), key.hash)
        self.assertEqual(client.list_api_keys().items[0].permissions, enact.Permissions())
        self.assertEqual(client.remove_usage_api_key(key.usage_api_key), key.hash)
        self.assertEqual(client.remove_group(group.group_id), group.group_id)
        with self.assertRaises(enact.NotFoundError):
            client.get_group(group.group_id)

    def test_actions_and_billing(self):
        client = self.new_client()
        code = "Enact.setResponse(params.a + params.b);"
        uploaded = client.upload_action(code)
        self.assertEqual(uploaded.action_ipfs_cid, enact.cid_v0(code.encode()))
        action = client.add_action(uploaded.action_ipfs_cid, name="adder")
        self.assertEqual(action.hashed_cid, uploaded.hashed_cid)
        group = client.add_group("g")
        group = client.add_action_to_group(group.group_id, uploaded.action_ipfs_cid)
        self.assertEqual(group.cid_hashes_permitted, (uploaded.hashed_cid,))
        self.assertEqual(client.list_actions(group_id=group.group_id).items, [action])
        self.assertEqual(client.list_actions().total, 1)
        renamed = client.update_action_metadata(action.hashed_cid, name="add", description="sums")
        self.assertEqual(renamed.name, "add")
        self.assertEqual(client.get_action_code(uploaded.action_ipfs_cid),
                         enact.ActionCode(uploaded.action_ipfs_cid, code))
        with self.assertRaises(enact.NotFoundError):
            client.get_action_code(enact.cid_v0(b"registered by no one"))
        with self.assertRaises(enact.InvalidRequestError):
            client.get_action_code("not a cid")

        before = client.balance()
        intent = client.create_payment_intent(amount_cents=500)
        self.assertEqual(intent.amount_cents, 500)
        credited = client.confirm_payment(intent.payment_intent_id)
        self.assertGreater(credited, before.balance_credits)
        with self.assertRaises(enact.ConflictError):
            client.confirm_payment(intent.payment_intent_id)
        self.assertEqual(client.balance().balance_credits, credited)
        self.assertTrue(client.billing_payments().items[0].credited)

        result = client.run_action(action_ipfs_cid=uploaded.action_ipfs_cid, params={"a": 2, "b": 3})
        self.assertIsInstance(result, enact.RunResult)
        self.assertEqual(result.response, 5)
        # Inline code runs when its CID is permitted in a group, like a stored action.
        thrower = "throw new Error('boom');"
        cid = client.upload_action(thrower).action_ipfs_cid
        client.add_action(cid, name="thrower")
        client.add_action_to_group(group.group_id, cid)
        with self.assertRaises(enact.ActionFailedError) as ctx:
            client.run_action(code=thrower)
        self.assertEqual((ctx.exception.status, ctx.exception.details["kind"]), (422, "exception"))
        self.assertIn("boom", ctx.exception.body["error"]["message"])
        self.assertGreaterEqual(client.billing_usage().total, 1)

        group = client.remove_action_from_group(group.group_id, action.hashed_cid)
        self.assertNotIn(action.hashed_cid, group.cid_hashes_permitted)
        self.assertEqual(client.delete_action(action.hashed_cid), action.hashed_cid)

    def test_chain_secured(self):
        client = self.new_client()
        config = client.get_node_chain_config()
        self.assertEqual(client.deployment(), config)
        deployment = dict(chain_id=config.chain_id, verifying_contract=config.contract_address)
        key = enact.keccak256(b"python chain-secured " + str(time.time()).encode())
        admin = enact.Account.from_key(key)

        # Signed by the client for the server's deployment, a fresh nonce each call.
        minted = client.create_wallet_with_signature(wallet_key=key)
        self.assertTrue(enact.is_checksum_address(minted.pkp_id))
        self.assertTrue(enact.is_checksum_address(client.create_wallet_with_signature(wallet_key=key).pkp_id))
        # A proof signed here is accepted once: its nonce is used up.
        proof = enact.envelope_sign_v2("CreateWallet", key, issued_at=int(time.time()), **deployment)
        client.create_wallet_with_signature(proof)
        with self.assertRaises(enact.SignatureExpiredError):
            client.create_wallet_with_signature(proof)
        stale = enact.envelope_sign_v2("CreateWallet", key, issued_at=int(time.time()) - 3600, **deployment)
        with self.assertRaises(enact.SignatureExpiredError):
            client.create_wallet_with_signature(stale)
        other = enact.envelope_sign_v2("CreateWallet", key, issued_at=int(time.time()),
                                       chain_id=config.chain_id + 1, verifying_contract=config.contract_address)
        with self.assertRaises(enact.ChainIdMismatchError) as ctx:
            client.create_wallet_with_signature(other)
        self.assertEqual(ctx.exception.status, 400)
        # A chain the caller names that is not the server's: refused before sending.
        with self.assertRaises(enact.ChainIdMismatchError) as ctx:
            client.add_usage_api_key_with_signature(wallet_key=key, chain_id=config.chain_id + 1)
        self.assertEqual(ctx.exception.status, 0)
        with self.assertRaises(enact.InvalidArgumentError):
            client.create_wallet_with_signature(proof, wallet_key=key)

        # Version 1 still mints, but never converts (unless the operator opts in).
        v1 = enact.envelope_sign("CreateWallet", key, issued_at=int(time.time()), chain_id=config.chain_id)
        client.create_wallet_with_signature(v1)
        v1 = enact.envelope_sign("ConvertAccount", key, issued_at=int(time.time()), chain_id=config.chain_id)
        with self.assertRaises(enact.TypedDataInvalidError):
            client.convert_to_chain_secured_account(admin.address, v1)
        # A ConvertAccount for another account converts nothing.
        elsewhere = enact.envelope_sign_v2("ConvertAccount", key, issued_at=int(time.time()), account=bytes(32),
                                           **deployment)
        with self.assertRaises(enact.SignatureInvalidError):
            client.convert_to_chain_secured_account(admin.address, elsewhere)
        converted = client.convert_to_chain_secured_account(new_admin_key=key)
        self.assertEqual(converted.new_admin_wallet_address, admin.address)
        # The former account key no longer authenticates.
        with self.assertRaises(enact.UnauthenticatedError):
            client.account()

        # Billing by the admin wallet: every request carries a BillingAuth signed for it alone.
        before = client.balance(wallet_key=key).balance_credits
        intent = client.create_payment_intent(amount_cents=500, wallet_key=key)
        credited = client.confirm_payment(intent.payment_intent_id, wallet_key=key)
        self.assertGreater(credited, before)
        self.assertTrue(client.billing_payments(page_size=5, wallet_key=key).items[0].credited)
        self.assertGreaterEqual(client.billing_usage(page_number=1, page_size=5, wallet_key=key).total, 0)
        stranger = enact.keccak256(b"no account's admin")
        with self.assertRaises(enact.UnauthenticatedError):
            client.balance(wallet_key=stranger)

if __name__ == "__main__":
    unittest.main()
