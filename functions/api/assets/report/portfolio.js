// The portfolio report: the equity against the benchmark, the drawdown,
// the month-end weights as a stacked area (one band per symbol, drawn as
// SVG with a legend), the metrics and the contributions, all from
// #report-data (the figures, the task's chart, and the metrics' labels and
// units from the results glossary, docs/results.md).
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const data = R.data();
  const { result, chart } = data;

  const number = R.number;

  // The metrics in the glossary's labels and units, as every result page
  // shows them.
  R.figures("metrics", result, data.figures.metrics);
  R.figures("relative", result, data.figures.relative);
  R.rows("contributions", chart.contributions, [
    ["Symbol", "symbol", (c) => c.symbol],
    ["Profit", "profit", (c) => c.profit, true],
    ["Contribution %", "contribution", (c) => c.contribution * 100, true],
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

  // The drawdown is a fraction; drawn in percent.
  const dd = R.chart(document.getElementById("drawdown"));
  dd.addSeries(LC.AreaSeries, { lineColor: "#cf222e", topColor: "rgba(207,34,46,0.05)", bottomColor: "rgba(207,34,46,0.35)", lineWidth: 1, title: "drawdown %", invertFilledArea: true })
    .setData(chart.drawdown.map((v, i) => ({ time: at(i), value: v * 100 })));
  dd.timeScale().fitContent();

  weights(document.getElementById("weights"), chart.weights);
  R.ready();

  // The month-end weights as a stacked area in SVG: band k lies between
  // the sum of the weights under it and that sum plus its own weight, so
  // no band covers another; each band's colour is its legend entry's. The
  // bands carry their symbol, and the SVG its scale (data-base: the y of
  // 0; data-unit: pixels per 1, that is per 100 % of the account).
  function weights(el, w) {
    const NS = "http://www.w3.org/2000/svg";
    const make = (tag, attrs, parent) => {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
      if (parent) parent.appendChild(e);
      return e;
    };
    const width = el.clientWidth, height = el.clientHeight;
    const pad = { left: 48, right: 12, top: 10, bottom: 24 };
    const plotW = width - pad.left - pad.right, plotH = height - pad.top - pad.bottom;
    const n = w.date.length;
    const totals = w.date.map((_, m) => w.weight.reduce((s, series) => s + series[m], 0));
    // Up to 100 % of the account; more when the weights ever sum above it.
    const top = Math.max(1, ...totals);
    const base = pad.top + plotH;
    const unit = plotH / top;
    const x = (m) => pad.left + (n > 1 ? (m / (n - 1)) * plotW : plotW / 2);
    const y = (v) => base - v * unit;
    const px = (v) => v.toFixed(2);
    const svg = make("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Weights at month ends, stacked", "data-base": px(base), "data-unit": px(unit) });
    svg.style.display = "block";
    // Gridlines and the percent axis.
    for (let p = 0; p <= top + 1e-9; p += 0.25) {
      make("line", { x1: pad.left, x2: pad.left + plotW, y1: px(y(p)), y2: px(y(p)), stroke: "#eef1f4" }, svg);
      const label = make("text", { x: pad.left - 6, y: px(y(p) + 4), "text-anchor": "end", "font-size": 11, fill: "#59636e" }, svg);
      label.textContent = Math.round(p * 100) + " %";
    }
    // A year's first month end labelled, every few years when many.
    const years = [];
    w.date.forEach((d, m) => { if (m === 0 || d.slice(0, 4) !== w.date[m - 1].slice(0, 4)) years.push(m); });
    const every = Math.max(1, Math.ceil((years.length * 40) / Math.max(plotW, 1)));
    years.forEach((m, i) => {
      if (i % every) return;
      const t = make("text", { x: px(x(m)), y: height - 6, "text-anchor": "middle", "font-size": 11, fill: "#59636e" }, svg);
      t.textContent = w.date[m].slice(0, 4);
    });
    // Ten colours a reader tells apart (Tableau 10's, its grey swapped for
    // a cyan), and a light grey for the rest together.
    const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf"];
    const colors = w.symbols.map((s, k) => (s === "others" ? "#d0d7de" : palette[k % palette.length]));
    const below = w.date.map(() => 0);
    const bands = make("g", { class: "bands" }, svg);
    w.symbols.forEach((symbol, k) => {
      const upper = below.map((b, m) => b + w.weight[k][m]);
      // The upper edge left to right, then the lower edge back.
      const points = upper.map((v, m) => px(x(m)) + "," + px(y(v)))
        .concat(below.map((v, m) => px(x(m)) + "," + px(y(v))).reverse());
      const band = make("polygon", { points: points.join(" "), fill: colors[k], stroke: "#ffffff", "stroke-width": 0.5, "data-symbol": symbol }, bands);
      make("title", {}, band).textContent = symbol;
      upper.forEach((v, m) => { below[m] = v; });
    });
    make("line", { x1: pad.left, x2: pad.left + plotW, y1: px(base), y2: px(base), stroke: "#d1d9e0" }, svg);
    const cursor = make("line", { y1: pad.top, y2: base, stroke: "#1f2328", "stroke-dasharray": "3 3", visibility: "hidden" }, svg);
    el.appendChild(svg);

    // The legend, top of the stack first (as the bands lie).
    const legend = document.getElementById("weights-legend");
    for (let k = w.symbols.length - 1; k >= 0; k--) {
      const li = document.createElement("li");
      li.dataset.symbol = w.symbols[k];
      li.dataset.color = colors[k];
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = colors[k];
      li.appendChild(swatch);
      li.appendChild(document.createTextNode(w.symbols[k]));
      legend.appendChild(li);
    }

    // Pointing at a month end reads its weights.
    const readout = document.getElementById("weights-at");
    svg.addEventListener("mousemove", (e) => {
      if (n === 0) return;
      const box = svg.getBoundingClientRect();
      const m = Math.min(n - 1, Math.max(0, Math.round(((e.clientX - box.left - pad.left) / Math.max(plotW, 1)) * (n - 1))));
      cursor.setAttribute("x1", px(x(m)));
      cursor.setAttribute("x2", px(x(m)));
      cursor.setAttribute("visibility", "visible");
      const held = w.symbols
        .map((s, k) => [s, w.weight[k][m]])
        .filter(([, v]) => v > 0)
        .map(([s, v]) => s + " " + number(v * 100, 1) + " %");
      readout.textContent = w.date[m] + ": " + (held.length ? held.join(", ") : "all cash") + "; cash " + number(Math.max(0, 1 - totals[m]) * 100, 1) + " %";
    });
    svg.addEventListener("mouseleave", () => cursor.setAttribute("visibility", "hidden"));
  }
})();
