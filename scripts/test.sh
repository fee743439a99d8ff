#!/usr/bin/env bash
# Installs what the tests need, starts a throwaway PostgreSQL, and runs every test:
# the Swift suites (unit, storage on SQLite and PostgreSQL, in-process server, live server + SDK devices)
# and a schemathesis run against /openapi.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/postgres.sh

if ! python3 -c "import schemathesis" 2>/dev/null; then
  echo "installing schemathesis from PyPI…"
  python3 -m pip install -q schemathesis
fi

trap pg_stop EXIT
pg_start

swift build --build-tests
export GAMECENTER_BIN="$(swift build --show-bin-path)/gamecenter"
export GAMECENTER_REQUIRE_POSTGRES=1

set +e
swift test --skip-build
swift_status=$?
bash scripts/schemathesis.sh
schema_status=$?
set -e

if [ "$swift_status" -ne 0 ] || [ "$schema_status" -ne 0 ]; then
  echo "tests failed (swift test: $swift_status, schemathesis: $schema_status)"
  exit 1
fi
echo "all tests passed"
