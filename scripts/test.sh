#!/usr/bin/env bash
# Installs what the tests need, starts a throwaway PostgreSQL, and runs every test:
# the Swift suites (unit, storage on SQLite and PostgreSQL, in-process server, live server + SDK devices),
# a schemathesis run against /openapi.yaml, the web app in headless Chromium, the SDK's documentation (DocC, warnings
# as errors), and the wire decoders' fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/postgres.sh

# The layout check first: it needs nothing installed and fails in seconds.
bash scripts/format.sh --check

# schemathesis checks the OpenAPI document, zeroconf is the LAN tests' independent mDNS peer, jmespath the rule
# evaluator's (the matchmaking rules' JMESPath is checked against it).
for module in schemathesis zeroconf jmespath; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "installing $module from PyPI…"
    python3 -m pip install -q "$module"
  fi
done
# The LAN tests use real multicast on the loopback interface (mDNS, and python-zeroconf as an independent peer),
# two network namespaces joined by a veth pair (two hosts), and tmux to drive the terminal peer picker.
if ! command -v tmux >/dev/null; then
  echo "installing tmux from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 tmux >/dev/null
fi
# Two-party voice between the two hosts is also tried with its UDP port blocked by a firewall rule (nftables), and a
# match with the direct path between the hosts blocked.
if ! command -v nft >/dev/null && [ ! -x /usr/sbin/nft ]; then
  echo "installing nftables from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 nftables >/dev/null
fi
# Recurring leaderboards' calendars are checked against Python's zoneinfo, which reads Debian's tzdata.
if ! python3 -c "import zoneinfo; zoneinfo.ZoneInfo('America/New_York')" 2>/dev/null; then
  echo "installing tzdata from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 tzdata >/dev/null
fi
# Several nodes are tried behind Debian's haproxy, as docs/SEVERAL_NODES.md configures it.
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  echo "installing haproxy from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 haproxy >/dev/null
fi
# Archives packed as .tar.zst (gamecenter export/import) go through the system's tar and zstd.
if ! command -v zstd >/dev/null; then
  echo "installing zstd from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 zstd >/dev/null
fi
# The voice engine (OpenGameKitVoice) links libopus, speexdsp and libpulse-simple; its tests render speech
# with espeak-ng, check the Opus stream with opusdec (opus-tools), and play and record through a private
# PulseAudio server with a null sink (pulseaudio).
if ! pkg-config --exists opus speexdsp libpulse-simple 2>/dev/null || ! command -v espeak-ng >/dev/null \
  || ! command -v sox >/dev/null || ! command -v opusdec >/dev/null || ! command -v pulseaudio >/dev/null; then
  echo "installing the voice engine's libraries and tools from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    libopus-dev libspeexdsp-dev libpulse-dev espeak-ng sox opus-tools pulseaudio >/dev/null
fi
# The web app's browser tests drive Debian's Chromium through its chromedriver (/usr/bin/chromedriver) with
# Selenium, and check every page with axe-core (axe-selenium-python ships it).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "installing chromium and chromium-driver from Debian…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 chromium chromium-driver >/dev/null
fi
# The game-server API's tests make their tokens with PyJWT (ES256 through cryptography), as a studio's server would, and
# open devices' realtime channels with websocket-client.
for package in selenium:selenium axe-selenium-python:axe_selenium_python pytest:pytest pyjwt:jwt cryptography:cryptography websocket-client:websocket; do
  if ! python3 -c "import ${package#*:}" 2>/dev/null; then
    echo "installing ${package%%:*} from PyPI…"
    python3 -m pip install -q "${package%%:*}"
  fi
done
ip link set lo multicast on 2>/dev/null || echo "warning: cannot enable multicast on lo (not root?)"
export GAMECENTER_REQUIRE_LAN_PEERS=1
source scripts/lan-netns.sh

trap 'pg_stop; netns_down' EXIT
pg_start
netns_up

swift build --build-tests
export GAMECENTER_BIN="$(swift build --show-bin-path)/gamecenter"
export GAMECENTER_REQUIRE_POSTGRES=1

set +e
# The LAN suites run on their own: mDNS discovery has real deadlines, and the CPU-heavy suites (rank index,
# formatter cross-checks) running beside them starved it in the full parallel run. The voice suites too: real-time
# audio threads, Opus and the correlation checks beside the live suites starved their 1 s heartbeats.
# The live suites (real server processes with 1 s heartbeats, and the TCP/UDP fault proxies) run apart from the
# CPU-heavy in-process suites too: beside them, a starved heartbeat dropped a realtime channel mid-test.
# The cluster suite (two or three server processes and PostgreSQL per test) runs after the other live suites: beside
# them it starved their 10 s waits (a sign-out heard, a relay's closing frame).
voice="OpenGameKitVoiceTests|VoiceChatLiveTests|VoiceChatServiceLiveTests|VoiceChatExampleTests|VoiceRelayLiveTests"
live="LiveTests|ExampleTests|NetworkFaultProxyTests"
# The differential tests against Python (jmespath, zoneinfo) run apart too: ten python3 processes for half a minute
# beside the in-process suites left the PostgreSQL storage tests without a connection for 5 s, and dozens failed at once.
python="JMESPathTests\.DifferentialTests|OccurrenceScheduleTests"
# Every phase's output also goes to one log: a failure's lines are printed again at the end, where a run's tail shows them.
swift_log=$(mktemp)
swift_phase() { "$@" 2>&1 | tee -a "$swift_log"; }
swift_phase swift test --skip-build --skip "OpenGameKitLANTests|OpenGameKitSessionTests|$voice|$live|$python"
swift_status=$?
swift_phase swift test --skip-build --filter "$python" || swift_status=1
# Swift Testing runs every test of a phase at once unless told otherwise; on two cores a hundred live tests with their
# server processes starved each other's heartbeats and 10 s waits. At most 4 live tests (2 voice tests) run at a time.
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=4 \
  swift_phase swift test --skip-build --filter "$live" --skip "$voice|OpenGameKitLANTests|OpenGameKitSessionTests|ClusterLiveTests" || swift_status=1
swift_phase swift test --skip-build --filter "ClusterLiveTests" || swift_status=1
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=2 swift_phase swift test --skip-build --filter "$voice" || swift_status=1
swift_phase swift test --skip-build --filter "OpenGameKitLANTests|OpenGameKitSessionTests" || swift_status=1
# The SDK's documentation: a symbol link DocC cannot resolve, in a catalog or a `///` comment, fails it.
bash scripts/docs.sh
docs_status=$?
# What a game that depends on the SDK alone resolves (the server's packages left out by `traits: []`), measured on
# every run; `bash scripts/sdk-only.sh` without --quick also times its cold build.
bash scripts/sdk-only.sh --quick
sdk_status=$?
bash scripts/schemathesis.sh
schema_status=$?
# The web app in headless Chromium against the real binary; screenshots and axe reports in Tests/Browser/artifacts.
python3 -m pytest -q Tests/Browser
browser_status=$?
# The studio's game-server API (server keys, App Store Connect's submissions) against the real binary, on both engines.
python3 -m pytest -q Tests/ServerAPI || browser_status=1
# The coverage-guided fuzzers of the wire decoders (libFuzzer + AddressSanitizer, built in .build-fuzzing), 30 s each.
bash scripts/fuzz.sh
fuzz_status=$?
set -e

if [ "$swift_status" -ne 0 ] || [ "$docs_status" -ne 0 ] || [ "$sdk_status" -ne 0 ] || [ "$schema_status" -ne 0 ] \
  || [ "$browser_status" -ne 0 ] || [ "$fuzz_status" -ne 0 ]; then
  if [ "$swift_status" -ne 0 ]; then
    echo "the Swift tests that failed, and their first issues:"
    grep -E "✘ Test .*(recorded an issue|failed after)|error: -\[|Test Case .* failed|Fatal error|signal code" "$swift_log" | head -40
  fi
  echo "tests failed (swift test: $swift_status, docs: $docs_status, sdk-only: $sdk_status, schemathesis: $schema_status, browser and server API: $browser_status, fuzz: $fuzz_status)"
  exit 1
fi
echo "all tests passed"
