#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the walkthrough of docs/chainsecured.md (the first ```sh block after "## Walkthrough") as
# written, with `enact` on the PATH, against a fresh enact-server --dev on a free loopback port;
# then checks what it left: the run's signature recovers (with ethers) to the PKP, the account is
# the wallet's (keccak256 of its address) with 499 credits, and the group lists the PKP and the
# action.
#   run_chainsecured.sh ENACT_SERVER ENACT DOCS_CHAINSECURED_MD
set -euo pipefail
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
doc_start "$@"

doc_block '^## Walkthrough' "$work/walkthrough.sh"
echo 'declare -p PKP_ID CID >"$VARS"' >>"$work/walkthrough.sh"

doc_server "$work/data"

mkdir "$work/bin"
ln -s "$(cd "$(dirname "$cli_bin")" && pwd)/$(basename "$cli_bin")" "$work/bin/enact"
mkdir "$work/session"
(cd "$work/session" && env -u ENACT_RPC_URL -u ENACT_REGISTRY -u ENACT_API_KEY PATH="$work/bin:$PATH" \
  ENACT_URL=$base VARS="$work/vars" bash -euo pipefail "$work/walkthrough.sh" >"$work/result" 2>&1) || {
  echo "walkthrough failed:"; cat "$work/result"; tail -5 "$work/log"; exit 1; }
# shellcheck disable=SC1091
source "$work/vars"
owner=$(PATH="$work/bin:$PATH" enact key address --key-file "$work/session/owner.key")
ENACT_URL=$base "$cli_bin" chain account --key-file "$work/session/owner.key" --json >"$work/account.json"
ENACT_URL=$base "$cli_bin" chain list-groups --key-file "$work/session/owner.key" --json >"$work/groups.json"
PKP_ID=$PKP_ID CID=$CID OWNER=$owner doc_node_check '
  const run = JSON.parse(fs.readFileSync(work + "/session/run.json", "utf8"));
  const sig = run.signatures.payout;
  const signer = ethers.recoverAddress(sig.digest, sig.signature);
  if (signer !== process.env.PKP_ID || run.response.signer !== process.env.PKP_ID)
    throw new Error("signature recovers to " + signer + ", PKP is " + process.env.PKP_ID);
  const account = JSON.parse(fs.readFileSync(work + "/account.json", "utf8"));
  if (account.accountHash !== ethers.keccak256(process.env.OWNER) || account.managed !== false ||
      "balance" in account || account.walletCount !== 2)
    throw new Error("unexpected account: " + JSON.stringify(account));
  const groups = JSON.parse(fs.readFileSync(work + "/groups.json", "utf8"));
  const g = groups.items[0];
  const cidHash = ethers.keccak256(ethers.toUtf8Bytes(process.env.CID));
  if (groups.total !== 1 || g.pkpIds[0] !== process.env.PKP_ID.toLowerCase() || g.cidHashes[0] !== cidHash)
    throw new Error("unexpected groups: " + JSON.stringify(groups));
  console.log("chainsecured walkthrough ok: account", account.accountHash, "ran an action signed by", signer);
'
