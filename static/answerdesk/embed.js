// Answerdesk's chat widget for a tenant's own site (docs/decisions/0054). No build step, no
// dependencies, no cookies: the snippet
//   <script src="https://answers.example.com/embed.js" data-tenant="paylane" async></script>
// adds a launcher button that opens the tenant's chat (/t/<tenant>/embed/) in an iframe panel.
// Optional: data-token (a short-lived customer token signed by the tenant's server) and
// data-label (the launcher's text) and data-close-label (the panel's close button), so a
// Czech site writes data-label="Nápověda" data-close-label="Zavřít". Open/closed is kept per
// tab in this page's sessionStorage; the conversation lives in the iframe, which closing only hides.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) { return; }
  var tenant = script.getAttribute("data-tenant") || "";
  if (!/^[a-z0-9][a-z0-9_-]*$/i.test(tenant)) {
    window.console && console.error("answerdesk: data-tenant is missing or malformed on the embed.js script tag");
    return;
  }
  var base = new URL(script.src, window.location.href).origin;
  var token = script.getAttribute("data-token") || "";
  var label = script.getAttribute("data-label") || "Help";
  var closeLabel = script.getAttribute("data-close-label") || "Close";
  var STATE_KEY = "answerdesk.embed." + tenant + ".open";
  var prefix = "answerdesk-" + tenant;

  function stored() { try { return window.sessionStorage.getItem(STATE_KEY); } catch (e) { return null; } }
  function store(open) { try { window.sessionStorage.setItem(STATE_KEY, open ? "1" : "0"); } catch (e) { /* blocked */ } }

  var style = document.createElement("style");
  style.textContent =
    "." + prefix + "-launcher{position:fixed;right:16px;bottom:16px;z-index:2147483000;font:600 15px/1.2 system-ui,sans-serif;" +
    "background:#1f5fbf;color:#fff;border:0;border-radius:24px;padding:12px 18px;box-shadow:0 2px 10px rgba(0,0,0,.25);cursor:pointer}" +
    "." + prefix + "-launcher:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}" +
    "." + prefix + "-panel{position:fixed;right:16px;bottom:72px;z-index:2147483000;width:400px;height:600px;" +
    "max-width:calc(100vw - 32px);max-height:calc(100vh - 96px);background:#fff;border:1px solid #d9dde5;border-radius:12px;" +
    "box-shadow:0 6px 28px rgba(0,0,0,.25);display:flex;flex-direction:column;overflow:hidden}" +
    "." + prefix + "-panel[hidden]{display:none}" +
    "." + prefix + "-bar{display:flex;justify-content:space-between;align-items:center;padding:6px 10px;" +
    "font:600 14px/1.2 system-ui,sans-serif;color:#1d2330;border-bottom:1px solid #d9dde5}" +
    "." + prefix + "-close{font:inherit;background:none;border:1px solid #d9dde5;border-radius:6px;padding:3px 9px;cursor:pointer}" +
    "." + prefix + "-panel iframe{flex:1;width:100%;border:0}";
  document.head.appendChild(style);

  var launcher = document.createElement("button");
  launcher.type = "button";
  launcher.className = prefix + "-launcher";
  launcher.id = prefix + "-launcher";
  launcher.textContent = label;
  launcher.setAttribute("aria-expanded", "false");
  launcher.setAttribute("aria-controls", prefix + "-panel");
  launcher.setAttribute("aria-haspopup", "dialog");

  var panel = document.createElement("div");
  panel.className = prefix + "-panel";
  panel.id = prefix + "-panel";
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-label", label + " chat");
  panel.hidden = true;
  var bar = document.createElement("div");
  bar.className = prefix + "-bar";
  var title = document.createElement("span");
  title.textContent = label;
  var close = document.createElement("button");
  close.type = "button";
  close.className = prefix + "-close";
  close.textContent = closeLabel;
  close.setAttribute("aria-label", closeLabel + ": " + label);
  bar.appendChild(title);
  bar.appendChild(close);
  panel.appendChild(bar);

  var frame = null;
  function focusChat() {
    if (frame && frame.contentWindow) { frame.contentWindow.postMessage({ answerdesk: "focus" }, base); }
  }
  // Made on first open, then only hidden: the conversation survives closing and reopening.
  function ensureFrame(focus) {
    if (frame) { return; }
    frame = document.createElement("iframe");
    frame.title = label + " chat";
    // The page's own origin goes along: on a site not (yet) allowed, the server answers with a
    // notice naming it and where to allow it, instead of a frame the browser refuses blank.
    frame.src = base + "/t/" + encodeURIComponent(tenant) + "/embed/?origin=" +
      encodeURIComponent(window.location.origin) + (token ? "&token=" + encodeURIComponent(token) : "");
    frame.addEventListener("load", function () { if (focus && !panel.hidden) { focusChat(); } });
    panel.appendChild(frame);
  }

  function setOpen(open, options) {
    var focus = !options || options.focus !== false;
    if (open) { ensureFrame(focus); }
    panel.hidden = !open;
    launcher.setAttribute("aria-expanded", open ? "true" : "false");
    store(open);
    if (!focus) { return; }
    if (open) { focusChat(); } else { launcher.focus(); }
  }

  launcher.addEventListener("click", function () { setOpen(panel.hidden); });
  close.addEventListener("click", function () { setOpen(false); });
  panel.addEventListener("keydown", function (event) { if (event.key === "Escape") { setOpen(false); } });
  // Escape pressed inside the frame: the chat page asks us to close (it can do nothing else).
  window.addEventListener("message", function (event) {
    if (frame && event.source === frame.contentWindow && event.origin === base &&
        event.data && event.data.answerdesk === "close" && !panel.hidden) {
      setOpen(false);
    }
  });

  function mount() {
    document.body.appendChild(panel);
    document.body.appendChild(launcher);
    if (stored() === "1") { setOpen(true, { focus: false }); }
  }
  if (document.body) { mount(); } else { document.addEventListener("DOMContentLoaded", mount); }
})();
