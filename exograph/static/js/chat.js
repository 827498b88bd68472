/* Chat page: send a question through the REST API (login session + CSRF, an Idempotency-Key per question),
   watch the answer stream in over the events socket (chat.status / chat.token / chat.done / chat.error for
   this page's session), then show it with its citations, grounded flag, support score and the balance.
   A dropped socket reconnects (exograph.js) and the page catches up from REST. No innerHTML: text only. */
(function () {
  "use strict";
  var MARKER = /\[(\d+(?:\s*[-–]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-–]\s*\d+)?)*)\]/g;
  var PHASES = {
    retrieving: "Retrieving evidence…",
    generating: "Writing the answer…",
    checking: "Checking the draft against the evidence…"
  };
  var form, log, textarea, sendButton, statusBox, balanceBox, sessionId, pending = null;
  var streaming = {}; // message id -> answer element still streaming

  function $(id) { return document.getElementById(id); }

  function init() {
    form = $("chat-form");
    if (!form) return;
    log = $("chat-log");
    textarea = $("chat-message");
    sendButton = $("chat-send");
    statusBox = $("chat-status");
    balanceBox = $("chat-balance");
    sessionId = form.getAttribute("data-session") || "";
    form.addEventListener("submit", onSubmit);
    textarea.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (form.requestSubmit) form.requestSubmit(); else onSubmit(event);
      }
    });
    $("chat-graph").addEventListener("change", function (event) {
      var option = event.target.selectedOptions[0];
      var scope = option && option.getAttribute("data-scope");
      if (scope) $("chat-scope").value = scope;
    });
    $("chat-scope").addEventListener("change", function () {
      var graph = $("chat-graph");
      var option = graph.selectedOptions[0];
      if (option && option.getAttribute("data-scope") && option.getAttribute("data-scope") !== $("chat-scope").value) graph.value = "";
    });
    log.addEventListener("click", onCitation);
    if (window.ExoGraph) {
      var events = window.ExoGraph.events;
      events.on("chat.status", onStatus);
      events.on("chat.token", onToken);
      events.on("chat.done", onDone);
      events.on("chat.error", onError);
      events.onReconnect(catchUp);
    }
    scrollToEnd();
  }

  // --- sending ----------------------------------------------------------------------------------

  function csrfToken() {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function randomKey() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return "web-" + Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function api(method, url, body, headers) {
    var all = { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), "Accept": "application/json" };
    Object.keys(headers || {}).forEach(function (name) { all[name] = headers[name]; });
    return fetch(url, {
      method: method, credentials: "same-origin", headers: all, body: body ? JSON.stringify(body) : undefined
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { ok: response.ok, status: response.status, data: data };
      });
    });
  }

  function errorText(result) {
    var error = (result.data && result.data.error) || {};
    var text = error.message || ("The request failed (" + result.status + ").");
    if (error.hint) text += " " + error.hint;
    return text;
  }

  function choices() {
    return {
      model: $("chat-model").value,
      reasoning_engine: $("chat-engine").value,
      graph_scope: $("chat-scope").value,
      graph_id: $("chat-graph").value
    };
  }

  // A new chat becomes a session before its first question, so the streamed events name it.
  function ensureSession(choice) {
    if (sessionId) return Promise.resolve(sessionId);
    return api("POST", form.getAttribute("data-sessions-api"), {
      model_name: choice.model, reasoning_engine: choice.reasoning_engine,
      graph_scope: choice.graph_scope, graph_id: choice.graph_id
    }).then(function (result) {
      if (!result.ok) throw new Error(errorText(result));
      sessionId = result.data.id;
      form.setAttribute("data-session", sessionId);
      if (window.history && history.replaceState) history.replaceState(null, "", form.getAttribute("data-page") + sessionId + "/");
      return sessionId;
    });
  }

  function onSubmit(event) {
    event.preventDefault();
    if (pending) return;
    var text = textarea.value.trim();
    if (!text) { setStatus("Type a question first."); textarea.focus(); return; }
    var choice = choices();
    var key = randomKey();
    setBusy(true);
    setStatus("Sending…");
    ensureSession(choice).then(function () {
      var empty = $("chat-empty");
      if (empty) empty.remove();
      appendQuestion(text);
      pending = { el: appendAnswerShell(), messageId: null, text: text };
      textarea.value = "";
      var body = {
        message: text, session_id: sessionId, model: choice.model,
        reasoning_engine: choice.reasoning_engine, graph_scope: choice.graph_scope, graph_id: choice.graph_id
      };
      var send = function () { return api("POST", form.getAttribute("data-messages-api"), body, { "Idempotency-Key": key }); };
      // A lost connection is retried once with the same key: the server answers once and charges once.
      return send().catch(function () { return send(); }).then(function (result) {
        if (result.ok) finish(result.data);
        else fail(pending && pending.el, errorText(result) + " No credits were charged.", text);
      });
    }).catch(function (error) {
      fail(pending && pending.el, (error && error.message) || "The question could not be sent.", text);
    }).then(function () {
      pending = null;
      setBusy(false);
    });
  }

  function setBusy(busy) {
    sendButton.disabled = busy;
    sendButton.textContent = busy ? "Answering…" : "Ask";
  }

  function setStatus(text) { statusBox.textContent = text || ""; }

  // --- rendering --------------------------------------------------------------------------------

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function appendQuestion(text) {
    var article = el("article", "msg user");
    article.appendChild(el("h3", "sr-only", "You asked"));
    article.appendChild(el("p", null, text));
    log.appendChild(article);
    scrollToEnd();
  }

  function appendAnswerShell() {
    var article = el("article", "msg assistant");
    article.setAttribute("aria-busy", "true");
    article.appendChild(el("h3", "sr-only", "Answer"));
    article.appendChild(el("div", "answer"));
    log.appendChild(article);
    scrollToEnd();
    return article;
  }

  function numbers(spec) {
    var out = [];
    spec.split(",").forEach(function (part) {
      var bounds = part.trim().split(/[-–]/).map(function (b) { return parseInt(b, 10); }).filter(function (n) { return !isNaN(n); });
      if (bounds.length === 2 && bounds[1] - bounds[0] > 0 && bounds[1] - bounds[0] < 50) {
        for (var n = bounds[0]; n <= bounds[1]; n++) out.push(n);
      } else if (bounds.length) out.push(bounds[0]);
    });
    return out;
  }

  function renderAnswerText(box, text, known, messageId) {
    box.textContent = "";
    var position = 0;
    var match;
    MARKER.lastIndex = 0;
    while ((match = MARKER.exec(text)) !== null) {
      if (match.index > position) box.appendChild(document.createTextNode(text.slice(position, match.index)));
      var cited = numbers(match[1]).filter(function (n) { return known[n]; });
      if (cited.length) {
        var span = el("span", "cites");
        span.appendChild(document.createTextNode("["));
        cited.forEach(function (n, i) {
          var link = el("a", "cite", String(n));
          link.href = "#ev-" + messageId + "-" + n;
          link.setAttribute("data-n", String(n));
          link.setAttribute("aria-label", "evidence " + n);
          span.appendChild(link);
          if (i < cited.length - 1) span.appendChild(document.createTextNode(", "));
        });
        span.appendChild(document.createTextNode("]"));
        box.appendChild(span);
      } else {
        box.appendChild(document.createTextNode(match[0]));
      }
      position = MARKER.lastIndex;
    }
    if (position < text.length) box.appendChild(document.createTextNode(text.slice(position)));
  }

  function safeUrl(url) {
    return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
  }

  function evidenceItem(messageId, item) {
    var li = el("li");
    li.id = "ev-" + messageId + "-" + item.n;
    var details = el("details");
    var summary = el("summary");
    summary.appendChild(el("span", "n", "[" + item.n + "]"));
    summary.appendChild(document.createTextNode(" "));
    summary.appendChild(el("span", "badge origin-" + item.origin, item.origin));
    var label = item.source || (item.origin === "web" ? item.url : "") || "";
    if (item.page) label = label ? label + ", page " + item.page : "page " + item.page;
    summary.appendChild(document.createTextNode(" " + (label || item.kind || "")));
    details.appendChild(summary);
    details.appendChild(el("blockquote", null, item.text || ""));
    var href = null;
    if (item.origin === "web") href = safeUrl(item.url);
    else if (typeof item.view_url === "string" && /^\/documents\//.test(item.view_url)) href = item.view_url;
    else if (item.origin === "private" && item.document_id) href = "/documents/" + encodeURIComponent(item.document_id) + "/";
    if (href) {
      var p = el("p");
      var a = el("a", null, item.origin === "web" ? "Open the source page" : "Open the document");
      a.href = href;
      if (item.origin === "web") { a.rel = "noopener noreferrer nofollow"; a.target = "_blank"; }
      p.appendChild(a);
      details.appendChild(p);
    }
    li.appendChild(details);
    return li;
  }

  // answer: {id, content, evidence (cited items), grounded, support_score, model, engine, credits, refunded}
  // (as templates/chat/_answer.html renders a stored one)
  function renderAnswer(article, answer) {
    article.id = "msg-" + answer.id;
    article.setAttribute("data-id", answer.id);
    article.removeAttribute("aria-busy");
    Array.prototype.slice.call(article.querySelectorAll(".meta, .evidence, .error")).forEach(function (n) { n.remove(); });
    var known = {};
    (answer.evidence || []).forEach(function (item) { known[item.n] = true; });
    renderAnswerText(article.querySelector(".answer"), answer.content || "", known, answer.id);
    var meta = el("p", "meta");
    var badge = answer.grounded ? "Grounded" : (answer.refunded ? "Not in your documents" : "Not grounded");
    meta.appendChild(el("span", "badge " + (answer.grounded ? "grounded" : "ungrounded"), badge));
    meta.appendChild(el("span", "support", "Support " + Math.round((answer.support_score || 0) * 100) + "%"));
    var facts = [answer.model, answer.engine].filter(Boolean).join(" · ");
    if (answer.credits !== undefined && answer.credits !== null) {
      facts += (facts ? " · " : "") + answer.credits + " credits" + (answer.refunded ? " (refunded)" : "");
    }
    meta.appendChild(el("span", "help", facts));
    article.appendChild(meta);
    if ((answer.evidence || []).length) {
      var list = el("ul", "evidence");
      list.setAttribute("aria-label", "Cited evidence");
      answer.evidence.forEach(function (item) { list.appendChild(evidenceItem(answer.id, item)); });
      article.appendChild(list);
    }
  }

  function fromSend(data) {
    return {
      id: data.message_id, content: data.answer, evidence: data.evidence, grounded: data.grounded,
      support_score: data.support_score, model: data.model, engine: data.reasoning_engine,
      credits: data.usage ? data.usage.credits : null,
      // not in the documents: the turn's credits came back (chat.done carries no usage; the REST answer follows)
      refunded: data.answered === false || !!(data.usage && data.usage.credits_refunded)
    };
  }

  function fromRest(message) {
    var citations = message.citations || {};
    var usage = message.usage || {};
    return {
      id: message.id, content: message.content, evidence: message.evidence, grounded: citations.grounded,
      support_score: citations.support_score, model: message.model_name || usage.model,
      engine: message.reasoning_engine, credits: usage.credits, refunded: !!usage.credits_refunded
    };
  }

  function articleFor(messageId) {
    return streaming[messageId] || document.getElementById("msg-" + messageId);
  }

  function finish(data) {
    if (data.session_id && data.session_id !== sessionId) return;
    var article = articleFor(data.message_id) || (pending && (!pending.messageId || pending.messageId === data.message_id) ? pending.el : null);
    if (!article) { catchUp(); return; }
    delete streaming[data.message_id];
    renderAnswer(article, fromSend(data));
    if (typeof data.balance === "number") balanceBox.textContent = String(data.balance);
    if (data.title) updateTitle(data.title);
    var refused = data.answered === false || !!(data.usage && data.usage.credits_refunded);
    setStatus(data.grounded ? "Answered." : refused ? "Not in your documents; not charged (the credits came back)."
      : "Answered (not grounded in the evidence).");
    scrollToEnd();
  }

  function fail(article, text, question) {
    setStatus("");
    if (article) {
      article.removeAttribute("aria-busy");
      var box = article.querySelector(".answer");
      if (box) box.textContent = "";
      var error = el("p", "error", text);
      error.setAttribute("role", "alert");
      article.appendChild(error);
    } else {
      setStatus(text);
    }
    if (question && !textarea.value) textarea.value = question; // ready to retry
    textarea.focus();
  }

  function updateTitle(title) {
    $("chat-title").textContent = title;
    document.title = title + " · ExoGraph";
    var list = $("session-list");
    var item = list.querySelector('li[data-id="' + sessionId + '"]');
    if (!item) {
      var empty = $("session-empty");
      if (empty) empty.remove();
      item = el("li", "current");
      item.setAttribute("data-id", sessionId);
      var link = el("a");
      link.href = form.getAttribute("data-page") + sessionId + "/";
      link.setAttribute("aria-current", "page");
      item.appendChild(link);
      list.insertBefore(item, list.firstChild);
    }
    item.querySelector("a").textContent = title;
  }

  function scrollToEnd() {
    var last = log.lastElementChild;
    if (last && last.scrollIntoView) last.scrollIntoView({ block: "nearest" });
  }

  // --- live events ------------------------------------------------------------------------------

  function mine(event) { return sessionId && event.session_id === sessionId; }

  function streamingArticle(event) {
    if (streaming[event.message_id]) return streaming[event.message_id];
    if (pending && !pending.messageId) {
      pending.messageId = event.message_id;
      streaming[event.message_id] = pending.el;
      return pending.el;
    }
    return null; // another tab's question: the done event brings it in from REST
  }

  function onStatus(event) {
    if (!mine(event) || !streamingArticle(event)) return;
    setStatus(PHASES[event.phase] || "");
    if (event.phase === "checking") {
      var box = streaming[event.message_id].querySelector(".answer");
      if (box) box.textContent = "";
    }
  }

  function onToken(event) {
    if (!mine(event)) return;
    var article = streamingArticle(event);
    if (!article) return;
    var box = article.querySelector(".answer");
    box.appendChild(document.createTextNode(event.text));
    scrollToEnd();
  }

  function onDone(event) {
    if (!mine(event)) return;
    if (articleFor(event.message_id) || (pending && (!pending.messageId || pending.messageId === event.message_id))) finish(event);
    else if (!pending) catchUp();
  }

  function onError(event) {
    if (!mine(event)) return;
    var article = streaming[event.message_id];
    if (!article) return;
    delete streaming[event.message_id];
    fail(article, (event.error && event.error.message) || "The answer failed.", null);
  }

  // After a dropped socket (or another tab's answer): the session as REST has it.
  function catchUp() {
    if (!sessionId || pending) return;
    fetch(form.getAttribute("data-sessions-api") + sessionId + "/", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (session) {
        if (!session || pending) return;
        log.textContent = "";
        session.messages.forEach(function (message) {
          if (message.role === "user") { appendQuestion(message.content); return; }
          var article = appendAnswerShell();
          renderAnswer(article, fromRest(message));
        });
        if (session.title) updateTitle(session.title);
        scrollToEnd();
      })
      .catch(function () { /* the next reconnect tries again */ });
  }

  // --- citations --------------------------------------------------------------------------------

  function onCitation(event) {
    var link = event.target.closest("a.cite");
    if (!link) return;
    var target = document.getElementById(link.getAttribute("href").slice(1));
    if (!target) return;
    event.preventDefault();
    var details = target.querySelector("details");
    if (details) details.open = true;
    target.classList.add("flash");
    setTimeout(function () { target.classList.remove("flash"); }, 1200);
    target.scrollIntoView({ block: "nearest" });
    var summary = target.querySelector("summary");
    if (summary) summary.focus();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
