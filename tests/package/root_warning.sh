#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# package.server_root_warning: enact-server started as root warns at start, before anything is
# opened, that it should run as its own user and says how (the package's systemd unit, or
# adduser and runuser); started as another user (nobody) it does not. Both runs stop at the same later point, a missing
# --evidence-dir (exit 2), so the second run proves it passed where the warning is given.
#
#   root_warning.sh ENACT_SERVER
set -euo pipefail
server=$1
if [ "$(id -u)" != 0 ]; then
  echo "needs root (the suite runs as root)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
install -d -o nobody -g nogroup -m 0700 "$work/nobody"
run() {  # run <out> <command...>: the server's exit status must be 2 (the missing evidence dir)
  local out=$1 rc=0
  shift
  "$@" --data-dir "${data:?}" --listen 127.0.0.1:0 --evidence-dir "$work/missing" >"$out" 2>&1 || rc=$?
  if [ "$rc" != 2 ] || ! grep -q -- '--evidence-dir: .* is not a directory' "$out"; then
    cat "$out"
    echo "FAIL: expected exit 2 on the missing evidence dir, got $rc"
    exit 1
  fi
}

data=$work/root run "$work/root.log" "$server"
grep -q '"level":"warn","msg":"running as root: run enact-server as its own user"' "$work/root.log" ||
  { cat "$work/root.log"; echo "FAIL: no root warning"; exit 1; }
grep -q 'systemd unit runs it as the system user enact' "$work/root.log" &&
  grep -q 'adduser --system --group enact, then runuser -u enact -- enact-server' "$work/root.log" ||
  { cat "$work/root.log"; echo "FAIL: the warning does not say how to run as its own user"; exit 1; }

data=$work/nobody run "$work/nobody.log" setpriv --reuid=nobody --regid=nogroup --clear-groups "$server"
if grep -q 'running as root' "$work/nobody.log"; then
  cat "$work/nobody.log"
  echo "FAIL: warned as nobody"
  exit 1
fi
echo "root: warned; nobody: no warning"
