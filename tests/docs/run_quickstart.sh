#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the quick start of docs/server.md (the first ```sh block after "## Quick start") as
# written, against a fresh enact-server --dev on a free loopback port, then checks the state it
# left: the group lists the wallet and the action, the balance is 500 - 1, and the action's
# signature recovers (with ethers) to the PKP's address.
#   run_quickstart.sh ENACT_SERVER DOCS_SERVER_MD
set -euo pipefail
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
doc_start "$@"

doc_block '^## Quick start' "$work/quickstart.sh"
echo 'declare -p URL ACCOUNT_KEY USAGE_KEY GROUP_ID PKP_ID CID >"$VARS"' >>"$work/quickstart.sh"

doc_server "$work/data"

(cd "$work" && URL=$base VARS="$work/vars" bash -euo pipefail "$work/quickstart.sh" >"$work/result" 2>&1) || {
  echo "quick start failed:"; cat "$work/result"; tail -5 "$work/log"; exit 1; }
# shellcheck disable=SC1091
source "$work/vars"
curl -sf "$URL/list_groups" -H "X-Api-Key: $USAGE_KEY" >"$work/groups.json"
curl -sf "$URL/billing/balance" -H "X-Api-Key: $ACCOUNT_KEY" >"$work/balance.json"
PKP_ID=$PKP_ID doc_node_check '
  const groups = JSON.parse(fs.readFileSync(work + "/groups.json", "utf8"));
  const g = groups.items[0];
  if (groups.total !== 1 || g.pkp_ids_permitted.length !== 1 || g.cid_hashes_permitted.length !== 1)
    throw new Error("unexpected group state: " + JSON.stringify(groups));
  const balance = JSON.parse(fs.readFileSync(work + "/balance.json", "utf8"));
  if (balance.balance_credits !== 499) throw new Error("balance " + balance.balance_credits + ", expected 499");
  // The run printed by the quick start: the pretty-printed JSON object holding "signatures".
  const text = fs.readFileSync(work + "/result", "utf8");
  const start = text.indexOf("{\n  \"response\"");
  const run = JSON.parse(text.slice(start, text.indexOf("\n}\n", start) + 2));
  const sig = run.signatures.payout;
  const signer = ethers.recoverAddress(sig.digest, sig.signature);
  if (signer !== process.env.PKP_ID || run.response.signer !== process.env.PKP_ID)
    throw new Error("signature recovers to " + signer + ", PKP is " + process.env.PKP_ID);
  if (sig.digest !== ethers.keccak256(ethers.toUtf8Bytes("pay 5 USDC to bob")))
    throw new Error("digest is not keccak256 of the message");
  console.log("quick start ok: group", g.group_id, "ran an action signed by", signer);
'
