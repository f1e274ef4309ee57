#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Usage: node swagger_test.mjs BASE_URL               (e.g. http://127.0.0.1:8080)
//        node swagger_test.mjs --spawn CMD [ARGS...]  (starts the server itself; see below)
//
// Opens the core server's Swagger UI (docs/protocol.md §2 "Public utility": {base_url}/core/v1/swagger-ui) in headless
// Chromium and checks, for the page URL with and without its trailing slash, that:
//   - every operation (method + path) of {base_url}/core/v1/openapi.json is rendered as an
//     .opblock of Swagger UI, the document being fetched here independently of the browser;
//   - the page and everything it loads come from loopback only (each request is intercepted;
//     any other host is aborted and fails the test), and nothing answers with an error status;
//   - the page logs no console error and throws no uncaught exception.
// With --spawn, CMD is started, its output is echoed, the first loopback URL with a non-zero port
// that it prints (http://127.0.0.1:PORT, localhost or [::1]) is taken as BASE_URL, and CMD is
// stopped (SIGTERM) at the end.
// Chromium is Debian's (/usr/bin/chromium; CHROMIUM overrides it), driven by playwright-core
// (tests/browser/package.json). Exits 0 when every check passes, 1 otherwise, 2 on bad usage.
import { check, collectConsoleErrors, finish, isLoopback, loopbackBrowser, spawnServer } from "./page_harness.mjs";

const kMethods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const kRenderTimeoutMs = 30_000;

// "METHOD path" for every operation under `paths` (OpenAPI 3.1 §4.8.8 Path Item Object).
function documentOperations(doc) {
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of kMethods) {
      if (item && typeof item === "object" && item[method]) ops.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return ops;
}

async function checkPage(context, url, expected) {
  const consoleErrors = [];
  const badResponses = [];
  const page = await context.newPage();
  collectConsoleErrors(page, consoleErrors);
  page.on("response", (res) => {
    if (res.status() >= 400) badResponses.push(`${res.status()} ${res.url()}`);
  });
  page.on("requestfailed", (req) => {
    badResponses.push(`${req.failure()?.errorText ?? "failed"} ${req.url()}`);
  });

  let rendered = [];
  try {
    const res = await page.goto(url, { waitUntil: "load", timeout: kRenderTimeoutMs });
    check(`${url} answers 200`, res?.status() === 200, `status ${res?.status()}`);
    check(`${url} title`, (await page.title()) === "enact core API", JSON.stringify(await page.title()));
    // Swagger UI renders every operation in one pass once the document has loaded; a load error
    // renders .errors-wrapper instead.
    await page.waitForSelector(".opblock, .errors-wrapper, .loading-container .errors", {
      timeout: kRenderTimeoutMs,
    });
    await page.waitForLoadState("networkidle", { timeout: kRenderTimeoutMs });
    rendered = await page.$$eval(".opblock", (blocks) =>
      blocks.map((b) => {
        const method = b.querySelector(".opblock-summary-method")?.textContent ?? "";
        // Deprecated operations carry opblock-summary-path__deprecated instead.
        const path =
          b.querySelector(".opblock-summary-path, .opblock-summary-path__deprecated")?.textContent ?? "";
        return `${method.trim().toUpperCase()} ${path.replace(/\u200b/g, "").trim()}`;
      }),
    );
  } catch (err) {
    check(`${url} renders`, false, err.message.split("\n")[0]);
  }

  const shown = new Set(rendered);
  const missing = expected.filter((op) => !shown.has(op));
  check(
    `${url} renders every operation`,
    expected.length > 0 && missing.length === 0,
    `${expected.length - missing.length}/${expected.length} rendered` +
      (missing.length ? `; missing: ${missing.join(", ")}` : ""),
  );
  check(`${url} no console errors`, consoleErrors.length === 0, consoleErrors.join(" | "));
  check(`${url} no failed requests`, badResponses.length === 0, badResponses.join(" | "));
  await page.close();
}

function usage() {
  console.error("usage: node swagger_test.mjs BASE_URL | --spawn CMD [ARGS...]");
  process.exit(2);
}

async function run(baseArg) {
  let base;
  try {
    base = new URL(baseArg);
  } catch {
    usage();
  }
  if (!isLoopback(base.hostname)) {
    console.error(`BASE_URL must be a loopback address, got ${base.hostname}`);
    process.exit(2);
  }
  const root = base.href.replace(/\/+$/, "");

  // The document, as a client other than the browser sees it.
  let expected = [];
  try {
    const res = await fetch(`${root}/core/v1/openapi.json`);
    const doc = await res.json();
    expected = documentOperations(doc);
    check("openapi.json lists operations", res.ok && expected.length > 0,
      `status ${res.status}, ${expected.length} operations`);
  } catch (err) {
    check("openapi.json lists operations", false, err.message);
  }

  const { browser, context, offHost } = await loopbackBrowser();
  try {
    for (const path of ["/core/v1/swagger-ui", "/core/v1/swagger-ui/"]) {
      await checkPage(context, `${root}${path}`, expected);
    }
  } finally {
    await browser.close();
  }
  check("no request left loopback", offHost.length === 0, offHost.join(" | "));
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length === 0) usage();
  let server = null;
  try {
    if (args[0] === "--spawn") {
      if (args.length < 2) usage();
      server = spawnServer(args.slice(1));
      await run(await server.found);
    } else {
      if (args.length !== 1) usage();
      await run(args[0]);
    }
  } catch (err) {
    check("test ran", false, err.message);
  } finally {
    if (server) await server.stop();
  }
  finish("swagger");
}

main();
