#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Usage: node approval_test.mjs ENACT_SERVER_BINARY
//
// The trigger service's browser approval handshake (docs/triggers.md "Signing in a client") end
// to end: starts ENACT_SERVER_BINARY on a free loopback port with a fresh data directory, acts as
// the client (draws a token, computes its challenge, polls POST /auth/token), and drives the
// approval page in headless Chromium with an injected `window.ethereum` backed by a test wallet
// (ethers, from tests/vectors). Checks:
//   - approve: the page shows the client's name as text (an HTML name is not markup), signs in
//     with an EIP-4361 message signed by personal_sign, shows the wallet's user, approves; the
//     poll then answers the token's user once, and GET /api/me with the token answers it;
//   - deny: the page, still signed in, goes straight to Approve / Deny; Deny makes the poll
//     answer 403 access_denied and the token stays unusable;
//   - every request stays on loopback, nothing answers 5xx, no console error (a CSP violation
//     would be one), no uncaught exception.
// Chromium is Debian's (/usr/bin/chromium; CHROMIUM overrides it), driven by playwright-core
// (tests/browser/package.json). Exits 0 when every check passes, 1 otherwise, 2 on bad usage.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { check, collectConsoleErrors, finish, loopbackBrowser, spawnServer } from "./page_harness.mjs";

const kStepTimeoutMs = 45_000;  // generous: CI machines build in parallel

// The client's side of the handshake: a token and its challenge, base64url(sha256(token bytes)).
function drawToken() {
  const raw = randomBytes(32);
  return {
    token: raw.toString("base64url"),
    challenge: createHash("sha256").update(raw).digest().toString("base64url"),
  };
}

async function poll(root, t) {
  const res = await fetch(`${root}/auth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ challenge: t.challenge, token: t.token }),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function me(root, token) {
  const res = await fetch(`${root}/api/me`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json().catch(() => null) };
}

const errorCode = (r) => r.body?.error?.code ?? `(status ${r.status})`;

async function run(root) {
  const require = createRequire(new URL("../vectors/package.json", import.meta.url));
  let ethers;
  try {
    ethers = require("ethers");
  } catch {
    throw new Error("ethers is not installed in tests/vectors: run scripts/install-deps");
  }
  // A fixed test key (never a real wallet's).
  const wallet = new ethers.Wallet("0x" + "42".repeat(32));
  const user = wallet.address.toLowerCase();
  const clientName = `enact CLI <img src=x onerror="document.title='pwned'"> & co`;

  const consoleErrors = [];
  const serverErrors = [];
  const signed = [];
  const { browser, context, offHost } = await loopbackBrowser();
  try {
    // The wallet: personal_sign of the hex-encoded UTF-8 message, by the account asked for.
    await context.exposeFunction("__testWalletSign", async (dataHex, account) => {
      if (String(account).toLowerCase() !== user) throw new Error(`personal_sign for unknown account ${account}`);
      const message = ethers.toUtf8String(dataHex);
      signed.push(message);
      return wallet.signMessage(message);
    });
    await context.addInitScript((account) => {
      window.ethereum = {
        isTestWallet: true,
        request: async ({ method, params }) => {
          if (method === "eth_requestAccounts" || method === "eth_accounts") return [account];
          if (method === "eth_chainId") return "0x1";
          if (method === "personal_sign") return window.__testWalletSign(params[0], params[1]);
          throw new Error(`unsupported wallet method ${method}`);
        },
      };
    }, user);

    const openPage = async () => {
      const page = await context.newPage();
      collectConsoleErrors(page, consoleErrors);
      page.on("response", (res) => {
        // 401 from /auth/session before sign-in is the page's way of asking; 5xx is a failure.
        if (res.status() >= 500) serverErrors.push(`${res.status()} ${res.url()}`);
      });
      return page;
    };
    const authorizeUrl = (t) =>
      `${root}/auth/authorize?challenge=${t.challenge}&client=${encodeURIComponent(clientName)}`;

    // --- approve -------------------------------------------------------------------------------
    const a = drawToken();
    let r = await poll(root, a);
    check("poll before the page is opened: authorization_pending", r.status === 400 && errorCode(r) === "authorization_pending",
      `${r.status} ${errorCode(r)}`);
    const page = await openPage();
    const res = await page.goto(authorizeUrl(a), { waitUntil: "load", timeout: kStepTimeoutMs });
    check("approval page answers 200", res?.status() === 200, `status ${res?.status()}`);
    check("approval page shows the client name as text",
      (await page.textContent("#client")) === clientName && (await page.$("img")) === null &&
        (await page.title()) !== "pwned");
    await page.waitForSelector("#signin", { state: "visible", timeout: kStepTimeoutMs });
    r = await poll(root, a);
    check("poll while the page waits: authorization_pending", errorCode(r) === "authorization_pending", errorCode(r));

    await page.click("#signin");
    await page.waitForSelector("#approve", { state: "visible", timeout: kStepTimeoutMs });
    check("signed in as the wallet's user", (await page.textContent("#user")) === user, await page.textContent("#user"));
    check("the wallet signed one EIP-4361 message for this host",
      signed.length === 1 && signed[0].startsWith(`${new URL(root).host} wants you to sign in with your Ethereum account:\n${user}\n`),
      JSON.stringify(signed[0] ?? ""));

    await page.click("#approve");
    await page.waitForSelector("#outcome", { state: "visible", timeout: kStepTimeoutMs });
    const outcome = await page.textContent("#outcome");
    check("page says approved", outcome.startsWith("Approved."), outcome);

    r = await poll(root, a);
    check("poll after approval answers the token's user",
      r.status === 200 && r.body?.token_type === "bearer" && r.body?.user_id === user && !JSON.stringify(r.body).includes(a.token),
      JSON.stringify(r.body));
    r = await poll(root, a);
    check("the token comes once", r.status === 409, `${r.status} ${errorCode(r)}`);
    r = await me(root, a.token);
    check("GET /api/me with the token answers the wallet's user", r.status === 200 && r.body?.user_id === user,
      JSON.stringify(r.body));
    await page.close();

    // --- deny (the browser is still signed in) ---------------------------------------------------
    const d = drawToken();
    const page2 = await openPage();
    await page2.goto(authorizeUrl(d), { waitUntil: "load", timeout: kStepTimeoutMs });
    await page2.waitForSelector("#deny", { state: "visible", timeout: kStepTimeoutMs });
    check("a signed-in browser goes straight to Approve / Deny", signed.length === 1, `${signed.length} signatures`);
    await page2.click("#deny");
    await page2.waitForSelector("#outcome", { state: "visible", timeout: kStepTimeoutMs });
    const denied = await page2.textContent("#outcome");
    check("page says denied", denied.startsWith("Denied."), denied);
    r = await poll(root, d);
    check("poll after denial: 403 access_denied", r.status === 403 && errorCode(r) === "access_denied",
      `${r.status} ${errorCode(r)}`);
    r = await me(root, d.token);
    check("the denied token is refused", r.status === 401, `${r.status}`);
    await page2.close();
  } finally {
    await browser.close();
  }
  check("no request left loopback", offHost.length === 0, offHost.join(" | "));
  check("no console errors", consoleErrors.length === 0, consoleErrors.join(" | "));
  check("no server errors", serverErrors.length === 0, serverErrors.join(" | "));
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length !== 1) {
    console.error("usage: node approval_test.mjs ENACT_SERVER_BINARY");
    process.exit(2);
  }
  const dataDir = mkdtempSync(join(tmpdir(), "enact-approval-"));
  const server = spawnServer([args[0], "--listen", "127.0.0.1:0", "--data-dir", dataDir]);
  try {
    await run(await server.found);
  } catch (err) {
    check("test ran", false, err.message.split("\n")[0]);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  finish("approval");
}

main();
