"""Export, import and the player's data rights, against the real `gamecenter` binary: a server's data made through the API
(accounts, friends and a pending request, scores on a classic and a recurring board, achievements, a real-time match and
its invitation, a turn-based match, a save of two chunks, a hidden player, a server key and audit entries) is exported
with `gamecenter export`, imported into an empty database on the *other* engine and exported again — every file the same
bytes — and a server on the imported data answers ranks, friends, achievements and saves as the first did; a deleted
account stays deleted when an older archive is imported; a damaged archive is refused; a player's own archive (admin
route and the app's "Download my data") holds exactly their records; and `serve --read-only` reads, signs in and
exports but writes nothing. Python's `tarfile` and `hashlib` check what the server packs.
"""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

from test_server_keys import ADMIN_KEY, GAME, Server, bearer, engines
from test_webhooks import Channel, befriend, call, invite_and_accept, save, turn
from test_moderation import ranked


def other_engine(engine):
    return "postgres" if engine == "sqlite" and "postgres" in engines() else ("sqlite" if engine == "postgres" else "sqlite")


def empty_database(engine, work):
    if engine == "postgres":
        base = os.environ["GAMECENTER_TEST_POSTGRES_URL"]
        name = "archive_" + uuid.uuid4().hex[:12]
        subprocess.run(["psql", base, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        return base.rsplit("/", 1)[0] + "/" + name
    return f"sqlite:{work}/imported-{uuid.uuid4().hex[:6]}.sqlite"


def gamecenter(*arguments, ok=True):
    result = subprocess.run([os.environ["GAMECENTER_BIN"], *arguments], capture_output=True, text=True, timeout=300)
    if ok:
        assert result.returncode == 0, result.stderr[-3000:] + result.stdout
    return result


def export(database, folder, *scope):
    gamecenter("export", "--database", database, *scope, str(folder))
    return json.loads((folder / "manifest.json").read_text())


def jsonl(folder, name):
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def player(server, alias):
    """A new account signed in on the arena: (player id, session token, account name)."""
    account = "p" + uuid.uuid4().hex[:10]
    headers = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox"}
    status, body, _ = server.call("POST", "/v1/accounts", {"account": account, "password": "password-1", "alias": alias}, headers)
    assert status in (200, 201), body
    status, session, _ = server.call("POST", "/v1/sessions", {"account": account, "password": "password-1"}, headers)
    assert status == 200, session
    return body["player"]["playerID"], session["token"], account


def sign_in(server, account):
    headers = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox"}
    return server.call("POST", "/v1/sessions", {"account": account, "password": "password-1"}, headers)


def report(server, session, value, board="arena.wins"):
    call(server, session, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [{"category": board, "value": value, "context": 3}]})


def seed(server):
    """Every kind of record, through the API; the players by name."""
    people = {name: player(server, name) for name in ("Ann", "Bob", "Cat", "Dan")}
    (ann_id, ann, _), (bob_id, bob, _), (cat_id, cat, _), (dan_id, dan, _) = (people[n] for n in ("Ann", "Bob", "Cat", "Dan"))
    befriend(server, ann, bob_id, bob)
    befriend(server, ann, dan_id, dan)
    call(server, cat, "POST", "/v1/friend-requests", {"playerIDs": [ann_id], "message": "hi \"Ann\" \\ ünïcødé 🎲 </b>\n"})
    for session, value in ((ann, 50), (ann, 70), (bob, 60), (cat, 40), (dan, 90)):
        report(server, session, value)
    report(server, ann, 5, board="arena.daily")
    # A board that needs the studio's verifier (none answers: the score waits in quarantine, its attachment kept).
    call(server, bob, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": "arena.checked", "value": 33, "context": 0, "details": [1, -2, 3], "attachment": "AAECAwQF"}]})
    report(server, dan, 8, board="arena.daily")
    for session, percent in ((ann, 100), (bob, 25.5), (dan, 100)):
        call(server, session, "POST", "/v1/achievements", {"reportID": str(uuid.uuid4()), "achievements": [
            {"identifier": "arena.first", "percentComplete": percent}]})
    find = {"minPlayers": 2, "maxPlayers": 2, "playerGroup": 77, "playersToInvite": []}
    call(server, ann, "POST", "/v1/turn-matches", find)
    match = call(server, bob, "POST", "/v1/turn-matches", find)
    match = call(server, ann, "GET", f"/v1/turn-matches/{match['matchID']}")
    turn(server, ann, match, "endTurn", nextParticipants=[1], matchData="AAECAwQ=")
    limits = call(server, ann, "GET", "/v1/saved-games")["limits"]
    save(server, ann, "slot 1", (bytes(range(256)) * (limits["chunkBytes"] // 256 + 2))[:limits["chunkBytes"] + 300], "phone")
    channels = [Channel(server, ann), Channel(server, bob)]
    try:
        invite_and_accept(server, ann, bob_id, bob)
    finally:
        for channel in channels:
            channel.close()
    status, _, _ = server.call("PUT", f"/admin/v1/games/{GAME}/players/{urllib.parse.quote(cat_id)}/hidden", headers=bearer(ADMIN_KEY))
    assert status == 200
    server.create_key("players:read")
    return people


def answers(server, people):
    """What the API answers Ann and Bob: ranks, friends, achievements, saves."""
    _, ann, _ = people["Ann"]
    _, bob, _ = people["Bob"]
    return {
        "ranks": ranked(server, ann),
        "daily": ranked(server, ann, board="arena.daily"),
        "friends": sorted(call(server, ann, "GET", "/v1/friends")["playerIDs"]),
        "requests": sorted(r["requestID"] for r in call(server, ann, "GET", "/v1/friend-requests")["requests"]),
        "achievements": [(a["identifier"], a["percentComplete"]) for a in call(server, bob, "GET", "/v1/achievements")["achievements"]],
        "saves": [(s["name"], s["versionID"], s["sha256"]) for s in call(server, ann, "GET", "/v1/saved-games")["saves"]],
        "turns": sorted(m["matchID"] for m in call(server, bob, "GET", "/v1/turn-matches")["matches"]),
    }


@pytest.fixture(scope="module", params=engines())
def source(request):
    server = Server(request.param)
    server.engine = request.param
    server.people = seed(server)
    yield server
    server.stop()


def test_an_archive_moves_to_the_other_engine_byte_for_byte_and_a_deleted_account_never_comes_back(source):
    work = source.work
    people = source.people
    dan_id, dan, dan_account = people["Dan"]
    older_folder = work / f"older-{uuid.uuid4().hex[:6]}"
    older = export(source.database, older_folder)
    assert {f["name"]: f["records"] for f in older["files"]}["accounts.jsonl"] >= 4

    status, _, _ = source.call("DELETE", f"/admin/v1/players/{urllib.parse.quote(dan_id)}", headers=bearer(ADMIN_KEY))
    assert status == 204
    status, body, _ = source.call("GET", "/v1/friends", headers={"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox",
                                                                 "Authorization": "Bearer " + dan})
    assert status == 401, body
    assert sign_in(source, dan_account)[0] == 401, "a deleted account cannot sign in"
    assert dan_id not in [p for p, _ in ranked(source, people["Ann"][1])]
    status, body, _ = source.call("DELETE", f"/admin/v1/players/{urllib.parse.quote(dan_id)}", headers=bearer(ADMIN_KEY))
    assert status == 404, body
    expected = answers(source, people)

    newer_folder = work / f"newer-{uuid.uuid4().hex[:6]}"
    newer = export(source.database, newer_folder)
    counts = {f["name"]: f["records"] for f in newer["files"]}
    for name in ("accounts.jsonl", "friendships.jsonl", "friend_requests.jsonl", "scores.jsonl", "best_scores.jsonl",
                 "occurrence_best_scores.jsonl", "tournament_entries.jsonl", "achievements.jsonl", "matches.jsonl", "match_members.jsonl",
                 "invitations.jsonl", "turn_matches.jsonl", "turn_match_members.jsonl", "turn_match_data.jsonl", "saved_games.jsonl",
                 "saved_game_versions.jsonl", "hidden_players.jsonl", "server_keys.jsonl", "audit_log.jsonl", "deleted_accounts.jsonl",
                 "player_events.jsonl", "played_games.jsonl", "score_submissions.jsonl", "applied_reports.jsonl"):
        assert counts[name] > 0, f"{name} is empty: the seed should have made some"
    assert counts["saved_game_chunks.jsonl"] == 2
    assert [row["player_id"] for row in jsonl(newer_folder, "deleted_accounts.jsonl")] == [dan_id]
    assert set(jsonl(newer_folder, "deleted_accounts.jsonl")[0]) == {"player_id", "environment", "deleted_at"}, "no personal data"
    everything = {name: (newer_folder / name).read_text() for name in counts}
    assert not [name for name, text in everything.items() if dan_account in text], "the deleted account's name is nowhere"
    for name in ("accounts.jsonl", "player_events.jsonl", "friendships.jsonl", "friend_requests.jsonl", "scores.jsonl", "best_scores.jsonl",
                 "achievements.jsonl", "played_games.jsonl", "tournament_entries.jsonl", "occurrence_best_scores.jsonl"):
        assert dan_id not in everything[name], f"{name} still holds the deleted player"
    for entry in newer["files"]:
        assert hashlib.sha256((newer_folder / entry["name"]).read_bytes()).hexdigest() == entry["sha256"]
    request = [r for r in jsonl(newer_folder, "friend_requests.jsonl") if r["message"]]
    assert request[0]["message"] == "hi \"Ann\" \\ ünïcødé 🎲 </b>\n", "text survives JSON escaping"

    target_engine = other_engine(source.engine)
    target_database = empty_database(target_engine, work)
    output = gamecenter("import", "--database", target_database, str(newer_folder)).stdout
    assert "scores.jsonl: " in output
    again_folder = work / f"again-{uuid.uuid4().hex[:6]}"
    again = export(target_database, again_folder)
    assert [(f["name"], f["records"], f["sha256"]) for f in again["files"]] == [(f["name"], f["records"], f["sha256"]) for f in newer["files"]]
    for entry in newer["files"]:
        assert (again_folder / entry["name"]).read_bytes() == (newer_folder / entry["name"]).read_bytes(), entry["name"]

    # The older archive still holds Dan: imported over the newer data, his records are skipped and nothing changes.
    output = gamecenter("import", "--database", target_database, str(older_folder)).stdout
    assert "of deleted accounts skipped" in output
    third_folder = work / f"third-{uuid.uuid4().hex[:6]}"
    third = export(target_database, third_folder)
    assert [(f["name"], f["sha256"]) for f in third["files"]] == [(f["name"], f["sha256"]) for f in newer["files"]]

    # A server restored from the older archive takes the newer one: Dan is deleted there too.
    restored_database = empty_database(target_engine, work)
    gamecenter("import", "--database", restored_database, str(older_folder))
    before = work / f"restored-{uuid.uuid4().hex[:6]}"
    export(restored_database, before)
    assert dan_account in (before / "accounts.jsonl").read_text()
    gamecenter("import", "--database", restored_database, str(newer_folder))
    after = work / f"restored-again-{uuid.uuid4().hex[:6]}"
    export(restored_database, after)
    assert dan_account not in (after / "accounts.jsonl").read_text()
    assert dan_id not in (after / "scores.jsonl").read_text() + (after / "friendships.jsonl").read_text()
    assert dan_id in (after / "deleted_accounts.jsonl").read_text()

    imported = Server(target_engine, database=target_database)
    try:
        assert sign_in(imported, dan_account)[0] == 401
        moved = {}
        for name in ("Ann", "Bob"):
            player_id, _, account = people[name]
            status, session, _ = sign_in(imported, account)
            assert status == 200, f"{name}'s password hash moved with the account"
            moved[name] = (player_id, session["token"], account)
        assert answers(imported, moved) == expected
    finally:
        imported.stop()


def test_a_damaged_or_foreign_archive_is_refused_with_what_is_wrong(source):
    work = source.work
    folder = work / f"damaged-{uuid.uuid4().hex[:6]}"
    export(source.database, folder)
    target = empty_database("sqlite", work)
    scores = folder / "scores.jsonl"
    text = scores.read_text()
    scores.write_text(text.replace('"value":', '"value": ', 1))
    result = gamecenter("import", "--database", target, str(folder), ok=False)
    assert result.returncode == 1 and "scores.jsonl is damaged" in result.stderr, result.stderr
    scores.write_text(text)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["formatVersion"] = 99
    (folder / "manifest.json").write_text(json.dumps(manifest))
    result = gamecenter("import", "--database", target, str(folder), ok=False)
    assert result.returncode == 1 and "format version 99 is newer" in result.stderr, result.stderr
    result = gamecenter("import", "--database", target, str(work / "no-such-folder"), ok=False)
    assert result.returncode == 1 and "not an archive" in result.stderr
    # A hand-made line that breaks the format names its file, line and field.
    manifest["formatVersion"] = 1
    bad = '{"player_id":"G:x","seq":"one","kind":"k","payload":"{}","created_at":1}\n'
    (folder / "player_events.jsonl").write_text(bad)
    for entry in manifest["files"]:
        if entry["name"] == "player_events.jsonl":
            entry.update(records=1, sha256=hashlib.sha256(bad.encode()).hexdigest())
    (folder / "manifest.json").write_text(json.dumps(manifest))
    result = gamecenter("import", "--database", target, str(folder), ok=False)
    assert result.returncode == 1 and "player_events.jsonl line 1: seq must be an integer" in result.stderr, result.stderr


def test_an_archive_edited_by_hand_imports_as_the_original(source):
    """Keys in another order, spaces, a record twice: the import reads what JSON means and keeps a key's first record,
    on both engines (PostgreSQL copies into an empty table straight, and falls back for the batch with the twin)."""
    work = source.work
    original, edited, again = (work / f"{name}-{uuid.uuid4().hex[:6]}" for name in ("original", "edited", "again"))
    manifest = export(source.database, original)
    shutil.copytree(original, edited)
    lines = (edited / "scores.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    reordered = json.dumps(dict(reversed(list(first.items()))), separators=(", ", " : ")) + "\n"
    changed = [reordered, lines[0], *lines[1:], lines[-1]]
    (edited / "scores.jsonl").write_text("".join(changed))
    for entry in manifest["files"]:
        if entry["name"] == "scores.jsonl":
            entry.update(records=len(changed), sha256=hashlib.sha256("".join(changed).encode()).hexdigest())
    (edited / "manifest.json").write_text(json.dumps(manifest))
    target = empty_database(source.engine, work)
    gamecenter("import", "--database", target, str(edited))
    exported = export(target, again)
    original_files = json.loads((original / "manifest.json").read_text())["files"]
    assert [(f["name"], f["records"], f["sha256"]) for f in exported["files"]] == [(f["name"], f["records"], f["sha256"]) for f in original_files]
    # A score of a player the archive does not hold is refused, saying which.
    stranger = dict(first, score_id=first["score_id"] + 10**9, player_id="G:AAAAAAAAAAAAAAAAAAAA")
    changed.append(json.dumps(stranger, separators=(",", ":")) + "\n")
    (edited / "scores.jsonl").write_text("".join(changed))
    for entry in manifest["files"]:
        if entry["name"] == "scores.jsonl":
            entry.update(records=len(changed), sha256=hashlib.sha256("".join(changed).encode()).hexdigest())
    (edited / "manifest.json").write_text(json.dumps(manifest))
    result = gamecenter("import", "--database", empty_database(source.engine, work), str(edited), ok=False)
    assert result.returncode == 1 and "scores.jsonl has a record referring to one that neither the archive nor this server holds" in result.stderr
    assert source.engine == "sqlite" or "G:AAAAAAAAAAAAAAAAAAAA" in result.stderr, result.stderr[-2000:]


def test_a_packed_archive_and_a_games_archive(source):
    work = source.work
    packed = work / f"server-{uuid.uuid4().hex[:6]}.tar.zst"
    gamecenter("export", "--database", source.database, str(packed))
    names = subprocess.run(["tar", "--zstd", "-tf", str(packed)], capture_output=True, text=True, check=True).stdout.split()
    assert "./manifest.json" in names and "./scores.jsonl" in names
    target = empty_database("sqlite", work)
    gamecenter("import", "--database", target, str(packed))
    game_folder = work / f"game-{uuid.uuid4().hex[:6]}"
    manifest = export(source.database, game_folder, "--game", GAME)
    assert manifest["scope"] == "game" and manifest["bundleID"] == GAME
    names = [f["name"] for f in manifest["files"]]
    assert "player_events.jsonl" not in names, "players' event logs span games: not in a game's archive"
    assert {row["bundle_id"] for row in jsonl(game_folder, "scores.jsonl")} == {GAME}
    request = urllib.request.Request(f"{source.url}/admin/v1/games/{GAME}/archive", headers=bearer(ADMIN_KEY))
    with urllib.request.urlopen(request, timeout=60) as response:
        downloaded = read_tar(response.read())
    assert json.loads(downloaded["manifest.json"])["scope"] == "game"
    assert downloaded["scores.jsonl"] == (game_folder / "scores.jsonl").read_bytes(), "the admin route's archive is the command line's"
    assert source.call("GET", "/admin/v1/games/com.example.none/archive", headers=bearer(ADMIN_KEY))[0] == 404
    request = urllib.request.Request(f"{source.url}/admin/v1/archive", headers=bearer(ADMIN_KEY))
    with urllib.request.urlopen(request, timeout=60) as response:
        assert json.loads(read_tar(response.read())["manifest.json"])["scope"] == "server"
    other_folder = work / f"other-{uuid.uuid4().hex[:6]}"
    other = export(source.database, other_folder, "--game", "com.example.other")
    assert {f["name"]: f["records"] for f in other["files"]}["accounts.jsonl"] == 0, "nobody played the other game"


def test_a_players_archive_holds_their_records_as_the_api_shows_them(source):
    ann_id, ann, ann_account = source.people["Ann"]
    request = urllib.request.Request(f"{source.url}/admin/v1/players/{urllib.parse.quote(ann_id)}/archive", headers=bearer(ADMIN_KEY))
    with urllib.request.urlopen(request, timeout=30) as response:
        status, content_type, archive = response.status, response.headers["Content-Type"], response.read()
    assert status == 200 and content_type == "application/x-tar"
    files = read_tar(archive)
    manifest = json.loads(files["manifest.json"])
    assert manifest["scope"] == "player" and manifest["playerID"] == ann_id
    for entry in manifest["files"]:
        assert hashlib.sha256(files[entry["name"]]).hexdigest() == entry["sha256"], entry["name"]
    rows = {name: [json.loads(line) for line in data.decode().splitlines()] for name, data in files.items() if name.endswith(".jsonl")}
    assert [a["player_id"] for a in rows["accounts.jsonl"]] == [ann_id] and rows["accounts.jsonl"][0]["alias"] == "Ann"
    shown = call(source, ann, "GET", "/v1/friends")["playerIDs"]
    assert sorted(f["friend_id"] for f in rows["friendships.jsonl"] if f["player_id"] == ann_id) == sorted(shown)
    assert sorted(s["value"] for s in rows["scores.jsonl"] if s["category"] == "arena.wins") == [50, 70]
    assert {s["player_id"] for s in rows["scores.jsonl"]} == {ann_id}, "only her own scores"
    assert [(a["identifier"], a["percent"]) for a in rows["achievements.jsonl"]] == [
        (a["identifier"], a["percentComplete"]) for a in call(source, ann, "GET", "/v1/achievements")["achievements"]]
    assert len(rows["saved_game_chunks.jsonl"]) == 2 and rows["saved_game_versions.jsonl"][0]["player_id"] == ann_id
    status, body, _ = source.call("GET", "/admin/v1/players/G:no-such-player/archive", headers=bearer(ADMIN_KEY))
    assert status == 404, body

    # The same from the Game Center app's account page, signed in as Ann.
    opener = web_sign_in(source, ann_account)
    page = opener.open(source.url + "/account", timeout=10).read().decode()
    assert "Download my data" in page
    csrf = re.search(r'action="/account/data">\s*<input type="hidden" name="csrf" value="([^"]+)"', page).group(1)
    with opener.open(source.url + "/account/data", data=urllib.parse.urlencode({"csrf": csrf}).encode(), timeout=30) as response:
        assert response.headers["Content-Disposition"].startswith("attachment; filename=\"game-center-data-")
        downloaded = read_tar(response.read())
    assert json.loads(downloaded["manifest.json"])["playerID"] == ann_id
    assert downloaded["accounts.jsonl"] == files["accounts.jsonl"] and downloaded["scores.jsonl"] == files["scores.jsonl"]


def web_sign_in(server, account):
    """A browser-like opener signed in to the Game Center app as `account`."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    page = opener.open(server.url + "/sign-in", timeout=10).read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"csrf": csrf, "account": account, "password": "password-1", "environment": "sandbox"}).encode()
    opener.open(server.url + "/sign-in", data=form, timeout=10).read()
    return opener


def read_tar(data):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        return {member.name: archive.extractfile(member).read() for member in archive.getmembers()}


def test_a_read_only_server_reads_signs_in_and_exports_but_writes_nothing(source):
    work = source.work
    folder = work / f"wind-down-{uuid.uuid4().hex[:6]}"
    export(source.database, folder)
    database = empty_database(source.engine, work)
    gamecenter("import", "--database", database, str(folder))
    server = Server(source.engine, extra=("--read-only",), database=database)
    try:
        ann_id, _, ann_account = source.people["Ann"]
        status, session, _ = sign_in(server, ann_account)
        assert status == 200, session
        token = session["token"]
        assert ranked(server, token)[0][1] == 70
        headers = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + token}
        for method, path, body in [
            ("POST", "/v1/scores", {"reportID": "r1", "scores": [{"category": "arena.wins", "value": 1000, "context": 0}]}),
            ("POST", "/v1/friend-requests", {"playerIDs": [source.people["Bob"][0]]}),
            ("POST", "/v1/accounts", {"account": "newcomer", "password": "password-1", "alias": "New"}),
        ]:
            status, answer, _ = server.call(method, path, body, headers)
            assert status == 503 and answer["code"] == "server.read_only" and "winding down" in answer["message"], answer
        assert ranked(server, token)[0][1] == 70, "nothing was written"
        request = urllib.request.Request(f"{server.url}/admin/v1/players/{urllib.parse.quote(ann_id)}/archive", headers=bearer(ADMIN_KEY))
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200 and "accounts.jsonl" in read_tar(response.read())
        status, _, _ = server.call("DELETE", "/v1/sessions/current", headers=headers)
        assert status in (200, 204), "signing out is allowed"

        opener = web_sign_in(server, ann_account)
        page = opener.open(server.url + "/account", timeout=10).read().decode()
        assert "winding down" in page and "Download your data" in page
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        try:
            opener.open(server.url + "/account/profile", data=urllib.parse.urlencode({"csrf": csrf, "alias": "Changed", "status": ""}).encode(),
                        timeout=10)
            raise AssertionError("a form that writes must be refused")
        except urllib.error.HTTPError as error:
            assert error.code == 503 and "winding down" in error.read().decode()
        with opener.open(server.url + "/account/data", data=urllib.parse.urlencode({"csrf": csrf}).encode(), timeout=30) as response:
            assert json.loads(read_tar(response.read())["manifest.json"])["playerID"] == ann_id
    finally:
        server.stop()
