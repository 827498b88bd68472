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

  // Confirm destructive buttons: <button data-confirm="Delete this graph?">.
  document.addEventListener("submit", function (event) {
    var button = event.submitter;
    if (button && button.hasAttribute("data-confirm") && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });

  /* One events socket per page (/ws/events/), authenticated by the login session. Pages subscribe with
     ExoGraph.events.on("document.progress", fn) and ExoGraph.events.onReconnect(fn) (to catch up from REST). */
  var handlers = {};
  var reconnectHandlers = [];
  var socket = null;
  var attempts = 0;
  var everOpened = false;

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/events/");
    socket.addEventListener("open", function () {
      if (everOpened) reconnectHandlers.forEach(function (fn) { fn(); });
      everOpened = true;
      attempts = 0;
    });
    socket.addEventListener("message", function (message) {
      var data;
      try { data = JSON.parse(message.data); } catch (e) { return; }
      (handlers[data.type] || []).forEach(function (fn) { fn(data); });
    });
    socket.addEventListener("close", function (event) {
      if (event.code === 4401) return; // not logged in: do not hammer the server
      attempts += 1;
      setTimeout(connect, Math.min(30000, 1000 * Math.pow(2, Math.min(attempts, 5))));
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
