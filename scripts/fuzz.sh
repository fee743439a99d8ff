#!/usr/bin/env bash
# Builds the coverage-guided fuzzers of the wire decoders (Fuzz/<Name>/: libFuzzer, as the toolchain ships it, with
# AddressSanitizer) and runs each for a bounded time, starting from its committed corpus. The corpus is copied to a
# temporary folder first: a run never changes the repository.
#   scripts/fuzz.sh [SECONDS]                             every fuzzer, SECONDS each (default 30)
#   FUZZERS="FuzzDNSMessage" scripts/fuzz.sh 600          one fuzzer, for longer
# Fails when a fuzzer finds an input that crashes, traps (a broken check), leaks, runs over 5 s or over 2 GB; the input
# is printed as hex and kept in .build-fuzzing/artifacts/. Replay it with `.build-fuzzing/debug/<Name> <file>`.
# The fuzzers' random seed is libFuzzer's own (printed as "Seed:"), or OPENGAMEKIT_FUZZ_SEED when that is set.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
read -r -a fuzzers <<<"${FUZZERS:-FuzzRealtimeFrame FuzzRelayFrame FuzzRelayDatagram FuzzSessionFrame FuzzDNSMessage}"
scratch=.build-fuzzing
# Debug: a clean build takes about 60% of a release build's time, and the build is most of the fuzzing phase.
build=(swift build -c debug --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address)
# Package.swift declares the fuzz targets only when this is set.
export OPENGAMEKIT_FUZZ=1

started=$SECONDS
for fuzzer in "${fuzzers[@]}"; do
  "${build[@]}" --product "$fuzzer"
done
bin="$("${build[@]}" --show-bin-path)"
echo "fuzz: built ${#fuzzers[@]} fuzzers in $((SECONDS - started)) s"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifacts="$scratch/artifacts"
mkdir -p "$artifacts"
seed=()
if [ -n "${OPENGAMEKIT_FUZZ_SEED:-}" ]; then seed=(-seed="$OPENGAMEKIT_FUZZ_SEED"); fi
failed=()
for fuzzer in "${fuzzers[@]}"; do
  mkdir -p "$work/$fuzzer"
  cp -R "Fuzz/$fuzzer/corpus" "$work/$fuzzer/corpus"
  dictionary=()
  if [ -f "Fuzz/$fuzzer/fuzz.dict" ]; then dictionary=(-dict="Fuzz/$fuzzer/fuzz.dict"); fi
  rm -f "$artifacts/$fuzzer-"*
  if "$bin/$fuzzer" "$work/$fuzzer/corpus" "${dictionary[@]}" "${seed[@]}" -max_total_time="$seconds" -timeout=5 \
    -rss_limit_mb=2048 -artifact_prefix="$artifacts/$fuzzer-" -print_final_stats=1 >"$work/$fuzzer/log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$fuzzer/log")
    coverage=$(grep -o 'cov: [0-9]*' "$work/$fuzzer/log" | tail -1)
    echo "fuzz: $fuzzer passed: $runs inputs in $seconds s, $coverage, corpus $(ls "$work/$fuzzer/corpus" | wc -l) inputs"
  else
    failed+=("$fuzzer")
    echo "fuzz: $fuzzer FAILED; the end of its log:"
    tail -n 40 "$work/$fuzzer/log"
    for input in "$artifacts/$fuzzer-"*; do
      [ -f "$input" ] || continue
      echo "fuzz: $fuzzer input $input ($(wc -c <"$input") bytes), as hex:"
      od -An -v -tx1 "$input" | tr -d ' \n' | fold -w 128
      echo
    done
  fi
done
echo "fuzz: ${#fuzzers[@]} fuzzers in $((SECONDS - started)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}"
  exit 1
fi
