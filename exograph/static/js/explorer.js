/* Graph explorer: cytoscape network fed by GET /api/v1/graphs/{id}/overview/ (the most connected entities, laid out
   by cytoscape-fcose, optionally one document's) and GET /api/v1/graphs/{id}/explore/ (bounded neighbourhoods). */
(function () {
  "use strict";
  var form, input, hops, statusBox, cy, api, overviewApi, documentSelect, sizeSelect;
  var nodes = {};   // id -> node data from the API
  var edges = {};   // key -> edge data
  var hiddenTypes = {};
  var hiddenEntityTypes = {};
  var GENERIC = "RELATED_TO";  // a co-occurrence, not a named relation: drawn faint, its label only on hover
  // Entity type colours; the legend's swatches use the same ones (exograph.css .type-swatch.type-*).
  var TYPE_COLOURS = { PERSON: "#e8590c", ORGANIZATION: "#1971c2", LOCATION: "#2f9e44", DATE: "#868e96",
    EVENT: "#ae3ec9", PRODUCT: "#f08c00", WORK: "#c2255c", QUANTITY: "#5c940d", CONCEPT: "#0c8599" };
  var OTHER_COLOUR = "#748ffc";
  function typeOf(node) { var t = String(node.type || "").toUpperCase(); return TYPE_COLOURS[t] ? t : "OTHER"; }
  var selected = null;
  var panels = {};  // entity id -> {sources, passages}: its own provenance, from the read centred on it

  function init() {
    form = document.getElementById("explore-form");
    if (!form || typeof cytoscape === "undefined") return;
    input = document.getElementById("explore-entity");
    hops = document.getElementById("explore-hops");
    statusBox = document.getElementById("explore-status");
    api = form.getAttribute("data-api");
    overviewApi = form.getAttribute("data-overview");
    documentSelect = document.getElementById("explore-document");
    sizeSelect = document.getElementById("explore-size");
    document.getElementById("explore-graph").addEventListener("change", function (event) {
      location.href = event.target.value + (input.value ? "?entity=" + encodeURIComponent(input.value) : "");
    });
    cy = cytoscape({
      container: document.getElementById("cy"),
      wheelSensitivity: 0.3,
      minZoom: 0.05,
      maxZoom: 4,
      // Thousands of elements: edges hidden and a bitmap of the canvas while panning or zooming.
      hideEdgesOnViewport: true,
      textureOnViewport: true,
      style: [
        { selector: "node", style: {
          "label": "data(label)", "font-size": 11, "color": "#1d2330", "text-valign": "bottom", "text-margin-y": 4,
          "background-color": "#748ffc", "width": "data(size)", "height": "data(size)",
          "text-wrap": "ellipsis", "text-max-width": 120, "border-width": 0,
          // A label too small to read at this zoom is not drawn; zoom in and it comes back at a readable size.
          "min-zoomed-font-size": 8, "text-background-color": "#fff", "text-background-opacity": 0.7,
          "text-background-padding": 1 } },
        { selector: "node[size >= 40]", style: { "font-size": 14, "font-weight": "bold" } },
        // Hundreds of nodes: labels are not measured for ellipses nor given a backdrop (the first draw's cost).
        { selector: "node.dense", style: { "text-wrap": "none", "text-background-opacity": 0 } },
        { selector: "edge.dense", style: { "label": "" } },
        { selector: "edge.dense.hover, edge.dense:selected", style: { "label": "data(label)" } },
        { selector: "node[colour]", style: { "background-color": "data(colour)" } },
        { selector: "node[hop = 0]", style: { "border-width": 3, "border-color": "#1d2330" } },
        { selector: "node[more > 0]", style: { "border-width": 2, "border-color": "#f59f00", "border-style": "dashed" } },
        { selector: "node:selected", style: { "border-width": 4, "border-color": "#1d2330", "border-style": "double",
          "font-weight": "bold" } },
        { selector: "edge", style: {
          "label": "data(label)", "font-size": 9, "color": "#5b6478", "width": "data(width)", "line-color": "#adb5bd",
          "target-arrow-color": "#adb5bd", "target-arrow-shape": "triangle", "curve-style": "bezier",
          "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8, "text-background-padding": 1,
          "min-zoomed-font-size": 8 } },
        { selector: "edge.generic", style: { "label": "", "line-color": "#dee2e6", "target-arrow-color": "#dee2e6",
          "opacity": 0.55, "width": 1 } },
        { selector: "edge.generic.hover, edge.generic:selected", style: { "label": "data(label)", "opacity": 1,
          "line-color": "#adb5bd", "target-arrow-color": "#adb5bd", "z-index": 10 } },
        { selector: ".filtered", style: { "display": "none" } }
      ]
    });
    cy.on("tap", "node", function (event) { select(event.target.id(), true); });
    cy.on("mouseover", "edge", function (event) { event.target.addClass("hover"); });
    cy.on("mouseout", "edge", function (event) { event.target.removeClass("hover"); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      reset();
      load(input.value.trim(), Number(hops.value), true);
    });
    document.getElementById("panel-expand").addEventListener("click", function () { if (selected) expand(selected); });
    var overviewButton = document.getElementById("explore-overview");
    if (overviewButton) overviewButton.addEventListener("click", function () { overview(); });
    if (documentSelect) documentSelect.addEventListener("change", function () { overview(); });
    if (sizeSelect) sizeSelect.addEventListener("change", function () { overview(); });
    if (input.value.trim()) load(input.value.trim(), Number(hops.value), true); else overview();
  }

  // The overview: the most connected entities (of one document, if picked) and the relations among them, clustered
  // by a force layout (fcose). The time from the page's start to its first draw is kept on #cy (data-first-draw,
  // milliseconds; `make bench-explorer` reads it).
  function overview() {
    if (!overviewApi) return;
    var started = performance.now();
    var url = overviewApi + "?limit=" + encodeURIComponent(sizeSelect ? sizeSelect.value : "150");
    if (documentSelect && documentSelect.value) url += "&document_id=" + encodeURIComponent(documentSelect.value);
    say("Loading the overview…");
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (result) {
        if (!result.ok) {
          var error = result.body.error || {};
          say((error.message || "Something went wrong.") + " " + (error.hint || ""));
          return;
        }
        var data = result.body;
        var phases = { fetch: performance.now() - started };
        var mark = performance.now();
        reset();
        cy.startBatch();
        merge(data);
        if (data.nodes.length > 300) cy.elements().addClass("dense");
        cy.endBatch();
        phases.add = performance.now() - mark;
        mark = performance.now();
        var layout = cy.layout(layoutOptions(true, data.nodes.length));
        layout.one("layoutstop", function () {
          phases.layout = performance.now() - mark;
          mark = performance.now();
          cy.fit(undefined, 20);
          if (cy.zoom() > 1.4) { cy.zoom(1.4); cy.center(); }  // a handful of nodes: not blown up to the maximum
          cy.one("render", function () {
            requestAnimationFrame(function () {
              var box = document.getElementById("cy");
              box.setAttribute("data-first-draw", String(Math.round(performance.now())));
              box.setAttribute("data-draw-ms", String(Math.round(performance.now() - started)));
              box.setAttribute("data-nodes", String(cy.nodes().length));
              phases.draw = performance.now() - mark;
              box.setAttribute("data-phases", Object.keys(phases).map(function (k) { return k + " " + Math.round(phases[k]); }).join(", "));
            });
          });
        });
        layout.run();
        renderOverviewList(data.nodes);
        var scope = documentSelect && documentSelect.value ? " of " + documentSelect.options[documentSelect.selectedIndex].text : "";
        say(data.nodes.length ? "Overview" + scope + ": the " + data.nodes.length + " most connected of " + data.total +
          " entities, " + data.edges.length + " relations among them. Scroll to zoom, click a node to explore it." :
          "No entities" + scope + " yet: upload a document to this graph.");
      })
      .catch(function () { say("The graph store did not answer; try again in a moment."); });
  }

  // The keyboard's way into the overview: its entities as a list of buttons, most connected first.
  function renderOverviewList(list) {
    var box = document.getElementById("overview-list");
    if (!box) return;
    box.textContent = "";
    list.slice(0, 40).forEach(function (n) {
      var li = document.createElement("li");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      button.textContent = n.name;
      button.addEventListener("click", function () { select(n.id, true); });
      // Its type beside it, in words and in the canvas colour (the legend's swatch): readable without the canvas.
      var kind = typeOf(n);
      var swatch = document.createElement("span");
      swatch.className = "type-swatch type-" + kind.toLowerCase();
      swatch.setAttribute("aria-hidden", "true");
      var type = document.createElement("span");
      type.className = "entity-type";
      type.textContent = kind === "OTHER" ? String(n.type || "entity").toLowerCase() : kind.toLowerCase();
      li.appendChild(swatch);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(button);
      li.appendChild(document.createTextNode(" ("));
      li.appendChild(type);
      li.appendChild(document.createTextNode(", " + n.degree + ")"));
      box.appendChild(li);
    });
    document.getElementById("overview-box").classList.toggle("hidden", !list.length);
  }

  function layoutOptions(fresh, count) {
    if (typeof cytoscape !== "undefined" && hasFcose()) {
      // Up to 200 nodes the full force layout; past that its spectral first step alone ("draft": clusters in
      // milliseconds where the force step took seconds at 500 nodes on a busy 2-core machine).
      return { name: "fcose", animate: false, randomize: fresh, quality: fresh && count > 200 ? "draft" : "default",
        nodeDimensionsIncludeLabels: count <= 200, packComponents: count <= 200, padding: 30,
        nodeRepulsion: function () { return 9000; }, idealEdgeLength: function () { return 70; }, numIter: 2500 };
    }
    return { name: "cose", animate: false, nodeDimensionsIncludeLabels: true, padding: 30, randomize: false };
  }

  function hasFcose() {
    try { return !!cytoscape("layout", "fcose"); } catch (error) { return false; }
  }

  function say(text) { statusBox.textContent = text; }

  function reset() { cy.elements().remove(); nodes = {}; edges = {}; panels = {}; selected = null; }

  function load(entity, hopCount, center) {
    if (!entity) return Promise.resolve(null);
    say("Loading " + entity + "…");
    var url = api + "?entity=" + encodeURIComponent(entity) + "&hops=" + hopCount + "&limit=25";
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (result) {
        if (!result.ok) {
          var error = result.body.error || {};
          say((error.message || "Something went wrong.") + " " + (error.hint || ""));
          return null;
        }
        merge(result.body);
        var data = result.body;
        panels[data.entity.id] = { sources: data.sources, passages: data.passages };
        say(data.entity.name + ": " + data.nodes.length + " entities, " + data.edges.length + " relations shown.");
        // A later selection wins: a slower read of an earlier one does not take the panel back.
        if (center || selected === entity || selected === data.entity.id) select(data.entity.id, false, data);
        relayout(center ? data.entity.id : null);
        return data;
      })
      .catch(function () { say("The graph store did not answer; try again in a moment."); return null; });
  }

  function expand(id) {
    var node = nodes[id];
    if (!node) return;
    load(id, 1, false).then(function () { cy.$id(id).select(); });
  }

  function size(degree) { return Math.round(18 + Math.min(42, Math.sqrt(degree || 0) * 7)); }

  function label(node) { return node.more > 0 ? node.name + "  +" + node.more : node.name; }

  function merge(data) {
    var added = [];
    data.nodes.forEach(function (n) {
      var known = nodes[n.id];
      if (known) {
        // Keep the smallest hop and the freshest expansion state.
        n.hop = Math.min(known.hop, n.hop);
        if (known.expanded && !n.expanded) { n.expanded = true; n.more = known.more; }
      }
      nodes[n.id] = n;
      var kind = typeOf(n);
      var attrs = { id: n.id, label: label(n), size: size(n.degree), hop: n.hop, more: n.more,
        etype: kind, colour: TYPE_COLOURS[kind] || OTHER_COLOUR };
      var element = cy.$id(n.id);
      if (element.length) element.data(attrs); else added.push({ group: "nodes", data: attrs });
    });
    cy.add(added);
    added = [];
    data.edges.forEach(function (e) {
      var key = e.source + "|" + e.type + "|" + e.target;
      edges[key] = e;
      if (!cy.getElementById(key).length) {
        added.push({ group: "edges", classes: String(e.type).toUpperCase() === GENERIC ? "generic" : "",
          data: { id: key, source: e.source, target: e.target, type: e.type,
          label: e.type.replace(/_/g, " ") + " (" + e.strength + ")", width: Math.min(8, 1 + Math.log2(1 + e.strength)) } });
      }
    });
    cy.add(added);
    renderFilters();
    renderLegend();
    applyFilters();
  }

  function relayout(centerId) {
    var layout = cy.layout(layoutOptions(false, cy.nodes().length));
    layout.run();
    if (centerId) cy.center(cy.$id(centerId));
  }

  function renderFilters() {
    var box = document.getElementById("type-filters");
    var types = {};
    Object.keys(edges).forEach(function (key) { types[edges[key].type] = (types[edges[key].type] || 0) + 1; });
    box.textContent = "";
    Object.keys(types).sort().forEach(function (type, i) {
      var labelEl = document.createElement("label");
      var box2 = document.createElement("input");
      box2.type = "checkbox";
      box2.checked = !hiddenTypes[type];
      box2.id = "type-filter-" + i;
      box2.addEventListener("change", function () { hiddenTypes[type] = !box2.checked; applyFilters(); });
      labelEl.appendChild(box2);
      labelEl.appendChild(document.createTextNode(type.replace(/_/g, " ") + " (" + types[type] + ")"));
      box.appendChild(labelEl);
    });
  }

  // The legend is also the entity-type filter: one checkbox per type on the canvas, with its colour and count.
  function renderLegend() {
    var box = document.getElementById("entity-legend");
    if (!box) return;
    var counts = {};
    Object.keys(nodes).forEach(function (id) { var t = typeOf(nodes[id]); counts[t] = (counts[t] || 0) + 1; });
    box.textContent = "";
    Object.keys(counts).sort().forEach(function (type) {
      var labelEl = document.createElement("label");
      var check = document.createElement("input");
      check.type = "checkbox";
      check.checked = !hiddenEntityTypes[type];
      check.id = "entity-filter-" + type.toLowerCase();
      check.setAttribute("data-entity-type", type);
      check.addEventListener("change", function () { hiddenEntityTypes[type] = !check.checked; applyFilters(); });
      var swatch = document.createElement("span");
      swatch.className = "type-swatch type-" + type.toLowerCase();
      swatch.setAttribute("aria-hidden", "true");
      labelEl.appendChild(check);
      labelEl.appendChild(swatch);
      labelEl.appendChild(document.createTextNode(type.charAt(0) + type.slice(1).toLowerCase() + " (" + counts[type] + ")"));
      box.appendChild(labelEl);
    });
  }

  function applyFilters() {
    cy.nodes().forEach(function (node) { node.toggleClass("filtered", !!hiddenEntityTypes[node.data("etype")]); });
    cy.edges().forEach(function (edge) { edge.toggleClass("filtered", !!hiddenTypes[edge.data("type")]); });
  }

  function select(id, expandIt, data) {
    selected = id;
    var node = nodes[id];
    if (!node) return;
    cy.$(":selected").unselect();
    cy.$id(id).select();
    if (expandIt && !node.expanded) { expand(id); return; }
    document.getElementById("panel-empty").classList.add("hidden");
    document.getElementById("panel-body").classList.remove("hidden");
    document.getElementById("panel-title").textContent = node.name;
    document.getElementById("panel-type").textContent = node.type || "entity";
    document.getElementById("panel-degree").textContent = node.degree + " relations" + (node.more ? ", " + node.more + " not shown" : "");
    document.getElementById("panel-description").textContent = node.description || "";
    document.getElementById("panel-expand").disabled = node.expanded && !node.more;
    var list = document.getElementById("panel-neighbours");
    list.textContent = "";
    Object.keys(edges).forEach(function (key) {
      var e = edges[key];
      if (e.source !== id && e.target !== id) return;
      var other = nodes[e.source === id ? e.target : e.source];
      if (!other) return;
      var li = document.createElement("li");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      button.textContent = other.name;
      button.addEventListener("click", function () { select(other.id, true); });
      li.appendChild(document.createTextNode((e.source === id ? "→ " : "← ") + e.type.replace(/_/g, " ") + " (" + e.strength + ") "));
      li.appendChild(button);
      list.appendChild(li);
    });
    // The panel shows this entity's own sources and passages: the read centred on it, fetched if the node only
    // came in as someone else's neighbour (never the previous entity's, left in place).
    var own = (data && data.entity.id === id) ? data : panels[id];
    if (own) { renderSources(own.sources, id); renderPassages(own.passages, id); return; }
    renderSources(null, id);
    renderPassages(null, id);
    load(id, 1, false);
  }

  // The document viewer (at the passage) when the document is the user's; plain text otherwise.
  function docLink(viewUrl, text) {
    if (typeof viewUrl !== "string" || !/^\/documents\//.test(viewUrl)) return document.createTextNode(text || "");
    var a = document.createElement("a");
    a.href = viewUrl;
    a.textContent = text;
    return a;
  }

  function loading(list, id) {
    list.setAttribute("data-entity", id);
    list.textContent = "";
    list.appendChild(document.createElement("li")).textContent = "Loading…";
  }

  function renderSources(sources, id) {
    var list = document.getElementById("panel-sources");
    if (!sources) { loading(list, id); return; }
    list.setAttribute("data-entity", id);
    list.textContent = "";
    if (!sources.length) { list.appendChild(document.createElement("li")).textContent = "No sources recorded."; return; }
    sources.forEach(function (s) { list.appendChild(document.createElement("li")).appendChild(docLink(s.view_url, s.filename || s.document_id)); });
  }

  function renderPassages(passages, id) {
    var list = document.getElementById("panel-passages");
    if (!passages) { loading(list, id); return; }
    list.setAttribute("data-entity", id);
    list.textContent = "";
    if (!passages.length) { list.appendChild(document.createElement("li")).textContent = "No passages recorded."; return; }
    passages.forEach(function (p) {
      var li = document.createElement("li");
      var quote = document.createElement("q");
      quote.textContent = p.text;
      li.appendChild(quote);
      li.appendChild(document.createElement("br"));
      li.appendChild(docLink(p.view_url, p.filename + (p.page ? ", p. " + p.page : "")));
      list.appendChild(li);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
