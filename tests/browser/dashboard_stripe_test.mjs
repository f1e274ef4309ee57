// SPDX-License-Identifier: Apache-2.0
// A card payment finished in the dashboard (docs/dashboard.md "Paying by card") in headless
// Chromium: enact-server with Stripe as its provider, at the Stripe fixture on loopback
// (tests/billing/stripe_fixture_server), which also serves a stand-in for Stripe.js
// (stripe_js_standin.js) that the server is told to load with --stripe-js-url. The page must load
// it under its policy, hand it the publishable key of GET /billing/stripe_config and the intent's
// client secret, mount the Payment Element, confirm, show a declined card's reason, and after a
// payment show the balance credited: by confirm_payment when no webhook came, and by the webhook
// when it came first. Then `enact core billing create-intent` prints what a person pays with, in
// text and with --json, and `enact core billing confirm` credits that payment. axe-core, no console
// error but the expected refusals, no request off loopback.
//
// usage: node dashboard_stripe_test.mjs <enact-server> <stripe_fixture_server> <enact> [output dir]
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, inspector, watchConsole } from "./dashboard_harness.mjs";
import { check, finish, loopbackBrowser, spawnServer } from "./page_harness.mjs";

const [binary, fixtureBinary, cli, outDir = join(tmpdir(), "enact-dashboard-stripe-shots")] = process.argv.slice(2);
if (!binary || !fixtureBinary || !cli) {
  console.error("usage: node dashboard_stripe_test.mjs <enact-server> <stripe_fixture_server> <enact> [output dir]");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const inspect = inspector(outDir);

const fixture = spawnServer([fixtureBinary, new URL("./stripe_js_standin.js", import.meta.url).pathname]);
let server;
let browser;
try {
  const stripeBase = await fixture.found;
  const info = JSON.parse(fixture.output.find((l) => l.startsWith("stripe fixture at ")).replace(/^stripe fixture at \S+ /, ""));
  process.env.STRIPE_SECRET_KEY = info.secret_key;
  process.env.STRIPE_WEBHOOK_SECRET = info.webhook_secret;
  const dataDir = mkdtempSync(join(tmpdir(), "enact-dashboard-stripe-"));
  server = spawnServer([binary, "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--stripe-api-base", stripeBase,
    "--stripe-publishable-key", info.publishable_key, "--stripe-js-url", `${stripeBase}/v3/`]);
  const base = await server.found;
  const account = (await api(base, "POST", "/new_account", "", { name: "card payer" })).data;
  const key = account.api_key;
  const balance = async () => (await api(base, "GET", "/billing/balance", key)).data.balance_credits;
  const payments = async () => (await api(base, "GET", "/billing/payments?page_number=1&page_size=100", key)).data.items;
  const setWebhook = (url) => fetch(`${stripeBase}/_fixture/webhook_endpoint`, {
    method: "POST", headers: { Authorization: `Bearer ${info.secret_key}` }, body: new URLSearchParams({ url }),
  });

  const session = await loopbackBrowser();
  browser = session.browser;
  const page = await session.context.newPage();
  const errors = [];
  // Refusals the flow provokes on purpose: the declined card (402 at the fixture) and
  // confirm_payment after the webhook credited the payment (409).
  watchConsole(page, errors, (url, text) =>
    (/status of 402/.test(text) && url.includes("/confirm")) || (/status of 409/.test(text) && url.endsWith("/billing/confirm_payment")));
  // Back from a method that left the page: Stripe's query, with the client secret, leaves the
  // address bar as the page loads.
  await page.goto(`${base}/dashboard/?payment_intent=pi_x&payment_intent_client_secret=pi_x_secret_y&redirect_status=succeeded#/account`);
  await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
  check("the client secret Stripe returns in the query leaves the address bar", (await page.evaluate(() => location.search)) === "" && !page.url().includes("secret"), page.url());
  const first = await page.goto(`${base}/dashboard/`);
  const csp = first.headers()["content-security-policy"] ?? "";
  check("the page's policy lets the stand-in's origin load scripts, frames and connections, and nothing else new",
    csp.includes(`script-src 'self' ${stripeBase};`) && csp.includes(`frame-src ${stripeBase};`) &&
    csp.includes(`connect-src 'self' ${stripeBase};`) && !csp.includes("stripe.com"), csp);
  await page.getByLabel("Account API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
  check("the account page names Stripe as the provider", (await page.locator("main").innerText()).includes("stripe"));

  // A purchase of $7: the Payment Element mounted with this intent, a declined card, then a good one.
  await page.getByLabel("Amount in US dollars").fill("7");
  await page.getByRole("button", { name: "Create payment intent" }).click();
  const card = page.getByLabel("Card number");
  await card.waitFor({ timeout: 15_000 });
  const [intent] = await payments();
  const given = await page.evaluate(() => window.__stripeStandin);
  check("Stripe.js was given the publishable key of /billing/stripe_config", JSON.stringify(given.keys) === JSON.stringify([info.publishable_key]), JSON.stringify(given.keys));
  check("the Payment Element was made with the intent's client secret",
    given.elements.length === 1 && given.elements[0].clientSecret.startsWith(`${intent.payment_intent_id}_secret_`) && given.created[0] === "payment",
    JSON.stringify(given));
  await inspect(page, "01-payment-element");

  await card.fill("4000 0000 0000 0002");
  const pay = page.getByRole("button", { name: "Pay $7.00" });
  await pay.click();
  await page.getByText("Your card was declined.").waitFor({ timeout: 15_000 });
  check("a declined card is said so, and the pay button works again", await pay.isEnabled());
  check("a declined card credits nothing", (await balance()) === 0);
  await inspect(page, "02-declined");

  await card.fill("4242 4242 4242 4242");
  await pay.click();
  await page.locator("#balance", { hasText: "700 credits" }).waitFor({ timeout: 15_000 });
  const confirms = (await page.evaluate(() => window.__stripeStandin.confirms));
  check("confirmPayment was asked to redirect only if required", confirms.every((c) => c.redirect === "if_required" && c.clientSecret.startsWith(intent.payment_intent_id)), JSON.stringify(confirms));
  check("with no webhook, confirm_payment credited the payment: the API says 700", (await balance()) === 700);
  await page.getByText("Payment received: the balance is 700 credits.").waitFor();
  await inspect(page, "03-paid");

  // With the webhook endpoint registered, Stripe's event credits first; the page's confirm_payment
  // then finds it credited and shows the balance all the same.
  check("the webhook endpoint is set at the fixture", (await setWebhook(`${base}/core/v1/billing/stripe/webhook`)).ok);
  await page.getByLabel("Amount in US dollars").fill("5");
  await page.getByRole("button", { name: "Create payment intent" }).click();
  await page.getByLabel("Card number").fill("4242424242424242");
  await page.getByRole("button", { name: "Pay $5.00" }).click();
  await page.locator("#balance", { hasText: "1200 credits" }).waitFor({ timeout: 15_000 });
  await page.getByText("Payment received: the balance is 1200 credits.").waitFor();
  check("the webhook credited the second payment: the API says 1200", (await balance()) === 1200);
  check("both payments are credited", (await payments()).filter((p) => p.credited).length === 2);
  check("no console error", errors.length === 0, errors.join(" | "));
  check("no request left loopback", session.offHost.length === 0, session.offHost.join(", "));

  // The CLI: what a person pays with, in both forms, then the confirmation that credits it.
  const env = { ...process.env, ENACT_URL: base, ENACT_API_KEY: key };
  const text = spawnSync(cli, ["core", "billing", "create-intent", "--amount-cents", "600"], { env, encoding: "utf8" });
  check("create-intent (text) succeeds", text.status === 0, text.stderr);
  const textId = /payment_intent_id:\s+(pi_\w+)/.exec(text.stdout)?.[1] ?? "";
  const textSecret = /client_secret:\s+(\S+)/.exec(text.stdout)?.[1] ?? "";
  check("create-intent (text) prints the client secret and the publishable key",
    textSecret.startsWith(`${textId}_secret_`) && text.stdout.includes(`publishable_key:`) && text.stdout.includes(info.publishable_key), text.stdout);
  check("create-intent (text) says what to do with them",
    text.stdout.includes("Stripe.js") && text.stdout.includes(`enact core billing confirm ${textId}`), text.stdout);
  const json = spawnSync(cli, ["core", "billing", "create-intent", "--amount-cents", "600", "--json"], { env, encoding: "utf8" });
  const doc = JSON.parse(json.stdout || "{}");
  check("create-intent --json names the intent, its client secret, the publishable key and the next step",
    json.status === 0 && doc.client_secret?.startsWith(`${doc.payment_intent_id}_secret_`) && doc.publishable_key === info.publishable_key &&
    doc.amount_cents === 600 && doc.next?.includes(`enact core billing confirm ${doc.payment_intent_id}`), json.stdout + json.stderr);
  // Paid as Stripe.js would pay it, with no webhook, then confirmed with the CLI.
  await setWebhook("");
  const paid = await fetch(`${stripeBase}/v1/payment_intents/${doc.payment_intent_id}/confirm`, {
    method: "POST", body: new URLSearchParams({ key: doc.publishable_key, client_secret: doc.client_secret, payment_method: "pm_card_visa" }),
  });
  check("the CLI's intent is paid with its client secret and publishable key", paid.ok);
  const confirmed = spawnSync(cli, ["core", "billing", "confirm", doc.payment_intent_id, "--json"], { env, encoding: "utf8" });
  check("enact core billing confirm credits it", confirmed.status === 0 && JSON.parse(confirmed.stdout).balance_credits === 1800, confirmed.stdout + confirmed.stderr);
} catch (err) {
  check("the card payment walk ran to its end", false, err.stack ?? String(err));
} finally {
  await browser?.close();
  await server?.stop();
  await fixture.stop();
}
finish("browser.dashboard_stripe");
