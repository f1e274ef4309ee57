// SPDX-License-Identifier: Apache-2.0
// examples.verify_attestation: runs the example on every DCAP case of
// tests/fixtures/tdx/expectations.json that names a quote file and its collateral as they are
// (cases that cut a quote out of a larger file or edit the collateral are the unit test's), at the
// case's verification time, and compares the exit code and TCB status with the expectation.
//   node test.js VERIFY_ATTESTATION TESTDATA_TDX_DIR
"use strict";
const { spawnSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [example, dir] = process.argv.slice(2);
const expectations = JSON.parse(fs.readFileSync(path.join(dir, "expectations.json"), "utf8"));
let ran = 0;
for (const c of expectations.dcap_cases) {
  if (c.quote.includes("#") || c.collateral_edit) continue;
  const args = [path.join(dir, c.quote), "--collateral", path.join(dir, c.collateral), "--now", String(c.now)];
  const r = spawnSync(example, args, { encoding: "utf8" });
  const want = c.expect === "ok" ? 0 : 1;
  if (r.status !== want)
    throw new Error(`${c.id}: exit ${r.status}, expected ${want}\n${r.stdout}${r.stderr}`);
  if (c.expect === "ok") {
    const status = /^tcb_status: (\S+)$/m.exec(r.stdout);
    if (!status || status[1] !== c.status)
      throw new Error(`${c.id}: expected tcb_status ${c.status}\n${r.stdout}`);
    const ids = /^advisory_ids: ?(.*)$/m.exec(r.stdout)[1];
    if (ids !== c.advisory_ids.join(" ")) throw new Error(`${c.id}: advisory_ids ${ids}`);
  } else if (!/^verdict: fail$/m.test(r.stdout) || !/\[FAIL\]/.test(r.stdout)) {
    throw new Error(`${c.id}: expected a failed check\n${r.stdout}`);
  }
  console.log(`${c.id}: exit ${r.status} as expected`);
  ++ran;
}
if (ran < 5) throw new Error(`only ${ran} cases ran`);

// Input that is not a quote: exit 2 with the parser's reason.
const bad = spawnSync(example, [path.join(dir, "README.md")], { encoding: "utf8" });
if (bad.status !== 2) throw new Error(`README.md as a quote: exit ${bad.status}`);
const missing = spawnSync(example, ["/nonexistent.bin"], { encoding: "utf8" });
if (missing.status !== 2 || !/cannot open file/.test(missing.stderr)) throw new Error("missing file not refused");
console.log(`verify_attestation: ${ran} cases ok`);
