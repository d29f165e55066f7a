// Staff agreement dashboard: poll the JSON report (ETag), redraw tables and charts when it changed.
// Everything is drawn from data with textContent and Chart.js; no HTML from the server is injected.
(function () {
  "use strict";
  const root = document.getElementById("dashboard");
  if (!root) return;

  const dataUrl = root.dataset.url;
  const refreshMs = Math.max(1, Number(root.dataset.refresh) || 5) * 1000;
  const form = document.getElementById("filters");
  const campaignSelect = document.getElementById("f-campaign");
  const PALETTE = ["#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#17becf", "#bcbd22", "#7f7f7f"];
  const YES = "#1f77b4"; // paraphrases: blue circles, as in the paper's Figure 2
  const NO = "#ff7f0e"; // non-paraphrases: orange squares
  const TABLE_SLOTS = ["table1", "table2", "table3", "table4", "table5", "ranking", "topk", "agreement", "volunteers"];

  let etag = null;
  let report = null;
  let timer = null;
  let inFlight = false;
  let pending = false;
  let lastChecked = null;
  let lastError = null;
  const charts = new Map();

  if (window.Chart) {
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    Chart.defaults.font.size = 11;
    Chart.defaults.animation = false; // live redraws must not flicker
    Chart.defaults.maintainAspectRatio = false;
  }

  // --- helpers ---------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fmt(value, digits) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    return Number(value).toFixed(digits === undefined ? 3 : digits);
  }

  function integer(value) {
    return value === null || value === undefined ? "–" : Number(value).toLocaleString("en-US");
  }

  function colour(index) {
    return PALETTE[index % PALETTE.length];
  }

  function metricName(metric) {
    return metric.label + " " + metric.arrow;
  }

  function ago(date) {
    const seconds = Math.max(0, Math.round((Date.now() - date.getTime()) / 1000));
    if (seconds < 60) return seconds + " s ago";
    const minutes = Math.round(seconds / 60);
    if (minutes < 60) return minutes + " min ago";
    const hours = Math.round(minutes / 60);
    return hours < 48 ? hours + " h ago" : Math.round(hours / 24) + " days ago";
  }

  function clock(date) {
    return date.toLocaleString("en-GB", { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  function query() {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form).entries()) {
      if (value !== "") params.set(name, value);
    }
    return params;
  }

  // --- fetching ------------------------------------------------------------------------------

  async function poll() {
    if (inFlight) {
      pending = true; // the filters changed during a request: ask again once it is back
      return;
    }
    inFlight = true;
    const params = query().toString();
    const headers = { Accept: "application/json" };
    if (etag) headers["If-None-Match"] = etag;
    try {
      const response = await fetch(dataUrl + "?" + params, { headers, cache: "no-store", credentials: "same-origin" });
      lastChecked = new Date();
      if (params !== query().toString()) {
        pending = true; // an answer for filters no longer selected: drop it
      } else if (response.status === 304) {
        lastError = null;
      } else if (response.ok) {
        etag = response.headers.get("ETag");
        const data = await response.json();
        lastError = null;
        render(data);
      } else {
        let message = "The server answered " + response.status + ".";
        try {
          const body = await response.json();
          if (body.error) message = body.error;
          if (body.fields) {
            message += " " + Object.entries(body.fields).map(([field, errors]) => field + ": " + errors.map((e) => e.message).join(", ")).join("; ");
          }
          if (response.status === 403 && body.login) message += " Log in again at " + body.login + ".";
        } catch (ignored) { /* not JSON */ }
        lastError = message;
      }
    } catch (error) {
      lastError = "Cannot reach the server (" + error.message + "); retrying.";
    } finally {
      inFlight = false;
      showLive();
      if (pending) {
        pending = false;
        etag = null;
        await poll();
      }
    }
  }

  function schedule() {
    clearTimeout(timer);
    if (document.hidden) return; // resumes on visibilitychange
    timer = setTimeout(async () => {
      await poll();
      schedule();
    }, refreshMs);
  }

  function showLive() {
    const dot = document.getElementById("live-dot");
    const text = document.getElementById("live-text");
    const error = document.getElementById("load-error");
    error.hidden = !lastError;
    error.textContent = lastError || "";
    dot.className = "live-dot " + (lastError ? "error" : document.hidden ? "paused" : "ok");
    if (!report) {
      text.textContent = lastError ? "No data." : "Loading…";
      return;
    }
    const counts = report.counts;
    const changed = report.last_changed ? new Date(report.last_changed) : null;
    const parts = [
      "Based on " + integer(counts.judgements) + " judgements and " + integer(counts.scores) + " scores",
      changed ? "last change " + clock(changed) + " (" + ago(changed) + ")" : "no data yet",
      lastChecked ? "checked " + ago(lastChecked) : "",
    ].filter(Boolean);
    text.textContent = parts.join(" · ");
    text.title = "Refreshes every " + refreshMs / 1000 + " s; version " + report.version;
  }

  // --- rendering -----------------------------------------------------------------------------

  function render(data) {
    // Flash the counters that changed only when the same selection got new data.
    const previous = report && JSON.stringify(report.filters) === JSON.stringify(data.filters) && report.campaign.id === data.campaign.id ? report : null;
    report = data;
    document.getElementById("version").textContent = data.version;
    const b = data.bootstrap;
    document.getElementById("bootstrap-info").textContent = b.resamples ? b.resamples + " resamples, seed " + b.seed : "intervals off";
    renderCounts(data, previous);
    for (const table of data.tables) renderTable(table);
    renderCharts(data);
    root.dataset.version = data.version;
    root.dataset.judgements = String(data.counts.judgements);
  }

  function setStat(id, value, detail, previousValue) {
    const node = document.getElementById("count-" + id);
    const text = typeof value === "number" ? integer(value) : value;
    if (node.textContent !== text) {
      node.textContent = text;
      if (previousValue !== undefined) {
        const box = node.parentElement;
        box.classList.add("changed");
        setTimeout(() => box.classList.remove("changed"), 1500);
      }
    }
    document.getElementById("detail-" + id).textContent = detail;
  }

  function renderCounts(data, previous) {
    const c = data.counts;
    const p = previous ? previous.counts : {};
    const corpora = data.subsets.length > 1 ? data.subsets.length - 1 : 1;
    setStat("pairs", c.pairs, c.unjudged + " unjudged · " + corpora + (corpora === 1 ? " corpus" : " corpora"), p.pairs);
    setStat("labelled", c.labelled, c.paraphrases + " paraphrases · " + c.non_paraphrases + " not · " + c.ties + " ties", p.labelled);
    setStat("judgements", c.judgements, c.volunteers + " volunteers · " + c.dont_know_judgements + " Don't know · " + c.training_judgements + " training not counted", p.judgements);
    setStat("scores", c.scores, c.metrics + " metric configs · " + c.scores_failed + " failed · " + c.scores_missing + " missing", p.scores);
    const alpha = data.agreement.krippendorff_alpha;
    setStat("alpha", alpha.value === null ? "–" : fmt(alpha.value, 2), alpha.value === null ? (alpha.reason || "") : "ordinal, on " + alpha.pairs + " pairs", previous ? (previous.agreement.krippendorff_alpha.value === null ? "–" : fmt(previous.agreement.krippendorff_alpha.value, 2)) : undefined);
  }

  function renderTable(table) {
    const slot = document.getElementById("table-" + table.key);
    if (!slot) return;
    const parts = [el("h2", null, table.title), el("p", "caption", table.caption)];
    if (table.note) parts.push(el("p", "note", table.note));
    if (table.rows.length) parts.push(buildTable(table));
    slot.replaceChildren(...parts);
  }

  function buildTable(table) {
    const wrap = el("div", "table-scroll");
    const t = el("table", "data-table");
    t.dataset.table = table.key;
    const thead = el("thead");
    const lead = table.row_header.length;
    const groupStarts = new Set();
    if (table.groups.length) {
      const top = el("tr", "groups");
      for (const name of table.row_header) {
        const th = el("th", "left", name);
        th.rowSpan = 2;
        top.appendChild(th);
      }
      let position = 0;
      for (const group of table.groups) {
        const th = el("th", "group-start", group.label);
        th.colSpan = group.span;
        top.appendChild(th);
        groupStarts.add(position);
        position += group.span;
      }
      const second = el("tr");
      table.columns.forEach((name, index) => second.appendChild(el("th", groupStarts.has(index) ? "group-start" : "", name)));
      thead.append(top, second);
    } else {
      const row = el("tr");
      for (const name of table.row_header) row.appendChild(el("th", "left", name));
      table.columns.forEach((name, column) => row.appendChild(el("th", (table.text_columns || []).includes(column) ? "left" : null, name)));
      thead.appendChild(row);
    }
    const tbody = el("tbody");
    // Block sizes: a metric's label spans its statistic rows.
    const spans = [];
    table.rows.forEach((row, index) => {
      if (row.first || index === 0) spans.push([index, 1]);
      else spans[spans.length - 1][1] += 1;
    });
    const spanAt = new Map(spans);
    table.rows.forEach((row, index) => {
      const tr = el("tr", spanAt.has(index) && index > 0 && lead > 1 ? "block-start" : "");
      if (spanAt.has(index)) {
        const th = el("th", "row-head", row.label);
        th.scope = "row";
        if (lead > 1) th.rowSpan = spanAt.get(index);
        tr.appendChild(th);
      }
      if (lead > 1) tr.appendChild(el("td", "stat-name", row.stat));
      row.cells.forEach((cell, column) => {
        const classes = [];
        if (cell.best) classes.push("best");
        if (cell.text === "—") classes.push("undefined");
        if (/CI/.test(row.stat)) classes.push("ci");
        if (groupStarts.has(column)) classes.push("group-start");
        if ((table.text_columns || []).includes(column)) classes.push("text");
        const td = el("td", classes.join(" "), cell.text);
        if (cell.note) td.title = cell.note;
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    t.append(thead, tbody);
    wrap.appendChild(t);
    return wrap;
  }

  // --- charts --------------------------------------------------------------------------------

  function upsert(key, canvas, config) {
    const existing = charts.get(key);
    if (existing && existing.canvas === canvas && existing.config.type === config.type) {
      existing.data = config.data;
      existing.options = config.options;
      existing.update("none");
      return existing;
    }
    if (existing) existing.destroy();
    const chart = new Chart(canvas, config);
    charts.set(key, chart);
    return chart;
  }

  function dropCharts(prefix, keep) {
    for (const [key, chart] of charts) {
      if (key.startsWith(prefix) && !keep.has(key)) {
        chart.destroy();
        charts.delete(key);
      }
    }
  }

  function emptyNote(container, message) {
    let note = container.querySelector(".empty");
    if (!message) {
      if (note) note.remove();
      return;
    }
    if (!note) {
      note = el("div", "empty");
      container.appendChild(note);
    }
    note.textContent = message;
  }

  // One small chart per metric; the grid is rebuilt only when the metrics change.
  function gridCanvases(gridId, metrics, prefix) {
    const grid = document.getElementById(gridId);
    const wanted = metrics.map((m) => prefix + m.id).join(",");
    if (grid.dataset.metrics !== wanted) {
      dropCharts(prefix, new Set());
      grid.replaceChildren(
        ...metrics.map((metric) => {
          const figure = el("figure", "chart-box");
          figure.appendChild(el("figcaption", null, metricName(metric)));
          const wrap = el("div", "canvas-wrap");
          const canvas = el("canvas");
          canvas.id = prefix + metric.id;
          wrap.appendChild(canvas);
          figure.appendChild(wrap);
          return figure;
        }),
      );
      grid.dataset.metrics = wanted;
    }
    return metrics.map((metric) => document.getElementById(prefix + metric.id));
  }

  function renderCharts(data) {
    const metrics = data.metrics;
    renderBoxes(data, metrics);
    renderScatter(data, metrics);
    renderRank(data, metrics);
    renderRoc(data, metrics);
  }

  function axisTitle(text) {
    return { display: true, text: text, font: { size: 11 } };
  }

  function renderBoxes(data, metrics) {
    const canvases = gridCanvases("box-grid", metrics, "box-");
    metrics.forEach((metric, index) => {
      const chartData = data.charts[String(metric.id)];
      const canvas = canvases[index];
      const boxes = chartData ? [chartData.box.yes, chartData.box.no] : [null, null];
      const counts = boxes.map((b) => (b ? b.n : 0));
      emptyNote(canvas.parentElement, counts[0] + counts[1] ? null : "No labelled pair has a score yet.");
      upsert("box-" + metric.id, canvas, {
        type: "boxplot",
        data: {
          labels: [["paraphrase", "n = " + counts[0]], ["non-paraphrase", "n = " + counts[1]]],
          datasets: [{
            label: metricName(metric),
            data: boxes.map((b) => (b ? Object.assign({}, b) : null)),
            backgroundColor: [YES + "55", NO + "55"],
            borderColor: [YES, NO],
            borderWidth: 1.5,
            outlierBackgroundColor: [YES + "99", NO + "99"],
            outlierRadius: 2,
            meanBackgroundColor: "#24292f",
            meanRadius: 3,
            meanStyle: "rectRot",
          }],
        },
        options: {
          plugins: { legend: { display: false }, tooltip: { enabled: true } },
          scales: { y: { beginAtZero: false, title: axisTitle("score (" + (metric.higher_is_closer ? "higher" : "lower") + " = closer)") } },
        },
      });
    });
  }

  function thresholdLine(value, colourValue, label, dashed) {
    return {
      type: "line",
      label: label,
      data: [{ x: 0, y: value }, { x: 1, y: value }],
      borderColor: colourValue,
      borderWidth: 1.5,
      borderDash: dashed ? [5, 4] : [],
      pointRadius: 0,
      fill: false,
      order: 0,
    };
  }

  function renderScatter(data, metrics) {
    const canvases = gridCanvases("scatter-grid", metrics, "scatter-");
    metrics.forEach((metric, index) => {
      const chartData = data.charts[String(metric.id)];
      const points = chartData ? chartData.scatter : [];
      const yes = [];
      const no = [];
      for (const [x, y, label] of points) (label === 1 ? yes : no).push({ x: x, y: y });
      const datasets = [
        { type: "scatter", label: "paraphrase", data: yes, backgroundColor: YES + "aa", borderColor: YES, pointStyle: "circle", pointRadius: 3, order: 2 },
        { type: "scatter", label: "non-paraphrase", data: no, backgroundColor: NO + "aa", borderColor: NO, pointStyle: "rect", pointRadius: 3, order: 1 },
      ];
      if (chartData && chartData.thresholds.natural !== null) datasets.push(thresholdLine(chartData.thresholds.natural, "#d62728", "natural threshold", false));
      if (chartData && chartData.thresholds.best !== null) datasets.push(thresholdLine(chartData.thresholds.best, "#57606a", "best-accuracy threshold", true));
      emptyNote(canvases[index].parentElement, points.length ? null : "No labelled pair has a score yet.");
      upsert("scatter-" + metric.id, canvases[index], {
        type: "scatter",
        data: { datasets: datasets },
        options: {
          plugins: { legend: { display: false } },
          scales: {
            x: { type: "linear", min: 0, max: 1, title: axisTitle("normalised edit distance") },
            y: { title: axisTitle("score") },
          },
        },
      });
    });
  }

  function lineDataset(metric, index, points) {
    return {
      label: metricName(metric),
      data: points,
      borderColor: colour(index),
      backgroundColor: colour(index),
      borderWidth: 1.6,
      pointRadius: 0,
      tension: 0,
      fill: false,
    };
  }

  function renderRank(data, metrics) {
    for (const [key, field, title] of [["rank-accuracy", "accuracy", "accuracy"], ["rank-f1", "f1", "F1"]]) {
      const datasets = [];
      metrics.forEach((metric, index) => {
        const rank = data.charts[String(metric.id)] && data.charts[String(metric.id)].rank;
        if (!rank) return;
        datasets.push(lineDataset(metric, index, rank.k.map((k, i) => ({ x: k, y: rank[field][i] }))));
      });
      const canvas = document.getElementById("chart-" + key);
      emptyNote(canvas.parentElement, datasets.length ? null : "No labelled pair has a score yet.");
      upsert(key, canvas, {
        type: "line",
        data: { datasets: datasets },
        options: {
          parsing: true,
          interaction: { mode: "nearest", intersect: false },
          plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
          scales: {
            x: { type: "linear", min: 0, title: axisTitle("rank k (pairs called paraphrases)") },
            y: { min: 0, max: 1, title: axisTitle(title) },
          },
        },
      });
    }
  }

  function renderRoc(data, metrics) {
    const datasets = [];
    metrics.forEach((metric, index) => {
      const roc = data.charts[String(metric.id)] && data.charts[String(metric.id)].roc;
      if (!roc) return;
      const auc = data.results[String(metric.id)].all.auc;
      const dataset = lineDataset(metric, index, roc.fpr.map((x, i) => ({ x: x, y: roc.tpr[i] })));
      dataset.label += auc ? " (AUC " + fmt(auc.value, 3) + ")" : "";
      datasets.push(dataset);
    });
    datasets.push({ label: "chance", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], borderColor: "#8c959f", borderDash: [4, 4], borderWidth: 1, pointRadius: 0 });
    const canvas = document.getElementById("chart-roc");
    emptyNote(canvas.parentElement, datasets.length > 1 ? null : "ROC needs labelled pairs of both classes with scores.");
    upsert("roc", canvas, {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: false },
        plugins: { legend: { position: "right", labels: { boxWidth: 12 } } },
        scales: {
          x: { type: "linear", min: 0, max: 1, title: axisTitle("false positive rate (non-paraphrases accepted)") },
          y: { min: 0, max: 1, title: axisTitle("true positive rate (paraphrases found)") },
        },
      },
    });
  }

  // --- events --------------------------------------------------------------------------------

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const params = query();
    history.replaceState(null, "", "?" + params.toString());
    etag = null;
    poll().then(schedule);
  });
  for (const control of form.querySelectorAll("select, input")) {
    if (control === campaignSelect) continue;
    control.addEventListener("change", () => form.requestSubmit());
  }
  // Another campaign has other corpora: reload the page for its filter menu.
  campaignSelect.addEventListener("change", () => {
    window.location.search = "?campaign=" + encodeURIComponent(campaignSelect.value);
  });
  document.addEventListener("visibilitychange", () => {
    showLive();
    if (!document.hidden) poll().then(schedule);
    else clearTimeout(timer);
  });
  setInterval(showLive, 1000); // keeps "checked 3 s ago" honest between polls

  // Exposed for people debugging in the console and for the browser test.
  window.paraevalDashboard = {
    charts: charts,
    report: () => report,
    refresh: () => poll(),
  };

  poll().then(schedule);
})();
