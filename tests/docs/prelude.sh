# SPDX-License-Identifier: Apache-2.0
# What the docs walk scripts (run_*.sh) share; sourced after `set -euo pipefail`:
#   doc_start SERVER [CLI] DOC    $server_bin, $cli_bin (with three arguments), the page $doc and
#                                 the repository $repo it is in; then doc_work
#   doc_work                      a temporary $work, removed on exit with the server it started
#   doc_block HEADING OUT         the first ```sh block after the line matching HEADING (an awk
#                                 regular expression) into OUT; fails the test when there is none
#   doc_server DATA_DIR           enact-server --dev ($server_bin) on a free loopback port with
#                                 DATA_DIR: sets $base, fails the test when it does not listen
#   doc_node_check SCRIPT         node -e with `ethers` (tests/vectors), `fs` and `work` bound
# shellcheck shell=bash

doc_start() {
  server_bin=$1
  cli_bin=
  if [ $# -eq 3 ]; then cli_bin=$2; fi
  doc=${!#}
  repo=$(cd "$(dirname "$doc")/.." && pwd)
  doc_work
}

doc_work() {
  work=$(mktemp -d)
  pid=
  trap 'doc_cleanup' EXIT
}
doc_cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}

doc_block() {
  H="$1" awk '$0 ~ ENVIRON["H"] {found=1} found && /^```sh$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' \
    "$doc" >"$2"
  [ -s "$2" ] || { echo "no block under '$1' in $doc"; exit 1; }
}

doc_server() {
  "$server_bin" --dev --listen 127.0.0.1:0 --data-dir "$1" >"$work/out" 2>"$work/log" &
  pid=$!
  for _ in $(seq 200); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.05; done
  base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -1)
  [ -n "$base" ] || { echo "server did not start"; cat "$work/log"; exit 1; }
}

doc_node_check() {
  REPO=$repo node -e '
    const { createRequire } = require("module");
    const fs = require("fs");
    const ethers = createRequire(process.env.REPO + "/tests/vectors/package.json")("ethers");
    const work = process.argv[1];
  '"$1" "$work"
}
