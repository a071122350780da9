// A batch's results: the rows fetched from the results endpoint, shown as a
// table sorted by a column (the best 1,000 rows), and every strategy's total
// return as bars, best first.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { batch_id, paths } = R.data();
  const SHOWN = 1000;
  const metrics = [
    "Symbol", "Total Return (%)", "CAGR", "Sharpe Ratio", "Max Drawdown", "Win Rate",
    "Total Trades", "Average Win %", "Average Loss %", "BuyHoldGain",
  ];
  // [heading, key, value of a row]
  const columns = [["#", "index", (r) => r.index]]
    .concat(paths.map((p) => [p, "param:" + p, (r) => r.params[p]]))
    .concat(metrics.map((m) => [m, m, (r) => r[m]]))
    .concat([["Error", "error", (r) => r.error]]);

  R.api("/backtest/batch/" + encodeURIComponent(batch_id) + "/results").then((rows) => {
    const table = document.getElementById("rows");
    let sortBy = "Total Return (%)";
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
        for (const c of columns) R.cell(tr, c[2](r), c[1], c[1] === "Total Return (%)");
        body.appendChild(tr);
      }
      table.appendChild(body);
      table.dataset.sortedBy = sortBy;
      document.getElementById("shown").textContent =
        rows.length > SHOWN ? "(the first " + SHOWN.toLocaleString("en-US") + " of " + rows.length.toLocaleString("en-US") + ")" : "(" + rows.length + ")";
    }
    render();

    const ranked = rows.filter((r) => typeof r["Total Return (%)"] === "number").sort((a, b) => b["Total Return (%)"] - a["Total Return (%)"]);
    const bars = R.categories(document.getElementById("returns"), ranked.map((r) => "#" + r.index));
    bars
      .addSeries(LC.HistogramSeries, { title: "total return %", priceLineVisible: false })
      .setData(ranked.map((r, i) => ({ time: i + 1, value: r["Total Return (%)"], color: r["Total Return (%)"] >= 0 ? "#1a7f37" : "#cf222e" })));
    bars.timeScale().fitContent();
    R.ready();
  }).catch((e) => R.fail(e.message));
})();
