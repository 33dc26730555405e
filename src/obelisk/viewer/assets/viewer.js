// obelisk run viewer (docs/viewer.md). Plain JavaScript, no library: it draws the one
// JSON document of obelisk.viewer into inline SVG and HTML. Every value that came from a
// run (tool outputs, arguments, errors, reasons) is set as text (textContent or an SVG
// text node), never parsed as markup.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var config = JSON.parse(document.getElementById("obelisk-data").textContent);
  var COLOURS = config.colours;
  var doc = config.document;
  var selected = null;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (name) {
      if (attrs[name] !== null && attrs[name] !== undefined) node.setAttribute(name, String(attrs[name]));
    });
  }
  function json(value) {
    return JSON.stringify(value === undefined ? null : value, null, 2);
  }
  function colour(status) {
    return COLOURS[status] || COLOURS.waiting;
  }
  function clip(text, n) {
    text = String(text);
    return text.length > n ? text.slice(0, n - 1) + "\u2026" : text;
  }
  function section(id, title) {
    var box = el("section", { id: id });
    box.appendChild(el("h2", null, title));
    return box;
  }

  // -- the header ---------------------------------------------------------------------
  function header() {
    var box = el("header");
    box.appendChild(el("h1", null, doc.title));
    var line = el("p", { id: "summary" });
    line.appendChild(el("span", { "class": "kind" }, doc.kind));
    if (doc.status) line.appendChild(el("span", { id: "run-status", "class": "status" }, doc.status));
    line.appendChild(el("span", null, doc.calls.length + " calls"));
    if (doc.live) line.appendChild(el("span", { "class": "live" }, "live: read again every second"));
    box.appendChild(line);
    doc.notes.forEach(function (note) { box.appendChild(el("p", { "class": "note" }, note)); });
    return box;
  }

  // -- the graph ----------------------------------------------------------------------
  // Each call's row in the graph: the longest chain of edges above it (Kahn's order, so
  // linear in calls and edges); calls left in a cycle go below the rest. A loop's calls
  // are grouped by turn, each turn below the one before.
  function layers() {
    var layer = {}, groups = [], byTurn = {};
    doc.calls.forEach(function (c) {
      var name = doc.kind === "loop" ? String(c.turn) : "";
      if (!(name in byTurn)) { byTurn[name] = []; groups.push(byTurn[name]); }
      byTurn[name].push(c.key);
    });
    var base = 0;
    groups.forEach(function (keys) { base = layerGroup(keys, base, layer) + 1; });
    return layer;
  }

  function layerGroup(keys, base, layer) {
    var inGroup = {}, indegree = {}, out = {};
    keys.forEach(function (k) { inGroup[k] = true; indegree[k] = 0; out[k] = []; layer[k] = base; });
    doc.edges.forEach(function (e) {
      if (inGroup[e.source] && inGroup[e.target] && e.source !== e.target) {
        out[e.source].push(e.target);
        indegree[e.target] += 1;
      }
    });
    var ready = keys.filter(function (k) { return indegree[k] === 0; }), done = 0, deepest = base;
    for (var at = 0; at < ready.length; at++) {
      var key = ready[at];
      done += 1;
      deepest = Math.max(deepest, layer[key]);
      out[key].forEach(function (next) {
        layer[next] = Math.max(layer[next], layer[key] + 1);
        indegree[next] -= 1;
        if (indegree[next] === 0) ready.push(next);
      });
    }
    if (done < keys.length) {  // a cycle: its calls in one row below
      deepest += 1;
      keys.forEach(function (k) { if (indegree[k] > 0) layer[k] = deepest; });
    }
    return deepest;
  }

  function graph() {
    var box = section("graph", "Plan graph");
    var layer = layers();
    var usesInput = doc.edges.some(function (e) { return e.source === "input"; });
    var rows = [], pos = {};
    doc.calls.forEach(function (c) {
      var row = layer[c.key] + (usesInput ? 1 : 0);
      (rows[row] = rows[row] || []).push(c.key);
    });
    if (usesInput) rows[0] = ["input"];
    var W = 190, H = 54, GX = 30, GY = 50, widest = 1;
    rows.forEach(function (r) { if (r) widest = Math.max(widest, r.length); });
    var width = widest * (W + GX) + GX, height = rows.length * (H + GY) + GY;
    rows.forEach(function (r, y) {
      if (!r) return;
      var offset = (width - r.length * (W + GX) + GX) / 2;
      r.forEach(function (key, x) { pos[key] = { x: offset + x * (W + GX), y: GY / 2 + y * (H + GY) }; });
    });
    var picture = svg("svg", { id: "graph-svg", width: width, height: height, viewBox: "0 0 " + width + " " + height });
    var defs = svg("defs");
    var marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
    marker.appendChild(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#555" }));
    defs.appendChild(marker);
    picture.appendChild(defs);
    var critical = {};
    for (var i = 0; i + 1 < doc.critical.length; i++) critical[doc.critical[i] + ">" + doc.critical[i + 1]] = true;
    doc.edges.forEach(function (e) {
      var a = pos[e.source], b = pos[e.target];
      if (!a || !b) return;
      var line = svg("path", {
        d: edgePath(a, b, W, H, GX, GY),
        "class": "edge edge-" + e.kind + (critical[e.source + ">" + e.target] ? " edge-critical" : ""),
        "data-kind": e.kind, "data-source": e.source, "data-target": e.target,
        "marker-end": "url(#arrow)", fill: "none"
      });
      line.appendChild(svg("title", null, e.kind + ": " + e.label));
      picture.appendChild(line);
    });
    if (usesInput) {
      var g = svg("g", { "class": "input-node", transform: "translate(" + pos.input.x + "," + pos.input.y + ")" });
      g.appendChild(svg("rect", { width: W, height: H, rx: 27, fill: "#fff", stroke: "#777" }));
      g.appendChild(svg("text", { x: W / 2, y: H / 2 + 5, "text-anchor": "middle" }, "input"));
      picture.appendChild(g);
    }
    var onPath = {};
    doc.critical.forEach(function (k) { onPath[k] = true; });
    doc.calls.forEach(function (c) { picture.appendChild(node(c, pos[c.key], W, H, onPath[c.key])); });
    var scroll = el("div", { "class": "scroll" });
    scroll.appendChild(picture);
    box.appendChild(scroll);
    box.appendChild(legend());
    box.appendChild(skipped());
    return box;
  }

  // An edge to the next row goes straight down; one that skips rows goes around the
  // boxes between, on the side the target lies on, into the target's side.
  function edgePath(a, b, W, H, GX, GY) {
    if (b.y - a.y <= H + GY) {
      return "M " + (a.x + W / 2) + " " + (a.y + H) + " C " + (a.x + W / 2) + " " + (a.y + H + GY / 2) + " " +
        (b.x + W / 2) + " " + (b.y - GY / 2) + " " + (b.x + W / 2) + " " + b.y;
    }
    var left = b.x < a.x;  // around the side the target lies on
    var side = left ? Math.min(a.x, b.x) - GX * 0.8 : Math.max(a.x, b.x) + W + GX * 0.8;
    var from = left ? a.x : a.x + W, to = left ? b.x : b.x + W;
    return "M " + from + " " + (a.y + H / 2) + " C " + side + " " + (a.y + H / 2) + " " +
      side + " " + (b.y + H / 2) + " " + to + " " + (b.y + H / 2);
  }

  function node(call, at, W, H, critical) {
    var g = svg("g", {
      "class": "node" + (critical ? " critical" : "") + (selected === call.key ? " selected" : ""),
      "data-key": call.key, "data-status": call.status, "data-fill": colour(call.status),
      transform: "translate(" + at.x + "," + at.y + ")", tabindex: 0, role: "button"
    });
    g.appendChild(svg("rect", { width: W, height: H, rx: 6, fill: colour(call.status), stroke: critical ? "#b71c1c" : "#555", "stroke-width": critical ? 3 : 1 }));
    g.appendChild(svg("text", { x: 8, y: 18, "class": "node-label" }, clip(call.label, 30)));
    g.appendChild(svg("text", { x: 8, y: 34, "class": "node-status" }, call.status + (call.attempts > 1 ? " \u00d7" + call.attempts : "")));
    if (call.reason) g.appendChild(svg("text", { x: 8, y: 48, "class": "node-reason" }, clip(call.reason, 34)));
    g.appendChild(svg("title", null, call.label + ": " + call.status + (call.reason ? " \u2014 " + call.reason : "")));
    g.addEventListener("click", function () { show(call.key); });
    g.addEventListener("keydown", function (event) { if (event.key === "Enter") show(call.key); });
    return g;
  }

  function legend() {
    var box = el("p", { "class": "legend" });
    var used = {};
    doc.calls.forEach(function (c) { used[c.status] = true; });
    Object.keys(used).sort().forEach(function (status) {
      var chip = el("span", { "class": "chip" }, status);
      chip.style.background = colour(status);
      box.appendChild(chip);
    });
    box.appendChild(el("span", { "class": "edge-key" }, "\u2014 data   - - alternative   \u00b7\u00b7\u00b7 _after / effect   red border: critical path"));
    return box;
  }

  function skipped() {
    var list = el("ul", { id: "skipped" });
    doc.calls.forEach(function (c) {
      if (c.status !== "skipped" && c.status !== "varies") return;
      if (!c.reason) return;
      var item = el("li", { "data-key": c.key });
      item.appendChild(el("strong", null, c.label + ": "));
      item.appendChild(el("span", { "class": "reason" }, c.reason));
      list.appendChild(item);
    });
    return list;
  }

  // -- the timeline -------------------------------------------------------------------
  function timeline() {
    var box = section("timeline", "Timeline");
    var timed = doc.calls.filter(function (c) { return c.started !== null && c.started !== undefined; });
    if (!timed.length) { box.appendChild(el("p", { "class": "note" }, "No call times in this input.")); return box; }
    timed.sort(function (a, b) { return a.started - b.started || a.index - b.index; });
    var start = Math.min.apply(null, timed.map(function (c) { return c.started; }));
    var end = Math.max.apply(null, timed.map(function (c) { return c.finished === null ? c.started : c.finished; }));
    var axis = { start: start, end: end, span: Math.max(end - start, 1e-6), left: 220, width: 640 };
    var row = 22, strip = 48, top = strip + 12;
    var picture = svg("svg", { id: "timeline-svg", width: axis.left + axis.width + 40, height: top + timed.length * row + 40 });
    var onPath = {};
    doc.critical.forEach(function (k) { onPath[k] = true; });
    for (var t = 0; t <= 4; t++) {
      var x = axis.left + (axis.width * t) / 4;
      picture.appendChild(svg("line", { x1: x, x2: x, y1: 0, y2: top + timed.length * row + 8, stroke: "#ddd" }));
      picture.appendChild(svg("text", { x: x, y: top + timed.length * row + 24, "text-anchor": "middle", "class": "tick" }, ((axis.span * t) / 4 * 1000).toFixed(1) + " ms"));
    }
    var most = inFlight(picture, timed, axis, strip);
    timed.forEach(function (c, i) { picture.appendChild(bar(c, i, axis, top, row, onPath[c.key])); });
    box.appendChild(el("p", null, "Peak concurrency: " + most + (doc.critical_basis ? "; critical path (" + doc.critical_basis + "): " : "") +
      doc.critical.map(function (k) { return labelOf(k); }).join(" \u2192 ")));
    var scroll = el("div", { "class": "scroll" });
    scroll.appendChild(picture);
    box.appendChild(scroll);
    return box;
  }

  function bar(c, i, axis, top, row, critical) {
    var finished = c.finished === null ? axis.end : c.finished;
    var x0 = axis.left + ((c.started - axis.start) / axis.span) * axis.width;
    var x1 = axis.left + ((finished - axis.start) / axis.span) * axis.width;
    var g = svg("g", { "class": "bar" + (critical ? " critical" : ""), "data-key": c.key });
    g.appendChild(svg("text", { x: axis.left - 6, y: top + i * row + 15, "text-anchor": "end" }, clip(c.label, 30)));
    g.appendChild(svg("rect", { x: x0, y: top + i * row + 4, width: Math.max(x1 - x0, 2), height: row - 8, fill: colour(c.status), stroke: critical ? "#b71c1c" : "#555", "stroke-width": critical ? 2 : 1 }));
    g.appendChild(svg("title", null, c.label + ": " + ((finished - c.started) * 1000).toFixed(2) + " ms" + (critical ? " (critical path)" : "")));
    g.addEventListener("click", function () { show(c.key); });
    return g;
  }

  // The calls in flight over time, as a step chart above the bars; returns the peak.
  function inFlight(picture, timed, axis, height) {
    var points = [];
    timed.forEach(function (c) { points.push([c.started, 1], [c.finished === null ? axis.end : c.finished, -1]); });
    points.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var now = 0, most = 0, steps = [];
    points.forEach(function (p) { now += p[1]; most = Math.max(most, now); steps.push([p[0], now]); });
    var scale = most ? (height - 14) / most : 0, base = height;
    var d = "M " + axis.left + " " + base;
    steps.forEach(function (p) {
      var x = axis.left + ((p[0] - axis.start) / axis.span) * axis.width;
      d += " H " + x + " V " + (base - p[1] * scale);
    });
    d += " H " + (axis.left + axis.width) + " V " + base + " Z";
    picture.appendChild(svg("text", { x: axis.left - 6, y: base - 4, "text-anchor": "end" }, "in flight (peak " + most + ")"));
    var area = svg("path", { id: "in-flight", d: d, fill: "#90caf9", stroke: "#1565c0", "data-peak": most });
    area.appendChild(svg("title", null, "calls in flight; peak " + most));
    picture.appendChild(area);
    return most;
  }

  function labelOf(key) {
    var found = doc.calls.filter(function (c) { return c.key === key; })[0];
    return found ? found.label : key;
  }

  // -- a call's details ---------------------------------------------------------------
  function details() {
    var box = section("details", "Call");
    box.appendChild(el("p", { "class": "note" }, "Click a call in the graph or the timeline."));
    return box;
  }

  var FIELDS = ["status", "reason", "arguments", "output", "error", "attempts", "approval", "labels", "revision", "turn", "started", "finished"];

  function show(key) {
    selected = key;
    var call = doc.calls.filter(function (c) { return c.key === key; })[0];
    var box = document.getElementById("details");
    while (box.childNodes.length > 1) box.removeChild(box.lastChild);
    document.querySelectorAll(".node.selected").forEach(function (n) { n.classList.remove("selected"); });
    document.querySelectorAll('.node[data-key="' + CSS.escape(key) + '"]').forEach(function (n) { n.classList.add("selected"); });
    if (!call) return;
    box.appendChild(el("h3", { id: "detail-label" }, call.label));
    var table = el("dl");
    FIELDS.forEach(function (name) {
      var value = call[name];
      if (value === null || value === undefined || (name === "attempts" && value === 0)) return;
      table.appendChild(el("dt", null, name));
      var cell = el("dd", { id: "detail-" + name });
      if (typeof value === "object") cell.appendChild(el("pre", null, json(value)));
      else if (name === "started" || name === "finished") cell.textContent = new Date(value * 1000).toISOString();
      else cell.textContent = String(value);
      table.appendChild(cell);
    });
    box.appendChild(table);
  }

  // -- the state and the write log ----------------------------------------------------
  function state() {
    var box = section("state", "State");
    box.appendChild(el("pre", { id: "state-json" }, json(doc.state)));
    box.appendChild(el("h3", null, "Write log"));
    var table = el("table", { id: "write-log" });
    var head = el("tr");
    ["seq", "call", "instance", "path", "method", "value"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    doc.log.forEach(function (entry, i) {
      var tr = el("tr");
      tr.appendChild(el("td", null, entry.seq === undefined ? i : entry.seq));
      tr.appendChild(el("td", null, entry.call === null || entry.call === undefined ? "" : "#" + entry.call));
      tr.appendChild(el("td", null, entry.instance || ""));
      tr.appendChild(el("td", null, entry.path));
      tr.appendChild(el("td", null, entry.method));
      var cell = el("td");
      cell.appendChild(el("pre", null, json(entry.value)));
      tr.appendChild(cell);
      table.appendChild(tr);
    });
    box.appendChild(table);
    return box;
  }

  // -- a loop, turn by turn -----------------------------------------------------------
  function turns() {
    var box = section("turns", "Turns");
    doc.turns.forEach(function (turn) {
      var part = el("details", { "class": "turn", open: "" });
      part.appendChild(el("summary", null, "Turn " + turn.turn + (turn.revision ? " \u2014 revision " + turn.revision.revision : "")));
      part.appendChild(el("h4", null, "Request"));
      part.appendChild(el("pre", { "class": "request" }, json(turn.request)));
      part.appendChild(el("h4", null, "Answer"));
      part.appendChild(el("pre", { "class": "answer" }, json(turn.answer)));
      if (turn.errors && turn.errors.length) {
        part.appendChild(el("h4", null, "Errors fed back"));
        part.appendChild(el("pre", null, json(turn.errors)));
      }
      if (turn.revision && turn.revision.diff) part.appendChild(diff(turn.revision.diff));
      box.appendChild(part);
    });
    return box;
  }

  function diff(changes) {
    var table = el("table", { "class": "diff" });
    Object.keys(changes).forEach(function (kind) {
      (changes[kind] || []).forEach(function (item) {
        var tr = el("tr", { "class": "diff-" + kind });
        tr.appendChild(el("td", null, kind));
        tr.appendChild(el("td", null, item.label));
        tr.appendChild(el("td", null, item.reason));
        table.appendChild(tr);
      });
    });
    var wrap = el("div");
    wrap.appendChild(el("h4", null, "Revision diff"));
    wrap.appendChild(table);
    return wrap;
  }

  // -- a dry run, scenario by scenario ------------------------------------------------
  function scenarios() {
    var box = section("scenarios", "Scenarios");
    var table = el("table", { id: "scenario-table" });
    var head = el("tr");
    head.appendChild(el("th", null, "call"));
    doc.scenarios.forEach(function (s) { head.appendChild(el("th", null, "scenario " + s.scenario)); });
    table.appendChild(head);
    doc.calls.forEach(function (c) {
      var tr = el("tr");
      tr.appendChild(el("th", null, c.label));
      doc.scenarios.forEach(function (s) {
        var status = s.statuses[c.label] || "not run";
        var td = el("td", { "data-status": status }, status);
        td.style.background = colour(status);
        if (s.reasons[c.label]) td.appendChild(el("div", { "class": "reason" }, s.reasons[c.label]));
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    [["arms", function (s) { return json(s.arms); }],
     ["critical path", function (s) { return s.critical_path.join(" \u2192 "); }],
     ["makespan", function (s) { return s.makespan; }],
     ["peak concurrency", function (s) { return s.peak_concurrency; }],
     ["cost", function (s) { return s.cost; }],
     ["state", function (s) { return json(s.state); }]].forEach(function (rowSpec) {
      var tr = el("tr");
      tr.appendChild(el("th", null, rowSpec[0]));
      doc.scenarios.forEach(function (s) {
        var td = el("td");
        td.appendChild(el("pre", null, rowSpec[1](s)));
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    var scroll = el("div", { "class": "scroll" });
    scroll.appendChild(table);
    box.appendChild(scroll);
    return box;
  }

  // -- the page -----------------------------------------------------------------------
  function render() {
    var root = document.getElementById("app");
    while (root.firstChild) root.removeChild(root.firstChild);
    root.appendChild(header());
    var top = el("div", { "class": "columns" });
    top.appendChild(graph());
    top.appendChild(details());
    root.appendChild(top);
    if (doc.scenarios.length) root.appendChild(scenarios());
    root.appendChild(timeline());
    if (doc.turns.length) root.appendChild(turns());
    if (doc.state !== null || doc.log.length) root.appendChild(state());
    if (selected !== null) show(selected);
    document.body.setAttribute("data-rendered", String(doc.calls.length));
  }

  function follow() {
    var last = null;
    function poll() {
      fetch("data.json", { cache: "no-store" }).then(function (response) {
        return response.ok ? response.text() : null;
      }).then(function (text) {
        if (text !== null && text !== last) {
          last = text;
          doc = JSON.parse(text);
          render();
        }
      }).catch(function () { /* the server stopped: keep the last picture */ })
        .then(function () { setTimeout(poll, 1000); });
    }
    setTimeout(poll, 1000);
  }

  render();
  if (doc.live) follow();
})();
