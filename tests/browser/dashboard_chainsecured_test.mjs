// SPDX-License-Identifier: Apache-2.0
// The dashboard's ChainSecured pages (docs/dashboard.md "Signing in") in headless Chromium against
// a real `enact-server --dev` on a free loopback port with a fresh data directory. An account made
// with the API is converted to ChainSecured for an admin wallet; the page signs in with that wallet
// (an ethers Wallet behind a minimal EIP-1193 provider, sending to the server's /rpc on loopback)
// and registers an action, a wallet (minted for its CreateWallet signature), a group holding both
// and a usage key made in the page, each through a registry transaction the page builds; the API
// then shows them to that usage key. Attacks: another wallet sends the same kinds of transaction
// (refused at estimation, and mined with status 0) and the page shows the registry's NotAdmin with
// nothing changed. axe-core on every page, a screenshot of each into the output directory, no
// console error, no request off loopback.
//
// usage: node dashboard_chainsecured_test.mjs <enact-server> <output dir>
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, inspector } from "./dashboard_harness.mjs";
import { check, collectConsoleErrors, finish, loopbackBrowser, spawnServer } from "./page_harness.mjs";

// --evm: the server on the evm ledger (--ledger evm) with the Solidity registry deployed on anvil,
// where the wallet sends instead of the server's /rpc.
const evm = process.argv.includes("--evm");
const [binary, outDir = join(tmpdir(), "enact-dashboard-chainsecured-shots")] = process.argv.slice(2).filter((a) => a !== "--evm");
if (!binary) {
  console.error("usage: node dashboard_chainsecured_test.mjs <enact-server> [output dir] [--evm]");
  process.exit(2);
}
const label = evm ? "browser.dashboard_chainsecured_evm" : "browser.dashboard_chainsecured";
mkdirSync(outDir, { recursive: true });
const inspect = inspector(outDir);
const ethers = createRequire(new URL("../vectors/package.json", import.meta.url))("ethers");

/**
 * The version 2 envelope of docs/protocol.md §2 signed by `wallet` for the deployment `config`
 * (get_node_chain_config); `members` what the flow binds ({ account } for ConvertAccount).
 */
async function envelope(wallet, primaryType, config, members = {}) {
  const fields = [{ name: "address", type: "address" }, ...(primaryType === "ConvertAccount" ? [{ name: "account", type: "bytes32" }] : []),
    { name: "issuedAt", type: "uint256" }, { name: "nonce", type: "bytes32" }];
  const domain = { name: "Svc ChainSecured", version: "2", chainId: config.chain_id, verifyingContract: config.contract_address };
  const message = { address: wallet.address, issuedAt: Math.floor(Date.now() / 1000), nonce: ethers.hexlify(ethers.randomBytes(32)), ...members };
  const types = {
    EIP712Domain: [{ name: "name", type: "string" }, { name: "version", type: "string" }, { name: "chainId", type: "uint256" }, { name: "verifyingContract", type: "address" }],
    [primaryType]: fields,
  };
  return { typed_data: { types, primaryType, domain, message }, signature: await wallet.signTypedData(domain, { [primaryType]: fields }, message) };
}

/**
 * The page's ABI code (dashboard/src/abi.js, chainsecured.js) against ethers' on the registry's
 * committed ABI: every function's calldata, every list view's answer and every custom error.
 */
async function abiChecks() {
  const { decode, encodeCall } = await import("../../dashboard/src/abi.js");
  const { decodeRevert } = await import("../../dashboard/src/chainsecured.js");
  const registry = JSON.parse(readFileSync(new URL("../../contracts/build/PermissionRegistry.json", import.meta.url), "utf8"));
  const iface = new ethers.Interface(registry.abi ?? registry);
  const typeOf = (p) => (p.type.startsWith("tuple") ? `(${p.components.map(typeOf).join(",")})${p.type.slice(5)}` : p.type);
  let n = 0;
  const sample = (p) => {
    ++n;
    if (p.type.endsWith("[]")) return [0, 1, 2].slice(0, n % 3).map(() => sample({ ...p, type: p.type.slice(0, -2) }));
    if (p.type === "tuple") return p.components.map(sample);
    if (p.type === "uint256") return BigInt(n) * 0x1000000000000000000000001n;
    if (p.type === "address") return ethers.getAddress(`0x${n.toString(16).padStart(40, "a")}`);
    if (p.type === "bool") return n % 2 === 0;
    if (p.type === "string") return `näme ${"x".repeat(n * 7)}`;
    if (p.type === "bytes") return `0x${"ab".repeat(n)}`;
    throw new Error(`no sample for ${p.type}`);
  };
  const bad = [];
  for (const f of registry.abi ?? registry) {
    if (f.type !== "function" && f.type !== "error") continue;
    const signature = `${f.name}(${f.inputs.map(typeOf).join(",")})`;
    const args = f.inputs.map(sample);
    if (f.type === "error") {
      const got = decodeRevert(iface.encodeErrorResult(signature, args));
      if (got?.name !== f.name) bad.push(`error ${signature}: ${JSON.stringify(got)}`);
      continue;
    }
    if (encodeCall(signature, args) !== iface.encodeFunctionData(signature, args)) bad.push(`calldata of ${signature}`);
    if (!f.outputs.length) continue;
    const result = f.outputs.map(sample);
    const decoded = decode(f.outputs.map(typeOf), iface.encodeFunctionResult(iface.getFunction(signature), result));
    const norm = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x));
    if (norm(decoded) !== norm(result)) bad.push(`answer of ${signature}: ${norm(decoded)} != ${norm(result)}`);
  }
  check("the page's ABI encoding and decoding equal ethers' for every registry function, answer and error", bad.length === 0 && n > 100, bad.join("; "));
  // The generated table the pages call by name (dashboard/src/registry_abi.js) names every
  // function of the ABI with its own outputs.
  const { kRegistryFunctions } = await import("../../dashboard/src/registry_abi.js");
  const table = Object.values(kRegistryFunctions);
  const functions = (registry.abi ?? registry).filter((f) => f.type === "function");
  const outputsOf = (signature) => functions.find((f) => `${f.name}(${f.inputs.map(typeOf).join(",")})` === signature)?.outputs.map(typeOf).join();
  const off = table.filter(({ signature, outputs }) => outputsOf(signature) !== outputs.join());
  check("registry_abi.js lists every registry function with its outputs", table.length === functions.length && off.length === 0, JSON.stringify(off));
}

/**
 * `probe()` until `ok(value)`, for up to 20 s: on the evm ledger the server's registry cache
 * follows the chain's events, so a change shows through the API a moment after its receipt.
 * Answers the last value.
 */
async function eventually(probe, ok) {
  const until = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const mined = (what) => new RegExp(`${what}: transaction 0x[0-9a-f]{64} mined in block \\d+\\.`);

/**
 * The chain for --evm: anvil, the registry deployed by `enact-server deploy-registry` for the data
 * directory's api payer: { node, serverArgs }.
 */
async function evmChain(dataDir) {
  const { startAnvil } = await import("../anvil/anvil.mjs");
  const node = await startAnvil({ chainId: 31337 });
  const keyFile = join(dataDir, "..", `${dataDir.split("/").pop()}-deployer.key`);
  // anvil's first dev account (mnemonic "test test ... junk") deploys.
  writeFileSync(keyFile, "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80\n", { mode: 0o600 });
  const deployed = spawnSync(binary, ["deploy-registry", "--rpc-url", node.url, "--key-file", keyFile, "--data-dir", dataDir], { encoding: "utf8" });
  rmSync(keyFile, { force: true });
  const registry = deployed.stdout.trim();
  if (deployed.status !== 0 || !/^0x[0-9a-fA-F]{40}$/.test(registry)) throw new Error(`deploy-registry: exit ${deployed.status}\n${deployed.stderr}`);
  return { node, serverArgs: ["--ledger", "evm", "--rpc-url", node.url, "--registry-address", registry, "--chain-id", "31337"] };
}

const dataDir = mkdtempSync(join(tmpdir(), "enact-dashboard-cs-"));
let chain = null;
let server = null;
let browser;
try {
  await abiChecks();
  if (evm) chain = await evmChain(dataDir);
  server = spawnServer([binary, "--dev", "--listen", "127.0.0.1:0", "--data-dir", dataDir, ...(chain?.serverArgs ?? [])]);
  const base = await server.found;
  const config = await (await fetch(`${base}/core/v1/get_node_chain_config`)).json();
  const chainId = Number(config.chain_id);
  const rpc = new ethers.JsonRpcProvider(chain ? chain.node.url : `${base}/rpc`, chainId, { staticNetwork: true, cacheTimeout: -1 });
  const admin = new ethers.Wallet("0x" + "51".repeat(32), rpc);
  const stranger = new ethers.Wallet("0x" + "52".repeat(32), rpc);
  if (chain) {
    // Gas for the api payers (the server's relays) and the two wallets, as an operator funds them.
    const payers = (await (await fetch(`${base}/core/v1/get_api_payers`)).json()).api_payers;
    for (const a of [...payers, admin.address, stranger.address]) await rpc.send("anvil_setBalance", [a, "0x3635c9adc5dea00000"]);
  }

  // An account made with the API, its action code uploaded with the account key, then converted
  // to ChainSecured for the admin wallet.
  const account = (await api(base, "POST", "/new_account", "", { name: "chainsecured dashboard" })).data;
  const cid = (await api(base, "POST", "/upload_action", account.api_key, { code: "Enact.setResponse({ok: true});" })).data.action_ipfs_cid;
  const converted = await api(base, "POST", "/convert_to_chain_secured_account", account.api_key, {
    new_admin_wallet_address: admin.address,
    ...(await envelope(admin, "ConvertAccount", config, { account: account.api_key_hash })),
  });
  check("the account is ChainSecured with the admin wallet", converted.status === 200, JSON.stringify(converted.data));

  const session = await loopbackBrowser();
  browser = session.browser;
  const page = await session.context.newPage();
  const errors = [];
  collectConsoleErrors(page, errors);
  page.on("dialog", (dialog) => dialog.accept());

  // The page's wallet: which ethers Wallet answers, and whether it sends without estimating gas
  // first (a transaction the registry refuses is then mined with status 0).
  const shim = { wallet: admin, skipEstimate: false };
  const sent = [];
  const typedSigned = []; // the documents the page had the wallet sign
  const walletRequest = async (method, params) => {
    const me = shim.wallet;
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [me.address.toLowerCase()];
      case "eth_chainId":
        return `0x${(shim.chainId ?? chainId).toString(16)}`;
      case "eth_signTypedData_v4": {
        if (params[0].toLowerCase() !== me.address.toLowerCase()) throw new Error("the wallet does not hold that account");
        const { domain, types, message, primaryType } = JSON.parse(params[1]);
        typedSigned.push({ primaryType, message });
        const { EIP712Domain, ...rest } = types;
        return me.signTypedData(domain, rest, message);
      }
      case "eth_sendTransaction": {
        const [tx] = params;
        if (tx.from.toLowerCase() !== me.address.toLowerCase()) throw new Error("the wallet does not hold that account");
        const out = await me.sendTransaction({ to: tx.to, data: tx.data, ...(shim.skipEstimate ? { gasLimit: 300000n } : {}) });
        sent.push({ from: me.address, hash: out.hash, data: tx.data });
        return out.hash;
      }
      case "eth_call":
      case "eth_getTransactionReceipt":
      case "eth_blockNumber":
        return rpc.send(method, params);
      default:
        throw new Error(`unsupported wallet method ${method}`);
    }
  };
  await session.context.exposeFunction("__testWallet", async (method, paramsJson) => {
    try {
      return { result: await walletRequest(method, JSON.parse(paramsJson)) };
    } catch (err) {
      // As a wallet reports a refused estimation: code 3, "execution reverted", the revert data.
      const data = err.data ?? err.info?.error?.data;
      return { error: data ? { code: 3, message: "execution reverted", data } : { code: 4001, message: err.shortMessage ?? err.message } };
    }
  });
  await session.context.addInitScript(() => {
    window.ethereum = {
      request: async ({ method, params }) => {
        const r = await window.__testWallet(method, JSON.stringify(params ?? []));
        if (r.error) throw Object.assign(new Error(r.error.message), r.error);
        return r.result;
      },
    };
  });

  // Every X-Wallet-Auth the page sends: a version 2 BillingAuth for exactly that request.
  const billed = [];
  page.on("request", (req) => {
    const header = req.headers()["x-wallet-auth"];
    if (!header) return;
    const url = new URL(req.url());
    const { typed_data: td } = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    billed.push({ header, method: req.method(), target: url.pathname + url.search, bodyHash: ethers.keccak256(req.postDataBuffer() ?? new Uint8Array()), td });
  });

  // Sign in with the admin wallet: the key pages are the registry's.
  await page.goto(`${base}/dashboard/`);
  await page.getByRole("button", { name: "Sign in with a wallet" }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  check("a wallet session has the registry's pages", (await page.locator("nav a").allInnerTexts()).join() === "Account,Usage keys,Groups,Wallets,Actions,Attestation",
    (await page.locator("nav a").allInnerTexts()).join());
  const boundTo = (b) => b.td.primaryType === "BillingAuth" && b.td.domain.version === "2" && b.td.domain.verifyingContract === config.contract_address &&
    Number(b.td.domain.chainId) === chainId && b.td.message.method === b.method && b.td.message.path === b.target && b.td.message.bodyHash === b.bodyHash;
  check("each billing request carries a version 2 BillingAuth for exactly itself", billed.length >= 4 && billed.every(boundTo),
    JSON.stringify(billed.filter((b) => !boundTo(b)).map(({ method, target, td }) => ({ method, target, message: td.message }))));
  // One prompt per distinct request: the sign-in's balance read is the page's own, signed once.
  const distinct = new Set(billed.map((b) => `${b.method} ${b.target} ${b.bodyHash}`)).size;
  check("the wallet signed once per distinct request", typedSigned.length === distinct, `${typedSigned.length} signatures for ${distinct} requests`);
  // Drawn again within the reuse window: the same requests, no new prompt.
  const signedBefore = typedSigned.length;
  await page.getByRole("link", { name: "Groups" }).click();
  await page.getByRole("heading", { name: "Groups", level: 1 }).waitFor();
  await page.getByRole("link", { name: "Account" }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  await page.locator("#balance").waitFor();
  check("the account page drawn again asks the wallet for nothing", typedSigned.length === signedBefore, `${typedSigned.length - signedBefore} more`);

  // Credits bought by the admin wallet: each POST signed for its own body.
  await page.getByLabel("Amount in US dollars").fill("5");
  await page.getByRole("button", { name: "Create payment intent" }).click();
  await page.getByRole("button", { name: "Confirm payment (dev provider)" }).click();
  await page.locator("table", { hasText: "credited" }).waitFor();
  const posts = billed.filter((b) => b.method === "POST");
  check("the payment's POSTs carry BillingAuths for their own bodies", posts.length === 2 && posts.every(boundTo) && posts[0].header !== posts[1].header,
    JSON.stringify(posts.map((b) => b.td.message)));

  // Actions: register the uploaded code's CID.
  await page.getByRole("link", { name: "Actions" }).click();
  await page.getByRole("heading", { name: "Actions", level: 1 }).waitFor();
  await inspect(page, "cs-01-actions-empty");
  await page.getByLabel("Action CID").fill(cid);
  await page.getByLabel("Action name").fill("ok");
  await page.getByRole("button", { name: "Register action" }).click();
  await page.getByText(mined("Action ok")).waitFor();
  check("the action is listed from the registry", (await page.locator("main").innerText()).includes(cid));
  await inspect(page, "cs-02-actions");

  // Wallets: a PKP minted for the wallet's CreateWallet signature, registered by its transaction.
  await page.getByRole("link", { name: "Wallets" }).click();
  await page.getByRole("heading", { name: "Wallets", level: 1 }).waitFor();
  await page.getByLabel("Wallet name").fill("signer");
  await page.getByRole("button", { name: "Register wallet" }).click();
  await page.getByText(mined("Wallet 0x[0-9a-fA-F]{40}")).waitFor();
  const walletCard = await page.locator("article", { has: page.getByRole("heading", { name: "signer" }) }).innerText();
  const pkp = /0x[0-9a-fA-F]{40}/.exec(walletCard)?.[0];
  check("the wallet is listed from the registry", !!pkp, walletCard);
  await inspect(page, "cs-03-wallets");

  // Groups: create one, then add the wallet and the action to it (two transactions).
  await page.getByRole("link", { name: "Groups" }).click();
  await page.getByRole("heading", { name: "Groups", level: 1 }).waitFor();
  await page.getByLabel("Group name").fill("ops");
  await page.getByRole("button", { name: "Create group" }).click();
  await page.getByText(mined("Group ops")).waitFor();
  await page.getByLabel("Add a wallet to ops").selectOption(pkp);
  await page.getByLabel("Add an action to ops").selectOption({ label: `ok (${cid})` });
  await page.getByRole("button", { name: "Add", exact: true }).click();
  await page.getByText(mined("Adding an action to ops")).waitFor();
  const opsCard = await page.locator("article", { has: page.getByRole("heading", { name: "ops (#1)" }) }).innerText();
  check("the group lists the wallet and the action", opsCard.includes(pkp) && opsCard.includes(cid), opsCard);
  await inspect(page, "cs-04-groups");

  // Usage keys: made in the page, its hash set with setUsageApiKey, its value shown once.
  await page.getByRole("link", { name: "Usage keys" }).click();
  await page.getByRole("heading", { name: "Usage keys", level: 1 }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill("runner");
  await page.getByLabel("Run actions in ops (#1)").check();
  await page.getByRole("button", { name: "Create key" }).click();
  await page.getByText(mined("Key runner")).waitFor();
  const usageKey = await page.getByLabel("Usage key value").inputValue();
  check("the new key's value is shown once, in the API's form", /^[A-Za-z0-9+/]{43}=$/.test(usageKey), usageKey);
  const keyCard = await page.locator("article", { has: page.getByRole("heading", { name: "runner" }) }).innerText();
  check("the key is listed with its permissions", /ops \(#1\)/.test(keyCard) && keyCard.includes("✓ yes"), keyCard);
  await inspect(page, "cs-05-keys");
  await page.getByRole("button", { name: "I have saved it" }).click();
  check("the value is gone from the page", (await page.getByLabel("Usage key value").count()) === 0);

  // What the page wrote is what the API sees with the page's key.
  const who = await api(base, "GET", "/account", usageKey);
  const keyHash = ethers.keccak256(ethers.toUtf8Bytes(usageKey));
  check("the page's key is a usage key of the account", who.status === 200 && who.data.key?.kind === "usage" && who.data.key?.hash === keyHash && who.data.api_key_hash === account.api_key_hash,
    JSON.stringify(who.data));
  const groups = (await api(base, "GET", "/list_groups", usageKey)).data.items;
  const cidHash = ethers.keccak256(ethers.toUtf8Bytes(cid));
  check("the API lists the group with the wallet and the action", groups.length === 1 && groups[0].name === "ops" &&
    groups[0].pkp_ids_permitted.map((p) => p.toLowerCase()).includes(pkp.toLowerCase()) && groups[0].cid_hashes_permitted.includes(cidHash), JSON.stringify(groups));
  const actions = (await api(base, "GET", "/list_actions", usageKey)).data.items;
  check("the API lists the action", actions.some((a) => a.action_ipfs_cid === cid && a.name === "ok"), JSON.stringify(actions));
  const wallets = (await api(base, "GET", "/list_wallets", usageKey)).data.items;
  check("the API lists the wallet", wallets.some((w) => w.pkp_id.toLowerCase() === pkp.toLowerCase() && w.name === "signer"), JSON.stringify(wallets));
  check("every write was the admin wallet's transaction", sent.length === 6 && sent.every((s) => s.from === admin.address), sent.map((s) => `${s.from} ${s.hash}`).join(", "));

  // The usage key's own wallet registered as a wallet of the account (what the minted-key flow of
  // docs/chainsecured.md does) is labelled a usage-key wallet on the Wallets page; the PKP is not.
  const usageWallet = new ethers.Wallet(ethers.hexlify(ethers.decodeBase64(usageKey))).address;
  const registry = new ethers.Contract(config.contract_address, ["function registerWalletDerivation(uint256,address,uint256,string,string)"], admin);
  await (await registry.registerWalletDerivation(BigInt(account.api_key_hash), usageWallet, 7n, "runner wallet", "")).wait();
  await page.getByRole("link", { name: "Wallets" }).click();
  await page.getByRole("heading", { name: "Wallets", level: 1 }).waitFor();
  const runnerCard = await page.locator("article", { has: page.getByRole("heading", { name: /^runner wallet/ }) }).innerText();
  const signerCard = await page.locator("article", { has: page.getByRole("heading", { name: "signer" }) }).innerText();
  check("the usage key's wallet is labelled, the PKP is not", /usage-key wallet/.test(runnerCard) && /never signs/.test(runnerCard) && !/usage-key wallet/i.test(signerCard), `${runnerCard} | ${signerCard}`);
  // With --evm the server reads the node, which may answer from before the registration for a moment.
  const listed = (await eventually(() => api(base, "GET", "/list_wallets", usageKey),
    (r) => (r.data.items ?? []).some((w) => w.pkp_id.toLowerCase() === usageWallet.toLowerCase()))).data.items;
  const flag = (a) => listed.find((w) => w.pkp_id.toLowerCase() === a.toLowerCase())?.usage_key_wallet;
  check("the API marks the usage key's wallet and not the PKP", flag(usageWallet) === true && flag(pkp) === false, JSON.stringify(listed));
  await page.getByRole("link", { name: "Usage keys" }).click();
  await page.getByRole("heading", { name: "Usage keys", level: 1 }).waitFor();

  // Editing the key's permissions replaces them on-chain (by its hash; the page needs no value).
  await page.getByText("Edit or remove runner").click();
  await page.locator("form.edit-key").getByLabel("Create groups").check();
  await page.getByRole("button", { name: "Save permissions" }).click();
  await page.getByText(mined("Permissions of runner")).waitFor();
  const edited = (await eventually(() => api(base, "GET", "/account", usageKey), (r) => r.data.key?.permissions?.can_create_groups === true)).data.key?.permissions;
  check("the edited permissions are the key's", edited?.can_create_groups === true && edited?.execute_in_groups?.join() === "1", JSON.stringify(edited));

  // A phone-sized screen: nothing wider than 375 px.
  await page.setViewportSize({ width: 375, height: 800 });
  for (const [route, name] of [["#/keys", "cs-keys-375px"], ["#/groups", "cs-groups-375px"]]) {
    await page.goto(`${base}/dashboard/${route}`);
    await page.locator("main h2").first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    // What sticks out, to say where the width comes from.
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll("main *")].filter((e) => !e.parentElement?.closest(".scroll") && e.getBoundingClientRect().right > 376).slice(0, 5).map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`));
    check(`${name}: fits 375 px`, width <= 375, `${width} ${wide.join(", ")}`);
    await inspect(page, name);
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  // A wallet on another chain is stopped before it sends anything.
  shim.chainId = 1;
  const before = sent.length;
  await page.getByRole("link", { name: "Groups" }).click();
  await page.getByRole("heading", { name: "Groups", level: 1 }).waitFor();
  await page.getByLabel("Group name").fill("elsewhere");
  await page.getByRole("button", { name: "Create group" }).click();
  await page.getByText(`The wallet is on chain 1; the registry is on chain ${chainId}. Switch the wallet's network first.`).waitFor();
  check("nothing is sent from a wallet on another chain", sent.length === before);
  delete shim.chainId;

  // Attack: another wallet sends the page's addGroup for this account; the registry refuses it at
  // estimation, the page shows NotAdmin, and nothing changes.
  shim.wallet = stranger;
  await page.getByRole("link", { name: "Groups" }).click();
  await page.getByRole("heading", { name: "Groups", level: 1 }).waitFor();
  await page.getByLabel("Group name").fill("evil");
  await page.getByRole("button", { name: "Create group" }).click();
  const refusal = page.getByText(/The registry refused addGroup: NotAdmin\(accountHash=0x[0-9a-f]{64}, sender=0x[0-9a-fA-F]{40}\)\./);
  await refusal.waitFor();
  check("the refusal names the stranger", (await refusal.innerText()).toLowerCase().includes(stranger.address.toLowerCase()), await refusal.innerText());
  await inspect(page, "cs-06-refused");
  check("the stranger's addGroup changed nothing", (await api(base, "GET", "/list_groups", usageKey)).data.items.length === 1);
  await page.getByRole("link", { name: "Usage keys" }).click();
  await page.getByRole("heading", { name: "Usage keys", level: 1 }).waitFor();
  await page.getByRole("link", { name: "Groups" }).click();
  await page.getByRole("heading", { name: "Groups", level: 1 }).waitFor();
  check("the page, read again, lists the one group", (await page.getByRole("heading", { name: /^Groups \(\d+\)$/ }).innerText()) === "Groups (1)");

  // Attack: the stranger's removeUsageApiKey sent without estimation is mined with status 0; the
  // page decodes NotAdmin from the receipt and the key keeps working.
  shim.skipEstimate = true;
  await page.getByRole("link", { name: "Usage keys" }).click();
  await page.getByRole("heading", { name: "Usage keys", level: 1 }).waitFor();
  await page.getByText("Edit or remove runner").click();
  await page.getByRole("button", { name: "Remove key" }).click();
  await page.getByText(/The registry refused removeUsageApiKey in transaction 0x[0-9a-f]{64}: NotAdmin\(/).waitFor();
  const last = sent.at(-1);
  const receipt = await rpc.send("eth_getTransactionReceipt", [last.hash]);
  check("the stranger's transaction was mined and reverted", last.from === stranger.address && receipt?.status === "0x0", JSON.stringify(receipt));
  check("the key still works after the refused removal", (await api(base, "GET", "/account", usageKey)).status === 200);

  // The admin removes the key: it stops working.
  shim.wallet = admin;
  shim.skipEstimate = false;
  await page.getByRole("button", { name: "Remove key" }).click();
  await page.getByText(mined("Removing runner")).waitFor();
  check("the removed key is refused by the API", (await eventually(() => api(base, "GET", "/account", usageKey), (r) => r.status === 401)).status === 401);
  await inspect(page, "cs-07-key-removed");

  check("no console error or CSP violation", errors.length === 0, errors.join(" | "));
  check("no request left loopback", session.offHost.length === 0, session.offHost.join(", "));
} catch (err) {
  check("ChainSecured dashboard walk-through", false, err.stack ?? String(err));
} finally {
  await browser?.close();
  await server?.stop();
  await chain?.node.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
finish(label);
