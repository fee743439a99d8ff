"""The studio console in real headless Chromium (Selenium), against the real `gamecenter` binary.

Console users are made with `gamecenter console add-user` before the server starts. An owner signs in, finds a
player by account name and bans them: the player's connected device hears its session end on the realtime channel,
its token is refused, and signing in again answers `account.banned`; the ban is on the audit page. A read-only user
sees no action it may not take, and a form sent anyway gets the page naming the role needed. axe-core checks every
console page (serious and critical violations fail), and every page is saved as screenshots at 1280x800 and 390x844
(and full height) in $WEBAPP_ARTIFACTS (default Tests/Browser/artifacts, git-ignored), named `console-*`.

Needs GAMECENTER_BIN (scripts/test.sh exports it), Debian's chromium and chromium-driver, and the PyPI packages
selenium, axe-selenium-python, websocket-client and pytest.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

import websocket

from test_webapp import GAME, ROOT, GameDevice, Pages, api, browser, new_players, wait_for_next_page  # noqa: F401 (browser is a fixture)

PASSWORD = "console-password-1"


def add_user(binary, database, name, role):
    """Makes a console user with the CLI, the password on standard input."""
    result = subprocess.run([binary, "console", "add-user", "--database", database, "--name", name, "--role", role, "--password-stdin"],
                            input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"added console user {name}" in result.stdout


@pytest.fixture(scope="module")
def server():
    """A real `gamecenter serve` on a free port and a temporary SQLite database with two console users, `owner` and
    `reader` (read-only), made with the CLI first; the games are a copy of the repository's (the console can edit
    manifests)."""
    binary = os.environ.get("GAMECENTER_BIN")
    if not binary:
        pytest.fail("GAMECENTER_BIN must name the gamecenter binary (scripts/test.sh exports it)")
    work = tempfile.mkdtemp(prefix="console-")
    games = shutil.copytree(ROOT / "games", os.path.join(work, "games"))
    database = f"sqlite:{work}/db.sqlite"
    add_user(binary, database, "owner", "owner")
    add_user(binary, database, "reader", "read-only")
    listed = subprocess.run([binary, "console", "list-users", "--database", database], capture_output=True, text=True, timeout=60)
    assert re.search(r"^owner\towner\t", listed.stdout, re.MULTILINE) and re.search(r"^reader\tread-only\t", listed.stdout, re.MULTILINE)
    out = open(os.path.join(work, "out"), "w+")
    process = subprocess.Popen([binary, "serve", "--port", "0", "--udp-port", "0", "--database", database, "--games", games,
                                "--console-sample-seconds", "1"],
                               stdout=out, stderr=subprocess.STDOUT)
    url = None
    for _ in range(200):
        out.seek(0)
        match = re.search(r"^listening on (\S+)", out.read(), re.MULTILINE)
        if match:
            url = match.group(1)
            break
        if process.poll() is not None:
            break
        time.sleep(0.05)
    if url is None:
        out.seek(0)
        process.kill()
        pytest.fail("the server did not start:\n" + out.read())
    yield url
    process.terminate()
    process.wait(timeout=15)


def console_sign_in(pages, name):
    pages.driver.delete_all_cookies()
    pages.open("/console")
    assert pages.driver.current_url.endswith("/console/sign-in")
    pages.fill({"name": name, "password": PASSWORD})
    pages.submit("/console/sign-in")


def status_of(call):
    """The HTTP status and error code a JSON API call answered with."""
    try:
        call()
        return 200, None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()).get("code")


def test_an_owner_finds_a_player_and_bans_them_and_their_device_is_signed_out(server, browser):
    pages = Pages(browser, server)
    (account, player_id, _), = new_players(server, "Mallory")
    api(server, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [{"category": "tapper.taps", "value": 77, "context": 0}]},
        token=api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"})["token"])
    # The player's game on a device: a session and its open realtime channel.
    device_token = api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"})["token"]
    channel = websocket.create_connection(
        server.replace("http://", "ws://") + "/v1/realtime",
        header=[f"Authorization: Bearer {device_token}", f"X-GameCenter-Bundle-ID: {GAME}", "X-GameCenter-Environment: sandbox"], timeout=10)
    assert "hello" in json.loads(channel.recv())

    pages.open("/console/players")
    assert browser.current_url.endswith("/console/sign-in")
    pages.check("console-sign-in")
    pages.fill({"name": "owner", "password": "wrong-password"})
    pages.submit("/console/sign-in")
    assert "the account name or password is wrong" in pages.main_text()
    pages.fill({"name": "owner", "password": PASSWORD})
    pages.submit("/console/sign-in")
    cookie = browser.get_cookie("gc_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/console"
    assert "owner" in browser.find_element(By.TAG_NAME, "header").text

    pages.fill({"q": account})
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "main form[action='/console/players'] button"))
    assert "Mallory" in pages.main_text()
    pages.check("console-players")
    pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "Mallory"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Mallory"
    text = pages.main_text()
    assert player_id in text and "Tapper" in text and "tapper.taps" in text
    pages.check("console-player")

    pages.fill({"reason": "impossible tap rate"})
    pages.submit(f"/console/players/{player_id.replace(':', '%3A')}/ban")
    text = pages.main_text()
    # Four sessions: the sign-up's, the sign-in's of new_players, the one that reported the score, and the device's.
    assert "The player is banned; 4 session(s) ended." in text and "impossible tap rate" in text
    pages.check("console-player-banned")

    # The device's realtime channel hears its session end and closes; its token and a new sign-in are refused.
    frames = []
    while not frames or "sessionEnded" not in frames[-1]:
        frames.append(json.loads(channel.recv()))
    assert frames[-1]["sessionEnded"]["reason"] == "banned", frames
    with pytest.raises(websocket.WebSocketConnectionClosedException):
        while True:
            channel.recv()
    assert status_of(lambda: api(server, "GET", "/v1/me", token=device_token)) == (401, "account.session_revoked")
    assert status_of(lambda: api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"})) == (403, "account.banned")

    pages.open("/console/audit")
    audit = pages.main_text()
    assert "player.banned" in audit and "console:owner" in audit and "impossible tap rate" in audit
    pages.check("console-audit")

    # Every other page, as the owner sees it.
    pages.open("/console/games")
    pages.check("console-games")
    pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "Tapper"))
    assert "tapper.taps" in pages.main_text() and browser.find_elements(By.NAME, "manifest")
    pages.check("console-game")
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "main a[href*='/leaderboards/tapper.taps']"))
    assert "Mallory" in pages.main_text()
    pages.check("console-board")
    # A player's game waits for a match (its channel open): the live page shows the queue and the connected device.
    (waiter, _, _), = new_players(server, "Waiter")
    waiting = GameDevice(server, waiter)
    waiting.call("POST", "/v1/matchmaking/requests", {"requestID": "wait-1", "minPlayers": 2, "maxPlayers": 2, "playerGroup": 0,
                                                     "playerAttributes": 0, "hosted": False, "playersToInvite": []})
    # The charts sample every second here (--console-sample-seconds 1): a few samples are drawn as lines.
    time.sleep(3)
    pages.open("/console/live")
    live = pages.main_text()
    assert "healthy" in live and "(connected devices): 1" in live
    assert re.search(r"Tapper sandbox 1 [0-9.]+ s [0-9.]+ s [0-9.]+ s", live), live
    chart = urllib.request.urlopen(urllib.request.Request(
        server + "/console/live/charts/requests.svg", headers={"Cookie": f"gc_console={browser.get_cookie('gc_console')['value']}"}), timeout=10)
    assert chart.headers["Content-Type"] == "image/svg+xml" and b"<polyline" in chart.read()
    pages.check("console-live")
    waiting.close()

    # Two players of the Ranked queue are matched: the queue's page (from the game's page) shows the match, the
    # requests' waits, the rules' answers and the charts, from the counts not stored yet.
    ranked = []
    for (account, _, _), skill in zip(new_players(server, "Ranked1", "Ranked2"), [10, 15]):
        device = GameDevice(server, account)
        device.call("POST", "/v1/matchmaking/requests", {
            "requestID": f"ranked-{skill}", "minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": False,
            "playersToInvite": [], "queueName": "com.example.tapper.Ranked", "properties": {"region": "eu", "skill": skill}})
        ranked.append(device)
    for device in ranked:
        device.wait_for("matchFound")
        device.close()
    pages.open("/console/games")
    pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "Tapper"))
    pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "com.example.tapper.Ranked"))
    queue = pages.main_text()
    assert "Rule set com.example.tapper.SkillRules" in queue and "2 to 2 players" in queue, queue
    traffic, rules = browser.find_elements(By.CSS_SELECTOR, "main table")

    def cells(table):
        return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    # One period: 2 matched requests of 2 players, none cancelled, in one match; the skill rule said true once.
    (period,) = cells(traffic)
    assert period[1:4] == ["2", "2", "0"] and period[7] == "1", period
    skill = next(row for row in cells(rules) if row[0].startswith("SkillDifference"))
    assert skill[1:] == ["MATCH", "1", "0", "0", "0", "0"], skill
    chart = urllib.request.urlopen(urllib.request.Request(
        browser.find_element(By.CSS_SELECTOR, "main figure img").get_attribute("src"),
        headers={"Cookie": f"gc_console={browser.get_cookie('gc_console')['value']}"}), timeout=10)
    assert chart.headers["Content-Type"] == "image/svg+xml" and b"<polyline" in chart.read()
    # A player of another region waits alone: the page says why, stage by stage, as the player's own device would.
    (loner_account, loner_id, _), = new_players(server, "Loner")
    loner = GameDevice(server, loner_account)
    loner.call("POST", "/v1/matchmaking/requests", {
        "requestID": "loner-1", "minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": False,
        "playersToInvite": [], "queueName": "com.example.tapper.Ranked", "properties": {"region": "us", "skill": 50}})
    pages.fill({"player": loner_id})
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "form.picker button"))
    why = pages.main_text()
    assert f"{loner_id} waits with request loner-1 for" in why and "no other request waits in its queue" in why, why
    assert "not enough data for a wait estimate (2 matched in 15 minutes, 5 needed)" in why, why
    stages, expansions, _, _ = browser.find_elements(By.CSS_SELECTOR, "main table")
    stages = cells(stages)
    assert [row[0] for row in stages] == ["size", "SameVersion", "SameRegion", "SkillDifference"], stages
    (expansion,) = cells(expansions)
    assert expansion[0].startswith("SkillDifference") and expansion[2] == "0 of 2" and expansion[3] == "20", expansion
    pages.check("console-queue")
    loner.call("DELETE", "/v1/matchmaking/requests/loner-1")
    loner.close()
    pages.fill({"player": loner_id})
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "form.picker button"))
    assert f"{loner_id} waits with no match request in this game's queues (sandbox)." in pages.main_text()
    pages.open("/console/keys")
    # The owner makes a key, then rotates it keeping the old one a week: the page shows the successor's private key once.
    pages.fill({"name": "match servers"})
    browser.find_element(By.CSS_SELECTOR, "input[name='permission'][value='players:read']").click()
    pages.submit("/console/keys")
    made = pages.main_text()
    assert "BEGIN PRIVATE KEY" in made, made
    old_key = re.search(r"Key (\w+) was made", made).group(1)
    Select(browser.find_element(By.ID, f"grace-{old_key}")).select_by_visible_text("7 days")
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, f"button[aria-label='Rotate key {old_key}']"))
    rotated = pages.main_text()
    assert f"to replace {old_key}" in rotated and f"key {old_key} keeps working until" in rotated, rotated
    pages.check("console-keys")
    pages.open("/console/webhooks")
    pages.check("console-webhooks")
    # An endpoint nobody listens at: its page lists what the server tried to post to it.
    pages.fill({"url": "http://127.0.0.1:9/hook"})
    browser.find_element(By.CSS_SELECTOR, "input[name='event'][value='score.accepted']").click()
    pages.submit("/console/webhooks")
    assert "Signing secret" in pages.main_text()
    (hooked, _, _), = new_players(server, "Hooked")
    device = GameDevice(server, hooked)
    device.call("POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [{"category": "tapper.taps", "value": 5, "context": 0}]})
    device.close()
    pages.open("/console/webhooks")
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "main a[href^='/console/webhooks/wh']"))
    assert "Posted to http://127.0.0.1:9/hook" in pages.main_text()
    deliveries = pages.driver.current_url
    # The report becomes a delivery, tried at once and refused (nothing listens on port 9): tried again later.
    for _ in range(100):
        if re.search(r"score\.accepted pending [1-9]", pages.main_text()):
            break
        time.sleep(0.1)
        pages.open(deliveries.removeprefix(server))
    assert re.search(r"score\.accepted pending [1-9]", pages.main_text()), pages.main_text()
    pages.check("console-deliveries")
    pages.open("/console/users")
    assert "reader" in pages.main_text()
    pages.check("console-users")

    # The ban is lifted: the player signs in again.
    pages.open(f"/console/players/{player_id.replace(':', '%3A')}")
    pages.submit(f"/console/players/{player_id.replace(':', '%3A')}/unban")
    assert "The ban is lifted" in pages.main_text()
    assert status_of(lambda: api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"}))[0] == 200


def test_a_read_only_user_sees_no_actions_and_is_refused_a_form_sent_anyway(server, browser):
    pages = Pages(browser, server)
    (account, player_id, _), = new_players(server, "Innocent")
    console_sign_in(pages, "reader")
    path = f"/console/players/{player_id.replace(':', '%3A')}"
    pages.open(path)
    text = pages.main_text()
    assert "Ban this player" not in text and "Banning and unbanning need the role support or higher." in text
    assert not browser.find_elements(By.CSS_SELECTOR, "main form[method='post']")
    pages.check("console-player-read-only")
    pages.open("/console/keys")
    assert "Making, rotating and revoking keys needs the role owner." in pages.main_text()

    # A ban form sent anyway (as a forged page would) is refused with the role it needs, and nothing is banned.
    token = browser.find_element(By.CSS_SELECTOR, "header form[action='/console/sign-out'] input[name='csrf']").get_attribute("value")
    html = browser.find_element(By.TAG_NAME, "html")
    browser.execute_script("""
        const form = document.createElement('form'); form.method = 'post'; form.action = arguments[0];
        for (const [name, value] of [['csrf', arguments[1]], ['reason', 'no reason']]) {
            const input = document.createElement('input'); input.type = 'hidden'; input.name = name; input.value = value; form.append(input);
        }
        document.body.append(form); form.submit();""", path + "/ban", token)
    wait_for_next_page(browser, html)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not allowed for your role"
    assert "to ban or unban a player you need the role support or higher; you are signed in as read-only" in pages.main_text()
    pages.check("console-refused")
    assert status_of(lambda: api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"}))[0] == 200
    pages.open("/console/audit")
    audit = pages.main_text()
    assert "console:reader console.signed_in" in audit and "console:reader player.banned" not in audit
