#!/usr/bin/env bash
# Builds an older commit's benches for `gamecenter-bench compare --baseline` (any bench) and
# `gamecenter-bench reports --baseline` (its server): `bash scripts/bench-baseline.sh [COMMIT]` (default: the newest
# release tag, or the commit before HEAD when there is none) checks the commit out in a worktree of its own under
# .build-baseline/ and builds gamecenter-bench and gamecenter in release into a build folder beside it (git-ignored),
# then prints the path of that gamecenter-bench; its gamecenter is in the same folder.
set -euo pipefail
cd "$(dirname "$0")/.."
commit="${1:-$(git describe --tags --abbrev=0 2>/dev/null || git rev-parse HEAD~1)}"
hash=$(git rev-parse --short=12 "$commit^{commit}")
root="$PWD/.build-baseline"
worktree="$root/worktree-$hash"
build="$root/build-$hash"
mkdir -p "$root"
if [ ! -d "$worktree" ]; then
  git worktree add --detach "$worktree" "$hash" >&2
fi
for product in gamecenter-bench gamecenter; do
  swift build -c release --package-path "$worktree" --scratch-path "$build" --product "$product" >&2
done
echo "$(swift build -c release --package-path "$worktree" --scratch-path "$build" --show-bin-path)/gamecenter-bench"
