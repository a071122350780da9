// What every report page shares: error reporting, number formatting, cells
// that carry their value for checks (data-key, data-value), chart set-up,
// the API's JSON, and the ready flag a test waits for.
(function () {
  "use strict";
  const started = performance.now();
  const errors = document.getElementById("errors");

  function fail(message) {
    errors.hidden = false;
    errors.textContent += message + "\n";
  }
  window.addEventListener("error", (e) => fail(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => fail(String(e.reason && e.reason.message ? e.reason.message : e.reason)));

  const fmt = (v) =>
    v === null || v === undefined
      ? "–"
      : typeof v !== "number"
        ? String(v)
        : Number.isInteger(v)
          ? v.toLocaleString("en-US")
          : v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  // A cell showing `value`; with a key it also carries the exact value.
  function cell(row, value, key, signed) {
    const td = document.createElement("td");
    td.textContent = fmt(value);
    if (key !== undefined) {
      td.dataset.key = key;
      td.dataset.value = JSON.stringify(value === undefined ? null : value);
    }
    if (signed && typeof value === "number" && value !== 0) td.className = value > 0 ? "pos" : "neg";
    row.appendChild(td);
    return td;
  }

  const number = (v, digits) => v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

  // A value in the results glossary's unit (the JSON's over its scale) as
  // text: a fraction as a percent ("3.30 %"), counts whole.
  function inUnit(v, unit, scale) {
    if (typeof v !== "number") return fmt(v);
    const x = v / (scale || 1);
    switch (unit) {
      case "fraction": return number(x * 100, 2) + " %";
      case "count":
      case "sessions": return number(x, 0);
      default: return number(x, 2);
    }
  }

  // A cell of metric `m` of the glossary ({name, label, unit, field,
  // scale}: a page's data, from the server's `report::figures`): the value
  // `v` as the JSON has it, shown in the glossary's unit, keyed `key` (the
  // metric's field by default; data-value: the JSON's exact value),
  // coloured by the sign of the glossary's value.
  function metricCell(row, v, m, key) {
    const td = cell(row, v, key === undefined ? m.field : key);
    td.textContent = inUnit(v, m.unit, m.scale);
    td.dataset.unit = m.unit;
    const x = typeof v === "number" ? v / (m.scale || 1) : 0;
    if ((m.unit === "fraction" || m.unit === "ratio") && x !== 0) td.className = x > 0 ? "pos" : "neg";
    return td;
  }

  // The value at `field` of `object`: a key of its own (the scanner's
  // `STD.DEV`) or a dotted path (`relative.alpha`).
  const at = (object, field) =>
    object !== null && typeof object === "object" && field in object
      ? object[field]
      : field.split(".").reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), object);

  // A two-column table of the glossary's metrics `rows` read from `object`:
  // each row carries the metric's name (data-name), its label (the name as
  // the heading's title), then its value in the glossary's unit.
  function figures(id, object, rows) {
    const table = document.getElementById(id);
    for (const m of rows) {
      const tr = document.createElement("tr");
      tr.dataset.name = m.name;
      th(tr, m.label).title = m.name;
      metricCell(tr, at(object, m.field), m);
      table.appendChild(tr);
    }
  }

  function th(row, text) {
    const h = document.createElement("th");
    h.textContent = text;
    row.appendChild(h);
    return h;
  }

  // A two-column table of `keys` of `object`, each value keyed `prefix + key`.
  function metrics(id, object, keys, prefix) {
    const table = document.getElementById(id);
    for (const key of keys) {
      const tr = document.createElement("tr");
      th(tr, key);
      cell(tr, object[key], (prefix || "") + key, true);
      table.appendChild(tr);
    }
  }

  // Each of `notes` (why a figure is missing) as a line under `id`.
  function notes(id, lines) {
    const el = document.getElementById(id);
    for (const line of lines) {
      const p = document.createElement("p");
      p.className = "sub";
      p.textContent = line;
      el.appendChild(p);
    }
  }

  // A table body of rows: columns are [heading, key, value-of-row, signed,
  // metric]; a column with a glossary metric shows its values in its unit.
  function rows(id, items, columns) {
    const table = document.getElementById(id);
    const head = document.createElement("tr");
    for (const c of columns) th(head, c[0]);
    const thead = document.createElement("thead");
    thead.appendChild(head);
    table.appendChild(thead);
    const body = document.createElement("tbody");
    items.forEach((item, i) => {
      const tr = document.createElement("tr");
      for (const c of columns) {
        if (c[4]) metricCell(tr, c[2](item, i), c[4], c[1]);
        else cell(tr, c[2](item, i), c[1], c[3]);
      }
      body.appendChild(tr);
    });
    table.appendChild(body);
  }

  const time = (t) => (t.length > 10 ? Date.parse(t.slice(0, 19) + "Z") / 1000 : t.slice(0, 10));

  // Sized from the container now, so fitContent sees the whole width.
  function chart(el, extra) {
    const options = {
      width: el.clientWidth,
      height: el.clientHeight,
      layout: { background: { color: "#ffffff" }, textColor: "#1f2328" },
      grid: { vertLines: { color: "#eef1f4" }, horzLines: { color: "#eef1f4" } },
      // Thirty years of daily bars fit the width: below the default 0.5 px a bar.
      timeScale: { borderColor: "#d1d9e0", minBarSpacing: 0.01 },
      rightPriceScale: { borderColor: "#d1d9e0" },
    };
    return LightweightCharts.createChart(el, Object.assign(options, extra || {}));
  }

  // A chart whose x axis is `labels` (months, weekdays, offsets): point i sits
  // at the time i + 1 and is labelled labels[i].
  function categories(el, labels) {
    const label = (t) => labels[t - 1] === undefined ? "" : String(labels[t - 1]);
    return chart(el, {
      localization: { timeFormatter: label },
      timeScale: { borderColor: "#d1d9e0", tickMarkFormatter: label, fixLeftEdge: true, fixRightEdge: true },
    });
  }

  // Percent below the running peak (0 or negative), the peak starting at
  // `start` when given.
  function drawdown(values, start) {
    let peak = start === undefined || start === null ? -Infinity : start;
    return values.map((v) => {
      peak = Math.max(peak, v);
      return (v / peak - 1) * 100;
    });
  }

  const palette = ["#2962ff", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#0969da", "#bf3989", "#57606a", "#fb8500", "#116329"];

  // The API's answer to a request from the page (the browser sends the
  // page's credentials); an answer that is not 2xx, or an envelope that
  // reports an error (other than the `codes` the caller handles), is thrown
  // with its message.
  async function api(path, body, codes) {
    const init = body === undefined
      ? { credentials: "same-origin" }
      : { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
    // From the origin: a page opened as http://user:password@host/ would
    // otherwise resolve a relative path to a URL with credentials, which
    // fetch refuses; the browser sends the page's credentials itself.
    const r = await fetch(location.origin + path, init);
    const json = await r.json().catch(() => null);
    if (!r.ok || json === null) throw new Error(path.split("?")[0] + ": " + (json && (json.msg || json.message || json.error) || r.status));
    if (json.code !== undefined && json.code >= 400 && !(codes || []).includes(json.code)) throw new Error(path.split("?")[0] + ": " + json.msg);
    return json;
  }

  // A Monte Carlo answer: the bands of both methods as a table in
  // #monte-carlo (each cell keyed `method.figure.percentile`, the run's own
  // figures `actual.figure`), notes in #monte-carlo-notes and each method's
  // fan of equity paths in #fan-returns and #fan-trades; `run` (its time
  // and equity) is drawn over the returns' fan when given. CAGR and drawdown
  // are fractions in the answer, shown in percent; a cell's data-value keeps
  // the answer's number.
  function monteCarlo(mc, run) {
    const LC = window.LightweightCharts;
    if (mc.error) {
      notes("monte-carlo-notes", [mc.error]);
      return;
    }
    notes("monte-carlo-notes", mc.notes);
    const figures = [["cagr", "CAGR %"], ["max_drawdown", "Max Drawdown %"], ["final_equity", "Final equity"]];
    const figure = (tr, v, key, f) => {
      const td = cell(tr, v, key, f !== "final_equity");
      if (f !== "final_equity" && typeof v === "number") td.textContent = fmt(v * 100);
      td.dataset.unit = f === "final_equity" ? "money" : "fraction";
    };
    const methods = [["trades", "Trades"], ["returns", "Bar returns, blocks of " + mc.block]];
    const table = document.getElementById("monte-carlo");
    const head = document.createElement("tr");
    for (const h of ["Drawn", "Figure"].concat(mc.percentiles.map((p) => "P" + p), ["This run"])) th(head, h);
    table.appendChild(head);
    for (const [m, label] of methods) {
      if (!mc[m]) continue;
      for (const [f, name] of figures) {
        const tr = document.createElement("tr");
        cell(tr, label);
        cell(tr, name);
        mc[m][f].forEach((v, i) => figure(tr, v, m + "." + f + "." + mc.percentiles[i], f));
        figure(tr, mc.actual[f], "actual." + f, f);
        table.appendChild(tr);
      }
      const tr = document.createElement("tr");
      cell(tr, label);
      cell(tr, "Paths ending below the capital");
      const td = cell(tr, (mc[m].probability_of_loss * 100).toFixed(1) + "%", m + ".probability_of_loss");
      td.dataset.value = JSON.stringify(mc[m].probability_of_loss);
      td.colSpan = mc.percentiles.length + 1;
      table.appendChild(tr);
    }
    const colors = ["#cf222e", "#9a6700", "#1a7f37", "#9a6700", "#cf222e"];
    const fan = (el, f, at) => {
      f.equity.forEach((band, j) => {
        el.addSeries(LC.LineSeries, { color: colors[j % colors.length], lineWidth: j === 2 ? 2 : 1, title: "P" + mc.percentiles[j], lastValueVisible: false, priceLineVisible: false })
          .setData(band.map((v, k) => ({ time: at(k), value: v })));
      });
      el.timeScale().fitContent();
    };
    if (mc.returns) {
      const el = chart(document.getElementById("fan-returns"));
      fan(el, mc.returns.fan, (k) => time(mc.returns.fan.time[k]));
      if (run) {
        el.addSeries(LC.LineSeries, { color: "#2962ff", lineWidth: 2, title: "this run", lastValueVisible: false, priceLineVisible: false })
          .setData(run.time.map((t, i) => ({ time: time(t), value: run.equity[i] })));
      }
    }
    if (mc.trades) {
      const labels = mc.trades.fan.step.map((s) => "trade " + s);
      fan(categories(document.getElementById("fan-trades"), labels), mc.trades.fan, (k) => k + 1);
    }
  }

  function data() {
    return JSON.parse(document.getElementById("report-data").textContent);
  }

  // A task answer without data (code 407: nothing matched or traded): its
  // message in #nothing, the page ready; true when so.
  function nothing(result) {
    if (result.data) return false;
    const el = document.getElementById("nothing");
    el.hidden = false;
    el.textContent = result.msg;
    ready();
    return true;
  }

  // Set at once, not in an animation frame: a headless browser whose
  // virtual-time budget ran out dumps the page before a frame that a loaded
  // machine has not drawn yet. Everything the page shows is in the DOM now.
  function ready() {
    document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
    document.body.dataset.ready = "true";
  }

  window.Report = { fail, fmt, number, inUnit, metricCell, figures, cell, th, metrics, notes, rows, time, chart, categories, drawdown, palette, api, monteCarlo, data, nothing, ready };
})();
