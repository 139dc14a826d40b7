// servebench HTML report: draws the embedded data (#sb-data) with uPlot.
// Every chart is registered in window.sbCharts and its container carries
// data-points (the values drawn), so that a test can see what was drawn.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sb-data").textContent);
  var root = document.getElementById("report");
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  var dashes = { p50: [], p95: [6, 4], p99: [2, 3] };
  var multi = data.runs.length > 1;
  window.sbCharts = [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function fmt(v, prec) { return v === null || v === undefined || !isFinite(v) ? "-" : Number(v).toFixed(prec); }
  function runColor(i) { return palette[i % palette.length]; }
  function prefix(run) { return multi ? run.name + " · " : ""; }

  function table(parent, columns, rows) {
    var t = add(parent, el("table"));
    if (columns && columns.length) {
      var tr = add(add(t, el("thead")), el("tr"));
      columns.forEach(function (c) { add(tr, el("th", null, c)); });
    }
    var tb = add(t, el("tbody"));
    rows.forEach(function (r) {
      var tr = add(tb, el("tr"));
      r.forEach(function (c) { add(tr, el("td", null, c)); });
    });
    return t;
  }

  // --- the verdict first ---
  function verdicts() {
    var judged = data.runs.filter(function (r) { return r.verdict; });
    if (!judged.length) return;
    var sec = add(root, el("section", "verdicts"));
    add(sec, el("h2", null, "Verdict"));
    var row = add(sec, el("div", "side"));
    judged.forEach(function (r) {
      var v = r.verdict;
      var card = add(row, el("div", "card " + (v.holds ? "pass" : (v.inconclusive ? "inconclusive" : "fail"))));
      if (multi) add(card, el("h3", null, r.name));
      add(card, el("p", "headline", (v.holds ? "HOLDS" : (v.failing ? "FAILING" : (v.inconclusive ? "INCONCLUSIVE" : "NOT MET"))) + " · objective " + v.objective + " at " + v.target_load));
      // the reason an inconclusive verdict cannot conclude, next to it
      if (v.inconclusive) add(card, el("p", "why", v.reasons.join("; ")));
      if (v.text) add(card, el("p", null, v.text));
      var rows = [["capacity", v.capacity], ["fails at", v.fails_at || "-"], ["saturation", v.saturation],
        ["binding SLO", v.binding.length ? v.binding.join("; ") : "-"], ["SLOs", v.slos.join("; ") || "-"]];
      table(card, null, rows);
      if (v.workloads.length) {
        add(card, el("h4", null, "By workload"));
        table(card, ["workload", "holds", "capacity", "fails at", "saturation", "binding SLO"], v.workloads.map(function (w) {
          return [w.workload, w.holds ? "yes" : (w.inconclusive ? "inconclusive" : "no"), w.capacity, w.fails_at || "-", w.saturation, w.binding.join("; ") || "-"];
        }));
      }
      if (v.reasons.length) {
        var ul = add(card, el("ul"));
        v.reasons.forEach(function (x) { add(ul, el("li", null, x)); });
      }
    });
  }

  function extraTables() {
    data.tables.forEach(function (t) {
      var sec = add(root, el("section", "extra"));
      add(sec, el("h2", null, t.title));
      table(sec, t.columns, t.rows);
      (t.notes || []).forEach(function (n) { add(sec, el("p", "note", n)); });
    });
  }

  // frontierSection draws a sweep's Pareto chart: per-user decode speed
  // against aggregate throughput, one colour per configuration (p50 solid
  // points, p95 hollow), the frontiers drawn through their points.
  function frontierSection() {
    var f = data.frontier;
    if (!f) return;
    var sec = add(root, el("section", "frontier"));
    add(sec, el("h2", null, "Pareto frontier: per-user speed against throughput"));
    var tabs = [], ser = [];
    f.configs.forEach(function (c, i) {
      var pts = c.points.slice().sort(function (a, b) { return a.x - b.x; });
      if (!pts.length) return;
      tabs.push([pts.map(function (p) { return p.x; }), pts.map(function (p) { return p.p50; }), pts.map(function (p) { return p.p95; })]);
      ser.push(line(c.name + " speed p50", runColor(i), [], { width: 0, points: { show: true, size: 8 } }));
      ser.push(line(c.name + " speed p95", runColor(i), [], { width: 0, points: { show: true, size: 8, fill: "#fff" } }));
    });
    [["p50", "frontier (speed p50)", []], ["p95", "frontier (speed p95)", [6, 4]]].forEach(function (k) {
      var pts = f.frontier[k[0]] || [];
      if (!pts.length) return;
      tabs.push([pts.map(function (p) { return p[0]; }), pts.map(function (p) { return p[1]; })]);
      ser.push(line(k[1], "#222", k[2], { points: { show: false } }));
    });
    if (!tabs.length) return;
    chart(sec, "Decode speed per user against " + f.x_label, align(tabs), ser,
      { xLabel: f.x_label, yLabel: "tok/s per user", yRange: [0, null], height: 340 });
  }

  // --- charts ---
  function countPoints(d) {
    var n = 0;
    for (var s = 1; s < d.length; s++) for (var i = 0; i < d[s].length; i++) if (d[s][i] !== null && d[s][i] !== undefined) n++;
    return n;
  }

  // marks are drawn over a chart: vertical lines at x (saturation, point
  // spans) and horizontal ones at y on a scale (SLOs).
  function marksPlugin(marks) {
    return { hooks: { draw: [function (u) {
      var ctx = u.ctx;
      ctx.save();
      marks.forEach(function (m) {
        ctx.strokeStyle = m.color || "#555";
        ctx.fillStyle = m.color || "#555";
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.font = (11 * devicePixelRatio) + "px sans-serif";
        ctx.beginPath();
        if (m.x !== undefined) {
          var x = u.valToPos(m.x, "x", true);
          ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.fillText(m.label, x + 4 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
        } else {
          var y = u.valToPos(m.y, m.scale || "y", true);
          if (y < u.bbox.top || y > u.bbox.top + u.bbox.height) { ctx.restore(); ctx.save(); return; }
          ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y);
          ctx.stroke();
          ctx.fillText(m.label, u.bbox.left + u.bbox.width - ctx.measureText(m.label).width - 4 * devicePixelRatio, y - 4 * devicePixelRatio);
        }
      });
      ctx.restore();
    }] } };
  }

  function chart(parent, title, d, series, opts) {
    opts = opts || {};
    var box = add(parent, el("div", "chart"));
    add(box, el("h4", null, title));
    var n = countPoints(d);
    box.dataset.title = title;
    box.dataset.points = String(n);
    if (!n) { add(box, el("p", "empty", "nothing measured")); return; }
    var width = Math.max(320, Math.min(parent.clientWidth || 560, 560) - 8);
    // an SLO line stays in view: the scale reaches past its value
    function reach(scale, from0) {
      var vals = (opts.marks || []).filter(function (m) { return m.y !== undefined && (m.scale || "y") === scale; })
        .map(function (m) { return m.y; });
      if (!vals.length) return from0 ? { range: [0, null] } : {};
      var top = Math.max.apply(null, vals);
      return { range: function (u, min, max) { return [from0 ? 0 : min, Math.max(max, top * 1.1)]; } };
    }
    var ys = opts.yRange && opts.yRange[1] !== null ? { range: opts.yRange } : reach("y", !!opts.yRange);
    var scales = { x: opts.x || { time: false }, y: ys };
    if (opts.y2) scales.y2 = reach("y2", false);
    var axes = [{ label: opts.xLabel || "" }, { label: opts.yLabel || "", size: 60 }];
    if (opts.y2) axes.push({ scale: "y2", side: 1, label: opts.y2, grid: { show: false }, size: 60 });
    var u = new uPlot({
      width: width, height: opts.height || 260, scales: scales, axes: axes,
      series: [{ label: opts.xLabel || "x" }].concat(series),
      plugins: opts.marks && opts.marks.length ? [marksPlugin(opts.marks)] : [],
      cursor: { drag: { x: true, y: false } }, legend: { live: true }
    }, d, box);
    window.sbCharts.push({ title: title, points: n, chart: u });
  }

  function logX(xs) {
    var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
    return lo > 0 && hi / lo >= 8 ? { time: false, distr: 3, log: 2 } : { time: false };
  }

  // align joins per-run tables of [x, y1, y2, ...] on a common x.
  function align(tables) {
    if (tables.length === 1) return tables[0];
    return uPlot.join(tables);
  }

  function line(label, color, dash, extra) {
    var s = { label: label, stroke: color, width: 2, dash: dash || [], spanGaps: true, points: { show: true, size: 6 } };
    for (var k in extra || {}) s[k] = extra[k];
    return s;
  }

  // groups collects each workload's points over all runs.
  function groups() {
    var byW = {}, order = [];
    data.runs.forEach(function (r, ri) {
      r.groups.forEach(function (g) {
        if (!byW[g.workload]) { byW[g.workload] = []; order.push(g.workload); }
        byW[g.workload].push({ run: r, ri: ri, g: g });
      });
    });
    return order.map(function (w) { return { workload: w, members: byW[w] }; });
  }

  function loadCharts(parent, grp) {
    var m = grp.members;
    var axis = m[0].g.axis;
    var allX = [];
    m.forEach(function (e) { e.g.points.forEach(function (p) { allX.push(p.x); }); });
    var xopt = logX(allX);
    var sat = [], slos = [];
    m.forEach(function (e) {
      if (e.g.saturation !== null) sat.push({ x: e.g.saturation, label: prefix(e.run) + "saturation " + e.g.saturation_label, color: runColor(e.ri) });
      e.g.slos.forEach(function (s) { slos.push(s); });
    });
    function sloMarks(chartName, scale) {
      return slos.filter(function (s) { return s.chart === chartName; }).map(function (s) {
        return { y: s.value, scale: scale || "y", label: "SLO " + s.expr, color: "#b00" };
      });
    }
    var wrap = add(parent, el("div", "grid"));
    // speed and throughput against load, saturation marked
    var tabs = [], ser = [];
    m.forEach(function (e) {
      var pts = e.g.points;
      tabs.push([pts.map(function (p) { return p.x; }), pts.map(function (p) { return p.speed_p50; }),
        pts.map(function (p) { return p.speed_p95; }), pts.map(function (p) { return p.output_tps; })]);
      var c = runColor(e.ri);
      ser.push(line(prefix(e.run) + "speed p50 tok/s/req", c, dashes.p50));
      ser.push(line(prefix(e.run) + "speed p95 tok/s/req", c, dashes.p95));
      ser.push(line(prefix(e.run) + "output tok/s (aggregate)", c, [1, 0], { scale: "y2", width: 3, fill: c + "18" }));
    });
    chart(wrap, "Decode speed per request and aggregate output tok/s", align(tabs), ser,
      { x: xopt, xLabel: axis, yLabel: "tok/s per request", y2: "output tok/s", yRange: [0, null],
        marks: sat.concat(sloMarks("speed"), sloMarks("throughput", "y2")) });
    [["ttft_ms", "ttft", "TTFT"], ["itl_ms", "itl", "ITL"], ["e2e_ms", "e2e", "E2E"]].forEach(function (k) {
      var tabs = [], ser = [];
      m.forEach(function (e) {
        var pts = e.g.points;
        var t = [pts.map(function (p) { return p.x; })];
        ["p50", "p95", "p99"].forEach(function (q) {
          t.push(pts.map(function (p) { return p[k[0]][q]; }));
          ser.push(line(prefix(e.run) + k[2] + " " + q, runColor(e.ri), dashes[q]));
        });
        tabs.push(t);
      });
      chart(wrap, k[2] + " p50/p95/p99 (ms) against load", align(tabs), ser,
        { x: xopt, xLabel: axis, yLabel: "ms", yRange: [0, null], marks: sat.concat(sloMarks(k[1])) });
    });
  }

  function cdfCharts(parent, grp) {
    var wrap = add(parent, el("div", "grid"));
    [["ttft", "TTFT"], ["itl", "ITL"]].forEach(function (k) {
      var tabs = [], ser = [], i = 0;
      grp.members.forEach(function (e) {
        e.g.cdfs.forEach(function (c) {
          var cd = c[k[0]];
          if (!cd.x.length) return;
          tabs.push([cd.x, cd.y]);
          var color = multi ? runColor(e.ri) : palette[i % palette.length];
          ser.push(line(prefix(e.run) + c.label, color, multi ? [4 * (e.ri % 3), 3 * (e.ri % 3)] : [], { points: { show: false } }));
          i++;
        });
      });
      var d = tabs.length ? align(tabs) : [[], []];
      // latencies span decades: a log axis unless a value is zero
      var xs = d[0].length ? { time: false, distr: d[0][0] > 0 && d[0][d[0].length - 1] / d[0][0] >= 20 ? 3 : 1 } : { time: false };
      chart(wrap, k[1] + " distribution (CDF)", d, tabs.length ? ser : [line("none", "#999")],
        { x: xs, xLabel: k[1] + " ms", yLabel: "fraction of requests", yRange: [0, 1] });
    });
  }

  function pointTable(parent, grp) {
    var rows = [];
    grp.members.forEach(function (e) {
      e.g.points.forEach(function (p) {
        rows.push((multi ? [e.run.name] : []).concat([p.label + (p.held ? "" : " (not held)"), fmt(p.speed_p50, 1), fmt(p.speed_p95, 1),
          fmt(p.output_tps, 1), fmt(p.ttft_ms.p50, 0), fmt(p.ttft_ms.p95, 0), fmt(p.ttft_ms.p99, 0),
          fmt(p.itl_ms.p95, 1), fmt(p.e2e_ms.p95, 0), String(p.completed), String(p.failed)]));
      });
    });
    table(parent, (multi ? ["run"] : []).concat(["load", "speed p50", "speed p95", "output tok/s", "TTFT p50", "TTFT p95", "TTFT p99",
      "ITL p95", "E2E p95", "ok", "errors"]), rows).className = "points";
  }

  function workloadsSection() {
    groups().forEach(function (grp) {
      var sec = add(root, el("section", "workload"));
      add(sec, el("h2", null, grp.workload ? "Workload " + grp.workload : "Load points"));
      loadCharts(sec, grp);
      cdfCharts(sec, grp);
      pointTable(sec, grp);
    });
  }

  function hasAny(xs) { return xs && xs.some(function (v) { return v !== null; }); }

  function timelines() {
    var sec = add(root, el("section", "timelines"));
    add(sec, el("h2", null, "Timeline"));
    var row = add(sec, el("div", "side"));
    data.runs.forEach(function (r, ri) {
      var tl = r.timeline;
      if (!tl || !tl.t_s.length) return;
      var col = add(row, el("div", "col"));
      if (multi) add(col, el("h3", null, r.name));
      var spans = tl.spans.map(function (s) { return { x: s.from_s, label: s.label, color: "#888" }; });
      var c = runColor(ri);
      var errs = tl.errors.map(function (v) { return v > 0 ? v : null; }); // only failures are marked
      chart(col, prefix(r) + "Throughput, requests in flight and errors", [tl.t_s, tl.output_tps, tl.running, errs],
        [line("output tok/s", c, [], { points: { show: false } }),
          line("in flight", "#2ca02c", [], { scale: "y2", points: { show: false } }),
          line("errors", "#d62728", [], { scale: "y2", points: { show: true, size: 5 }, width: 0 })],
        { xLabel: "seconds", yLabel: "output tok/s", y2: "requests", yRange: [0, null], marks: spans });
      var tel = [["kv_cache_pct", "KV cache %", "%"], ["vram_gib", "VRAM GiB", "GiB"], ["power_w", "GPU power W", "W"], ["temperature_c", "GPU temperature °C", "°C"]];
      tel.forEach(function (k) {
        if (!hasAny(tl[k[0]])) return;
        chart(col, prefix(r) + k[1], [tl.t_s, tl[k[0]]], [line(k[1], c, [], { points: { show: false } })],
          { xLabel: "seconds", yLabel: k[2], marks: spans, height: 180 });
      });
    });
  }

  function aboutSection() {
    var sec = add(root, el("section", "about"));
    add(sec, el("h2", null, "Workload, server and environment"));
    var row = add(sec, el("div", "side"));
    data.runs.forEach(function (r) {
      var col = add(row, el("div", "col"));
      if (multi) add(col, el("h3", null, r.name));
      r.about.forEach(function (a) {
        add(col, el("h4", null, a.title));
        table(col, null, a.rows);
      });
      if (r.warnings.length) {
        add(col, el("h4", null, "Warnings"));
        var ul = add(col, el("ul", "warnings"));
        r.warnings.forEach(function (w) { add(ul, el("li", null, w)); });
      }
    });
  }

  verdicts();
  extraTables();
  frontierSection();
  workloadsSection();
  timelines();
  aboutSection();
  document.body.dataset.ready = "true";
})();
