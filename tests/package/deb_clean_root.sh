#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# package.deb_clean_root: the Debian packages package.debs made (DEBS_DIR) installed the way a user
# installs them, `apt-get install ./….deb`, into a clean Debian 12 root (clean_root.sh: mmdebstrap
# from Debian's archive, cached in CACHE_DIR). There:
#   - the server's user, state directory and conffile are in place, the man pages installed;
#   - enact-server, started the way its systemd unit starts it (the unit's User, Group,
#     AmbientCapabilities and CapabilityBoundingSet, through setpriv: there is no systemd in the
#     root) on the packaged config with --dev on a data directory of its own, answers GET
#     /core/v1/get_node_chain_config on loopback, does not warn about root, puts every isolation
#     layer of the action sandbox in place (its workers become nobody with no capability left),
#     and runs docs/server.md's quick start: an action signing with a PKP;
#   - a C++ consumer builds with find_package(enact) and a C one with find_package(enact
#     COMPONENTS c); the same sources build with `pkg-config enact` and `pkg-config enact-c`.
#
#   deb_clean_root.sh SOURCE_DIR DEBS_DIR WORK_DIR CACHE_DIR
set -euo pipefail
source_dir=$1 debs=$2 work=$3 cache=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$work/root
mkdir -p "$work"
step() { echo "--- $*"; }
inroot() { "$here/clean_root.sh" --cache "$cache" --include build-essential,cmake,pkg-config "$root" -- "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "fresh root"
start=$SECONDS
"$here/clean_root.sh" --cache "$cache" --include build-essential,cmake,pkg-config --fresh "$root"
mkdir -p "$root/tmp/debs" "$root/tmp/src"
cp "$debs"/*.deb "$root/tmp/debs/"
cp -r "$source_dir/tests/package/consumer" "$source_dir/tests/package/c_consumer" "$root/tmp/src/"
echo "root ready in $((SECONDS - start)) s"

step "apt-get install ./….deb"
inroot sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends \
  /tmp/debs/libenact-dev_*.deb /tmp/debs/libenact-c0_*.deb /tmp/debs/enact_*.deb /tmp/debs/enact-server_*.deb' \
  >"$work/apt.log" 2>&1 || { tail -40 "$work/apt.log"; fail "apt-get install"; }
for p in libenact-dev libenact-c0 enact enact-server; do
  inroot dpkg-query -W -f='${Package} ${Status}\n' "$p" | grep -q "install ok installed" || fail "$p not installed"
done

step "installed files"
inroot getent passwd enact | grep -q '^enact:x:[0-9]*:[0-9]*:[^:]*:/var/lib/enact:/usr/sbin/nologin$' ||
  fail "no system user enact: $(inroot getent passwd enact || true)"
[ "$(inroot stat -c '%U:%G %a' /var/lib/enact)" = "enact:enact 700" ] || fail "/var/lib/enact: $(inroot stat -c '%U:%G %a' /var/lib/enact)"
[ "$(inroot stat -c '%U:%G %a' /etc/enact/config.toml)" = "root:enact 640" ] || fail "/etc/enact/config.toml mode"
inroot dpkg-query -W -f='${Conffiles}\n' enact-server | grep -q '/etc/enact/config.toml' || fail "config.toml is not a conffile"
for f in /usr/share/man/man1/enact.1.gz /usr/share/man/man8/enact-server.8.gz /lib/systemd/system/enact-server.service \
  /usr/libexec/enact/enact-worker /usr/share/doc/libenact-c0/copyright; do
  [ -e "$root$f" ] || fail "$f missing"
done
inroot enact --version | grep -q '^enact [0-9]' || fail "enact --version"
inroot enact-server --version | grep -q '^enact-server [0-9]' || fail "enact-server --version"

step "enact-server as its systemd unit starts it"
unit=$root/lib/systemd/system/enact-server.service
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -1; }
# "CAP_SETUID CAP_SETGID" as setpriv spells it: +setuid,+setgid
setpriv_caps() { local out=""; for c in $1; do c=${c#CAP_}; out+="${out:+,}+${c,,}"; done; echo "$out"; }
user=$(unit_value User) group=$(unit_value Group)
ambient=$(setpriv_caps "$(unit_value AmbientCapabilities)")
bounding=$(setpriv_caps "$(unit_value CapabilityBoundingSet)")
[ "$user" = enact ] || fail "the unit runs as '$user', not enact"
echo "unit: User=$user Group=$group ambient=${ambient:-none} bounding=${bounding:-none}"
inroot install -d -o enact -g enact -m 0700 /var/lib/enact/test
log=$work/server.log
"$here/clean_root.sh" --cache "$cache" --include build-essential,cmake,pkg-config "$root" -- \
  setpriv --reuid="$user" --regid="$group" --init-groups ${ambient:+--inh-caps="$ambient" --ambient-caps="$ambient"} \
  --bounding-set="-all${bounding:+,$bounding}" --no-new-privs --pdeathsig KILL \
  enact-server --config /etc/enact/config.toml --dev --data-dir /var/lib/enact/test \
  --listen 127.0.0.1:0 >"$log" 2>&1 &
server=$!
# The server is the first process of clean_root.sh's PID namespace, which ends with clean_root.sh.
# Changing its user clears the parent-death signal unshare --kill-child gave it, so setpriv sets it
# again (--pdeathsig): otherwise the server outlives the test, reparented to the host's init.
trap 'kill $server 2>/dev/null || true' EXIT
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's|^enact-server [^ ]* listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$log")
  [ -n "$port" ] && break
  kill -0 $server 2>/dev/null || { cat "$log"; fail "enact-server exited"; }
  sleep 0.2
done
[ -n "$port" ] || { cat "$log"; fail "enact-server did not start"; }
answer=$(curl -sS --max-time 10 "http://127.0.0.1:$port/core/v1/get_node_chain_config")
echo "$answer" | grep -q '"chain_id"' || { cat "$log"; fail "get_node_chain_config answered: $answer"; }
echo "GET /core/v1/get_node_chain_config: $answer"
if grep -q 'running as root' "$log"; then cat "$log"; fail "the server warned about root as the user enact"; fi
grep -q '"dropped_privileges":true' "$log" && ! grep -q 'isolation incomplete' "$log" ||
  { cat "$log"; fail "the action sandbox is not complete under the unit's user and capabilities"; }
checked=0
for w in $(pgrep -f "enact-worker --parent" || true); do
  # Only the packaged server's workers (/usr/…): other tests may run workers of the build tree.
  case $(readlink "/proc/$w/exe" 2>/dev/null) in /usr/*) ;; *) continue ;; esac
  status=/proc/$w/status
  [ -r "$status" ] || continue
  checked=$((checked + 1))
  grep -q $'^Uid:\t65534\t65534\t65534\t65534' "$status" || fail "worker $w is not nobody: $(grep ^Uid "$status")"
  # No capability in this (the initial) user namespace: none at all, or only those a user
  # namespace of the worker's own gives it over itself (its network namespace, nothing of ours).
  if [ "$(readlink "/proc/$w/ns/user")" = "$(readlink /proc/self/ns/user)" ]; then
    grep -q $'^CapPrm:\t0000000000000000' "$status" || fail "worker $w keeps capabilities: $(grep ^Cap "$status")"
  fi
done
[ "$checked" -gt 0 ] || fail "no worker of the packaged server found"
quickstart=$work/quickstart.sh
awk '/^## Quick start/{f=1} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' "$source_dir/docs/server.md" >"$quickstart"
(cd "$work" && URL=http://127.0.0.1:$port bash -e "$quickstart") >"$work/quickstart.out" 2>&1 ||
  { cat "$work/quickstart.out" "$log"; fail "docs/server.md's quick start against the packaged server"; }
grep -q '"signatures"' "$work/quickstart.out" || { cat "$work/quickstart.out"; fail "the quick start's run signed nothing"; }
echo "quick start: the action ran and signed"
kill $server
wait $server 2>/dev/null || true
trap - EXIT
# Stopping the test's root stops the server in it: none is left behind.
left=""
for _ in $(seq 1 50); do
  left=$(pgrep -f "enact-server --config /etc/enact/config.toml --dev --data-dir /var/lib/enact/test" || true)
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || { kill -KILL $left 2>/dev/null || true; fail "the packaged server outlived its root (pid $left)"; }

step "consumers: find_package(enact) and pkg-config"
inroot sh -ec '
  cd /tmp/src
  cmake -S consumer -B build-cxx -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-cxx >/dev/null
  ./build-cxx/consumer
  cmake -S c_consumer -B build-c -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-c >/dev/null
  ./build-c/c_consumer
  cc -std=c99 -o pc-c c_consumer/main.c $(pkg-config --cflags --libs enact-c)
  ./pc-c
  c++ -std=c++20 -o pc-cxx consumer/main.cpp $(pkg-config --cflags --libs enact)
  ./pc-cxx
' >"$work/consumers.log" 2>&1 || { cat "$work/consumers.log"; fail "consumers"; }
cat "$work/consumers.log"
[ "$(grep -c 'consumer ok' "$work/consumers.log")" = 4 ] || fail "expected four 'consumer ok' lines"
echo "package.deb_clean_root: passed in $SECONDS s"
