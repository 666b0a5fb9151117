/* Fathom's chat widget: a floating bubble that opens a share link's chat in a frame.
 *
 *   <script src="https://fathom.example.com/js/widget.js" data-share-id="…" defer></script>
 *
 * data-share-id (required) the link's shareId; data-auth-token: the visitor's id given by your site
 * (the link's authToken); data-default-open="true": open on load; data-position="left": bottom left
 * instead of bottom right; data-color: the bubble's colour; data-title: the panel's title.
 * The page in the frame loads only on a site named in the link's allowed origins (console: Share links).
 * On screens narrower than 640px the panel takes the whole screen.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.__fathomChatWidget) return;
  window.__fathomChatWidget = true;
  var shareId = script.getAttribute("data-share-id");
  if (!shareId) {
    console.error("Fathom widget: the script tag needs data-share-id");
    return;
  }
  var query = "shareId=" + encodeURIComponent(shareId) + "&embed=1";
  var token = script.getAttribute("data-auth-token");
  if (token) query += "&authToken=" + encodeURIComponent(token);
  var pageUrl = new URL("../chat/share?" + query, script.src).href;
  var side = script.getAttribute("data-position") === "left" ? "left" : "right";
  var color = script.getAttribute("data-color") || "#2563eb";
  var title = script.getAttribute("data-title") || "Chat";
  var narrow = window.matchMedia("(max-width: 640px)");
  var bubble, panel, frame;

  function style(el, rules) {
    for (var key in rules) el.style.setProperty(key, rules[key]);
  }

  function layout() {
    if (!panel) return;
    var open = panel.style.display !== "none";
    if (narrow.matches) {
      style(panel, { top: "0", bottom: "0", left: "0", right: "0", width: "100%", height: "100%", "border-radius": "0" });
      bubble.style.display = open ? "none" : "flex";
    } else {
      style(panel, { top: "auto", bottom: "88px", width: "380px", height: "min(600px, calc(100vh - 112px))", "border-radius": "12px" });
      panel.style.setProperty(side, "20px");
      panel.style.setProperty(side === "left" ? "right" : "left", "auto");
      bubble.style.display = "flex";
    }
  }

  function makePanel() {
    panel = document.createElement("div");
    panel.id = "fathom-chat-panel";
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-label", title);
    style(panel, {
      position: "fixed", "z-index": "2147483646", display: "flex", "flex-direction": "column",
      background: "#fff", "box-shadow": "0 8px 32px rgba(0,0,0,.25)", overflow: "hidden",
    });
    var head = document.createElement("div");
    style(head, {
      display: "flex", "align-items": "center", "justify-content": "space-between", padding: "8px 12px",
      background: color, color: "#fff", font: "600 15px/1.4 system-ui, sans-serif",
    });
    head.appendChild(document.createTextNode(title));
    var close = document.createElement("button");
    close.type = "button";
    close.id = "fathom-chat-close";
    close.setAttribute("aria-label", "Close");
    close.textContent = "\u00d7";
    style(close, { background: "none", border: "0", color: "#fff", "font-size": "22px", cursor: "pointer", padding: "0 4px" });
    close.onclick = function () { toggle(false); };
    head.appendChild(close);
    frame = document.createElement("iframe");
    frame.id = "fathom-chat-frame";
    frame.title = title;
    frame.src = pageUrl;
    frame.setAttribute("allow", "clipboard-write");
    style(frame, { flex: "1", width: "100%", border: "0" });
    panel.appendChild(head);
    panel.appendChild(frame);
    document.body.appendChild(panel);
  }

  function toggle(open) {
    if (open && !panel) makePanel();
    if (!panel) return;
    panel.style.display = open ? "flex" : "none";
    bubble.setAttribute("aria-expanded", open ? "true" : "false");
    layout();
  }

  function start() {
    bubble = document.createElement("button");
    bubble.type = "button";
    bubble.id = "fathom-chat-bubble";
    bubble.setAttribute("aria-label", title);
    bubble.setAttribute("aria-expanded", "false");
    bubble.innerHTML =
      '<svg width="28" height="28" viewBox="0 0 24 24" fill="none" stroke="#fff" stroke-width="2" ' +
      'stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M21 15a2 2 0 0 1-2 2H7l-4 ' +
      '4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z"/></svg>';
    style(bubble, {
      position: "fixed", bottom: "20px", width: "56px", height: "56px", "border-radius": "50%", border: "0",
      background: color, "box-shadow": "0 4px 16px rgba(0,0,0,.25)", cursor: "pointer", display: "flex",
      "align-items": "center", "justify-content": "center", "z-index": "2147483647", padding: "0",
    });
    bubble.style.setProperty(side, "20px");
    bubble.onclick = function () { toggle(!panel || panel.style.display === "none"); };
    document.body.appendChild(bubble);
    if (narrow.addEventListener) narrow.addEventListener("change", layout);
    if (script.getAttribute("data-default-open") === "true") toggle(true);
  }

  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
