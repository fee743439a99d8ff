"""The Game Center web app in real headless Chromium (Selenium), against the real `gamecenter` binary.

Two players sign up through the forms, become friends by account name, one reports a score through the JSON API
and sees it ranked on the leaderboard page. A game invites a player whose game is not running; they accept in the
browser and their game, started afterwards, finds the invitation accepted and joins the match; a decline in the
browser reaches the inviter's game; friends chosen on a game's page reach that game once. Games are played here
through the JSON API and the realtime channel (websocket-client, which Selenium depends on), as the SDK would.
axe-core checks every page (serious and critical violations fail),
and every page is saved as screenshots at 1280x800 and 390x844 (and full height) in $WEBAPP_ARTIFACTS
(default Tests/Browser/artifacts, git-ignored).

Needs GAMECENTER_BIN (scripts/test.sh exports it), Debian's chromium and chromium-driver, and the PyPI packages
selenium, axe-selenium-python and pytest.
"""

import base64
import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import websocket
from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("WEBAPP_ARTIFACTS", Path(__file__).parent / "artifacts"))
SIZES = [(1280, 800), (390, 844)]
GAME = "com.example.tapper"


@pytest.fixture(scope="module")
def server():
    """A real `gamecenter serve` on a free port, a temporary SQLite database and the repository's games folder."""
    binary = os.environ.get("GAMECENTER_BIN")
    if not binary:
        pytest.fail("GAMECENTER_BIN must name the gamecenter binary (scripts/test.sh exports it)")
    work = tempfile.mkdtemp(prefix="webapp-")
    out = open(os.path.join(work, "out"), "w+")
    process = subprocess.Popen(
        [binary, "serve", "--port", "0", "--udp-port", "0", "--database", f"sqlite:{work}/db.sqlite",
         "--games", str(ROOT / "games")],
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


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium through Debian's chromedriver (no driver download)."""
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800",
                     "--lang=en-US"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")), options=options)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


class Pages:
    """Opens pages, checks each with axe-core and saves its screenshots."""

    def __init__(self, driver, url):
        self.driver = driver
        self.url = url
        self.checked = []
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def open(self, path):
        self.driver.get(self.url + path)

    def check(self, name):
        """Runs axe-core on the current page (fails on serious/critical violations) and saves its screenshots."""
        for width, height in SIZES:
            self.screenshot(name, width, height)
        axe = Axe(self.driver)
        axe.inject()
        results = axe.run()
        severe = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
        (ARTIFACTS / f"{name}-axe.json").write_text(json.dumps(results["violations"], indent=2))
        assert not severe, f"{name}: " + axe.report(severe)
        self.checked.append(name)

    def screenshot(self, name, width, height):
        """The viewport at width x height, and the whole page at that width."""
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500}
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
        (ARTIFACTS / f"{name}-{width}x{height}.png").write_bytes(base64.b64decode(shot["data"]))
        page_height = self.driver.execute_script("return document.documentElement.scrollHeight")
        overflow = self.driver.execute_script("return document.documentElement.scrollWidth") - width
        assert overflow <= 0, f"{name} overflows {width} px wide by {overflow} px"
        full = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": max(page_height, height), "scale": 1}})
        (ARTIFACTS / f"{name}-{width}-full.png").write_bytes(base64.b64decode(full["data"]))
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def fill(self, fields):
        for name, value in fields.items():
            element = self.driver.find_element(By.NAME, name)
            if element.get_attribute("type") == "radio":
                self.driver.find_element(By.CSS_SELECTOR, f"input[name='{name}'][value='{value}']").click()
            else:
                element.clear()
                element.send_keys(value)

    def submit(self, form_action, button_text=None):
        def button():
            form = self.driver.find_element(By.CSS_SELECTOR, f"main form[action='{form_action}']")
            buttons = form.find_elements(By.CSS_SELECTOR, "button[type=submit]")
            return next(b for b in buttons if button_text is None or b.text == button_text)
        self.click_and_wait(button)

    def click_and_wait(self, find):
        """Clicks what `find` returns and waits until the next page replaced this one.

        Chromium's inspector now and then answers a click with "Node with given id does not belong to the
        document" while a page is settling; the element is found again and clicked once more then.
        """
        html = self.driver.find_element(By.TAG_NAME, "html")
        for attempt in range(3):
            element = find()
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
            try:
                element.click()
                break
            except WebDriverException as error:
                if "does not belong to the document" not in str(error) or attempt == 2:
                    raise
                time.sleep(0.2)
        wait_for_next_page(self.driver, html)

    def main_text(self):
        return self.driver.find_element(By.TAG_NAME, "main").text


def wait_for_next_page(driver, html):
    """Waits until `html`, the root of the page shown before, is gone. Chromium answers a question about a node of a
    replaced document either as stale or with "Node with given id does not belong to the document": both mean gone."""
    def gone(_):
        try:
            return expected_conditions.staleness_of(html)(driver)
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
    WebDriverWait(driver, 10).until(gone)


def api(url, method, path, body=None, token=None):
    """A JSON API call as the Tapper game's device (sandbox)."""
    headers = {"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url + path, method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read()
        return json.loads(text) if text else None


class GameDevice:
    """A player's Tapper game on a device: a session of the game and its realtime channel, read in a thread that
    answers the server's heartbeats and keeps the events."""

    def __init__(self, url, account):
        self.url = url
        self.token = api(url, "POST", "/v1/sessions", {"account": account, "password": "password-1"})["token"]
        self.socket = websocket.create_connection(
            url.replace("http://", "ws://") + "/v1/realtime",
            header=[f"Authorization: Bearer {self.token}", f"X-GameCenter-Bundle-ID: {GAME}", "X-GameCenter-Environment: sandbox"],
            timeout=30)
        # The channel is open (matchmaking takes this device's requests) once the server said hello.
        assert "hello" in json.loads(self.socket.recv())
        self.socket.settimeout(None)  # the reader waits for heartbeats and events as long as the test runs
        self.events = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                frame = json.loads(self.socket.recv())
            except Exception:
                return
            if "heartbeat" in frame:
                self.socket.send(json.dumps({"heartbeat": {}}))
            elif "event" in frame:
                event = frame["event"]["_0"]
                with self.changed:
                    self.events.append((event["kind"], json.loads(event["payload"])))
                    self.changed.notify_all()

    def wait_for(self, kind, accept=lambda payload: True, timeout=10):
        """The payload of the first event of `kind` that `accept` takes, waiting up to `timeout` seconds."""
        def found():
            return next((payload for k, payload in self.events if k == kind and accept(payload)), None)
        with self.changed:
            assert self.changed.wait_for(lambda: found() is not None, timeout=timeout), f"no {kind} event; got {self.events}"
            return found()

    def call(self, method, path, body=None):
        return api(self.url, method, path, body, token=self.token)

    def close(self):
        self.socket.close()


def new_players(server, *aliases):
    """Signs up a player per alias through the JSON API (password `password-1`): (account, player id, a session token)
    for each."""
    players = []
    for alias in aliases:
        account = f"{alias.lower()}-{uuid.uuid4().hex[:6]}"
        player_id = api(server, "POST", "/v1/accounts", {"account": account, "password": "password-1", "alias": alias})["player"]["playerID"]
        token = api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"})["token"]
        players.append((account, player_id, token))
    return players


def text_lines(browser, element):
    """How many lines the text of `element` takes as laid out."""
    return browser.execute_script("""
        const range = document.createRange(); range.selectNodeContents(arguments[0]);
        return new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top))).size;""", element)


def sign_in(pages, account):
    pages.driver.delete_all_cookies()
    pages.open("/sign-in")
    pages.fill({"account": account, "password": "password-1", "environment": "sandbox"})
    pages.submit("/sign-in")


def test_two_players_befriend_by_name_and_see_a_reported_score_ranked(server, browser):
    pages = Pages(browser, server)
    ann, bob = f"ann-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"

    pages.open("/")
    assert "Sign in" in browser.page_source and "Tapper" in pages.main_text()
    assert browser.find_element(By.LINK_TEXT, "HTTP API (OpenAPI 3.1)").get_attribute("href").endswith("/openapi.yaml")
    pages.check("welcome")

    # Bob signs up, then signs out.
    pages.open("/sign-up")
    pages.check("sign-up")
    pages.fill({"account": bob, "password": "password-1", "alias": "Bob", "environment": "sandbox"})
    pages.submit("/sign-up")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Bob"
    cookie = browser.get_cookie("gc_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/"
    assert "gct_" not in browser.current_url
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "header form[action='/sign-out'] button"))
    assert browser.get_cookie("gc_session") is None

    # A wrong password is told on the form.
    pages.open("/sign-in")
    pages.fill({"account": bob, "password": "wrong-password", "environment": "sandbox"})
    pages.submit("/sign-in")
    assert "the account name or password is wrong" in pages.main_text()
    pages.check("sign-in-error")

    # Ann signs up and asks Bob, by account name, to be friends.
    pages.open("/sign-up")
    pages.fill({"account": ann, "password": "password-1", "alias": "Ann", "environment": "sandbox"})
    pages.submit("/sign-up")
    assert "Sandbox" in browser.find_element(By.TAG_NAME, "header").text
    pages.check("me")
    pages.open("/friends")
    pages.fill({"name": bob, "message": "Tap with me!"})
    pages.submit("/friends/request")
    assert "Your friend request was sent." in pages.main_text()
    assert "Bob" in pages.main_text()
    pages.check("friends-sent")

    # Bob signs in and accepts.
    browser.delete_all_cookies()
    pages.open("/sign-in")
    pages.check("sign-in")
    pages.fill({"account": bob, "password": "password-1", "environment": "sandbox"})
    pages.submit("/sign-in")
    pages.open("/friends")
    assert "Tap with me!" in pages.main_text()
    pages.check("friends-request")
    pages.click_and_wait(lambda: browser.find_element(By.XPATH, "//form[@action='/friends/accept']/button"))
    assert "You are now friends." in pages.main_text()
    friends = browser.find_element(By.XPATH, "//h2[text()='Your friends']/following-sibling::ul[1]").text
    assert "Ann" in friends

    # Both report scores through the JSON API, as their game would.
    for account, value in [(ann, 1234), (bob, 900)]:
        session = api(server, "POST", "/v1/sessions", {"account": account, "password": "password-1"})
        api(server, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [{"category": "tapper.taps", "value": value, "context": 0}]},
            token=session["token"])
        api(server, "POST", "/v1/achievements", {"reportID": str(uuid.uuid4()), "achievements": [
            {"identifier": "tapper.first", "percentComplete": 100}]}, token=session["token"])

    # A player whose alias is one long word (the longest allowed) is on the board too.
    (_, _, long_token), = new_players(server, "Maximiliantheunbeatabletapper007")
    api(server, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [{"category": "tapper.taps", "value": 10, "context": 0}]},
        token=long_token)

    # Bob sees the board, Ann first, himself highlighted.
    pages.open(f"/games/{GAME}/leaderboards")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.board tbody tr")
    assert rows[0].text.startswith("1 Ann") and "1,234 taps" in rows[0].text
    assert rows[1].text.startswith("2 Bob") and "900 taps" in rows[1].text
    me = browser.find_element(By.CSS_SELECTOR, "table.board tr.me")
    assert "Bob" in me.text and "900 taps" in me.text
    assert "You are #2 of 3" in pages.main_text()
    pages.check("leaderboard")
    # At 390 px (the last size checked) the long alias wraps inside its cell; the headers and ranks keep one line.
    for cell in browser.find_elements(By.CSS_SELECTOR, "table.board th, table.board td.rank, table.board td.num"):
        if cell.is_displayed():
            assert text_lines(browser, cell) == 1, f"'{cell.text}' breaks over {text_lines(browser, cell)} lines at 390 px"
    pages.open(f"/games/{GAME}/leaderboards?players=friends&time=week")
    assert "Ann" in pages.main_text()
    pages.check("leaderboard-friends-week")

    # Ann's view: she is first and highlighted.
    browser.delete_all_cookies()
    pages.open("/sign-in")
    pages.fill({"account": ann, "password": "password-1", "environment": "sandbox"})
    pages.submit("/sign-in")
    pages.open(f"/games/{GAME}/leaderboards")
    me = browser.find_element(By.CSS_SELECTOR, "table.board tr.me")
    assert me.text.startswith("1") and "Ann" in me.text and "1,234 taps" in me.text

    pages.open(f"/games/{GAME}/achievements")
    # Two of the three players who played (Ann, Bob, the long alias) completed it.
    assert "First tap" in pages.main_text() and "66.7 % of players" in pages.main_text()
    assert "Hidden achievement" in pages.main_text()
    image = browser.find_element(By.CSS_SELECTOR, ".achievement img")
    assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", image)
    pages.check("achievements")
    Select(browser.find_element(By.ID, "compare")).select_by_visible_text("Bob")
    pages.submit(f"/games/{GAME}/achievements", "Compare")
    versus = browser.find_element(By.CSS_SELECTOR, ".achievement.done .versus").text.replace("\n", " ")
    assert versus.startswith("You completed ") and " Bob completed " in versus
    pages.check("achievements-compare")

    pages.open("/account")
    pages.check("account")
    # An address with no page (a typo) gets the app's page, with the way back.
    pages.open("/freinds")
    assert "there is no page at /freinds" in pages.main_text()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Page not found"
    pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "Back to Game Center"))
    assert browser.current_url == server + "/"
    pages.open("/freinds")
    pages.check("error-404")
    pages.open("/")
    assert "10 achievement points" in pages.main_text().replace("\n", " ")
    assert "Tapper" in pages.main_text()
    pages.check("me-after")

    # A form from elsewhere (no token) is refused.
    html = browser.find_element(By.TAG_NAME, "html")
    browser.execute_script("""
        const form = document.createElement('form'); form.method = 'post'; form.action = '/sign-out-everywhere';
        document.body.appendChild(form); form.submit();""")
    wait_for_next_page(browser, html)
    assert "this form expired or did not come from this site" in pages.main_text()
    pages.check("error-403")

    # Sign out everywhere ends the API sessions too.
    pages.open("/account")
    session = api(server, "POST", "/v1/sessions", {"account": ann, "password": "password-1"})
    pages.submit("/sign-out-everywhere")
    assert browser.get_cookie("gc_session") is None
    with pytest.raises(urllib.error.HTTPError) as refused:
        api(server, "GET", "/v1/me", token=session["token"])
    assert refused.value.code == 401


def test_an_invitation_accepted_in_the_browser_reaches_the_game_and_friends_are_chosen_to_play(server, browser):
    pages = Pages(browser, server)
    (cat, cat_id, cat_token), (dan, dan_id, dan_token) = new_players(server, "Cat", "Dan")
    api(server, "POST", "/v1/friend-requests", {"playerIDs": [dan_id]}, token=cat_token)
    request = api(server, "GET", "/v1/friend-requests", token=dan_token)["requests"][0]
    api(server, "POST", f"/v1/friend-requests/{request['requestID']}/accept", token=dan_token)

    # Cat's game invites Dan, whose game is not running.
    cat_game = GameDevice(server, cat)
    match_request = {"minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": False,
                     "playersToInvite": [dan_id], "inviteMessage": "Tap with me tonight?"}
    cat_game.call("POST", "/v1/matchmaking/requests", dict(match_request, requestID="cat-1"))

    # Dan accepts in the browser.
    sign_in(pages, dan)
    pages.open("/invitations")
    text = pages.main_text()
    assert "Cat invites you to play Tapper" in text and "“Tap with me tonight?”" in text
    assert re.search(r"Expires \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in 59 minutes\)", text), text
    assert cat_id not in browser.page_source
    assert browser.find_element(By.CSS_SELECTOR, "header nav a[aria-current='page']").text == "Invitations"
    pages.check("invitations")
    pages.submit("/invitations/accept")
    text = pages.main_text()
    assert "Invitation accepted." in text and "Start Tapper on your device to join the match." in text
    pages.check("invitations-accepted")

    # Dan's game starts: the invitation is there, accepted; joining it starts the match for both games.
    dan_game = GameDevice(server, dan)
    invitations = dan_game.call("GET", "/v1/invitations")["invitations"]
    assert [(i["inviterAlias"], "acceptedAt" in i) for i in invitations] == [("Cat", True)]
    dan_game.call("POST", f"/v1/invitations/{invitations[0]['invitationID']}/accept", {"requestID": "dan-1"})
    cat_match = cat_game.wait_for("matchFound")
    assert dan_game.wait_for("matchFound")["matchID"] == cat_match["matchID"]
    assert sorted(cat_match["players"]) == sorted([cat_id, dan_id])
    pages.open("/invitations")
    assert "No invitations are waiting for you." in pages.main_text()
    pages.check("invitations-empty")

    # A decline in the browser reaches the inviter's game.
    cat_game.call("POST", "/v1/matchmaking/requests", dict(match_request, requestID="cat-2"))
    pages.open("/invitations")
    pages.submit("/invitations/decline")
    assert "Invitation declined." in pages.main_text()
    answer = cat_game.wait_for("inviteeAnswered", lambda payload: payload["requestID"] == "cat-2")
    assert answer["state"] == "declined" and answer["playerID"] == dan_id
    cat_game.call("DELETE", "/v1/matchmaking/requests/cat-2")

    # A form from elsewhere (no token) answers nothing.
    cat_game.call("POST", "/v1/matchmaking/requests", dict(match_request, requestID="cat-3"))
    pages.open("/invitations")
    invitation = browser.find_element(By.CSS_SELECTOR, "form[action='/invitations/accept'] input[name='invitation']").get_attribute("value")
    html = browser.find_element(By.TAG_NAME, "html")
    browser.execute_script("""
        const form = document.createElement('form'); form.method = 'post'; form.action = '/invitations/accept';
        const field = document.createElement('input'); field.name = 'invitation'; field.value = arguments[0];
        form.appendChild(field); document.body.appendChild(form); form.submit();""", invitation)
    wait_for_next_page(browser, html)
    assert "this form expired or did not come from this site" in pages.main_text()
    assert "acceptedAt" not in dan_game.call("GET", "/v1/invitations")["invitations"][0]
    cat_game.call("DELETE", "/v1/matchmaking/requests/cat-3")

    # A friend invited while the inviter's matchmaking screen is shown (invite-more) answers on the same page.
    cat_game.call("POST", "/v1/matchmaking/requests", dict(match_request, requestID="cat-4", maxPlayers=3, playersToInvite=[]))
    cat_game.call("POST", "/v1/matchmaking/requests/cat-4/invitations", {"playerIDs": [dan_id], "inviteMessage": "One more?"})
    pages.open("/invitations")
    text = pages.main_text()
    assert "Cat invites you to play Tapper" in text and "“One more?”" in text, text
    pages.check("invitations-invited-while-shown")
    pages.submit("/invitations/accept")
    assert "Invitation accepted." in pages.main_text()
    # Dan's game, running, finds it accepted and joins: Cat's game hears the answer for the request it invited from.
    invitation = next(i for i in dan_game.call("GET", "/v1/invitations")["invitations"] if i.get("message") == "One more?")
    assert "acceptedAt" in invitation
    dan_game.call("POST", f"/v1/invitations/{invitation['invitationID']}/accept", {"requestID": "dan-4"})
    answer = cat_game.wait_for("inviteeAnswered", lambda payload: payload["requestID"] == "cat-4")
    assert answer["state"] == "accepted" and answer["playerID"] == dan_id

    # Play with friends: Dan picks Cat for Tapper; Dan's game claims the choice, once.
    pages.open(f"/games/{GAME}/play")
    assert "Cat" in pages.main_text()
    pages.check("play-with-friends")
    browser.find_element(By.XPATH, "//label[text()='Cat']").click()
    pages.submit(f"/games/{GAME}/play")
    text = pages.main_text()
    assert "Your friends are chosen." in text and "Waiting for Tapper to start: Cat." in text
    pages.check("play-with-friends-waiting")
    assert dan_game.wait_for("playWithFriends")["playerIDs"] == [cat_id]
    assert dan_game.call("POST", "/v1/matchmaking/play-with-friends/claim") == {"choices": [{"bundleID": GAME, "playerIDs": [cat_id]}]}
    assert dan_game.call("POST", "/v1/matchmaking/play-with-friends/claim") == {"choices": []}
    cat_game.close()
    dan_game.close()


def test_friend_requests_invitations_and_achievements_appear_without_a_reload(server, browser):
    pages = Pages(browser, server)
    (eve, eve_id, eve_token), (fay, _, fay_token) = new_players(server, "Eve", "Fay")

    # Eve has her friends page open; nothing is announced yet.
    sign_in(pages, eve)
    pages.open("/friends")
    live = browser.find_element(By.ID, "live")
    assert not live.is_displayed()
    html = browser.find_element(By.TAG_NAME, "html")

    def announced(text):
        WebDriverWait(browser, 10).until(lambda _: text in live.text, f"'{text}' never appeared; the region says '{live.text}'")

    # Fay asks by name: the request appears on Eve's open page, which was not reloaded.
    api(server, "POST", "/v1/friend-requests/by-name", {"names": [eve], "message": "hi"}, token=fay_token)
    announced("Fay wants to be your friend")
    assert browser.find_element(By.LINK_TEXT, "Fay wants to be your friend").get_attribute("href").endswith("/friends")
    request = api(server, "GET", "/v1/friend-requests", token=eve_token)["requests"][0]
    api(server, "POST", f"/v1/friend-requests/{request['requestID']}/accept", token=eve_token)

    # Fay's game invites Eve; Eve's game unlocks an achievement.
    fay_game = GameDevice(server, fay)
    fay_game.call("POST", "/v1/matchmaking/requests", {
        "requestID": "fay-1", "minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": False,
        "playersToInvite": [eve_id]})
    announced("Fay invites you to play Tapper")
    api(server, "POST", "/v1/achievements", {"reportID": str(uuid.uuid4()), "achievements": [
        {"identifier": "tapper.first", "percentComplete": 100}]}, token=eve_token)
    announced("Achievement unlocked in Tapper: ")
    assert html.is_displayed()  # still the same document
    pages.check("live-notices")
    fay_game.call("DELETE", "/v1/matchmaking/requests/fay-1")
    fay_game.close()

    # The stream itself: server-sent events that resume after the last one seen.
    cookie = browser.get_cookie("gc_session")["value"]
    stream = urllib.request.urlopen(urllib.request.Request(
        server + "/live", headers={"Cookie": f"gc_session={cookie}", "Last-Event-ID": "0"}), timeout=10)
    assert stream.headers["Content-Type"].startswith("text/event-stream")
    lines = []
    while len([line for line in lines if line.startswith("data: {\"")]) < 3:
        lines.append(stream.readline().decode().rstrip("\n"))
    stream.close()
    notices = [json.loads(line[len("data: "):]) for line in lines if line.startswith("data: {\"")]
    assert [n["text"] for n in notices][:2] == ["Fay wants to be your friend", "Fay invites you to play Tapper"]
    assert notices[2]["link"] == f"/games/{GAME}/achievements"
    # Signed out, the stream is refused (a page session is needed).
    with pytest.raises(urllib.error.HTTPError):
        opener = urllib.request.build_opener(NoRedirect)
        opener.open(urllib.request.Request(server + "/live"), timeout=10)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Turns a redirect into an HTTPError, to see the answer itself."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def test_a_game_signs_in_through_the_game_center_app(server, browser):
    pages = Pages(browser, server)
    gus = f"gus-{uuid.uuid4().hex[:6]}"
    player = api(server, "POST", "/v1/accounts", {"account": gus, "password": "password-1", "alias": "Gus"})["player"]
    request = api(server, "POST", "/v1/device-sign-ins")
    claim = {"secret": request["secret"]}

    # The game opens the page; the player, signed out, signs in there and comes back to confirm.
    browser.delete_all_cookies()
    pages.open(request["path"])
    assert browser.current_url.startswith(server + "/sign-in?next=")
    pages.fill({"account": gus, "password": "password-1", "environment": "sandbox"})
    pages.submit("/sign-in")
    assert browser.current_url == server + request["path"]
    assert "Tapper on your device asks to sign in to Game Center. Sign it in as Gus?" in pages.main_text()
    pages.check("device-sign-in")
    pending = urllib.request.urlopen(urllib.request.Request(
        server + f"/v1/device-sign-ins/{request['requestID']}/session", method="POST", data=json.dumps(claim).encode(),
        headers={"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Content-Type": "application/json"}), timeout=10)
    assert pending.status == 202
    pages.submit(request["path"])
    assert "Tapper on your device is signed in as Gus." in pages.main_text()
    pages.check("device-sign-in-done")

    # The game takes its session, once.
    session = api(server, "POST", f"/v1/device-sign-ins/{request['requestID']}/session", claim)
    assert session["player"]["playerID"] == player["playerID"]
    with pytest.raises(urllib.error.HTTPError) as gone:
        api(server, "POST", f"/v1/device-sign-ins/{request['requestID']}/session", claim)
    assert gone.value.code == 410


def test_a_presented_leaderboard_tells_the_game_the_choices_and_the_close(server, browser):
    """A game presents its leaderboard screen as the app's page: the game hears each page shown with the board and
    time scope the player chose (a link within the app is not a close), and hears the page left when the player
    closes the tab (the app's script, on pagehide); Done tells it at once."""
    [(account, _, _)] = new_players(server, "Gil")
    game = GameDevice(server, account)
    pages = Pages(browser, server)
    try:
        def changes(presentation):
            with game.changed:
                return [(p["change"], p.get("timeScope")) for kind, p in game.events
                        if kind == "screenPresentation" and p["presentationID"] == presentation]

        def wait_for_changes(presentation, expected):
            WebDriverWait(browser, 10).until(lambda _: changes(presentation) == expected,
                                             f"expected {expected}, got {changes(presentation)}")

        # Presented in a tab of its own, which the player closes after picking "This week".
        ticket = game.call("POST", "/v1/app-tickets", {"screen": "leaderboards", "category": "tapper.taps", "timeScope": "today"})
        first = browser.current_window_handle
        browser.switch_to.new_window("tab")
        browser.delete_all_cookies()
        pages.open(ticket["path"])
        wait_for_changes(ticket["presentationID"], [("shown", "today")])
        assert browser.find_element(By.CSS_SELECTOR, "form#screen-done button").text == "Done"
        pages.check("leaderboard-presented")
        pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "This week"))
        wait_for_changes(ticket["presentationID"], [("shown", "today"), ("shown", "week")])
        browser.close()
        browser.switch_to.window(first)
        wait_for_changes(ticket["presentationID"], [("shown", "today"), ("shown", "week"), ("left", None)])

        # Presented again; the player presses Done.
        ticket = game.call("POST", "/v1/app-tickets", {"screen": "achievements"})
        browser.delete_all_cookies()
        pages.open(ticket["path"])
        wait_for_changes(ticket["presentationID"], [("shown", None)])
        pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "form#screen-done button"))
        assert "You can close this tab and go back to your game." in pages.main_text()
        assert not browser.find_elements(By.ID, "screen-done")
        pages.check("screen-done")
        wait_for_changes(ticket["presentationID"], [("shown", None), ("done", None)])
    finally:
        game.close()


def turn(server, token, match, action, **fields):
    """A write in turn through the JSON API, with the version `match` was read at; returns the match after it."""
    body = {"action": action, "version": match["version"], "matchData": "", "nextParticipants": [], "turnTimeout": 0,
            "outcome": 0, "outcomes": [], "resolvedExchangeIDs": [], "scores": [], "achievements": []}
    body.update(fields)
    return api(server, "POST", f"/v1/turn-matches/{match['matchID']}/turn", body, token=token)


def find_turn_match(server, token, seats, group, invite=()):
    return api(server, "POST", "/v1/turn-matches", {"minPlayers": 2, "maxPlayers": seats, "playerGroup": group,
                                                     "playersToInvite": list(invite)}, token=token)


def test_the_turns_page_lists_turns_invitations_and_results_and_announces_a_turn(server, browser):
    pages = Pages(browser, server)
    (ann, _, ann_token), (bob, bob_id, bob_token), (cat, _, cat_token), (dan, _, dan_token) = new_players(
        server, "Ann", "Bob", "Cat", "Dan")
    api(server, "POST", "/v1/friend-requests/by-name", {"names": [bob], "message": None}, token=ann_token)
    request = api(server, "GET", "/v1/friend-requests", token=bob_token)["requests"][0]
    api(server, "POST", f"/v1/friend-requests/{request['requestID']}/accept", token=bob_token)

    # Ann invites Bob to a match of three; the invitation goes out with her first turn.
    invited = find_turn_match(server, ann_token, 3, 11, invite=[bob_id])
    turn(server, ann_token, invited, "endTurn", nextParticipants=[2, 1], turnTimeout=86400, message="your move")
    # Cat passes Bob the turn of another match, with a day to play it.
    mine = find_turn_match(server, cat_token, 2, 12)
    mine = find_turn_match(server, bob_token, 2, 12)
    turn(server, cat_token, mine, "endTurn", nextParticipants=[1], turnTimeout=86400, message="Cat played")
    # Dan wins a third against Bob.
    done = find_turn_match(server, dan_token, 2, 13)
    done = find_turn_match(server, bob_token, 2, 13)
    turn(server, dan_token, done, "endMatch", outcomes=[2, 3])

    sign_in(pages, bob)
    pages.open("/turns")
    main = pages.main_text()
    assert "Your turn\nTapper\nWith Cat and you\n“Cat played”" in main, main
    assert "the turn passes on in 23 hours" in main, main
    assert "Ann invites you to a match of Tapper\nWith Ann, an open seat and you" in main, main
    assert "waiting for a player to join" in main, main
    assert "Dan won and you lost" in main, main
    pages.check("turns")

    # Accepting in the browser: the match moves out of the invitations.
    pages.submit("/turns/accept")
    assert "Invitation accepted" in pages.main_text()
    assert "Ann invites you" not in pages.main_text()

    # A turn passed to Bob while the page is open is announced without a reload.
    live = browser.find_element(By.ID, "live")
    fresh = find_turn_match(server, dan_token, 2, 14)
    fresh = find_turn_match(server, bob_token, 2, 14)
    turn(server, dan_token, fresh, "endTurn", nextParticipants=[1])
    WebDriverWait(browser, 10).until(lambda _: "Your turn in Tapper" in live.text, f"the region says '{live.text}'")
    assert browser.find_element(By.LINK_TEXT, "Your turn in Tapper").get_attribute("href").endswith("/turns")


def save_game(server, token, name, data, device, based_on=()):
    """Saves `data` as a new version of the save `name` through the JSON API (upload, chunks, finish); returns the
    save's current versions."""
    upload = api(server, "POST", "/v1/saved-games/uploads", {
        "name": name, "basedOn": list(based_on), "deviceName": device, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()},
        token=token)
    size = upload["chunkBytes"]
    for index in range(upload["chunks"]):
        request = urllib.request.Request(
            f"{server}/v1/saved-games/uploads/{upload['uploadID']}/chunks/{index}", method="PUT", data=data[index * size:(index + 1) * size],
            headers={"X-GameCenter-Bundle-ID": GAME, "X-GameCenter-Environment": "sandbox", "Content-Type": "application/octet-stream",
                     "Authorization": f"Bearer {token}"})
        urllib.request.urlopen(request, timeout=10).read()
    return api(server, "POST", f"/v1/saved-games/uploads/{upload['uploadID']}/finish", token=token)["versions"]


def test_the_saves_page_shows_versions_and_conflicts_and_restores_keeps_and_deletes(server, browser):
    pages = Pages(browser, server)
    ((bob, _, token),) = new_players(server, "Bob")
    first = save_game(server, token, "slot 1", b"level one", "Bob's phone")
    second = save_game(server, token, "slot 1", b"level two", "Bob's phone", [first[0]["versionID"]])
    save_game(server, token, "slot 1", b"level three!", "Bob's tablet", [second[0]["versionID"]])
    save_game(server, token, "slot 2", b"a", "Bob's phone")
    conflict = save_game(server, token, "slot 2", b"bb", "Bob's tablet")
    assert len(conflict) == 2

    sign_in(pages, bob)
    pages.open("/saves")
    main = pages.main_text()
    assert "Tapper\nslot 1\nSaved" in main and "from Bob's tablet · 12 bytes" in main, main
    assert "slot 2\nTwo devices saved this from the same version: both are kept." in main, main
    assert "From Bob's phone" in main and "From Bob's tablet" in main, main
    pages.check("saves")

    # Restoring the newest older version of slot 1 makes it the current one.
    browser.find_element(By.CSS_SELECTOR, "main details summary").click()
    pages.submit("/saves/restore", "Restore")
    assert "That version is the save's current one now" in pages.main_text()
    listed = api(server, "GET", "/v1/saved-games", token=token)["saves"]
    assert [s["versionID"] for s in listed if s["name"] == "slot 1"] == [second[0]["versionID"]], listed

    # Keeping one side of the conflict ends it.
    pages.click_and_wait(lambda: browser.find_element(By.XPATH, "//main//button[text()='Keep this one']"))
    assert "Two devices saved this" not in pages.main_text()
    assert len([s for s in api(server, "GET", "/v1/saved-games", token=token)["saves"] if s["name"] == "slot 2"]) == 1

    # Deleting slot 2 removes it with its versions.
    forms = browser.find_elements(By.CSS_SELECTOR, "main form[action='/saves/delete']")
    assert len(forms) == 2
    pages.click_and_wait(lambda: browser.find_elements(By.CSS_SELECTOR, "main form[action='/saves/delete'] button")[1])
    assert "Save deleted" in pages.main_text()
    assert [s["name"] for s in api(server, "GET", "/v1/saved-games", token=token)["saves"]] == ["slot 1"]


def test_a_recurring_board_says_when_its_occurrence_runs_and_shows_lifetime_bests(server, browser):
    pages = Pages(browser, server)
    ((cleo, _, token),) = new_players(server, "Cleo")
    answer = api(server, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": "tapper.daily", "value": 321, "context": 0}]}, token=token)
    occurrence = answer["scores"][0]["occurrence"]

    sign_in(pages, cleo)
    pages.open(f"/games/{GAME}/leaderboards?category=tapper.daily")
    main = pages.main_text()
    assert "Runs from " in main and "(America/New_York)." in main, main
    tabs = [tab.text for tab in browser.find_elements(By.CSS_SELECTOR, "nav[aria-label='Time'] a")]
    assert tabs[0] == "This occurrence" and tabs[-1] == "Lifetime best" and "Today" not in tabs, tabs
    me = browser.find_element(By.CSS_SELECTOR, "table.board tr.me")
    assert "Cleo" in me.text and "321 taps" in me.text
    # The board's own page names the occurrence the score counted in (its start, in New York time).
    start = api(server, "POST", "/v1/leaderboards/query", {"category": "tapper.daily", "playerScope": "global", "timeScope": "allTime",
                                                          "rangeStart": 1, "rangeLength": 5}, token=token)["occurrence"]
    assert start["start"] == occurrence and start["localStart"].endswith(("T00:00:00-05:00", "T00:00:00-04:00")), start
    pages.check("leaderboard-recurring")

    pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "Lifetime best"))
    assert "Each player's best over every occurrence." in pages.main_text()
    assert "321 taps" in browser.find_element(By.CSS_SELECTOR, "table.board tr.me").text
    # A classic board keeps its time tabs.
    pages.open(f"/games/{GAME}/leaderboards?category=tapper.taps")
    tabs = [tab.text for tab in browser.find_elements(By.CSS_SELECTOR, "nav[aria-label='Time'] a")]
    assert tabs == ["Today", "This week", "All time"], tabs


def test_the_challenges_page_lists_a_players_challenges_and_joins_by_invitation_or_code(server, browser):
    pages = Pages(browser, server)
    (ann, ann_id, ann_token), (bob, bob_id, bob_token), (_, _, dan_token) = new_players(server, "Ann", "Bob", "Dan")
    api(server, "POST", "/v1/friend-requests", {"playerIDs": [bob_id]}, token=ann_token)
    request = api(server, "GET", "/v1/friend-requests", token=bob_token)["requests"][0]
    api(server, "POST", f"/v1/friend-requests/{request['requestID']}/accept", token=bob_token)
    api(server, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": "tapper.taps", "value": 40, "context": 0}]}, token=ann_token)
    invited = api(server, "POST", "/v1/challenges", {"definition": "tapper.beat-my-taps", "durationSeconds": 86400,
                                                   "invite": [bob_id]}, token=ann_token)
    shared = api(server, "POST", "/v1/challenges", {"definition": "tapper.daily-duel"}, token=dan_token)

    sign_in(pages, bob)
    pages.open("/challenges")
    invitation = browser.find_element(By.CSS_SELECTOR, "li.challenge.invitation")
    assert "Beat my taps" in invitation.text and "Ann" in invitation.text and "40 taps" in invitation.text, invitation.text
    pages.check("challenges-invited")
    pages.click_and_wait(lambda: browser.find_element(By.CSS_SELECTOR, "li.challenge.invitation form[action='/challenges/join'] button"))
    assert "You joined the challenge." in pages.main_text()
    running = browser.find_element(By.CSS_SELECTOR, "li.challenge:not(.invitation)")
    assert invited["code"] in running.text and "no score yet" in running.text, running.text

    # Dan shared his duel's code: typed in lower case, it joins Bob to it.
    pages.fill({"code": shared["code"].lower()})
    pages.submit("/challenges/join", "Join challenge")
    titles = [item.text.split("\n")[0] for item in browser.find_elements(By.CSS_SELECTOR, "li.challenge h3")]
    assert any("Today's duel" in title for title in titles) and any("Beat my taps" in title for title in titles), titles

    # Bob's score counts at once: he leads the challenge Ann started.
    api(server, "POST", "/v1/scores", {"reportID": str(uuid.uuid4()), "scores": [
        {"category": "tapper.taps", "value": 60, "context": 0}]}, token=bob_token)
    pages.open("/challenges")
    me = [row for row in browser.find_elements(By.CSS_SELECTOR, "table.board tr.me") if "60 taps" in row.text]
    assert me and me[0].text.startswith("1 You"), [row.text for row in browser.find_elements(By.CSS_SELECTOR, "table.board tr")]
    pages.check("challenges")

    # A code nobody has is an error on the page, not a crash.
    pages.fill({"code": "ZZZZ-ZZZZ"})
    pages.submit("/challenges/join", "Join challenge")
    assert "no challenge of this game has this id or code" in browser.find_element(By.CSS_SELECTOR, "p.error").text


def test_the_party_page_joins_a_party_by_its_code_and_the_game_hears_it(server, browser):
    pages = Pages(browser, server)
    (_, ann_id, ann_token), (bob, bob_id, _) = new_players(server, "Ann", "Bob")
    party = api(server, "POST", "/v1/activities", {"definition": "tapper.party"}, token=ann_token)
    code = party["partyCode"]
    device = GameDevice(server, bob)
    try:
        # Bob finds the form from his invitations and types Ann's code as she said it, in lower case.
        sign_in(pages, bob)
        pages.open("/invitations")
        pages.click_and_wait(lambda: browser.find_element(By.LINK_TEXT, "Join a party with a code"))
        pages.check("party-form")
        pages.fill({"code": code.lower()})
        pages.submit("/party/join", "Join party")
        assert "You joined the party. Open Tapper on your device" in pages.main_text(), pages.main_text()
        pages.check("party-joined")

        # His game, running on his device, hears that he wants to play, with the party's code.
        heard = device.wait_for("activity", lambda payload: payload["kind"] == "wantsToPlay")
        assert heard["activity"]["partyCode"] == code and heard["activity"]["state"] == "initialized", heard
        assert heard["activity"]["partyPlayerIDs"] == [ann_id, bob_id], heard

        # The link an activity shares shows whose party it is before joining.
        pages.open(f"/party?code={code}")
        item = browser.find_element(By.CSS_SELECTOR, "li.party")
        assert "Tap party" in item.text and "Started by Ann" in item.text and "2 players" in item.text, item.text
        pages.check("party-link")

        # Codes nobody has, and text that is no code, are errors on the page.
        pages.fill({"code": "ZZZZ-ZZZZ"})
        pages.submit("/party/join", "Join party")
        assert "no party of this game has this code" in browser.find_element(By.CSS_SELECTOR, "p.error").text
        pages.fill({"code": "hello"})
        pages.submit("/party/join", "Join party")
        assert "two parts of the same length" in browser.find_element(By.CSS_SELECTOR, "p.error").text
        pages.check("party-error")
    finally:
        device.close()
