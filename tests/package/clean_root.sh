#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A clean Debian 12 (bookworm) root for the tests that install enact the way its users do
# (docs/packaging.md): made once with mmdebstrap from Debian's own archive, as this machine's apt
# sources name it, cached as a tarball, then unpacked fresh for a test and entered with chroot.
# Needs root (the suite runs as root), mmdebstrap and unshare.
#
#   tests/package/clean_root.sh [--cache DIR] [--include PKG,...] [--fresh] [--bind HOST:DIR]...
#                               ROOT [-- COMMAND [ARG...]]
#
#   --cache DIR       where the root tarball and the apt archive cache live (default:
#                     $ENACT_CLEAN_ROOT_CACHE, else clean-root-cache beside ROOT); a second test,
#                     or a second run, reuses them, so only the first one downloads
#   --include PKGS    extra Debian packages in the cached root, comma-separated (each list has its
#                     own tarball); the base holds apt, the archive keyring and ca-certificates
#   --fresh           unpack the tarball into ROOT even when ROOT exists (it is wiped first)
#   --bind HOST:DIR   bind-mount the host directory HOST at DIR inside the root while COMMAND runs
#                     (read-write; repeatable)
#   ROOT              the root directory; unpacked from the tarball when it does not exist
#   COMMAND           run inside the root (pivot_root into ROOT, then COMMAND...) in its own mount and PID
#                     namespaces with /proc, /dev and the host's resolv.conf in place, the packages
#                     of the apt archive cache in the root's own /var/cache/apt/archives; every
#                     process it starts ends with it (and with this script)
#
# The root's network is the host's, so a server started inside on 127.0.0.1 is reachable from the
# host. The tarball is made again when it is older than $ENACT_CLEAN_ROOT_MAX_AGE_DAYS (default 7),
# so the package lists it carries do not go stale. Exit status: COMMAND's, or 0 after unpacking.
set -euo pipefail

if [ "${1:-}" = --inside ]; then
  # Second stage, in the new namespaces: mounts private to them, then pivot_root into the root
  # (not chroot: the kernel refuses a user namespace to a chrooted process, and the action
  # sandbox of a server that is not root makes its network namespace through one).
  shift
  root=$1
  shift
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  while [ "$1" != -- ]; do
    mkdir -p "$root/${1#*:}"
    mount --bind "${1%%:*}" "$root/${1#*:}"
    shift
  done
  shift
  cd "$root"
  mkdir -p .old-root
  pivot_root . .old-root
  cd /
  # The root may have no umount (package mount): the host's, from the old root, detaches it.
  /.old-root/usr/bin/umount -l /.old-root
  /usr/bin/rmdir /.old-root
  exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
fi

usage() {
  sed -n '8,9p' "$0" | sed 's/^# *//' >&2
  exit 2
}
cache=${ENACT_CLEAN_ROOT_CACHE:-}
include=""
fresh=0
binds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache=$2; shift 2 ;;
    --include) include=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --bind) [[ "$2" == *:/* ]] || usage; binds+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
root=$(realpath -m "$1")
shift
if [ $# -gt 0 ]; then
  [ "$1" = -- ] || usage
  shift
fi
[ "$(id -u)" = 0 ] || { echo "clean_root.sh: needs root (mmdebstrap, chroot, mounts)" >&2; exit 1; }
[ -n "$cache" ] || cache=$(dirname "$root")/clean-root-cache
mkdir -p "$cache/apt-archives/partial"
cache=$(realpath "$cache")

# One tarball per package list, named by the list's hash.
base="debian-archive-keyring,ca-certificates"
packages=$(echo "$base,$include" | tr ', ' '\n\n' | sed '/^$/d' | sort -u | paste -sd, -)
tarball="$cache/bookworm-$(echo "$packages" | sha256sum | cut -c1-12).tar"
max_age=${ENACT_CLEAN_ROOT_MAX_AGE_DAYS:-7}
if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mtime "+$max_age")" ]; then
  rm -f "$tarball"
fi

# One process makes a given tarball; another one waits for it.
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$tarball" ]; then
  command -v mmdebstrap >/dev/null || {
    echo "clean_root.sh: mmdebstrap is not installed (scripts/install-deps)" >&2
    exit 1
  }
  # Debian's own archive as this machine's apt sources name it: the deb822 stanzas and the
  # one-line entries whose URIs are on debian.org; any other repository is left out.
  sources=()
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'BEGIN { RS = ""; ORS = "\n\n" } /URIs:[^\n]*debian\.org/ && !/Enabled: *no/' "$f"
  done >"$tmp/debian.sources"
  [ -s "$tmp/debian.sources" ] && sources+=("$tmp/debian.sources")
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    grep -E '^deb(\s+\[[^]]*\])?\s+\S*debian\.org' >"$tmp/debian.list" || true
  [ -s "$tmp/debian.list" ] && sources+=("$tmp/debian.list")
  if [ ${#sources[@]} -eq 0 ]; then
    echo "deb http://deb.debian.org/debian bookworm main" >"$tmp/debian.list"
    sources=("$tmp/debian.list")
  fi
  echo "clean_root.sh: making $tarball ($packages)" >&2
  mmdebstrap --quiet --format=tar --variant=apt --include="$packages" bookworm "$tarball.part" "${sources[@]}"
  mv "$tarball.part" "$tarball"
fi

flock -u 9
exec 9>&-
if [ "$fresh" = 1 ] || [ ! -d "$root" ]; then
  rm -rf "$root"
  mkdir -p "$root"
  tar -C "$root" -xf "$tarball"
fi
[ $# -gt 0 ] || exit 0

cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The packages apt downloaded in earlier runs go into the root's own archive directory (hard
# links where the file system allows), and what it downloads now comes back to the cache, so
# roots used at the same time never share apt's lock.
sync_debs() {  # sync_debs FROM TO
  find "$1" -maxdepth 1 -name '*.deb' -exec cp -ln {} "$2/" \; 2>/dev/null ||
    find "$1" -maxdepth 1 -name '*.deb' -exec cp -n {} "$2/" \;
}
mkdir -p "$root/var/cache/apt/archives/partial"
sync_debs "$cache/apt-archives" "$root/var/cache/apt/archives"
# SIGTERM, SIGINT or SIGHUP to this script end the command: unshare ignores SIGTERM and SIGINT
# while it waits, so it is killed, and --kill-child takes every process of the namespace with it.
unshare --mount --pid --fork --kill-child --propagation private -- \
  "$0" --inside "$root" "${binds[@]}" -- "$@" <&0 &
child=$!
trap 'kill -KILL "$child" 2>/dev/null || true' TERM INT HUP
rc=0
wait "$child" || rc=$?
while kill -0 "$child" 2>/dev/null; do
  rc=0
  wait "$child" || rc=$?
done
sync_debs "$root/var/cache/apt/archives" "$cache/apt-archives" || true
exit $rc
