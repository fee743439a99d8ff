#!/usr/bin/env bash
# Runs schemathesis against /openapi.yaml of a fresh server: every generated request must be answered
# without a 5xx. Requests are sent signed out, with a valid session token, and (admin routes) with the admin key.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${GAMECENTER_BIN:-$(swift build --show-bin-path)/gamecenter}"
work=$(mktemp -d)
admin_key=schemathesis-admin-key-0123456789
"$bin" serve --port 0 --udp-port 0 --database "sqlite:$work/db.sqlite" --games games --admin-key "$admin_key" --test-clock \
  >"$work/out" 2>"$work/err" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/out" | head -1)
[ -n "$url" ] || { echo "server did not start"; cat "$work/err"; exit 1; }

device=(-H "X-GameCenter-Bundle-ID: com.example.tapper" -H "X-GameCenter-Environment: sandbox")
token=$(curl -sf "${device[@]}" -H 'Content-Type: application/json' \
  -d '{"account":"schemathesis","password":"schemathesis-pw","alias":"Fuzz"}' "$url/v1/accounts" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

status=0
for auth in "" "Authorization: Bearer $token"; do
  args=(run "$url/openapi.yaml" --checks not_a_server_error --max-examples 40 --request-timeout 10 --seed 1
        --exclude-path /v1/realtime)
  # Signed in, the device headers are fixed so requests reach the routes' own rules, and the routes that would
  # end the session the other requests use are skipped.
  [ -n "$auth" ] && args+=(-H "$auth" "${device[@]}" --exclude-path /v1/sessions/current --exclude-path /v1/sessions/others)
  echo "schemathesis ${auth:+(signed in)}"
  schemathesis "${args[@]}" || status=1
done
# The studio routes with the admin key.
echo "schemathesis (admin)"
schemathesis run "$url/openapi.yaml" --checks not_a_server_error --max-examples 40 --request-timeout 10 --seed 1 \
  --include-path-regex '^/admin/' -H "Authorization: Bearer $admin_key" || status=1
kill -0 $server 2>/dev/null || { echo "server died during schemathesis"; cat "$work/err"; status=1; }
exit $status
