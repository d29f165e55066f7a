// Dashboard meta-evaluation sections: poll /api/campaigns/<slug>/meta-evaluation/ with the page's
// filters (202 while the interactive queue computes it), then draw the ranked table with significance
// clusters, the p-value heat map and the other tables. textContent only; no HTML is injected.
(function () {
  "use strict";
  const root = document.getElementById("meta-evaluation");
  if (!root) return;
  const url = root.dataset.url;
  const form = document.getElementById("filters");
  const status = document.getElementById("meta-status");
  const select = document.getElementById("meta-statistic");
  let meta = null;
  let lastQuery = null;
  let timer = null;
  let chart = null;

  const { el, fmt, formQuery } = window.ParaEval; // js/common.js
  function pText(p) {
    if (p === null || p === undefined) return "–";
    return p < 0.001 ? "<0.001" : fmt(p, 3);
  }
  function query() {
    return formQuery(form, ["campaign"]);
  }
  function names() {
    const out = new Map();
    for (const m of meta.metrics) out.set(m.id, m.label + " " + m.arrow);
    return out;
  }
  function table(key, headers, rows, caption) {
    const wrap = el("div", "table-scroll");
    const t = el("table", "data-table meta-table");
    t.dataset.table = key;
    if (caption) wrap.appendChild(el("p", "caption", caption));
    const head = el("tr");
    for (const h of headers) head.appendChild(el("th", null, h));
    const thead = el("thead");
    thead.appendChild(head);
    const tbody = el("tbody");
    for (const row of rows) {
      const tr = el("tr");
      row.forEach((cell, index) => {
        const td = el(index === 0 ? "th" : "td", null, cell);
        if (index === 0) td.scope = "row";
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    }
    t.append(thead, tbody);
    wrap.appendChild(t);
    return wrap;
  }
  function interval(i) {
    return i ? fmt(i.low) + "–" + fmt(i.high) : "–";
  }

  async function poll() {
    clearTimeout(timer);
    const params = query().toString();
    lastQuery = params;
    try {
      const response = await fetch(url + "?" + params, { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
      const body = await response.json();
      if (params !== lastQuery) return;
      if (response.status === 200) {
        status.textContent = "Paired comparisons ready (bootstrap: " + body.meta.options.resamples + " resamples; seed " + body.meta.options.seed + ", " + body.meta.options.correction + " correction).";
        root.dataset.state = "ready";
        if (!meta || meta.version !== body.meta.version) {
          meta = body.meta;
          render();
        }
        timer = setTimeout(poll, 15000); // the data may change: check again later
      } else if (response.status === 202) {
        status.textContent = body.message || "Computing the paired comparisons…";
        root.dataset.state = "computing";
        timer = setTimeout(poll, 2000);
      } else {
        status.textContent = body.message || body.detail || ("The server answered " + response.status + ".");
        root.dataset.state = "error";
        timer = setTimeout(poll, 10000);
      }
    } catch (error) {
      status.textContent = "Cannot reach the server (" + error.message + "); retrying.";
      timer = setTimeout(poll, 10000);
    }
  }

  function render() {
    const previous = select.value;
    select.replaceChildren(...meta.rankings.map((r) => { const o = el("option", null, r.label); o.value = r.statistic; return o; }));
    if (previous) select.value = previous;
    renderRanking();
    renderThresholds();
    renderTies();
    renderSystems();
    renderDistanceBins();
    renderCeiling();
    renderCalibration();
  }

  function renderRanking() {
    const label = names();
    const ranking = meta.rankings.find((r) => r.statistic === select.value) || meta.rankings[0];
    const rows = ranking.rows.map((r) => [label.get(r.metric), String(r.rank), fmt(r.value), String(r.n), r.beaten_by.map((id) => label.get(id)).join(", ") || "none"]);
    document.getElementById("meta-ranking").replaceChildren(
      rows.length ? table("meta-ranking", ["Metric", "Cluster", ranking.label, "Pairs", "Significantly beaten by"], rows,
        "Rank cluster = 1 + the number of metrics significantly better (p < " + meta.options.alpha + ", " + ranking.test + " test, " + meta.options.correction + " correction).") : el("p", "note", "No metric has this statistic on these pairs."));
    // Heat map: one cell per metric pair, shade by p-value bucket (classes, no inline styles).
    const ids = meta.metrics.map((m) => m.id);
    const heat = el("table", "data-table heatmap");
    heat.dataset.table = "meta-heatmap";
    const head = el("tr");
    head.appendChild(el("th", null, ""));
    for (const id of ids) head.appendChild(el("th", null, label.get(id)));
    const thead = el("thead");
    thead.appendChild(head);
    const tbody = el("tbody");
    ranking.matrix.forEach((row, i) => {
      const tr = el("tr");
      tr.appendChild(el("th", null, label.get(ids[i])));
      row.forEach((p, j) => {
        const td = el("td", null, i === j ? "" : pText(p));
        td.className = i === j ? "heat-self" : p === null ? "heat-none" : p < 0.001 ? "heat-4" : p < 0.01 ? "heat-3" : p < 0.05 ? "heat-2" : "heat-1";
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    heat.append(thead, tbody);
    const wrap = el("div", "table-scroll");
    wrap.appendChild(heat);
    // Beside the matrix: its test and the smallest p it can reach (a Monte-Carlo floor can hide every difference).
    const floor = el("p", ranking.reachable ? "caption meta-floor" : "caption meta-floor warning", ranking.floor_note);
    floor.dataset.reachable = String(ranking.reachable);
    document.getElementById("meta-heatmap").replaceChildren(floor, wrap);
    const tests = meta.paired.filter((t) => t.statistic === ranking.statistic);
    const pairRows = tests.map((t) => [label.get(t.metric_a) + " vs " + label.get(t.metric_b), String(t.n), fmt(t.value_a), fmt(t.value_b), fmt(t.difference), interval(t.interval), t.interval_two_way ? interval(t.interval_two_way) : "–", pText(t.p_permutation), pText(t.p_jackknife !== null ? t.p_jackknife : t.p_bootstrap), pText(t.p_williams), pText(t.p_delong), pText(t.p_holm), t.reason || ""]);
    document.getElementById("meta-paired").replaceChildren(table("meta-paired", ["Metrics (A vs B)", "Pairs", "A", "B", "A − B", "95% CI, pairs only", "95% CI, pairs and volunteers", "p perm.", "p boot./jack.", "p Williams", "p DeLong", "p Holm", "Note"], pairRows, pairedCaption(ranking.statistic, tests)));
  }

  function renderThresholds() {
    const label = names();
    const rows = meta.thresholds.map((r) => [label.get(r.metric), String(r.n), fmt(r.best_accuracy), r.tied_count > 1 ? r.tied_count + " tied: " + fmt(r.tied_lowest, 2) + " … " + fmt(r.tied_highest, 2) : (r.tied_count === 1 ? "unique" : "–"), fmt(r.cv_accuracy), fmt(r.cv_f1), fmt(r.natural_accuracy), r.best_threshold_low === null ? "–" : fmt(r.best_threshold_low, 2) + " – " + fmt(r.best_threshold_high, 2)]);
    document.getElementById("meta-thresholds").replaceChildren(table("meta-thresholds", ["Metric", "Pairs", "Best acc. (fitted)", "Tied best thresholds", meta.options.folds + "-fold CV acc.", "CV F1", "Acc. at natural threshold", "95% interval of best threshold"], rows, meta.notes.join(" ") + " Cross-validation: the threshold is chosen on the other folds and measured on the held-out one."));
  }

  function renderTies() {
    const label = names();
    const rows = meta.ties.map((r) => [label.get(r.metric), String(r.ties.n), fmt(r.ties.tau_b), fmt(r.ties.tau_c), fmt(r.ties.acc23), fmt(r.ties.acc23_calibrated), fmt(r.ties.epsilon, 4), fmt(r.ties.human_tied_share) + (r.ties.sampled ? " (sampled)" : "")]);
    document.getElementById("meta-ties").replaceChildren(table("meta-ties", ["Metric", "Pairs", "τ_b", "τ_c", "acc23 (ε = 0)", "acc23 calibrated", "ε", "Human-tied share"], rows));
  }

  // When to quote which interval: the sentence comes with the meta-evaluation (meta.two_way_note).
  // Where a statistic has no interval over volunteers (gold labels),
  // the reason comes with its comparisons (two_way_reason) and replaces the dash's silence.
  function pairedCaption(statistic, tests) {
    const pairsOnly = { auc: "DeLong's interval of A − B", kendall: "the jackknife's interval of A − B" }[statistic] || "the paired bootstrap's interval of A − B";
    const missing = tests.find((t) => t.two_way_reason);
    if (missing && !tests.some((t) => t.interval_two_way)) return "95% CI, pairs only: " + pairsOnly + ". Pairs and volunteers: " + missing.two_way_reason + ". " + meta.two_way_note;
    const refit = { accuracy_cv: ", every fold's threshold refitted on each replicate's labels", kendall: ", τ_b recounted on each replicate's human scores" }[statistic] || "";
    return "95% CI, pairs only: " + pairsOnly + ". Pairs and volunteers: the two-way bootstrap, the same draws of pairs and of volunteers for both metrics" + refit + ". " + meta.two_way_note;
  }

  function spaCaption(s) {
    const share = Math.round(s.shared_sources_rule * 100);
    const twoWay = s.spa_two_way_volunteers ? "; pairs only, and pairs and volunteers (each resample's human scores recomputed from a draw of the " + s.spa_two_way_volunteers + " volunteers). " : ". ";
    return "Soft Pairwise Accuracy over " + s.system_pairs + " system pairs: " + s.paired_pairs + " compared paired on their shared sources (at least " + share + "% of each system's sources), " + (s.system_pairs - s.paired_pairs) + " by a two-sample permutation over all items of both systems. Interval: " + s.spa_resamples + " bootstrap resamples (sources with all their hypotheses, or items within each system), re-centred on the estimate" + twoWay + meta.two_way_note;
  }

  function groupCaption(v) {
    const dropped = (total, kept, drops) => (kept === total ? "none dropped" : (total - kept) + " dropped (" + drops.map((d) => d.groups + ": " + d.reason).join("; ") + ")");
    const threshold = v.r_threshold === null ? "" : " (a stated threshold on the graded scale)";
    const groups = (count) => count + (count === 1 ? " group" : " groups");
    return v.groups + " sources with two or more hypotheses. Spearman: every metric averaged over the same " + groups(v.spearman_groups) + ", " + dropped(v.groups, v.spearman_groups, v.spearman_dropped) + ". R-Precision (relevant: " + v.relevance + threshold + "): over the same " + groups(v.r_groups) + ", " + dropped(v.groups, v.r_groups, v.r_dropped) + ". 'undefined = 0': the mean over all " + v.groups + " groups with an undefined value counted as 0.";
  }

  function renderSystems() {
    const label = names();
    const slot = document.getElementById("meta-systems");
    if (!meta.systems) {
      slot.replaceChildren(el("p", "note", meta.systems_note));
    } else {
      const s = meta.systems;
      const rows = s.systems.map((r) => [r.system, String(r.pairs), fmt(r.paraphrase_rate), fmt(r.mean_ordinal, 2), ...r.metric_means.map((v) => fmt(v))]);
      const spaCi = (i) => (i ? fmt(i[0]) + "–" + fmt(i[1]) : "–");
      const metricRows = s.metrics.map((r) => [label.get(r.metric), fmt(r.pearson), fmt(r.kendall), fmt(r.spa), spaCi(r.spa_interval), spaCi(r.spa_interval_two_way), r.reason || ""]);
      slot.replaceChildren(
        table("meta-systems", ["System", "Pairs", "Paraphrase rate", "Mean ordinal", ...meta.metrics.map((m) => m.label)], rows),
        table("meta-system-metrics", ["Metric", "System Pearson", "System Kendall", "SPA", "SPA 95% CI, pairs only", "SPA 95% CI, pairs and volunteers", "Note"], metricRows, spaCaption(s)),
      );
    }
    const groups = document.getElementById("meta-groups");
    if (!meta.groups) {
      groups.replaceChildren(el("p", "note", "No source sentence has two or more hypotheses."));
      return;
    }
    const rows = meta.group_metrics.map((r) => [label.get(r.metric), fmt(r.spearman), fmt(r.spearman_zero), String(r.groups), fmt(r.r_precision), fmt(r.r_precision_zero), String(r.r_groups)]);
    groups.replaceChildren(table("meta-groups", ["Metric", "Spearman", "Spearman, undef. = 0", "Own groups", "R-Precision", "R-Prec., undef. = 0", "Own groups"], rows, groupCaption(meta.group_view)));
  }

  function renderDistanceBins() {
    const slot = document.getElementById("meta-distance-bins");
    const view = meta.distance_bins;
    if (!slot || !view) return;
    if (!view.bins.length) {
      slot.replaceChildren(el("p", "note", view.note));
      return;
    }
    const label = names();
    const total = view.bins.reduce((sum, b) => sum + b.pairs, 0);
    const headers = ["Metric", "Statistic", ...view.bins.map((b) => "Bin " + b.index + ": " + fmt(b.low, 2) + "–" + fmt(b.high, 2) + " (" + b.pairs + ")")];
    const rows = [];
    for (const m of view.metrics) {
      rows.push([label.get(m.metric), "Pearson r", ...m.values.map((v) => fmt(v.pearson))]);
      rows.push(["", "Spearman", ...m.values.map((v) => fmt(v.spearman))]);
      rows.push(["", "ROC AUC", ...m.values.map((v) => fmt(v.auc))]);
      rows.push(["", "Pairs (graded / labelled)", ...m.values.map((v) => v.graded_pairs + " / " + v.labelled_pairs)]);
    }
    const caption = view.requested + " equal-count bins of normalised edit distance (character Levenshtein distance / longer length) over the " + total + " pairs with a human reference, from the closest hypotheses (bin 1) to the farthest (Shen et al. 2022, section 3.1). Correlations with the graded human scale, ROC AUC against the binary label. Column: the bin's distance range (its pairs); read each figure with its count.";
    slot.replaceChildren(table("meta-distance-bins", headers, rows, caption));
  }

  function renderCeiling() {
    const label = names();
    const rows = meta.ceiling.filter((r) => r.comparisons > 0).map((r) => [label.get(r.metric), String(r.comparisons), String(r.pairs), fmt(r.judge_agreement), interval(r.judge_interval), fmt(r.metric_agreement), interval(r.metric_interval)]);
    document.getElementById("meta-ceiling").replaceChildren(rows.length
      ? table("meta-ceiling", ["Metric", "Comparisons", "Pairs", "One judge vs the others", "95% CI", "Metric vs the same majority", "95% CI"], rows)
      : el("p", "note", "No pair has two or more judges with a strict majority among the others."));
    renderAltTest();
  }

  function renderAltTest() {
    const label = names();
    const slot = document.getElementById("meta-alt-test");
    const test = meta.alt_test;
    if (!slot || !test) return;
    if (test.note) {
      slot.replaceChildren(el("p", "note", test.note));
      return;
    }
    const caption = "Leave one judge out: does the metric's decision align with the other judges of the pair at least as well as the left-out judge does, up to the cost-benefit margin ε = " + test.epsilon + "? One-sided paired t-test per judge (judges with at least " + test.min_pairs + " pairs shared with another judge: " + test.eligible_judges + "), Benjamini-Yekutieli at α = " + test.alpha + " over the judges; winning rate ω = share of judges whose null is rejected; the metric may replace a volunteer when ω ≥ 0.5 (Calderon et al., ACL 2025).";
    const rows = test.rows.map((r) => [label.get(r.metric), String(r.judges), fmt(r.winning_rate), r.passed === null ? "–" : (r.passed ? "yes" : "no"), fmt(r.advantage), r.reason || ""]);
    slot.replaceChildren(table("meta-alt-test", ["Metric", "Judges", "Winning rate ω", "Replaces a volunteer", "Advantage ρ", "Note"], rows, caption));
  }

  function renderCalibration() {
    const label = names();
    const slot = document.getElementById("meta-calibration");
    if (!meta.calibration.length) {
      slot.replaceChildren(el("p", "note", "No metric with a log-odds natural threshold (ParaPLUIE) has scored labelled pairs."));
    } else {
      const rows = meta.calibration.map((r) => [label.get(r.metric), String(r.calibration.n), fmt(r.calibration.ece), fmt(r.calibration.brier)]);
      slot.replaceChildren(table("meta-calibration", ["Metric", "Pairs", "ECE", "Brier"], rows));
    }
    if (!window.Chart) return;
    const canvas = document.getElementById("chart-reliability");
    const datasets = meta.calibration.map((r, index) => ({
      label: label.get(r.metric),
      data: r.calibration.bins.filter((b) => b.n > 0).map((b) => ({ x: b.mean_probability, y: b.paraphrase_share })),
      showLine: true,
      borderColor: ["#0072B2", "#E69F00", "#009E73", "#D55E00"][index % 4],
      backgroundColor: ["#0072B2", "#E69F00", "#009E73", "#D55E00"][index % 4],
    }));
    datasets.push({ label: "perfect calibration", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], showLine: true, borderDash: [4, 4], borderColor: "#888", pointRadius: 0 });
    if (chart) chart.destroy();
    chart = new Chart(canvas, { type: "scatter", data: { datasets }, options: { scales: { x: { min: 0, max: 1, title: { display: true, text: "mean p(paraphrase)" } }, y: { min: 0, max: 1, title: { display: true, text: "share of paraphrases" } } } } });
  }

  select.addEventListener("change", () => { if (meta) renderRanking(); });
  if (form) form.addEventListener("submit", () => { meta = null; status.textContent = "Computing the paired comparisons…"; setTimeout(poll, 0); });
  window.paraevalMeta = { data: () => meta, refresh: poll };
  poll();
})();
