// Staff status page: poll the JSON variant and redraw the tables (text only, never HTML).
(function () {
  "use strict";
  const root = document.getElementById("scoring-status");
  if (!root) return;
  const url = root.dataset.url;
  const refresh = Math.max(1, Number(root.dataset.refresh) || 5) * 1000;

  function cell(row, text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  function replaceRows(tbodyId, rows) {
    const tbody = document.getElementById(tbodyId);
    tbody.replaceChildren(...rows);
  }

  function drawQueues(data) {
    const rows = data.queue_status.map((queue) => {
      const tr = document.createElement("tr");
      tr.dataset.queue = queue.queue;
      const th = document.createElement("th");
      th.textContent = queue.queue;
      tr.appendChild(th);
      cell(tr, queue.serves);
      cell(tr, queue.waiting === null ? "?" : String(queue.waiting), "num");
      cell(tr, String(queue.workers_alive), queue.workers_alive ? "num" : "num error");
      for (const rate of Object.values(queue.per_minute)) cell(tr, String(rate), "num");
      cell(tr, (data.series.counts[queue.queue] || []).join(" "), "series");
      return tr;
    });
    replaceRows("queues-body", rows);
    const error = document.getElementById("broker-error");
    error.hidden = !data.broker_error;
    error.textContent = data.broker_error ? "Broker unreachable: " + data.broker_error : "";
  }

  function drawWorkers(data) {
    document.getElementById("workers-alive").textContent = String(data.workers_alive);
    if (!data.workers.length) {
      const tr = document.createElement("tr");
      const td = cell(tr, "No worker has reported. Start one: scripts/worker.sh (every queue) or scripts/worker.sh --model NAME", "error");
      td.colSpan = 6;
      replaceRows("workers-body", [tr]);
      return;
    }
    replaceRows("workers-body", data.workers.map((worker) => {
      const tr = document.createElement("tr");
      cell(tr, worker.hostname);
      cell(tr, worker.queues);
      cell(tr, worker.pid === null ? "" : String(worker.pid));
      cell(tr, worker.seconds_since + " s ago");
      cell(tr, worker.alive ? "alive" : "silent", worker.alive ? "ok" : "error");
      cell(tr, worker.doing || "\u2014");
      return tr;
    }));
  }

  function drawConfigs(data) {
    replaceRows("configs-body", data.configurations.map((config) => {
      const tr = document.createElement("tr");
      if (!config.enabled) tr.className = "muted";
      cell(tr, config.label + (config.enabled ? "" : " (not enabled)"));
      cell(tr, config.queue);
      cell(tr, String(config.done), "num");
      cell(tr, String(config.pending), "num");
      const failed = cell(tr, "", "num");
      if (config.failed && config.id !== null) {
        const link = document.createElement("a");
        link.href = root.dataset.failedUrl + encodeURIComponent(config.id);
        link.textContent = String(config.failed);
        failed.appendChild(link);
      } else {
        failed.textContent = String(config.failed);
      }
      return tr;
    }));
    const list = document.getElementById("unavailable");
    list.replaceChildren(...data.unavailable.map((metric) => {
      const li = document.createElement("li");
      li.textContent = metric.name + " is enabled but cannot be built: " + metric.reason;
      return li;
    }));
  }

  // "1 pair", "2 pairs": Intl.PluralRules picks the form, as Django's pluralize does on the server.
  const plurals = new Intl.PluralRules("en");
  function count(n, one, many) {
    return n + " " + (plurals.select(n) === "one" ? one : many);
  }

  function drawTotals(data) {
    const totals = data.totals;
    document.getElementById("pending").textContent = totals.pending ? count(totals.pending, "score", "scores") + " pending" : "Nothing pending";
    document.getElementById("pairs").textContent = count(data.pairs, "campaign pair", "campaign pairs");
    document.getElementById("done").textContent = count(totals.done, "score", "scores") + " done";
    const failed = document.getElementById("failed");
    failed.textContent = totals.failed + " failed";
    failed.className = totals.failed ? "error" : "";
  }

  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok && (response.headers.get("content-type") || "").includes("json")) {
        const data = await response.json();
        drawQueues(data);
        drawWorkers(data);
        drawConfigs(data);
        drawTotals(data);
        document.getElementById("transport").textContent = data.transport;
        const generated = document.getElementById("generated-at");
        generated.dateTime = data.generated_at;
        generated.textContent = new Date(data.generated_at).toLocaleTimeString();
      }
    } catch (error) {
      // The server is restarting or the network hiccuped: try again at the next tick.
    }
    window.setTimeout(poll, refresh);
  }

  window.setTimeout(poll, refresh);
})();
