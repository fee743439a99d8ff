"""`gamecenter games from-app-store-connect` against the real binary: App Store Connect's JSON:API documents of a game's
leaderboards and achievements (fixtures/asc_*.json, written from Apple's documented schema: included localizations,
string score ranges, a recurring board, a money format, an archived board and achievement, a legacy formatter, a
per-locale formatter override, a most-recent board, a hidden and repeatable achievement) become a manifest that
`gamecenter games check` accepts, with a note on stderr for everything not carried; a server with that manifest
answers titles per locale, formats with Apple's suffixes, sort order and score range, the recurring board's kind,
and the achievements' texts, points and hiding through the API.
"""

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from test_server_keys import Server

FIXTURES = Path(__file__).parent / "fixtures"
BUNDLE = "com.example.asc"


def gamecenter(*arguments):
    return subprocess.run([os.environ["GAMECENTER_BIN"], *arguments], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def converted():
    """The conversion's (manifest path, result) and a server with the manifest."""
    server = Server("sqlite")
    server.stop()
    manifest = server.work / "games" / "asc.yaml"
    result = gamecenter("games", "from-app-store-connect", "--bundle-id", BUNDLE, "--name", "ASC game",
                        str(FIXTURES / "asc_leaderboards.json"), str(FIXTURES / "asc_achievements.json"), "--output", str(manifest))
    assert result.returncode == 0, result.stderr + result.stdout
    server.start()
    server.manifest = manifest
    server.result = result
    yield server
    server.stop()


def device(token=None, locale=None):
    headers = {"X-GameCenter-Bundle-ID": BUNDLE, "X-GameCenter-Environment": "sandbox"}
    if token:
        headers["Authorization"] = "Bearer " + token
    if locale:
        headers["X-GameCenter-Locale"] = locale
    return headers


def player(server):
    account = "p" + uuid.uuid4().hex[:10]
    status, body, _ = server.call("POST", "/v1/accounts", {"account": account, "password": "password-1", "alias": account}, device())
    assert status in (200, 201), body
    status, session, _ = server.call("POST", "/v1/sessions", {"account": account, "password": "password-1"}, device())
    assert status == 200, session
    return body["player"]["playerID"], session["token"]


def report(server, token, board, value):
    return server.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": board, "value": value, "context": 0}]}, device(token))


def page(server, token, board, locale="en-US"):
    status, body, _ = server.call("POST", "/v1/leaderboards/query", {
        "category": board, "playerScope": "global", "timeScope": "allTime", "rangeStart": 1, "rangeLength": 10}, device(token, locale))
    assert status == 200, body
    return [(entry["playerID"], entry["value"], entry["formattedValue"]) for entry in body["scores"]]


def test_the_manifest_passes_the_check_and_what_was_not_carried_is_listed(converted):
    check = gamecenter("games", "check", str(converted.manifest))
    assert check.returncode == 0, check.stderr
    assert f"ok {BUNDLE} (ASC game): 4 leaderboards, 2 achievements" in check.stdout
    notes = converted.result.stderr
    for expected in ("leaderboard 'com.example.asc.old': archived, not carried",
                     "leaderboard 'com.example.asc.coins': submission type MOST_RECENT_SCORE not carried",
                     "leaderboard 'com.example.asc.legacy': formatter ELAPSED_TIME_MILLISECOND has no equivalent here; written as integer",
                     "leaderboard 'com.example.asc.laptime': formatter ELAPSED_TIME_SECOND of fr-FR not carried",
                     "leaderboard 'com.example.asc.legacy': no title in en-US; its reference name is used",
                     "achievement 'com.example.asc.retired': archived, not carried",
                     "achievement 'com.example.asc.secret': repeatable not carried",
                     "achievement images are not in these documents"):
        assert expected in notes, notes
    text = converted.manifest.read_text()
    assert 'defaultLocale: "en-US"' in text
    assert 'recurring: { start: "2026-01-05T00:00:00Z", durationSeconds: 86400, intervalSeconds: 86400 }' in text


def test_boards_have_their_titles_per_locale_and_the_recurring_one_recurs(converted):
    _, token = player(converted)
    titles = {}
    for locale in ("en-US", "fr-FR", "ja", "de"):
        status, body, _ = converted.call("GET", "/v1/leaderboards", headers=device(token, locale))
        assert status == 200, body
        titles[locale] = {board["category"]: board["title"] for board in body["leaderboards"]}
        kinds = {board["category"]: board.get("kind") for board in body["leaderboards"]}
        defaults = [board["category"] for board in body["leaderboards"] if board["isDefault"]]
    assert titles["en-US"] == {"com.example.asc.highscore": "High Score", "com.example.asc.laptime": "Fastest lap",
                               "com.example.asc.coins": "Richest", "com.example.asc.legacy": "Legacy ms"}
    assert titles["fr-FR"]["com.example.asc.highscore"] == "Meilleur score"
    assert titles["fr-FR"]["com.example.asc.laptime"] == "Tour le plus rapide"
    assert titles["fr-FR"]["com.example.asc.coins"] == "Richest", "no French title: the default locale's"
    assert titles["ja"]["com.example.asc.highscore"] == "ハイスコア"
    assert titles["de"]["com.example.asc.highscore"] == "High Score"
    assert kinds["com.example.asc.laptime"] == "recurring" and kinds["com.example.asc.highscore"] in ("classic", None)
    assert defaults == ["com.example.asc.highscore"]


def test_sort_order_formats_suffixes_and_range(converted):
    (ann_id, ann), (bob_id, bob) = player(converted), player(converted)
    for token, value in ((ann, 4567), (bob, 3456)):
        status, body, _ = report(converted, token, "com.example.asc.laptime", value)
        assert status == 200, body
    assert page(converted, ann, "com.example.asc.laptime") == [(bob_id, 3456, "0:34.56"), (ann_id, 4567, "0:45.67")], "ascending"
    for token, value in ((ann, 1), (bob, 5)):
        assert report(converted, token, "com.example.asc.highscore", value)[0] == 200
    assert page(converted, ann, "com.example.asc.highscore") == [(bob_id, 5, "5 points"), (ann_id, 1, "1 point")], "descending"
    assert [f for _, _, f in page(converted, ann, "com.example.asc.highscore", "fr-FR")] == ["5 points", "1 point"]
    status, body, _ = report(converted, ann, "com.example.asc.highscore", 1_000_001)
    assert status in (400, 422) and "range" in body["code"], body
    assert report(converted, ann, "com.example.asc.coins", 12345)[0] == 200
    assert page(converted, ann, "com.example.asc.coins") == [(ann_id, 12345, "£123.45")]


def test_achievements_have_their_texts_points_and_hiding(converted):
    _, token = player(converted)
    descriptions = {}
    for locale in ("en-US", "fr-FR"):
        status, body, _ = converted.call("GET", "/v1/achievement-descriptions", headers=device(token, locale))
        assert status == 200, body
        descriptions[locale] = {d["identifier"]: d for d in body["descriptions"]}
    first = descriptions["fr-FR"]["com.example.asc.first"]
    assert (first["title"], first["unachievedDescription"], first["achievedDescription"], first["maximumPoints"], first["isHidden"]) == (
        "Premiers pas", "Jouez une partie.", "Vous avez joué une partie.", 10, False)
    assert descriptions["en-US"]["com.example.asc.first"]["title"] == "First steps"
    secret = descriptions["en-US"]["com.example.asc.secret"]
    assert secret["isHidden"] is True
    assert "points: 50\n    hidden: true" in converted.manifest.read_text()
    assert set(descriptions["en-US"]) == {"com.example.asc.first", "com.example.asc.secret"}
