#!/usr/bin/env bash
# Builds the SDK's documentation (DocC, from the `///` comments) as a static website in .build/docs/:
# OpenGameKit and OpenGameKitVoice, each in a folder of its own. Open .build/docs/OpenGameKit/index.html through any
# static web server, e.g. `python3 -m http.server -d .build/docs/OpenGameKit`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/docs
mkdir -p "$out"
for target in OpenGameKit OpenGameKitVoice; do
  swift package --allow-writing-to-directory "$out" generate-documentation --target "$target" \
    --disable-indexing --transform-for-static-hosting --hosting-base-path "$target" --output-path "$out/$target"
done
echo "documentation in $out/OpenGameKit and $out/OpenGameKitVoice"
