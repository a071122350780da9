// The seasonality view: GET /seasonality (the all-in-one form) with the
// page's own query, drawn as bars by month and weekday, the profile around
// a holiday and the one-dollar curve of each year.
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const q = new URLSearchParams(location.search);
  q.set("features", "performance-by-month,performance-by-week,performance-around-holiday,one-dollar-curve");
  const color = (v) => (v >= 0 ? "#1a7f37" : "#cf222e");

  // Bars over labelled categories, and the table of the same rows.
  function bars(id, rows, label, key, heading) {
    const labels = rows.map((r) => String(r[label]));
    const chart = R.categories(document.getElementById(id), labels);
    chart
      .addSeries(LC.HistogramSeries, { title: "mean return %", priceLineVisible: false })
      .setData(rows.map((r, i) => ({ time: i + 1, value: r.Mean_Return, color: color(r.Mean_Return) })));
    chart.timeScale().fitContent();
    R.rows(id + "-table", rows, [
      [heading, label, (r) => r[label]],
      ["Mean return %", key + ":Mean_Return", (r) => r.Mean_Return, true],
      ["Positive %", key + ":Positive_Pct", (r) => r.Positive_Pct],
    ]);
  }

  R.api("/seasonality?" + q.toString()).then((answer) => {
    const d = answer.data;
    bars("months", d["performance-by-month"].data, "MonthName", "month", "Month");
    bars("weeks", d["performance-by-week"].data, "Weekday", "week", "Weekday");

    const h = d["performance-around-holiday"].data;
    document.getElementById("holiday-name").textContent = h.holiday_name + " (±" + h.shift + " sessions)";
    h.data.forEach((r) => (r.Offset = (r.DayOffset > 0 ? "+" : "") + r.DayOffset));
    bars("holiday", h.data, "Offset", "holiday", "Sessions from the day");

    const c = d["one-dollar-curve"].data;
    document.getElementById("entry").textContent = String(c.entry_trading_day);
    document.getElementById("holding").textContent = String(c.holding_days);
    const curve = R.chart(document.getElementById("curve"));
    curve
      .addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 2, title: "$1" })
      .setData(c.data.map((p) => ({ time: p.Date, value: p.Equity })));
    curve.timeScale().fitContent();
    const last = c.data.length ? c.data[c.data.length - 1] : null;
    const years = document.getElementById("years");
    years.textContent = c.data.length ? "one dollar grew to " : "";
    const value = document.createElement("span");
    value.dataset.key = "curve:last";
    value.dataset.value = JSON.stringify(last ? last.Equity : null);
    value.textContent = last ? "$" + R.fmt(last.Equity) + " by " + last.Date : "";
    years.appendChild(value);
    R.ready();
  }).catch((e) => R.fail(e.message));
})();
