// SPDX-License-Identifier: Apache-2.0
// What the headless-Chromium tests (swagger_test.mjs, approval_test.mjs) share: named checks
// printed as they are made, a server started from its command line whose first loopback URL is
// awaited, and a Chromium context (Debian's /usr/bin/chromium, CHROMIUM overrides it, driven by
// playwright-core from this directory's package.json) that lets only loopback requests through.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

const kSpawnTimeoutMs = 30_000;

export function isLoopback(hostname) {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

const checks = [];
export function check(name, ok, detail = "") {
  checks.push({ name, ok });
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
}
/** Prints the tally under `label` and exits 0 only when every check passed. */
export function finish(label) {
  const failed = checks.filter((c) => !c.ok).length;
  console.log(`${label}: ${checks.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

/**
 * Starts argv[0] with the rest as its arguments, echoing its output: { found, stop() }, where
 * `found` resolves with the first loopback URL with a non-zero port it prints; `output` holds every
 * line it printed so far.
 */
export function spawnServer(argv) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  const output = []; // every line the server printed, for checks on its log
  const found = new Promise((resolve, reject) => {
    let pending = "";
    const timer = setTimeout(
      () => reject(new Error(`${argv[0]} printed no loopback URL within ${kSpawnTimeoutMs} ms`)),
      kSpawnTimeoutMs,
    );
    const onData = (chunk) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines) {
        console.log(`server| ${line}`);
        output.push(line);
        const m = /https?:\/\/(?:127\.\d+\.\d+\.\d+|localhost|\[::1\]):(\d+)/.exec(line);
        if (m && Number(m[1]) !== 0) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      }
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stderr.setEncoding("utf8").on("data", onData);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${argv[0]} exited (${signal ?? code}) before printing its URL`));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return { found, stop, output };
}

/**
 * Launches headless Chromium and opens a context in which every request to a host other than
 * loopback is aborted and recorded in `offHost`: { browser, context, offHost }.
 */
export async function loopbackBrowser() {
  const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
  let chromium;
  try {
    ({ chromium } = await import("playwright-core"));
  } catch {
    throw new Error("playwright-core is not installed in tests/browser: run scripts/install-deps");
  }
  if (!existsSync(executablePath)) {
    throw new Error(`no Chromium at ${executablePath}: run scripts/install-deps (Debian chromium)`);
  }
  const browser = await chromium.launch({
    executablePath,
    args: ["--no-sandbox"], // root in CI containers; the sandbox needs user namespaces
  });
  const offHost = [];
  try {
    const context = await browser.newContext();
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if ((url.protocol === "http:" || url.protocol === "https:") && isLoopback(url.hostname)) {
        return route.continue();
      }
      offHost.push(url.href);
      return route.abort("blockedbyclient");
    });
    return { browser, context, offHost };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** Records the page's console errors and uncaught exceptions in `errors`. */
export function collectConsoleErrors(page, errors) {
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(`uncaught: ${err.message}`));
}
