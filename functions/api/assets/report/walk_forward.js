// A batch's walk-forward: the stitched out-of-sample equity with its
// drawdown, the summary (each value keyed for checks), the stitched run's
// metrics and per window the in-sample best, its grid values, its score and
// its runs in and out of sample. Metrics in the results glossary's labels
// and units (docs/results.md): the answer's are fractions, shown in percent.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { walk_forward: w, figures, pick } = R.data();
  const s = w.settings;
  const total = figures.metrics.find((m) => m.name === "total_return");
  const fraction = { unit: "fraction", scale: 1 };

  const summary = {
    "In sample (bars)": s.in_sample,
    "Out of sample (bars)": s.out_of_sample,
    "Windows": w.windows.length,
    "Mode": s.anchored ? "anchored" : "rolling",
    "Picked by": pick ? pick.label : s.metric,
    "Walk-forward efficiency": w.efficiency,
    "Profitable windows": w.profitable_windows + " of " + w.windows_with_pick,
  };
  R.metrics("summary", summary, Object.keys(summary), "wf:");
  R.notes("notes", w.notes);
  R.figures("metrics", w, figures.metrics);

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
    // The score is the pick metric's, in its unit (a return a fraction).
    [pick ? "Score: " + pick.label : "Score", "score", (x) => x.score, false, pick],
    ["In-sample " + total.label, "in_sample_return", (x) => x.in_sample_return, true, fraction],
    ["Out-of-sample " + total.label, "out_of_sample_return", (x) => x.out_of_sample_return, true, fraction],
    ["Out-of-sample trades", "out_of_sample_trades", (x) => x.out_of_sample_trades],
    ["Efficiency", "efficiency", (x) => x.efficiency, true],
  ]);
  R.ready();
})();
