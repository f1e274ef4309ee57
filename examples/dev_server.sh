# SPDX-License-Identifier: Apache-2.0
# Sourced by the examples' test.sh scripts: a temporary directory "$work", removed on exit, and
#   start_dev_server SERVER_BIN [FLAGS...]
# which runs `SERVER_BIN --dev` on a free loopback port with its data under "$work/data" (stdout
# in "$work/out", the log in "$work/log"), stopped on exit too, waits until it listens and sets
# "$base" to its URL; a server that does not come up ends the test with its log.
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start_dev_server() {
  local bin=$1
  shift
  "$bin" --dev --listen 127.0.0.1:0 --data-dir "$work/data" "$@" >"$work/out" 2>"$work/log" &
  pid=$!
  for _ in $(seq 200); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.05; done
  base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -1)
  [ -n "$base" ] || { echo "server did not start"; cat "$work/log"; exit 1; }
}
