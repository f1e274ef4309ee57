#!/usr/bin/env bash
# Runs the quick start of docs/server.md (the first ```sh block after "## Quick start") as
# written, against a fresh enact-server --dev on a free loopback port, and checks its outcome.
#   run_quickstart.sh ENACT_SERVER DOCS_SERVER_MD
set -euo pipefail
server_bin=$1
doc=$2
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

awk '/^## Quick start/ {found=1} found && /^```sh$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' \
  "$doc" >"$work/quickstart.sh"
[ -s "$work/quickstart.sh" ] || { echo "no quick start block in $doc"; exit 1; }

"$server_bin" --dev --listen 127.0.0.1:0 --data-dir "$work/data" >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 100); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.05; done
URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -1)
[ -n "$URL" ] || { echo "server did not start"; cat "$work/log"; exit 1; }

URL=$URL bash -euo pipefail "$work/quickstart.sh" >"$work/result" 2>&1 || {
  echo "quick start failed:"; cat "$work/result"; tail -5 "$work/log"; exit 1; }
# The session ends with the group listing one wallet and one action, and a balance of 500.
grep -q '"pkp_ids_permitted": \[' "$work/result"
node -e '
  const text = require("fs").readFileSync(process.argv[1], "utf8");
  const groups = JSON.parse(text.slice(text.indexOf("{\n"), text.lastIndexOf("}\n") + 1));
  const g = groups.items[0];
  if (groups.total !== 1 || g.pkp_ids_permitted.length !== 1 || g.cid_hashes_permitted.length !== 1)
    throw new Error("unexpected group state: " + JSON.stringify(groups));
  if (!/"balance_credits":500/.test(text)) throw new Error("balance not 500");
  console.log("quick start ok: group", g.group_id, "with", g.pkp_ids_permitted[0]);
' "$work/result"
