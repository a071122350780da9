// The pattern-match report: the template with the best matches laid over it
// (each scaled to mean 0, deviation 1), the matches, and for a backtest the
// trades on the price, their compounded return, metrics and trade list.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const { mode, result, chart } = R.data();
  const data = result.data;

  if (R.nothing(result)) return;
  const warnings = document.getElementById("warnings");
  for (const w of data.warnings || []) {
    const li = document.createElement("li");
    li.textContent = w;
    warnings.appendChild(li);
  }

  const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
  const zscore = (a) => {
    const m = mean(a);
    const sd = Math.sqrt(a.reduce((s, v) => s + (v - m) * (v - m), 0) / a.length);
    return a.map((v) => (v - m) / sd);
  };
  // 100 x Pearson's correlation of two series of one length.
  const corr = (a, b) => {
    const ma = mean(a), mb = mean(b);
    let sab = 0, saa = 0, sbb = 0;
    for (let i = 0; i < a.length; i++) {
      sab += (a[i] - ma) * (b[i] - mb);
      saa += (a[i] - ma) * (a[i] - ma);
      sbb += (b[i] - mb) * (b[i] - mb);
    }
    return (100 * sab) / Math.sqrt(saa * sbb);
  };

  // The overlay: x is the bar within the window.
  const longest = Math.max(...chart.windows.map((w) => w.close.length), ...Object.keys(chart.templates).map(Number));
  const overlay = R.categories(document.getElementById("overlay"), Array.from({ length: longest }, (_, i) => "bar " + (i + 1)));
  chart.windows.forEach((w, k) => {
    overlay
      .addSeries(LC.LineSeries, { color: R.palette[k % R.palette.length], lineWidth: 1, title: (w.symbol !== chart.symbol ? w.symbol + " " : "") + w.start, lastValueVisible: false, priceLineVisible: false })
      .setData(zscore(w.close).map((v, i) => ({ time: i + 1, value: v })));
  });
  const best = chart.windows.length ? chart.windows[0].close.length : longest;
  const template = chart.templates[best] || Object.values(chart.templates)[0];
  if (template) {
    overlay
      .addSeries(LC.LineSeries, { color: "#1f2328", lineWidth: 4, title: "template", lastValueVisible: false, priceLineVisible: false })
      .setData(zscore(template).map((v, i) => ({ time: i + 1, value: v })));
  }
  overlay.timeScale().fitContent();

  // The matches; those drawn also show the correlation of what was drawn.
  const universe = data.patterns.some((p) => p.Symbol !== undefined);
  const columns = [["#", undefined, (_, i) => i + 1]];
  if (universe) columns.push(["Symbol", "Symbol", (p) => p.Symbol]);
  columns.push(
    ["Start", "StartDate", (p) => p.StartDate],
    ["End", "EndDate", (p) => p.EndDate],
    ["Corr", "Corr", (p) => p.Corr],
    ["Close", "Close", (p) => p.Close],
    ["Bars", "BarsNum", (p) => p.BarsNum],
    ["Corr drawn", "drawn-corr", (_, i) => {
      const w = chart.windows[i];
      const t = w && chart.templates[w.close.length];
      return t ? corr(w.close, t) : null;
    }],
  );
  R.rows("matches", data.patterns, columns);

  if (mode === "backtest") {
    const info = data.backtest_info;
    const trades = info.trades;
    R.metrics("metrics", info, [
      "TOTAL RETURN", "MEDIAN RETURN", "AVERAGE RETURN", "WIN RATE", "AVERAGE WIN", "AVERAGE LOSS",
      "TOTAL TRADES", "TOTAL POSITIVE", "TOTAL NEGATIVE", "BUY & HOLD", "TIME IN MARKET",
    ]);
    R.rows("trades", trades, [
      ["#", undefined, (_, i) => i + 1],
      ["Match from", "trade:StartDate", (t) => t.StartDate],
      ["Entry", "trade:EndDate", (t) => t.EndDate],
      ["Exit", "trade:ExitDate", (t) => t.ExitDate],
      ["Corr", "trade:Correlation Percentage", (t) => t["Correlation Percentage"]],
      ["Entry price", "trade:Close", (t) => t.Close],
      ["Exit price", "trade:ExitPrice", (t) => t.ExitPrice],
      ["Return %", "trade:EachReturn", (t) => t.EachReturn, true],
      ["Max gain %", "trade:MaxGain", (t) => t.MaxGain],
      ["Max loss %", "trade:MaxLoss", (t) => t.MaxLoss],
      ["Market", "trade:MarketCondition", (t) => t.MarketCondition.join(" ")],
    ]);

    const price = R.chart(document.getElementById("price"));
    const closes = price.addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 1, title: chart.symbol });
    closes.setData(chart.time.map((t, i) => ({ time: t, value: chart.close[i] })));
    const markers = [];
    for (const t of trades) {
      const up = t.EachReturn >= 0;
      markers.push({ time: t.EndDate, position: "belowBar", color: "#1a7f37", shape: "arrowUp", text: "in" });
      markers.push({ time: t.ExitDate, position: "aboveBar", color: up ? "#1a7f37" : "#cf222e", shape: "arrowDown", text: (up ? "+" : "") + t.EachReturn.toFixed(1) + "%" });
    }
    markers.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    LC.createSeriesMarkers(closes, markers);
    price.timeScale().fitContent();

    // 100 compounded trade by trade at each exit (a product: its order does
    // not change the end, which is TOTAL RETURN).
    const byExit = trades.map((t) => [t.ExitDate, t.EachReturn]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const points = [];
    let value = 100;
    for (const [day, r] of byExit) {
      value *= 1 + r / 100;
      if (points.length && points[points.length - 1].time === day) points[points.length - 1].value = value;
      else points.push({ time: day, value });
    }
    const equity = R.chart(document.getElementById("equity"));
    equity.addSeries(LC.LineSeries, { color: "#1a7f37", lineWidth: 2, title: "100 compounded" }).setData(points);
    const dd = R.drawdown(points.map((p) => p.value));
    equity
      .addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true }, 1)
      .setData(points.map((p, i) => ({ time: p.time, value: dd[i] })));
    equity.timeScale().fitContent();
    const tr = document.createElement("tr");
    R.th(tr, "Compounded on the chart");
    R.cell(tr, value - 100, "compounded-return", true);
    document.getElementById("metrics").appendChild(tr);
  }
  R.ready();
})();
