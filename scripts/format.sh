#!/usr/bin/env bash
# Formats the Swift sources with the toolchain's swift-format and the repository's .swift-format
# (layout only: 4-space indentation, lines up to 160 columns, the existing line breaks respected).
#   scripts/format.sh           rewrites the files in place
#   scripts/format.sh --check   changes nothing; lists the files that are not formatted and fails if there are any
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests Examples Benchmarks Fuzz)
if [ "${1:-}" = "--check" ]; then
  unformatted=()
  while IFS= read -r -d '' file; do
    if ! diff -q <(swift format format --configuration .swift-format "$file") "$file" >/dev/null; then
      unformatted+=("$file")
    fi
  done < <(find "${paths[@]}" -name '*.swift' -print0)
  if [ ${#unformatted[@]} -gt 0 ]; then
    printf 'not formatted (run scripts/format.sh):\n'; printf '  %s\n' "${unformatted[@]}"
    exit 1
  fi
  echo "format: every Swift file is formatted"
else
  swift format format --configuration .swift-format --recursive --in-place "${paths[@]}"
fi
