// The backtest report: metrics and trades from the task's result, charts
// from the replayed run (both inlined in #report-data by the server).
(function () {
  "use strict";
  const started = performance.now();
  const errors = document.getElementById("errors");
  function fail(message) {
    errors.hidden = false;
    errors.textContent += message + "\n";
  }
  window.addEventListener("error", (e) => fail(String(e.message)));
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const result = data.result;
  const chart = data.chart;
  const fmt = (v) =>
    typeof v !== "number"
      ? String(v)
      : Number.isInteger(v)
        ? v.toLocaleString("en-US")
        : v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  function cell(row, value, key) {
    const td = document.createElement("td");
    td.textContent = fmt(value);
    if (key !== undefined) {
      td.dataset.key = key;
      td.dataset.value = JSON.stringify(value);
    }
    if (key !== undefined && typeof value === "number" && value !== 0) td.className = value > 0 ? "pos" : "neg";
    row.appendChild(td);
    return td;
  }

  const metrics = [
    "Total Return (%)", "CAGR", "Sharpe Ratio", "Max Drawdown", "DrawDown Period",
    "Win Rate", "Average Win %", "Average Loss %", "Total Trades", "Total Positive",
    "Total Negative", "Time in Market", "BuyHoldGain", "Benchmark Return (%)",
    "Initial Capital", "Final Capital",
  ];
  const table = document.getElementById("metrics");
  for (const key of metrics) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.textContent = key;
    tr.appendChild(th);
    cell(tr, result[key], key);
    table.appendChild(tr);
  }

  const trades = document.getElementById("trades");
  result["EntryDate"].forEach((entry, i) => {
    const tr = document.createElement("tr");
    tr.dataset.trade = String(i);
    cell(tr, i + 1);
    cell(tr, entry, "EntryDate");
    cell(tr, result["ExitDate"][i], "ExitDate");
    cell(tr, result["Each Return"][i], "Each Return");
    cell(tr, result["Exit Reason"][i], "Exit Reason");
    trades.appendChild(tr);
  });

  const LC = window.LightweightCharts;
  const time = (t) => (t.length > 10 ? Date.parse(t + "Z") / 1000 : t);
  // Sized from the container now, so fitContent sees the whole width.
  const options = (el) => ({
    width: el.clientWidth,
    height: el.clientHeight,
    layout: { background: { color: "#ffffff" }, textColor: "#1f2328" },
    grid: { vertLines: { color: "#eef1f4" }, horzLines: { color: "#eef1f4" } },
    // Thirty years of daily bars fit the width: below the default 0.5 px a bar.
    timeScale: { borderColor: "#d1d9e0", minBarSpacing: 0.01 },
    rightPriceScale: { borderColor: "#d1d9e0" },
  });

  const priceEl = document.getElementById("price");
  const price = LC.createChart(priceEl, options(priceEl));
  const closes = price.addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 1, title: chart.symbol });
  closes.setData(chart.time.map((t, i) => ({ time: time(t), value: chart.close[i] })));
  const markers = [];
  for (const t of chart.trades) {
    markers.push({ time: time(t.entry_time), position: "belowBar", color: "#1a7f37", shape: "arrowUp", text: "buy" });
    markers.push({ time: time(t.exit_time), position: "aboveBar", color: "#cf222e", shape: "arrowDown", text: (t.return_pct >= 0 ? "+" : "") + t.return_pct.toFixed(1) + "%" });
  }
  markers.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  LC.createSeriesMarkers(closes, markers);
  price.timeScale().fitContent();

  const equityEl = document.getElementById("equity");
  const equity = LC.createChart(equityEl, options(equityEl));
  equity
    .addSeries(LC.LineSeries, { color: "#1a7f37", lineWidth: 2, title: "equity" })
    .setData(chart.time.map((t, i) => ({ time: time(t), value: chart.equity[i] })));
  equity
    .addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true }, 1)
    .setData(chart.time.map((t, i) => ({ time: time(t), value: chart.drawdown[i] })));
  equity.timeScale().fitContent();

  document.getElementById("points").textContent = chart.time.length.toLocaleString("en-US");
  requestAnimationFrame(() => {
    document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
    document.body.dataset.ready = "true";
  });
})();
