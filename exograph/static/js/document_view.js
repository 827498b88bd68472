/* Document viewer: bring the cited passage (?chunk=<id>, a <mark>) into view and give it focus. */
(function () {
  "use strict";
  function init() {
    var cited = document.querySelector(".chunk.cited");
    if (!cited) return;
    cited.scrollIntoView({ block: "center" });
    cited.focus({ preventScroll: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
