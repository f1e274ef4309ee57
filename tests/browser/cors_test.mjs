#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Usage: node cors_test.mjs ENACT_SERVER_BINARY
//
// A browser dApp on another origin calling /core/v1 (docs/server.md "Browser pages on other
// origins"): two pages are served from their own loopback ports (two origins), enact-server is
// started with --cors-origins naming only the first. In headless Chromium:
//   - the allowed page reads /billing/balance with X-Api-Key (a header that needs a preflight)
//     and POSTs JSON to /get_svc_action_ipfs_id; the answers carry Access-Control-Allow-Origin
//     and expose X-Request-Id;
//   - the other page's identical fetches fail in the browser (TypeError, no body read);
//   - a server started without --cors-origins lets neither page read anything;
//   - the preflight answers themselves (Chromium does not report preflights to the driver): 204
//     naming the allowed origin, its method and header; 403 with the error body for another
//     origin or a header not on the list.
// The pages and the server are all on 127.0.0.1; no request leaves loopback. The context does not
// intercept requests (interception would let the driver answer preflights itself): requests are
// only observed.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEnactServer } from "../support/node/harness.mjs";
import { check, finish, isLoopback } from "./page_harness.mjs";

const [binary] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node cors_test.mjs ENACT_SERVER_BINARY");
  process.exit(2);
}

// A page server: one empty HTML page with no CSP of its own, on its own port (its own origin).
async function pageServer() {
  const server = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>dApp</title><p>dApp</p>");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}

// What the page does: the two calls a dApp makes, each reported as status + body or the error.
async function callsFrom(page, api, key) {
  return page.evaluate(async ({ api, key }) => {
    const out = {};
    try {
      const r = await fetch(`${api}/core/v1/billing/balance`, { headers: { "X-Api-Key": key } });
      out.balance = { status: r.status, body: await r.json(), requestId: r.headers.get("X-Request-Id") };
    } catch (e) {
      out.balance = { error: `${e.name}: ${e.message}` };
    }
    try {
      const r = await fetch(`${api}/core/v1/get_svc_action_ipfs_id`, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify("1 + 1"),
      });
      out.cid = { status: r.status, body: await r.json() };
    } catch (e) {
      out.cid = { error: `${e.name}: ${e.message}` };
    }
    return out;
  }, { api, key });
}

const work = mkdtempSync(join(tmpdir(), "enact-cors-"));
const allowed = await pageServer();
const other = await pageServer();
const servers = [];
let browser;
try {
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
  const context = await browser.newContext();
  const offHost = [];
  context.on("request", (req) => {
    const u = new URL(req.url());
    if (!isLoopback(u.hostname)) offHost.push(u.href);
  });

  for (const cors of [true, false]) {
    const args = ["--dev", "--listen", "127.0.0.1:0", "--data-dir", join(work, cors ? "cors" : "plain"), "--no-triggers"];
    if (cors) args.push("--cors-origins", allowed.origin);
    const srv = await startEnactServer(binary, args);
    servers.push(srv);
    const acct = await (await fetch(`${srv.url}/core/v1/new_account`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "dapp" }),
    })).json();
    check(`${cors ? "cors" : "plain"}: an account for the page`, typeof acct.api_key === "string");

    for (const [name, site] of [["allowed origin", allowed], ["other origin", other]]) {
      const page = await context.newPage();
      await page.goto(site.origin + "/");
      const r = await callsFrom(page, srv.url, acct.api_key);
      await page.close();
      const label = `${cors ? `--cors-origins ${allowed.origin}` : "no --cors-origins"}, ${name}`;
      if (cors && site === allowed) {
        check(`${label}: GET /billing/balance with X-Api-Key is readable`,
              r.balance.status === 200 && typeof r.balance.body.balance_credits === "number", JSON.stringify(r.balance));
        check(`${label}: X-Request-Id is exposed to the page`, /^[0-9a-f-]{8,}/i.test(r.balance.requestId ?? ""),
              String(r.balance.requestId));
        check(`${label}: a JSON POST is readable`, r.cid.status === 200 && /^Qm/.test(r.cid.body.action_ipfs_cid ?? ""),
              JSON.stringify(r.cid));
      } else {
        check(`${label}: the browser refuses the keyed GET`, /TypeError/.test(r.balance.error ?? ""), JSON.stringify(r.balance));
        check(`${label}: the browser refuses the JSON POST`, /TypeError/.test(r.cid.error ?? ""), JSON.stringify(r.cid));
      }
    }
    await srv.stop();
  }

  // What the browser enforces rests on the headers; check them directly too.
  const srv = await startEnactServer(binary, ["--dev", "--listen", "127.0.0.1:0", "--data-dir", join(work, "direct"),
                                              "--no-triggers", "--cors-origins", allowed.origin]);
  servers.push(srv);
  const pre = (origin, headers = "x-api-key") => fetch(`${srv.url}/core/v1/billing/balance`, {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": headers },
  });
  const ok = await pre(allowed.origin);
  check("preflight from the allowed origin: 204 naming it, its method and header", ok.status === 204 &&
        ok.headers.get("access-control-allow-origin") === allowed.origin &&
        /x-api-key/i.test(ok.headers.get("access-control-allow-headers") ?? "") &&
        /GET/.test(ok.headers.get("access-control-allow-methods") ?? ""),
        `${ok.status} ${JSON.stringify(Object.fromEntries(ok.headers))}`);
  const bad = await pre(other.origin);
  check("preflight from another origin: 403 with the error body and no CORS header",
        bad.status === 403 && bad.headers.get("access-control-allow-origin") === null &&
        (await bad.json()).error?.code === "forbidden", String(bad.status));
  const badHeader = await pre(allowed.origin, "x-evil");
  check("preflight asking for a header not allowed: 403", badHeader.status === 403, String(badHeader.status));
  check("no request left loopback", offHost.length === 0, offHost.join(" "));
} catch (e) {
  check(`ran to the end (${e.message})`, false);
} finally {
  await browser?.close();
  for (const s of servers) await s.stop();
  allowed.server.close();
  other.server.close();
  rmSync(work, { recursive: true, force: true });
}
finish("browser.cors");
