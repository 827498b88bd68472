/* Documents page: drag-and-drop upload and live progress over the events socket (with REST catch-up). */
(function () {
  "use strict";
  var STAGES = ["parse", "chunk", "embed", "extract", "write"];
  var TERMINAL = ["processed", "failed", "cancelled"];

  function init() {
    var form = document.getElementById("upload-form");
    var zone = document.getElementById("dropzone");
    var input = document.getElementById("id_file");
    var status = document.getElementById("upload-status");
    if (zone && form && input) {
      ["dragenter", "dragover"].forEach(function (name) {
        zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.add("over"); });
      });
      ["dragleave", "drop"].forEach(function (name) {
        zone.addEventListener(name, function (event) { event.preventDefault(); zone.classList.remove("over"); });
      });
      zone.addEventListener("drop", function (event) {
        var files = Array.prototype.slice.call(event.dataTransfer.files || []);
        if (!files.length) return;
        uploadAll(form, files, status, input);
      });
    }
    document.querySelectorAll("tr[data-id]").forEach(function (row) { render(row, readRow(row)); });
    if (window.ExoGraph) {
      window.ExoGraph.events.on("document.progress", function (event) { update(event.document); });
      window.ExoGraph.events.onReconnect(catchUp);
    }
  }

  // A dropped file goes into the file field and the form is sent: the server answers its price (pages,
  // credits, balance after) with a Confirm button, so nothing is charged before the user confirms.
  function uploadAll(form, files, status, input) {
    if (files.length > 1) {
      if (status) status.textContent = "Drop one file at a time: each upload shows its price before you confirm it.";
      return;
    }
    var transfer = new DataTransfer();
    transfer.items.add(files[0]);
    input.files = transfer.files;
    if (status) status.textContent = "Reading " + files[0].name + "…";
    form.requestSubmit();
  }

  function readRow(row) {
    return { id: row.getAttribute("data-id"), status: row.getAttribute("data-status"),
             stage: row.getAttribute("data-stage"), progress: Number(row.getAttribute("data-progress") || 0) };
  }

  function update(doc) {
    var row = document.querySelector('tr[data-id="' + doc.id + '"]');
    if (!row) return;
    var wasTerminal = TERMINAL.indexOf(row.getAttribute("data-status")) >= 0;
    row.setAttribute("data-status", doc.status);
    row.setAttribute("data-stage", doc.stage);
    row.setAttribute("data-progress", doc.progress);
    render(row, doc);
    // The actions (cancel/retry) depend on the status: refresh the row's buttons from the server once it settles.
    if (!wasTerminal && TERMINAL.indexOf(doc.status) >= 0) setTimeout(function () { location.reload(); }, 1200);
  }

  function render(row, doc) {
    var badge = row.querySelector(".status .badge");
    if (badge) { badge.textContent = doc.status; badge.className = "badge " + doc.status; }
    var failure = row.querySelector(".failure");
    if (failure && doc.failure) failure.textContent = doc.failure.reason || "";
    var bar = row.querySelector("progress");
    if (bar) { bar.value = doc.progress; bar.setAttribute("aria-valuetext", doc.progress + "% (" + doc.stage + ")"); }
    var stage = row.querySelector(".stage");
    if (stage) stage.textContent = doc.status === "processed" ? "done" : doc.stage;
    var current = STAGES.indexOf(doc.stage);
    row.querySelectorAll(".steps li").forEach(function (li, i) {
      li.className = doc.status === "processed" || i < current ? "done" : (i === current && doc.status === "processing" ? "current" : "");
    });
  }

  // After a dropped socket: ask REST for the documents that were still moving.
  function catchUp() {
    document.querySelectorAll("tr[data-id]").forEach(function (row) {
      if (TERMINAL.indexOf(row.getAttribute("data-status")) >= 0) return;
      fetch("/api/v1/documents/" + row.getAttribute("data-id") + "/", { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (doc) { if (doc) update(doc); })
        .catch(function () { /* the next reconnect tries again */ });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
