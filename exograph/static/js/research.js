/* Research pages: live progress over the events socket ("research.progress"), REST catch-up after a reconnect. */
(function () {
  "use strict";
  var TERMINAL = ["completed", "failed", "cancelled"];

  function set(root, field, value) {
    root.querySelectorAll('[data-field="' + field + '"]').forEach(function (el) {
      if (el.tagName === "PROGRESS") { el.value = value; el.setAttribute("aria-valuetext", value + "%"); }
      else el.textContent = value;
    });
  }

  function update(research) {
    var roots = document.querySelectorAll('[data-research-id="' + research.id + '"]');
    roots.forEach(function (root) {
      var before = root.getAttribute("data-status");
      var badge = root.querySelector('[data-field="status"]');
      if (badge) { badge.textContent = research.status; badge.className = "badge " + research.status; }
      set(root, "percent", research.status === "completed" ? 100 : research.progress.percent);
      set(root, "step", research.progress.step);
      set(root, "found", research.progress.sources_found);
      set(root, "read", research.progress.sources_read);
      set(root, "spent", research.credits_spent);
      set(root, "note", research.note || "");
      set(root, "error", research.error || "");
      root.setAttribute("data-status", research.status);
      // The report (and the buttons) come from the server once the session settles.
      if (before && TERMINAL.indexOf(before) < 0 && TERMINAL.indexOf(research.status) >= 0) {
        setTimeout(function () { location.reload(); }, 800);
      }
    });
  }

  function catchUp() {
    document.querySelectorAll("[data-research-id]").forEach(function (root) {
      var status = root.getAttribute("data-status");
      if (status && TERMINAL.indexOf(status) >= 0) return;
      fetch("/api/v1/research/" + root.getAttribute("data-research-id") + "/", { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) { if (body) update(body); });
    });
  }

  function init() {
    if (!window.ExoGraph) return;
    window.ExoGraph.events.on("research.progress", function (event) { update(event.research); });
    window.ExoGraph.events.onReconnect(catchUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
