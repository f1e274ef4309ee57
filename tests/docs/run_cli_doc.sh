#!/usr/bin/env bash
# Runs the ```sh examples of docs/cli.md — the offline tools, `enact core` and `enact chain`
# sections, in that order in one shell — against a fresh enact-server --dev on a free loopback
# port with a temporary data directory. The `enact chain deploy` line needs anvil and is left out.
#   run_cli_doc.sh ENACT_SERVER ENACT_CLI DOCS_CLI_MD
set -euo pipefail
server_bin=$1
cli_bin=$2
doc=$3
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

for section in 'Offline tools' 'the core service' 'the permission registry on-chain'; do
  awk -v S="$section" 'index($0, "## ") == 1 && index($0, S) {f = 1}
    f && /^```sh$/ {i = 1; next} i && /^```$/ {exit} i {print}' "$doc"
done | grep -v 'enact chain deploy' >"$work/walk.sh"
[ "$(grep -c '^enact ' "$work/walk.sh")" -ge 40 ] || { echo "examples missing in $doc"; exit 1; }

"$server_bin" --dev --listen 127.0.0.1:0 --data-dir "$work/enact-data" >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 200); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.05; done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -1)
[ -n "$base" ] || { echo "server did not start"; cat "$work/log"; exit 1; }

(cd "$work" && PATH="$(dirname "$cli_bin"):$PATH" ENACT_URL=$base \
  bash -euo pipefail -x "$work/walk.sh" >"$work/result" 2>&1) || {
  echo "docs/cli.md examples failed:"; tail -20 "$work/result"; tail -5 "$work/log"; exit 1; }
echo "docs/cli.md: $(grep -c '^enact ' "$work/walk.sh") commands ran"
