#!/usr/bin/env bash
# Measures what a game pays for the SDK: makes a fresh package in a temporary folder whose one target depends on this
# repository's OpenGameKit library only, as a game would, then prints how many packages SwiftPM resolves for it and
# how long a cold debug build takes (resolving, fetching and building from an empty build folder).
#   scripts/sdk-only.sh                      resolve and cold build (a build folder in the temporary folder, removed after)
#   scripts/sdk-only.sh --quick              resolve only: the packages, no build
#   scripts/sdk-only.sh --scratch-path DIR   build in DIR (emptied first, kept after)
#   scripts/sdk-only.sh --default-traits     depend with the package's default traits (the server's packages too),
#                                            as a game that does not write `traits: []` does
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
quick=0
scratch=""
traits=", traits: []"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --scratch-path) scratch=$2; shift ;;
    --default-traits) traits="" ;;
    *) echo "usage: scripts/sdk-only.sh [--quick] [--scratch-path DIR] [--default-traits]" >&2; exit 2 ;;
  esac
  shift
done

game=$(mktemp -d)
trap 'rm -rf "$game"' EXIT
scratch=${scratch:-$game/.build}
rm -rf "$scratch"
# A path dependency's identity is its folder's name.
identity=$(basename "$repo")
mkdir -p "$game/Sources/Game"
cat >"$game/Package.swift" <<EOF
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Game",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$repo"$traits)],
    targets: [.executableTarget(name: "Game", dependencies: [.product(name: "OpenGameKit", package: "$identity")])]
)
EOF
cat >"$game/Sources/Game/main.swift" <<'EOF'
import OpenGameKit

print(GKLocalPlayer.local.isAuthenticated)
EOF

cd "$game"
start=$SECONDS
if ! swift package resolve --scratch-path "$scratch" >"$game/resolve.log" 2>&1; then
  cat "$game/resolve.log" >&2
  exit 1
fi
resolve_seconds=$((SECONDS - start))
packages=$(swift package show-dependencies --scratch-path "$scratch" --format flatlist | grep -vx "$identity" | sort -u)
echo "packages resolved: $(grep -c . <<<"$packages") besides OpenGameKit, in ${resolve_seconds} s:"
echo "$packages" | paste -sd' ' | fold -s -w 116 | sed 's/^/  /'
if [ "$quick" -eq 1 ]; then
  exit 0
fi
# Wall-clock seconds depend on what else the machine does; CPU seconds (user + system) much less.
TIMEFORMAT='%R %U %S'
if ! { time swift build --scratch-path "$scratch" >"$game/build.log" 2>&1; } 2>"$game/time"; then
  tail -20 "$game/build.log" >&2
  exit 1
fi
read -r wall user system <"$game/time"
tail -1 "$game/build.log"
echo "cold build: ${wall%.*} s (${resolve_seconds} s resolving before it), $(awk "BEGIN { printf \"%d\", $user + $system }") CPU s"
