"""Boards that verify and boards that take signed reports, against the real `gamecenter` binary, driven by independent
implementations written here: a score verifier (Python's http.server) that checks each question's signature itself and
answers accept, reject or nothing in time, and a device that signs its reports with Python's hmac.

Covers: accept, reject with a reason and quarantine (no answer in time, an error status, no verifier at all), each
state seen by the player's device and by the studio; details and attachments reaching the verifier; a re-sent report
asking nothing again; the studio releasing and rejecting quarantined scores (audit log, permission, a second decision
refused); limits on details and attachments; signed reports — none, forged, altered, replayed, out of order, a new key
— on one node and across two nodes of one PostgreSQL database.
"""

import base64
import hashlib
import hmac
import json
import os
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from test_server_keys import ADMIN_KEY, GAME, Server, bearer, engines, token
from test_webhooks import signed_by

CHECKED = "arena.checked"
SIGNED = "arena.signed"


class Verifier:
    """The studio's verifier: checks signatures, answers by `mode` (accept, reject, slow, error), keeps the questions."""

    def __init__(self):
        self.secret = None
        self.mode = "accept"
        self.questions = []
        self.bad_signatures = 0
        self.lock = threading.Lock()
        verifier = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with verifier.lock:
                    if not signed_by(verifier.secret, self.headers, body):
                        verifier.bad_signatures += 1
                    verifier.questions.append((json.loads(body), dict(self.headers)))
                    mode = verifier.mode
                if mode == "slow":
                    time.sleep(2.5)
                if mode == "error":
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                answer = {"decision": "accept"} if mode in ("accept", "slow") else {"decision": "reject", "reason": "impossible time: 0.2 s"}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/verify"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def device(session, environment="sandbox"):
    return {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": environment, "Authorization": "Bearer " + session}


def report(server, session, scores, report_id=None, headers=None):
    body = {"reportID": report_id or str(uuid.uuid4()), "scores": scores}
    return server.call("POST", "/v1/scores", body, {**device(session), **(headers or {})})


def add_verifier(server, verifier):
    status, body, _ = server.call("POST", "/admin/v1/webhooks", {
        "bundleID": GAME, "environment": "sandbox", "url": verifier.url, "events": ["score.verify"]}, bearer(ADMIN_KEY))
    assert status == 201, body
    verifier.secret = body["secret"]
    return body["endpoint"]["endpointID"]


def counted(server, moderator, player_id, category):
    """The player's value on `category` as the studio's server reads it, or None."""
    status, body, _ = server.call("GET", f"/server/v1/players/{urllib.parse.quote(player_id)}", headers=bearer(token(*moderator)))
    assert status == 200, body
    values = [entry["value"] for entry in body["scores"] if entry["category"] == category]
    return values[0] if values else None


@pytest.fixture(scope="module", params=engines())
def server(request):
    server = Server(request.param)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def moderator(server):
    return server.create_key("moderation", "players:read")


@pytest.fixture(scope="module")
def verifier(server):
    verifier = Verifier()
    add_verifier(server, verifier)
    yield verifier
    verifier.close()


def test_accepted_and_rejected_scores_with_details_and_attachments(server, moderator, verifier):
    player_id, session = server.player()
    verifier.mode = "accept"
    replay = os.urandom(300_000)
    before = len(verifier.questions)
    status, body, _ = report(server, session, [
        {"category": "arena.wins", "value": 5, "context": 1},
        {"category": CHECKED, "value": 900, "context": 2, "details": [1, -2, 2**62], "attachment": base64.b64encode(replay).decode()}])
    assert status == 200, body
    assert [(s["category"], s["value"]) for s in body["scores"]] == [("arena.wins", 5), (CHECKED, 900)]
    [submission] = body["submissions"]
    assert submission["state"] == "accepted" and submission["category"] == CHECKED and "reason" not in submission
    question, headers = verifier.questions[before]
    assert verifier.bad_signatures == 0
    assert headers["X-GameCenter-Webhook-Type"] == "score.verify" and question["type"] == "score.verify"
    data = question["data"]
    assert data["submissionID"] == submission["submissionID"] and data["playerID"] == player_id and data["value"] == 900
    assert data["details"] == [1, -2, 2**62] and base64.b64decode(data["attachment"]) == replay
    assert counted(server, moderator, player_id, CHECKED) == 900

    verifier.mode = "reject"
    status, body, _ = report(server, session, [{"category": CHECKED, "value": 5000, "context": 0}])
    assert status == 200, body
    assert body["scores"] == []
    [rejected] = body["submissions"]
    assert rejected["state"] == "rejected" and rejected["reason"] == "impossible time: 0.2 s"
    assert counted(server, moderator, player_id, CHECKED) == 900

    status, own, _ = server.call("GET", "/v1/score-submissions", headers=device(session))
    assert status == 200, own
    assert [(s["value"], s["state"]) for s in own["submissions"]] == [(5000, "rejected"), (900, "accepted")]


def test_a_resent_report_asks_nothing_again(server, verifier):
    _, session = server.player()
    verifier.mode = "accept"
    report_id = str(uuid.uuid4())
    scores = [{"category": CHECKED, "value": 77, "context": 0}]
    first = report(server, session, scores, report_id)
    asked = len(verifier.questions)
    again = report(server, session, scores, report_id)
    assert first[0] == again[0] == 200
    assert len(verifier.questions) == asked
    assert again[1]["submissions"] == first[1]["submissions"] and again[1]["scores"] == []


@pytest.mark.parametrize("mode, reason", [("slow", "did not answer within 1 s"), ("error", "answered HTTP 500")])
def test_no_answer_in_time_quarantines_and_the_studio_decides(server, moderator, verifier, mode, reason):
    player_id, session = server.player()
    verifier.mode = mode
    status, body, _ = report(server, session, [{"category": CHECKED, "value": 321, "context": 0}])
    verifier.mode = "accept"
    assert status == 200, body
    [held] = body["submissions"]
    assert held["state"] == "quarantined" and reason in held["reason"], held
    assert counted(server, moderator, player_id, CHECKED) is None

    headers = bearer(token(*moderator))
    status, listed, _ = server.call("GET", "/server/v1/score-submissions?state=quarantined&playerID=" + urllib.parse.quote(player_id),
                                    headers=headers)
    assert status == 200 and [s["submissionID"] for s in listed["submissions"]] == [held["submissionID"]], listed
    for before in ("1e300", "-1e300", "nan", "soon"):
        status, refused, _ = server.call("GET", "/server/v1/score-submissions?before=" + before, headers=headers)
        assert status == 400 and "before" in refused["message"], refused
    status, listed, _ = server.call("GET", f"/server/v1/score-submissions?before={time.time() + 60}&limit=1", headers=headers)
    assert status == 200 and len(listed["submissions"]) == 1, listed
    status, detail, _ = server.call("GET", f"/server/v1/score-submissions/{held['submissionID']}", headers=headers)
    assert status == 200 and detail["submission"]["value"] == 321 and detail["details"] == [], detail

    no_moderation = bearer(token(*server.create_key("players:read")))
    status, refused, _ = server.call("POST", f"/server/v1/score-submissions/{held['submissionID']}/release", {}, no_moderation)
    assert status == 403 and refused["code"] == "key.forbidden", refused

    status, released, _ = server.call("POST", f"/server/v1/score-submissions/{held['submissionID']}/release", {},
                                      {**headers, "Idempotency-Key": "release-" + held["submissionID"]})
    assert status == 200 and released["state"] == "accepted", released
    assert counted(server, moderator, player_id, CHECKED) == 321
    status, twice, _ = server.call("POST", f"/server/v1/score-submissions/{held['submissionID']}/reject", {"reason": "late"}, headers)
    assert status == 409 and twice["code"] == "leaderboard.submission_decided", twice

    status, own, _ = server.call("GET", "/v1/score-submissions", headers=device(session))
    assert own["submissions"][0]["state"] == "accepted" and "decidedAt" in own["submissions"][0]
    status, log, _ = server.call("GET", "/server/v1/audit-log", headers=headers)
    entry = next(e for e in log["entries"] if e["subject"] == held["submissionID"])
    assert entry["action"] == "score.released" and entry["actor"] == moderator[0] and entry["detail"]["value"] == "321"


def test_the_admin_rejects_a_quarantined_score_with_a_reason(server, moderator, verifier):
    player_id, session = server.player()
    verifier.mode = "error"
    _, body, _ = report(server, session, [{"category": CHECKED, "value": 654, "context": 0}])
    verifier.mode = "accept"
    submission_id = body["submissions"][0]["submissionID"]
    path = f"/admin/v1/games/{GAME}/score-submissions/{submission_id}/reject?environment=sandbox"
    status, empty, _ = server.call("POST", path, {"reason": "  "}, bearer(ADMIN_KEY))
    assert status == 400 and "reason" in empty["message"], empty
    status, rejected, _ = server.call("POST", path, {"reason": "speed hack in the replay"}, bearer(ADMIN_KEY))
    assert status == 200 and rejected["state"] == "rejected" and rejected["reason"] == "speed hack in the replay", rejected
    assert counted(server, moderator, player_id, CHECKED) is None
    status, other, _ = server.call("GET", f"/admin/v1/games/{GAME}/score-submissions/{submission_id}?environment=live", headers=bearer(ADMIN_KEY))
    assert status == 404 and other["code"] == "leaderboard.submission_unknown", other
    status, log, _ = server.call("GET", f"/admin/v1/games/{GAME}/audit-log", headers=bearer(ADMIN_KEY))
    entry = next(e for e in log["entries"] if e["subject"] == submission_id)
    assert entry["action"] == "score.rejected" and entry["actor"] == "admin" and entry["detail"]["reason"] == "speed hack in the replay"


def test_details_and_attachments_are_bounded(server, verifier):
    _, session = server.player()
    status, body, _ = report(server, session, [{"category": CHECKED, "value": 1, "context": 0, "details": list(range(65))}])
    assert status == 400 and "at most 64 details" in body["message"], body
    status, body, _ = report(server, session, [{"category": "arena.wins", "value": 1, "context": 0, "attachment": "AAAA"}])
    assert status == 400 and "takes no attachment" in body["message"], body
    big = base64.b64encode(os.urandom(700_000)).decode()
    status, body, _ = report(server, session, [
        {"category": CHECKED, "value": 1, "context": 0, "attachment": big}, {"category": CHECKED, "value": 2, "context": 0, "attachment": big}])
    assert status in (400, 413) and "1048576" in body["message"], body


def test_without_a_verifier_scores_are_quarantined_never_accepted():
    server = Server("sqlite")
    try:
        player_id, session = server.player()
        status, body, _ = report(server, session, [{"category": CHECKED, "value": 10, "context": 0}])
        assert status == 200, body
        [held] = body["submissions"]
        assert held["state"] == "quarantined" and "no verifier" in held["reason"], held
        assert body["scores"] == []
    finally:
        server.stop()


def sign(key, counter, body):
    return "v1=" + hmac.new(base64.b64decode(key), f"{counter}.".encode() + body, hashlib.sha256).hexdigest()


def signed_report(server, session, key, counter, value, signature=None, raw=None):
    body = raw or json.dumps({"reportID": str(uuid.uuid4()), "scores": [{"category": SIGNED, "value": value, "context": 0}]}).encode()
    headers = {**device(session), "X-GameCenter-Report-Counter": str(counter),
               "X-GameCenter-Report-Signature": signature or sign(key, counter, body)}
    return server.call("POST", "/v1/scores", raw=body, headers=headers), body


def test_signed_boards_refuse_unsigned_forged_altered_and_replayed_reports(server, moderator):
    player_id, session = server.player()
    status, body, _ = report(server, session, [{"category": SIGNED, "value": 1, "context": 0}])
    assert status == 403 and body["code"] == "leaderboard.signature_required", body
    (status, body, _), _ = signed_report(server, session, base64.b64encode(b"k" * 32).decode(), 1, 5)
    assert status == 403 and body["code"] == "leaderboard.signature_required" and "report-keys" in body["message"], body

    status, key, _ = server.call("POST", "/v1/report-keys", {}, device(session))
    assert status == 200 and key["counter"] == 0 and len(base64.b64decode(key["key"])) == 32, key
    (status, body, _), sent = signed_report(server, session, key["key"], 1, 10)
    assert status == 200 and body["scores"][0]["value"] == 10, body

    (status, body, _), _ = signed_report(server, session, key["key"], 1, 10, raw=sent)
    assert status == 409 and body["code"] == "leaderboard.counter_used", body
    forged = base64.b64encode(os.urandom(32)).decode()
    (status, body, _), _ = signed_report(server, session, forged, 2, 99)
    assert status == 403 and body["code"] == "leaderboard.signature_invalid", body
    altered = sent.replace(b'"value": 10', b'"value": 99999')
    (status, body, _), _ = signed_report(server, session, key["key"], 2, 0, signature=sign(key["key"], 2, sent), raw=altered)
    assert status == 403 and body["code"] == "leaderboard.signature_invalid", body
    (status, body, _), _ = signed_report(server, session, key["key"], 3, 30)
    assert status == 200, body
    (status, body, _), _ = signed_report(server, session, key["key"], 2, 20)
    assert status == 409 and body["code"] == "leaderboard.counter_used", body
    (status, body, _), _ = signed_report(server, session, key["key"], "x", 20)
    assert status == 403 and body["code"] == "leaderboard.signature_invalid", body
    assert counted(server, moderator, player_id, SIGNED) == 30

    # Open boards take a report with or without signature headers; a new key starts its counter again.
    assert report(server, session, [{"category": "arena.wins", "value": 3, "context": 0}])[0] == 200
    status, fresh, _ = server.call("POST", "/v1/report-keys", {}, device(session))
    (status, body, _), _ = signed_report(server, session, key["key"], 4, 40)
    assert status == 403 and body["code"] == "leaderboard.signature_invalid", body
    (status, body, _), _ = signed_report(server, session, fresh["key"], 1, 50)
    assert status == 200, body
    # Another player's session cannot use this key.
    _, other_session = server.player()
    (status, body, _), _ = signed_report(server, other_session, fresh["key"], 2, 60)
    assert status == 403 and body["code"] == "leaderboard.signature_required", body


@pytest.mark.skipif(not os.environ.get("GAMECENTER_TEST_POSTGRES_URL"), reason="two nodes need PostgreSQL")
def test_two_nodes_share_each_keys_counter():
    first = Server("postgres")
    second = Server("postgres", database=first.database)
    try:
        _, session = first.player()
        _, key, _ = first.call("POST", "/v1/report-keys", {}, device(session))
        (status, _, _), sent = signed_report(first, session, key["key"], 5, 10)
        assert status == 200
        (status, body, _), _ = signed_report(second, session, key["key"], 5, 10, raw=sent)
        assert status == 409 and body["code"] == "leaderboard.counter_used", body
        _, fresh, _ = second.call("POST", "/v1/report-keys", {}, device(session))
        # The first node read the old key; a report signed with the new one is checked against storage again.
        (status, body, _), _ = signed_report(first, session, fresh["key"], 1, 20)
        assert status == 200, body
    finally:
        second.stop()
        first.stop()


def test_quarantined_and_rejected_scores_are_webhook_events_and_a_node_that_stops_while_asking_quarantines_its_scores():
    from test_webhooks import Receiver, add_endpoint

    server = Server("sqlite", extra=["--test-clock"])
    verifier = Verifier()
    receiver = Receiver()
    try:
        add_verifier(server, verifier)
        add_endpoint(server, receiver, events=("score.quarantined", "score.rejected"))
        player_id, session = server.player()
        verifier.mode = "reject"
        report(server, session, [{"category": CHECKED, "value": 1, "context": 0}])
        verifier.mode = "error"
        report(server, session, [{"category": CHECKED, "value": 2, "context": 0}])
        events = receiver.wait_for(2)
        assert [(e["type"], e["data"]["value"], e["data"]["decidedBy"]) for e in events] == [
            ("score.rejected", 1, "verifier"), ("score.quarantined", 2, "verifier")]
        assert events[0]["data"]["reason"] == "impossible time: 0.2 s" and "HTTP 500" in events[1]["data"]["reason"]
        assert events[0]["data"]["playerID"] == player_id and receiver.bad_signatures == []

        # The node stops (kill -9) while the verifier is thinking: the submission is left verifying, then quarantined.
        verifier.mode = "slow"
        def send_and_lose_the_answer():
            try:
                server.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
                    {"category": CHECKED, "value": 3, "context": 0}]}, device(session))
            except OSError:
                pass  # the server was killed before it answered

        thread = threading.Thread(target=send_and_lose_the_answer, daemon=True)
        asked = len(verifier.questions)
        thread.start()
        deadline = time.time() + 10
        while len(verifier.questions) == asked and time.time() < deadline:
            time.sleep(0.02)
        server.kill()
        server.start()
        status, own, _ = server.call("GET", "/v1/score-submissions", headers=device(session))
        assert status == 200 and own["submissions"][0]["state"] == "verifying", own
        status, _, _ = server.call("POST", "/admin/v1/clock", {"seconds": 120}, bearer(ADMIN_KEY))
        assert status == 200
        deadline = time.time() + 20
        while time.time() < deadline:
            _, own, _ = server.call("GET", "/v1/score-submissions", headers=device(session))
            if own["submissions"][0]["state"] != "verifying":
                break
            time.sleep(0.2)
        assert own["submissions"][0]["state"] == "quarantined" and "stopped" in own["submissions"][0]["reason"], own
        events = receiver.wait_for(3)
        assert events[2]["type"] == "score.quarantined" and events[2]["data"]["value"] == 3
    finally:
        receiver.down()
        verifier.close()
        server.stop()
