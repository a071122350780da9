// The backtest report: metrics and trades from the task's result, charts
// from the replayed run (both inlined in #report-data by the server).
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { result, chart } = R.data();

  R.metrics("metrics", result, [
    "Total Return (%)", "CAGR", "Sharpe Ratio", "Max Drawdown", "DrawDown Period",
    "Win Rate", "Average Win %", "Average Loss %", "Total Trades", "Total Positive",
    "Total Negative", "Time in Market", "BuyHoldGain", "Benchmark Return (%)",
    "Initial Capital", "Final Capital",
  ]);
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
  for (const t of chart.trades) {
    markers.push({ time: R.time(t.entry_time), position: "belowBar", color: "#1a7f37", shape: "arrowUp", text: "buy" });
    markers.push({ time: R.time(t.exit_time), position: "aboveBar", color: "#cf222e", shape: "arrowDown", text: (t.return_pct >= 0 ? "+" : "") + t.return_pct.toFixed(1) + "%" });
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
    .setData(chart.time.map((t, i) => ({ time: R.time(t), value: chart.drawdown[i] })));
  equity.timeScale().fitContent();

  document.getElementById("points").textContent = chart.time.length.toLocaleString("en-US");
  monteCarlo(R.data().monte_carlo);
  R.ready();

  // The bands of both methods as a table (each cell keyed
  // `method.figure.percentile`), and each method's fan of equity paths.
  function monteCarlo(mc) {
    if (mc.error) {
      R.notes("monte-carlo-notes", [mc.error]);
      return;
    }
    R.notes("monte-carlo-notes", mc.notes);
    const figures = [["cagr", "CAGR %"], ["max_drawdown", "Max drawdown %"], ["final_equity", "Final equity"]];
    const methods = [["trades", "Trades"], ["returns", "Bar returns, blocks of " + mc.block]];
    const items = [];
    for (const [m, label] of methods) {
      if (!mc[m]) continue;
      for (const [f, name] of figures) items.push({ m, label, f, name, values: mc[m][f], actual: mc.actual[f] });
      items.push({ m, label, f: "probability_of_loss", name: "Paths ending below the capital", values: mc.percentiles.map(() => null), actual: null, loss: mc[m].probability_of_loss });
    }
    const table = document.getElementById("monte-carlo");
    const head = document.createElement("tr");
    for (const h of ["Drawn", "Figure"].concat(mc.percentiles.map((p) => "P" + p), ["This run"])) R.th(head, h);
    table.appendChild(head);
    for (const it of items) {
      const tr = document.createElement("tr");
      R.cell(tr, it.label);
      R.cell(tr, it.name);
      if (it.loss !== undefined) {
        const td = R.cell(tr, (it.loss * 100).toFixed(1) + "%", it.m + ".probability_of_loss");
        td.dataset.value = JSON.stringify(it.loss);
        td.colSpan = mc.percentiles.length + 1;
      } else {
        it.values.forEach((v, i) => R.cell(tr, v, it.m + "." + it.f + "." + mc.percentiles[i], it.f !== "final_equity"));
        R.cell(tr, it.actual, "actual." + it.f, it.f !== "final_equity");
      }
      table.appendChild(tr);
    }
    const colors = ["#cf222e", "#9a6700", "#1a7f37", "#9a6700", "#cf222e"];
    const fan = (el, fan, at) => {
      fan.equity.forEach((band, j) => {
        el.addSeries(LC.LineSeries, { color: colors[j % colors.length], lineWidth: j === 2 ? 2 : 1, title: "P" + mc.percentiles[j], lastValueVisible: false, priceLineVisible: false })
          .setData(band.map((v, k) => ({ time: at(k), value: v })));
      });
      el.timeScale().fitContent();
    };
    if (mc.returns) {
      const el = R.chart(document.getElementById("fan-returns"));
      fan(el, mc.returns.fan, (k) => R.time(mc.returns.fan.time[k]));
      el.addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 2, title: "this run", lastValueVisible: false, priceLineVisible: false })
        .setData(chart.time.map((t, i) => ({ time: R.time(t), value: chart.equity[i] })));
    }
    if (mc.trades) {
      const labels = mc.trades.fan.step.map((s) => "trade " + s);
      fan(R.categories(document.getElementById("fan-trades"), labels), mc.trades.fan, (k) => k + 1);
    }
  }
})();
