// SPDX-License-Identifier: Apache-2.0
// The dashboard's Triggers page when the trigger service has a listener of its own
// (`enact-server --dev --triggers-listen`, docs/triggers.md), so it is on another origin than the
// page: GET /dashboard/settings names it, the page sends every trigger-service call there and opens
// the approval page there, signs in with the injected wallet, creates a webhook trigger and sees
// its run. Checked against the service as a script sees it; axe-core and a screenshot per page, no
// console error (a CSP or CORS refusal is one), no request off loopback.
//
// usage: node dashboard_triggers_origin_test.mjs <enact-server> <output dir>
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, injectWallet, inspector, signInToTriggers, triggerApi, watchConsole } from "./dashboard_harness.mjs";
import { check, finish, loopbackBrowser, spawnServer } from "./page_harness.mjs";

const [binary, outDir = join(tmpdir(), "enact-dashboard-shots")] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node dashboard_triggers_origin_test.mjs <enact-server> [output dir]");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const inspect = inspector(outDir);

/** The trigger service's origin from the server's start-up lines ("triggers http://…/api …"). */
async function triggersOrigin(output) {
  for (let i = 0; i < 100; ++i) {
    const line = output.find((l) => /^\s*triggers\s+http:\/\//.test(l));
    if (line) return new URL(/http:\/\/\S+/.exec(line)[0]).origin;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the server printed no trigger service URL");
}

const dataDir = mkdtempSync(join(tmpdir(), "enact-dashboard-triggers-"));
const server = spawnServer([binary, "--dev", "--listen", "127.0.0.1:0", "--triggers-listen", "127.0.0.1:0", "--data-dir", dataDir]);
let browser;
try {
  const base = await server.found;
  const triggers = await triggersOrigin(server.output);
  check("the trigger service has its own origin", triggers !== new URL(base).origin, `${base} / ${triggers}`);
  const settings = await (await fetch(`${base}/dashboard/settings`)).json();
  check("GET /dashboard/settings names it", settings.triggers_url === triggers, JSON.stringify(settings));
  check("the page's own origin serves no /api", (await fetch(`${base}/api/me`)).status === 404);

  const account = (await api(base, "POST", "/new_account", "", { name: "triggers elsewhere" })).data;
  const key = account.api_key;
  const group = (await api(base, "POST", "/add_group", key, { name: "hooks" })).data;
  const code = "Enact.setResponse({ok: true});";
  const cid = (await api(base, "POST", "/upload_action", key, { code })).data.action_ipfs_cid;
  await api(base, "POST", "/add_action", key, { action_ipfs_cid: cid, name: "echo" });
  await api(base, "POST", "/add_action_to_group", key, { group_id: group.group_id, action_ipfs_cid: cid });
  // Credits for the run, bought with the dev provider.
  const intent = (await api(base, "POST", "/billing/create_payment_intent", key, { amount_cents: 500 })).data;
  const paid = await api(base, "POST", "/billing/confirm_payment", key, { payment_intent_id: intent.payment_intent_id });
  check("credits bought for the run", paid.status === 200 && paid.data.balance_credits > 0, JSON.stringify([intent, paid]));
  const runKey = (await api(base, "POST", "/add_usage_api_key", key, { name: "hook runs", execute_in_groups: [group.group_id] })).data.usage_api_key;

  const session = await loopbackBrowser();
  browser = session.browser;
  const page = await session.context.newPage();
  const errors = [];
  watchConsole(page, errors);
  const wallet = await injectWallet(session.context);
  // Where the page sends its trigger-service calls.
  const serviceCalls = [];
  page.on("request", (req) => {
    const url = new URL(req.url());
    if (url.pathname.startsWith("/api/") || url.pathname.startsWith("/auth/")) serviceCalls.push(url.origin);
  });

  await page.goto(`${base}/dashboard/`);
  await page.getByLabel("Account API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  await page.getByRole("link", { name: "Triggers" }).click();
  await page.getByRole("heading", { name: "Triggers", level: 1 }).waitFor();
  check("the page names the trigger service's origin", (await page.locator("main").innerText()).includes(`The trigger service is at ${triggers}.`));
  await inspect(page, "20-triggers-origin-sign-in");

  const approvalUrl = await signInToTriggers(page, session.context, errors);
  check("the approval page opened on the trigger service's origin", new URL(approvalUrl).origin === triggers, approvalUrl);
  const bearer = await page.evaluate(() => sessionStorage.getItem("enact.dashboard.triggerToken"));
  const tapi = triggerApi(triggers, bearer);
  check("the handshake's token works there for the wallet's user", (await tapi("GET", "/api/me")).data?.user_id === wallet.address.toLowerCase());

  await page.getByLabel("Trigger name").fill("hook");
  await page.getByLabel("Action", { exact: true }).selectOption(cid);
  await page.getByLabel("Usage key for its runs").fill(runKey);
  await page.getByRole("button", { name: "Create trigger" }).click();
  await page.getByText(/Trigger hook created/).waitFor();
  const list = (await tapi("GET", "/api/triggers?limit=100")).data.items;
  const hook = list.find((t) => t.name === "hook");
  check("the trigger was created in the trigger service", hook?.type === "webhook" && hook.action_ipfs_cid === cid, JSON.stringify(list));
  check("its webhook URL is on the service's origin", hook && new URL(hook.webhook_url).origin === triggers, hook?.webhook_url);

  const hookCard = page.locator("article", { has: page.getByRole("heading", { name: "hook (webhook)" }) });
  await hookCard.locator("summary", { hasText: "Runs of hook" }).click();
  await hookCard.getByLabel("Live: show new runs as they come").check();
  const fired = await fetch(`${triggers}/webhook/${hook.id}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ order: 9 }) });
  const { run_id: runId } = await fired.json();
  check("the webhook was accepted", fired.status === 202 && typeof runId === "string");
  let finished = null;
  for (let i = 0; i < 120 && !["success", "failed"].includes(finished?.status); ++i) {
    await new Promise((r) => setTimeout(r, 500));
    finished = (await tapi("GET", `/api/runs/${runId}`)).data;
  }
  check("the run succeeded", finished?.status === "success", JSON.stringify(finished));
  await hookCard.locator("tr", { hasText: runId }).locator(".run-success").waitFor({ timeout: 30_000 });
  await hookCard.getByRole("button", { name: `Details of run ${runId}` }).click();
  const detail = await hookCard.locator(".run-detail").innerText();
  check("the run's params and response are shown", detail.includes('"order": 9') && detail.includes('"ok": true'), detail);
  await inspect(page, "21-triggers-origin-runs");

  const elsewhere = serviceCalls.filter((o) => o !== triggers);
  check("every trigger-service call went to its origin", serviceCalls.length > 0 && elsewhere.length === 0, `${serviceCalls.length} calls; elsewhere: ${elsewhere.join(", ")}`);
  check("no console error (CSP or CORS refusal included)", errors.length === 0, errors.join(" | "));
  check("no request left loopback", session.offHost.length === 0, session.offHost.join(", "));
} catch (err) {
  check("dashboard with the trigger service elsewhere", false, err.stack ?? String(err));
} finally {
  await browser?.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
finish("browser.dashboard_triggers_origin");
