#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the ```sh examples of docs/cli.md — the offline tools, `enact core` and `enact chain`
# sections, in that order in one shell — against a fresh enact-server --dev on a free loopback
# port with a temporary data directory. The `enact chain deploy` line needs anvil and is left out.
#   run_cli_doc.sh ENACT_SERVER ENACT_CLI DOCS_CLI_MD
set -euo pipefail
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
doc_start "$@"

for section in 'Offline tools' 'the core service' 'the permission registry on-chain'; do
  awk -v S="$section" 'index($0, "## ") == 1 && index($0, S) {f = 1}
    f && /^```sh$/ {i = 1; next} i && /^```$/ {exit} i {print}' "$doc"
done | grep -v 'enact chain deploy' >"$work/walk.sh"
[ "$(grep -c '^enact ' "$work/walk.sh")" -ge 40 ] || { echo "examples missing in $doc"; exit 1; }

doc_server "$work/enact-data"

(cd "$work" && PATH="$(dirname "$cli_bin"):$PATH" ENACT_URL=$base \
  bash -euo pipefail -x "$work/walk.sh" >"$work/result" 2>&1) || {
  echo "docs/cli.md examples failed:"; tail -20 "$work/result"; tail -5 "$work/log"; exit 1; }
echo "docs/cli.md: $(grep -c '^enact ' "$work/walk.sh") commands ran"
