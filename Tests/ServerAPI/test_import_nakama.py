"""`gamecenter import --nakama` against the real binary and a PostgreSQL database made with Nakama's own DDL
(fixtures/nakama_schema.sql, copied from heroiclabs/nakama's migrations): users with bcrypt passwords as Nakama stores
them ($2a$ as Go writes them, $2b$, $2y$), friends, a pending invite, a block, a disabled user, leaderboards sorted
both ways with records, a board that resets, a tournament, and storage objects. The importer converts them into a fresh
database of each engine; a server on it, with the manifest built from the boards the importer prints, answers through
the API: a Nakama user signs in with their old password, friends and the pending request, ranks and values on both
boards (and a new report ranks among them), and the save's bytes. A second run imports nothing twice. Player ids are
checked against their documented derivation, computed here with hashlib.

Skipped when GAMECENTER_TEST_POSTGRES_URL is unset (scripts/test.sh sets it).
"""

import base64
import hashlib
import json
import os
import subprocess
import tempfile
import urllib.request
import uuid
from pathlib import Path

import pytest

from test_archive import empty_database
from test_server_keys import Server, engines

FIXTURES = Path(__file__).parent / "fixtures"
BUNDLE = "com.example.nakama"
HEADERS = {"X-GameCenter-Bundle-ID": BUNDLE, "X-GameCenter-Environment": "sandbox"}

ALICE, BOB, CAROL, DAVE, UPPER = (str(uuid.uuid4()) for _ in range(5))
# bcrypt hashes of the passwords below, made with libxcrypt's crypt(3) at cost 4: $2a$ (what Go's bcrypt, and so
# Nakama, writes), $2b$ and $2y$.
PASSWORDS = {
    "alice-old-password": "$2a$04$W4I4JpvzfBrAqsWUzKNFtOZ7AWnkTidOvVCoXDAz3jQj4fNpQOvOC",
    "bob-old-password": "$2b$04$SStG6m1T9xrUpZOFeFrf2uBfb9DEIBoO4nvhf5ZN5g5oMT0Fmmfp6",
    "upper-old-password": "$2y$04$PM8aZqxmPk3DogOCJKNGgOLQ/6lcBUGlj2/70MuBIRWp2ydancTLO",
}
SAVE = {"level": 3, "coins": 120, "name": "Ålice's \"farm\""}

pytestmark = pytest.mark.skipif(not os.environ.get("GAMECENTER_TEST_POSTGRES_URL"), reason="needs GAMECENTER_TEST_POSTGRES_URL")


def player_id(nakama_user, environment="sandbox"):
    """The documented derivation: G: and the first 15 bytes of SHA-256("nakama user ENV UUID"), base64url."""
    digest = hashlib.sha256(f"nakama user {environment} {nakama_user}".encode()).digest()[:15]
    return "G:" + base64.urlsafe_b64encode(digest).decode()


def psql(url, sql=None, file=None):
    arguments = ["psql", url, "-q", "-v", "ON_ERROR_STOP=1"] + (["-f", str(file)] if file else ["-c", sql])
    subprocess.run(arguments, check=True, capture_output=True, text=True)


def nakama_database():
    """A database with Nakama's schema and the fixture rows; its URL."""
    base = os.environ["GAMECENTER_TEST_POSTGRES_URL"]
    name = "nakama_" + uuid.uuid4().hex[:12]
    psql(base, f"CREATE DATABASE {name}")
    url = base.rsplit("/", 1)[0] + "/" + name
    psql(url, file=FIXTURES / "nakama_schema.sql")
    hashes = list(PASSWORDS.values())
    value = json.dumps(SAVE).replace("'", "''")
    psql(url, f"""
        INSERT INTO users (id, username, display_name, password, create_time, update_time) VALUES
          ('{ALICE}', 'alice', 'Alice the Great', convert_to('{hashes[0]}', 'UTF8'), '2024-01-02 03:04:05+00', '2024-02-01 00:00:00+00'),
          ('{BOB}', 'bob', NULL, convert_to('{hashes[1]}', 'UTF8'), '2024-01-03 00:00:00+00', '2024-02-02 00:00:00+00'),
          ('{CAROL}', 'carol', 'Carol', NULL, '2024-01-04 00:00:00+00', '2024-02-03 00:00:00+00'),
          ('{UPPER}', 'ALICE', '', convert_to('{hashes[2]}', 'UTF8'), '2024-01-05 00:00:00+00', '2024-02-04 00:00:00+00');
        INSERT INTO users (id, username, password, disable_time) VALUES ('{DAVE}', 'dave', convert_to('{hashes[1]}', 'UTF8'), now());
        INSERT INTO user_edge (source_id, destination_id, state, position) VALUES
          ('{ALICE}', '{BOB}', 0, 1), ('{BOB}', '{ALICE}', 0, 1),
          ('{CAROL}', '{ALICE}', 1, 2), ('{ALICE}', '{CAROL}', 2, 2),
          ('{BOB}', '{CAROL}', 3, 3),
          ('{ALICE}', '{DAVE}', 0, 4), ('{DAVE}', '{ALICE}', 0, 4);
        INSERT INTO leaderboard (id, sort_order, operator, reset_schedule, title, description, duration) VALUES
          ('level1', 1, 0, NULL, '', '', 0),
          ('speedrun', 0, 0, NULL, 'Fastest run', 'Lower is better', 0),
          ('weekly', 1, 2, '0 0 * * 1', '', '', 0),
          ('cup', 1, 0, '0 12 * * *', 'The cup', '', 3600);
        INSERT INTO leaderboard_record (leaderboard_id, owner_id, username, score, subscore, update_time, expiry_time) VALUES
          ('level1', '{ALICE}', 'alice', 500, 7, '2024-03-01 00:00:00+00', '1970-01-01 00:00:00+00'),
          ('level1', '{BOB}', 'bob', 700, 0, '2024-03-02 00:00:00+00', '1970-01-01 00:00:00+00'),
          ('level1', '{CAROL}', 'carol', 300, 0, '2024-03-03 00:00:00+00', '1970-01-01 00:00:00+00'),
          ('level1', '{DAVE}', 'dave', 999, 0, '2024-03-03 00:00:00+00', '1970-01-01 00:00:00+00'),
          ('speedrun', '{ALICE}', 'alice', 4200, 0, '2024-03-04 00:00:00+00', '1970-01-01 00:00:00+00'),
          ('speedrun', '{BOB}', 'bob', 3900, 0, '2024-03-05 00:00:00+00', '1970-01-01 00:00:00+00'),
          ('weekly', '{ALICE}', 'alice', 12, 0, now(), now() + interval '3 days'),
          ('cup', '{BOB}', 'bob', 50, 0, now(), now() + interval '1 hour');
        INSERT INTO storage (collection, key, user_id, value, version, update_time) VALUES
          ('saves', 'slot1', '{ALICE}', '{value}', md5('{value}'), '2024-03-06 00:00:00+00'),
          ('config', 'global', '00000000-0000-0000-0000-000000000000', '{{"motd": "hi"}}', 'x', now());
    """)
    return url


def gamecenter(*arguments):
    result = subprocess.run([os.environ["GAMECENTER_BIN"], *arguments], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout
    return result.stdout


def sign_in(server, account, password):
    return server.call("POST", "/v1/sessions", {"account": account, "password": password}, HEADERS)


def device(token):
    return {**HEADERS, "Authorization": "Bearer " + token}


def ranked(server, token, board):
    status, page, _ = server.call("POST", "/v1/leaderboards/query", {
        "category": board, "playerScope": "global", "timeScope": "allTime", "rangeStart": 1, "rangeLength": 100}, device(token))
    assert status == 200, page
    return [(entry["playerID"], entry["value"], entry["rank"]) for entry in page["scores"]]


@pytest.fixture(scope="module", params=engines())
def imported(request):
    """The Nakama database imported once into a fresh database of each engine, and a server on it with the printed
    boards."""
    work = Path(tempfile.mkdtemp(prefix="import-nakama-"))
    url = nakama_database()
    database = empty_database(request.param, work)
    archive = work / "archive"
    output = gamecenter("import", "--database", database, "--nakama", url, "--game", BUNDLE, "--environment", "sandbox",
                        "--keep-archive", str(archive))
    snippet = output[output.index("leaderboards:"):]
    server = Server(request.param, database=database)
    server.stop()
    (server.work / "games" / "nakama.yaml").write_text(f"bundleID: {BUNDLE}\nname: Nakama game\ndefaultLocale: en\n{snippet}")
    server.start()
    server.nakama = url
    server.archive = archive
    server.output = output
    yield server
    server.stop()


def test_the_converted_archive_and_what_was_left_out(imported):
    manifest = json.loads((imported.archive / "manifest.json").read_text())
    assert (manifest["format"], manifest["scope"]) == ("opengamekit-archive", "server")
    counts = {f["name"]: f["records"] for f in manifest["files"]}
    assert counts == {"accounts.jsonl": 4, "played_games.jsonl": 4, "friendships.jsonl": 2, "friend_requests.jsonl": 1,
                      "scores.jsonl": 5, "best_scores.jsonl": 5, "saved_games.jsonl": 1, "saved_game_versions.jsonl": 1,
                      "saved_game_chunks.jsonl": 1}
    for entry in manifest["files"]:
        assert hashlib.sha256((imported.archive / entry["name"]).read_bytes()).hexdigest() == entry["sha256"]
    accounts = {row["player_id"]: row for row in map(json.loads, (imported.archive / "accounts.jsonl").read_text().splitlines())}
    assert set(accounts) == {player_id(u) for u in (ALICE, BOB, CAROL, UPPER)}, "the disabled user is left out"
    assert accounts[player_id(ALICE)]["alias"] == "Alice the Great" and accounts[player_id(BOB)]["alias"] == "bob"
    assert accounts[player_id(UPPER)]["account_name"] == "alice-2", "ALICE and alice differ on Nakama only by case"
    assert accounts[player_id(UPPER)]["password_hash"].startswith("$2b$"), "$2y$ is stored as the same algorithm's $2b$"
    output = imported.output
    for line in ("disabled (banned) users, with all of theirs: 1", "blocked users (state 3 edges): 1",
                 "leaderboard records of a period that ends (boards with a reset schedule): 1",
                 "tournament records, and records of boards whose id is not a category: 1", "storage objects of the system user: 1",
                 "accounts without a password (support gives them one in the console): 1"):
        assert line in output, output
    assert 'recurring: { cron: "0 0 * * 1" }' in output and "operator was 'increment'" in output
    assert "# Nakama's \"cup\" is a tournament" in output


def test_a_nakama_user_signs_in_with_their_old_password(imported):
    status, session, _ = sign_in(imported, "alice", "alice-old-password")
    assert status == 200, session
    assert session["player"]["playerID"] == player_id(ALICE)
    assert sign_in(imported, "Alice", "alice-old-password")[0] == 200, "account names are matched lower-cased"
    assert sign_in(imported, "bob", "bob-old-password")[0] == 200
    assert sign_in(imported, "alice-2", "upper-old-password")[0] == 200
    assert sign_in(imported, "alice", "bob-old-password")[0] == 401
    assert sign_in(imported, "carol", "")[0] in (400, 401), "a device-only user has no password to sign in with"
    assert sign_in(imported, "dave", "bob-old-password")[0] == 401, "a disabled user was not imported"


def test_friends_and_the_pending_request(imported):
    _, alice, _ = sign_in(imported, "alice", "alice-old-password")
    _, bob, _ = sign_in(imported, "bob", "bob-old-password")
    status, friends, _ = imported.call("GET", "/v1/friends", headers=device(alice["token"]))
    assert status == 200 and friends["playerIDs"] == [player_id(BOB)], friends
    status, friends, _ = imported.call("GET", "/v1/friends", headers=device(bob["token"]))
    assert friends["playerIDs"] == [player_id(ALICE)]
    status, requests, _ = imported.call("GET", "/v1/friend-requests", headers=device(alice["token"]))
    assert status == 200
    assert [(r["from"], r["fromAlias"]) for r in requests["requests"]] == [(player_id(CAROL), "Carol")]
    status, _, _ = imported.call("POST", f"/v1/friend-requests/{requests['requests'][0]['requestID']}/accept", headers=device(alice["token"]))
    assert status in (200, 204)
    _, friends, _ = imported.call("GET", "/v1/friends", headers=device(alice["token"]))
    assert sorted(friends["playerIDs"]) == sorted([player_id(BOB), player_id(CAROL)])


def test_ranks_and_values_on_both_boards(imported):
    _, alice, _ = sign_in(imported, "alice", "alice-old-password")
    assert ranked(imported, alice["token"], "level1") == [(player_id(BOB), 700, 1), (player_id(ALICE), 500, 2), (player_id(CAROL), 300, 3)]
    assert ranked(imported, alice["token"], "speedrun") == [(player_id(BOB), 3900, 1), (player_id(ALICE), 4200, 2)], "ascending"
    status, boards, _ = imported.call("GET", "/v1/leaderboards", headers=device(alice["token"]))
    assert {b["category"]: b["title"] for b in boards["leaderboards"]} == {"level1": "level1", "speedrun": "Fastest run", "weekly": "weekly"}
    # A new report ranks against the imported ones.
    status, body, _ = imported.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": "speedrun", "value": 3000, "context": 0}]}, device(alice["token"]))
    assert status == 200, body
    assert ranked(imported, alice["token"], "speedrun") == [(player_id(ALICE), 3000, 1), (player_id(BOB), 3900, 2)]


def test_the_save_holds_the_storage_objects_json(imported):
    _, alice, _ = sign_in(imported, "alice", "alice-old-password")
    status, saves, _ = imported.call("GET", "/v1/saved-games", headers=device(alice["token"]))
    assert status == 200
    [save] = saves["saves"]
    assert (save["name"], save["deviceName"]) == ("saves/slot1", "Nakama")
    request = urllib.request.Request(f"{imported.url}/v1/saved-games/versions/{save['versionID']}/chunks/0", headers=device(alice["token"]))
    data = urllib.request.urlopen(request, timeout=10).read()
    assert json.loads(data) == SAVE
    assert (len(data), hashlib.sha256(data).hexdigest()) == (save["size"], save["sha256"])


def test_running_it_again_imports_nothing_twice(imported):
    imported.stop()
    try:
        again = gamecenter("import", "--database", imported.database, "--nakama", imported.nakama, "--game", BUNDLE, "--environment", "sandbox")
        assert "scores already imported by an earlier run: 5" in again, again
        folder = imported.work / f"export-{uuid.uuid4().hex[:6]}"
        gamecenter("export", "--database", imported.database, str(folder))
        counts = {f["name"]: f["records"] for f in json.loads((folder / "manifest.json").read_text())["files"]}
        # One score reported through the API since: six, and still four accounts and one save.
        assert (counts["accounts.jsonl"], counts["scores.jsonl"], counts["best_scores.jsonl"], counts["saved_game_versions.jsonl"]) == (4, 6, 5, 1)
        assert "scores.jsonl" not in again.split("converted from Nakama:")[1].split("not carried")[0], again
    finally:
        imported.start()
