// The chat page's glue: a conversation id made here, the last turns sent with each question,
// the sources sheet below 1024 px, and markers that open their source. htmx does the rest.
(function () {
  "use strict";

  var SHEET_QUERY = "(max-width: 1023.98px)";

  function newConversationId() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") {
      return window.crypto.randomUUID();
    }
    // randomUUID exists only in secure contexts; plain-http deployments still need an id.
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  // Completed turns only: a turn still streaming has no footer yet, a failed one has no answer.
  function history() {
    var list = document.getElementById("turns");
    var limit = parseInt(list.getAttribute("data-history-turns"), 10) || 6;
    var turns = [];
    list.querySelectorAll(".turn").forEach(function (turn) {
      var footer = turn.querySelector(".turn-footer[data-answer-text]");
      if (!footer) { return; }
      turns.push({ role: "user", content: turn.getAttribute("data-question") });
      turns.push({ role: "assistant", content: footer.getAttribute("data-answer-text") });
    });
    return turns.slice(-limit);
  }

  function sheetMode() { return window.matchMedia(SHEET_QUERY).matches; }

  function setSheet(open, returnFocusTo) {
    var panel = document.getElementById("sources");
    var toggle = document.getElementById("sources-toggle");
    panel.classList.toggle("is-open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) {
      panel.querySelector(".sources-close").focus({ preventScroll: true });
    } else if (returnFocusTo) {
      returnFocusTo.focus();
    }
  }

  function refreshCount() {
    var newest = document.querySelector("#source-groups .source-group");
    var count = newest ? newest.querySelectorAll(".source").length : 0;
    document.getElementById("source-count").textContent = String(count);
    document.getElementById("sources-empty").hidden = Boolean(newest);
  }

  function openSource(marker) {
    var target = document.getElementById(marker.getAttribute("data-source"));
    if (!target) { return; }
    target.open = true;
    if (sheetMode()) { setSheet(true); }
    target.scrollIntoView({ block: "nearest" });
    target.classList.add("is-highlighted");
    window.setTimeout(function () { target.classList.remove("is-highlighted"); }, 1600);
    var summary = target.querySelector("summary");
    if (summary) { summary.focus({ preventScroll: true }); }
  }

  // Follow-ups of this browser (docs/decisions/0044): each abstention's opaque link is kept in
  // localStorage; on each visit the page asks for its status and shows a badge when a reply
  // has arrived that this browser has not read (the follow-up page records what was read).
  var FOLLOWUPS_KEY = "answerdesk.followups." + window.location.pathname.split("/")[2];

  function storedFollowups() {
    try { return JSON.parse(window.localStorage.getItem(FOLLOWUPS_KEY) || "[]"); } catch (e) { return []; }
  }

  function rememberFollowups() {
    var stored = storedFollowups();
    var known = stored.map(function (f) { return f.id; });
    document.querySelectorAll("a.followup-link[data-followup-id]").forEach(function (link) {
      var id = link.getAttribute("data-followup-id");
      if (known.indexOf(id) !== -1) { return; }
      stored.push({ id: id, url: link.getAttribute("href"), status: link.getAttribute("data-followup-status"), read: 0 });
      known.push(id);
    });
    try { window.localStorage.setItem(FOLLOWUPS_KEY, JSON.stringify(stored.slice(-20))); } catch (e) { /* full */ }
  }

  function showBadge(followup, replies) {
    var badge = document.getElementById("followup-badge");
    badge.hidden = false;
    var link = document.createElement("a");
    link.href = followup.url;
    link.className = "followup-badge-link";
    // The words come translated from the page (templates/chat/page.html), not from a JS catalogue.
    link.textContent = replies === 1 ? badge.getAttribute("data-one-reply")
      : badge.getAttribute("data-replies").replace("{count}", String(replies));
    badge.appendChild(link);
  }

  function checkFollowups() {
    storedFollowups().forEach(function (followup) {
      window.fetch(followup.status, { credentials: "same-origin" }).then(function (response) {
        return response.ok ? response.json() : null;
      }).then(function (state) {
        if (state && state.replies > (followup.read || 0)) { showBadge(followup, state.replies); }
      }).catch(function () { /* offline: no badge */ });
    });
  }

  // The embedded chat (answering/chat/embed.py): the streamed fragments post to the page's own
  // URLs (feedback, follow-up contact), which want the session's CSRF cookie; embedded, the
  // same requests go to their cookie-free twins under embed/, with the ticket in hx-headers.
  var EMBED_TWINS = /^(\/t\/[^\/]+\/)(feedback|person|f\/[^\/]+\/contact)$/;

  function embedSetup() {
    document.body.addEventListener("htmx:configRequest", function (event) {
      var twin = EMBED_TWINS.exec(event.detail.path);
      if (twin) { event.detail.path = twin[1] + "embed/" + twin[2]; }
    });
    // A link out of the frame (a follow-up page) opens a tab: the site is not framable elsewhere.
    document.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a[href]:not(.marker)");
      if (link && link.getAttribute("href").charAt(0) !== "#") { link.target = "_blank"; link.rel = "noopener"; }
    });
    // Escape with focus inside the frame reaches only this document: ask the host page to close
    // the panel (unless Escape is closing the sources sheet). The message carries nothing else.
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape" || document.getElementById("sources").classList.contains("is-open")) { return; }
      if (window.parent !== window) { window.parent.postMessage({ answerdesk: "close" }, "*"); }
    }, true);
    window.addEventListener("message", function (event) {
      if (event.source === window.parent && event.data && event.data.answerdesk === "focus") {
        document.getElementById("question").focus();
      }
    });
  }

  // The conversation outlives a reload (issue 48), per tab: each finished turn as the server
  // rendered it (question, answer, footer with its trace and signed ticket) and its sources
  // group, in this tab's sessionStorage, keyed by tenant; the server keeps nothing (0106). The
  // stream URLs are dropped (each was answered once). The follow-up history is read from the
  // restored turns (history() above), so a question after a reload is still a follow-up. A
  // conversation saved with other audiences (signed out since, say) is not shown again. Where
  // the browser refuses storage (a third-party frame, a full quota) a reload starts afresh.
  var MAX_SAVED_TURNS = 40;

  function conversationKey() {
    var tenant = window.location.pathname.split("/")[2];
    return "answerdesk.conversation." + tenant + (document.body.hasAttribute("data-embed") ? ".embed" : "");
  }

  function audiences() {
    var span = document.querySelector(".audiences[data-audiences]");
    return span ? span.getAttribute("data-audiences") : "";
  }

  function finishedTurns() {
    var saved = [];
    document.querySelectorAll("#turns > .turn").forEach(function (turn) {
      var footer = turn.querySelector(".turn-footer");
      if (!footer) { return; }  // still streaming: saved once it ends
      var copy = turn.cloneNode(true);
      copy.querySelectorAll("[sse-connect]").forEach(function (el) { el.removeAttribute("sse-connect"); });
      // A vote's "thanks" took the focus once; put back, it must not take it from the question box.
      copy.querySelectorAll("[autofocus]").forEach(function (el) { el.removeAttribute("autofocus"); });
      // Saved mid-settle (pagehide), htmx's passing classes would be kept for good.
      copy.querySelectorAll(".htmx-added, .htmx-settling, .htmx-swapping, .htmx-request").forEach(function (el) {
        el.classList.remove("htmx-added", "htmx-settling", "htmx-swapping", "htmx-request");
        if (!el.className) { el.removeAttribute("class"); }
      });
      var id = turn.id.replace(/^turn-/, "");
      var group = document.getElementById("group-" + id);
      saved.push({ turn: id, question: turn.getAttribute("data-question"), trace: footer.getAttribute("data-trace") || "",
                   html: copy.outerHTML, sources: group ? group.outerHTML : "" });
    });
    return saved.slice(-MAX_SAVED_TURNS);
  }

  function saveConversation() {
    var state = { v: 1, id: document.getElementById("conversation-id").value, audiences: audiences(),
                  turns: finishedTurns() };
    try {
      if (state.turns.length) {
        window.sessionStorage.setItem(conversationKey(), JSON.stringify(state));
      } else {
        window.sessionStorage.removeItem(conversationKey());
      }
    } catch (e) { /* refused or full */ }
    showTools();
  }

  // True when a saved conversation was put back on the page.
  function restoreConversation() {
    var state = null;
    try { state = JSON.parse(window.sessionStorage.getItem(conversationKey()) || "null"); } catch (e) { return false; }
    if (!state || state.v !== 1 || !state.turns || !state.turns.length || state.audiences !== audiences()) {
      return false;
    }
    var turns = document.getElementById("turns");
    var groups = document.getElementById("source-groups");
    state.turns.forEach(function (saved) {
      turns.insertAdjacentHTML("beforeend", saved.html);
      if (saved.sources) { groups.insertAdjacentHTML("afterbegin", saved.sources); }
    });
    turns.querySelectorAll("[sse-connect]").forEach(function (el) { el.removeAttribute("sse-connect"); });
    document.getElementById("conversation-id").value = state.id;
    window.htmx.process(turns);
    window.htmx.process(groups);
    refreshCount();
    showTools();
    var last = turns.lastElementChild;
    if (last) { reveal(last, true); }
    return true;
  }

  function newConversation() {
    try { window.sessionStorage.removeItem(conversationKey()); } catch (e) { /* refused */ }
    document.getElementById("turns").innerHTML = "";
    document.getElementById("source-groups").innerHTML = "";
    document.getElementById("conversation-id").value = newConversationId();
    refreshCount();
    showTools();
    document.getElementById("question").focus();
  }

  function showTools() {
    document.getElementById("conversation-tools").hidden = !document.querySelector("#turns > .turn");
  }

  // Scroll so the end of `el` (the newest turn, a footer) sits just above the sticky question
  // box, never so far that its top leaves the screen: a long answer is read from its start.
  // `always`: just added or swapped; otherwise only while the visitor is looking at it (its top
  // on screen), so reading an earlier turn during a stream is not interrupted.
  function reveal(el, always) {
    var rect = el.getBoundingClientRect();
    if (!always && (rect.top < 0 || rect.top > window.innerHeight)) { return; }
    var askTop = document.getElementById("ask").getBoundingClientRect().top;
    var margin = 12;
    var by = Math.min(rect.bottom - askTop + margin, rect.top - margin);
    if (by > 0) { window.scrollBy(0, by); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    checkFollowups();
    document.body.addEventListener("htmx:oobAfterSwap", rememberFollowups);
    document.body.addEventListener("htmx:afterSettle", rememberFollowups);
    var form = document.getElementById("ask");
    var question = document.getElementById("question");
    if (document.body.hasAttribute("data-embed")) { embedSetup(); }
    if (!restoreConversation()) { document.getElementById("conversation-id").value = newConversationId(); }
    document.body.addEventListener("htmx:sseClose", saveConversation);
    document.body.addEventListener("htmx:afterSettle", saveConversation);
    // A reload right after an answer ends may come before the settle: save on the way out too.
    window.addEventListener("pagehide", saveConversation);
    document.getElementById("new-conversation").addEventListener("click", newConversation);
    // A new turn (the ask's swap into #turns) comes into view; its answer follows as it streams.
    document.body.addEventListener("htmx:afterSettle", function (event) {
      if (event.detail.target && event.detail.target.id === "turns") {
        var last = document.getElementById("turns").lastElementChild;
        if (last) { reveal(last, true); }
      }
    });
    document.body.addEventListener("htmx:sseMessage", function (event) {
      var turn = event.target.closest && event.target.closest(".turn");
      if (turn) { reveal(turn, false); }
    });
    // What a vote or "talk to a person" brings (the offer of a person, the follow-up link) shows
    // above the question box too; the footer stays while the forms in it are swapped.
    var footerOfRequest = null;
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      var elt = event.detail && event.detail.elt;
      footerOfRequest = elt && elt.closest ? elt.closest(".turn-footer") : null;
    });
    document.body.addEventListener("htmx:afterSettle", function () {
      if (footerOfRequest && footerOfRequest.isConnected) { reveal(footerOfRequest, true); }
      footerOfRequest = null;
    });

    form.addEventListener("htmx:configRequest", function (event) {
      if (event.target !== form) { return; }
      event.detail.parameters.history = JSON.stringify(history());
      event.detail.parameters.conversation_id = document.getElementById("conversation-id").value;
    });
    form.addEventListener("htmx:afterRequest", function (event) {
      if (event.target === form && event.detail.xhr && event.detail.xhr.status === 200) {
        question.value = "";
        question.focus();
      }
    });
    question.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });

    document.getElementById("sources-toggle").addEventListener("click", function (event) {
      setSheet(!document.getElementById("sources").classList.contains("is-open"), event.currentTarget);
    });
    document.querySelector("#sources .sources-close").addEventListener("click", function () {
      setSheet(false, document.getElementById("sources-toggle"));
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && document.getElementById("sources").classList.contains("is-open")) {
        setSheet(false, document.getElementById("sources-toggle"));
      }
    });
    document.addEventListener("click", function (event) {
      var marker = event.target.closest && event.target.closest("a.marker");
      if (!marker) { return; }
      event.preventDefault();
      openSource(marker);
    });

    // The screen reader reads the answer once, complete, rather than word by word.
    document.body.addEventListener("htmx:sseBeforeMessage", function (event) {
      if (event.detail && event.detail.type === "done") {
        var reply = event.target.closest(".reply");
        var answer = reply && reply.querySelector(".answer");
        if (answer) { answer.setAttribute("aria-busy", "false"); }
      }
    });
    // The extension reconnects forever, and a reconnect would ask the question again: a turn
    // whose stream fails before `done` ends here, with a message, and the visitor may ask again.
    document.body.addEventListener("htmx:sseError", function (event) {
      var reply = event.target.closest && event.target.closest(".reply");
      if (!reply || reply.querySelector(".turn-footer")) { return; }
      if (event.detail && event.detail.source) { event.detail.source.close(); }
      reply.removeAttribute("sse-connect");
      var status = reply.querySelector(".turn-status");
      var failed = document.createElement("div");
      failed.className = "turn-footer turn-failed";
      failed.setAttribute("role", "alert");
      failed.textContent = document.getElementById("turns").getAttribute("data-failed-text");
      if (status) { status.replaceWith(failed); } else { reply.appendChild(failed); }
      reply.querySelector(".answer").setAttribute("aria-busy", "false");
    });
    document.body.addEventListener("htmx:afterSettle", refreshCount);
    document.body.addEventListener("htmx:sseMessage", refreshCount);
    document.body.addEventListener("htmx:oobAfterSwap", refreshCount);
  });
})();
