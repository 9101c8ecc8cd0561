/* fdpkit pages: show only the inputs that apply, a progress indicator with elapsed time,
   and results announced (aria-live) and focused. No maths here. */
(function () {
  "use strict";
  var timer = null, started = 0;

  /* a select, or a group of radio buttons (the checked one), decides which boxes apply */
  function applyWhen(root) {
    (root || document).querySelectorAll("select[data-controls], input[type=radio][data-controls]:checked").forEach(function (sel) {
      var name = sel.getAttribute("data-controls");
      document.querySelectorAll("[data-when-" + name + "]").forEach(function (box) {
        var on = box.getAttribute("data-when-" + name).split(" ").indexOf(sel.value) >= 0;
        box.hidden = !on;
        box.querySelectorAll("input, select, textarea").forEach(function (el) { el.disabled = !on; });
      });
    });
  }

  function announce() {
    var res = document.getElementById("results");
    var live = document.getElementById("live");
    var err = document.querySelector("#main [role=alert]");
    if (res) {
      var head = res.querySelector("h2");
      var grade = res.querySelector(".grade-label");
      if (live) { live.textContent = "Result: " + (head ? head.textContent : "") + (grade ? ". " + grade.textContent.replace(/\s+/g, " ") : ""); }
      res.focus();
    } else if (err && live) {
      live.textContent = "Error: " + err.textContent;
      err.focus && err.setAttribute("tabindex", "-1");
      err.focus();
    }
  }

  function startProgress(label) {
    var box = document.getElementById("progress"), el = document.getElementById("elapsed");
    var text = document.getElementById("progress-label");
    if (!box) { return; }
    if (text) { text.textContent = label || "Working…"; }
    started = Date.now(); el.textContent = "0"; box.hidden = false;
    timer = setInterval(function () { el.textContent = Math.floor((Date.now() - started) / 1000); }, 500);
  }

  function stopProgress() {
    var box = document.getElementById("progress");
    if (timer) { clearInterval(timer); timer = null; }
    if (box) { box.hidden = true; }
  }

  /* inputs that exclude each other (sample rate / batch size, steps / epochs, required power /
     max relative power loss): typing one clears the other, instead of a refusal on submit */
  document.addEventListener("input", function (e) {
    var el = e.target;
    if (!el || !el.getAttribute || !el.value) { return; }
    var names = el.getAttribute("data-excludes");
    if (!names || !el.form) { return; }
    names.split(" ").forEach(function (name) {
      var other = el.form.querySelector("[name='" + name + "']");
      if (other && other.value) { other.value = ""; }
    });
  });

  /* "Load example": the form starts empty (placeholders show the example); this fills it */
  document.addEventListener("click", function (e) {
    var btn = e.target && e.target.closest ? e.target.closest("[data-example]") : null;
    if (!btn || !btn.form) { return; }
    var example = JSON.parse(btn.getAttribute("data-example"));
    var box = btn.closest("[data-when-kind], [data-when-mode], fieldset, form");
    box.querySelectorAll("input[type=text], input:not([type]), textarea").forEach(function (input) {
      input.value = Object.prototype.hasOwnProperty.call(example, input.name) ? example[input.name] : "";
    });
    Object.keys(example).forEach(function (name) {
      var input = btn.form.querySelector("[name='" + name + "']");
      if (input && input.type !== "radio" && input.type !== "checkbox") { input.value = example[name]; }
    });
    applyWhen();  /* a select the example set (Plan's guide) decides which boxes apply */
    var first = box.querySelector("input[type=text]");
    if (first) { first.focus(); }
  });

  /* numbers such as 4e-05 or 1.2e+03 never break across lines (at their minus sign): the server
     already wraps the numbers it formats and the sentences of results in span.num (works without
     JavaScript); this catches any other text */
  var NUMBER = /\d(?:[.,]\d+)*e[-+]\d+/g;
  function keepNumbersWhole(root) {
    var box = root || document.getElementById("main");
    if (!box || !document.createTreeWalker) { return; }
    var walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT, null), nodes = [], n;
    while ((n = walker.nextNode())) {
      var tag = n.parentNode && n.parentNode.nodeName;
      /* not inside figures: an HTML span in SVG text is not drawn (the number vanished from legends) */
      if (n.parentNode.closest && n.parentNode.closest("svg")) { continue; }
      if (tag !== "SCRIPT" && tag !== "STYLE" && tag !== "TEXTAREA" && !(n.parentNode.classList && (n.parentNode.classList.contains("nb") || n.parentNode.classList.contains("num")))
          && n.nodeValue.search(NUMBER) >= 0) { nodes.push(n); }
      NUMBER.lastIndex = 0;
    }
    nodes.forEach(function (node) {
      var text = node.nodeValue, frag = document.createDocumentFragment(), last = 0, m;
      NUMBER.lastIndex = 0;
      while ((m = NUMBER.exec(text))) {
        var start = m.index;
        while (start > 0 && /[\d.,-]/.test(text.charAt(start - 1))) { start -= 1; }
        if (start < last) { start = last; }
        frag.appendChild(document.createTextNode(text.slice(last, start)));
        var span = document.createElement("span");
        span.className = "nb"; span.textContent = text.slice(start, m.index + m[0].length);
        frag.appendChild(span);
        last = m.index + m[0].length;
      }
      frag.appendChild(document.createTextNode(text.slice(last)));
      node.parentNode.replaceChild(frag, node);
    });
  }

  /* a result answered to a POST (Audit's file uploads share its form) carries its permalink: put it in the
     address bar, so that reload and bookmarks keep the answer */
  function showPermalink() {
    var res = document.getElementById("results"), link = res && res.getAttribute("data-permalink");
    if (link && window.history && history.replaceState && link.charAt(0) === "/") { history.replaceState(null, "", link); }
  }

  document.addEventListener("change", function (e) {
    if (e.target && e.target.matches && e.target.matches("select[data-controls], input[type=radio][data-controls]")) { applyWhen(); }
  });
  /* a download (form[data-download]: the report's PDF takes a second or two to render) is fetched
     with the indicator shown ("Preparing PDF… 2 s") and saved when it arrives; an error is said
     beside the buttons. A plain form post would leave the page as it is, and the indicator with it. */
  function downloadStatus(form) {
    var box = form.closest(".downloads") || form.parentNode, el = box.querySelector(".download-status");
    if (!el) {
      el = document.createElement("p");
      el.className = "download-status hint";
      box.appendChild(el);
    }
    return el;
  }

  function download(form) {
    var button = form.querySelector("button"), status = downloadStatus(form), live = document.getElementById("live");
    var what = form.getAttribute("data-download") || "file";
    startProgress("Preparing " + what + "…");
    if (button) { button.disabled = true; }
    form.setAttribute("aria-busy", "true");
    status.removeAttribute("role"); status.classList.remove("error"); status.textContent = "";
    fetch(form.action, {method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin"})
      .then(function (r) {
        if (!r.ok) {
          return r.text().then(function (t) {
            var msg = t;
            try { msg = JSON.parse(t).detail || t; } catch (ignore) { /* not JSON: the text itself */ }
            throw new Error(String(msg).slice(0, 500) || ("HTTP " + r.status));
          });
        }
        var m = /filename="([^"]+)"/.exec(r.headers.get("Content-Disposition") || "");
        var name = m ? m[1] : "fdpkit." + what.toLowerCase();
        return r.blob().then(function (blob) {
          var a = document.createElement("a"), url = URL.createObjectURL(blob);
          a.href = url; a.download = name; a.hidden = true;
          document.body.appendChild(a); a.click();
          setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 10000);
          status.textContent = "Downloaded " + name + ".";
          if (live) { live.textContent = "Downloaded " + name; }
        });
      })
      .catch(function (err) {
        status.classList.add("error"); status.setAttribute("role", "alert");
        status.textContent = what + " download failed: " + err.message;
      })
      .then(function () {
        stopProgress();
        if (button) { button.disabled = false; }
        form.removeAttribute("aria-busy");
      });
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form && form.hasAttribute("data-download")) {
      if (window.fetch && window.URL && URL.createObjectURL) { e.preventDefault(); download(form); }
      return;  /* without fetch: the browser's own download, no indicator that would never stop */
    }
    /* plain form posts (no htmx) also show the indicator until the new page arrives */
    if (form && !form.hasAttribute("hx-post") && !form.hasAttribute("hx-get")) { startProgress(); }
  });
  /* the report's figures and representations load after the result (#report-extras, its
     own progress bar): they neither restart the page's progress nor move the focus */
  function extras(e) {
    var elt = e.detail && e.detail.elt;
    return (elt && elt.id === "report-extras") || (e.target && e.target.id === "report-extras");
  }
  document.addEventListener("htmx:beforeRequest", function (e) { if (!extras(e)) { startProgress(); } });
  document.addEventListener("htmx:afterRequest", function (e) { if (!extras(e)) { stopProgress(); } });
  document.addEventListener("htmx:afterSettle", function (e) {
    if (extras(e)) { keepNumbersWhole(); return; }
    applyWhen(); keepNumbersWhole(); showPermalink(); announce();
  });
  document.addEventListener("DOMContentLoaded", function () {
    applyWhen();
    keepNumbersWhole();
    showPermalink();
    if (document.getElementById("results") || document.querySelector("#main [role=alert]")) { announce(); }
  });
  window.addEventListener("pageshow", stopProgress);
})();
