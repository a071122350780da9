// A batch's results: the rows fetched from the results endpoint, shown as a
// table sorted by a column (the best 1,000 rows), every strategy's total
// return as bars, best first, the overfitting statistics with the logits'
// distribution, a heat map of a metric over the first two varied paths
// (the best value over any others, as backtesting.py's heat maps), and the
// best row's Monte Carlo. The metrics' headings and values are the results
// glossary's labels and units (docs/results.md), as every result page has
// them; the rows' keys stay the spec's (2.11's names, percent).
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { batch_id, paths, statistics, metrics } = R.data();
  const SHOWN = 1000;
  const named = (name) => metrics.find((m) => m.name === name);
  // Sorted and drawn by total return.
  const total = named("total_return");

  // The statistics as one table (each value keyed for checks), the logits as bars.
  function overfitting() {
    if (!statistics) return;
    const d = statistics.deflated_sharpe || {};
    const o = statistics.overfitting || {};
    const shown = {
      "Strategies": statistics.strategies,
      "Returns each": statistics.observations,
      "Best row": d.best_index,
      "Best Sharpe (annualised)": d.sharpe_annualized,
      "Expected max Sharpe of N trials (annualised)": d.expected_max_sharpe_annualized,
      "Trials N": d.trials,
      "Probabilistic Sharpe Ratio": d.probabilistic_sharpe_ratio,
      "Deflated Sharpe Ratio": d.deflated_sharpe_ratio,
      "Probability of Backtest Overfitting": o.pbo,
      "Splits (blocks)": o.splits === undefined ? undefined : o.splits + " (" + o.blocks + ")",
      "Probability of loss out of sample": o.probability_of_loss,
      "Degradation slope": o.degradation_slope,
      "Degradation R²": o.degradation_r_squared,
    };
    document.getElementById("overfitting").hidden = false;
    R.metrics("statistics", shown, Object.keys(shown), "stat:");
    R.notes("notes", statistics.notes);
    if (!o.logit_histogram) return;
    const bins = o.logit_histogram;
    const label = (b) => (b.from === null ? "< " + b.to : b.to === null ? "≥ " + b.from : b.from + " to " + b.to);
    const chart = R.categories(document.getElementById("logits"), bins.map(label));
    chart
      .addSeries(LC.HistogramSeries, { title: "splits", priceLineVisible: false })
      .setData(bins.map((b, i) => ({ time: i + 1, value: b.count, color: b.to !== null && b.to <= 0 ? "#cf222e" : "#1a7f37" })));
    chart.timeScale().fitContent();
  }

  // Rows of the first path's values, columns of the second's; each cell the
  // best of glossary metric `m` of the rows with those two values.
  function heatmap(rows, m) {
    const metric = m.field;
    const table = document.getElementById("heatmap");
    table.textContent = "";
    const [py, px] = paths;
    const key = (v) => JSON.stringify(v);
    const ys = [], xs = [], best = new Map();
    for (const r of rows) {
      const y = key(r.params[py]), x = key(r.params[px]);
      if (!ys.includes(y)) ys.push(y);
      if (!xs.includes(x)) xs.push(x);
      const v = r[metric];
      if (typeof v !== "number") continue;
      const k = y + "|" + x;
      if (!best.has(k) || v > best.get(k)) best.set(k, v);
    }
    const values = [...best.values()];
    const lo = Math.min(...values), hi = Math.max(...values);
    const head = document.createElement("tr");
    R.th(head, py + " \\ " + px);
    for (const x of xs) R.th(head, JSON.parse(x));
    table.appendChild(head);
    for (const y of ys) {
      const tr = document.createElement("tr");
      R.th(tr, JSON.parse(y));
      for (const x of xs) {
        const v = best.has(y + "|" + x) ? best.get(y + "|" + x) : null;
        const td = R.metricCell(tr, v, m, "heat:" + y + "|" + x);
        td.removeAttribute("class");
        if (v !== null && hi > lo) {
          // White at the worst, green at the best.
          const t = (v - lo) / (hi - lo);
          td.style.background = "rgba(26, 127, 55, " + (0.08 + 0.8 * t).toFixed(3) + ")";
        }
      }
      table.appendChild(tr);
    }
    table.dataset.metric = metric;
  }
  // [heading, key, value of a row, glossary metric]
  const columns = [["#", "index", (r) => r.index]]
    .concat(paths.map((p) => [p, "param:" + p, (r) => r.params[p]]))
    .concat([["Symbol", "Symbol", (r) => r["Symbol"]]])
    .concat(metrics.map((m) => [m.label, m.field, (r) => r[m.field], m]))
    .concat([["Error", "error", (r) => r.error]]);

  R.api("/backtest/batch/" + encodeURIComponent(batch_id) + "/results").then((rows) => {
    const table = document.getElementById("rows");
    let sortBy = total.field;
    let descending = true;

    function render() {
      const col = columns.find((c) => c[1] === sortBy);
      const value = col[2];
      // Missing values (a failed strategy) last either way.
      const sorted = rows.slice().sort((a, b) => {
        const x = value(a), y = value(b);
        if (x === null || x === undefined) return y === null || y === undefined ? a.index - b.index : 1;
        if (y === null || y === undefined) return -1;
        const c = x < y ? -1 : x > y ? 1 : 0;
        return (descending ? -c : c) || a.index - b.index;
      });
      table.textContent = "";
      const head = document.createElement("tr");
      for (const c of columns) {
        const h = R.th(head, c[0] + (c[1] === sortBy ? (descending ? " ▼" : " ▲") : ""));
        h.dataset.sort = c[1];
        h.className = "sortable";
        if (c[3]) h.title = c[3].name;
        h.addEventListener("click", () => {
          descending = c[1] === sortBy ? !descending : true;
          sortBy = c[1];
          render();
        });
      }
      const thead = document.createElement("thead");
      thead.appendChild(head);
      table.appendChild(thead);
      const body = document.createElement("tbody");
      for (const r of sorted.slice(0, SHOWN)) {
        const tr = document.createElement("tr");
        tr.dataset.row = String(r.index);
        for (const c of columns) {
          if (c[3]) R.metricCell(tr, c[2](r), c[3]);
          else R.cell(tr, c[2](r), c[1]);
        }
        body.appendChild(tr);
      }
      table.appendChild(body);
      table.dataset.sortedBy = sortBy;
      document.getElementById("shown").textContent =
        rows.length > SHOWN ? "(the first " + SHOWN.toLocaleString("en-US") + " of " + rows.length.toLocaleString("en-US") + ")" : "(" + rows.length + ")";
    }
    render();

    const ranked = rows.filter((r) => typeof r[total.field] === "number").sort((a, b) => b[total.field] - a[total.field]);
    const bars = R.categories(document.getElementById("returns"), ranked.map((r) => "#" + r.index));
    // In percent: the glossary's fraction (the row's over its scale) times 100.
    const percent = (r) => (r[total.field] / total.scale) * 100;
    bars
      .addSeries(LC.HistogramSeries, { title: total.label + " %", priceLineVisible: false })
      .setData(ranked.map((r, i) => ({ time: i + 1, value: percent(r), color: percent(r) >= 0 ? "#1a7f37" : "#cf222e" })));
    bars.timeScale().fitContent();
    overfitting();
    if (paths.length >= 2) {
      document.getElementById("heat").hidden = false;
      const pick = document.getElementById("heat-metric");
      for (const m of metrics) {
        const o = document.createElement("option");
        o.value = m.name;
        o.textContent = m.label;
        pick.appendChild(o);
      }
      pick.value = "sharpe";
      pick.addEventListener("change", () => heatmap(rows, named(pick.value)));
      heatmap(rows, named(pick.value));
    }
    // The best row's Monte Carlo (its strategy run again), as a backtest's
    // page shows it; the page is ready once it is drawn.
    if (ranked.length === 0) return R.ready();
    const best = ranked[0].index;
    return R.api("/backtest/batch/" + encodeURIComponent(batch_id) + "/monte-carlo?row=" + best + "&draws=1000&seed=0").then((mc) => {
      document.getElementById("monte-carlo-section").hidden = false;
      document.getElementById("monte-carlo-row").textContent = "#" + best;
      R.monteCarlo(mc);
      R.ready();
    });
  }).catch((e) => R.fail(e.message));
})();
