// expert serve: a small enhancement of a page that works without it. As the
// fields change, the answer is asked again (debounced) and put in place; the
// address keeps the profile, so it stays shareable. Nothing typed is replaced.
(function () {
  "use strict";
  var form = document.getElementById("consultation");
  if (!form || !window.fetch || !window.DOMParser || !window.URLSearchParams) return;
  var timer = null, asked = 0;

  function query() {
    var pairs = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (String(value).trim() !== "") pairs.append(key, value);
    });
    return pairs.toString();
  }

  function replace(doc, id) {
    var now = document.getElementById(id), next = doc.getElementById(id);
    if (now && next) now.replaceWith(next);
  }

  function update() {
    var address = "/?" + query(), mine = ++asked;
    var answer = document.getElementById("answer");
    if (answer) answer.classList.add("updating");
    fetch(address, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (mine !== asked) return;       // a later change was asked meanwhile
        var doc = new DOMParser().parseFromString(html, "text/html");
        replace(doc, "answer");
        replace(doc, "e-form");
        replace(doc, "lang-toggle");
        form.querySelectorAll(".field").forEach(function (field) {
          var next = doc.getElementById(field.id);
          if (!next) return;
          field.classList.toggle("invalid", next.classList.contains("invalid"));
          var error = field.querySelector(".error"), nextError = next.querySelector(".error");
          if (error && nextError) { error.textContent = nextError.textContent; error.hidden = nextError.hidden; }
          var control = field.querySelector("input, select"), nextControl = next.querySelector("input, select");
          if (control && nextControl) {
            if (nextControl.hasAttribute("aria-invalid")) control.setAttribute("aria-invalid", "true");
            else control.removeAttribute("aria-invalid");
          }
        });
        history.replaceState(null, "", address);
      })
      .catch(function () {
        var answer = document.getElementById("answer");
        if (answer) answer.classList.remove("updating");
      });
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(update, 600);
  }

  form.addEventListener("input", later);
  form.addEventListener("change", later);
  form.addEventListener("submit", function (event) {
    // the address without the empty fields: shorter to share
    event.preventDefault();
    window.location.assign("/?" + query());
  });
})();
