#!/usr/bin/env bash
# Run the test suite under a CPU hog, N times back to back, and print each run's time and failures.
#   benchmarks/loaded_suite.sh [-n RUNS] [-j HOGS] [-- PYTEST ARGS]
#   e.g. benchmarks/loaded_suite.sh -n 3                        # the whole suite 3 times, one hog per core
#        benchmarks/loaded_suite.sh -n 1 -j 4 -- tests/test_multirank.py -k ctrl_c
# The hogs are busy Python loops at normal priority, killed (by pid) when the script ends.
# Logs: $OUT (default /tmp/loaded-suite-<time>)/run<K>.log; summary at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=1 hogs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    -j) hogs=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [-n RUNS] [-j HOGS] [-- PYTEST ARGS]" >&2; exit 2 ;;
  esac
done
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(-q -ra --durations=15)
out=${OUT:-/tmp/loaded-suite-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT INT TERM
for _ in $(seq "$hogs"); do python3 -c "while True: pass" & pids+=($!); done
echo "hogs: $hogs busy loops (pids ${pids[*]}); logs in $out"
summary=()
for k in $(seq "$runs"); do
  t0=$(date +%s)
  python3 -m pytest "${args[@]}" > "$out/run$k.log" 2>&1
  rc=$?
  t=$(( $(date +%s) - t0 ))
  line=$(tail -1 "$out/run$k.log")
  failed=$(grep -E "^(FAILED|ERROR) " "$out/run$k.log" | cut -d' ' -f2 | tr '\n' ' ')
  summary+=("run $k: exit $rc in ${t}s: $line${failed:+ | failed: $failed}")
  echo "${summary[-1]}"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s\n' "${summary[@]}" > "$out/summary.txt"
