// The scanner backtest report: the portfolio's daily equity (the task's own)
// with each entry and exit marked, drawdown and cash, one traded symbol's
// price with its trades (chosen in the heading), the metrics (in the results
// glossary's labels and units, docs/results.md) and the trades.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { result, prices, capital, figures } = R.data();
  const data = result.data;

  if (R.nothing(result)) return;
  const a = data.result;
  const n = a["Symbol"].length;
  const trades = Array.from({ length: n }, (_, i) => i);
  const byTime = (x, y) => (x.time < y.time ? -1 : x.time > y.time ? 1 : 0);

  R.figures("metrics", data, figures.metrics);
  R.figures("relative", data, figures.relative);
  R.rows("trades", trades, [
    ["#", undefined, (i) => i + 1],
    ["Entry", "Start Date", (i) => a["Start Date"][i]],
    ["Exit", "Exit Date", (i) => a["Exit Date"][i]],
    ["Symbol", "Symbol", (i) => a["Symbol"][i]],
    ["Signal", "Signal", (i) => a["Signal"][i]],
    ["Direction", "Direction", (i) => a["Direction"][i]],
    ["Shares", "Shares", (i) => a["Shares"][i]],
    ["Entry price", "Price", (i) => a["Price"][i]],
    ["Exit or last", "Close", (i) => a["Close"][i]],
    ["Profit", "FloatProfit", (i) => a["FloatProfit"][i], true],
    ["Status", "OrderStatus", (i) => a["OrderStatus"][i]],
  ]);

  const equity = R.chart(document.getElementById("equity"));
  const line = equity.addSeries(LC.LineSeries, { color: "#1a7f37", lineWidth: 2, title: "equity" });
  line.setData(data.dates.map((d, i) => ({ time: d, value: data.equity[i] })));
  const marks = [];
  for (const i of trades) {
    const long = a["Direction"][i] === "Long";
    marks.push({ time: a["Start Date"][i], position: long ? "belowBar" : "aboveBar", color: long ? "#1a7f37" : "#cf222e", shape: long ? "arrowUp" : "arrowDown", text: a["Symbol"][i] });
    if (a["Exit Date"][i]) marks.push({ time: a["Exit Date"][i], position: "inBar", color: "#57606a", shape: "circle", size: 0.5 });
  }
  LC.createSeriesMarkers(line, marks.sort(byTime));
  equity.timeScale().fitContent();

  const lower = R.chart(document.getElementById("drawdown"));
  const dd = R.drawdown(data.equity, capital);
  lower
    .addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true })
    .setData(data.dates.map((d, i) => ({ time: d, value: dd[i] })));
  lower
    .addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 1, title: "cash" }, 1)
    .setData(data.dates.map((d, i) => ({ time: d, value: data.cash[i] })));
  lower.timeScale().fitContent();
  // The drawn drawdown's deepest, a fraction as Max Drawdown is.
  const tr = document.createElement("tr");
  R.th(tr, "Deepest drawdown on the chart");
  R.metricCell(tr, Math.min(0, ...dd) / 100, { unit: "fraction", scale: 1 }, "drawn-max-drawdown");
  document.getElementById("metrics").appendChild(tr);

  // One symbol at a time: the most traded first.
  const select = document.getElementById("symbol");
  const symbols = Object.keys(prices).sort((x, y) => {
    const count = (s) => a["Symbol"].filter((v) => v === s).length;
    return count(y) - count(x) || (x < y ? -1 : 1);
  });
  for (const s of symbols) {
    const o = document.createElement("option");
    o.value = s;
    o.textContent = s;
    select.appendChild(o);
  }
  const price = R.chart(document.getElementById("price"));
  let series = null;
  function show(symbol) {
    if (series) price.removeSeries(series);
    const p = prices[symbol];
    series = price.addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 1, title: symbol });
    series.setData(p.time.map((t, i) => ({ time: t, value: p.close[i] })));
    const m = [];
    for (const i of trades.filter((i) => a["Symbol"][i] === symbol)) {
      const long = a["Direction"][i] === "Long";
      m.push({ time: a["Start Date"][i], position: long ? "belowBar" : "aboveBar", color: "#1a7f37", shape: long ? "arrowUp" : "arrowDown", text: long ? "buy" : "short" });
      if (a["Exit Date"][i]) m.push({ time: a["Exit Date"][i], position: long ? "aboveBar" : "belowBar", color: a["FloatProfit"][i] >= 0 ? "#1a7f37" : "#cf222e", shape: long ? "arrowDown" : "arrowUp", text: a["OrderStatus"][i] });
    }
    LC.createSeriesMarkers(series, m.sort(byTime));
    select.dataset.markers = String(m.length);
    price.timeScale().fitContent();
  }
  if (symbols.length) show(symbols[0]);
  select.addEventListener("change", () => show(select.value));
  R.ready();
})();
