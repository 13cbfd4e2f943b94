// The follow-up page records in this browser how many replies have been read, so the chat
// page's badge (chat.js) shows only replies that arrived since.
(function () {
  "use strict";
  function markRead() {
    var page = document.querySelector("main.followup[data-followup-id]");
    if (!page) { return; }
    var key = "answerdesk.followups." + page.getAttribute("data-tenant");
    var id = page.getAttribute("data-followup-id");
    var replies = document.querySelectorAll(".message-agent").length;
    var stored;
    try { stored = JSON.parse(window.localStorage.getItem(key) || "[]"); } catch (e) { stored = []; }
    var entry = stored.filter(function (f) { return f.id === id; })[0];
    if (!entry) {
      entry = { id: id, url: window.location.pathname, status: window.location.pathname + "status", read: 0 };
      stored.push(entry);
    }
    entry.read = Math.max(entry.read || 0, replies);
    try { window.localStorage.setItem(key, JSON.stringify(stored.slice(-20))); } catch (e) { /* full */ }
  }
  document.addEventListener("DOMContentLoaded", markRead);
  document.addEventListener("htmx:afterSettle", markRead);
})();
