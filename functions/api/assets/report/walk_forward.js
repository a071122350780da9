// A batch's walk-forward: the stitched out-of-sample equity with its
// drawdown, the summary (each value keyed for checks), and per window the
// in-sample best, its grid values and its runs in and out of sample.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { walk_forward: w } = R.data();
  const s = w.settings;
  // The answer's returns and drawdowns are fractions; the page shows percent.
  const pct = (x) => (x === null || x === undefined ? x : x * 100);

  const summary = {
    "In sample (bars)": s.in_sample,
    "Out of sample (bars)": s.out_of_sample,
    "Windows": w.windows.length,
    "Mode": s.anchored ? "anchored" : "rolling",
    "Picked by": s.metric,
    "Out-of-sample return (%)": pct(w.total_return),
    "Out-of-sample CAGR (%)": pct(w.cagr),
    "Out-of-sample Sharpe": w.sharpe,
    "Out-of-sample max drawdown (%)": pct(w.max_drawdown),
    "Walk-forward efficiency": w.efficiency,
    "Profitable windows": w.profitable_windows + " of " + w.windows_with_pick,
  };
  R.metrics("summary", summary, Object.keys(summary), "wf:");
  R.notes("notes", w.notes);

  if (w.equity.length > 0) {
    const chart = R.chart(document.getElementById("equity"));
    const times = w.equity.map((p) => R.time(p.time));
    const values = w.equity.map((p) => p.equity);
    chart
      .addSeries(LC.LineSeries, { color: "#1a7f37", lineWidth: 2, title: "out-of-sample equity" })
      .setData(times.map((t, i) => ({ time: t, value: values[i] })));
    const dd = R.drawdown(values, 1);
    chart
      .addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true }, 1)
      .setData(times.map((t, i) => ({ time: t, value: dd[i] })));
    chart.timeScale().fitContent();
  }

  const grid = (p) => Object.entries(p || {}).map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ");
  R.rows("windows", w.windows, [
    ["#", undefined, (_, i) => i + 1],
    ["In sample", undefined, (x) => x.in_sample_start + " – " + x.in_sample_end],
    ["Out of sample", undefined, (x) => x.out_of_sample_start + " – " + x.out_of_sample_end],
    ["Best row", "best_index", (x) => x.best_index],
    ["Its values", undefined, (x) => grid(x.params)],
    ["Score", "score", (x) => x.score],
    ["In-sample return %", "in_sample_return", (x) => pct(x.in_sample_return), true],
    ["Out-of-sample return %", "out_of_sample_return", (x) => pct(x.out_of_sample_return), true],
    ["Out-of-sample trades", "out_of_sample_trades", (x) => x.out_of_sample_trades],
    ["Efficiency", "efficiency", (x) => x.efficiency, true],
  ]);
  R.ready();
})();
