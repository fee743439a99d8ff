"""Moderation against the real `gamecenter` binary: a player hidden from every board (by the admin key or a server key
with `moderation`), their reports kept but not ranked while hidden, ranked again once shown; the same within a second
on a second node of one PostgreSQL database; and the append-only audit log of every action.
"""

import time
import uuid

import pytest

from test_server_keys import ADMIN_KEY, GAME, Server, bearer, engines, token


def report(server, session, value, board="arena.wins"):
    device = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + session}
    status, body, _ = server.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": board, "value": value, "context": 0}]}, device)
    assert status == 200, body


def ranked(server, session, board="arena.wins"):
    """The board's players and values, best first, as a device reads it."""
    device = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + session}
    status, page, _ = server.call("POST", "/v1/leaderboards/query", {
        "category": board, "playerScope": "global", "timeScope": "allTime", "rangeStart": 1, "rangeLength": 100}, device)
    assert status == 200, page
    return [(entry["playerID"], entry["value"]) for entry in page["scores"]]


def wait_until(check, seconds=5):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return time.time()
        time.sleep(0.05)
    raise AssertionError("not within %s s" % seconds)


@pytest.fixture(scope="module", params=engines())
def server(request):
    server = Server(request.param)
    yield server
    server.stop()


def test_a_hidden_player_leaves_every_board_keeps_reporting_and_comes_back(server):
    cheat, cheat_session = server.player()
    honest, honest_session = server.player()
    report(server, cheat_session, 1000)
    report(server, honest_session, 50)
    assert ranked(server, honest_session)[:2] == [(cheat, 1000), (honest, 50)]

    status, state, _ = server.call("PUT", f"/admin/v1/games/{GAME}/players/{cheat}/hidden", headers=bearer(ADMIN_KEY))
    assert status == 200 and state == {"playerID": cheat, "hidden": True, "changed": True}
    assert ranked(server, honest_session) == [(honest, 50)], "hidden at once on the node that hid them"
    report(server, cheat_session, 2000)
    assert ranked(server, honest_session) == [(honest, 50)], "a hidden player's new reports are stored, not ranked"
    status, state, _ = server.call("PUT", f"/admin/v1/games/{GAME}/players/{cheat}/hidden", headers=bearer(ADMIN_KEY))
    assert state["changed"] is False

    status, state, _ = server.call("DELETE", f"/admin/v1/games/{GAME}/players/{cheat}/hidden", headers=bearer(ADMIN_KEY))
    assert status == 200 and state["hidden"] is False and state["changed"] is True
    assert ranked(server, honest_session) == [(cheat, 2000), (honest, 50)], "shown again with the best report kept while hidden"

    status, body, _ = server.call("PUT", f"/admin/v1/games/{GAME}/players/G:nobody/hidden", headers=bearer(ADMIN_KEY))
    assert status == 404 and body["code"] == "player.unknown"


def test_a_hidden_player_stays_hidden_across_a_restart(server):
    player, session = server.player()
    report(server, session, 777)
    assert server.call("PUT", f"/admin/v1/games/{GAME}/players/{player}/hidden", headers=bearer(ADMIN_KEY))[0] == 200
    server.kill()
    server.start()
    assert player not in [p for p, _ in ranked(server, session)]
    assert server.call("DELETE", f"/admin/v1/games/{GAME}/players/{player}/hidden", headers=bearer(ADMIN_KEY))[0] == 200
    assert (player, 777) in ranked(server, session)


def test_server_keys_with_moderation_hide_and_read_the_audit_log_and_others_cannot(server):
    player, session = server.player()
    report(server, session, 5)
    moderator_id, issuer, pem = server.create_key("moderation")
    moderator = bearer(token(moderator_id, issuer, pem))
    reader = bearer(token(*server.create_key("players:read")))
    assert server.call("PUT", f"/server/v1/players/{player}/hidden", headers=reader)[0] == 403
    assert server.call("GET", "/server/v1/audit-log", headers=reader)[0] == 403
    status, state, _ = server.call("PUT", f"/server/v1/players/{player}/hidden", headers=moderator)
    assert status == 200 and state["hidden"]
    assert player not in [p for p, _ in ranked(server, session)]
    assert server.call("DELETE", f"/server/v1/players/{player}/hidden", headers=moderator)[0] == 200
    status, removed, _ = server.call("DELETE", f"/admin/v1/games/{GAME}/players/{player}/scores", headers=bearer(ADMIN_KEY))
    assert status == 200

    status, log, _ = server.call("GET", "/server/v1/audit-log?limit=20", headers=moderator)
    assert status == 200, log
    entries = log["entries"]
    mine = [(e["actor"], e["action"], e["subject"]) for e in entries if e["subject"] in (player, moderator_id)]
    assert mine[:4] == [("admin", "scores.erased", player), (moderator_id, "player.shown", player), (moderator_id, "player.hidden", player),
                        ("admin", "key.created", moderator_id)], mine
    ids = [e["entryID"] for e in entries]
    assert ids == sorted(ids, reverse=True), "newest first"
    status, older, _ = server.call("GET", f"/admin/v1/games/{GAME}/audit-log?before={ids[1]}&limit=1", headers=bearer(ADMIN_KEY))
    assert status == 200 and [e["entryID"] for e in older["entries"]] == [ids[2]]


@pytest.mark.skipif("postgres" not in engines(), reason="two nodes need PostgreSQL")
def test_hiding_on_one_node_hides_on_the_other_within_a_second():
    first = Server("postgres")
    second = Server("postgres", database=first.database)
    try:
        cheat, cheat_session = first.player()
        _, watcher = second.player()
        report(first, cheat_session, 900)
        wait_until(lambda: cheat in [p for p, _ in ranked(second, watcher)])
        hidden_at = time.time()
        assert first.call("PUT", f"/admin/v1/games/{GAME}/players/{cheat}/hidden", headers=bearer(ADMIN_KEY))[0] == 200
        seen_at = wait_until(lambda: cheat not in [p for p, _ in ranked(second, watcher)], seconds=3)
        assert seen_at - hidden_at < 1.0, f"the other node hid them after {seen_at - hidden_at:.2f} s"
        report(second, cheat_session, 950)
        time.sleep(0.3)
        assert cheat not in [p for p, _ in ranked(first, watcher)] and cheat not in [p for p, _ in ranked(second, watcher)]
        assert second.call("DELETE", f"/admin/v1/games/{GAME}/players/{cheat}/hidden", headers=bearer(ADMIN_KEY))[0] == 200
        wait_until(lambda: (cheat, 950) in ranked(first, watcher), seconds=3)
    finally:
        first.stop()
        second.stop()
