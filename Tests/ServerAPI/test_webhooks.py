"""Webhooks against the real `gamecenter` binary, received by an independent receiver written here (Python's
http.server), which checks every signature itself (HMAC-SHA256 of "TIMESTAMP.BODY" with the endpoint's secret).

Covers: score events from devices and game servers, signed, in order, only for the endpoint's game and environment;
retries across a receiver that fails and one that is down; a kill -9 and restart of the server with deliveries
pending (none lost); a delivery dead after a day (the server's test clock) and replayed; the admin routes' refusals;
two nodes on one PostgreSQL database delivering each event once; an invitation answered and a real-time match that
ended, in order, and the match read by a game server; a turn-based match's changes, one event each whatever the
number of participants; a save's changes without its data; a tournament's end (with its final standings) and next
start.

Devices open their realtime channel (matchmaking needs it) with websocket-client.
"""

import hashlib
import hmac
import json
import re
import subprocess
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import websocket

from test_server_keys import ACHIEVEMENTS, ADMIN_KEY, GAME, SCORES, Server, achievement_body, bearer, engines, score_body, token


def signed_by(secret, headers, body):
    """Whether a delivery carries the HMAC-SHA256 of "TIMESTAMP.BODY" with `secret`, its timestamp within 5 minutes."""
    timestamp = headers["X-GameCenter-Webhook-Timestamp"] or "0"
    expected = "v1=" + hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers["X-GameCenter-Webhook-Signature"] or "") and abs(time.time() - int(timestamp)) <= 300


class Receiver:
    """A webhook endpoint: answers `status` (or is down), checks signatures, keeps what it received."""

    def __init__(self, secret=None):
        self.secret = secret
        self.status = 200
        self.refuse_player = None
        self.received = []
        self.bad_signatures = []
        self.lock = threading.Lock()
        self.httpd = None
        self.port = None
        self.up()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hooks"

    def up(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    if not signed_by(receiver.secret, self.headers, body):
                        receiver.bad_signatures.append(body)
                    status = receiver.status
                    if receiver.refuse_player and json.loads(body)["data"]["playerID"] == receiver.refuse_player:
                        status = 503
                    if status == 200:
                        receiver.received.append((json.loads(body), dict(self.headers)))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port or 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def down(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def events(self):
        with self.lock:
            return [event for event, _ in self.received]

    def wait_for(self, count, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if len(self.events()) >= count:
                return self.events()
            time.sleep(0.05)
        raise AssertionError(f"{len(self.events())} of {count} events arrived: {self.events()}")


def add_endpoint(server, receiver, environment="sandbox", events=("score.accepted",)):
    status, body, _ = server.call("POST", "/admin/v1/webhooks", {
        "bundleID": GAME, "environment": environment, "url": receiver.url, "events": list(events)}, bearer(ADMIN_KEY))
    assert status == 201, body
    assert body["secret"].startswith("whsec_") and "secret" not in body["endpoint"]
    receiver.secret = body["secret"]
    return body["endpoint"]["endpointID"]


def report(server, session, value, board="arena.wins"):
    device = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + session}
    status, body, _ = server.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": board, "value": value, "context": 7}]}, device)
    assert status == 200, body


def deliveries(server, endpoint_id, state=None):
    path = f"/admin/v1/webhooks/{endpoint_id}/deliveries" + (f"?state={state}" if state else "")
    status, body, _ = server.call("GET", path, headers=bearer(ADMIN_KEY))
    assert status == 200, body
    return body["deliveries"]


@pytest.fixture(params=engines())
def server(request):
    server = Server(request.param, extra=["--test-clock"])
    yield server
    server.stop()


def test_score_events_arrive_signed_in_order_for_the_endpoints_game_and_environment_only(server):
    receiver = Receiver()
    endpoint = add_endpoint(server, receiver)
    player_id, session = server.player()
    other_player, other_session = server.player()
    for value in (10, 20, 30):
        report(server, session, value)
    status, _, _ = server.call("POST", SCORES, score_body(other_player, "99"), bearer(token(*server.create_key("scores:write"))))
    assert status == 201
    live_player, live_session = server.player(environment="live")
    live = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "live", "Authorization": "Bearer " + live_session}
    assert server.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": "arena.wins", "value": 5, "context": 0}]}, live)[0] == 200
    events = receiver.wait_for(4)
    time.sleep(0.5)
    events = receiver.events()
    assert not receiver.bad_signatures
    assert [(e["type"], e["data"]["value"]) for e in events if e["data"]["playerID"] == player_id] == [
        ("score.accepted", 10), ("score.accepted", 20), ("score.accepted", 30)], "a player's scores in order, once each"
    assert [(e["type"], e["data"]["playerID"], e["data"]["value"]) for e in events if e["data"]["playerID"] != player_id] == [
        ("score.accepted", other_player, 99)], "the sandbox endpoint hears the sandbox's scores only"
    assert all(e["bundleID"] == GAME and e["environment"] == "sandbox" and e["data"]["category"] in ("arena.wins", "arena.verified")
               for e in events)
    assert len({e["id"] for e in events}) == 4
    headers = receiver.received[0][1]
    assert headers["X-GameCenter-Webhook-ID"] == events[0]["id"] and headers["X-GameCenter-Webhook-Attempt"] == "1"
    assert all(d["state"] == "delivered" and d["attempts"] == 1 for d in deliveries(server, endpoint))


def test_achievements_completed_by_devices_and_servers_are_events_and_progress_is_not(server):
    receiver = Receiver()
    add_endpoint(server, receiver, events=("achievement.completed",))
    player_id, session = server.player()
    other_id, _ = server.player()
    device = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + session}
    for percent in (50, 100, 100):
        status, body, _ = server.call("POST", "/v1/achievements", {"reportID": str(uuid.uuid4()), "achievements": [
            {"identifier": "arena.first", "percentComplete": percent}]}, device)
        assert status == 200, body
    report(server, session, 5)
    writer = bearer(token(*server.create_key("achievements:write")))
    status, body, _ = server.call("POST", ACHIEVEMENTS, achievement_body(other_id, 100), writer)
    assert status == 201, body
    events = receiver.wait_for(2)
    time.sleep(0.5)
    events = receiver.events()
    assert not receiver.bad_signatures
    assert [(e["type"], e["data"]["playerID"], e["data"]["identifier"]) for e in events] == [
        ("achievement.completed", player_id, "arena.first"), ("achievement.completed", other_id, "arena.first")], \
        "completed once each (progress and a second 100 % are not events, nor are scores for this endpoint)"
    assert all(abs(e["data"]["completedAt"] - time.time()) < 60 for e in events)


def test_a_failing_receiver_gets_every_event_again_in_order(server):
    receiver = Receiver()
    receiver.status = 503
    endpoint = add_endpoint(server, receiver)
    _, session = server.player()
    for value in (1, 2, 3):
        report(server, session, value)
    deadline = time.time() + 20
    while time.time() < deadline:
        pending = deliveries(server, endpoint, "pending")
        if pending and max(d["attempts"] for d in pending) >= 2:
            break
        time.sleep(0.1)
    assert pending and pending[-1]["lastError"] and "503" in pending[-1]["lastError"], pending
    receiver.status = 200
    events = receiver.wait_for(3, seconds=30)
    assert [e["data"]["value"] for e in events] == [1, 2, 3], "one player's events stay in order across the retries"
    assert not receiver.bad_signatures
    assert int(receiver.received[0][1]["X-GameCenter-Webhook-Attempt"]) >= 3


def test_deliveries_pending_across_a_kill_and_restart_are_all_made(server):
    receiver = Receiver()
    endpoint = add_endpoint(server, receiver)
    receiver.down()
    _, session = server.player()
    for value in range(1, 6):
        report(server, session, value)
    deadline = time.time() + 10
    while len(deliveries(server, endpoint, "pending")) < 5 and time.time() < deadline:
        time.sleep(0.05)
    assert len(deliveries(server, endpoint, "pending")) == 5
    server.kill()
    receiver.up()
    server.start()
    events = receiver.wait_for(5, seconds=30)
    time.sleep(0.5)
    assert [e["data"]["value"] for e in receiver.events()] == [1, 2, 3, 4, 5]


def test_a_delivery_dead_after_a_day_is_listed_and_replayed(server):
    receiver = Receiver()
    receiver.status = 500
    endpoint = add_endpoint(server, receiver)
    _, session = server.player()
    report(server, session, 42)
    deadline = time.time() + 10
    while not any(d["attempts"] >= 1 for d in deliveries(server, endpoint, "pending")) and time.time() < deadline:
        time.sleep(0.05)
    status, _, _ = server.call("POST", "/admin/v1/clock", {"seconds": 25 * 3600}, bearer(ADMIN_KEY))
    assert status == 200
    deadline = time.time() + 15
    while not deliveries(server, endpoint, "dead") and time.time() < deadline:
        time.sleep(0.1)
    [dead] = deliveries(server, endpoint, "dead")
    assert json.loads(dead["payload"])["data"]["value"] == 42 and "500" in dead["lastError"]
    assert not receiver.events()
    receiver.status = 200
    status, _, _ = server.call("POST", f"/admin/v1/webhooks/{endpoint}/deliveries/{dead['deliveryID']}/replay", {}, bearer(ADMIN_KEY))
    assert status == 202
    [event] = receiver.wait_for(1)
    assert event["id"] == dead["eventID"]
    status, body, _ = server.call("POST", f"/admin/v1/webhooks/{endpoint}/deliveries/{dead['deliveryID']}/replay", {}, bearer(ADMIN_KEY))
    assert status == 404 and body["code"] == "webhook.unknown", "only a dead delivery is replayed"


def test_the_admin_routes_refuse_what_they_cannot_do(server):
    admin = bearer(ADMIN_KEY)
    for body, status in [
        ({"bundleID": GAME, "environment": "sandbox", "url": "ftp://example.com/x", "events": ["score.accepted"]}, 400),
        ({"bundleID": GAME, "environment": "sandbox", "url": "http://127.0.0.1:9/x", "events": []}, 400),
        ({"bundleID": GAME, "environment": "sandbox", "url": "http://127.0.0.1:9/x", "events": ["score.nope"]}, 400),
        ({"bundleID": "com.example.nope", "environment": "sandbox", "url": "http://127.0.0.1:9/x", "events": ["score.accepted"]}, 404),
    ]:
        got, answer, _ = server.call("POST", "/admin/v1/webhooks", body, admin)
        assert got == status, (body, answer)
    assert server.call("GET", "/admin/v1/webhooks/wh_nope/deliveries", headers=admin)[1]["code"] == "webhook.unknown"
    receiver = Receiver()
    endpoint = add_endpoint(server, receiver)
    listed = server.call("GET", f"/admin/v1/webhooks?bundleID={GAME}", headers=admin)[1]["endpoints"]
    assert [e["endpointID"] for e in listed] == [endpoint] and "secret" not in json.dumps(listed)
    assert server.call("DELETE", f"/admin/v1/webhooks/{endpoint}", headers=admin)[0] == 204
    assert server.call("DELETE", f"/admin/v1/webhooks/{endpoint}", headers=admin)[0] == 404
    assert server.call("GET", "/admin/v1/webhooks")[0] == 401


@pytest.mark.skipif("postgres" not in engines(), reason="two nodes need PostgreSQL")
def test_two_nodes_deliver_each_event_once():
    first = Server("postgres")
    second = Server("postgres", database=first.database)
    try:
        receiver = Receiver()
        add_endpoint(first, receiver)
        sessions = [first.player()[1], second.player()[1]]
        for value in range(1, 21):
            report(first if value % 2 else second, sessions[value % 2], value)
        receiver.wait_for(20)
        time.sleep(1.5)
        events = receiver.events()
        assert sorted(e["data"]["value"] for e in events) == list(range(1, 21)), "each event once"

        # The node holding the dispatcher's lease is killed (-9) with the receiver down and deliveries pending: the
        # other takes the lease over when it lapses and delivers every event, each once.
        receiver.down()
        for value in range(21, 31):
            report(first if value % 2 else second, sessions[value % 2], value)
        holder = psql(first.database, "SELECT node_id FROM webhook_lease")
        first_node = psql(first.database, "SELECT node_id FROM nodes ORDER BY started_at LIMIT 1")
        victim, survivor = (first, second) if holder == first_node else (second, first)
        victim.kill()
        receiver.up()
        receiver.wait_for(30, seconds=60)
        time.sleep(1.5)
        values = sorted(e["data"]["value"] for e in receiver.events())
        assert values == list(range(1, 31)), f"each event once after the takeover: {values}"
        assert psql(survivor.database, "SELECT node_id FROM webhook_lease") != holder
    finally:
        first.stop() if first.process.poll() is None else None
        second.stop() if second.process.poll() is None else None


def psql(database, query):
    """One value from the server's PostgreSQL database."""
    return subprocess.run(["psql", database, "-tAc", query], check=True, capture_output=True, text=True).stdout.strip()


def test_one_players_failing_delivery_does_not_hold_up_anothers(server):
    receiver = Receiver()
    endpoint = add_endpoint(server, receiver)
    stuck_id, stuck = server.player()
    free_id, free = server.player()
    receiver.refuse_player = stuck_id  # the receiver refuses the stuck player's events only
    report(server, stuck, 1)
    report(server, free, 2)
    report(server, free, 3)
    events = receiver.wait_for(2)
    assert [e["data"]["value"] for e in events] == [2, 3]
    pending = deliveries(server, endpoint, "pending")
    assert [json.loads(d["payload"])["data"]["playerID"] for d in pending] == [stuck_id]
    receiver.refuse_player = None
    events = receiver.wait_for(3, seconds=20)
    assert [e["data"]["value"] for e in events] == [2, 3, 1]


def test_the_command_line_adds_lists_shows_deliveries_and_removes_endpoints(server):
    receiver = Receiver()
    output = server.run_command("webhooks", "add", "--game", GAME, "--url", receiver.url, "--event", "score.accepted",
                                "--event", "achievement.completed")
    endpoint = re.search(r"^endpoint id:\s+(\S+)", output, re.MULTILINE).group(1)
    receiver.secret = re.search(r"^secret:\s+(\S+)", output, re.MULTILINE).group(1)
    assert re.search(re.escape(endpoint) + r".*achievement.completed,score.accepted", server.run_command("webhooks", "list", "--game", GAME))
    _, session = server.player()
    report(server, session, 8)
    [event] = receiver.wait_for(1)
    assert event["data"]["value"] == 8 and not receiver.bad_signatures
    assert re.search(r"score-\d+\s+score.accepted\s+delivered\s+attempts 1", server.run_command("webhooks", "deliveries", endpoint))
    assert "removed" in server.run_command("webhooks", "remove", endpoint)
    assert "no webhook endpoints" in server.run_command("webhooks", "list", "--game", GAME)


def device(session):
    return {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Authorization": "Bearer " + session}


def call(server, session, method, path, body=None, expected=(200, 201, 204)):
    """A device's call; its JSON answer."""
    status, answer, _ = server.call(method, path, body, device(session))
    assert status in expected, (method, path, status, answer)
    return answer


class Channel:
    """A device's realtime channel, open (matchmaking takes the device's requests) and answering heartbeats."""

    def __init__(self, server, session):
        self.socket = websocket.create_connection(
            server.url.replace("http://", "ws://") + "/v1/realtime",
            header=[f"{name}: {value}" for name, value in device(session).items()], timeout=30)
        assert "hello" in json.loads(self.socket.recv())
        self.socket.settimeout(None)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                frame = json.loads(self.socket.recv())
            except Exception:
                return
            if "heartbeat" in frame:
                self.socket.send(json.dumps({"heartbeat": {}}))

    def close(self):
        self.socket.close()


def befriend(server, first_session, second_id, second_session):
    call(server, first_session, "POST", "/v1/friend-requests", {"playerIDs": [second_id]})
    request = call(server, second_session, "GET", "/v1/friend-requests")["requests"][0]
    call(server, second_session, "POST", f"/v1/friend-requests/{request['requestID']}/accept")


def other_game_reader(server):
    """A players:read key of the other game: (key id, issuer id, private key PEM)."""
    pem_path = server.work / f"other-{uuid.uuid4().hex[:8]}.p8"
    output = server.keys("create", "--game", "com.example.other", "--environment", "sandbox", "--output", str(pem_path),
                         "--permission", "players:read")
    key_id = re.search(r"^key id:\s+(\S+)", output, re.MULTILINE).group(1)
    issuer = re.search(r"^issuer id:\s+(\S+)", output, re.MULTILINE).group(1)
    return key_id, issuer, pem_path.read_text()


def settled(receiver, count):
    """The events once `count` arrived and nothing more came for half a second."""
    receiver.wait_for(count)
    time.sleep(0.5)
    return receiver.events()


def test_an_invitation_answered_and_a_match_that_ended_are_events_of_the_match_in_order_and_servers_read_the_match(server):
    receiver = Receiver()
    add_endpoint(server, receiver, events=("invitation.answered", "match.ended"))
    ann_id, ann = server.player()
    bob_id, bob = server.player()
    befriend(server, ann, bob_id, bob)
    channels = [Channel(server, ann), Channel(server, bob)]
    try:
        invite_and_accept(server, ann, bob_id, bob)
        answered = settled(receiver, 2)
        assert [(e["type"], e["data"]["inviterID"], e["data"]["playerID"], e["data"]["state"]) for e in answered] == [
            ("invitation.answered", ann_id, bob_id, "accepted"), ("invitation.answered", ann_id, bob_id, "connected")]
        match_id = answered[0]["data"]["matchID"]
        assert answered[1]["data"]["matchID"] == match_id

        reader = bearer(token(*server.create_key("players:read")))
        status, match, _ = server.call("GET", f"/server/v1/matches/{match_id}", headers=reader)
        assert status == 200, match
        assert match["state"] == "started" and match["hosted"] is False and "startedAt" in match
        assert sorted((p["playerID"], p["alias"], "leftAt" in p) for p in match["players"]) == sorted(
            [(ann_id, "Ann", False), (bob_id, "Ann", False)])
        status, body, _ = server.call("GET", f"/server/v1/matches/{match_id}", headers=bearer(token(*server.create_key("scores:write"))))
        assert status == 403 and body["code"] == "key.forbidden", body
        status, body, _ = server.call("GET", f"/server/v1/matches/{match_id}", headers=bearer(token(*other_game_reader(server))))
        assert status == 404 and body["code"] == "matchmaking.no_such_match", "another game's key does not see the match"
        status, body, _ = server.call("GET", "/server/v1/matches/no-such-match", headers=reader)
        assert status == 404 and body["code"] == "matchmaking.no_such_match"

        call(server, ann, "POST", f"/v1/matches/{match_id}/leave")
        time.sleep(0.3)
        assert len(receiver.events()) == 2, "the match goes on while Bob is in it"
        call(server, bob, "POST", f"/v1/matches/{match_id}/leave")
        events = settled(receiver, 3)
        assert [e["type"] for e in events] == ["invitation.answered", "invitation.answered", "match.ended"]
        ended = events[2]
        assert ended["id"].startswith("game-") and ended["bundleID"] == GAME and ended["environment"] == "sandbox"
        assert ended["data"]["matchID"] == match_id and sorted(ended["data"]["players"]) == sorted([ann_id, bob_id])
        assert ended["data"]["startedAt"] <= ended["data"]["endedAt"]
        status, match, _ = server.call("GET", f"/server/v1/matches/{match_id}", headers=reader)
        assert match["state"] == "ended" and all("leftAt" in p for p in match["players"])
        assert not receiver.bad_signatures
    finally:
        for channel in channels:
            channel.close()


def invite_and_accept(server, inviter, invitee_id, invitee):
    """The inviter asks for a two-player match with the invitee, who accepts (both need their realtime channel open)."""
    call(server, inviter, "POST", "/v1/matchmaking/requests", {
        "requestID": "ann-1", "minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": False,
        "playersToInvite": [invitee_id], "inviteMessage": "A game?"})
    [invitation] = call(server, invitee, "GET", "/v1/invitations")["invitations"]
    call(server, invitee, "POST", f"/v1/invitations/{invitation['invitationID']}/accept", {"requestID": "bob-1"})


def turn(server, session, match, action, **fields):
    """A write in turn with the version `match` was read at; the match after it."""
    body = {"action": action, "version": match["version"], "matchData": "", "nextParticipants": [], "turnTimeout": 0, "outcome": 0,
            "outcomes": [], "resolvedExchangeIDs": [], "scores": [], "achievements": []}
    body.update(fields)
    return call(server, session, "POST", f"/v1/turn-matches/{match['matchID']}/turn", body)


def test_each_change_of_a_turn_based_match_is_one_event_whatever_its_participants_and_servers_read_the_match(server):
    receiver = Receiver()
    add_endpoint(server, receiver, events=("turn.changed",))
    (ann_id, ann), (bob_id, bob), (cat_id, cat) = server.player(), server.player(), server.player()
    find = {"minPlayers": 3, "maxPlayers": 3, "playerGroup": 77, "playersToInvite": []}
    match = call(server, ann, "POST", "/v1/turn-matches", find)
    call(server, bob, "POST", "/v1/turn-matches", find)
    match = call(server, cat, "POST", "/v1/turn-matches", find)
    match = turn(server, ann, match, "endTurn", nextParticipants=[1, 2], message="your move")
    match = turn(server, bob, match, "endTurn", nextParticipants=[2, 0])
    match = turn(server, cat, match, "endMatch", outcomes=[2, 3, 3])
    # Copies each participant stored of a change: joined (three players when Cat joins), three turns.
    events = settled(receiver, 5)
    changes = [(e["data"]["kind"], e["data"]["version"]) for e in events]
    assert len(events) == len(set(changes)) == len({e["id"] for e in events}), f"one event per change: {changes}"
    assert [kind for kind, _ in changes] == ["joined", "joined", "turnPassed", "turnPassed", "matchEnded"], changes
    assert [version for _, version in changes] == sorted(version for _, version in changes), "a match's events in order"
    assert all(e["data"]["matchID"] == match["matchID"] and e["id"] == f"turn-{match['matchID']}-{e['data']['version']}-{e['data']['kind']}"
               for e in events)
    assert all("becameActive" not in e["data"] for e in events), "no field of one recipient"
    passed = events[2]["data"]
    assert passed["actorIndex"] == 0 and passed["currentIndex"] == 1 and passed["message"] == "your move" and not passed["ended"]
    assert [p["playerID"] for p in passed["participants"]] == [ann_id, bob_id, cat_id]
    end = events[-1]["data"]
    assert end["ended"] and end["status"] == 2 and "currentIndex" not in end and [p["outcome"] for p in end["participants"]] == [2, 3, 3]

    reader = bearer(token(*server.create_key("players:read")))
    status, read, _ = server.call("GET", f"/server/v1/turn-based-matches/{match['matchID']}", headers=reader)
    assert status == 200, read
    assert read["status"] == 2 and read["version"] == end["version"] and "currentIndex" not in read
    assert [(p["playerID"], p["alias"], p["outcome"]) for p in read["participants"]] == [
        (ann_id, "Ann", 2), (bob_id, "Ann", 3), (cat_id, "Ann", 3)]
    status, body, _ = server.call("GET", f"/server/v1/turn-based-matches/{match['matchID']}", headers=bearer(token(*other_game_reader(server))))
    assert status == 404 and body["code"] == "turn.no_such_match", body
    status, body, _ = server.call("GET", f"/server/v1/turn-based-matches/{match['matchID']}",
                                  headers=bearer(token(*server.create_key("achievements:write"))))
    assert status == 403 and body["code"] == "key.forbidden", body


def save(server, session, name, data, device_name, based_on=()):
    """Saves `data` as a new version of save `name` (upload, chunks, finish); the save's current versions."""
    upload = call(server, session, "POST", "/v1/saved-games/uploads", {
        "name": name, "basedOn": list(based_on), "deviceName": device_name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    size = upload["chunkBytes"]
    for index in range(upload["chunks"]):
        request = urllib.request.Request(
            f"{server.url}/v1/saved-games/uploads/{upload['uploadID']}/chunks/{index}", method="PUT",
            data=data[index * size:(index + 1) * size], headers={**device(session), "Content-Type": "application/octet-stream"})
        urllib.request.urlopen(request, timeout=10).read()
    return call(server, session, "POST", f"/v1/saved-games/uploads/{upload['uploadID']}/finish")["versions"]


def test_a_saves_changes_are_events_with_its_versions_and_never_its_data(server):
    receiver = Receiver()
    add_endpoint(server, receiver, events=("save.changed",))
    player_id, session = server.player()
    first = save(server, session, "slot 1", b"level one", "phone")
    save(server, session, "slot 1", b"level two", "tablet")  # not based on the first: a conflict
    events = settled(receiver, 2)
    assert [(e["type"], e["data"]["playerID"], e["data"]["name"], len(e["data"]["versions"])) for e in events] == [
        ("save.changed", player_id, "slot 1", 1), ("save.changed", player_id, "slot 1", 2)]
    assert events[0]["data"]["versions"][0]["versionID"] == first[0]["versionID"]
    assert sorted(v["deviceName"] for v in events[1]["data"]["versions"]) == ["phone", "tablet"]
    assert {v["sha256"] for v in events[1]["data"]["versions"]} == {hashlib.sha256(b"level one").hexdigest(),
                                                                    hashlib.sha256(b"level two").hexdigest()}
    assert all(set(v) == {"versionID", "deviceName", "modifiedAt", "size", "sha256"} for e in events for v in e["data"]["versions"])
    assert "level" not in json.dumps(events), "the data is not sent"


def test_a_tournaments_end_with_its_final_standings_and_its_next_start_are_events_in_order(server):
    receiver = Receiver()
    add_endpoint(server, receiver, events=("occurrence.started", "occurrence.ended"))
    player_id, session = server.player()
    report(server, session, 12, board="arena.daily")
    admin = bearer(ADMIN_KEY)
    status, ended, _ = server.call("POST", f"/admin/v1/games/{GAME}/leaderboards/arena.daily/end", {"environment": "sandbox"}, admin)
    assert status in (200, 201), ended
    status, started, _ = server.call("POST", f"/admin/v1/games/{GAME}/leaderboards/arena.daily/start", {"environment": "sandbox"}, admin)
    assert status in (200, 201), started
    deadline = time.time() + 30
    while time.time() < deadline and [e["type"] for e in receiver.events()][-2:] != ["occurrence.ended", "occurrence.started"]:
        time.sleep(0.05)
    # The running occurrence's start may be recorded after the endpoint was made (the server's clock records it): it
    # comes first, then.
    end, start = receiver.events()[-2:]
    assert (end["type"], start["type"]) == ("occurrence.ended", "occurrence.started"), receiver.events()
    assert end["id"].startswith("occurrence-") and end["data"]["category"] == "arena.daily" and end["environment"] == "sandbox"
    assert [(s["rank"], s["playerID"], s["alias"], s["value"], s["context"]) for s in end["data"]["standings"]] == [
        (1, player_id, "Ann", 12, 7)]
    assert abs(end["data"]["occurrence"] - ended["start"]) < 0.01
    assert "standings" not in start["data"] and abs(start["data"]["occurrence"] - started["start"]) < 0.01
    assert start["data"]["occurrence"] < start["data"]["occurrenceEnd"]
    assert not receiver.bad_signatures
