// engram console: small progressive enhancements; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // An admin's tenant picker switches on change.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
  });
  // On a phone the section bar scrolls sideways: show the current section.
  var current = document.querySelector("nav.main a[aria-current]");
  if (current && current.parentElement.scrollWidth > current.parentElement.clientWidth) {
    current.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
  // Rolling back asks first.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { ev.preventDefault(); }
    });
  });
});
