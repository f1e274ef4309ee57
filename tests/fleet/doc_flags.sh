#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every flag docs/deployment.md names (--name) is one enact-server knows: in its --help, or in the
# --help of the subcommand it belongs to (deploy-registry, issue-token). A flag renamed or removed
# without the page following fails here.
#   doc_flags.sh ENACT_SERVER PAGE
set -eu
server=$1
page=$2
help=$( ("$server" --help; "$server" deploy-registry --help; "$server" issue-token --help) 2>&1 || true)
missing=0
for flag in $(grep -o -- '--[a-z][a-z0-9-]*' "$page" | sort -u); do
  if ! printf '%s\n' "$help" | grep -Eq -- "$flag([^a-z0-9-]|\$)"; then
    echo "$page names $flag, which enact-server does not know" >&2
    missing=1
  fi
done
exit $missing
