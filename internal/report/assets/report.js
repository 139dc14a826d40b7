// servebench HTML report: draws the embedded data (#sb-data) with uPlot.
// Every chart is registered in window.sbCharts and its container carries
// data-points (the values drawn), so that a test can see what was drawn.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("sb-data").textContent);
  var root = document.getElementById("report");
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  // p50, p95 and p99 each have a colour (and a dash, a second cue); on a
  // page of several runs each run has a family of three shades of its hue
  var quantiles = ["p50", "p95", "p99"];
  var qColors = ["#1f77b4", "#ff7f0e", "#d62728"];
  var families = [["#08306b", "#2f7fc1", "#8cc0ea"], ["#7f0000", "#e0301e", "#fc9272"], ["#00441b", "#2a9d4a", "#98d594"],
    ["#3f007d", "#7e57c2", "#c4b0e8"], ["#7f2704", "#e6750a", "#fdbe85"]];
  var dashes = { p50: [], p95: [6, 4], p99: [2, 3] };
  var runDashes = [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4]];
  var multi = data.runs.length > 1;
  window.sbCharts = [];

  function shade(ri, qi) { return multi ? families[ri % families.length][qi] : qColors[qi]; }

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
      r.forEach(function (c) { add(tr, el("td", toneOf(c), c)); });
    });
    return t;
  }
  // a compare cell's verdict in colour: WORSE and FAIL red, better green
  function toneOf(c) {
    c = String(c);
    if (/^(WORSE|FAIL)\b/.test(c)) return "worse";
    if (/^better\b/.test(c)) return "better";
    if (/^INCONCLUSIVE\b/.test(c)) return "inconclusive";
    return null;
  }
  function fmtNum(v) {
    if (v === null || v === undefined || !isFinite(v)) return "-";
    var a = Math.abs(v);
    if (v === Math.round(v) && a < 1e6) return v.toLocaleString("en-US");
    return a >= 100 ? Math.round(v).toLocaleString("en-US") : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : String(+v.toPrecision(3));
  }

  // --- the answer first: a compare headline, the candidates' outcome, each
  // run's verdict (or key figures) with the warnings that qualify it ---
  function answer() {
    var sec = add(root, el("section", "answer"));
    if (data.answer) {
      var a = data.answer;
      var card = add(sec, el("div", "card headline-card " + a.tone));
      add(card, el("p", "headline", a.headline));
      if (a.qualifiers.length) {
        var ul = add(card, el("ul", "qualifiers"));
        a.qualifiers.forEach(function (q) { add(ul, el("li", toneOf(q), q)); });
      }
    } else if (multi && data.runs.some(function (r) { return r.verdict; })) {
      candidates(sec);
    }
    var row = add(sec, el("div", "side"));
    data.runs.forEach(function (r) {
      if (r.verdict) verdictCard(row, r);
      else figuresCard(row, r);
    });
  }

  function verdictWord(v) {
    return v.holds ? "HOLDS" : (v.failing ? "FAILING" : (v.inconclusive ? "INCONCLUSIVE" : "NOT MET"));
  }

  // candidates: which of several judged runs meets the objective
  function candidates(sec) {
    var judged = data.runs.filter(function (r) { return r.verdict; });
    var meet = judged.filter(function (r) { return r.verdict.holds; });
    var rest = judged.filter(function (r) { return !r.verdict.holds; }).map(function (r) { return r.name + " " + verdictWord(r.verdict); });
    var text = meet.length
      ? "Meets the objective: " + meet.map(function (r) { return r.name + " (capacity " + r.verdict.capacity + ")"; }).join(", ") + (rest.length ? "; not: " + rest.join(", ") : "") + "."
      : "No candidate meets the objective at its target load: " + rest.join(", ") + ".";
    var card = add(sec, el("div", "card headline-card " + (meet.length ? "better" : "worse")));
    add(card, el("p", "headline", text));
  }

  function warningsList(parent, r) {
    if (!r.warnings.length) return;
    add(parent, el("h4", null, "Warnings that qualify these figures (" + r.warnings.length + ")"));
    var ul = add(parent, el("ul", "warnings"));
    // the first few in view, the rest one click away
    var shown = r.warnings.length > 6 ? 4 : r.warnings.length;
    r.warnings.slice(0, shown).forEach(function (w) { add(ul, el("li", null, w)); });
    if (shown < r.warnings.length) {
      var more = add(parent, el("details", "warnings"));
      add(more, el("summary", null, (r.warnings.length - shown) + " more"));
      var ul2 = add(more, el("ul", "warnings"));
      r.warnings.slice(shown).forEach(function (w) { add(ul2, el("li", null, w)); });
    }
  }

  function verdictCard(row, r) {
    var v = r.verdict;
    var card = add(row, el("div", "card " + (v.holds ? "pass" : (v.inconclusive ? "inconclusive" : "fail"))));
    if (multi) add(card, el("h3", null, r.name));
    add(card, el("p", "headline", verdictWord(v) + " · objective " + v.objective + " at " + v.target_load));
    // the reason an inconclusive verdict cannot conclude, next to it
    if (v.inconclusive) add(card, el("p", "why", v.reasons.join("; ")));
    warningsList(card, r);
    if (v.text) add(card, el("p", null, v.text));
    var rows = [["capacity", v.capacity], ["fails at", v.fails_at || "-"], ["saturation", v.saturation],
      ["binding SLO", v.binding.length ? v.binding.join("; ") : "-"], ["SLOs", v.slos.join("; ") || "-"]];
    table(card, null, rows);
    if (v.workloads.length) {
      add(card, el("h4", null, "By workload"));
      table(card, ["workload", "holds", "capacity", "fails at", "saturation", "binding SLO"], v.workloads.map(function (w) {
        return [w.workload, w.holds ? "yes" : (w.inconclusive ? "INCONCLUSIVE" : "no"), w.capacity, w.fails_at || "-", w.saturation, w.binding.join("; ") || "-"];
      }));
    }
    if (v.reasons.length && !v.inconclusive) {
      var ul = add(card, el("ul"));
      v.reasons.forEach(function (x) { add(ul, el("li", null, x)); });
    }
  }

  // a run judged by no objective: its key figures first
  function figuresCard(row, r) {
    var card = add(row, el("div", "card " + (r.warnings.length ? "inconclusive" : "plain")));
    if (multi) add(card, el("h3", null, r.name));
    var ok = 0, failed = 0, best = null, notHeld = [], sat = [];
    r.groups.forEach(function (g) {
      g.points.forEach(function (p) {
        ok += p.completed; failed += p.failed;
        if (!p.held) notHeld.push(p.label);
        if (!best || p.output_tps > best.p.output_tps) best = { p: p, w: g.workload };
      });
      if (g.saturation !== null) sat.push((g.workload ? g.workload + " " : "") + g.saturation_label);
    });
    var n = r.groups.reduce(function (a, g) { return a + g.points.length; }, 0);
    var line = "No objective judged · " + n + " load point" + (n === 1 ? "" : "s") + ", " + ok + " requests completed, " + failed + " failed";
    add(card, el("p", "headline", line));
    var rows = [];
    if (best) rows.push(["highest output", fmtNum(best.p.output_tps) + " tok/s at " + (best.w ? best.w + " " : "") + best.p.label]);
    rows.push(["saturation", sat.length ? sat.join("; ") : "not reached"]);
    if (notHeld.length) rows.push(["load not held", notHeld.join(", ")]);
    table(card, null, rows);
    warningsList(card, r);
  }

  function extraTables() {
    data.tables.forEach(function (t) {
      var sec = add(root, el("section", "extra"));
      add(sec, el("h2", null, t.title));
      // an empty table is stated by its notes, not drawn
      if (t.rows.length) table(sec, t.columns, t.rows);
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

  function overlaps(a, b) {
    return a.left < b.left + b.width && b.left < a.left + a.width && a.top < b.top + b.height && b.top < a.top + a.height;
  }

  // placeLabel puts a label at the first of its candidate places (left,
  // baseline, in canvas pixels) that overlaps no label placed before it
  // and stays inside the plot; a label with no free place is left out
  // rather than drawn over another.
  function placeLabel(placed, cands, w, h, area) {
    for (var i = 0; i < cands.length; i++) {
      var b = { left: cands[i][0], top: cands[i][1] - h, width: w, height: h };
      if (b.left < area.left || b.left + w > area.left + area.width || b.top < area.top || b.top + h > area.top + area.height) continue;
      if (!placed.some(function (p) { return overlaps(p, b); })) return b;
    }
    return null;
  }

  // marks are drawn over a chart: vertical lines at x (saturation, point
  // spans) and horizontal ones at y on a scale (SLOs). Their labels are
  // placed so that none overlaps another; the boxes drawn are kept on the
  // chart (u.sbLabels, in CSS pixels) for a test to check.
  function marksPlugin(marks) {
    return { hooks: { draw: [function (u) {
      var ctx = u.ctx, dpr = devicePixelRatio, bb = u.bbox;
      var h = 13 * dpr, pad = 4 * dpr, placed = [];
      u.sbLabels = [];
      ctx.save();
      ctx.font = (11 * dpr) + "px sans-serif";
      // horizontal (SLO) lines first: their label has fewer places
      var order = marks.filter(function (m) { return m.x === undefined; }).concat(marks.filter(function (m) { return m.x !== undefined; }));
      order.forEach(function (m) {
        ctx.strokeStyle = m.color || "#555";
        ctx.fillStyle = m.color || "#555";
        ctx.lineWidth = 1.5 * dpr;
        ctx.setLineDash([5 * dpr, 4 * dpr]);
        var w = ctx.measureText(m.label).width, cands = [];
        ctx.beginPath();
        if (m.x !== undefined) {
          var x = u.valToPos(m.x, "x", true);
          if (x < bb.left - 1 || x > bb.left + bb.width + 1) return;
          ctx.moveTo(x, bb.top); ctx.lineTo(x, bb.top + bb.height);
          ctx.stroke();
          for (var k = 0; k < 12; k++) {
            var y0 = bb.top + h + 2 * dpr + k * (h + 2 * dpr);
            cands.push([x + pad, y0], [x - pad - w, y0]);
          }
        } else {
          var y = u.valToPos(m.y, m.scale || "y", true);
          if (y < bb.top || y > bb.top + bb.height) return;
          ctx.moveTo(bb.left, y); ctx.lineTo(bb.left + bb.width, y);
          ctx.stroke();
          var right = bb.left + bb.width - w - pad, mid = bb.left + (bb.width - w) / 2, left = bb.left + pad;
          [right, mid, left].forEach(function (lx) { cands.push([lx, y - pad], [lx, y + h + pad]); });
        }
        var b = placeLabel(placed, cands, w, h, bb);
        if (!b) return;
        placed.push(b);
        ctx.save();
        ctx.fillStyle = "rgba(255,255,255,0.85)";
        ctx.fillRect(b.left - dpr, b.top, b.width + 2 * dpr, b.height);
        ctx.restore();
        ctx.fillText(m.label, b.left, b.top + h - 3 * dpr);
        u.sbLabels.push({ text: m.label, left: b.left / dpr, top: b.top / dpr, width: b.width / dpr, height: b.height / dpr });
      });
      ctx.restore();
    }] } };
  }

  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  // legendSwatches draws each series' own line in its legend: colour,
  // width and dash, or a dot for a series of points.
  function legendSwatches(u, series) {
    var rows = u.root.querySelectorAll(".u-legend tr.u-series");
    series.forEach(function (s, i) {
      var mk = rows[i + 1] && rows[i + 1].querySelector(".u-marker");
      if (!mk) return;
      mk.style.border = "none";
      mk.style.background = "none";
      mk.className += " sb-swatch";
      var g = svg("svg", { width: 28, height: 12, viewBox: "0 0 28 12" });
      if (s.width === 0) g.appendChild(svg("circle", { cx: 14, cy: 6, r: 3.5, fill: s.stroke }));
      else g.appendChild(svg("line", { x1: 1, y1: 6, x2: 27, y2: 6, stroke: s.stroke, "stroke-width": Math.min(s.width, 3),
        "stroke-dasharray": (s.dash || []).join(" ") || "none" }));
      mk.appendChild(g);
      mk.dataset.stroke = s.stroke;
      mk.dataset.dash = (s.dash || []).join(",");
    });
  }

  function lastValue(xs) {
    for (var i = xs.length - 1; i >= 0; i--) if (xs[i] !== null && xs[i] !== undefined) return i;
    return -1;
  }

  // restLegend: with no point under the cursor, the legend shows each
  // series' value at its last point (or what opts.rest says), never "--".
  function restLegend(rest) {
    return function (u) {
      if (u.cursor.idx !== null && u.cursor.idx !== undefined) return;
      var rows = u.root.querySelectorAll(".u-legend tr.u-series");
      for (var i = 0; i < rows.length; i++) {
        var td = rows[i].querySelector(".u-value");
        if (td) td.textContent = rest(u, i);
      }
    };
  }

  function defaultRest(xUnit) {
    return function (u, i) {
      var d = u.data[i], j = lastValue(d);
      if (j < 0) return "none"; // errors: none marked
      if (i === 0) return "last " + fmtNum(d[j]) + (xUnit || "");
      return fmtNum(d[j]);
    };
  }

  function chart(parent, title, d, series, opts) {
    opts = opts || {};
    var box = el("div", "chart");
    if (opts.before) parent.insertBefore(box, opts.before); else parent.appendChild(box);
    var head = add(box, el("h4", null, title));
    var n = countPoints(d);
    box.dataset.title = title;
    box.dataset.points = String(n);
    if (opts.head) opts.head(head);
    if (!n) { add(box, el("p", "empty", "nothing measured")); return { box: box }; }
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
    var rest = restLegend(opts.rest || defaultRest(opts.xUnit));
    var u = new uPlot({
      width: width, height: opts.height || 260, scales: scales, axes: axes,
      series: [{ label: opts.xLabel || "x" }].concat(series),
      plugins: opts.marks && opts.marks.length ? [marksPlugin(opts.marks)] : [],
      hooks: { setLegend: [rest], ready: [rest] },
      cursor: { drag: { x: true, y: false } }, legend: { live: true }
    }, d, box);
    legendSwatches(u, series);
    rest(u);
    var entry = { title: title, points: n, chart: u };
    window.sbCharts.push(entry);
    return { box: box, u: u, entry: entry };
  }

  function unchart(c) {
    if (c.u) {
      var i = window.sbCharts.indexOf(c.entry);
      if (i >= 0) window.sbCharts.splice(i, 1);
      c.u.destroy();
    }
    c.box.remove();
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

  // byX: a workload's points for the charts against load, one per load:
  // repeats of a load by their mean, a superseded point left out
  function byX(pts) {
    var groups = {}, xs = [];
    pts.forEach(function (p) {
      if (p.superseded) return;
      if (!groups[p.x]) { groups[p.x] = []; xs.push(p.x); }
      groups[p.x].push(p);
    });
    xs.sort(function (a, b) { return a - b; });
    return xs.map(function (x) {
      var g = groups[x];
      return { x: x, n: g.length, get: function (f) {
        var vs = g.map(f).filter(function (v) { return v !== null && v !== undefined; });
        return vs.length ? vs.reduce(function (a, b) { return a + b; }, 0) / vs.length : null;
      } };
    });
  }

  function loadCharts(parent, grp) {
    var m = grp.members;
    var axis = m[0].g.axis;
    var xUnit = axis === "concurrency" ? "" : " req/s";
    var allX = [];
    m.forEach(function (e) { e.g.points.forEach(function (p) { allX.push(p.x); }); });
    var xopt = logX(allX);
    var sat = [], slos = [];
    m.forEach(function (e) {
      if (e.g.saturation !== null) sat.push({ x: e.g.saturation, label: prefix(e.run) + "saturation " + e.g.saturation_label, color: multi ? shade(e.ri, 1) : "#555" });
      e.g.slos.forEach(function (s) { if (!slos.some(function (o) { return o.expr === s.expr; })) slos.push(s); });
    });
    function sloMarks(chartName, scale) {
      return slos.filter(function (s) { return s.chart === chartName; }).map(function (s) {
        return { y: s.value, scale: scale || "y", label: "SLO " + s.expr, color: "#b00" };
      });
    }
    var wrap = add(parent, el("div", "grid"));
    // speed and throughput against load, saturation marked
    var tabs = [], ser = [];
    var repeated = m.some(function (e) { return byX(e.g.points).some(function (p) { return p.n > 1; }); });
    var mean = repeated ? " (repeats: their mean)" : "";
    m.forEach(function (e) {
      var pts = byX(e.g.points);
      tabs.push([pts.map(function (p) { return p.x; }), pts.map(function (p) { return p.get(function (q) { return q.speed_p50; }); }),
        pts.map(function (p) { return p.get(function (q) { return q.speed_p95; }); }), pts.map(function (p) { return p.get(function (q) { return q.output_tps; }); })]);
      var tput = multi ? shade(e.ri, 2) : "#2ca02c";
      ser.push(line(prefix(e.run) + "speed p50 tok/s/req", shade(e.ri, 0), dashes.p50));
      ser.push(line(prefix(e.run) + "speed p95 tok/s/req", shade(e.ri, 1), dashes.p95));
      ser.push(line(prefix(e.run) + "output tok/s (aggregate)", tput, [], { scale: "y2", width: 3, fill: tput + "18" }));
    });
    chart(wrap, "Decode speed per request and aggregate output tok/s" + mean, align(tabs), ser,
      { x: xopt, xLabel: axis, xUnit: xUnit, yLabel: "tok/s per request", y2: "output tok/s", yRange: [0, null],
        marks: sat.concat(sloMarks("speed"), sloMarks("throughput", "y2")) });
    [["ttft_ms", "ttft", "TTFT"], ["itl_ms", "itl", "ITL"], ["e2e_ms", "e2e", "E2E"]].forEach(function (k) {
      var tabs = [], ser = [];
      m.forEach(function (e) {
        var pts = byX(e.g.points);
        var t = [pts.map(function (p) { return p.x; })];
        quantiles.forEach(function (q, qi) {
          t.push(pts.map(function (p) { return p.get(function (v) { return v[k[0]][q]; }); }));
          ser.push(line(prefix(e.run) + k[2] + " " + q + " ms", shade(e.ri, qi), dashes[q]));
        });
        tabs.push(t);
      });
      chart(wrap, k[2] + " p50/p95/p99 (ms) against load" + mean, align(tabs), ser,
        { x: xopt, xLabel: axis, xUnit: xUnit, yLabel: "ms", yRange: [0, null], marks: sat.concat(sloMarks(k[1])) });
    });
  }

  // the value below which a fraction q of a CDF lies
  function quantileOf(xs, ys, q) {
    for (var i = 0; i < ys.length; i++) if (ys[i] !== null && ys[i] >= q) return xs[i];
    return null;
  }

  // A distribution's x axis runs to p99.9 of the slowest curve (the rest
  // of the tail is stated beside it); log spreads values over decades.
  function cdfChart(wrap, grp, k, log, before) {
    var tabs = [], ser = [], i = 0, lo = Infinity, hi = 0, max = 0;
    grp.members.forEach(function (e) {
      e.g.cdfs.forEach(function (c) {
        var cd = c[k[0]];
        if (!cd.x.length) return;
        var xs = [], ys = [];
        cd.x.forEach(function (x, j) { if (!log || x > 0) { xs.push(x); ys.push(cd.y[j]); } });
        if (!xs.length) return;
        tabs.push([xs, ys]);
        hi = Math.max(hi, quantileOf(xs, ys, 0.999));
        max = Math.max(max, xs[xs.length - 1]);
        xs.forEach(function (x) { if (x > 0) lo = Math.min(lo, x); });
        // a colour per load point; on a page of several runs, a dash per run
        var color = palette[i % palette.length];
        var dash = multi ? runDashes[e.ri % runDashes.length] : runDashes[Math.floor(i / palette.length) % runDashes.length];
        ser.push(line(prefix(e.run) + c.label, color, dash, { points: { show: false }, paths: uPlot.paths.stepped({ align: 1 }) }));
        i++;
      });
    });
    var d = tabs.length ? align(tabs) : [[], []];
    if (!(hi > 0)) hi = max > 0 ? max : 1; // every value zero
    var xs = { time: false, range: [0, hi * 1.03] };
    // from the decade below the fastest: ticks fall on 1, 10, 100…
    if (log && lo < Infinity) xs = { time: false, distr: 3, log: 10, range: [Math.pow(10, Math.floor(Math.log10(lo))), hi * 1.15] };
    var c = chart(wrap, k[1] + " distribution (CDF)", d, tabs.length ? ser : [line("none", "#999")],
      { x: xs, xLabel: k[1] + " ms", yLabel: "fraction of requests", yRange: [0, 1], before: before,
        rest: function (u, si) {
          if (si === 0) return "p50 · p99";
          var t = u.data[si];
          return fmtNum(quantileOf(u.data[0], t, 0.5)) + " · " + fmtNum(quantileOf(u.data[0], t, 0.99)) + " ms";
        },
        head: function (h) {
          var lab = add(h, el("label", "logopt"));
          var cb = add(lab, el("input"));
          cb.type = "checkbox";
          cb.checked = log;
          add(lab, document.createTextNode(" log scale"));
          cb.addEventListener("change", function () {
            var next = c.box.nextSibling;
            unchart(c);
            cdfChart(wrap, grp, k, cb.checked, next);
          });
        } });
    c.box.dataset.log = String(log);
    if (max > hi * 1.03) add(c.box, el("p", "note", "x axis to p99.9 (" + fmtNum(hi) + " ms); the slowest: " + fmtNum(max) + " ms"));
    return c;
  }

  function cdfCharts(parent, grp) {
    var wrap = add(parent, el("div", "grid"));
    [["ttft", "TTFT"], ["itl", "ITL"]].forEach(function (k) {
      // a log axis by default when the values clipped span decades
      var lo = Infinity, hi = 0;
      grp.members.forEach(function (e) {
        e.g.cdfs.forEach(function (c) {
          var cd = c[k[0]];
          cd.x.forEach(function (x) { if (x > 0) lo = Math.min(lo, x); });
          if (cd.x.length) hi = Math.max(hi, quantileOf(cd.x, cd.y, 0.999));
        });
      });
      cdfChart(wrap, grp, k, lo < Infinity && hi / lo >= 20, null);
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
    table(parent, (multi ? ["run"] : []).concat(["load", "speed p50 (tok/s/req)", "speed p95 (tok/s/req)", "output (tok/s)",
      "TTFT p50 (ms)", "TTFT p95 (ms)", "TTFT p99 (ms)", "ITL p95 (ms)", "E2E p95 (ms)", "ok (requests)", "errors (requests)"]), rows).className = "points";
  }

  // overview: a workload matrix's cells side by side, one line per cell
  // (repeats of a load by their mean)
  function overview(all) {
    if (all.length < 2) return;
    var sec = add(root, el("section", "overview"));
    add(sec, el("h2", null, "Across workload cells"));
    var wrap = add(sec, el("div", "grid"));
    var allX = [];
    all.forEach(function (grp) { grp.members.forEach(function (e) { e.g.points.forEach(function (p) { allX.push(p.x); }); }); });
    [["output_tps", "Output tok/s against load, one line per workload cell", "output tok/s"],
      ["ttft_p95", "TTFT p95 (ms) against load, one line per workload cell", "ms"]].forEach(function (k) {
      var tabs = [], ser = [], i = 0;
      all.forEach(function (grp) {
        grp.members.forEach(function (e) {
          var pts = byX(e.g.points);
          var get = k[0] === "output_tps" ? function (p) { return p.output_tps; } : function (p) { return p.ttft_ms.p95; };
          tabs.push([pts.map(function (p) { return p.x; }), pts.map(function (p) { return p.get(get); })]);
          ser.push(line(prefix(e.run) + (grp.workload || "all"), palette[i % palette.length], multi ? runDashes[e.ri % runDashes.length] : []));
          i++;
        });
      });
      chart(wrap, k[1], align(tabs), ser, { x: logX(allX), xLabel: all[0].members[0].g.axis, yLabel: k[2], yRange: [0, null] });
    });
  }

  function workloadsSection() {
    var all = groups();
    overview(all);
    all.forEach(function (grp) {
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
      var c = shade(ri, 0);
      var errs = tl.errors.map(function (v) { return v > 0 ? v : null; }); // only failures are marked
      chart(col, prefix(r) + "Throughput, requests in flight and errors", [tl.t_s, tl.output_tps, tl.running, errs],
        [line("output tok/s", c, [], { points: { show: false } }),
          line("in flight", "#2ca02c", [6, 3], { scale: "y2", points: { show: false } }),
          line("errors", "#d62728", [], { scale: "y2", points: { show: true, size: 5 }, width: 0 })],
        { xLabel: "seconds", xUnit: " s", yLabel: "output tok/s", y2: "requests", yRange: [0, null], marks: spans });
      var tel = [["kv_cache_pct", "KV cache %", "%"], ["vram_gib", "VRAM GiB", "GiB"], ["power_w", "GPU power W", "W"], ["temperature_c", "GPU temperature °C", "°C"]];
      tel.forEach(function (k) {
        if (!hasAny(tl[k[0]])) return;
        chart(col, prefix(r) + k[1], [tl.t_s, tl[k[0]]], [line(k[1], c, [], { points: { show: false } })],
          { xLabel: "seconds", xUnit: " s", yLabel: k[2], marks: spans, height: 180 });
      });
    });
  }

  // a replayed trace: its arrivals against the sends, its shape against what was sent
  function traceSection() {
    data.runs.forEach(function (r, ri) {
      var t = r.trace;
      if (!t) return;
      var sec = add(root, el("section", "trace"));
      add(sec, el("h2", null, prefix(r) + t.title));
      chart(sec, prefix(r) + "Arrivals per second: the trace and the requests sent", [t.t_s, t.trace, t.sent],
        [line("trace", "#7f7f7f", [], { points: { show: false } }), line("sent", runColor(ri), [6, 4], { points: { show: false } })],
        { xLabel: "seconds from the first arrival", yLabel: "requests/s", yRange: [0, null], height: 200 });
      table(sec, t.rows[0], t.rows.slice(1));
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
    });
  }

  answer();
  extraTables();
  frontierSection();
  workloadsSection();
  timelines();
  traceSection();
  aboutSection();
  document.body.dataset.ready = "true";
})();
