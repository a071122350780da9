// The portfolio report: the equity against the benchmark, the drawdown,
// the month-end weights as a stacked area, the metrics and the
// contributions, all from #report-data (the figures and the task's chart).
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { result, chart } = R.data();

  R.metrics("metrics", result, [
    "total_return", "cagr", "sharpe", "sortino", "annual_volatility", "max_drawdown", "calmar",
    "drawdown_period", "time_in_market", "average_exposure", "annual_turnover", "total_trades",
    "win_rate", "average_win", "average_loss", "crowded_out", "initial_capital", "final_capital",
  ]);
  R.metrics("relative", result.relative, [
    "alpha", "beta", "tracking_error", "information_ratio", "up_capture", "down_capture", "benchmark_return",
  ], "relative.");
  R.rows("contributions", chart.contributions, [
    ["Symbol", "symbol", (c) => c.symbol],
    ["Profit", "profit", (c) => c.profit, true],
    ["Contribution %", "contribution", (c) => c.contribution, true],
  ]);

  const at = (i) => R.time(chart.date[i]);
  const equity = R.chart(document.getElementById("equity"));
  equity
    .addSeries(LC.LineSeries, { color: "#1a7f37", lineWidth: 2, title: "portfolio" })
    .setData(chart.equity.map((v, i) => ({ time: at(i), value: v })));
  const bench = [];
  chart.benchmark.forEach((v, i) => { if (v !== null) bench.push({ time: at(i), value: v }); });
  equity
    .addSeries(LC.LineSeries, { color: "#57606a", lineWidth: 1, title: result.benchmark })
    .setData(bench);
  equity.timeScale().fitContent();

  const dd = R.chart(document.getElementById("drawdown"));
  dd.addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true })
    .setData(chart.drawdown.map((v, i) => ({ time: at(i), value: v })));
  dd.timeScale().fitContent();

  // A stacked area: each layer drawn at the running sum of the layers
  // under it, the top one first so the lower ones paint over it.
  const w = chart.weights;
  const layers = R.chart(document.getElementById("weights"));
  const sums = w.weight.map(() => []);
  w.date.forEach((_, m) => {
    let total = 0;
    w.weight.forEach((series, k) => {
      total += series[m] * 100;
      sums[k].push(total);
    });
  });
  for (let k = w.symbols.length - 1; k >= 0; k--) {
    // The palette's ten colours for the layers; grey for the rest together.
    const color = k < R.palette.length ? R.palette[k] : "#afb8c1";
    layers
      .addSeries(LC.AreaSeries, { lineColor: color, topColor: color, bottomColor: color, lineWidth: 1, title: w.symbols[k], lastValueVisible: false, priceLineVisible: false })
      .setData(w.date.map((d, m) => ({ time: R.time(d), value: sums[k][m] })));
  }
  layers.timeScale().fitContent();
  document.getElementById("layers").textContent = w.symbols.join(", ");
  R.ready();
})();
