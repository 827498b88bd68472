/* ExoGraph: small progressive enhancements shared by every page (CSP: served from our origin). */
(function () {
  "use strict";

  // Copy buttons: <button data-copy="#element-id">; falls back to selecting the text.
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent;
    var done = function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { selectText(source); });
    } else {
      selectText(source);
      try { document.execCommand("copy"); done(); } catch (e) { /* the text stays selected */ }
    }
  });

  function selectText(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // The nav's menu button (below 700 px, see exograph.css): toggles the menu; Escape closes it and returns focus.
  var topbar = document.querySelector ? document.querySelector(".topbar") : null;
  var toggle = topbar && topbar.querySelector(".menu-toggle");
  if (toggle) {
    topbar.classList.add("has-toggle");
    var setOpen = function (open) {
      topbar.classList.toggle("open", open);
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    };
    toggle.addEventListener("click", function () { setOpen(!topbar.classList.contains("open")); });
    topbar.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && topbar.classList.contains("open")) { setOpen(false); toggle.focus(); }
    });
  }

  // Confirm destructive buttons: <button data-confirm="Delete this graph?">.
  document.addEventListener("submit", function (event) {
    var button = event.submitter;
    if (button && button.hasAttribute("data-confirm") && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });

  /* One events socket per page (/ws/events/), authenticated by the login session. Pages subscribe with
     ExoGraph.events.on("document.progress", fn) and ExoGraph.events.onReconnect(fn) (to catch up from REST).
     Every event carries an id; after a drop the socket reconnects with backoff and sends the last id it saw
     (?last_event_id=), and the server replays what was missed, then says {"type": "events.replayed",
     "complete": bool}. The REST catch-up (onReconnect) runs only when the replay could not cover the gap. */
  var handlers = {};
  var reconnectHandlers = [];
  var socket = null;
  var attempts = 0;
  var everOpened = false;
  var lastEventId = null;

  function catchUp() { reconnectHandlers.forEach(function (fn) { fn(); }); }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var query = lastEventId ? "?last_event_id=" + encodeURIComponent(lastEventId) : "";
    socket = new WebSocket(scheme + location.host + "/ws/events/" + query);
    socket.addEventListener("open", function () {
      if (everOpened && !lastEventId) catchUp(); // nothing to replay from: ask REST
      everOpened = true;
      attempts = 0;
    });
    socket.addEventListener("message", function (message) {
      var data;
      try { data = JSON.parse(message.data); } catch (e) { return; }
      if (data.type === "events.replayed") {
        if (!data.complete) catchUp(); // some missed events were no longer kept
        return;
      }
      if (typeof data.id === "string") lastEventId = data.id;
      (handlers[data.type] || []).forEach(function (fn) { fn(data); });
    });
    socket.addEventListener("close", function (event) {
      if (event.code === 4401) return; // not logged in: do not hammer the server
      attempts += 1;
      // Exponential backoff (1 s, 2 s, 4 s … 30 s) with jitter, so a restarted server is not met by every page at once.
      var delay = Math.min(30000, 500 * Math.pow(2, Math.min(attempts, 6)));
      setTimeout(connect, delay / 2 + Math.random() * delay / 2);
    });
  }

  window.ExoGraph = {
    events: {
      on: function (type, fn) {
        (handlers[type] = handlers[type] || []).push(fn);
        if (!socket) connect();
      },
      onReconnect: function (fn) { reconnectHandlers.push(fn); }
    }
  };
})();
