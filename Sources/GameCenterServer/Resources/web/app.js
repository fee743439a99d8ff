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
