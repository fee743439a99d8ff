#!/usr/bin/env bash
# Builds the SDK's documentation (DocC: the catalogs in Sources/*/*.docc and the `///` comments) as a static website:
# OpenGameKit and OpenGameKitVoice, each in a folder of its own. Any DocC warning (a symbol link it cannot resolve,
# say) fails the build.
#   scripts/docs.sh                      builds in .build and writes .build/docs/
#   scripts/docs.sh --scratch-path DIR   builds in DIR and writes DIR/docs/
# Serve the folder with any static web server, e.g. `python3 -m http.server -d .build/docs`, and open
# http://localhost:8000/OpenGameKit/documentation/opengamekit/.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build
if [ "${1:-}" = "--scratch-path" ]; then
  scratch=${2:?usage: scripts/docs.sh [--scratch-path DIR]}
elif [ $# -gt 0 ]; then
  echo "usage: scripts/docs.sh [--scratch-path DIR]" >&2
  exit 2
fi
out=$scratch/docs
mkdir -p "$out"
for target in OpenGameKit OpenGameKitVoice; do
  swift package --scratch-path "$scratch" --allow-writing-to-directory "$out" generate-documentation --target "$target" \
    --warnings-as-errors --disable-indexing --transform-for-static-hosting --hosting-base-path "$target" \
    --output-path "$out/$target"
done
echo "documentation in $out/OpenGameKit and $out/OpenGameKitVoice"
