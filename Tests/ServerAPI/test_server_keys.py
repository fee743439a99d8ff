"""The studio's game-server API against the real `gamecenter` binary, driven by an independent implementation: tokens
are made with PyJWT (ES256, as a studio's server written for App Store Connect makes them), requests are plain HTTP,
and keys are made with `gamecenter keys`. Runs on SQLite and, when GAMECENTER_TEST_POSTGRES_URL is set, PostgreSQL.

Covers: Apple's example submission bodies, answered as Apple answers; each permission refused outside its scope;
tokens that are expired, too long-lived, signed by another key, of another algorithm or audience, or outside their
scope; another game or environment; exactly-once writes with Idempotency-Key (also across a kill -9 and restart);
the serverOnly write policy; key rotation (both keys, then only the new one) and revocation; the per-key rate limit
with Retry-After; `gamecenter keys token` checked by PyJWT.

Needs GAMECENTER_BIN (scripts/test.sh exports it) and the PyPI packages pytest, pyjwt and cryptography.
"""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

GAME = "com.example.arena"
ADMIN_KEY = "admin-key-for-tests-0123456789"
MANIFEST = """
bundleID: com.example.arena
name: Arena
defaultLocale: en
leaderboards:
  - category: arena.wins
    default: true
    title: { en: "Wins" }
    format: integer
  - category: arena.verified
    title: { en: "Verified runs" }
    format: integer
    writePolicy: serverOnly
  - category: arena.checked
    title: { en: "Checked runs" }
    format: integer
    verification: { timeoutSeconds: 1 }
  - category: arena.signed
    title: { en: "Signed runs" }
    format: integer
    writePolicy: signed
  - category: arena.daily
    title: { en: "Today's wins" }
    format: integer
    recurring:
      every: day
      tournament: { attempts: 100 }
achievements:
  - identifier: arena.first
    title: { en: "First win" }
    unachievedDescription: { en: "Win once." }
    achievedDescription: { en: "You won." }
    points: 10
matchmaking:
  ruleSets:
    - referenceName: com.example.arena.RegionRules
      ruleLanguageVersion: 1
      minPlayers: 2
      maxPlayers: 2
      rules:
        - referenceName: SameRegion
          description: Players of one region play together.
          type: COMPATIBLE
          expression: "requests[0].properties.region == requests[1].properties.region"
  queues:
    - referenceName: com.example.arena.Ranked
      ruleSet: com.example.arena.RegionRules
"""
OTHER_MANIFEST = """
bundleID: com.example.other
name: Other
defaultLocale: en
leaderboards:
  - category: other.wins
    default: true
    title: { en: "Wins" }
    format: integer
"""


def engines():
    names = ["sqlite"]
    if os.environ.get("GAMECENTER_TEST_POSTGRES_URL"):
        names.append("postgres")
    elif os.environ.get("GAMECENTER_REQUIRE_POSTGRES") == "1":
        raise RuntimeError("GAMECENTER_REQUIRE_POSTGRES=1 but GAMECENTER_TEST_POSTGRES_URL is not set")
    return names


class Server:
    """A `gamecenter serve` process on its own database and games folder; can be killed and started again."""

    def __init__(self, engine, extra=(), database=None):
        binary = os.environ.get("GAMECENTER_BIN")
        if not binary:
            pytest.fail("GAMECENTER_BIN must name the gamecenter binary (scripts/test.sh exports it)")
        self.binary = binary
        self.work = Path(tempfile.mkdtemp(prefix="server-keys-"))
        games = self.work / "games"
        games.mkdir()
        (games / "arena.yaml").write_text(MANIFEST)
        (games / "other.yaml").write_text(OTHER_MANIFEST)
        if database:
            self.database = database
        elif engine == "postgres":
            base = os.environ["GAMECENTER_TEST_POSTGRES_URL"]
            name = "serverkeys_" + uuid.uuid4().hex[:12]
            subprocess.run(["psql", base, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
            self.database = base.rsplit("/", 1)[0] + "/" + name
        else:
            self.database = f"sqlite:{self.work}/db.sqlite"
        self.arguments = [binary, "serve", "--port", "0", "--udp-port", "0", "--database", self.database, "--games", str(games),
                          "--admin-key", ADMIN_KEY, *extra]
        self.process = None
        self.start()

    def start(self):
        out = open(self.work / "out", "w+")
        self.process = subprocess.Popen(self.arguments, stdout=out, stderr=subprocess.STDOUT)
        for _ in range(400):
            out.seek(0)
            match = re.search(r"^listening on (\S+)", out.read(), re.MULTILINE)
            if match:
                self.url = match.group(1)
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        out.seek(0)
        self.process.kill()
        pytest.fail("the server did not start:\n" + out.read())

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=15)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=15)

    def call(self, method, path, body=None, headers=None, raw=None):
        """(status, decoded JSON body, headers)."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null"), response.headers
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null"), error.headers

    def keys(self, *arguments):
        """Runs `gamecenter keys ...` against this server; its output."""
        return self.run_command("keys", *arguments)

    def run_command(self, *arguments):
        """Runs `gamecenter VERB ...` against this server's admin routes; its output."""
        result = subprocess.run([self.binary, *arguments, "--server", self.url, "--admin-key", ADMIN_KEY],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr + result.stdout
        return result.stdout

    def create_key(self, *permissions, environment="sandbox"):
        """A new key made with the command line: (key id, issuer id, private key PEM)."""
        pem_path = self.work / f"key-{uuid.uuid4().hex[:8]}.p8"
        arguments = ["create", "--game", GAME, "--environment", environment, "--output", str(pem_path)]
        for permission in permissions:
            arguments += ["--permission", permission]
        output = self.keys(*arguments)
        key_id = re.search(r"^key id:\s+(\S+)", output, re.MULTILINE).group(1)
        issuer = re.search(r"^issuer id:\s+(\S+)", output, re.MULTILINE).group(1)
        assert oct(pem_path.stat().st_mode & 0o777) == "0o600"
        return key_id, issuer, pem_path.read_text()

    def player(self, environment="sandbox"):
        """A new player signed up through the device API: (player id, session token)."""
        account = "p" + uuid.uuid4().hex[:10]
        device = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": environment}
        status, body, _ = self.call("POST", "/v1/accounts", {"account": account, "password": "password-1", "alias": "Ann"}, device)
        assert status in (200, 201), body
        status, session, _ = self.call("POST", "/v1/sessions", {"account": account, "password": "password-1"}, device)
        assert status in (200, 201), session
        return body["player"]["playerID"], session["token"]


def token(key_id, issuer, pem, lifetime=600, issued=None, audience="appstoreconnect-v1", algorithm="ES256", **claims):
    """A bearer token as a studio's server written for App Store Connect makes it (PyJWT)."""
    now = int(time.time()) if issued is None else issued
    payload = {"iss": issuer, "iat": now, "exp": now + lifetime, "aud": audience, **claims}
    return jwt.encode(payload, pem, algorithm=algorithm, headers={"kid": key_id, "typ": "JWT"})


def bearer(value):
    return {"Authorization": "Bearer " + value}


def score_body(player_id, score="123", board="arena.verified", pre_released=True, bundle=GAME):
    """Apple's example request for POST /v1/gameCenterLeaderboardEntrySubmissions, with this game's ids."""
    return {"data": {"type": "gameCenterLeaderboardEntrySubmissions", "attributes": {
        "score": score, "scopedPlayerId": player_id, "bundleId": bundle, "vendorIdentifier": board, "preReleased": pre_released}}}


def achievement_body(player_id, percent=30):
    """Apple's example request for POST /v1/gameCenterPlayerAchievementSubmissions, with this game's ids."""
    return {"data": {"type": "gameCenterPlayerAchievementSubmissions", "attributes": {
        "percentageAchieved": percent, "scopedPlayerId": player_id, "bundleId": GAME, "vendorIdentifier": "arena.first",
        "preReleased": True}}}


SCORES = "/v1/gameCenterLeaderboardEntrySubmissions"
ACHIEVEMENTS = "/v1/gameCenterPlayerAchievementSubmissions"


@pytest.fixture(scope="module", params=engines())
def server(request):
    server = Server(request.param)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def writer(server):
    """A key with every permission the tests write and read with."""
    return server.create_key("scores:write", "achievements:write", "players:read")


def test_apple_example_bodies_are_taken_unchanged_and_answered_as_apple_answers(server, writer):
    player_id, _ = server.player()
    headers = bearer(token(*writer))
    status, body, response_headers = server.call("POST", SCORES, score_body(player_id), headers)
    assert status == 201, body
    data = body["data"]
    assert data["type"] == "gameCenterLeaderboardEntrySubmissions"
    assert uuid.UUID(data["id"]).version == 5
    assert data["attributes"] == score_body(player_id)["data"]["attributes"]
    assert body["links"]["self"].endswith(SCORES + "/" + data["id"])
    with_optional = score_body(player_id, score="150")
    with_optional["data"]["attributes"].update({"context": "42", "submittedDate": "2026-01-02T03:04:05.678Z", "challengeIds": []})
    status, body, _ = server.call("POST", SCORES, with_optional, headers)
    assert status == 201, body
    status, body, _ = server.call("POST", ACHIEVEMENTS, achievement_body(player_id), headers)
    assert status == 201, body
    assert body["data"]["attributes"]["percentageAchieved"] == 30

    status, report, _ = server.call("GET", f"/server/v1/players/{urllib.parse.quote(player_id)}", headers=headers)
    assert status == 200, report
    verified = [entry for entry in report["scores"] if entry["category"] == "arena.verified"]
    assert len(verified) == 1 and verified[0]["value"] == 150 and verified[0]["context"] == 42 and verified[0]["rank"] >= 1
    assert [(a["identifier"], a["percentComplete"]) for a in report["achievements"]] == [("arena.first", 30)]


def test_bad_submissions_are_refused_in_apples_error_shape(server, writer):
    player_id, _ = server.player()
    headers = bearer(token(*writer))
    cases = [
        (score_body(player_id, score="12.5"), 400, "request.invalid_parameter", "score"),
        (score_body(player_id, board="arena.nope"), 404, "leaderboard.unknown_category", "arena.nope"),
        (score_body("G:nobody"), 404, "player.unknown", "G:nobody"),
        (score_body(player_id, bundle="com.example.other"), 403, "key.forbidden", "com.example.other"),
        (score_body(player_id, pre_released=False), 403, "key.forbidden", "preReleased"),
        ({"data": {"type": "apps", "attributes": score_body(player_id)["data"]["attributes"]}}, 400, "request.invalid_parameter", "data.type"),
        ({"data": {"type": "gameCenterLeaderboardEntrySubmissions", "attributes": {"score": "1"}}}, 400, "request.malformed_body", ""),
    ]
    for body, status, code, mention in cases:
        got, answer, _ = server.call("POST", SCORES, body, headers)
        assert got == status, (body, answer)
        [error] = answer["errors"]
        assert error["code"] == code and error["status"] == str(status) and mention in error["detail"], answer
    status, answer, _ = server.call("POST", SCORES, headers=headers, raw=b"{not json")
    assert status == 400 and answer["errors"][0]["code"] == "request.malformed_body"
    status, answer, _ = server.call("POST", ACHIEVEMENTS, achievement_body(player_id, percent=101), headers)
    assert status == 400 and "percentageAchieved" in answer["errors"][0]["detail"]


def test_each_permission_is_refused_outside_its_scope(server):
    player_id, _ = server.player()
    scores_only = bearer(token(*server.create_key("scores:write")))
    achievements_only = bearer(token(*server.create_key("achievements:write")))
    reader = bearer(token(*server.create_key("players:read")))
    expectations = [
        (scores_only, "POST", SCORES, score_body(player_id), 201),
        (scores_only, "POST", ACHIEVEMENTS, achievement_body(player_id), 403),
        (scores_only, "GET", f"/server/v1/players/{player_id}", None, 403),
        (achievements_only, "POST", ACHIEVEMENTS, achievement_body(player_id), 201),
        (achievements_only, "POST", SCORES, score_body(player_id), 403),
        (reader, "GET", f"/server/v1/players/{player_id}", None, 200),
        (reader, "POST", SCORES, score_body(player_id), 403),
    ]
    for headers, method, path, body, status in expectations:
        got, answer, _ = server.call(method, path, body, headers)
        assert got == status, (method, path, answer)
        if status == 403:
            text = json.dumps(answer)
            assert "key.forbidden" in text and "permission" in text


def test_tokens_that_cannot_be_trusted_are_refused(server, writer):
    key_id, issuer, pem = writer
    player_id, _ = server.player()
    stranger = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    now = int(time.time())
    refused = {
        "expired": token(key_id, issuer, pem, issued=now - 1300, lifetime=1200),
        "lives longer than 20 minutes": token(key_id, issuer, pem, lifetime=3600),
        "made in the future": token(key_id, issuer, pem, issued=now + 600, lifetime=600),
        "signed by another key": token(key_id, issuer, stranger),
        "of another issuer": token(key_id, str(uuid.uuid4()), pem),
        "of an unknown key": token("NOSUCHKEY1", issuer, pem),
        "for another audience": token(key_id, issuer, pem, audience="somebody-else"),
        "signed with HS256": jwt.encode({"iss": issuer, "iat": now, "exp": now + 600, "aud": "appstoreconnect-v1"}, "a-shared-secret-of-at-least-32-bytes",
                                        algorithm="HS256", headers={"kid": key_id}),
        "unsigned": jwt.encode({"iss": issuer, "iat": now, "exp": now + 600, "aud": "appstoreconnect-v1"}, None, algorithm="none",
                               headers={"kid": key_id}),
        "not a token": "hello",
    }
    for why, value in refused.items():
        status, answer, _ = server.call("POST", SCORES, score_body(player_id), bearer(value))
        assert status == 401, (why, answer)
        assert answer["errors"][0]["code"] == "key.invalid", (why, answer)
    status, answer, _ = server.call("POST", SCORES, score_body(player_id))
    assert status == 401 and answer["errors"][0]["code"] == "key.required"
    scoped = token(key_id, issuer, pem, scope=["GET /server/v1/players/" + player_id])
    status, answer, _ = server.call("POST", SCORES, score_body(player_id), bearer(scoped))
    assert status == 403 and "scope" in answer["errors"][0]["detail"]
    status, _, _ = server.call("GET", "/server/v1/players/" + player_id, headers=bearer(scoped))
    assert status == 200


def test_a_live_player_is_unknown_to_a_sandbox_key_and_a_live_key_writes_live(server):
    live_player, _ = server.player(environment="live")
    sandbox = bearer(token(*server.create_key("scores:write")))
    status, answer, _ = server.call("POST", SCORES, score_body(live_player, pre_released=False), sandbox)
    assert status == 403
    status, answer, _ = server.call("POST", SCORES, score_body(live_player), sandbox)
    assert status == 404 and answer["errors"][0]["code"] == "player.unknown"
    live = bearer(token(*server.create_key("scores:write", environment="live")))
    status, answer, _ = server.call("POST", SCORES, score_body(live_player, pre_released=False), live)
    assert status == 201, answer


def removed_scores(server, player_id):
    """Erases the player's scores through the admin route; how many there were."""
    status, body, _ = server.call("DELETE", f"/admin/v1/games/{GAME}/players/{urllib.parse.quote(player_id)}/scores",
                                  headers=bearer(ADMIN_KEY))
    assert status == 200, body
    return body["removed"]


def test_idempotency_keys_make_each_write_once_in_effect(server, writer):
    player_id, _ = server.player()
    headers = bearer(token(*writer))
    first_key = str(uuid.uuid4())
    answers = []
    for _ in range(3):
        status, body, response_headers = server.call("POST", SCORES, score_body(player_id, "500"), {**headers, "Idempotency-Key": first_key})
        assert status == 201, body
        answers.append((body, response_headers.get("Idempotent-Replayed")))
    assert answers[0][0] == answers[1][0] == answers[2][0]
    assert [replayed for _, replayed in answers] == [None, "true", "true"]
    status, body, _ = server.call("POST", SCORES, score_body(player_id, "501"), {**headers, "Idempotency-Key": first_key})
    assert status == 422 and body["errors"][0]["code"] == "key.idempotency_key_reused"
    status, _, _ = server.call("POST", SCORES, score_body(player_id, "400"), {**headers, "Idempotency-Key": str(uuid.uuid4())})
    assert status == 201
    status, _, _ = server.call("POST", SCORES, score_body(player_id, "300"), headers)
    assert status == 201
    assert removed_scores(server, player_id) == 3

    # A rotated key's successor finds the answers its predecessor was given (they belong to the game and environment).
    key_id, _, _ = writer
    second_key = str(uuid.uuid4())
    status, kept, _ = server.call("POST", ACHIEVEMENTS, achievement_body(player_id, 40), {**headers, "Idempotency-Key": second_key})
    assert status == 201
    status, again, replay_headers = server.call("POST", ACHIEVEMENTS, achievement_body(player_id, 40),
                                                {**headers, "Idempotency-Key": second_key})
    assert again == kept and replay_headers.get("Idempotent-Replayed") == "true"


def test_idempotent_answers_survive_kill_and_restart(server, writer):
    player_id, _ = server.player()
    headers = bearer(token(*writer))
    key = str(uuid.uuid4())
    status, first, _ = server.call("POST", SCORES, score_body(player_id, "77"), {**headers, "Idempotency-Key": key})
    assert status == 201
    server.kill()
    server.start()
    status, again, replay_headers = server.call("POST", SCORES, score_body(player_id, "77"), {**headers, "Idempotency-Key": key})
    assert status == 201 and again == first and replay_headers.get("Idempotent-Replayed") == "true"
    assert removed_scores(server, player_id) == 1


def test_a_server_only_board_refuses_devices_and_ranks_servers(server, writer):
    player_id, session = server.player()
    device = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + session}
    report = lambda board: {"reportID": str(uuid.uuid4()), "scores": [{"category": board, "value": 9, "context": 0}]}
    status, body, _ = server.call("POST", "/v1/scores", report("arena.verified"), device)
    assert status == 403 and body["code"] == "leaderboard.server_only" and "serverOnly" in body["message"]
    status, body, _ = server.call("POST", "/v1/scores", report("arena.wins"), device)
    assert status == 200, body
    status, _, _ = server.call("POST", SCORES, score_body(player_id, "9"), bearer(token(*writer)))
    assert status == 201
    status, page, _ = server.call("POST", "/v1/leaderboards/query", {
        "category": "arena.verified", "playerScope": "global", "timeScope": "allTime", "rangeStart": 1, "rangeLength": 100}, device)
    assert status == 200, page
    assert page["localPlayerScore"]["value"] == 9


def test_rotation_keeps_both_keys_for_the_grace_then_only_the_new_one_and_revocation_stops_a_key(server):
    old_id, issuer, old_pem = server.create_key("players:read")
    player_id, _ = server.player()
    path = f"/server/v1/players/{player_id}"
    pem_path = server.work / "rotated.p8"
    output = server.keys("rotate", old_id, "--grace-hours", str(2 / 3600), "--output", str(pem_path))
    new_id = re.search(r"^key id:\s+(\S+)", output, re.MULTILINE).group(1)
    assert re.search(r"^issuer id:\s+" + re.escape(issuer), output, re.MULTILINE), "a rotated key keeps its issuer"
    new_pem = pem_path.read_text()
    assert server.call("GET", path, headers=bearer(token(old_id, issuer, old_pem)))[0] == 200
    assert server.call("GET", path, headers=bearer(token(new_id, issuer, new_pem)))[0] == 200
    listing = server.keys("list", "--game", GAME)
    assert re.search(re.escape(old_id) + r".*rotated, works until", listing) and re.search(re.escape(new_id) + r".*active", listing)
    time.sleep(3.2)
    status, answer, _ = server.call("GET", path, headers=bearer(token(old_id, issuer, old_pem)))
    assert status == 401 and new_id in answer["message"], answer
    assert server.call("GET", path, headers=bearer(token(new_id, issuer, new_pem)))[0] == 200
    server.keys("revoke", new_id)
    time.sleep(1.2)
    status, answer, _ = server.call("GET", path, headers=bearer(token(new_id, issuer, new_pem)))
    assert status == 401 and "revoked" in answer["message"]
    assert re.search(re.escape(new_id) + r".*revoked", server.keys("list"))


def test_the_command_lines_token_is_a_standard_es256_jwt(server):
    key_id, issuer, pem = server.create_key("players:read")
    pem_path = server.work / "cli.p8"
    pem_path.write_text(pem)
    result = subprocess.run([server.binary, "keys", "token", "--key-id", key_id, "--issuer", issuer, "--private-key", str(pem_path),
                             "--lifetime", "300"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    value = result.stdout.strip()
    public = serialization.load_pem_private_key(pem.encode(), password=None).public_key()
    claims = jwt.decode(value, public, algorithms=["ES256"], audience="appstoreconnect-v1", issuer=issuer)
    assert claims["exp"] - claims["iat"] == 300
    assert jwt.get_unverified_header(value)["kid"] == key_id
    player_id, _ = server.player()
    assert server.call("GET", f"/server/v1/players/{player_id}", headers=bearer(value))[0] == 200


def test_unknown_keys_and_games_are_refused_by_the_admin_routes(server):
    status, body, _ = server.call("POST", "/admin/v1/keys/NOSUCHKEY1/rotate", {}, bearer(ADMIN_KEY))
    assert status == 404 and body["code"] == "key.unknown"
    status, body, _ = server.call("POST", "/admin/v1/keys", {"bundleID": "com.example.nope", "environment": "sandbox",
                                                             "permissions": ["scores:write"]}, bearer(ADMIN_KEY))
    assert status == 404
    status, body, _ = server.call("POST", "/admin/v1/keys", {"bundleID": GAME, "environment": "sandbox", "permissions": []},
                                  bearer(ADMIN_KEY))
    assert status == 400 and "permissions" in body["message"]
    status, body, _ = server.call("POST", "/admin/v1/keys", {"bundleID": GAME, "environment": "sandbox", "permissions": ["root"]},
                                  bearer(ADMIN_KEY))
    assert status == 400
    status, body, _ = server.call("GET", "/admin/v1/keys")
    assert status == 401


@pytest.mark.parametrize("engine", ["sqlite"])
def test_each_key_is_rate_limited_with_retry_after(engine):
    limited = Server(engine, extra=["--rate-limit", "server-requests=3/60"])
    try:
        first = limited.create_key("players:read")
        second = limited.create_key("players:read")
        player_id, _ = limited.player()
        path = f"/server/v1/players/{player_id}"
        statuses = [limited.call("GET", path, headers=bearer(token(*first)))[0] for _ in range(3)]
        assert statuses == [200, 200, 200]
        status, body, headers = limited.call("GET", path, headers=bearer(token(*first)))
        assert status == 429 and int(headers["Retry-After"]) >= 1 and "server key" in body["message"]
        status, body, headers = limited.call("POST", SCORES, score_body(player_id), bearer(token(*first)))
        assert status == 429 and body["errors"][0]["code"] == "request.rate_limited" and headers["Retry-After"]
        assert limited.call("GET", path, headers=bearer(token(*second)))[0] == 200, "each key has its own limit"
    finally:
        limited.stop()
