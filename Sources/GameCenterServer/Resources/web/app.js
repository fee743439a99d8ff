// Live notices on the Game Center app's signed-in pages: friend requests, invitations and achievements appear as
// they happen, from the server-sent events of /live. Every page works without this script.
(function () {
  "use strict";
  var region = document.getElementById("live");
  if (!region || !window.EventSource) {
    return;
  }
  var source = new EventSource("/live");
  source.addEventListener("notice", function (event) {
    var notice;
    try {
      notice = JSON.parse(event.data);
    } catch (error) {
      return;
    }
    var line = document.createElement("p");
    var link = document.createElement("a");
    link.href = notice.link;
    link.textContent = notice.text;
    line.appendChild(link);
    region.appendChild(line);
    region.hidden = false;
  });
  source.addEventListener("signed-out", function () {
    source.close();
  });
})();

// A page a game presented (it has the Done button): when it is left other than for a page of the app — the tab
// closed, most likely — the game is told, so its screen can finish. A reload shows the page again at once, which the
// game counts as still open.
(function () {
  "use strict";
  var done = document.getElementById("screen-done");
  if (!done || !navigator.sendBeacon) {
    return;
  }
  var staying = false;
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href]") : null;
    if (link && link.origin === window.location.origin) {
      staying = true;
    }
  });
  document.addEventListener("submit", function () {
    staying = true;
  });
  window.addEventListener("pageshow", function () {
    staying = false;
  });
  window.addEventListener("pagehide", function () {
    if (staying) {
      return;
    }
    var form = new URLSearchParams();
    form.append("csrf", done.querySelector("input[name=csrf]").value);
    navigator.sendBeacon("/screen/left", form);
  });
})();
