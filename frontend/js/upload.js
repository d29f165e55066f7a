// The upload page follows its dry run or import: polls the status every second, moves the
// progress bar, and reloads the page (which shows the problems or the summary) once it ends.
(function () {
  "use strict";
  var box = document.getElementById("upload-state");
  if (!box || !box.dataset.running) return;
  var bar = document.getElementById("upload-progress");
  var percent = document.getElementById("progress-percent");
  function poll() {
    fetch(box.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (status) {
        if (!status.running) { window.location.reload(); return; }
        if (bar) bar.value = status.percent;
        if (percent) percent.textContent = status.percent;
        var waiting = document.getElementById("upload-waiting");
        if (waiting) waiting.textContent = status.waiting;
        window.setTimeout(poll, 1000);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  window.setTimeout(poll, 1000);
})();
