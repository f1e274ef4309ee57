// SPDX-License-Identifier: Apache-2.0
// What the dashboard's browser tests (dashboard_test.mjs, dashboard_triggers_origin_test.mjs)
// share: the API as a script calls it, the per-page screenshot and axe-core check, the console
// watch, the injected wallet (an ethers Wallet behind a minimal EIP-1193 provider) and signing in
// to the trigger service through its approval page.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { check, collectConsoleErrors } from "./page_harness.mjs";

const vectors = createRequire(new URL("../vectors/package.json", import.meta.url));
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** One /core/v1 request with `key` in X-Api-Key: { status, data }. */
export async function api(base, method, path, key, body) {
  const headers = { "X-Api-Key": key };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${base}/core/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json();
  return { status: res.status, data };
}

/** axe-core's violations on the page as "rule: target" lines (WCAG 2.1 A and AA rules). */
async function axeViolations(page) {
  await page.evaluate(axeSource); // DevTools evaluation: not subject to the page's CSP
  return page.evaluate(async () => {
    const r = await globalThis.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

/** inspect(page, name): a full-page screenshot `name`.png into `outDir`, and no axe violation. */
export function inspector(outDir) {
  return async (page, name) => {
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
    const violations = await axeViolations(page);
    check(`${name}: no axe violation`, violations.length === 0, violations.join("; "));
  };
}

/**
 * Records the page's console errors and uncaught exceptions in `errors`, except the failed loads
 * `expected(url, text)` names. The trigger handshake polls POST /auth/token, which answers 400
 * authorization_pending until the approval, and Chromium logs each as a failed load: those are
 * always expected.
 */
export function watchConsole(page, errors, expected = () => false) {
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const url = msg.location().url;
    if (/status of 400/.test(msg.text()) && url.endsWith("/auth/token")) return;
    if (expected(url, msg.text())) return;
    errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(`uncaught: ${err.message}`));
}

/** Puts window.ethereum, backed by a fixed ethers Wallet, into every page of `context`: the wallet. */
export async function injectWallet(context) {
  const ethers = vectors("ethers");
  const wallet = new ethers.Wallet("0x" + "42".repeat(32));
  await context.exposeFunction("__testWalletSign", (dataHex) => wallet.signMessage(ethers.getBytes(dataHex)));
  await context.exposeFunction("__testWalletSignTyped", (json) => {
    const { domain, types, message } = JSON.parse(json);
    const { EIP712Domain, ...rest } = types;
    return wallet.signTypedData(domain, rest, message);
  });
  await context.addInitScript((account) => {
    window.ethereum = {
      request: async ({ method, params }) => {
        if (method === "eth_requestAccounts" || method === "eth_accounts") return [account];
        if (method === "eth_chainId") return "0x1";
        if (method === "personal_sign") return window.__testWalletSign(params[0]);
        if (method === "eth_signTypedData_v4") return window.__testWalletSignTyped(params[1]);
        throw new Error(`unsupported wallet method ${method}`);
      },
    };
  }, wallet.address.toLowerCase());
  return wallet;
}

/**
 * On the Triggers page: starts the sign-in, approves it with the injected wallet in the approval
 * page the dashboard opens, and waits until the page is signed in. Answers the approval page's URL.
 */
export async function signInToTriggers(page, context, errors) {
  const [approval] = await Promise.all([context.waitForEvent("page"), page.getByRole("button", { name: "Sign in to the trigger service" }).click()]);
  collectConsoleErrors(approval, errors);
  await approval.waitForSelector("#signin", { state: "visible" });
  const approvalUrl = approval.url();
  await approval.click("#signin");
  await approval.waitForSelector("#approve", { state: "visible" });
  await approval.click("#approve");
  await approval.waitForSelector("#outcome", { state: "visible" });
  await approval.close();
  await page.getByText("Signed in to the trigger service as").waitFor({ timeout: 30_000 });
  return approvalUrl;
}

/** fetch() of the trigger service at `base` with the bearer token: { status, data }. */
export function triggerApi(base, bearer) {
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, { method, headers: { Authorization: `Bearer ${bearer}`, "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
    return { status: res.status, data: res.status === 204 ? null : await res.json() };
  };
}
