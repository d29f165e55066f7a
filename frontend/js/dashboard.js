// Staff agreement dashboard: poll the JSON report (ETag), redraw tables and charts when it changed.
// Everything is drawn from data with textContent and Chart.js; no HTML from the server is injected.
(function () {
  "use strict";
  const root = document.getElementById("dashboard");
  if (!root) return;

  const dataUrl = root.dataset.url;
  // A pair's staff page: the URL of pair 0, its id swapped in (Django's {% url %} in the template).
  const pairUrlOfZero = root.dataset.pairUrl || "";
  function pairUrl(pairId) {
    return pairUrlOfZero.replace(/\/0\/$/, "/" + Number(pairId) + "/");
  }
  const refreshMs = Math.max(1, Number(root.dataset.refresh) || 5) * 1000;
  const form = document.getElementById("filters");
  const campaignSelect = document.getElementById("f-campaign");
  // Okabe & Ito's colour-blind-safe palette (yellow last: weakest on white). Past 8 curves the
  // colours repeat with another line style, so every (colour, dashes) pair stays unique up to 32.
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"];
  const DASHES = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
  const DASH_NAMES = ["solid", "dashed", "dotted", "dash-dot"];
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

  const { el, fmt, formQuery } = window.ParaEval; // js/common.js

  function integer(value) {
    return value === null || value === undefined ? "–" : Number(value).toLocaleString("en-US");
  }

  function colour(index) {
    return PALETTE[index % PALETTE.length];
  }

  function dashes(index) {
    return DASHES[Math.floor(index / PALETTE.length) % DASHES.length];
  }

  // "1 pair", "2 pairs": Intl.PluralRules picks the form (the server uses Django's ngettext).
  const plurals = new Intl.PluralRules("en");
  function count(n, one, many) {
    return integer(n) + " " + (plurals.select(Number(n)) === "one" ? one : many);
  }

  function word(n, one, many) {
    return plurals.select(Number(n)) === "one" ? one : many;
  }

  // Per-metric panels of a figure: 1a, 1b, … then 1.27, 1.28 past z.
  function panelName(figure, index) {
    return "Figure " + figure + (index < 26 ? String.fromCharCode(97 + index) : "." + (index + 1));
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
    return formQuery(form);
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
      const noneYet = { computing: "Computing the report…", unavailable: "No report yet." };
      text.textContent = lastError ? "No data." : noneYet[root.dataset.report] || "Loading…";
      return;
    }
    const counts = report.counts;
    const changed = report.last_changed ? new Date(report.last_changed) : null;
    const parts = [
      "Based on " + count(counts.judgements, "judgement", "judgements") + " and " + count(counts.scores, "score", "scores"),
      changed ? "last change " + clock(changed) + " (" + ago(changed) + ")" : "no data yet",
      lastChecked ? "checked " + ago(lastChecked) : "",
    ].filter(Boolean);
    text.textContent = parts.join(" · ");
    text.title = "Refreshes every " + refreshMs / 1000 + " s; version " + report.version;
  }

  // --- rendering -----------------------------------------------------------------------------

  function render(data) {
    // A large campaign's report is computed on the interactive queue: say whether this one is
    // the last kept one (stale) or none is there yet (computing, unavailable).
    const reportStatus = data.report_status || { state: "live", message: "" };
    const statusLine = document.getElementById("report-status");
    statusLine.hidden = reportStatus.state === "live";
    statusLine.textContent = reportStatus.state === "live" ? "" : reportStatus.message;
    root.dataset.report = reportStatus.state;
    if (!data.tables) return; // nothing computed yet: the poll picks the report up when it is in
    // Flash the counters that changed only when the same selection got new data.
    const previous = report && JSON.stringify(report.filters) === JSON.stringify(data.filters) && report.campaign.id === data.campaign.id ? report : null;
    report = data;
    document.getElementById("version").textContent = data.version;
    const b = data.bootstrap;
    document.getElementById("bootstrap-info").textContent = b.resamples ? b.resamples + " resamples, seed " + b.seed : "intervals off";
    // The intervals come from the interactive queue after the first paint: say so until they are in.
    const waiting = b.state === "computing" || b.state === "unavailable";
    // Without the analyses cache (Redis down) the report was computed for this request: say so.
    const cacheDown = Boolean(data.cache && data.cache.state === "unavailable");
    const status = document.getElementById("intervals-status");
    status.hidden = !waiting && !cacheDown;
    status.textContent = waiting ? b.message + (b.state === "computing" ? " The CI columns fill in when they are ready." : "") : cacheDown ? data.cache.message : "";
    root.dataset.cache = cacheDown ? "unavailable" : "available";
    root.dataset.intervals = b.state || "";
    renderCounts(data, previous);
    renderFailures(data.failures);
    renderStopping(data.stopping);
    for (const table of data.tables) renderTable(table);
    renderCardNotes(data);
    renderCharts(data);
    root.dataset.version = data.version;
    root.dataset.judgements = String(data.counts.judgements);
  }

  // The stopping rule's line (server-worded): settled or not yet, the record, why watching is safe.
  function renderStopping(stopping) {
    const section = document.getElementById("stopping");
    if (!section || !stopping) return; // no rule: the page has no section (a new rule shows on reload)
    section.classList.toggle("is-settled", stopping.settled);
    document.getElementById("stopping-line").textContent = stopping.text;
    const record = document.getElementById("stopping-record");
    record.textContent = stopping.record;
    record.hidden = !stopping.record;
    document.getElementById("stopping-why").textContent = stopping.why;
  }

  // The failed scores per metric and reason, as the page drew them at load (text only).
  function renderFailures(failures) {
    const section = document.getElementById("failure-reasons");
    if (!section || !failures) return;
    const list = document.getElementById("failure-list");
    list.replaceChildren();
    for (const failure of failures) {
      const item = document.createElement("li");
      item.dataset.config = String(failure.config_id);
      const link = document.createElement("a");
      link.href = section.dataset.adminUrl + failure.config_id;
      link.textContent = count(failure.pairs, "pair", "pairs");
      const label = document.createElement("code");
      label.textContent = failure.label;
      item.append(link, " failed on ", label, ": " + failure.reason);
      list.append(item);
    }
    section.hidden = failures.length === 0;
  }

  function setStat(id, value, detail, previousValue, label) {
    const node = document.getElementById("count-" + id);
    if (label) document.getElementById("label-" + id).textContent = label;
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
    setStat("pairs", c.pairs, integer(c.unjudged) + " unjudged · " + count(corpora, "corpus", "corpora"), p.pairs, word(c.pairs, "pair", "pairs"));
    setStat("labelled", c.labelled, count(c.paraphrases, "paraphrase", "paraphrases") + " · " + integer(c.non_paraphrases) + " not · " + count(c.ties, "tie", "ties"), p.labelled);
    setStat("judgements", c.judgements, count(c.volunteers, "volunteer", "volunteers") + " · " + integer(c.dont_know_judgements) + " Don't know · " + integer(c.training_judgements) + " training not counted", p.judgements, word(c.judgements, "judgement", "judgements"));
    setStat("scores", c.scores, count(c.metrics, "metric config", "metric configs") + " · " + integer(c.scores_failed) + " failed · " + integer(c.scores_missing) + " missing", p.scores, word(c.scores, "score", "scores"));
    const alpha = data.agreement.krippendorff_alpha;
    setStat("alpha", alpha.value === null ? "–" : fmt(alpha.value, 2), alpha.value === null ? (alpha.reason || "") : "ordinal, on " + count(alpha.pairs, "pair", "pairs"), previous ? (previous.agreement.krippendorff_alpha.value === null ? "–" : fmt(previous.agreement.krippendorff_alpha.value, 2)) : undefined);
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
        // "mean ± sd" may break before "±" when the page is narrow (Table 1 fits at 1366 px).
        const parts = table.key === "table1" ? cell.text.split(" ± ") : [cell.text];
        const td = el("td", classes.join(" "), parts.length === 2 ? null : cell.text);
        if (parts.length === 2) td.append(el("span", "mean", parts[0]), " ", el("span", "sd", "± " + parts[1]));
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
        ...metrics.map((metric, index) => {
          const figure = el("figure", "chart-box");
          figure.appendChild(el("figcaption", null, panelName(grid.dataset.figure, index) + " — " + metricName(metric) + ": " + grid.dataset.panel));
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
    renderWorst(data, metrics);
    renderReliability(data);
  }

  // --- the robustness and calibration cards (report.cards; their tables are drawn above) --------

  // Without a probe set the card says how to build one; with one, where its samples are.
  function renderCardNotes(data) {
    const state = data.cards ? data.cards.robustness.state : "none";
    document.getElementById("robustness-none").hidden = state !== "none";
    document.getElementById("robustness-samples").hidden = state === "none";
    // The table's note names no campaign (it is the command line's too): the page's own line, with
    // this campaign's command and probe page, replaces it.
    const note = document.querySelector("#table-robustness .note");
    if (note) note.hidden = state === "none";
    root.dataset.robustness = state;
  }

  function reliabilityPoints(bins) {
    return bins.filter((b) => b.n > 0 && b.mean_probability !== null).map((b) => ({ x: b.mean_probability, y: b.share, n: b.n }));
  }

  // Figure 8: one reliability diagram per log-odds metric, before and after its temperature.
  function renderReliability(data) {
    const cards = data.cards ? data.cards.calibration.cards : [];
    const byId = new Map(data.metrics.map((metric) => [metric.id, metric]));
    const metrics = cards.map((card) => byId.get(card.metric) || { id: card.metric, label: card.label, arrow: "↑" });
    document.getElementById("figure-8").hidden = !cards.length;
    const canvases = gridCanvases("reliability-grid", metrics, "reliability-");
    const against = data.cards && data.cards.calibration.target === "gold" ? "share of gold paraphrases" : "volunteers' share of yes";
    cards.forEach((card, index) => {
      const datasets = [
        { label: "as scored, ECE " + fmt(card.ece), data: reliabilityPoints(card.bins), showLine: true, borderColor: PALETTE[0], backgroundColor: PALETTE[0], pointStyle: "circle", pointRadius: 4 },
        { label: "T = " + fmt(card.temperature, 2) + ", ECE " + fmt(card.ece_after), data: reliabilityPoints(card.bins_after), showLine: true, borderColor: PALETTE[1], backgroundColor: PALETTE[1], pointStyle: "rect", pointRadius: 4 },
        { label: "perfect", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], showLine: true, borderDash: [4, 4], borderColor: "#888", pointRadius: 0 },
      ];
      upsert("reliability-" + card.metric, canvases[index], {
        type: "scatter",
        data: { datasets: datasets },
        options: {
          plugins: {
            legend: { display: true, labels: { boxWidth: 10, usePointStyle: true } },
            tooltip: { callbacks: { label: (item) => item.dataset.label + ": P(yes) " + fmt(item.raw.x) + ", share " + fmt(item.raw.y) + (item.raw.n ? " (" + count(item.raw.n, "pair", "pairs") + ")" : "") } },
          },
          scales: {
            x: { min: 0, max: 1, title: axisTitle("P(yes) = 1 / (1 + e^-score)") },
            y: { min: 0, max: 1, title: axisTitle(against) },
          },
        },
      });
    });
  }

  // A metric's worst disagreements with the reference, each pair linked to its page.
  function renderWorst(data, metrics) {
    const slot = document.getElementById("worst-tables");
    if (!slot) return;
    const reference = data.reference === "gold" ? "gold label" : "volunteers";
    const rows = [];
    metrics.forEach((metric) => {
      const chartData = data.charts[String(metric.id)];
      const worst = chartData && chartData.worst ? chartData.worst : [];
      worst.forEach((item, index) => rows.push([metric, item, index === 0, worst.length]));
    });
    if (!rows.length) {
      slot.replaceChildren(el("p", "muted", "No pair has both a score and a " + (data.reference === "gold" ? "gold label" : "volunteers' verdict") + " yet."));
      return;
    }
    const wrap = el("div", "table-scroll");
    const table = el("table", "data-table worst-table");
    table.dataset.table = "worst";
    const head = el("tr");
    for (const [name, className] of [["Metric", "left"], ["Pair", "left"], ["The " + reference + " say", "left"], ["Score", null], ["Rank", null]]) head.appendChild(el("th", className, name));
    const thead = el("thead");
    thead.appendChild(head);
    const tbody = el("tbody");
    for (const [metric, item, first, span] of rows) {
      const tr = el("tr", first ? "block-start" : "");
      tr.dataset.metric = String(metric.id);
      if (first) {
        const th = el("th", "row-head");
        th.scope = "row";
        th.rowSpan = span;
        th.appendChild(el("span", null, metricName(metric)));
        const all = el("a", "small all-worst", "all on the pairs page");
        all.href = (root.dataset.pairsUrl || "") + "?metric=" + Number(metric.id) + "#worst";
        th.append(el("br"), all);
        tr.appendChild(th);
      }
      const cell = el("td", "text");
      const link = el("a", null, item.name || "pair " + item.pair);
      link.href = pairUrl(item.pair);
      link.dataset.pair = String(item.pair);
      cell.appendChild(link);
      tr.append(cell, el("td", "text", item.paraphrase ? "paraphrase" : "not paraphrase"), el("td", null, fmt(item.score, 4)), el("td", null, fmt(item.rank, 2)));
      tbody.appendChild(tr);
    }
    table.append(thead, tbody);
    wrap.appendChild(table);
    slot.replaceChildren(wrap);
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
      const pairs = chartData && chartData.scatter_pairs ? chartData.scatter_pairs : [];
      const yes = [];
      const no = [];
      points.forEach(([x, y, label], i) => (label === 1 ? yes : no).push({ x: x, y: y, pair: pairs[i] }));
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
          plugins: {
            legend: { display: false },
            tooltip: { callbacks: { footer: (items) => (items.length && items[0].raw && items[0].raw.pair ? "Click: open pair " + items[0].raw.pair : "") } },
          },
          // A point opens its pair's page (as the paper's Figure 2 invites); the cursor says so.
          onClick: (event, elements, chart) => {
            const hit = elements.find((item) => chart.data.datasets[item.datasetIndex].data[item.index].pair);
            if (hit) window.location.assign(pairUrl(chart.data.datasets[hit.datasetIndex].data[hit.index].pair));
          },
          onHover: (event, elements, chart) => {
            chart.canvas.style.cursor = elements.some((item) => chart.data.datasets[item.datasetIndex].data[item.index].pair) ? "pointer" : "";
          },
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
      key: String(metric.id),
      data: points,
      borderColor: colour(index),
      backgroundColor: colour(index),
      borderDash: dashes(index),
      borderWidth: 2,
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
      applyHidden(key, datasets);
      const chart = upsert(key, canvas, {
        type: "line",
        data: { datasets: datasets },
        options: {
          parsing: true,
          interaction: { mode: "nearest", intersect: false },
          plugins: { legend: { display: false } },
          scales: {
            x: { type: "linear", min: 0, title: axisTitle("rank k (pairs called paraphrases)") },
            y: { min: 0, max: 1, title: axisTitle(title) },
          },
        },
      });
      drawLegend(key, chart);
    }
  }

  // --- legends: HTML lists under the charts, every name in full, click to hide ------------

  const hiddenCurves = new Map(); // chart key -> Set of dataset keys the user hid (kept across redraws)

  function applyHidden(chartKey, datasets) {
    const hidden = hiddenCurves.get(chartKey) || new Set();
    for (const dataset of datasets) dataset.hidden = hidden.has(dataset.key || dataset.label);
  }

  function swatch(dataset) {
    // A short line drawn in the curve's colour and dash pattern (SVG attributes: no inline style).
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "legend-swatch");
    svg.setAttribute("width", "30");
    svg.setAttribute("height", "10");
    svg.setAttribute("aria-hidden", "true");
    const line = document.createElementNS(ns, "line");
    line.setAttribute("x1", "1");
    line.setAttribute("y1", "5");
    line.setAttribute("x2", "29");
    line.setAttribute("y2", "5");
    line.setAttribute("stroke", dataset.borderColor);
    line.setAttribute("stroke-width", "2.5");
    if (dataset.borderDash && dataset.borderDash.length) line.setAttribute("stroke-dasharray", dataset.borderDash.join(" "));
    svg.appendChild(line);
    return svg;
  }

  function drawLegend(chartKey, chart) {
    const list = document.getElementById("legend-" + chartKey);
    if (!list) return;
    list.replaceChildren(...chart.data.datasets.map((dataset, index) => {
      const item = el("li");
      const button = el("button", "legend-item");
      button.type = "button";
      const visible = chart.isDatasetVisible(index);
      button.setAttribute("aria-pressed", String(!visible));
      button.title = visible ? "Hide this curve" : "Show this curve";
      button.dataset.key = dataset.key || dataset.label;
      button.append(swatch(dataset), el("span", "legend-text", dataset.label));
      if (dataset.borderDash && dataset.borderDash.length) button.dataset.dash = DASH_NAMES[DASHES.findIndex((d) => d.join() === dataset.borderDash.join())] || "dashed";
      button.addEventListener("click", () => {
        const hidden = hiddenCurves.get(chartKey) || new Set();
        const key = dataset.key || dataset.label;
        if (chart.isDatasetVisible(index)) hidden.add(key);
        else hidden.delete(key);
        hiddenCurves.set(chartKey, hidden);
        chart.setDatasetVisibility(index, !hidden.has(key));
        chart.update("none");
        drawLegend(chartKey, chart);
      });
      item.appendChild(button);
      return item;
    }));
  }

  // The AUC exactly as the "Ranking" table prints it (same rounding), for the ROC legend.
  function aucText(data, metric) {
    const table = data.tables.find((t) => t.key === "ranking");
    const column = data.subsets.findIndex((subset) => subset.key === "all");
    if (!table || column < 0) return null;
    const row = table.rows.find((r) => r.label === metricName(metric) && r.stat === "ROC AUC");
    return row ? row.cells[column].text : null;
  }

  function renderRoc(data, metrics) {
    const datasets = [];
    metrics.forEach((metric, index) => {
      const roc = data.charts[String(metric.id)] && data.charts[String(metric.id)].roc;
      if (!roc) return;
      const dataset = lineDataset(metric, index, roc.fpr.map((x, i) => ({ x: x, y: roc.tpr[i] })));
      dataset.label += " — AUC " + (aucText(data, metric) || "–");
      datasets.push(dataset);
    });
    datasets.push({ label: "chance (AUC 0.500)", key: "chance", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], borderColor: "#8c959f", borderDash: [4, 4], borderWidth: 1, pointRadius: 0 });
    const canvas = document.getElementById("chart-roc");
    emptyNote(canvas.parentElement, datasets.length > 1 ? null : "ROC needs labelled pairs of both classes with scores.");
    applyHidden("roc", datasets);
    const chart = upsert("roc", canvas, {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: false },
        plugins: { legend: { display: false } },
        scales: {
          x: { type: "linear", min: 0, max: 1, title: axisTitle("false positive rate (non-paraphrases accepted)") },
          y: { min: 0, max: 1, title: axisTitle("true positive rate (paraphrases found)") },
        },
      },
    });
    drawLegend("roc", chart);
  }

  // --- contents bar -----------------------------------------------------------------------------

  // One jump link per <section data-toc="…">, in page order (sections added later only need the attribute).
  function buildContents() {
    const bar = document.getElementById("contents");
    if (!bar) return;
    const list = el("ul");
    for (const section of document.querySelectorAll("section[data-toc][id]")) {
      const item = el("li");
      const link = el("a", null, section.dataset.toc);
      link.href = "#" + section.id;
      item.appendChild(link);
      list.appendChild(item);
    }
    bar.replaceChildren(list);
  }
  buildContents();

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
