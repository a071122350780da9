// The correlation view: POST /symbol_corr, /symbol_beta and /asset_corr with
// the page's request, drawn as heat maps (the matrices) and lines (each
// comparison's rolling correlation and beta against the benchmark).
(function () {
  "use strict";
  const R = window.Report;
  const LC = window.LightweightCharts;
  const request = R.data();
  const body = {
    benchmark: request.benchmark,
    stock_comparison: request.stock_comparison,
    start_date: request.start_date,
    end_date: request.end_date,
  };
  if (request.roll_window !== null) body.roll_window = request.roll_window;

  // Red for -1, white for 0, blue for +1.
  function heat(v) {
    if (typeof v !== "number") return "#f6f8fa";
    const a = Math.min(1, Math.abs(v));
    const [r, g, b] = v >= 0 ? [41, 98, 255] : [207, 34, 46];
    const mix = (c) => Math.round(255 + (c - 255) * a);
    return "rgb(" + mix(r) + "," + mix(g) + "," + mix(b) + ")";
  }

  // A matrix answer (rows of {index, <symbol>: value}) as a heat map whose
  // cells carry "<row>/<column>" and the value.
  function matrix(id, rows, prefix) {
    const table = document.getElementById(id);
    const names = rows.map((r) => r.index);
    const head = document.createElement("tr");
    R.th(head, "");
    for (const n of names) R.th(head, n);
    table.appendChild(head);
    for (const r of rows) {
      const tr = document.createElement("tr");
      R.th(tr, r.index);
      for (const n of names) {
        const td = R.cell(tr, r[n], prefix + r.index + "/" + n);
        td.style.background = heat(r[n]);
        td.style.color = typeof r[n] === "number" && Math.abs(r[n]) > 0.6 ? "#ffffff" : "#1f2328";
      }
      table.appendChild(tr);
    }
  }

  // Rolling rows (Date, one member per comparison) as lines; the last value
  // of each is also shown, keyed "<prefix><symbol>".
  function lines(id, rows, prefix) {
    const chart = R.chart(document.getElementById(id));
    const legend = document.createElement("p");
    legend.className = "sub";
    request.stock_comparison.forEach((symbol, k) => {
      const points = rows
        .filter((r) => typeof r[symbol] === "number")
        .map((r) => ({ time: r.Date.slice(0, 10), value: r[symbol] }));
      chart.addSeries(LC.LineSeries, { color: R.palette[k % R.palette.length], lineWidth: 1, title: symbol }).setData(points);
      const span = document.createElement("span");
      span.dataset.key = prefix + symbol;
      span.dataset.value = JSON.stringify(points.length ? points[points.length - 1].value : null);
      span.dataset.points = String(points.length);
      span.textContent = symbol + " last " + R.fmt(points.length ? points[points.length - 1].value : null) + "  ";
      legend.appendChild(span);
    });
    chart.timeScale().fitContent();
    document.getElementById(id).after(legend);
  }

  // 411 (too few sessions for an answer) is shown where the chart would be.
  function insufficient(answer, note) {
    if (answer.code === 211) return false;
    const el = document.getElementById(note);
    el.hidden = false;
    el.textContent = answer.msg;
    return true;
  }

  Promise.all([
    R.api("/symbol_corr", body, [411]),
    R.api("/symbol_beta", body, [411]),
    R.api("/asset_corr", { start_date: body.start_date, end_date: body.end_date }, [411]),
  ]).then(([corr, beta, assets]) => {
    if (!insufficient(corr, "matrix-note")) {
      matrix("matrix", corr.data.corr_matrix, "corr:");
      lines("rolling", corr.data.corr_roll, "rolling:");
    }
    if (!insufficient(beta, "matrix-note")) lines("beta", beta.data.beta_roll, "beta:");
    if (!insufficient(assets, "assets-note")) matrix("assets", assets.data.corr_info, "asset:");
    R.ready();
  }).catch((e) => R.fail(e.message));
})();
