// engram console: small progressive enhancements; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // An admin's tenant picker switches on change.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
  });
  // Rolling back asks first.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { ev.preventDefault(); }
    });
  });
});
