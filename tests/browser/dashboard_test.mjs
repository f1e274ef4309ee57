// SPDX-License-Identifier: Apache-2.0
// The dashboard (docs/dashboard.md) in headless Chromium against a real `enact-server --dev` that
// this script starts on a free loopback port with a fresh data directory. It signs in with an
// account key, buys credits through the dev provider, reads the chart of credit use, creates a
// usage key (shown once), edits its permissions and expiry, expires and removes it, creates groups
// and wallets (Ethereum and Solana addresses), reads actions' code back (and, as a usage key, is
// told which it may not read), runs one, walks the Triggers page and Attestation, converts to
// ChainSecured, and checks every write against the API as a script sees it. Each page is screenshotted into the output directory (the second
// argument) and checked with axe-core; any console error (a CSP violation is one), uncaught
// exception or request off loopback fails the test, as does a page wider than a 375 px screen.
//
// usage: node dashboard_test.mjs <enact-server> <output dir>
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, injectWallet, inspector, signInToTriggers, triggerApi, watchConsole } from "./dashboard_harness.mjs";
import { check, finish, loopbackBrowser, spawnServer } from "./page_harness.mjs";

const cronParser = createRequire(new URL("../vectors/package.json", import.meta.url))("cron-parser");

const [binary, outDir = join(tmpdir(), "enact-dashboard-shots")] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node dashboard_test.mjs <enact-server> [output dir]");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const inspect = inspector(outDir);

const dataDir = mkdtempSync(join(tmpdir(), "enact-dashboard-"));
const server = spawnServer([binary, "--dev", "--listen", "127.0.0.1:0", "--data-dir", dataDir]);
let browser;
try {
  const base = await server.found;
  const account = (await api(base, "POST", "/new_account", "", { name: "dashboard test" })).data;
  check("account created", typeof account.api_key === "string");

  // What the chart shows needs a charged run: a group with a PKP and an action, run once.
  const key = account.api_key;
  const group = (await api(base, "POST", "/add_group", key, { name: "payments" })).data;
  const pkp = (await api(base, "POST", "/create_wallet", key, { name: "payout signer" })).data.pkp_id;
  await api(base, "POST", "/add_pkp_to_group", key, { group_id: group.group_id, pkp_id: pkp });
  const code = "Enact.setResponse({ok: true});";
  const cid = (await api(base, "POST", "/upload_action", key, { code })).data.action_ipfs_cid;
  await api(base, "POST", "/add_action", key, { action_ipfs_cid: cid, name: "ok" });
  await api(base, "POST", "/add_action_to_group", key, { group_id: group.group_id, action_ipfs_cid: cid });

  const session = await loopbackBrowser();
  browser = session.browser;
  const page = await session.context.newPage();
  const errors = [];
  // The usage key's Actions page reads code it may not read: the server's 404s are expected there.
  watchConsole(page, errors, (url, text) => /status of 404/.test(text) && url.includes("/core/v1/get_action_code?"));
  const wallet = await injectWallet(session.context);

  // Sign in. The key must end up in session storage only.
  const first = await page.goto(`${base}/dashboard`);
  check("/dashboard answers the page", first.ok() && page.url() === `${base}/dashboard/`, page.url());
  const csp = first.headers()["content-security-policy"] ?? "";
  check("the page's CSP allows scripts and styles from the origin only",
    /script-src 'self';/.test(csp) && /style-src 'self';/.test(csp) && /default-src 'none'/.test(csp) && /frame-ancestors 'none'/.test(csp), csp);
  await page.getByLabel("Account API key").waitFor();
  await inspect(page, "01-sign-in");
  await page.getByLabel("Account API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  const cookies = await session.context.cookies();
  check("no cookie is set", cookies.length === 0, JSON.stringify(cookies));
  check("the key is not in the URL", !page.url().includes(encodeURIComponent(key)) && !page.url().includes(key), page.url());
  check("the key is in session storage", (await page.evaluate(() => Object.values(sessionStorage))).includes(key));
  check("nothing is in local storage", (await page.evaluate(() => localStorage.length)) === 0);

  // Account: mode, admin wallet, balance; buy credits with the dev provider.
  const text = await page.locator("main").innerText();
  check("the account page shows the admin wallet", text.includes(account.wallet_address));
  check("the account page shows the managed mode", text.includes("Managed"));
  check("the balance starts at 0", (await page.locator("#balance").innerText()) === "0 credits");
  await page.getByLabel("Amount in US dollars").fill("7.5");
  await page.getByRole("button", { name: "Create payment intent" }).click();
  await page.getByRole("button", { name: "Confirm payment (dev provider)" }).click();
  await page.getByText("No payments yet.").waitFor({ state: "detached" });
  const balance = (await api(base, "GET", "/billing/balance", key)).data.balance_credits;
  await page.locator("#balance", { hasText: `${balance} credits` }).waitFor();
  check("the payment was credited through the API", balance > 0, String(balance));
  const payments = (await api(base, "GET", "/billing/payments", key)).data.items;
  check("one payment of 750 cents, credited", payments.length === 1 && payments[0].amount_cents === 750 && payments[0].credited, JSON.stringify(payments));
  check("the payments table lists it", (await page.locator("table", { hasText: payments[0].payment_intent_id }).innerText()).includes("credited"));

  // A charged run, then the chart shows today's credits.
  const run = await api(base, "POST", "/run_action", key, { action_ipfs_cid: cid, pkp_id: pkp, params: {} });
  check("a run was charged", run.status === 200, JSON.stringify(run.data));
  const charged = (await api(base, "GET", "/billing/usage", key)).data.items.reduce((s, c) => s + c.charged_credits, 0);
  await page.reload();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  const chartLabel = await page.locator("svg.chart").getAttribute("aria-label");
  check("the chart sums the charges", charged > 0 && chartLabel.includes(`${charged} in all`), `${charged} / ${chartLabel}`);
  const bars = await page.locator("svg.chart rect.bar").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
  check("the chart has 14 days, today's bar the tallest", bars.length === 14 && bars[13] > 0 && bars[13] === Math.max(...bars), JSON.stringify(bars));
  await inspect(page, "02-account");

  // Usage keys: create with permissions, the value shown once.
  await page.getByRole("link", { name: "Usage keys" }).click();
  await page.getByRole("heading", { name: "Usage keys", level: 1 }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill("ci-bot");
  await page.getByLabel("Create wallets").check();
  await page.getByLabel("Run actions in Every group").check();
  await page.getByLabel(`Manage actions in payments (#${group.group_id})`).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const shown = page.getByLabel("Usage key value");
  await shown.waitFor();
  const usageKey = await shown.inputValue();
  let keys = (await api(base, "GET", "/list_api_keys", key)).data.items;
  check("the key was created through the API", keys.length === 1 && keys[0].name === "ci-bot");
  check("with the chosen permissions",
    keys[0].can_create_pkps && !keys[0].can_create_groups && keys[0].execute_in_groups.join() === "0" &&
      keys[0].manage_ipfs_ids_in_groups.join() === String(group.group_id) && keys[0].add_pkp_to_groups.length === 0,
    JSON.stringify(keys[0]));
  check("the shown value is the key", (await api(base, "GET", "/list_groups", usageKey)).status === 200);
  const matrix = await page.locator("table.matrix:not(.edit)").first().innerText();
  check("the matrix shows each group with its scopes", /Every group\s+✓ yes\s+— no\s+— no\s+— no/.test(matrix) && /payments \(#\d+\)\s+— no\s+✓ yes/.test(matrix), matrix);
  await inspect(page, "03-usage-key-created");
  await page.getByRole("button", { name: "I have saved it" }).click();
  check("the value is gone from the page", !(await page.content()).includes(usageKey));
  check("and was never stored", !(await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }))).includes(usageKey));

  // Edit permissions (the API names the key by its value).
  await page.getByText("Edit, expire or remove ci-bot").click();
  await page.getByLabel("Value of ci-bot").fill(usageKey);
  const edit = page.locator("form.edit-key");
  await edit.getByLabel("Create wallets").uncheck();
  await edit.getByLabel(`Remove wallets in payments (#${group.group_id})`).check();
  await inspect(page, "04-usage-key-edit");
  await edit.getByRole("button", { name: "Save permissions" }).click();
  await page.getByText("Permissions of ci-bot saved.").waitFor();
  keys = (await api(base, "GET", "/list_api_keys", key)).data.items;
  check("the edit went through the API",
    !keys[0].can_create_pkps && keys[0].remove_pkp_from_groups.join() === String(group.group_id) && keys[0].execute_in_groups.join() === "0",
    JSON.stringify(keys[0]));

  // Expiry: a new date, with the permissions kept as they are; then expire now; then never again.
  const listed = (k) => page.locator("article", { has: page.getByRole("heading", { name: k, exact: true }) });
  const later = Date.parse("2030-01-02T03:04:00Z") / 1000;
  await page.getByText("Edit, expire or remove ci-bot").click();
  await page.getByLabel("Value of ci-bot").fill(usageKey);
  await page.getByLabel("Expiry of ci-bot (UTC)").fill("2030-01-02T03:04");
  await page.getByRole("button", { name: "Save expiry" }).click();
  await page.getByText("ci-bot now expires 2030-01-02 03:04:00 UTC.").waitFor();
  const permsOf = (k) => JSON.stringify([k.can_create_groups, k.can_delete_groups, k.can_create_pkps, k.manage_ipfs_ids_in_groups, k.add_pkp_to_groups, k.remove_pkp_from_groups, k.execute_in_groups]);
  const beforeExpiry = keys[0];
  keys = (await api(base, "GET", "/list_api_keys", key)).data.items;
  check("the expiry was set through the API, the permissions kept",
    keys[0].expiration === later && permsOf(keys[0]) === permsOf(beforeExpiry), JSON.stringify(keys[0]));
  check("the list shows the new expiry", (await listed("ci-bot").innerText()).includes("expires 2030-01-02 03:04:00 UTC"));
  await page.getByText("Edit, expire or remove ci-bot").click();
  await page.getByLabel("Value of ci-bot").fill(usageKey);
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: "Expire now" }).click();
  await page.getByText(/^ci-bot expired /).waitFor();
  keys = (await api(base, "GET", "/list_api_keys", key)).data.items;
  check("expiring now went through the API", keys[0].expiration > 0 && keys[0].expiration <= Date.now() / 1000 && permsOf(keys[0]) === permsOf(beforeExpiry), JSON.stringify(keys[0]));
  check("the expired key no longer works", (await api(base, "GET", "/list_groups", usageKey)).status === 401);
  check("the list shows the key expired", (await listed("ci-bot").locator(".expired").innerText()).startsWith("expired "));
  await inspect(page, "04b-usage-key-expired");
  await page.getByText("Edit, expire or remove ci-bot").click();
  await page.getByLabel("Value of ci-bot").fill(usageKey);
  await page.locator("form.edit-key").getByRole("button", { name: "Save permissions" }).click();
  await page.getByText("ci-bot has expired: give it a new expiry (or none) first.").waitFor();
  await page.getByLabel("Expiry of ci-bot (UTC)").fill("");
  await page.getByRole("button", { name: "Save expiry" }).click();
  await page.getByText("ci-bot now never expires.").waitFor();
  keys = (await api(base, "GET", "/list_api_keys", key)).data.items;
  check("an empty expiry brings the key back, never expiring", keys[0].expiration === 0 && (await api(base, "GET", "/list_groups", usageKey)).status === 200, JSON.stringify(keys[0]));
  check("the list says it never expires", (await listed("ci-bot").innerText()).includes("never expires"));

  // Remove.
  await page.getByText("Edit, expire or remove ci-bot").click();
  await page.getByLabel("Value of ci-bot").fill(usageKey);
  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: "Remove key" }).click();
  await page.getByText("Key ci-bot removed.").waitFor();
  keys = (await api(base, "GET", "/list_api_keys", key)).data.items;
  check("the key was removed through the API", keys.length === 0, JSON.stringify(keys));
  check("the removed key no longer works", (await api(base, "GET", "/list_groups", usageKey)).status === 401);

  // Groups: create one, add a wallet and an action to it, remove the wallet.
  await page.getByRole("link", { name: "Groups" }).click();
  await page.getByRole("heading", { name: "Groups", level: 1 }).waitFor();
  await page.getByLabel("Group name").fill("ops");
  await page.getByRole("button", { name: "Create group" }).click();
  await page.getByText(/Group ops \(#\d+\) created\./).waitFor();
  const ops = (await api(base, "GET", "/list_groups", key)).data.items.find((g) => g.name === "ops");
  check("the group was created through the API", !!ops);
  const opsCard = page.locator("article", { has: page.getByRole("heading", { name: `ops (#${ops.group_id})` }) });
  await opsCard.getByLabel("Add a wallet to ops").selectOption(pkp);
  await opsCard.getByLabel("Add an action to ops").selectOption(cid);
  await opsCard.getByRole("button", { name: "Add", exact: true }).click();
  await page.getByText("Action added to ops.").waitFor();
  let opsNow = (await api(base, "GET", `/get_group?group_id=${ops.group_id}`, key)).data;
  check("the wallet and the action were added through the API",
    opsNow.pkp_ids_permitted.join() === pkp && opsNow.cid_hashes_permitted.length === 1, JSON.stringify(opsNow));
  await inspect(page, "07-groups");
  await page.getByRole("button", { name: `Remove wallet ${pkp} from ops` }).click();
  await page.getByText("Wallet removed from ops.").waitFor();
  opsNow = (await api(base, "GET", `/get_group?group_id=${ops.group_id}`, key)).data;
  check("the wallet was removed through the API", opsNow.pkp_ids_permitted.length === 0, JSON.stringify(opsNow));

  // Wallets: create one; its Ethereum address shows, and the Solana slot.
  await page.getByRole("link", { name: "Wallets" }).click();
  await page.getByRole("heading", { name: "Wallets", level: 1 }).waitFor();
  await page.getByLabel("Wallet name").fill("signer-2");
  await page.getByRole("button", { name: "Create wallet" }).click();
  await page.getByText(/Wallet 0x[0-9a-fA-F]{40} created, Solana address [1-9A-HJ-NP-Za-km-z]{32,44}\./).waitFor();
  const wallets = (await api(base, "GET", "/list_wallets", key)).data.items;
  const made = wallets.find((w) => w.name === "signer-2");
  check("the wallet was created through the API", !!made);
  const walletText = await page.locator("article", { has: page.getByRole("heading", { name: "signer-2" }) }).innerText();
  check("the API answers a Solana address for the new wallet", /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(made.solana_address ?? ""), JSON.stringify(made));
  check("the wallet shows its Ethereum and Solana addresses",
    walletText.includes(made.wallet_address) && /Solana address/.test(walletText) && walletText.includes(made.solana_address), walletText);
  const listedSolana = await page.locator("article", { has: page.getByRole("heading", { name: "payout signer" }) }).innerText();
  check("so does a wallet created through the API", listedSolana.includes(wallets.find((w) => w.pkp_id === pkp).solana_address), listedSolana);
  check("a PKP is no usage-key wallet, for the API and the page", made.usage_key_wallet === false && !/usage-key wallet/i.test(walletText), walletText);
  check("the page no longer says the API answers no Solana address", !(await page.locator("main").innerText()).includes("not offered"));
  await inspect(page, "08-wallets");

  // Actions: add one from its code, see it highlighted, run it with a PKP, check the signature.
  await page.getByRole("link", { name: "Actions" }).click();
  await page.getByRole("heading", { name: "Actions", level: 1 }).waitFor();
  const signCode = 'const digest = Enact.keccak256(params.message);\n// sign it\nEnact.signEcdsa({pkpId: params.pkp, digest: digest, name: "payout"});\nEnact.setResponse({signed: true});';
  await page.getByLabel("Action name").fill("sign");
  await page.getByLabel("Action code (JavaScript)").fill(signCode);
  await page.getByRole("button", { name: "Add action" }).click();
  await page.getByText(/Action sign added: /).waitFor();
  const signAction = (await api(base, "GET", "/list_actions", key)).data.items.find((a) => a.name === "sign");
  check("the action was uploaded and added through the API", !!signAction);
  await api(base, "POST", "/add_action_to_group", key, { group_id: group.group_id, action_ipfs_cid: signAction.action_ipfs_cid });
  const signCard = page.locator("article", { has: page.getByRole("heading", { name: "sign", exact: true }) });
  check("the card shows the CID", (await signCard.innerText()).includes(signAction.action_ipfs_cid));
  await signCard.getByLabel("Code of sign").waitFor();
  check("the code is read back from the server", (await signCard.getByLabel("Code of sign").innerText()) === signCode);
  check("the code is highlighted",
    (await signCard.locator(".tok-api").count()) > 0 && (await signCard.locator(".tok-comment").count()) === 1 && (await signCard.locator(".tok-string").count()) === 1);
  await signCard.locator("summary", { hasText: "Run sign" }).click();
  await signCard.getByLabel("Params for sign (JSON)").fill(JSON.stringify({ pkp, message: "pay 5 USDC to bob" }));
  await signCard.getByLabel("PKP for sign").selectOption(pkp);
  await signCard.getByRole("button", { name: "Run sign" }).click();
  await signCard.locator(".sig").waitFor();
  const sigText = await signCard.locator(".sig").innerText();
  check("the signature verifies in the page and recovers to the PKP", sigText.includes(`✓ valid: signed by ${pkp.toLowerCase()}`), sigText);
  check("the response is shown", (await signCard.locator(".run-result").innerText()).includes('"signed": true'));
  await inspect(page, "09-actions-run");
  const okCode = page.locator("article", { has: page.getByRole("heading", { name: "ok", exact: true }) }).getByLabel("Code of ok");
  check("an action added through the API shows its code too", (await okCode.innerText()) === code && (await okCode.locator(".tok-api").count()) === 1);

  // A usage key sees the code of the actions it may run, and for the others a message, not code:
  // the server answers not_found (GET /get_action_code's permission rule, docs/protocol.md §2).
  const runKey = (await api(base, "POST", "/add_usage_api_key", key, { name: "triggers", execute_in_groups: [group.group_id] })).data.usage_api_key;
  const hiddenCode = "Enact.setResponse({hidden: 'outside every group'});";
  const hiddenCid = (await api(base, "POST", "/upload_action", key, { code: hiddenCode })).data.action_ipfs_cid;
  await api(base, "POST", "/add_action", key, { action_ipfs_cid: hiddenCid, name: "hidden" });
  const readBy = async (k, c) => (await api(base, "GET", `/get_action_code?action_ipfs_cid=${encodeURIComponent(c)}`, k));
  check("through the API the usage key reads the code of an action in its group, not one outside",
    (await readBy(runKey, cid)).data.code === code && (await readBy(runKey, hiddenCid)).status === 404 && (await readBy(runKey, hiddenCid)).data.error?.code === "not_found");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Account API key").fill(runKey);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  await page.getByRole("link", { name: "Actions" }).click();
  const hiddenCard = page.locator("article", { has: page.getByRole("heading", { name: "hidden", exact: true }) });
  await hiddenCard.locator(".code-error").waitFor();
  check("the usage key's page shows why the code cannot be read",
    (await hiddenCard.locator(".code-error").innerText()).includes("The code cannot be read: no action with this CID that this key may read (not_found, HTTP 404).") && (await hiddenCard.locator("pre").count()) === 0);
  check("and no code of that action anywhere in the page", !(await page.content()).includes("outside every group"));
  await page.locator("article", { has: page.getByRole("heading", { name: "ok", exact: true }) }).getByLabel("Code of ok").waitFor();
  await inspect(page, "10b-actions-usage-key");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Account API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();

  // Triggers: sign in through the approval handshake, create a webhook and a schedule, watch runs.
  const boomCid = (await api(base, "POST", "/upload_action", key, { code: 'function explode() { throw new Error("boom"); }\nexplode();' })).data.action_ipfs_cid;
  await api(base, "POST", "/add_action", key, { action_ipfs_cid: boomCid, name: "boom" });
  await api(base, "POST", "/add_action_to_group", key, { group_id: group.group_id, action_ipfs_cid: boomCid });
  await page.getByRole("link", { name: "Triggers" }).click();
  await page.getByRole("heading", { name: "Triggers", level: 1 }).waitFor();
  await inspect(page, "11-triggers-sign-in");
  await signInToTriggers(page, session.context, errors);
  const bearer = await page.evaluate(() => sessionStorage.getItem("enact.dashboard.triggerToken"));
  const tapi = triggerApi(base, bearer);
  check("the handshake's token works for the wallet's user", (await tapi("GET", "/api/me")).data?.user_id === wallet.address.toLowerCase());

  await page.getByLabel("Trigger name").fill("hook");
  await page.getByLabel("Action", { exact: true }).selectOption(cid);
  await page.getByLabel("Usage key for its runs").fill(runKey);
  await page.getByRole("button", { name: "Create trigger" }).click();
  await page.getByText(/Trigger hook created/).waitFor();
  await page.getByLabel("Kind").selectOption("schedule");
  await page.getByLabel("Trigger name").fill("weekday mornings");
  await page.getByLabel("Action", { exact: true }).selectOption(cid);
  await page.getByLabel("Usage key for its runs").fill(runKey);
  await page.getByLabel("Schedule (cron, UTC)").fill("0 9 * * mon-fri");
  const shownFirings = await page.locator("ol.firings li").allInnerTexts();
  const expected = cronParser.CronExpressionParser.parse("0 9 * * mon-fri", { currentDate: new Date(), tz: "UTC" })
    .take(5).map((d) => d.toISOString().replace("T", " ").replace(".000Z", " UTC"));
  check("the cron helper shows cron-parser's next five firings", JSON.stringify(shownFirings) === JSON.stringify(expected), `${shownFirings} / ${expected}`);
  await inspect(page, "12-triggers-create-schedule");
  await page.getByRole("button", { name: "Create trigger" }).click();
  await page.getByText(/Trigger weekday mornings created/).waitFor();
  let triggers = (await tapi("GET", "/api/triggers?limit=100")).data.items;
  const hook = triggers.find((t) => t.name === "hook");
  const sched = triggers.find((t) => t.name === "weekday mornings");
  check("both triggers were created through the API",
    hook?.type === "webhook" && sched?.type === "schedule" && sched.config.cron === "0 9 * * mon-fri" && sched.enabled, JSON.stringify(triggers));

  const schedCard = page.locator("article", { has: page.getByRole("heading", { name: "weekday mornings (schedule)" }) });
  await schedCard.getByRole("button", { name: "Disable" }).click();
  await page.getByText("Trigger weekday mornings disabled.").waitFor();
  triggers = (await tapi("GET", "/api/triggers?limit=100")).data.items;
  check("disabling went through the API", triggers.find((t) => t.name === "weekday mornings")?.enabled === false);

  // The live view shows a webhook run as it finishes; its details show params and response.
  const hookCard = page.locator("article", { has: page.getByRole("heading", { name: "hook (webhook)" }) });
  await hookCard.locator("summary", { hasText: "Runs of hook" }).click();
  await hookCard.getByLabel("Live: show new runs as they come").check();
  const fired = await fetch(`${base}/webhook/${hook.id}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ order: 7 }) });
  const { run_id: runId } = await fired.json();
  check("the webhook was accepted", fired.status === 202 && typeof runId === "string");
  await hookCard.locator("tr", { hasText: runId }).locator(".run-success").waitFor({ timeout: 60_000 });
  check("the live view shows the run succeeded", true);
  await hookCard.getByRole("button", { name: `Details of run ${runId}` }).click();
  const detail = await hookCard.locator(".run-detail").innerText();
  check("the run's params and response are shown", detail.includes('"order": 7') && detail.includes('"ok": true'), detail);
  await inspect(page, "13-triggers-runs");

  // A failed run: filtered by status, with the action's JavaScript stack.
  const boom = await tapi("POST", "/api/triggers", { type: "webhook", name: "boom", action_ipfs_cid: boomCid, usage_api_key: runKey, config: {} });
  check("a failing trigger was created", boom.status === 201, JSON.stringify(boom.data));
  const boomRun = (await (await fetch(`${base}/webhook/${boom.data.id}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })).json()).run_id;
  for (let i = 0; i < 60; ++i) {
    const r = await tapi("GET", `/api/runs/${boomRun}`);
    if (r.data?.status === "failed") break;
    await new Promise((res) => setTimeout(res, 500));
  }
  await page.reload();
  await page.getByRole("heading", { name: "Triggers", level: 1 }).waitFor();
  const boomCard = page.locator("article", { has: page.getByRole("heading", { name: "boom (webhook)" }) });
  await boomCard.locator("summary", { hasText: "Runs of boom" }).click();
  await boomCard.getByLabel("Status of runs of boom").selectOption("success");
  await boomCard.getByText("No success runs.").waitFor();
  await boomCard.getByLabel("Status of runs of boom").selectOption("failed");
  await boomCard.getByRole("button", { name: `Details of run ${boomRun}` }).click();
  const boomDetail = await boomCard.locator(".run-detail").innerText();
  check("the failed run shows its error and JavaScript stack", /Error[\s\S]*boom/.test(boomDetail) && /Stack[\s\S]*explode/.test(boomDetail), boomDetail);
  await inspect(page, "14-triggers-failed-run");

  // Attestation: the server's own verification of its evidence, as a pass/fail table. The route is
  // public and each fresh check makes requests to the server itself: a burst of callers shares one
  // check (the others are told to come back), so it cannot make the server flood itself.
  const selfChecks = () => server.output.filter((l) => l.includes('"route":"/attestation"')).length;
  const selfBefore = selfChecks();
  const burst = await Promise.all(Array.from({ length: 8 }, () => fetch(`${base}/dashboard/attestation-checks`)));
  await new Promise((r) => setTimeout(r, 300)); // the server's log lines reach us through a pipe
  check("a burst of 8 attestation-check calls makes one check: 200s, the others 503 with Retry-After",
    burst.some((r) => r.status === 200) &&
      burst.every((r) => r.status === 200 || (r.status === 503 && r.headers.get("retry-after") === "1")) &&
      selfChecks() - selfBefore === 1,
    `statuses ${burst.map((r) => r.status).join(",")}, GET /attestation made ${selfChecks() - selfBefore} times`);
  const checksRes = await fetch(`${base}/dashboard/attestation-checks`);
  const checks = await checksRes.json();
  check("the attestation checks answer verify_all's report",
    checksRes.status === 200 && ["pass", "fail"].includes(checks.verdict) && checks.quote.checks.some((c) => c.name === "quote_signature") &&
      checks.skipped.includes("network"), JSON.stringify(checks).slice(0, 400));
  await page.getByRole("link", { name: "Attestation" }).click();
  await page.getByRole("heading", { name: "Attestation", level: 1 }).waitFor();
  const verdictText = await page.locator(".verdict").innerText();
  check("the page shows the verdict", verdictText === `Verdict: ${checks.verdict === "pass" ? "pass" : "FAIL"}`, verdictText);
  const quoteRows = await page.locator("table", { hasText: "TDX quote" }).locator("tbody tr").allInnerTexts();
  check("one row per quote check, with its result",
    quoteRows.length === checks.quote.checks.length &&
      checks.quote.checks.every((c, i) => quoteRows[i].startsWith(c.name) && quoteRows[i].includes(c.passed ? "✓ pass" : "✗ fail")),
    JSON.stringify(quoteRows));
  await inspect(page, "16-attestation");

  // A phone-sized screen: nothing wider than 375 px.
  await page.setViewportSize({ width: 375, height: 800 });
  for (const [route, name] of [["#/account", "05-account-375px"], ["#/keys", "06-keys-375px"], ["#/actions", "10-actions-375px"], ["#/triggers", "15-triggers-375px"]]) {
    await page.goto(`${base}/dashboard/${route}`);
    await page.locator("main h1").waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(`${name}: fits 375 px`, width <= 375, String(width));
    await inspect(page, name);
  }

  // Convert to ChainSecured with the injected wallet (one-way), then sign in with that wallet.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base}/dashboard/#/account`);
  await page.getByRole("heading", { name: "Convert to ChainSecured" }).waitFor();
  await inspect(page, "17-convert");
  const creditsBefore = (await api(base, "GET", "/billing/balance", key)).data.balance_credits;
  await page.getByRole("button", { name: "Convert with my wallet" }).click();
  await page.getByText(/Tick the box first/).waitFor();
  check("no conversion without the one-way acknowledgement", (await api(base, "GET", "/account", key)).data.managed === true);
  await page.getByLabel(/I understand that the account key stops working/).check();
  await page.getByRole("button", { name: "Convert with my wallet" }).click();
  await page.getByRole("heading", { name: "Account converted" }).waitFor();
  check("the account key stops working", (await api(base, "GET", "/account", key)).status !== 200);
  check("the page forgot the key", (await page.evaluate(() => sessionStorage.length)) === 0);
  await page.getByRole("link", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign in with a wallet" }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  await page.locator("#balance", { hasText: `${creditsBefore} credits` }).waitFor();
  const walletPage = await page.locator("main").innerText();
  check("signed in with the wallet: ChainSecured, its address as admin, the same credits",
    walletPage.includes("ChainSecured") && walletPage.toLowerCase().includes(wallet.address.toLowerCase()), walletPage.slice(0, 300));
  check("a wallet session shows the billing pages and the registry's (no Triggers)",
    (await page.locator("nav a").allInnerTexts()).join() === "Account,Usage keys,Groups,Wallets,Actions,Attestation");
  await inspect(page, "18-wallet-account");

  // Sign out forgets the key.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Account API key").waitFor();
  check("sign out clears session storage", (await page.evaluate(() => sessionStorage.length)) === 0);

  check("no console error or CSP violation", errors.length === 0, errors.join(" | "));
  check("no request left loopback", session.offHost.length === 0, session.offHost.join(", "));
} catch (err) {
  check("dashboard walk-through", false, err.stack ?? String(err));
} finally {
  await browser?.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
finish("browser.dashboard");
