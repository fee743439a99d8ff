"""What a studio's game server does beyond scores with the permissions `saves:read`, `turns:write`, `players:read` and
`admin`, against the real `gamecenter` binary over plain HTTP (tokens made with PyJWT): reading a player's saves and their
bytes, ending a turn-based match as its arbiter (the participants' devices see it ended, by the server), seeing why a
player's match request still waits (also with the admin key), each refused without its permission, for another game,
with a stale version or missing outcomes; both engines.
"""

import hashlib
import urllib.parse
import urllib.request
import uuid

import pytest

from test_server_keys import Server, bearer, engines, token
from test_server_keys import ADMIN_KEY, GAME
from test_webhooks import Channel, call, device, other_game_reader, save, turn


@pytest.fixture(scope="module", params=engines())
def server(request):
    server = Server(request.param)
    yield server
    server.stop()


def get_bytes(server, path, headers):
    request = urllib.request.Request(server.url + path, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def test_a_game_server_reads_a_players_saves_and_their_bytes_with_saves_read(server):
    player_id, session = server.player()
    limits = call(server, session, "GET", "/v1/saved-games")["limits"]
    data = (bytes(range(256)) * (limits["chunkBytes"] // 256 + 8))[:limits["chunkBytes"] + 1000]  # two chunks
    assert len(data) <= limits["saveBytes"]
    versions = save(server, session, "slot 1", data, "phone")
    reader = bearer(token(*server.create_key("saves:read")))
    path = f"/server/v1/players/{urllib.parse.quote(player_id)}/saved-games"
    status, listed, _ = server.call("GET", path, headers=reader)
    assert status == 200, listed
    [version] = listed["saves"]
    assert version["name"] == "slot 1" and version["versionID"] == versions[0]["versionID"] and version["deviceName"] == "phone"
    chunk_size = listed["limits"]["chunkBytes"]
    chunks = (version["size"] + chunk_size - 1) // chunk_size
    assert chunks > 1
    read = b"".join(get_bytes(server, f"{path}/versions/{version['versionID']}/chunks/{index}", reader) for index in range(chunks))
    assert read == data and hashlib.sha256(read).hexdigest() == version["sha256"]

    for headers, status_code, code in [
        (bearer(token(*server.create_key("players:read"))), 403, "key.forbidden"),
        (bearer(token(*other_game_reader(server))), 403, "key.forbidden"),
    ]:
        status, body, _ = server.call("GET", path, headers=headers)
        assert status == status_code and body["code"] == code, body
    other_id, _ = server.player()
    status, body, _ = server.call("GET", f"/server/v1/players/{urllib.parse.quote(other_id)}/saved-games/versions/{version['versionID']}/chunks/0",
                                  headers=reader)
    assert status == 404, body


def test_a_game_server_ends_a_turn_based_match_as_its_arbiter_with_turns_write(server):
    (ann_id, ann), (bob_id, bob) = server.player(), server.player()
    find = {"minPlayers": 2, "maxPlayers": 2, "playerGroup": 4242 + len(uuid.uuid4().hex), "playersToInvite": []}
    call(server, ann, "POST", "/v1/turn-matches", find)
    match = call(server, bob, "POST", "/v1/turn-matches", find)
    match = call(server, ann, "GET", f"/v1/turn-matches/{match['matchID']}")
    match = turn(server, ann, match, "endTurn", nextParticipants=[1])
    arbiter = bearer(token(*server.create_key("turns:write")))
    path = f"/server/v1/turn-based-matches/{match['matchID']}/end"

    status, body, _ = server.call("POST", path, {"version": match["version"] - 1, "outcomes": [2, 3]}, arbiter)
    assert status == 409 and body["code"] == "turn.stale_version", body
    status, body, _ = server.call("POST", path, {"version": match["version"], "outcomes": [2, 0]}, arbiter)
    assert status in (400, 409) and body["code"].startswith("turn."), body
    status, body, _ = server.call("POST", path, {"version": match["version"], "outcomes": [2, 3]},
                                  bearer(token(*server.create_key("players:read"))))
    assert status == 403 and body["code"] == "key.forbidden", body

    headers = {**arbiter, "Idempotency-Key": "end-" + match["matchID"]}
    status, ended, _ = server.call("POST", path, {"version": match["version"], "outcomes": [3, 2], "message": "replay showed a speed hack"}, headers)
    assert status == 200, ended
    assert ended["status"] == "ended" or ended["status"] == 2, ended
    again = server.call("POST", path, {"version": match["version"], "outcomes": [3, 2], "message": "replay showed a speed hack"}, headers)
    assert again[0] == 200 and again[2]["Idempotent-Replayed"] == "true"
    seen = call(server, bob, "GET", f"/v1/turn-matches/{match['matchID']}")
    assert [p["outcome"] for p in seen["participants"]] == [3, 2] and seen["message"] == "replay showed a speed hack", seen
    status, body, _ = server.call("POST", path, {"version": seen["version"], "outcomes": [3, 2]}, arbiter)
    assert status == 409 and body["code"] == "turn.invalid_state" and "ended" in body["message"], body
    status, body, _ = server.call("POST", path, {"version": seen["version"], "outcomes": [3, 2]}, bearer(token(*other_turns_key(server))))
    assert status == 404 and body["code"] == "turn.no_such_match", body


def other_turns_key(server):
    import re
    pem_path = server.work / f"other-turns-{uuid.uuid4().hex[:8]}.p8"
    output = server.keys("create", "--game", "com.example.other", "--environment", "sandbox", "--output", str(pem_path),
                         "--permission", "turns:write")
    key_id = re.search(r"^key id:\s+(\S+)", output, re.MULTILINE).group(1)
    issuer = re.search(r"^issuer id:\s+(\S+)", output, re.MULTILINE).group(1)
    return key_id, issuer, pem_path.read_text()


def test_a_game_server_with_admin_manages_its_own_games_webhooks_only(server):
    manager = bearer(token(*server.create_key("admin")))
    status, created, _ = server.call("POST", "/server/v1/webhooks", {"url": "http://127.0.0.1:9/hooks", "events": ["score.verify"]}, manager)
    assert status == 201 and created["secret"].startswith("whsec_"), created
    endpoint = created["endpoint"]
    assert endpoint["bundleID"] == "com.example.arena" and endpoint["environment"] == "sandbox"
    status, listed, _ = server.call("GET", "/server/v1/webhooks", headers=manager)
    assert status == 200 and endpoint["endpointID"] in [e["endpointID"] for e in listed["endpoints"]]
    status, deliveries, _ = server.call("GET", f"/server/v1/webhooks/{endpoint['endpointID']}/deliveries", headers=manager)
    assert status == 200 and deliveries["deliveries"] == []

    # Another game's endpoint (made with the admin key) is neither listed nor removable with this key.
    from test_server_keys import ADMIN_KEY
    status, other, _ = server.call("POST", "/admin/v1/webhooks", {
        "bundleID": "com.example.other", "environment": "sandbox", "url": "http://127.0.0.1:9/other", "events": ["score.accepted"]},
        bearer(ADMIN_KEY))
    assert status == 201
    other_id = other["endpoint"]["endpointID"]
    assert other_id not in [e["endpointID"] for e in server.call("GET", "/server/v1/webhooks", headers=manager)[1]["endpoints"]]
    status, body, _ = server.call("DELETE", f"/server/v1/webhooks/{other_id}", headers=manager)
    assert status == 404 and body["code"] == "webhook.unknown", body
    status, body, _ = server.call("GET", "/server/v1/webhooks", headers=bearer(token(*server.create_key("moderation"))))
    assert status == 403 and body["code"] == "key.forbidden", body

    status, _, _ = server.call("DELETE", f"/server/v1/webhooks/{endpoint['endpointID']}", headers=manager)
    assert status == 204
    status, log, _ = server.call("GET", "/admin/v1/games/com.example.arena/audit-log", headers=bearer(ADMIN_KEY))
    actions = [(e["action"], e["subject"]) for e in log["entries"]]
    assert ("webhook.added", endpoint["endpointID"]) in actions and ("webhook.removed", endpoint["endpointID"]) in actions


def test_the_studio_sees_why_a_players_match_request_still_waits_with_players_read_or_the_admin_key(server):
    """Ann (eu) and Bob (us) wait in a queue whose rule keeps regions apart: the studio sees Ann's request as she does,
    with the rule that holds her; a player who waits with nothing, another game's key and another environment see no
    request; a key without players:read is refused."""
    (ann_id, ann), (bob_id, bob), (cid_id, _) = server.player(), server.player(), server.player()
    channels = [Channel(server, ann), Channel(server, bob)]
    queued = {"minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": False, "playersToInvite": [],
              "queueName": "com.example.arena.Ranked"}
    call(server, ann, "POST", "/v1/matchmaking/requests", {**queued, "requestID": "ann-q", "properties": {"region": "eu"}})
    call(server, bob, "POST", "/v1/matchmaking/requests", {**queued, "requestID": "bob-q", "properties": {"region": "us"}})
    own = call(server, ann, "GET", "/v1/matchmaking/requests/ann-q?explain=true")
    assert own["state"] == "waiting" and own["explanation"]["blockingRules"] == ["SameRegion"], own

    reader = bearer(token(*server.create_key("players:read")))
    admin = {"Authorization": "Bearer " + ADMIN_KEY}
    studio_path = f"/server/v1/matchmaking/players/{urllib.parse.quote(ann_id)}/request"
    admin_path = f"/admin/v1/games/{GAME}/matchmaking/players/{urllib.parse.quote(ann_id)}/request"
    for path, headers in [(studio_path, reader), (admin_path, admin), (admin_path + "?environment=sandbox", admin)]:
        status, seen, _ = server.call("GET", path, headers=headers)
        assert status == 200, (path, seen)
        why = seen["explanation"]
        assert seen["requestID"] == "ann-q" and seen["state"] == "waiting", seen
        assert why["waiting"] == 1 and why["compatible"] == 0 and why["blockingRules"] == ["SameRegion"], why
        assert [stage["name"] for stage in why["stages"]] == [stage["name"] for stage in own["explanation"]["stages"]], why

    for path, headers, status_code, code in [
        (studio_path, bearer(token(*server.create_key("saves:read"))), 403, "key.forbidden"),
        (studio_path, bearer(token(*other_game_reader(server))), 404, "matchmaking.no_such_request"),
        (admin_path + "?environment=live", admin, 404, "matchmaking.no_such_request"),
        (admin_path + "?environment=staging", admin, 400, "request.invalid_parameter"),
        (admin_path.replace(GAME, "com.example.nothing"), admin, 404, "admin.unknown_game"),
        (admin_path, {"Authorization": "Bearer not-the-key"}, 401, "admin.key_required"),
        (f"/server/v1/matchmaking/players/{urllib.parse.quote(cid_id)}/request", reader, 404, "matchmaking.no_such_request"),
    ]:
        status, body, _ = server.call("GET", path, headers=headers)
        assert status == status_code and body["code"] == code, (path, status, body)

    # Once Ann cancels, she waits with nothing.
    call(server, ann, "DELETE", "/v1/matchmaking/requests/ann-q")
    status, body, _ = server.call("GET", studio_path, headers=reader)
    assert status == 404 and body["code"] == "matchmaking.no_such_request" and "never asked" in body["message"], body
    for channel in channels:
        channel.close()
