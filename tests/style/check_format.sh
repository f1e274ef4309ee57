#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every tracked C and C++ source must be laid out as the root .clang-format says; prints the files
# that differ and the command that fixes them.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null || { echo "clang-format is not installed (scripts/install-deps installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'not formatted: %s\n' "${bad[@]}"
  echo "fix with: clang-format -i ${bad[*]}"
  exit 1
fi
echo "${#files[@]} files formatted"
