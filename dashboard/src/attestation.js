// SPDX-License-Identifier: Apache-2.0
// The Attestation page: the checks `enact attest verify` makes, run by this server against its own
// evidence (GET /dashboard/attestation-checks, server/dashboard/attestation.hpp), as a pass/fail
// table per part, with the checks that were skipped named. docs/dashboard.md, docs/attestation.md.
import { ApiError } from "./api.js";
import { h, table } from "./dom.js";

const kParts = [
  ["quote", "TDX quote"],
  ["app", "Application (compose hash, event log)"],
  ["evidence_quote", "Evidence quote (network)"],
  ["network", "Network (TLS certificate)"],
  ["governance", "Governance (on-chain)"],
];

export async function attestationPage(root) {
  const res = await fetch("/dashboard/attestation-checks", { cache: "no-store", credentials: "omit" });
  const report = await res.json();
  if (!res.ok) throw new ApiError(res.status, report?.error?.code ?? `http_${res.status}`, report?.error?.message ?? res.statusText);
  const verdict = report.verdict === "pass";
  // h() flattens the nested arrays and drops the null; replaceChildren would print them.
  const body = h(
    "div",
    {},
    h("h1", {}, "Attestation"),
    h("p", {}, "The checks of ", h("code", {}, "enact attest verify"), " run by this server against the evidence it serves at /attestation and /info."),
    h("p", { class: verdict ? "verdict pass" : "verdict fail", role: "status" }, `Verdict: ${verdict ? "pass" : "FAIL"}`),
    kParts
      .filter(([k]) => report[k])
      .map(([k, label]) => [
        h("h2", {}, label),
        table(label, ["Check", "Result", "Detail"], (report[k].checks ?? []).map((c) => [
          c.name,
          h("span", { class: c.passed ? "pass" : "fail" }, c.passed ? "✓ pass" : "✗ fail"),
          c.detail,
        ])),
      ]),
    report.skipped?.length ? h("p", { class: "meta" }, `Not checked here: ${report.skipped.join(", ")} (the CLI checks them given --domain and --rpc-url).`) : null,
  );
  root.replaceChildren(body);
}
