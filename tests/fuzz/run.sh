#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the fuzz tree if needed and runs the libFuzzer targets one after the other, each for a
# bounded time under ASan+UBSan, one process at a time. Stops at the first crash, leak, timeout or
# violated property, printing the reproducer's path (and exits 1).
#
#   tests/fuzz/run.sh [seconds-per-target] [target...]      (default: 10 s, every target)
#
# ENACT_FUZZ_BUILD_DIR    the fuzz tree (default: <repository>/build-fuzz)
# ENACT_FUZZ_SKIP_BUILD=1 use the tree as it is (the ctest entries of the fuzz tree set it)
# ENACT_FUZZ_JOBS         parallel compile jobs (default: 2)
# Each run prints its executions per second; the corpus grows in <tree>/corpus/<target>/ and
# crashes land in <tree>/artifacts/<target>/.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-10}"
shift || true
build="${ENACT_FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets=("$@")
if ((${#targets[@]} == 0)); then
  read -r -a targets <<<"$(sed -n '/^set(ENACT_FUZZ_TARGETS/,/)/p' "$here/CMakeLists.txt" |
    sed 's/set(ENACT_FUZZ_TARGETS//; s/)//' | tr '\n' ' ')"
fi

if [[ "${ENACT_FUZZ_SKIP_BUILD:-0}" != 1 ]]; then
  export CCACHE_NOHASHDIR=1
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build" -DENACT_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang >/dev/null
  fi
  cmake --build "$build" -j "${ENACT_FUZZ_JOBS:-2}" --target "${targets[@]/#/fuzz_}"
fi
if [[ ! -d "$build/corpus" ]]; then
  node "$here/make_corpus.mjs" --out "$build/corpus" --schema-binary "$build/fuzz_schema"
fi

dict_of() {
  case "$1" in
    typed_data | envelope) echo "$here/dict/typed_data.dict" ;;
    rpc | schema | quote) echo "$here/dict/json.dict" ;;
    cron) echo "$here/dict/cron.dict" ;;
  esac
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
printf '%-12s %10s %12s %8s %6s\n' target runs exec/s cov corpus
for t in "${targets[@]}"; do
  exe="$build/fuzz_$t"
  artifacts="$build/artifacts/$t/"
  log="$build/logs/$t.log"
  mkdir -p "$build/corpus/$t" "$artifacts" "$build/logs"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$artifacts")
  dict="$(dict_of "$t")"
  [[ -n "$dict" ]] && args+=(-dict="$dict")
  if ! "$exe" "${args[@]}" "$build/corpus/$t" >"$log" 2>&1; then
    echo "fuzz_$t: FAILED (log: $log)"
    grep -E 'ERROR|SUMMARY|fuzz property|runtime error|Test unit written' "$log" | head -20 || true
    repro="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
    [[ -n "$repro" ]] && echo "reproducer: $repro  (replay: $exe $repro)"
    exit 1
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
  cov="$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)"
  corpus="$(find "$build/corpus/$t" -type f | wc -l)"
  printf '%-12s %10s %12s %8s %6s\n' "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}" "$corpus"
done
