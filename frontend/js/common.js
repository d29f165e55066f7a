// Helpers shared by the staff pages' scripts (dashboard.js, meta_evaluation.js): build elements
// with textContent only (never HTML from the server) and format numbers the same way everywhere.
(function () {
  "use strict";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // A number with `digits` decimals (3 by default); a dash for a missing value.
  function fmt(value, digits) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    return Number(value).toFixed(digits === undefined ? 3 : digits);
  }

  // The filters form's values as URL parameters, empty ones and the `skip` names left out.
  function formQuery(form, skip) {
    const params = new URLSearchParams();
    if (!form) return params;
    for (const [name, value] of new FormData(form).entries()) {
      if (value !== "" && !(skip || []).includes(name)) params.set(name, value);
    }
    return params;
  }

  window.ParaEval = Object.freeze({ el: el, fmt: fmt, formQuery: formQuery });
})();
