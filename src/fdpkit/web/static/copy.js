// Copy buttons: <button data-copy="ID"> copies the text of element ID (event delegation, so
// it also works on content swapped in by htmx). No inline script: the CSP allows 'self' only.
(function () {
  "use strict";
  function select(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-copy]") : null;
    if (!button) { return; }
    var el = document.getElementById(button.getAttribute("data-copy"));
    if (!el) { return; }
    var text = el.innerText;
    var label = button.textContent;
    function done(ok) {
      button.textContent = ok ? "Copied" : "Selected: press Ctrl+C";
      button.setAttribute("data-copied", ok ? "yes" : "selected");
      window.setTimeout(function () { button.textContent = label; }, 2000);
    }
    function fallback() {
      select(el);
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      done(ok);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    } else {
      fallback();
    }
  });
}());
