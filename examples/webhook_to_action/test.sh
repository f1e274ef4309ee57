#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# examples.webhook_to_action: a fresh enact-server --dev (core and triggers on one loopback port,
# temporary data directory), a token from `enact-server issue-token`, then the example; its last
# line must be a successful run whose response echoes the event it posted.
#   test.sh WEBHOOK_TO_ACTION ENACT_SERVER
set -euo pipefail
example=$1
server_bin=$2
# shellcheck source=../dev_server.sh
. "$(dirname "$0")/../dev_server.sh"

start_dev_server "$server_bin" --sandbox-workers 1
(umask 077 && "$server_bin" issue-token --data-dir "$work/data" --user example >"$work/token")

"$example" --url "$base" --token-file "$work/token" >"$work/result" 2>"$work/err" || {
  echo "example failed:"; cat "$work/result" "$work/err"; tail -5 "$work/log"; exit 1; }
cat "$work/result"
last=$(tail -1 "$work/result")
for want in '"step":"run"' '"status":"success"' '"echo":{"order":42,"status":"paid"}' \
            '"content_type":"application/json"'; do
  grep -qF "$want" <<<"$last" || { echo "missing $want in the run"; exit 1; }
done
# The usage key went to the trigger service and must not come back, nor reach the logs.
! grep -q '"usage_api_key"' "$work/result" || { echo "usage key echoed"; exit 1; }
echo "webhook_to_action: ok"
