"""Webhooks against the real `gamecenter` binary, received by an independent receiver written here (Python's
http.server), which checks every signature itself (HMAC-SHA256 of "TIMESTAMP.BODY" with the endpoint's secret).

Covers: score events from devices and game servers, signed, in order, only for the endpoint's game and environment;
retries across a receiver that fails and one that is down; a kill -9 and restart of the server with deliveries
pending (none lost); a delivery dead after a day (the server's test clock) and replayed; the admin routes' refusals;
two nodes on one PostgreSQL database delivering each event once.
"""

import hashlib
import hmac
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from test_server_keys import ACHIEVEMENTS, ADMIN_KEY, GAME, SCORES, Server, achievement_body, bearer, engines, score_body, token


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
                timestamp = self.headers["X-GameCenter-Webhook-Timestamp"]
                expected = "v1=" + hmac.new(receiver.secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
                with receiver.lock:
                    if not hmac.compare_digest(expected, self.headers["X-GameCenter-Webhook-Signature"] or ""):
                        receiver.bad_signatures.append(body)
                    elif abs(time.time() - int(timestamp)) > 300:
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
    finally:
        first.stop()
        second.stop()


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
