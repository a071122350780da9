// The backtest report: metrics and trades from the task's result, charts
// from the replayed run (both inlined in #report-data by the server); the
// metrics in the results glossary's labels and units (docs/results.md), as
// every result page shows them.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { result, chart, figures } = R.data();

  R.figures("metrics", result, figures.metrics);
  R.figures("relative", result, figures.relative);
  R.rows("trades", result["EntryDate"], [
    ["#", undefined, (_, i) => i + 1],
    ["Entry", "EntryDate", (d) => d],
    ["Exit", "ExitDate", (_, i) => result["ExitDate"][i]],
    ["Return %", "Each Return", (_, i) => result["Each Return"][i], true],
    ["Exit reason", "Exit Reason", (_, i) => result["Exit Reason"][i]],
  ]);

  const price = R.chart(document.getElementById("price"));
  const closes = price.addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 1, title: chart.symbol });
  closes.setData(chart.time.map((t, i) => ({ time: R.time(t), value: chart.close[i] })));
  const markers = [];
  // The chart's returns and drawdown are fractions; the page shows percent.
  for (const t of chart.trades) {
    const pct = t.return * 100;
    markers.push({ time: R.time(t.entry_time), position: "belowBar", color: "#1a7f37", shape: "arrowUp", text: "buy" });
    markers.push({ time: R.time(t.exit_time), position: "aboveBar", color: "#cf222e", shape: "arrowDown", text: (pct >= 0 ? "+" : "") + pct.toFixed(1) + "%" });
  }
  markers.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  LC.createSeriesMarkers(closes, markers);
  price.timeScale().fitContent();

  const equity = R.chart(document.getElementById("equity"));
  equity
    .addSeries(LC.LineSeries, { color: "#1a7f37", lineWidth: 2, title: "equity" })
    .setData(chart.time.map((t, i) => ({ time: R.time(t), value: chart.equity[i] })));
  equity
    .addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true }, 1)
    .setData(chart.time.map((t, i) => ({ time: R.time(t), value: chart.drawdown[i] * 100 })));
  equity.timeScale().fitContent();

  document.getElementById("points").textContent = chart.time.length.toLocaleString("en-US");
  R.monteCarlo(R.data().monte_carlo, chart);
  R.ready();
})();
