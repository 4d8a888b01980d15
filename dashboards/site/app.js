/* Gauntlet dashboard: one static page over data/*.js (dashboards/FORMAT.md, schema version 1).
 *
 * Plain ES2019, no framework, no build step. Only data/overview.js loads at start; every other
 * data file loads when a view first needs it (a <script src> element) and stays cached.
 *
 * Security: every string from the data reaches the DOM through textContent, createTextNode or
 * setAttribute of inert attributes (title, href built from encodeURIComponent, data-*, aria-*).
 * Nothing here uses innerHTML, outerHTML, insertAdjacentHTML or document.write.
 */
(function () {
  'use strict';

  var SCHEMA_MAJOR = 1;
  var PAGE_SIZE = 100;
  var GATES = ['accuracy', 'speed', 'coverage'];
  var SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
  var COLORS = { ran: '#78909c', pass: '#2e7d32', fallback: '#b26a00', breaks: '#6a3fb5', speed: '#1565c0', rel: '#c2185b', cp: '#d32f2f' };

  // ------------------------------------------------------------------------------------------
  // Data files

  var received = Object.create(null);  // name -> payload handed over by its data file
  var loads = Object.create(null);     // name -> Promise of the checked payload

  window.gauntletData = function (name, payload) {
    if (typeof name === 'string') received[name] = payload;
  };

  function DataError(message) {
    var e = new Error(message);
    e.isDataError = true;
    return e;
  }

  function schemaProblem(payload, file) {
    if (!payload || typeof payload !== 'object') return file + ' holds no data object.';
    var v = payload.schema_version;
    var major = typeof v === 'number' ? Math.floor(v) : parseInt(String(v), 10);
    if (major !== SCHEMA_MAJOR) {
      return file + ' has schema version ' + String(v) + ', but this page reads version ' + SCHEMA_MAJOR +
        '. Write the site again with the same gauntlet for its page and its data.';
    }
    return null;
  }

  // Loads data/<name>.js once; the promise resolves to its payload.
  function loadData(name) {
    if (loads[name]) return loads[name];
    var file = 'data/' + name + '.js';
    var p = new Promise(function (resolve, reject) {
      var s = document.createElement('script');
      s.async = true;
      s.onload = function () {
        s.remove();
        if (!(name in received)) {
          reject(DataError(file + ' loaded, but it did not hand over its data (gauntletData("' + name + '", ...)); the file is damaged or is not a dashboard data file.'));
          return;
        }
        var payload = received[name];
        delete received[name];
        var problem = schemaProblem(payload, file);
        if (problem) reject(DataError(problem));
        else resolve(payload);
      };
      s.onerror = function () {
        s.remove();
        reject(DataError('Could not load ' + file + '. The file is missing or unreadable: the data/ folder must sit next to index.html, as gauntlet dashboard writes it.'));
      };
      s.src = file;
      document.head.appendChild(s);
    });
    loads[name] = p;
    p.catch(function () { delete loads[name]; });  // a later visit tries again
    return p;
  }

  // ------------------------------------------------------------------------------------------
  // DOM helpers (text only)

  function h(tag, props) {
    var e = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (k) {
        var v = props[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = String(v);
        else if (k === 'value') e.value = v;
        else if (k.slice(0, 2) === 'on' && typeof v === 'function') e.addEventListener(k.slice(2), v);
        else if (k === 'testid') e.setAttribute('data-testid', v);
        else e.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }

  function add(parent, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { add(parent, x); }); return; }
    parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }

  // Text that may wrap after each '/' (a <wbr> between text nodes; textContent stays the text).
  function breakable(tag, props, text) {
    var e = h(tag, props);
    String(text).split('/').forEach(function (part, i) {
      if (i) { e.appendChild(document.createTextNode('/')); e.appendChild(document.createElement('wbr')); }
      e.appendChild(document.createTextNode(part));
    });
    return e;
  }

  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  function svg(tag, attrs) {
    var e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }

  // ------------------------------------------------------------------------------------------
  // Formatting

  var DASH = '\u2014';
  function isNum(x) { return typeof x === 'number' && isFinite(x); }
  function fmtPct(x) { return isNum(x) ? (x * 100).toFixed(2) + '%' : DASH; }
  function fmtRatio(x) { return isNum(x) ? x.toFixed(3) : DASH; }
  function fmtInt(x) { return isNum(x) ? Math.round(x).toLocaleString('en-US') : DASH; }
  // 61.2 k, 2.31 G: rates per second.
  function fmtRate(x) {
    if (!isNum(x)) return DASH;
    var prefixes = ['', ' k', ' M', ' G', ' T', ' P'], p = 0;
    while (Math.abs(x) >= 1000 && p + 1 < prefixes.length) { x /= 1000; ++p; }
    return x.toPrecision(3) + prefixes[p];
  }
  function fmtCost(x) { return isNum(x) ? x.toPrecision(4) : DASH; }
  function fmtTime(us) {
    if (!isNum(us)) return DASH;
    if (us < 1000) return prec(us) + ' \u00b5s';
    if (us < 1e6) return prec(us / 1000) + ' ms';
    return prec(us / 1e6) + ' s';
  }
  function prec(x) { return x >= 100 ? x.toFixed(0) : Number(x.toPrecision(3)).toString(); }
  // The same with `digits` significant digits, for axis labels that must differ.
  function fmtTimeDigits(us, digits) {
    if (!isNum(us)) return DASH;
    var p = function (x) { return Number(x.toPrecision(digits)).toString(); };
    if (Math.abs(us) < 1000) return p(us) + ' \u00b5s';
    if (Math.abs(us) < 1e6) return p(us / 1000) + ' ms';
    return p(us / 1e6) + ' s';
  }
  function fmtErr(x) { return !isNum(x) ? DASH : x === 0 ? '0' : x.toExponential(2); }
  function fmtDate(iso) { return typeof iso === 'string' ? iso.slice(0, 10) : DASH; }
  function fmtStamp(iso) {
    if (typeof iso !== 'string') return DASH;
    var m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(iso);
    return m ? m[1] + ' ' + m[2] + (/Z$/.test(iso) ? ' UTC' : '') : iso;
  }
  function fmtCI(s) {
    if (!s || !isNum(s.ratio)) return DASH;
    return fmtRatio(s.ratio) + (isNum(s.lo) && isNum(s.hi) ? ' [' + fmtRatio(s.lo) + ', ' + fmtRatio(s.hi) + ']' : '');
  }
  function str(x) { return x === null || x === undefined ? '' : String(x); }
  function arr(x) { return Array.isArray(x) ? x : []; }

  // The shell command that reruns a case: the key in single quotes, each ' written as '\''.
  function shellQuote(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }
  function shellWord(s) { s = String(s); return /^[A-Za-z0-9_\-.,\/:=+@%]+$/.test(s) ? s : shellQuote(s); }
  // What the exporter's repro_command (reports.h) writes: the stored run's configuration comes back
  // with --db and --run (docs/repro.md); the backend alone when the data name no database.
  function latestRunId(g) { var r = arr(g.releases); return r.length ? r[r.length - 1].run_id : null; }
  function reproCommand(key, g, runId) {
    var db = state.overview && typeof state.overview.db_path === 'string' ? state.overview.db_path : '';
    if (db && runId) return 'gauntlet repro ' + shellQuote(key) + ' --db ' + shellWord(db) + ' --run ' + runId;
    return 'gauntlet repro ' + shellQuote(key) + ' --backend ' + shellWord(g.backend);
  }

  function statusClass(s) { return 'st st-' + String(s || 'none').toLowerCase().replace(/[^a-z]/g, ''); }
  function statusBadge(s) { return h('span', { class: statusClass(s) }, s ? s : 'absent'); }

  // ------------------------------------------------------------------------------------------
  // Routing: #/<group>/<view>[/<arg>][?query]

  function safeDecode(s) { try { return decodeURIComponent(s); } catch (e) { return s; } }

  function parseRoute() {
    var hash = location.hash.replace(/^#\/?/, '');
    var q = '';
    var qi = hash.indexOf('?');
    if (qi >= 0) { q = hash.slice(qi + 1); hash = hash.slice(0, qi); }
    var parts = hash.split('/');
    return {
      gid: parts[0] ? safeDecode(parts[0]) : '',
      view: parts[1] || 'overview',
      arg: parts.length > 2 ? safeDecode(parts.slice(2).join('/')) : '',
      params: new URLSearchParams(q),
    };
  }

  function hashFor(gid, view, arg, params) {
    var s = '#/' + encodeURIComponent(gid) + '/' + view;
    if (arg !== undefined && arg !== null && arg !== '') s += '/' + encodeURIComponent(arg);
    var q = params ? params.toString() : '';
    return q ? s + '?' + q : s;
  }

  function caseHash(gid, key) { return hashFor(gid, 'case', key); }
  // A release's page: what changed against the release before it (Note [Release pages]).
  function releaseHash(gid, release) { return hashFor(gid, 'release', release); }

  // Rewrites the query of the current view's address without rendering it again.
  function replaceQuery(params) {
    var r = parseRoute();
    var next = hashFor(r.gid, r.view, r.arg, params);
    if (next !== location.hash) history.replaceState(null, '', next);
  }

  // ------------------------------------------------------------------------------------------
  // State

  var state = {
    overview: null,
    group: null,
    axis: 'release',
    seq: 0,         // bumped on every route; a view whose seq is stale draws nothing
    charts: [],     // live uPlot instances of the current view
  };

  var main, groupSelect, metaBox, nav;

  function setReady(view) {
    document.body.setAttribute('data-ready', view);
  }

  function destroyCharts() {
    state.charts.forEach(function (c) { try { c.u.destroy(); } catch (e) { /* already gone */ } });
    state.charts = [];
  }

  function showError(container, err, title) {
    clear(container);
    container.appendChild(h('div', { class: 'error', role: 'alert', testid: 'load-error' },
      h('strong', null, title || 'Cannot show this view'), h('p', null, err && err.message ? err.message : String(err))));
    setReady('error');
  }

  // ------------------------------------------------------------------------------------------
  // Charts (uPlot)

  // A line chart over releases (or weeks): x is the index, labelled with `labels`.
  // opts: {id, title, labels, series: [{label, values, color, fmt}], yFmt, yKind: 'rate'|'count'|'ratio'|'log',
  //        cps: [bool per x] marked on series 0, cpText(i)}
  // The figure that a chart goes in. Every slot of a view is placed before any chart is drawn,
  // so that each chart is drawn at its final width.
  function chartSlot(parent, id, title) {
    var holder = h('div', { class: 'chart-plot' });
    var wrap = h('figure', { class: 'chart', testid: 'chart-' + id, 'data-points': '0', 'data-cp-markers': '0' },
      h('figcaption', null, title), holder);
    parent.appendChild(wrap);
    return { wrap: wrap, holder: holder, parent: parent };
  }

  function lineChart(slot, opts) {
    var wrap = slot.wrap, holder = slot.holder, parent = slot.parent;
    if (typeof window.uPlot !== 'function') {
      holder.appendChild(h('p', { class: 'error' }, 'The chart library (assets/uPlot.iife.min.js) did not load.'));
      return null;
    }
    var n = opts.labels.length;
    if (opts.yKind === 'log' && !opts.series.some(function (s) { return s.values.some(function (v) { return isNum(v) && v > 0; }); })) {
      opts.yKind = 'ratio';
    }
    var xs = [];
    for (var i = 0; i < n; i++) xs.push(i);
    var data = [xs];
    opts.series.forEach(function (s) {
      data.push(s.values.map(function (v) { return isNum(v) && !(opts.yKind === 'log' && v <= 0) ? v : null; }));
    });
    var yFmt = opts.yFmt || function (v) { return String(v); };
    var labels = opts.labels;

    var yScale = { auto: true };
    if (opts.yKind === 'log') yScale = { distr: 3, log: 10 };
    else {
      yScale.range = function (u, min, max) {
        if (min === null || max === null || !isFinite(min)) return [0, 1];
        var span = max - min;
        var pad = Math.max(span * 0.12, Math.abs(max) * 0.004, opts.yKind === 'count' ? 1 : 1e-4);
        var lo = min - pad, hi = max + pad;
        if (opts.yKind === 'rate') { lo = Math.max(0, lo); hi = Math.min(1, hi); if (hi <= lo) { lo = Math.max(0, lo - 0.01); hi = Math.min(1, hi + 0.01); } }
        if (opts.yKind === 'count') { lo = Math.max(0, lo); }
        return [lo, hi];
      };
    }

    var series = [{
      label: opts.xLabel || 'Release',
      value: function (u, v) { return v === null || v === undefined ? DASH : str(labels[v]); },
    }];
    opts.series.forEach(function (s) {
      series.push({
        label: s.label,
        stroke: s.color,
        width: s.dash ? 1.5 : 2,
        dash: s.dash || undefined,
        spanGaps: !s.gaps,
        points: { show: true, size: 7, stroke: s.color, fill: '#fff', width: 2 },
        value: function (u, v) { return v === null || v === undefined ? DASH : (s.fmt || yFmt)(v); },
      });
    });

    function afterDraw(u) {
      // Count the points uPlot placed inside the plot, for the tests and the figure's title.
      var pr = (window.uPlot && window.uPlot.pxRatio) || 1;
      var w = u.bbox.width / pr + 1, hgt = u.bbox.height / pr + 1;
      var count = 0;
      for (var si = 1; si < u.data.length; si++) {
        var ys = u.data[si];
        for (var k = 0; k < ys.length; k++) {
          if (ys[k] === null) continue;
          var px = u.valToPos(k, 'x'), py = u.valToPos(ys[k], 'y');
          if (px >= -1 && px <= w && py >= -1 && py <= hgt) count++;
        }
      }
      wrap.setAttribute('data-points', String(count));
      // Change point markers: DOM elements over the plot (a line and a diamond on the point).
      var old = u.over.querySelectorAll('.cp-line, .cp-marker');
      for (var j = 0; j < old.length; j++) old[j].remove();
      var marks = 0;
      if (opts.cps) {
        for (var x = 0; x < n; x++) {
          if (!opts.cps[x]) continue;
          var lx = u.valToPos(x, 'x');
          var line = h('div', { class: 'cp-line' });
          line.style.left = lx + 'px';
          u.over.appendChild(line);
          var y = data[1][x];
          var m = h('div', { class: 'cp-marker' + (opts.onPoint ? ' clickable' : ''), testid: 'cp-marker', 'data-x': String(x), title: opts.cpText ? opts.cpText(x) : 'change point' });
          if (opts.onPoint) m.addEventListener('click', (function (xi) { return function (ev) { ev.stopPropagation(); opts.onPoint(xi); }; })(x));
          m.style.left = lx + 'px';
          m.style.top = (y === null ? 8 : u.valToPos(y, 'y')) + 'px';
          u.over.appendChild(m);
          marks++;
        }
      }
      wrap.setAttribute('data-cp-markers', String(marks));
      // Status markers (the case page): a release whose status is not PASS, on its point or, when
      // the point is missing (nothing measured), at the top of the plot.
      var old2 = u.over.querySelectorAll('.st-marker');
      for (var j2 = 0; j2 < old2.length; j2++) old2[j2].remove();
      var stMarks = 0;
      (opts.marks || []).forEach(function (mk) {
        var yv = data[1][mk.x];
        var el = h('div', { class: 'st-marker ' + statusClass(mk.status).replace('st ', ''), testid: 'status-marker', 'data-status': mk.status, title: mk.text }, mk.status.charAt(0));
        el.style.left = u.valToPos(mk.x, 'x') + 'px';
        el.style.top = (yv === null || yv === undefined ? 10 : u.valToPos(yv, 'y')) + 'px';
        u.over.appendChild(el);
        stMarks++;
      });
      wrap.setAttribute('data-status-markers', String(stMarks));
    }

    var axes = [
      {
        stroke: '#555',
        space: 64,
        incrs: [1, 2, 3, 4, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 5000],
        values: function (u2, splits) {
          return splits.map(function (v) { return Number.isInteger(v) && v >= 0 && v < n ? str(labels[v]) : ''; });
        },
        grid: { show: false },
        ticks: { show: true, size: 4 },
      },
      {
        stroke: '#555',
        size: 64,
        values: function (u2, splits) {
          // On a log axis: decades, and 2 and 5 too when the axis spans two decades or less.
          var few = splits.length > 1 && Math.log10(splits[splits.length - 1] / splits[0]) <= 2;
          var labelsOut = splits.map(function (v) {
            if (opts.yKind === 'log') {
              var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
              var one = Math.abs(m - 1) < 1e-6, mid = Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6;
              if (!one && !(few && mid)) return '';
            }
            return yFmt(v);
          });
          // Labels that differ: more digits while two ticks read the same ("2 µs, 2 µs").
          if (opts.yKind !== 'log' && opts.yFmtDigits) {
            for (var d = 3; d <= 9 && !distinct(labelsOut); d++) {
              labelsOut = splits.map(function (v) { return opts.yFmtDigits(v, d); });
            }
          }
          wrap.setAttribute('data-y-labels', labelsOut.filter(Boolean).join('|'));  // for tests
          return labelsOut;
        },
        grid: { stroke: '#eceff1', width: 1 },
        ticks: { show: true, size: 4, stroke: '#cfd8dc' },
      },
    ];
    var yAxis = axes[1];
    if (opts.yKind === 'count') yAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8];
    wrap.setAttribute('data-series', opts.series.map(function (s) { return s.label; }).join(','));
    var width = Math.max(260, holder.clientWidth || parent.clientWidth || 400);
    var height = opts.height || 210;
    var u = new window.uPlot({
      width: width,
      height: height,
      scales: {
        x: { time: false, range: function () { return [-0.5, Math.max(0.5, n - 0.5)]; } },
        y: yScale,
      },
      axes: axes,
      series: series,
      cursor: { drag: { x: false, y: false, setScale: false } },
      legend: { show: true, live: true },
      hooks: { draw: [afterDraw] },
    }, data, holder);
    // A click on the plot opens the point under the cursor (the overview: its release's page).
    if (opts.onPoint) {
      u.over.classList.add('clickable');
      u.over.setAttribute('title', 'Click a point to open its release');
      u.over.addEventListener('click', function () {
        var i = u.cursor.idx;
        if (i !== null && i !== undefined && i >= 0 && i < n) opts.onPoint(i);
      });
    }
    var entry = { u: u, holder: holder, height: height };
    state.charts.push(entry);
    return entry;
  }

  function distinct(labels) {
    var seen = Object.create(null);
    for (var i = 0; i < labels.length; i++) {
      if (!labels[i]) continue;
      if (seen[labels[i]]) return false;
      seen[labels[i]] = 1;
    }
    return true;
  }

  function resizeCharts() {
    state.charts.forEach(function (c) {
      var w = Math.max(260, c.holder.clientWidth);
      if (Math.abs(w - c.u.width) > 2) c.u.setSize({ width: w, height: c.height });
    });
  }

  // A small SVG sparkline; nulls are gaps.
  function sparkline(values, color, kind) {
    var W = 120, H = 26, P = 3;
    var nums = values.filter(isNum);
    var s = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, class: 'spark', 'data-testid': 'sparkline', role: 'img' });
    if (!nums.length) return s;
    var lo = Math.min.apply(null, nums), hi = Math.max.apply(null, nums);
    if (kind === 'rate') { lo = Math.min(lo, hi - 0.01); }
    if (hi - lo < 1e-9) { lo -= 0.5; hi += 0.5; }
    var n = values.length;
    var X = function (i) { return n === 1 ? W / 2 : P + (i * (W - 2 * P)) / (n - 1); };
    var Y = function (v) { return H - P - ((v - lo) * (H - 2 * P)) / (hi - lo); };
    var seg = [];
    var flushSeg = function () {
      if (seg.length > 1) s.appendChild(svg('polyline', { points: seg.join(' '), fill: 'none', stroke: color, 'stroke-width': 1.5 }));
      seg = [];
    };
    var last = -1;
    values.forEach(function (v, i) {
      if (!isNum(v)) { flushSeg(); return; }
      seg.push(X(i).toFixed(1) + ',' + Y(v).toFixed(1));
      last = i;
    });
    flushSeg();
    if (last >= 0) s.appendChild(svg('circle', { cx: X(last).toFixed(1), cy: Y(values[last]).toFixed(1), r: 2.5, fill: color }));
    return s;
  }

  // ------------------------------------------------------------------------------------------
  // Tables

  // rows: objects; columns: [{label, cls, cell(row) -> Node|string, title}]
  function table(columns, rows, opts) {
    opts = opts || {};
    var thead = h('thead', null, h('tr', null, columns.map(function (c) {
      return h('th', { class: c.cls || null, title: c.title || null, scope: 'col' }, c.label);
    })));
    var tbody = h('tbody');
    rows.forEach(function (r, i) {
      var tr = h('tr', opts.rowProps ? opts.rowProps(r, i) : null, columns.map(function (c) {
        return h('td', { class: c.cls || null }, c.cell(r, i));
      }));
      tbody.appendChild(tr);
    });
    return h('div', { class: 'table-wrap' + (opts.wide ? ' wide' : '') },
      h('table', { class: 'grid', testid: opts.testid || null }, thead, tbody));
  }

  function pager(total, page, onPage, testid) {
    var pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    if (total <= PAGE_SIZE) return null;
    var from = page * PAGE_SIZE + 1, to = Math.min(total, (page + 1) * PAGE_SIZE);
    return h('div', { class: 'pager', testid: testid || 'pager' },
      h('button', { type: 'button', disabled: page <= 0, onclick: function () { onPage(0); } }, '\u00ab First'),
      h('button', { type: 'button', disabled: page <= 0, onclick: function () { onPage(page - 1); }, testid: 'page-prev' }, '\u2039 Previous'),
      h('span', { class: 'pager-info' }, fmtInt(from) + '\u2013' + fmtInt(to) + ' of ' + fmtInt(total) + ' (page ' + (page + 1) + ' of ' + pages + ')'),
      h('button', { type: 'button', disabled: page >= pages - 1, onclick: function () { onPage(page + 1); }, testid: 'page-next' }, 'Next \u203a'),
      h('button', { type: 'button', disabled: page >= pages - 1, onclick: function () { onPage(pages - 1); } }, 'Last \u00bb'));
  }

  function caseLink(gid, key) {
    return breakable('a', { href: caseHash(gid, key), class: 'key', testid: 'case-link' }, key);
  }

  // A row that opens `href` when clicked anywhere but on a link, a button or selected text.
  function clickableRow(href) {
    return function (ev) {
      var t = ev.target;
      while (t && t !== ev.currentTarget) {
        if (t.tagName === 'A' || t.tagName === 'BUTTON' || t.tagName === 'CODE') return;
        t = t.parentNode;
      }
      var sel = window.getSelection ? String(window.getSelection()) : '';
      if (sel) return;
      location.hash = href;
    };
  }

  function copyButton(text) {
    var b = h('button', { type: 'button', class: 'copy', title: 'Copy the command', testid: 'copy' }, 'Copy');
    b.addEventListener('click', function (ev) {
      ev.stopPropagation();
      var done = function (ok) {
        b.textContent = ok ? 'Copied' : 'Select and copy';
        setTimeout(function () { b.textContent = 'Copy'; }, 1500);
      };
      var fallback = function () {
        var code = b.previousSibling;
        try {
          var range = document.createRange();
          range.selectNodeContents(code);
          var sel = window.getSelection();
          sel.removeAllRanges();
          sel.addRange(range);
          done(document.execCommand && document.execCommand('copy'));
        } catch (e) { done(false); }
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
      } else fallback();
    });
    return b;
  }

  function repro(text, testid) {
    return h('span', { class: 'repro' }, breakable('code', { class: 'cmd', testid: testid || 'repro' }, text), copyButton(text));
  }

  function selectBox(label, testid, values, current, onChange, names) {
    var sel = h('select', { testid: testid, 'aria-label': label },
      h('option', { value: '' }, 'all'),
      values.map(function (v) { return h('option', { value: v }, names ? names(v) : v); }));
    sel.value = current && values.indexOf(current) >= 0 ? current : '';
    sel.addEventListener('change', function () { onChange(sel.value); });
    return h('label', { class: 'filter' }, h('span', null, label), sel);
  }

  function uniqueSorted(list) {
    var seen = Object.create(null), out = [];
    list.forEach(function (v) { if (v !== null && v !== undefined && !seen[v]) { seen[v] = 1; out.push(String(v)); } });
    return out.sort();
  }

  function section(title, testid) {
    var s = h('section', { class: 'card', testid: testid || null });
    if (title) s.appendChild(h('h2', null, title));
    return s;
  }

  function stat(label, value, testid, extra) {
    return h('div', { class: 'stat' + (extra ? ' ' + extra : '') }, h('div', { class: 'stat-label' }, label),
      h('div', { class: 'stat-value', testid: testid || null }, value));
  }

  // ------------------------------------------------------------------------------------------
  // Views

  function cpKinds(cp) {
    var k = [];
    if (cp && cp.speed) k.push('speed');
    if (cp && cp.pass) k.push('pass rate');
    if (cp && cp.fallback) k.push('fallback rate');
    if (cp && cp.breaks) k.push('graph breaks');
    return k;
  }

  // Overview: charts and the table of releases (or weeks).
  // Regressions by group (Note [Rollups] in harness/analysis/rollup.cpp): one op in one dtype and
  // mode, how many of its cases moved, the median change and its middle half, the worst case; a
  // failure's group is its op and error signature. `data` is {list, more}.
  function groupsTable(g, data, withKeys) {
    var list = arr(data && data.list);
    var more = (data && data.more) || {};
    var rows = [];
    GATES.forEach(function (gt) {
      list.forEach(function (x) { if (x.gate === gt) rows.push(x); });
      if (isNum(more[gt]) && more[gt] > 0) rows.push({ gate: gt, more: more[gt] });
    });
    return table([
      { label: 'Gate', cell: function (x) { return h('span', { class: 'gate gate-' + (GATES.indexOf(x.gate) >= 0 ? x.gate : 'other') }, str(x.gate)); } },
      { label: 'Group', cls: 'keycol', cell: function (x) {
        if (x.more) return h('span', { class: 'muted' }, fmtInt(x.more) + ' more groups');
        if (!withKeys) return h('code', null, str(x.group));
        var keys = arr(x.keys);
        return h('details', { class: 'cause-keys' }, h('summary', { testid: 'group-name' }, h('code', null, str(x.group))),
          h('ul', { class: 'keys' }, keys.map(function (k) { return h('li', null, caseLink(g.id, str(k))); }),
            x.moved > keys.length ? h('li', { class: 'muted' }, '\u2026 and ' + fmtInt(x.moved - keys.length) + ' more') : null));
      } },
      { label: 'Cases moved', cls: 'num', cell: function (x) { return x.more ? '' : h('span', { testid: 'group-moved' }, fmtInt(x.moved) + (isNum(x.cases) ? ' of ' + fmtInt(x.cases) : '')); } },
      { label: 'Change', cls: 'nowrap', cell: function (x) { return x.more ? '' : str(x.change); } },
      { label: 'Median', cls: 'num', cell: function (x) { return x.more ? '' : h('span', { testid: 'group-median' }, str(x.change_text) || DASH); } },
      { label: 'Worst case, or cause', cls: 'detail', cell: function (x) {
        if (x.more) return '';
        var keys = arr(x.keys);
        var what = x.cause ? h('span', null, str(x.cause)) : keys.length ? h('span', null, caseLink(g.id, str(keys[0])), ' ', str(x.worst_text)) : '';
        if (x.reopened) what = h('span', null, what, h('strong', { testid: 'group-reopened' }, ' open again: ' + fmtInt(x.reopened) + ' grew past their acknowledgement'));
        return x.waived ? h('span', null, what, ' (' + fmtInt(x.waived) + ' waived)') : what;
      } },
    ], rows, { testid: 'groups-table', rowProps: function (x) { return x.more ? { testid: 'group-more' } : { testid: 'group-row', 'data-group': str(x.group), 'data-moved': String(x.moved) }; } });
  }

  // Acknowledged regressions (gauntlet triage ack; Note [Triage]): apart from the open ones, each
  // with who acknowledged it, when and why. Null when there are none.
  function ackedTable(data) {
    var acked = arr(data && data.acked);
    if (!acked.length) return null;
    return h('div', { class: 'acked' },
      h('h3', null, 'Acknowledged (' + fmtInt(acked.reduce(function (a, x) { return a + (x.moved || 0); }, 0)) + ' regressions)'),
      table([
        { label: 'Gate', cell: function (x) { return h('span', { class: 'gate gate-' + (GATES.indexOf(x.gate) >= 0 ? x.gate : 'other') }, str(x.gate)); } },
        { label: 'Group', cls: 'keycol', cell: function (x) { return h('code', null, str(x.group)); } },
        { label: 'Cases', cls: 'num', cell: function (x) { return fmtInt(x.moved) + (isNum(x.cases) ? ' of ' + fmtInt(x.cases) : ''); } },
        { label: 'Change', cls: 'nowrap', cell: function (x) { return str(x.change) + (x.change_text ? ' ' + str(x.change_text) : ''); } },
        { label: 'Acknowledged', cls: 'detail', cell: function (x) {
          var a = x.ack || {};
          return h('span', { testid: 'ack-note' }, 'ack ' + str(a.id) + ' by ' + str(a.by) + ' on ' + fmtDate(a.at) + (a.until ? ', until ' + str(a.until) : '') + ': ' + str(a.note));
        } },
      ], acked, { testid: 'acked-table', rowProps: function (x) { return { testid: 'acked-row', 'data-group': str(x.group) }; } }));
  }

  function viewOverview(g, r, out) {
    var byWeek = state.axis === 'week';
    var rows = byWeek ? arr(g.weeks) : arr(g.releases);
    var labels = rows.map(function (x) { return byWeek ? x.week : x.release; });
    var releases = arr(g.releases);
    var last = releases[releases.length - 1];

    out.appendChild(h('h1', null, g.backend + ' / ' + g.suite,
      h('span', { class: 'sub' }, ' speed figures use the ' + (g.metric === 'host' ? 'host' : 'simulated') + ' time')));

    if (!rows.length) {
      out.appendChild(h('p', { class: 'muted', testid: 'no-releases' }, 'This group has no release yet.'));
      return null;
    }
    var stats = h('div', { class: 'stats' },
      stat('Releases', h('span', { testid: 'release-count' }, String(releases.length))),
      stat('Weeks', h('span', { testid: 'week-count' }, String(arr(g.weeks).length))),
      stat('Latest', last ? last.release : DASH),
      stat('Cases (latest)', last ? fmtInt(last.cases) : DASH),
      stat('Pass rate (of the cases that ran)', last ? fmtPct(passRan(last)) : DASH, 'kpi-pass-rate'),
      stat('Ran', last ? fmtPct(last.ran_share) : DASH, 'kpi-ran'),
      stat('Fallback rate', last ? fmtPct(last.fallback_rate) : DASH),
      stat('Speed index', last ? fmtRatio(last.speed_index) : DASH),
      stat('Cases (all releases)', fmtInt(g.cases)));
    out.appendChild(stats);

    // The latest release's worst regressions by group, whatever the suite's index says.
    if (g.latest && g.latest.groups) {
      var latestRel = str(g.latest.release);
      var worst = section(null, 'latest-groups');
      worst.appendChild(h('h2', null, 'Worst regressions in ' + latestRel, h('span', { class: 'sub' }, ' against ' + str(g.latest.baseline))));
      if (!arr(g.latest.groups.list).length) worst.appendChild(h('p', { class: 'muted', testid: 'no-latest-groups' }, arr(g.latest.groups.acked).length ? 'No open regression.' : 'No regression.'));
      else {
        worst.appendChild(groupsTable(g, g.latest.groups, false));
        worst.appendChild(h('p', null, h('a', { href: releaseHash(g.id, latestRel), testid: 'latest-groups-link' }, 'Every regression of ' + latestRel + ', case by case \u2192')));
      }
      add(worst, ackedTable(g.latest.groups));
      out.appendChild(worst);
    }

    // Change points, in words.
    var cps = [];
    rows.forEach(function (x, i) {
      cpKinds(x.change_point).forEach(function (kind) { cps.push({ i: i, kind: kind, row: x }); });
    });
    // The release a change point opens: per week, the week's release that is the change point.
    var CP_KEYS = { 'speed': 'speed', 'pass rate': 'pass', 'fallback rate': 'fallback', 'graph breaks': 'breaks' };
    var cpRelease = function (c) {
      if (!byWeek) return str(c.row.release);
      var hit = null;
      releases.forEach(function (rel) { if (rel.week === c.row.week && rel.change_point && rel.change_point[CP_KEYS[c.kind]]) hit = rel; });
      return str((hit || c.row).release);
    };
    var cpBox = section('Change points', 'change-points');
    cpBox.setAttribute('data-count', String(cps.length));
    if (!cps.length) cpBox.appendChild(h('p', { class: 'muted' }, 'No change point in these ' + (byWeek ? 'weeks' : 'releases') + '.'));
    else {
      cpBox.appendChild(h('ul', { class: 'cp-list' }, cps.map(function (c) {
        var prev = c.i > 0 ? rows[c.i - 1] : null;
        var step = function (f, fmt) { return (prev ? fmt(f(prev)) + ' \u2192 ' : '') + fmt(f(c.row)); };
        var what = c.kind === 'speed' ? 'speed index ' + step(function (x) { return x.speed_index; }, fmtRatio)
          : c.kind === 'pass rate' ? 'pass rate ' + step(passRan, fmtPct)
          : c.kind === 'fallback rate' ? 'fallback rate ' + step(function (x) { return x.fallback_rate; }, fmtPct)
          : 'graph breaks ' + step(function (x) { return x.graph_breaks; }, fmtInt);
        return h('li', { testid: 'cp-item' }, h('span', { class: 'cp-dot', 'aria-hidden': 'true' }, '\u25c6'),
          h('strong', null, c.kind), ' change at ', h('strong', null, labels[c.i]),
          byWeek ? null : ' (' + fmtDate(c.row.started_at) + ')', ': ', what, ' ',
          h('a', { href: releaseHash(g.id, cpRelease(c)), testid: 'cp-link' }, 'what changed in ' + cpRelease(c) + ' \u2192'));
      })));
    }

    var grid = h('div', { class: 'charts' });
    out.appendChild(grid);
    out.appendChild(cpBox);

    var pick = function (f) { return rows.map(function (x) { return x[f]; }); };
    var cpOf = function (f) { return rows.map(function (x) { return !!(x.change_point && x.change_point[f]); }); };
    var xLabel = byWeek ? 'Week' : 'Release';
    // Note [Change points on every series]: each chart marks its own series' change points.
    var charts = [
      { id: 'pass_rate', title: 'Pass rate of the cases that ran, and the share that ran', values: rows.map(passRan), color: COLORS.pass, fmt: fmtPct, kind: 'rate', cps: cpOf('pass'), what: 'pass rate',
        more: [{ label: 'ran', values: pick('ran_share'), color: COLORS.ran, fmt: fmtPct }] },
      { id: 'speed_index', title: 'Speed index (time vs the first release; lower is faster)', values: pick('speed_index'), color: COLORS.speed, fmt: fmtRatio, kind: 'ratio', cps: cpOf('speed'), what: 'speed' },
      { id: 'fallback_rate', title: 'Fallback rate', values: pick('fallback_rate'), color: COLORS.fallback, fmt: fmtPct, kind: 'rate', cps: cpOf('fallback'), what: 'fallback rate' },
      { id: 'graph_breaks', title: 'Graph breaks', values: pick('graph_breaks'), color: COLORS.breaks, fmt: fmtInt, kind: 'count', cps: cpOf('breaks'), what: 'graph breaks',
        unmeasured: 'Not measured: no case of ' + (byWeek ? 'this week' : 'this release') + ' ran the compile path' },
    ];
    var render = function () {
      var slots = charts.map(function (c) { return chartSlot(grid, c.id, c.title); });
      charts.forEach(function (c, k) {
        // Unmeasured points are gaps, never zeros; a series never measured says so.
        var gaps = c.values.filter(function (v) { return !isNum(v); }).length;
        if (c.unmeasured && gaps) {
          slots[k].wrap.appendChild(h('p', { class: 'note', testid: 'not-measured' }, gaps === c.values.length
            ? c.unmeasured.replace(/this (week|release)/, 'any ' + (byWeek ? 'week' : 'release')) + '.'
            : fmtInt(gaps) + ' of ' + fmtInt(c.values.length) + ' ' + (byWeek ? 'weeks' : 'releases') + ' not measured (no case ran the compile path): gaps in the line.'));
        }
        lineChart(slots[k], {
          labels: labels, xLabel: xLabel, yFmt: c.fmt, yKind: c.kind,
          series: [{ label: c.title.replace(/ (\(|of ).*/, ''), values: c.values, color: c.color, fmt: c.fmt }].concat(c.more || []),
          cps: c.cps,
          cpText: function (i) { return c.what + ' change point at ' + labels[i] + ': click for what changed'; },
          onPoint: function (i) { if (rows[i]) location.hash = releaseHash(g.id, str(rows[i].release)); },
        });
      });
    };

    // The table, newest first.
    var tableRows = rows.map(function (x, i) { return { x: x, i: i }; }).reverse();
    var cpCell = function (row) {
      var k = cpKinds(row.x.change_point);
      return k.length ? h('span', { class: 'cp-badge', testid: 'cp-badge' }, '\u25c6 ' + k.join(', ')) : '';
    };
    var rowProps = function (row) {
      var k = cpKinds(row.x.change_point);
      return { class: (k.length ? 'cp-row ' : '') + 'clickable', testid: byWeek ? 'week-row' : 'release-row', 'data-change-point': k.length ? k.join(',') : null,
        onclick: clickableRow(releaseHash(g.id, str(row.x.release))) };
    };
    var tbl;
    if (!byWeek) {
      tbl = table([
        { label: 'Release', cell: function (r2) { return h('a', { href: releaseHash(g.id, str(r2.x.release)), testid: 'release-link' }, h('strong', null, r2.x.release)); } },
        { label: 'Date', cls: 'nowrap', cell: function (r2) { return h('span', { title: str(r2.x.started_at) }, fmtDate(r2.x.started_at)); } },
        { label: 'Backend', cls: 'nowrap', cell: function (r2) { return str(r2.x.backend_version); } },
        { label: 'Cases', cls: 'num', cell: function (r2) { return fmtInt(r2.x.cases); } },
        { label: 'Pass rate', cls: 'num', title: 'PASS of the cases that ran (PASS, FAIL, ERROR, CRASH, TIMEOUT, XPASS)', cell: function (r2) { return fmtPct(passRan(r2.x)); } },
        { label: 'Ran', cls: 'num', title: 'the share of cases that ran (not UNSUPPORTED, SKIP or XFAIL)', cell: function (r2) { return fmtPct(r2.x.ran_share); } },
        { label: 'Fallback', cls: 'num', cell: function (r2) { return fmtPct(r2.x.fallback_rate); } },
        { label: 'Graph breaks', cls: 'num', cell: function (r2) { return isNum(r2.x.graph_breaks) ? fmtInt(r2.x.graph_breaks) : h('span', { class: 'muted', title: 'not measured: no case ran the compile path' }, DASH); } },
        { label: 'Time vs prev. [95% CI]', cls: 'num', title: 'geomean time ratio against the previous release; above 1 is slower', cell: function (r2) {
          var s = r2.x.speed;
          if (!s) return DASH;
          var cls = s.ratio > 1.02 && s.lo > 1 ? 'worse' : s.ratio < 0.98 && s.hi < 1 ? 'better' : null;
          return h('span', { class: cls, title: 'over ' + fmtInt(s.n) + ' cases' }, fmtCI(s));
        } },
        { label: 'Speed index', cls: 'num', cell: function (r2) { return fmtRatio(r2.x.speed_index); } },
        { label: 'Acc. regr.', title: 'accuracy regressions vs the previous release', cls: 'num', cell: function (r2) { return r2.x.regressions ? regCount(r2.x.regressions.accuracy) : DASH; } },
        { label: 'Speed regr.', title: 'speed regressions vs the previous release', cls: 'num', cell: function (r2) { return r2.x.regressions ? regCount(r2.x.regressions.speed) : DASH; } },
        { label: 'Cov. regr.', title: 'coverage regressions vs the previous release', cls: 'num', cell: function (r2) { return r2.x.regressions ? regCount(r2.x.regressions.coverage) : DASH; } },
        { label: 'Change point', cell: cpCell },
      ], tableRows, { testid: 'releases-table', rowProps: rowProps });
    } else {
      tbl = table([
        { label: 'Week', cell: function (r2) { return h('strong', null, r2.x.week); } },
        { label: 'Starts', cell: function (r2) { return str(r2.x.start); } },
        { label: 'Last release', cell: function (r2) { return h('a', { href: releaseHash(g.id, str(r2.x.release)), testid: 'release-link' }, str(r2.x.release)); } },
        { label: 'Releases', cls: 'num', cell: function (r2) { return fmtInt(r2.x.releases); } },
        { label: 'Pass rate', cls: 'num', cell: function (r2) { return fmtPct(passRan(r2.x)); } },
        { label: 'Ran', cls: 'num', cell: function (r2) { return fmtPct(r2.x.ran_share); } },
        { label: 'Fallback', cls: 'num', cell: function (r2) { return fmtPct(r2.x.fallback_rate); } },
        { label: 'Graph breaks', cls: 'num', cell: function (r2) { return isNum(r2.x.graph_breaks) ? fmtInt(r2.x.graph_breaks) : h('span', { class: 'muted' }, DASH); } },
        { label: 'Speed index', cls: 'num', cell: function (r2) { return fmtRatio(r2.x.speed_index); } },
        { label: 'Change point', cell: cpCell },
      ], tableRows, { testid: 'weeks-table', rowProps: rowProps });
    }
    var tsec = section(byWeek ? 'Weeks' : 'Releases', 'releases-section');
    tsec.appendChild(tbl);
    out.appendChild(tsec);
    return render;  // charts draw once `out` is in the document (they need its width)
  }

  // The pass rate of the cases that ran (data of an older exporter: of every case).
  // null when no case ran (every one UNSUPPORTED, say).
  function passRan(x) {
    if (!x) return null;
    if (Object.prototype.hasOwnProperty.call(x, 'pass_rate_ran')) return isNum(x.pass_rate_ran) ? x.pass_rate_ran : null;
    return isNum(x.pass_rate) ? x.pass_rate : null;
  }

  function regCount(n) {
    return isNum(n) && n > 0 ? h('span', { class: 'worse' }, fmtInt(n)) : fmtInt(n);
  }

  // Latest release against its baseline: the newest release's page.
  function viewLatest(g, r, out, seq) {
    if (!g.latest) {
      out.appendChild(h('h1', null, 'Latest release'));
      out.appendChild(h('p', { class: 'muted', testid: 'no-baseline' }, 'This group has only one release: there is nothing to compare it with.'));
      return Promise.resolve();
    }
    return viewReleaseAt(g, r, out, seq, arr(g.releases).length - 1, true);
  }

  // Any release against the one before it (#/<group>/release/<name>).
  function viewRelease(g, r, out, seq) {
    var rels = arr(g.releases);
    var idx = -1;
    rels.forEach(function (x, i) { if (str(x.release) === r.arg) idx = i; });
    var back = h('p', { class: 'crumb' }, h('a', { href: hashFor(g.id, 'overview') }, 'Overview'), ' / release');
    if (idx < 0) {
      out.appendChild(back);
      out.appendChild(h('h1', null, 'Release not found'));
      out.appendChild(h('p', { testid: 'release-missing' }, 'No release ', h('code', null, r.arg), ' in ' + g.backend + ' / ' + g.suite + '.'));
      return Promise.resolve();
    }
    if (idx === 0 || !rels[idx].regressions) {
      out.appendChild(back);
      out.appendChild(h('h1', null, 'Release ', h('span', { testid: 'release-name' }, str(rels[idx].release))));
      out.appendChild(releaseNav(g, idx));
      out.appendChild(h('p', { class: 'muted', testid: 'release-not-judged' }, idx === 0
        ? 'The first release of this history: there is no release before it to compare it with.'
        : 'This release was not compared with the one before it: the site compares the newest pairs of releases only (gauntlet dashboard --compare-pairs). Its cases are in the case list; each case page has its history.'));
      return Promise.resolve();
    }
    return viewReleaseAt(g, r, out, seq, idx, idx === rels.length - 1);
  }

  // Links to the releases before and after, where they have pages.
  function releaseNav(g, idx) {
    var rels = arr(g.releases);
    var link = function (j, text, testid) {
      if (j < 0 || j >= rels.length) return null;
      return h('a', { href: releaseHash(g.id, str(rels[j].release)), testid: testid }, text.replace('%', str(rels[j].release)));
    };
    return h('p', { class: 'release-nav' }, link(idx - 1, '\u2190 %', 'release-prev'), idx > 0 && idx + 1 < rels.length ? ' \u00b7 ' : null,
      link(idx + 1, '% \u2192', 'release-next'));
  }

  function viewReleaseAt(g, r, out, seq, idx, isLatest) {
    return loadData(g.id + '/releases/' + idx).then(function (d) {
      if (seq !== state.seq) return;
      var regs = arr(d.regressions);
      var cand = d.candidate || {}, base = d.baseline || {};
      out.appendChild(h('p', { class: 'crumb' }, h('a', { href: hashFor(g.id, 'overview') }, 'Overview'), ' / release'));
      out.appendChild(h('h1', null, 'Release ', h('span', { testid: isLatest ? 'latest-release' : 'release-name' }, str(cand.release)),
        h('span', { class: 'sub' }, ' against ' + (isLatest ? 'its baseline ' : 'the release before it, ') + str(base.release))));
      out.appendChild(releaseNav(g, idx));
      var counts = d.counts || {};
      out.appendChild(h('div', { class: 'stats' },
        stat('Time vs baseline [95% CI]', fmtCI(d.geomean), 'geomean', d.geomean && d.geomean.ratio > 1.02 && d.geomean.lo > 1 ? 'bad' : null),
        stat('Cases timed', d.geomean ? fmtInt(d.geomean.n) : DASH),
        GATES.map(function (gt) { return stat(gt.charAt(0).toUpperCase() + gt.slice(1) + ' regressions', fmtInt(counts[gt] || 0), 'gate-count-' + gt, counts[gt] ? 'bad' : null); }),
        stat('Missing cases', fmtInt(d.missing_total), 'missing-count', d.missing_total ? 'bad' : null),
        stat('Still failing', fmtInt(d.still_failing_total), 'still-failing-count', d.still_failing_total ? 'bad' : null),
        stat('Fixed', fmtInt(d.fixes_total), 'fixed-count'),
        // Throughput (candidate, and its ratio to the baseline) and cost per million, per unit.
        arr(d.throughput).map(function (t) {
          var unit = str(t.unit);
          var tp = stat('Throughput, ' + unit + '/s [vs baseline]', fmtRate(t.candidate_per_s) + ' ' + fmtCI(t.ratio), 'throughput-' + unit,
            t.ratio && t.ratio.hi < 1 ? 'bad' : null);
          if (!isNum(t.candidate_cost_per_million)) return tp;
          return [tp, stat('Cost per million ' + unit + ' [vs baseline]', fmtCost(t.candidate_cost_per_million) + ' ' + fmtCI(t.cost_ratio),
            'cost-' + unit, t.cost_ratio && t.cost_ratio.lo > 1 ? 'bad' : null)];
        })));

      // Note [Rollups]: the regressions by group and the failures by cause first, case by case after.
      var grp = section('Regressions by group', 'groups');
      if (!arr(d.groups && d.groups.list).length) grp.appendChild(h('p', { class: 'muted', testid: 'no-groups' }, arr(d.groups && d.groups.acked).length ? 'No open regressions.' : 'No regressions.'));
      else {
        grp.appendChild(h('p', { class: 'muted' }, 'One op (model, collective) in one dtype and mode; a failure\u2019s group is its op and error. Worst first in each gate: most cases moved, then the largest median change. Open a group for its cases.'));
        grp.appendChild(groupsTable(g, d.groups, true));
      }
      add(grp, ackedTable(d.groups));
      out.appendChild(grp);
      out.appendChild(causesSection(g, d));

      // Filters and the regression table.
      var p = r.params;
      var f = { gate: p.get('gate') || '', family: p.get('family') || '', dtype: p.get('dtype') || '', mode: p.get('mode') || '', status: p.get('status') || '', q: p.get('q') || '', page: Math.max(0, parseInt(p.get('page') || '0', 10) || 0) };
      var facets = g.facets || {};
      var values = function (field, fromFacets) { return uniqueSorted(arr(fromFacets).concat(regs.map(function (x) { return x[field]; }))); };
      var sec = section('Regressions', 'regressions');
      if (isNum(d.regressions_total) && d.regressions_total > regs.length) {
        sec.appendChild(h('p', { class: 'note', testid: 'regressions-cut' }, 'The list holds the first ' + fmtInt(regs.length) + ' of ' + fmtInt(d.regressions_total) + ' regressions.'));
      }
      var countBox = h('span', { class: 'count', testid: 'regression-count' });
      var search = h('input', { type: 'search', placeholder: 'Search keys', testid: 'regression-search', 'aria-label': 'Search regression keys', value: f.q });
      var body = h('div');
      var update = function () {
        var params = new URLSearchParams();
        ['gate', 'family', 'dtype', 'mode', 'status', 'q'].forEach(function (k) { if (f[k]) params.set(k, f[k]); });
        if (f.page) params.set('page', String(f.page));
        replaceQuery(params);
        var q = f.q.toLowerCase();
        var rows = regs.filter(function (x) {
          return (!f.gate || x.gate === f.gate) && (!f.family || x.family === f.family) && (!f.dtype || x.dtype === f.dtype) &&
            (!f.mode || x.mode === f.mode) && (!f.status || str(x.status) === f.status) && (!q || str(x.key).toLowerCase().indexOf(q) >= 0);
        });
        var pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
        if (f.page >= pages) f.page = pages - 1;
        countBox.textContent = rows.length === regs.length ? fmtInt(rows.length) + ' regressions' : fmtInt(rows.length) + ' of ' + fmtInt(regs.length) + ' regressions';
        countBox.setAttribute('data-count', String(rows.length));
        clear(body);
        if (!rows.length) { body.appendChild(h('p', { class: 'muted', testid: 'no-regressions' }, regs.length ? 'No regression matches these filters.' : 'No regressions.')); return; }
        var pageRows = rows.slice(f.page * PAGE_SIZE, (f.page + 1) * PAGE_SIZE);
        var pg = function (n) { f.page = n; update(); };
        add(body, pager(rows.length, f.page, pg, 'regressions-pager'));
        body.appendChild(table([
          { label: 'Gate', cell: function (x) { return h('span', { class: 'gate gate-' + (GATES.indexOf(x.gate) >= 0 ? x.gate : 'other') }, str(x.gate)); } },
          { label: 'Change', cls: 'nowrap', cell: function (x) { return str(x.change); } },
          { label: 'Key', cls: 'keycol', cell: function (x) { return caseLink(g.id, str(x.key)); } },
          { label: 'Detail', cls: 'detail', cell: function (x) { return str(x.detail); } },
          { label: 'Ratio', cls: 'num', cell: function (x) { return isNum(x.ratio) ? fmtRatio(x.ratio) : DASH; } },
          { label: 'Family', cell: function (x) { return str(x.family); } },
          { label: 'Dtype', cell: function (x) { return str(x.dtype); } },
          { label: 'Mode', cell: function (x) { return str(x.mode); } },
          { label: 'Status', cell: function (x) { return statusBadge(x.status); } },
          { label: 'Repro', cls: 'reprocol', cell: function (x) { return repro(typeof x.repro === 'string' && x.repro ? x.repro : reproCommand(str(x.key), g, latestRunId(g))); } },
        ], pageRows, {
          testid: 'regressions-table',
          rowProps: function (x) { return { class: 'clickable', testid: 'regression-row', onclick: clickableRow(caseHash(g.id, str(x.key))) }; },
        }));
        add(body, pager(rows.length, f.page, pg, 'regressions-pager-bottom'));
      };
      var setF = function (k) { return function (v) { f[k] = v; f.page = 0; update(); }; };
      var timer = null;
      search.addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () { f.q = search.value; f.page = 0; update(); }, 120);
      });
      sec.appendChild(h('div', { class: 'filters' },
        selectBox('Gate', 'filter-gate', uniqueSorted(GATES.concat(regs.map(function (x) { return x.gate; }))), f.gate, setF('gate')),
        selectBox('Family', 'filter-family', values('family', facets.family), f.family, setF('family')),
        selectBox('Dtype', 'filter-dtype', values('dtype', facets.dtype), f.dtype, setF('dtype')),
        selectBox('Mode', 'filter-mode', values('mode', facets.mode), f.mode, setF('mode')),
        selectBox('Status', 'filter-status', values('status', facets.status), f.status, setF('status')),
        h('label', { class: 'filter search' }, h('span', null, 'Key'), search),
        countBox));
      sec.appendChild(body);
      out.appendChild(sec);
      update();

      var miss = section('Missing cases', 'missing');
      var missing = arr(d.missing);
      if (!missing.length) miss.appendChild(h('p', { class: 'muted' }, 'None: every case of the baseline ran in this release.'));
      else {
        miss.appendChild(h('p', { class: 'muted' }, 'In ' + str(base.release) + ' but not in ' + str(cand.release) + ': ' + fmtInt(d.missing_total) + (d.missing_total > missing.length ? ' (the first ' + fmtInt(missing.length) + ' listed)' : '') + '.'));
        miss.appendChild(h('ul', { class: 'keys' }, missing.map(function (k) { return h('li', { testid: 'missing-row' }, caseLink(g.id, str(k))); })));
      }
      out.appendChild(miss);

      var nf = section('New fallback ops', 'new-fallbacks');
      var nfs = arr(d.new_fallbacks);
      if (!nfs.length) nf.appendChild(h('p', { class: 'muted' }, 'No op started to fall back to the CPU.'));
      else {
        nf.appendChild(table([
          { label: 'Op', cell: function (x) { return h('code', null, str(x.op)); } },
          { label: 'Cases', cls: 'num', cell: function (x) { return fmtInt(x.cases); } },
        ], nfs, { testid: 'new-fallbacks-table' }));
      }
      out.appendChild(nf);
      out.appendChild(fixesSection(g, d, base, cand));
    });
  }

  // Failures grouped by cause (Note [Release pages]): the new ones and those failing in both.
  function causesSection(g, d) {
    var causes = arr(d.causes);
    var sec = section('Failures by cause', 'causes');
    if (!causes.length) {
      sec.appendChild(h('p', { class: 'muted', testid: 'no-causes' }, 'No case fails in this release.'));
      return sec;
    }
    sec.appendChild(h('p', { class: 'muted' }, 'Failing cases of this release with the same op, status and error (its numbers aside), one row each: '
      + fmtInt(causes.length) + ' causes' + (isNum(d.causes_total) && d.causes_total > causes.length ? ' of ' + fmtInt(d.causes_total) : '') + '.'));
    sec.appendChild(pagedRows(causes, function (rows) {
      return table([
        { label: 'Op', cell: function (x) { return h('code', null, str(x.op)); } },
        { label: 'Status', cell: function (x) { return statusBadge(x.status); } },
        { label: 'Error (first case)', cls: 'errtext', cell: function (x) { return x.message ? h('pre', { class: 'err' }, str(x.message)) : h('span', { class: 'muted' }, 'no error text'); } },
        { label: 'New', cls: 'num', title: 'cases that did not fail in the release before', cell: function (x) { return regCount(x.new); } },
        { label: 'Still failing', cls: 'num', title: 'cases that failed in the release before too', cell: function (x) { return fmtInt(x.still); } },
        { label: 'Cases', cls: 'num', cell: function (x) {
          var keys = arr(x.keys);
          return h('details', { class: 'cause-keys' }, h('summary', { testid: 'cause-count' }, fmtInt(x.count)),
            h('ul', { class: 'keys' }, keys.map(function (k) { return h('li', null, caseLink(g.id, str(k))); }),
              x.count > keys.length ? h('li', { class: 'muted' }, '\u2026 and ' + fmtInt(x.count - keys.length) + ' more') : null));
        } },
        { label: 'Repro (first case)', cls: 'reprocol', cell: function (x) { return repro(str(x.repro)); } },
      ], rows, { testid: 'causes-table', rowProps: function (x) { return { testid: 'cause-row', 'data-count': String(x.count), 'data-new': String(x.new) }; } });
    }));
    return sec;
  }

  function fixesSection(g, d, base, cand) {
    var fixes = arr(d.fixes);
    var sec = section('Fixed', 'fixes');
    if (!fixes.length) {
      sec.appendChild(h('p', { class: 'muted', testid: 'no-fixes' }, 'No case that failed in ' + str(base.release) + ' passes in ' + str(cand.release) + '.'));
      return sec;
    }
    if (isNum(d.fixes_total) && d.fixes_total > fixes.length) sec.appendChild(h('p', { class: 'note' }, 'The first ' + fmtInt(fixes.length) + ' of ' + fmtInt(d.fixes_total) + '.'));
    sec.appendChild(pagedRows(fixes, function (rows) {
      return table([
        { label: 'Key', cls: 'keycol', cell: function (x) { return caseLink(g.id, str(x.key)); } },
        { label: 'Change', cell: function (x) { return str(x.detail); } },
        { label: 'Status', cell: function (x) { return statusBadge(x.status); } },
      ], rows, { testid: 'fixes-table', rowProps: function () { return { testid: 'fix-row' }; } });
    }));
    return sec;
  }

  // Finds a key in the index: binary search (keys are sorted), then a scan as a fallback.
  function findKey(ix, key) {
    var keys = arr(ix.keys);
    var lo = 0, hi = keys.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (keys[mid] === key) return mid;
      if (keys[mid] < key) lo = mid + 1; else hi = mid - 1;
    }
    return keys.indexOf(key);
  }

  function caseFileName(g, n) { return g.id + '/cases/' + n; }

  // Case drill-down.
  function viewCase(g, r, out, seq) {
    var key = r.arg;
    return loadData(g.id + '/cases/index').then(function (ix) {
      if (seq !== state.seq) return null;
      var i = findKey(ix, key);
      if (i < 0) {
        out.appendChild(h('h1', null, 'Case not found'));
        out.appendChild(h('p', { testid: 'case-missing' }, 'No case ', h('code', null, key), ' in ' + g.backend + ' / ' + g.suite + '. ',
          h('a', { href: hashFor(g.id, 'cases', null, new URLSearchParams({ q: key })) }, 'Search the cases')));
        return null;
      }
      var per = isNum(ix.per_file) && ix.per_file > 0 ? ix.per_file : 500;
      var n = Math.floor(i / per);
      return loadData(caseFileName(g, n)).then(function (cf) {
        if (seq !== state.seq) return null;
        var cases = arr(cf.cases);
        var c = cases[i - (isNum(cf.first) ? cf.first : n * per)];
        if (!c || c.key !== key) c = cases.filter(function (x) { return x.key === key; })[0];
        if (!c) throw DataError('data/' + caseFileName(g, n) + '.js does not hold the case ' + key + ' that the index places there.');
        var fam = arr(ix.families)[arr(ix.family)[i]];
        var latestStatus = arr(ix.status)[i];
        return renderCase(g, out, c, cf, fam, latestStatus, r.params.get('release'));
      });
    });
  }

  // `release`: the release to mark in the history (a status grid cell's), or null.
  function renderCase(g, out, c, cf, family, latestStatus, release) {
    var rels = arr(cf.releases);
    var at = function (a, j) { var v = arr(a)[j]; return v === undefined ? null : v; };
    out.appendChild(h('p', { class: 'crumb' }, h('a', { href: hashFor(g.id, 'cases') }, 'Cases'), ' / case'));
    out.appendChild(h('h1', { class: 'case-title' }, breakable('code', { testid: 'case-key' }, c.key)));
    out.appendChild(h('div', { class: 'stats' },
      stat('Family', str(family) || DASH, 'case-family'),
      stat('Latest status', statusBadge(latestStatus || null), 'case-status'),
      stat('Releases run', fmtInt(arr(c.status).filter(function (s) { return s !== null; }).length)),
      stat('Time metric', g.metric === 'host' ? 'host median' : 'simulated')));
    var rp = section('Reproduce', 'case-repro-section');
    var lastRun = null;  // the latest release the case ran in
    var groupRels = arr(g.releases);  // the case file's columns, in the same order
    arr(c.status).forEach(function (st, j) { if (st !== null && groupRels[j] && groupRels[j].run_id) lastRun = groupRels[j].run_id; });
    rp.appendChild(h('p', null, repro(reproCommand(c.key, g, lastRun), 'case-repro')));
    out.appendChild(rp);

    var grid = h('div', { class: 'charts two' });
    out.appendChild(grid);

    var rows = rels.map(function (rel, j) { return { rel: rel, j: j }; }).reverse();
    var hsec = section('History', 'case-history');
    hsec.appendChild(table([
      { label: 'Release', cell: function (x) { return h('strong', null, str(x.rel)); } },
      { label: 'Status', cell: function (x) { return at(c.status, x.j) === null ? h('span', { class: 'muted' }, 'not run') : statusBadge(at(c.status, x.j)); } },
      { label: 'Time', cls: 'num', cell: function (x) { return fmtTime(at(c.time_us, x.j)); } },
      { label: 'vs previous', cls: 'num', cell: function (x) {
        var t = at(c.time_us, x.j), p = x.j > 0 ? at(c.time_us, x.j - 1) : null;
        if (!isNum(t) || !isNum(p) || p <= 0) return DASH;
        var q = t / p;
        return h('span', { class: q > 1.1 ? 'worse' : q < 0.9 ? 'better' : null }, '\u00d7' + q.toFixed(3));
      } },
      { label: 'max_abs_err', cls: 'num', cell: function (x) { return fmtErr(at(c.max_abs_err, x.j)); } },
      { label: 'max_rel_err', cls: 'num', cell: function (x) { return fmtErr(at(c.max_rel_err, x.j)); } },
      { label: 'Error', cls: 'errtext', cell: function (x) { var e = at(c.error, x.j); return e === null ? '' : h('pre', { class: 'err' }, String(e)); } },
    ], rows, { testid: 'case-history-table', rowProps: function (x) {
      var marked = release !== null && release !== undefined && str(x.rel) === release;
      return { testid: 'case-history-row', 'data-release': str(x.rel), 'data-marked': marked ? 'true' : null,
        class: [at(c.status, x.j) === null ? 'absent' : '', marked ? 'marked' : ''].join(' ').trim() || null };
    } }));
    out.appendChild(hsec);

    return function () {
      var val = function (a) { return rels.map(function (_, j) { return at(a, j); }); };
      // Status markers: every release the case did not PASS in (or did not run in).
      var marks = [];
      rels.forEach(function (rel, j) {
        var st = at(c.status, j);
        if (st !== null && st !== 'PASS') marks.push({ x: j, status: st, text: st + ' in ' + str(rel) });
      });
      var timeSlot = chartSlot(grid, 'case_time', 'Time (' + (g.metric === 'host' ? 'host' : 'simulated') + ')');
      lineChart(timeSlot, {
        labels: rels, yFmt: fmtTime, yFmtDigits: fmtTimeDigits, yKind: 'ratio', marks: marks,
        series: [{ label: 'time', values: val(c.time_us), color: COLORS.speed }],
      });
      // Errors on a log axis: only positive values can be drawn there; exact results (0) and
      // releases where nothing was compared (a CRASH: null) are gaps, and a case with no positive
      // error says so instead of drawing a linear axis under a "log" title.
      var abs = val(c.max_abs_err), rel = val(c.max_rel_err), tol = val(c.atol);
      var positive = abs.concat(rel).some(function (v) { return isNum(v) && v > 0; });
      var errSlot = chartSlot(grid, 'case_errors', positive ? 'Max errors (log scale), and the absolute tolerance' : 'Max errors');
      if (!positive) {
        var compared = abs.filter(isNum).length;
        errSlot.holder.appendChild(h('p', { class: 'muted', testid: 'errors-none' }, compared
          ? 'Every compared release matched the golden exactly (max errors 0): nothing to draw on a log scale.'
          : 'No release compared this case\'s outputs.'));
        return;
      }
      lineChart(errSlot, {
        labels: rels, yFmt: fmtErr, yKind: 'log', marks: marks,
        series: [
          { label: 'max_abs_err', values: abs, color: COLORS.fallback, gaps: true },
          { label: 'max_rel_err', values: rel, color: COLORS.rel, gaps: true },
          { label: 'atol', values: tol, color: '#455a64', dash: [6, 4], gaps: true },
        ],
      });
    };
  }

  // Lower-cased keys of an index, made once per index.
  var lowerKeys = new WeakMap();
  function lowered(ix) {
    var l = lowerKeys.get(ix);
    if (!l) { l = arr(ix.keys).map(function (k) { return String(k).toLowerCase(); }); lowerKeys.set(ix, l); }
    return l;
  }

  // Cases: search over the index, paginated.
  function viewCases(g, r, out, seq) {
    out.appendChild(h('h1', null, 'Cases', h('span', { class: 'sub' }, ' ' + fmtInt(g.cases) + ' in ' + g.backend + ' / ' + g.suite)));
    var wait = h('p', { class: 'loading' }, 'Loading the case index\u2026');
    out.appendChild(wait);
    return loadData(g.id + '/cases/index').then(function (ix) {
      if (seq !== state.seq) return;
      wait.remove();
      var keys = arr(ix.keys), fams = arr(ix.families), famOf = arr(ix.family), stOf = arr(ix.status);
      var p = r.params;
      var f = { q: p.get('q') || '', family: p.get('family') || '', status: p.get('status') || '', page: Math.max(0, parseInt(p.get('page') || '0', 10) || 0) };
      var statuses = uniqueSorted(stOf.filter(function (s) { return s !== ''; }));
      var hasAbsent = stOf.indexOf('') >= 0;
      if (hasAbsent) statuses.push('(absent)');
      var search = h('input', { type: 'search', placeholder: 'Search keys (substring, any case)', testid: 'case-search', 'aria-label': 'Search case keys', value: f.q, class: 'wide' });
      var countBox = h('span', { class: 'count', testid: 'cases-count' });
      var body = h('div');
      var sec = section(null, 'cases');
      sec.appendChild(h('div', { class: 'filters' },
        h('label', { class: 'filter search' }, h('span', null, 'Key'), search),
        selectBox('Family', 'cases-family', uniqueSorted(fams), f.family, function (v) { f.family = v; f.page = 0; run(); }),
        selectBox('Status (latest)', 'cases-status', statuses, f.status, function (v) { f.status = v; f.page = 0; run(); }),
        countBox));
      sec.appendChild(body);
      out.appendChild(sec);

      var hits = null;  // indices matching the search and filters
      var run = function () {
        var params = new URLSearchParams();
        if (f.q) params.set('q', f.q);
        if (f.family) params.set('family', f.family);
        if (f.status) params.set('status', f.status);
        if (f.page) params.set('page', String(f.page));
        replaceQuery(params);
        var q = f.q.toLowerCase();
        var lk = q ? lowered(ix) : null;
        var famIdx = f.family ? fams.indexOf(f.family) : -1;
        var st = f.status === '(absent)' ? '' : f.status;
        hits = [];
        for (var i = 0; i < keys.length; i++) {
          if (lk && lk[i].indexOf(q) < 0) continue;
          if (f.family && famOf[i] !== famIdx) continue;
          if (f.status && stOf[i] !== st) continue;
          hits.push(i);
        }
        countBox.textContent = fmtInt(hits.length) + (hits.length === keys.length ? ' cases' : ' of ' + fmtInt(keys.length) + ' cases');
        countBox.setAttribute('data-count', String(hits.length));
        drawPage();
      };
      var drawPage = function () {
        var pages = Math.max(1, Math.ceil(hits.length / PAGE_SIZE));
        if (f.page >= pages) f.page = pages - 1;
        clear(body);
        if (!hits.length) { body.appendChild(h('p', { class: 'muted', testid: 'no-cases' }, 'No case matches.')); return; }
        var pg = function (n) {
          f.page = n;
          var params = parseRoute().params;
          if (n) params.set('page', String(n)); else params.delete('page');
          replaceQuery(params);
          drawPage();
        };
        var rows = hits.slice(f.page * PAGE_SIZE, (f.page + 1) * PAGE_SIZE);
        add(body, pager(hits.length, f.page, pg, 'cases-pager'));
        body.appendChild(table([
          { label: 'Key', cls: 'keycol', cell: function (i) { return caseLink(g.id, str(keys[i])); } },
          { label: 'Family', cell: function (i) { return str(fams[famOf[i]]); } },
          { label: 'Status (latest)', cell: function (i) { return statusBadge(stOf[i] || null); } },
        ], rows, { testid: 'cases-table', rowProps: function (i) { return { class: 'clickable', testid: 'case-row', onclick: clickableRow(caseHash(g.id, str(keys[i]))) }; } }));
        add(body, pager(hits.length, f.page, pg, 'cases-pager-bottom'));
      };
      var timer = null;
      search.addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () { f.q = search.value; f.page = 0; run(); }, 150);
      });
      run();
    });
  }

  // Status grid: cases x the newest releases, one coloured cell per result (Note [Status grid] in
  // harness/analysis/dashboard.cpp). The statuses are strings with a character per case slot;
  // only the rows in view are in the page (GRID_ROW px each, redrawn on scroll), so 100,000
  // cases cost what 60 do. Each cell links to its case page at that release.
  var GRID_ROW = 18;
  function viewGrid(g, r, out, seq) {
    out.appendChild(h('h1', null, 'Status grid', h('span', { class: 'sub' }, ' ' + g.backend + ' / ' + g.suite)));
    var wait = h('p', { class: 'loading' }, 'Loading the statuses\u2026');
    out.appendChild(wait);
    return Promise.all([loadData(g.id + '/cases/index'), loadData(g.id + '/grid')]).then(function (both) {
      if (seq !== state.seq) return null;
      wait.remove();
      var ix = both[0], gd = both[1];
      var keys = arr(ix.keys), fams = arr(ix.families), famOf = arr(ix.family);
      var names = arr(gd.releases), cols = arr(gd.status), codes = gd.codes || {};
      var dtypes = arr(gd.dtypes), dtypeOf = arr(gd.dtype), modes = arr(gd.modes), modeOf = arr(gd.mode);
      var absent = typeof gd.absent === 'string' ? gd.absent : '-';
      var n = keys.length, m = cols.length;
      if (cols.some(function (c) { return typeof c !== 'string' || c.length !== n; }) || names.length !== m)
        throw DataError('data/' + g.id + '/grid.js does not hold a status for each of the ' + n + ' cases of data/' + g.id + '/cases/index.js in each release.');
      var first = isNum(gd.first) ? gd.first : 0;
      var groupRels = arr(g.releases);
      var nameOf = function (code) { return code === absent ? null : str(codes[code]) || '?'; };
      var cls = function (code) { var s = nameOf(code); return 'sg-c sg-' + (s ? s.toLowerCase().replace(/[^a-z]/g, '') : 'absent'); };

      var p = r.params;
      var f = { q: p.get('q') || '', family: p.get('family') || '', dtype: p.get('dtype') || '', mode: p.get('mode') || '',
        status: p.get('status') || '', where: p.get('where') === 'any' ? 'any' : 'latest', changed: p.get('changed') === '1' };
      var latest = m ? cols[m - 1] : '';
      var present = {};
      Object.keys(codes).concat([absent]).forEach(function (c) { present[c] = cols.some(function (col) { return col.indexOf(c) >= 0; }); });
      var statusCodes = Object.keys(codes).filter(function (c) { return present[c]; }).sort(function (a, b) { return str(codes[a]) < str(codes[b]) ? -1 : 1; });
      var statusNames = statusCodes.map(function (c) { return str(codes[c]); });
      if (present[absent]) statusNames.push('(absent)');

      var search = h('input', { type: 'search', placeholder: 'Search keys (substring, any case)', testid: 'grid-search', 'aria-label': 'Search case keys', value: f.q, class: 'wide' });
      var changedBox = h('input', { type: 'checkbox', testid: 'grid-changed' });
      changedBox.checked = f.changed;
      var whereSel = h('select', { testid: 'grid-where', 'aria-label': 'Status in' },
        h('option', { value: 'latest' }, 'the latest release'), h('option', { value: 'any' }, 'any release'));
      whereSel.value = f.where;
      var countBox = h('span', { class: 'count', testid: 'grid-count' });
      var sec = section(null, 'grid-section');
      sec.appendChild(h('div', { class: 'filters' },
        h('label', { class: 'filter search' }, h('span', null, 'Key'), search),
        selectBox('Family', 'grid-family', uniqueSorted(fams), f.family, function (v) { f.family = v; run(); }),
        selectBox('Dtype', 'grid-dtype', uniqueSorted(dtypes), f.dtype, function (v) { f.dtype = v; run(); }),
        selectBox('Mode', 'grid-mode', uniqueSorted(modes), f.mode, function (v) { f.mode = v; run(); }),
        selectBox('Status', 'grid-status', statusNames, f.status, function (v) { f.status = v; run(); }),
        h('label', { class: 'filter' }, h('span', null, 'in'), whereSel),
        h('label', { class: 'filter check', title: 'cases whose status is not the same in every release shown (absent releases aside)' }, changedBox, h('span', null, 'status changed')),
        countBox));
      sec.appendChild(h('p', { class: 'legend' }, statusCodes.map(function (c) {
        return h('span', { class: 'sg-legend' }, h('span', { class: cls(c) }), str(codes[c]));
      }), h('span', { class: 'sg-legend' }, h('span', { class: cls(absent) }), 'not run'),
      m < groupRels.length ? h('span', { class: 'muted' }, ' The newest ' + m + ' of ' + groupRels.length + ' releases.') : null));

      // The header: a column per release, linked to its page where it has one.
      var head = h('div', { class: 'sg-head' }, h('div', { class: 'sg-key sg-keyh' }, fmtInt(n) + ' cases \u00d7 ' + m + ' releases'),
        names.map(function (nm, j) {
          var rel = groupRels[first + j];
          var label = h('span', null, str(nm));
          return rel && rel.regressions ? h('a', { class: 'sg-rel', href: releaseHash(g.id, str(nm)), title: str(nm) + ': what changed', testid: 'grid-release' }, label)
            : h('span', { class: 'sg-rel', title: str(nm), testid: 'grid-release' }, label);
        }));
      var body = h('div', { class: 'sg-body' });
      var scroller = h('div', { class: 'sg', testid: 'grid', tabindex: '0', 'aria-label': 'Case statuses by release' }, head, body);
      sec.appendChild(scroller);
      var none = h('p', { class: 'muted', testid: 'no-grid-rows', hidden: true }, 'No case matches.');
      sec.appendChild(none);
      out.appendChild(sec);

      var hits = new Int32Array(0), drawn = [-1, -1];
      var relQuery = names.map(function (nm) { return '?' + new URLSearchParams({ release: str(nm) }).toString(); });
      var row = function (i) {
        var key = str(keys[i]);
        var el = h('div', { class: 'sg-row', testid: 'grid-row', 'data-key': key },
          h('a', { class: 'sg-key', href: caseHash(g.id, key), title: key }, key));
        for (var j = 0; j < m; j++) {
          var code = cols[j].charAt(i), st = nameOf(code);
          el.appendChild(h('a', { class: cls(code), testid: 'grid-cell', 'data-status': st || '', 'data-release': str(names[j]),
            href: caseHash(g.id, key) + relQuery[j],
            title: str(names[j]) + ': ' + (st || 'not run') }));
        }
        return el;
      };
      var draw = function (force) {
        var top = Math.max(0, scroller.scrollTop - head.offsetHeight);
        var view = scroller.clientHeight || 600;
        var lo = Math.max(0, Math.floor(top / GRID_ROW) - 10);
        var hi = Math.min(hits.length, Math.ceil((top + view) / GRID_ROW) + 10);
        if (!force && lo === drawn[0] && hi === drawn[1]) return;
        drawn = [lo, hi];
        var frag = document.createDocumentFragment();
        for (var k = lo; k < hi; k++) {
          var el = row(hits[k]);
          el.style.top = (k * GRID_ROW) + 'px';
          frag.appendChild(el);
        }
        clear(body);
        body.appendChild(frag);
        scroller.setAttribute('data-drawn', String(hi - lo));
      };
      var pending = 0;
      scroller.addEventListener('scroll', function () {
        if (pending) return;
        pending = requestAnimationFrame(function () { pending = 0; draw(false); });
      });

      var run = function () {
        var params = new URLSearchParams();
        ['q', 'family', 'dtype', 'mode', 'status'].forEach(function (k2) { if (f[k2]) params.set(k2, f[k2]); });
        if (f.status && f.where === 'any') params.set('where', 'any');
        if (f.changed) params.set('changed', '1');
        replaceQuery(params);
        var q = f.q.toLowerCase();
        var lk = q ? lowered(ix) : null;
        var famIdx = f.family ? fams.indexOf(f.family) : -2;
        var dIdx = f.dtype ? dtypes.indexOf(f.dtype) : -2, mIdx = f.mode ? modes.indexOf(f.mode) : -2;
        var want = null;
        if (f.status) {
          want = f.status === '(absent)' ? absent : null;
          Object.keys(codes).forEach(function (c) { if (str(codes[c]) === f.status) want = c; });
          if (want === null) want = '\u0000';  // a status no case has
        }
        var out2 = new Int32Array(n), count = 0;
        for (var i = 0; i < n; i++) {
          if (lk && lk[i].indexOf(q) < 0) continue;
          if (famIdx !== -2 && famOf[i] !== famIdx) continue;
          if (dIdx !== -2 && dtypeOf[i] !== dIdx) continue;
          if (mIdx !== -2 && modeOf[i] !== mIdx) continue;
          if (want !== null) {
            if (f.where === 'any') {
              var hit = false;
              for (var j2 = 0; j2 < m && !hit; j2++) hit = cols[j2].charAt(i) === want;
              if (!hit) continue;
            } else if (latest.charAt(i) !== want) continue;
          }
          if (f.changed) {
            var seen = '', changed = false;
            for (var j3 = 0; j3 < m && !changed; j3++) {
              var c3 = cols[j3].charAt(i);
              if (c3 === absent) continue;
              if (seen && c3 !== seen) changed = true;
              seen = c3;
            }
            if (!changed) continue;
          }
          out2[count++] = i;
        }
        hits = out2.subarray(0, count);
        countBox.textContent = fmtInt(count) + (count === n ? ' cases' : ' of ' + fmtInt(n) + ' cases');
        countBox.setAttribute('data-count', String(count));
        scroller.setAttribute('data-rows', String(count));
        body.style.height = (count * GRID_ROW) + 'px';
        scroller.hidden = count === 0;
        none.hidden = count !== 0;
        scroller.scrollTop = 0;
        draw(true);
      };
      var timer = null;
      search.addEventListener('input', function () {
        clearTimeout(timer);
        timer = setTimeout(function () { f.q = search.value; run(); }, 150);
      });
      whereSel.addEventListener('change', function () { f.where = whereSel.value; run(); });
      changedBox.addEventListener('change', function () { f.changed = changedBox.checked; run(); });
      return run;  // drawn once the view is in the page (the scroller's height is known then)
    });
  }

  // Columns for the per-week axis: the index of each week's last release in `releases`.
  function axisColumns(g, releases) {
    if (state.axis !== 'week') return releases.map(function (rel, j) { return { label: rel, j: j }; });
    var cols = [];
    arr(g.weeks).forEach(function (w) {
      var j = releases.indexOf(w.release);
      if (j >= 0) cols.push({ label: w.week, j: j });
    });
    return cols;
  }

  // Breakdown by op family, dtype and mode.
  function viewBreakdown(g, r, out, seq) {
    return loadData(g.id + '/breakdown').then(function (d) {
      if (seq !== state.seq) return;
      var releases = arr(d.releases);
      var cols = axisColumns(g, releases);
      var latestJ = releases.length - 1;
      out.appendChild(h('h1', null, 'Breakdown', h('span', { class: 'sub' }, ' by op family, dtype and mode; trends over ' + cols.length + (state.axis === 'week' ? ' weeks' : ' releases'))));
      ['family', 'dtype', 'mode'].forEach(function (dim) {
        var m = (d.by && d.by[dim]) || {};
        var names = Object.keys(m).sort();
        var sec = section(dim === 'family' ? 'Op family' : dim === 'dtype' ? 'Dtype' : 'Mode', 'breakdown-' + dim);
        if (!names.length) { sec.appendChild(h('p', { class: 'muted' }, 'No data.')); out.appendChild(sec); return; }
        var rows = names.map(function (nm) { return { name: nm, list: arr(m[nm]) }; });
        var val = function (row, j, f) { var e = row.list[j]; return e && isNum(e[f]) ? e[f] : null; };
        var series = function (row, f) { return cols.map(function (c) { return val(row, c.j, f); }); };
        var pr = function (row, j) { return passRan(row.list[j]); };
        var detailRow = null;
        var tbl = table([
          { label: dim, cell: function (row) { return h('strong', null, row.name); } },
          { label: 'Cases', cls: 'num', cell: function (row) { return fmtInt(val(row, latestJ, 'cases')); } },
          { label: 'Pass rate', cls: 'num', title: 'PASS of the cases that ran (PASS, FAIL, ERROR, CRASH, TIMEOUT, XPASS)', cell: function (row) { return fmtPct(pr(row, latestJ)); } },
          { label: 'Ran', cls: 'num', title: 'the share of cases that ran (not UNSUPPORTED, SKIP or XFAIL)', cell: function (row) { return fmtPct(val(row, latestJ, 'ran_share')); } },
          { label: 'Pass rate trend', cell: function (row) { return sparkline(cols.map(function (c) { return pr(row, c.j); }), COLORS.pass, 'rate'); } },
          { label: 'Fallback', cls: 'num', cell: function (row) { return fmtPct(val(row, latestJ, 'fallback_rate')); } },
          { label: 'Speed index', cls: 'num', cell: function (row) { return fmtRatio(val(row, latestJ, 'speed_index')); } },
          { label: 'Speed trend', cell: function (row) { return sparkline(series(row, 'speed_index'), COLORS.speed); } },
        ], rows, {
          testid: 'breakdown-table-' + dim,
          rowProps: function (row) {
            return { class: 'clickable', testid: 'breakdown-row', title: 'Show every ' + (state.axis === 'week' ? 'week' : 'release'), onclick: function (ev) {
              var tr = ev.currentTarget;
              if (detailRow && detailRow.parentNode) {
                var was = detailRow.previousSibling === tr;
                detailRow.remove();
                detailRow = null;
                if (was) return;
              }
              var per = cols.slice().reverse();
              var inner = table([
                { label: state.axis === 'week' ? 'Week' : 'Release', cell: function (c) { return c.label; } },
                { label: 'Cases', cls: 'num', cell: function (c) { return fmtInt(val(row, c.j, 'cases')); } },
                { label: 'Pass rate', cls: 'num', cell: function (c) { return fmtPct(pr(row, c.j)); } },
                { label: 'Ran', cls: 'num', cell: function (c) { return fmtPct(val(row, c.j, 'ran_share')); } },
                { label: 'Fallback', cls: 'num', cell: function (c) { return fmtPct(val(row, c.j, 'fallback_rate')); } },
                { label: 'Speed index', cls: 'num', cell: function (c) { return fmtRatio(val(row, c.j, 'speed_index')); } },
              ], per, { testid: 'breakdown-detail' });
              detailRow = h('tr', { class: 'detail-row' }, h('td', { colspan: 8 }, inner));
              tr.parentNode.insertBefore(detailRow, tr.nextSibling);
            } };
          },
        });
        sec.appendChild(tbl);
        out.appendChild(sec);
      });
    });
  }

  // Coverage: fallback ops and graph-break targets, per release (newest first).
  function viewCoverage(g, r, out, seq) {
    return loadData(g.id + '/coverage').then(function (d) {
      if (seq !== state.seq) return;
      var releases = arr(d.releases);
      var cols = axisColumns(g, releases).reverse();
      var latestJ = releases.length - 1;
      out.appendChild(h('h1', null, 'Coverage', h('span', { class: 'sub' }, ' what falls back to the CPU or breaks graphs')));
      var perCols = function (get) {
        return cols.map(function (c, ci) {
          return { label: c.label, cls: 'num' + (ci === 0 ? ' latest' : ''), cell: function (x) { var v = arr(get(x))[c.j]; return isNum(v) ? fmtInt(v) : DASH; } };
        });
      };
      var delta = function (list) {
        var a = arr(list)[latestJ], b = arr(list)[latestJ - 1];
        if (!isNum(a) || !isNum(b) || a === b) return '';
        return h('span', { class: a > b ? 'worse' : 'better' }, (a > b ? '+' : '') + fmtInt(a - b));
      };
      var fsec = section('Fallback ops (cases that fall back, per ' + (state.axis === 'week' ? 'week' : 'release') + ')', 'fallback-ops');
      var fops = arr(d.fallback_ops);
      if (!fops.length) fsec.appendChild(h('p', { class: 'muted' }, 'No op falls back to the CPU.'));
      else fsec.appendChild(pagedRows(fops, function (rows) {
        return table([
          { label: 'Op', cls: 'sticky', cell: function (x) { return h('code', null, str(x.op)); } },
          { label: 'Change', cls: 'num', cell: function (x) { return delta(x.cases); } },
          { label: 'Trend', cell: function (x) { return sparkline(cols.slice().reverse().map(function (c) { var v = arr(x.cases)[c.j]; return isNum(v) ? v : null; }), COLORS.fallback); } },
        ].concat(perCols(function (x) { return x.cases; })), rows, { testid: 'fallback-table', wide: true, rowProps: function () { return { testid: 'fallback-row' }; } });
      }));
      out.appendChild(fsec);

      var gsec = section('Graph breaks and recompiles per target (cases with breaks / breaks)', 'graph-breaks');
      var gbs = arr(d.graph_breaks);
      // Why: each break's reason and each recompile's failed guard, as the latest release that has
      // the target recorded them, the most frequent first.
      var why = function (x) {
        var lines = arr(x.reasons).map(function (r) { return h('div', { class: 'why-break' }, (r.n > 1 ? r.n + '× ' : '') + str(r.reason)); })
          .concat(arr(x.guards).map(function (g) { return h('div', { class: 'why-guard muted' }, 'recompile' + (g.n > 1 ? ' ' + g.n + '×' : '') + ': ' + str(g.guard)); }));
        return lines.length ? h('div', { class: 'why', testid: 'graph-break-why' }, lines) : DASH;
      };
      if (!gbs.length) gsec.appendChild(h('p', { class: 'muted' }, 'No graph breaks or recompiles.'));
      else gsec.appendChild(pagedRows(gbs, function (rows) {
        return table([
          { label: 'Target', cls: 'sticky', cell: function (x) { return h('code', null, str(x.target)); } },
          { label: 'Change', cls: 'num', cell: function (x) { return delta(x.breaks); } },
          { label: 'Trend', cell: function (x) { return sparkline(cols.slice().reverse().map(function (c) { var v = arr(x.breaks)[c.j]; return isNum(v) ? v : null; }), COLORS.breaks); } },
          { label: 'Recompiles', cls: 'num', cell: function (x) { var v = arr(x.recompiles)[latestJ]; return isNum(v) ? fmtInt(v) : DASH; } },
          { label: 'Why (latest)', cell: why },
        ].concat(cols.map(function (c, ci) {
          return { label: c.label, cls: 'num' + (ci === 0 ? ' latest' : ''), cell: function (x) {
            var cs = arr(x.cases)[c.j], bs = arr(x.breaks)[c.j];
            return (isNum(cs) ? fmtInt(cs) : DASH) + ' / ' + (isNum(bs) ? fmtInt(bs) : DASH);
          } };
        })), rows, { testid: 'graph-breaks-table', wide: true, rowProps: function () { return { testid: 'graph-break-row' }; } });
      }));
      out.appendChild(gsec);
    });
  }

  // A list drawn one page at a time.
  function pagedRows(list, draw) {
    var box = h('div');
    var page = 0;
    var redraw = function () {
      clear(box);
      var pg = function (n) { page = n; redraw(); };
      add(box, pager(list.length, page, pg));
      box.appendChild(draw(list.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)));
    };
    redraw();
    return box;
  }

  var VIEWS = {
    overview: viewOverview,
    latest: viewLatest,
    release: viewRelease,
    case: viewCase,
    cases: viewCases,
    grid: viewGrid,
    breakdown: viewBreakdown,
    coverage: viewCoverage,
  };

  // ------------------------------------------------------------------------------------------
  // Frame: header, navigation, routing

  function fillHeader() {
    var o = state.overview;
    clear(groupSelect);
    arr(o.groups).forEach(function (g) {
      groupSelect.appendChild(h('option', { value: g.id }, str(g.backend) + ' / ' + str(g.suite)));
    });
    groupSelect.addEventListener('change', function () {
      var r = parseRoute();
      var view = VIEWS[r.view] ? r.view : 'overview';
      if (view === 'case') location.hash = hashFor(groupSelect.value, 'cases', null, new URLSearchParams({ q: r.arg }));
      else location.hash = hashFor(groupSelect.value, view);
    });
    clear(metaBox);
    add(metaBox, [
      h('span', { title: 'database', testid: 'db-name' }, str(o.db) || 'database'),
      h('span', { title: 'generated at' }, 'generated ' + fmtStamp(o.generated_at)),
      o.gauntlet_version ? h('span', null, 'gauntlet ' + str(o.gauntlet_version)) : null,
      o.since ? h('span', null, 'since ' + str(o.since)) : null,
    ]);
    ['release', 'week'].forEach(function (a) {
      document.getElementById('axis-' + a).addEventListener('click', function () {
        if (state.axis === a) return;
        state.axis = a;
        syncAxis();
        route();
      });
    });
    syncAxis();
  }

  function syncAxis() {
    ['release', 'week'].forEach(function (a) {
      document.getElementById('axis-' + a).setAttribute('aria-pressed', state.axis === a ? 'true' : 'false');
    });
  }

  function syncNav(g, view) {
    groupSelect.value = g ? g.id : '';
    var links = nav.querySelectorAll('a[data-view]');
    for (var i = 0; i < links.length; i++) {
      var v = links[i].getAttribute('data-view');
      if (g) links[i].setAttribute('href', hashFor(g.id, v));
      var on = v === view || (v === 'cases' && view === 'case');
      links[i].className = on ? 'active' : '';
      if (on) links[i].setAttribute('aria-current', 'page'); else links[i].removeAttribute('aria-current');
    }
  }

  function route() {
    var seq = ++state.seq;
    destroyCharts();
    document.body.removeAttribute('data-ready');
    var r = parseRoute();
    var groups = arr(state.overview.groups);
    if (!groups.length) {
      clear(main);
      main.appendChild(h('div', { class: 'card' }, h('h1', null, 'No results'), h('p', null, 'The database has no runs to show.')));
      setReady('overview');
      return;
    }
    if (!r.gid) { location.replace(hashFor(groups[0].id, 'overview')); return; }
    var g = groups.filter(function (x) { return x.id === r.gid; })[0];
    if (!g) {
      syncNav(null, '');
      clear(main);
      main.appendChild(h('div', { class: 'error', role: 'alert', testid: 'no-group' }, h('strong', null, 'No group \u201c' + r.gid + '\u201d in this data.'), ' ',
        h('a', { href: hashFor(groups[0].id, 'overview') }, 'Go to ' + groups[0].backend + ' / ' + groups[0].suite)));
      setReady('error');
      return;
    }
    state.group = g;
    var view = VIEWS[r.view] ? r.view : null;
    syncNav(g, r.view);
    document.title = 'Gauntlet \u2014 ' + g.backend + ' / ' + g.suite + (view ? ' \u2014 ' + view : '');
    if (!view) {
      clear(main);
      main.appendChild(h('div', { class: 'error', role: 'alert' }, 'No view \u201c' + r.view + '\u201d. ', h('a', { href: hashFor(g.id, 'overview') }, 'Go to the overview')));
      setReady('error');
      return;
    }
    var out = h('div', { class: 'view view-' + view });
    var finish = function (draw) {
      if (seq !== state.seq) return;
      clear(main);
      main.appendChild(out);
      if (typeof draw === 'function') draw();
      window.scrollTo(0, 0);
      // load_time.mjs measures these: navigation start to a view drawn and taking input.
      if (view === 'overview' || view === 'grid') {
        try { performance.mark(view + '-ready'); } catch (e) { /* no User Timing */ }
      }
      setReady(view);
    };
    var fail = function (err) {
      if (seq !== state.seq) return;
      showError(main, err, err && err.isDataError ? 'A data file could not be used' : 'Something went wrong');
      if (!(err && err.isDataError) && window.console) console.warn(err);
    };
    var slow = setTimeout(function () {
      if (seq === state.seq && !main.contains(out)) { clear(main); main.appendChild(h('p', { class: 'loading' }, 'Loading\u2026')); }
    }, 150);
    var result;
    try {
      result = VIEWS[view](g, r, out, seq);
    } catch (e) { clearTimeout(slow); fail(e); return; }
    if (result && typeof result.then === 'function') {
      result.then(function (draw) { clearTimeout(slow); finish(draw); }, function (e) { clearTimeout(slow); fail(e); });
    } else { clearTimeout(slow); finish(result); }
  }

  function start() {
    main = document.getElementById('main');
    groupSelect = document.getElementById('group-select');
    metaBox = document.getElementById('meta');
    nav = document.getElementById('nav');
    loadData('overview').then(function (o) {
      if (!o || !Array.isArray(o.groups)) throw DataError('data/overview.js has no groups list.');
      var bad = o.groups.filter(function (g) { return !g || !SAFE_ID.test(String(g.id)); });
      if (bad.length) throw DataError('data/overview.js names a group directory that is not a plain name.');
      state.overview = o;
      fillHeader();
      window.addEventListener('hashchange', route);
      // Charts follow the width of the page (a window resize, a scrollbar coming or going).
      var pending = 0;
      var onResize = function () {
        if (pending) return;
        pending = requestAnimationFrame(function () { pending = 0; resizeCharts(); });
      };
      window.addEventListener('resize', onResize);
      if (typeof ResizeObserver === 'function') new ResizeObserver(onResize).observe(main);
      route();
    }).catch(function (err) {
      showError(main, err, 'The dashboard cannot start');
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
