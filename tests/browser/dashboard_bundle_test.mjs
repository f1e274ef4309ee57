// SPDX-License-Identifier: Apache-2.0
// The dashboard's committed bundle (dashboard/dist, compiled into enact-server) must be what
// dashboard/build.mjs makes from dashboard/src with the pinned esbuild: this rebuilds it into a
// temporary directory and compares byte for byte. It also holds the first load (index.html,
// app.js, app.css) under 200 KB gzip-compressed, the budget of docs/dashboard.md, and checks
// that the page has no inline script or style the CSP would refuse.
//
// usage: node dashboard_bundle_test.mjs <repository root>
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { check, finish } from "./page_harness.mjs";

const kBudget = 200 * 1024;
const [root] = process.argv.slice(2);
if (!root) {
  console.error("usage: node dashboard_bundle_test.mjs <repository root>");
  process.exit(2);
}
const dashboard = join(root, "dashboard");
const dist = join(dashboard, "dist");

if (!existsSync(join(dashboard, "node_modules", "esbuild"))) {
  check("esbuild is installed in dashboard/ (scripts/install-deps)", false);
  finish("browser.dashboard_bundle");
}

const out = mkdtempSync(join(tmpdir(), "enact-dashboard-build-"));
try {
  const built = spawnSync(process.execPath, [join(dashboard, "build.mjs"), out], { encoding: "utf8" });
  check("build.mjs succeeds", built.status === 0, built.stderr);
  const committed = readdirSync(dist).sort();
  const fresh = readdirSync(out).sort();
  check("the same files", committed.join() === fresh.join(), `${committed} / ${fresh}`);
  for (const name of fresh) {
    const same = existsSync(join(dist, name)) && readFileSync(join(dist, name)).equals(readFileSync(join(out, name)));
    check(`dist/${name} is up to date (run node dashboard/build.mjs)`, same);
  }

  let total = 0;
  for (const name of ["index.html", "app.js", "app.css"]) total += gzipSync(readFileSync(join(dist, name)), { level: 9 }).length;
  check(`first load ${total} bytes gzip-compressed, under ${kBudget}`, total > 0 && total < kBudget);

  const html = readFileSync(join(dist, "index.html"), "utf8");
  const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
  check("index.html has no inline script", scripts.length > 0 && scripts.every((m) => m[1].trim() === "" && /\bsrc=/.test(m[0])));
  check("index.html has no inline style", !/<style\b|\sstyle=/.test(html));
  check("index.html loads nothing from another origin", !/(src|href)="(https?:)?\/\//.test(html));

  // The page's signature check (dashboard/src/verify.js) accepts a good signature and refuses
  // each kind of forgery: another signer, an edited s, a flipped v, another public key named.
  const { secp256k1 } = await import(join(dashboard, "node_modules/@noble/curves/secp256k1.js"));
  const { keccak_256 } = await import(join(dashboard, "node_modules/@noble/hashes/sha3.js"));
  const { bytesToHex } = await import(join(dashboard, "node_modules/@noble/hashes/utils.js"));
  const { verifySignature, addressOf } = await import(join(dashboard, "src/verify.js"));
  const hex = (b) => `0x${bytesToHex(b)}`;
  const signed = (sk, digest) => {
    const rec = secp256k1.sign(digest, sk, { prehash: false, format: "recovered" });
    const sig = new Uint8Array(65);
    sig.set(rec.slice(1), 0);
    sig[64] = rec[0] + 27;
    return { signature: hex(sig), v: sig[64], public_key: hex(secp256k1.getPublicKey(sk, false)), digest: hex(digest) };
  };
  const sk = secp256k1.utils.randomSecretKey();
  const other = secp256k1.utils.randomSecretKey();
  const digest = keccak_256(new TextEncoder().encode("pay 5 USDC to bob"));
  const good = signed(sk, digest);
  // In upper case: the PKP is compared without regard to case, as addresses are.
  const pkp = `0x${addressOf(secp256k1.getPublicKey(sk, false)).slice(2).toUpperCase()}`;
  check("verify: a good signature passes", verifySignature(good, pkp).ok);
  check("verify: another PKP's claim fails", !verifySignature(good, addressOf(secp256k1.getPublicKey(other, false))).ok);
  const sBytes = good.signature.slice(2, 130);
  const editedS = { ...good, signature: `0x${sBytes.slice(0, 100)}${sBytes[100] === "0" ? "1" : "0"}${sBytes.slice(101)}${good.signature.slice(130)}` };
  check("verify: an edited s fails", !verifySignature(editedS, pkp).ok);
  const flipped = { ...good, v: good.v === 27 ? 28 : 27 };
  check("verify: a flipped v fails", !verifySignature(flipped, pkp).ok);
  check("verify: another public key named fails", !verifySignature({ ...good, public_key: hex(secp256k1.getPublicKey(other, false)) }, null).ok);
  check("verify: another digest fails", !verifySignature({ ...good, digest: hex(keccak_256(new Uint8Array([1]))) }, pkp).ok);
  check("verify: garbage is refused, not thrown", !verifySignature({ signature: "0x12", v: 27, public_key: "0x", digest: "0x" }, pkp).ok);

  // The highlighter's tokens put the whole code back together, with strings and comments whole.
  const { tokens } = await import(join(dashboard, "src/highlight.js"));
  const code = 'const s = "a // not a comment"; // note\nEnact.setResponse({n: 42, t: `x${1}`});';
  const toks = tokens(code);
  check("highlight: tokens cover the code exactly", toks.map((t) => t.text).join("") === code);
  check("highlight: a string holding // stays a string", toks.some((t) => t.kind === "string" && t.text === '"a // not a comment"'));
  check("highlight: the comment, the keyword, the number and Enact",
    toks.some((t) => t.kind === "comment" && t.text === "// note") && toks.some((t) => t.kind === "keyword" && t.text === "const") &&
      toks.some((t) => t.kind === "number" && t.text === "42") && toks.some((t) => t.kind === "api" && t.text === "Enact"));

  // The trigger form's cron helper (dashboard/src/cron.js) against cron-parser's fire times in
  // tests/vectors/cron.json, and its refusals.
  const { nextFirings } = await import(join(dashboard, "src/cron.js"));
  const vectors = JSON.parse(readFileSync(join(root, "tests/vectors/cron.json"), "utf8")).vectors;
  const wrong = vectors.filter((v) => {
    try {
      const got = nextFirings(v.expression, new Date(v.start), 5).map((d) => d.toISOString().replace(".000Z", "Z"));
      return JSON.stringify(got) !== JSON.stringify(v.next);
    } catch {
      return true;
    }
  });
  check(`cron: ${vectors.length} cron-parser vectors give the same next five firings`, vectors.length >= 100 && wrong.length === 0,
    wrong.slice(0, 3).map((v) => v.expression).join(" | "));
  const refused = ["* * * *", "61 * * * *", "* * 0 * *", "* * * 13 *", "5-1 * * * *", "*/0 * * * *", "* * * * funday"].filter((e) => {
    try {
      nextFirings(e, new Date(0), 1);
      return true;
    } catch {
      return false;
    }
  });
  check("cron: malformed schedules are refused", refused.length === 0, refused.join(" | "));
} finally {
  rmSync(out, { recursive: true, force: true });
}
finish("browser.dashboard_bundle");
