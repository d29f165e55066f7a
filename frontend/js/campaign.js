// Volunteer pages. Everything here is an enhancement: without JavaScript the guidelines open
// in a new tab and the answers are plain form posts.
(function () {
  "use strict";
  document.documentElement.classList.add("js"); // shows what only works with JavaScript (keys)

  var dialog = document.getElementById("guidelines-dialog");
  var canUseDialog = dialog && typeof dialog.showModal === "function";

  // Guidelines in a dialog over the current pair, instead of a new tab.
  if (canUseDialog) {
    document.querySelectorAll("[data-guidelines-open]").forEach(function (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        dialog.showModal();
      });
    });
    // A click on the backdrop (outside the dialog box) closes it too.
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) dialog.close();
    });
  }

  // The personal link: a Copy button where the clipboard can be written (it needs JavaScript
  // and, outside localhost, HTTPS); the read-only field can always be selected by hand.
  var linkField = document.querySelector("[data-personal-link]");
  var copyButton = document.querySelector("[data-copy-link]");
  var copyStatus = document.querySelector("[data-copy-status]");
  if (linkField && copyButton) {
    copyButton.hidden = false;
    linkField.addEventListener("focus", function () { linkField.select(); });
    copyButton.addEventListener("click", function () {
      // The messages come translated from the page (data attributes).
      var copiedText = copyButton.getAttribute("data-copied");
      var manualText = copyButton.getAttribute("data-copy-manually");
      function done(message) { if (copyStatus) copyStatus.textContent = message; }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(linkField.value).then(
          function () { done(copiedText); },
          function () { linkField.select(); done(manualText); }
        );
      } else {
        linkField.select();
        var copied = false;
        try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
        done(copied ? copiedText : manualText);
      }
    });
  }

  var form = document.querySelector("[data-answer-form]");
  if (!form) return;
  var buttons = Array.prototype.slice.call(form.querySelectorAll("button.answer"));
  var sent = false;

  function release() {
    sent = false;
    form.removeAttribute("aria-busy");
    form.querySelectorAll("input[data-chosen-label]").forEach(function (input) { input.remove(); });
    buttons.forEach(function (button) {
      button.disabled = false;
      button.classList.remove("is-chosen");
    });
  }

  form.addEventListener("submit", function (event) {
    var chosen = event.submitter;
    if (sent || !chosen || chosen.name !== "label") {
      event.preventDefault();
      return;
    }
    sent = true;
    // Disabled buttons are not submitted: carry the chosen answer in a hidden field.
    var hidden = document.createElement("input");
    hidden.type = "hidden";
    hidden.name = "label";
    hidden.value = chosen.value;
    hidden.setAttribute("data-chosen-label", "");
    form.appendChild(hidden);
    chosen.classList.add("is-chosen");
    form.setAttribute("aria-busy", "true");
    buttons.forEach(function (button) { button.disabled = true; });
  });

  // Keys 1-5 answer, unless a modifier is held, the guidelines are open or the focus is in a field.
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.repeat || event.altKey || event.ctrlKey || event.metaKey) return;
    if (dialog && dialog.open) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var button = form.querySelector('button.answer[data-key="' + event.key + '"]');
    if (!button || button.disabled || sent) return;
    event.preventDefault();
    if (typeof form.requestSubmit === "function") {
      form.requestSubmit(button);
    } else {
      button.click();
    }
  });

  // Coming back with the browser's back button may restore the page as it was left.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) release();
  });
})();
