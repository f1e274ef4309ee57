#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the CLI walk of docs/getting-started.md (the ```sh block under "## 2.") as written, against
# a fresh enact-server --dev on a free loopback port, then checks what it left: the run's response
# names the PKP, its signature recovers (with ethers) to the PKP's address, one credit was charged.
#   run_getting_started.sh ENACT_SERVER ENACT_CLI DOCS_GETTING_STARTED_MD
set -euo pipefail
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
doc_start "$@"

doc_block '^## 2\.' "$work/walk.sh"
echo 'declare -p PKP CID GROUP >"$VARS"' >>"$work/walk.sh"

doc_server "$work/data"

(cd "$work" && PATH="$(dirname "$cli_bin"):$PATH" ENACT_URL=$base VARS="$work/vars" \
  bash -euo pipefail "$work/walk.sh" >"$work/result" 2>&1) || {
  echo "getting started failed:"; cat "$work/result"; tail -5 "$work/log"; exit 1; }
# shellcheck disable=SC1091
source "$work/vars"
[ "$(stat -c %a "$work/my-enact/account.key")" = 600 ] || { echo "account.key is not 0600"; exit 1; }
[ "$(stat -c %a "$work/my-enact/usage.key")" = 600 ] || { echo "usage.key is not 0600"; exit 1; }
PKP=$PKP doc_node_check '
  const run = JSON.parse(fs.readFileSync(work + "/my-enact/run.json", "utf8"));
  const sig = run.signatures.payout;
  if (run.response.signer !== process.env.PKP) throw new Error("response.signer " + run.response.signer);
  if (ethers.recoverAddress(sig.digest, sig.signature) !== process.env.PKP) throw new Error("signature does not recover to the PKP");
  if (run.charged_credits !== 1) throw new Error("charged " + run.charged_credits);
  const lines = fs.readFileSync(work + "/result", "utf8").trim().split("\n");
  // The last command prints the balance as text (docs/cli.md "Output"): `key: value` lines.
  const balance = lines.slice(lines.findLastIndex((l) => l.startsWith("balance_credits:")));
  if (!/^balance_credits: +499$/.test(balance[0] ?? "") || balance.some((l) => !/^[a-z_]+: +\S/.test(l)))
    throw new Error("balance " + balance.join("\n"));
  console.log("getting started: ok, run signed by " + process.env.PKP);
'
