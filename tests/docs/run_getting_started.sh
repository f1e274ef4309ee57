#!/usr/bin/env bash
# Runs the CLI walk of docs/getting-started.md (the ```sh block under "## 2.") as written, against
# a fresh enact-server --dev on a free loopback port, then checks what it left: the run's response
# names the PKP, its signature recovers (with ethers) to the PKP's address, one credit was charged.
#   run_getting_started.sh ENACT_SERVER ENACT_CLI DOCS_GETTING_STARTED_MD
set -euo pipefail
server_bin=$1
cli_bin=$2
doc=$3
repo=$(cd "$(dirname "$doc")/.." && pwd)
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

awk '/^## 2\./ {found=1} found && /^```sh$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' \
  "$doc" >"$work/walk.sh"
[ -s "$work/walk.sh" ] || { echo "no CLI walk in $doc"; exit 1; }
echo 'declare -p PKP CID GROUP >"$VARS"' >>"$work/walk.sh"

"$server_bin" --dev --listen 127.0.0.1:0 --data-dir "$work/data" >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 100); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.05; done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -1)
[ -n "$base" ] || { echo "server did not start"; cat "$work/log"; exit 1; }

(cd "$work" && PATH="$(dirname "$cli_bin"):$PATH" ENACT_URL=$base VARS="$work/vars" \
  bash -euo pipefail "$work/walk.sh" >"$work/result" 2>&1) || {
  echo "getting started failed:"; cat "$work/result"; tail -5 "$work/log"; exit 1; }
# shellcheck disable=SC1091
source "$work/vars"
[ "$(stat -c %a "$work/my-enact/account.key")" = 600 ] || { echo "account.key is not 0600"; exit 1; }
[ "$(stat -c %a "$work/my-enact/usage.key")" = 600 ] || { echo "usage.key is not 0600"; exit 1; }
REPO=$repo PKP=$PKP node -e '
  const { createRequire } = require("module");
  const fs = require("fs");
  const ethers = createRequire(process.env.REPO + "/tests/vectors/package.json")("ethers");
  const work = process.argv[1];
  const run = JSON.parse(fs.readFileSync(work + "/my-enact/run.json", "utf8"));
  const sig = run.signatures.payout;
  if (run.response.signer !== process.env.PKP) throw new Error("response.signer " + run.response.signer);
  if (ethers.recoverAddress(sig.digest, sig.signature) !== process.env.PKP) throw new Error("signature does not recover to the PKP");
  if (run.charged_credits !== 1) throw new Error("charged " + run.charged_credits);
  const lines = fs.readFileSync(work + "/result", "utf8").trim().split("\n");
  const balance = JSON.parse(lines[lines.length - 1]);
  if (balance.balance_credits !== 499) throw new Error("balance " + JSON.stringify(balance));
  console.log("getting started: ok, run signed by " + process.env.PKP);
' "$work"
