// run.js: the run page.
//
// On every run page it wires the output's Copy button. On a live run
// (#run[data-live="true"]) it follows the run over Server-Sent Events from
// data-events-url:
//   progress {phase, done, total, elapsed}  → progress bar, counts, elapsed, ETA
//   interval {t, records_per_sec, latency_avg_ms, …} → live SVG charts
//   status   {status, position}  → status badge, queue position
//   output   {text}              → appended to the live output (the first
//                                   after a (re)connect, the server's replay
//                                   of everything so far, replaces it)
//   done     {status, error}     → reload: the server then renders the result
// Unknown events are ignored; EventSource reconnects by itself. No inline
// code anywhere, so the page runs under script-src 'self'.
(function () {
  'use strict';

  // ---- formatting (mirrors ui.FormatNumber and ui.FormatDuration) ----

  function decimalsFor(v) {
    var a = Math.abs(v);
    if (a >= 1000) { return 0; }
    if (a >= 100) { return 1; }
    if (a >= 1) { return 2; }
    return Math.min(20, 2 - Math.floor(Math.log10(a)));
  }

  function fmtNumber(v) {
    if (typeof v !== 'number' || isNaN(v)) { return 'NaN'; }
    if (!isFinite(v)) { return v > 0 ? '∞' : '-∞'; }
    if (v === 0) { return '0'; }
    var d = decimalsFor(v);
    var r = Number(v.toFixed(d));
    if (r !== 0 && decimalsFor(r) < d) {
      d = decimalsFor(r);
    }
    return v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  }

  function pad2(n) { return n < 10 ? '0' + n : String(n); }

  function fmtDuration(seconds) {
    if (!isFinite(seconds) || seconds < 0) { return '—'; }
    if (seconds === 0) { return '0 s'; }
    if (seconds < 1) { return Math.floor(seconds * 1000) + ' ms'; }
    var tenths = Math.round(seconds * 10) / 10;
    if (tenths < 60) { return tenths.toFixed(1) + ' s'; }
    var s = Math.round(seconds);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    var sec = s % 60;
    if (h > 0) { return h + 'h ' + pad2(m) + 'm ' + pad2(sec) + 's'; }
    return m + 'm ' + pad2(sec) + 's';
  }

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
      .replace(/"/g, '&#34;').replace(/'/g, '&#39;');
  }

  // ---- SVG line chart (same geometry and axes as ui.LineChart) ----

  var W = 640, H = 260, ML = 72, MR = 20, MT = 52, MB = 46, MAX_TICKS = 6;
  var STYLES = [
    { color: '#0072b2', dash: '' },
    { color: '#c44e00', dash: '7 3' }
  ];

  function niceStep(raw) {
    if (!(raw > 0) || !isFinite(raw)) { return 1; }
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var ms = [1, 2, 5, 10];
    for (var i = 0; i < ms.length; i++) {
      if (ms[i] * mag >= raw * (1 - 1e-9)) { return ms[i] * mag; }
    }
    return 10 * mag;
  }

  // addTicks puts a tick and its label on every multiple of step in [a.lo, a.hi].
  function addTicks(a, step) {
    var top = Math.max(Math.abs(a.lo), Math.abs(a.hi));
    var scale = 1, suffix = '';
    if (top >= 1e9) { scale = 1e9; suffix = 'G'; } else if (top >= 1e6) { scale = 1e6; suffix = 'M'; } else if (top >= 1e4) { scale = 1e3; suffix = 'k'; }
    var dec = Math.max(0, -Math.floor(Math.log10(step / scale) + 1e-9));
    var first = Math.ceil(a.lo / step - 1e-9);
    var n = Math.floor(a.hi / step + 1e-9) - first;
    for (var i = 0; i <= n; i++) {
      var v = (first + i) * step;
      if (Math.abs(v) < step * 1e-9) { v = 0; }
      a.ticks.push(v);
      a.labels.push(v === 0 ? '0' : (v / scale).toLocaleString('en-US', { minimumFractionDigits: dec, maximumFractionDigits: dec }) + suffix);
    }
    return a;
  }

  // niceAxis (values): covers [lo, hi] and zero, rounded out to ticks.
  function niceAxis(lo, hi) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
    if (lo === hi) { hi = 1; }
    var step = niceStep((hi - lo) / (MAX_TICKS - 1));
    var a = { lo: Math.floor(lo / step) * step, hi: Math.ceil(hi / step) * step, ticks: [], labels: [] };
    if (a.lo === a.hi) { a.hi = a.lo + step; }
    return addTicks(a, step);
  }

  // dataAxis (time): from zero to exactly where the data ends.
  function dataAxis(lo, hi) {
    lo = Math.min(lo, 0);
    if (!(hi > lo)) { hi = lo + 1; }
    return addTicks({ lo: lo, hi: hi, ticks: [], labels: [] }, niceStep((hi - lo) / (MAX_TICKS - 1)));
  }

  function f1(x) { var s = x.toFixed(1); return s === '-0.0' ? '0.0' : s; }

  // lineChart returns SVG markup for series [{name, pts: [[x, y], …]}].
  function lineChart(title, yTitle, xTitle, series) {
    var out = '<svg class="chart" viewBox="0 0 ' + W + ' ' + H + '" width="' + W + '" height="' + H +
      '" role="img" aria-label="' + esc(title) + '"><title>' + esc(title) + '</title>' +
      '<rect x="0" y="0" width="' + W + '" height="' + H + '" fill="#ffffff"/>' +
      '<text x="' + ML + '" y="20" font-size="15" font-weight="600" fill="#1b1f24">' + esc(title) + '</text>';
    var left = ML, top = MT, right = W - MR, bottom = H - MB;
    var xmin = Infinity, xmax = -Infinity, ymin = Infinity, ymax = -Infinity, any = false;
    series.forEach(function (s) {
      s.pts.forEach(function (p) {
        any = true;
        xmin = Math.min(xmin, p[0]); xmax = Math.max(xmax, p[0]);
        ymin = Math.min(ymin, p[1]); ymax = Math.max(ymax, p[1]);
      });
    });
    if (!any) {
      return out + '<rect x="' + left + '" y="' + top + '" width="' + (right - left) + '" height="' + (bottom - top) +
        '" fill="none" stroke="#c9ced6" stroke-dasharray="4 4"/><text x="' + f1((left + right) / 2) + '" y="' + f1((top + bottom) / 2) +
        '" text-anchor="middle" dominant-baseline="middle" font-size="13" fill="#4a5160">waiting for the first interval</text></svg>';
    }
    var xa = dataAxis(xmin, xmax), ya = niceAxis(ymin, ymax);
    function px(x) { return left + (x - xa.lo) / (xa.hi - xa.lo) * (right - left); }
    function py(y) { return bottom - (y - ya.lo) / (ya.hi - ya.lo) * (bottom - top); }
    out += '<g stroke="#e3e6ea" stroke-width="1">';
    ya.ticks.forEach(function (v) { out += '<line x1="' + left + '" y1="' + f1(py(v)) + '" x2="' + right + '" y2="' + f1(py(v)) + '"/>'; });
    xa.ticks.forEach(function (v) { out += '<line x1="' + f1(px(v)) + '" y1="' + top + '" x2="' + f1(px(v)) + '" y2="' + bottom + '"/>'; });
    out += '</g><g stroke="#6b7280" stroke-width="1"><line x1="' + left + '" y1="' + bottom + '" x2="' + right + '" y2="' + bottom +
      '"/><line x1="' + left + '" y1="' + top + '" x2="' + left + '" y2="' + bottom + '"/></g><g font-size="12" fill="#4a5160">';
    ya.ticks.forEach(function (v, i) {
      out += '<text x="' + (left - 6) + '" y="' + f1(py(v)) + '" text-anchor="end" dominant-baseline="middle">' + esc(ya.labels[i]) + '</text>';
    });
    xa.ticks.forEach(function (v, i) {
      out += '<text x="' + f1(px(v)) + '" y="' + (bottom + 16) + '" text-anchor="middle">' + esc(xa.labels[i]) + '</text>';
    });
    out += '</g><text x="' + f1((left + right) / 2) + '" y="' + (H - 8) + '" text-anchor="middle" font-size="13" fill="#1b1f24">' + esc(xTitle) + '</text>';
    var cy = f1((top + bottom) / 2);
    out += '<text x="14" y="' + cy + '" transform="rotate(-90 14 ' + cy + ')" text-anchor="middle" font-size="13" fill="#1b1f24">' + esc(yTitle) + '</text>';
    var lx = left;
    out += '<g font-size="13" fill="#1b1f24">';
    series.forEach(function (s, i) {
      var st = STYLES[i % STYLES.length];
      out += '<line x1="' + f1(lx) + '" y1="36" x2="' + f1(lx + 22) + '" y2="36" stroke="' + st.color + '" stroke-width="2.5"' +
        (st.dash ? ' stroke-dasharray="' + st.dash + '"' : '') + '/><text x="' + f1(lx + 28) + '" y="40">' + esc(s.name) + '</text>';
      lx += 28 + 7.5 * s.name.length + 20;
    });
    out += '</g><g fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">';
    series.forEach(function (s, i) {
      var st = STYLES[i % STYLES.length];
      if (s.pts.length === 1) {
        out += '<circle cx="' + f1(px(s.pts[0][0])) + '" cy="' + f1(py(s.pts[0][1])) + '" r="3" fill="' + st.color + '" stroke="none"/>';
        return;
      }
      var pts = s.pts.map(function (p) { return f1(px(p[0])) + ',' + f1(py(p[1])); }).join(' ');
      out += '<polyline stroke="' + st.color + '"' + (st.dash ? ' stroke-dasharray="' + st.dash + '"' : '') + ' points="' + pts + '"/>';
    });
    return out + '</g></svg>';
  }

  // ---- Copy button ----

  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  function initCopy() {
    var buttons = document.querySelectorAll('.copy-button[data-copy-target]');
    Array.prototype.forEach.call(buttons, function (btn) {
      var target = document.getElementById(btn.getAttribute('data-copy-target'));
      if (!target) { return; }
      var label = btn.textContent;
      function done(msg) {
        btn.textContent = msg;
        window.setTimeout(function () { btn.textContent = label; }, 2000);
      }
      function fallback() {
        selectText(target);
        var ok = false;
        try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
        done(ok ? 'Copied' : 'Selected: press Ctrl+C');
      }
      btn.hidden = false;
      btn.addEventListener('click', function () {
        var text = target.textContent;
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(text).then(function () { done('Copied'); }, fallback);
        } else {
          fallback();
        }
      });
    });
  }

  // ---- live run ----

  var PHASES = {
    starting: 'Starting',
    prefill: 'Prefilling the topic (not measured)',
    warmup: 'Warming up (not measured)',
    measure: 'Measuring',
    finishing: 'Finishing'
  };
  var MAX_OUTPUT = 200000; // characters kept in the live output
  // Points a live line draws at most, as ui.maxChartPoints: a run sends a
  // point every 250 ms, so a long run's are merged for drawing.
  var MAX_CHART_POINTS = 600;
  var DRAW_DELAY_MS = 100; // a burst of events (catching up) draws once

  function initLive(root) {
    var url = root.getAttribute('data-events-url');
    if (!url || !window.EventSource) { return; }
    var el = function (id) { return document.getElementById(id); };
    var badge = el('run-status'), queue = el('queue-position'), conn = el('connection-state');
    var bar = el('progress-bar'), phaseEl = el('progress-phase'), textEl = el('progress-text');
    var elapsedEl = el('progress-elapsed'), etaEl = el('progress-eta');
    var recordsBox = el('live-chart-records'), latencyBox = el('live-chart-latency');
    var output = el('live-output'), chartsEl = el('live-charts');

    var points = [];
    var phase = { name: '', start: 0, startDone: 0 };

    function set(node, text) { if (node) { node.textContent = text; } }

    function addPoint(p) {
      if (!p || typeof p.t !== 'number' || !isFinite(p.t)) { return false; }
      if (points.length > 0 && p.t <= points[points.length - 1].t) { return false; }
      points.push({
        t: p.t,
        rps: isFinite(p.records_per_sec) ? p.records_per_sec : 0,
        lat: typeof p.latency_avg_ms === 'number' && isFinite(p.latency_avg_ms) ? p.latency_avg_ms : 0,
        records: typeof p.records === 'number' && isFinite(p.records) ? p.records : -1
      });
      return true;
    }

    // merged returns the points merged into one per k consecutive
    // intervals, as runner.MergeSeries does for the server's charts: the
    // rate averaged over the merged time, the latency weighted by records.
    function merged(k) {
      var out = [], start = 0;
      for (var i = 0; i < points.length; i += k) {
        var group = points.slice(i, i + k), prev = start;
        var secs = 0, rps = 0, mean = 0, latW = 0, latSum = 0, latT = 0, latTSum = 0;
        group.forEach(function (p) {
          var d = Math.max(p.t - prev, 0);
          prev = p.t;
          secs += d;
          rps += p.rps * d;
          mean += p.rps / group.length;
          if (p.lat > 0) {
            var w = p.records >= 0 ? p.records : p.rps * d;
            latW += w;
            latSum += p.lat * w;
            latT += d;
            latTSum += p.lat * d;
          }
        });
        var last = group[group.length - 1];
        out.push({ t: last.t, rps: secs > 0 ? rps / secs : mean, lat: latW > 0 ? latSum / latW : (latT > 0 ? latTSum / latT : 0) });
        start = last.t;
      }
      return out;
    }

    function draw() {
      var axis = 'seconds into the measured window';
      var k = Math.ceil(points.length / MAX_CHART_POINTS);
      var pts = k > 1 ? merged(k) : points;
      if (recordsBox) {
        recordsBox.innerHTML = lineChart('Records per second (live)', 'throughput (records/s)', axis,
          [{ name: 'records/s', pts: pts.map(function (p) { return [p.t, p.rps]; }) }]);
      }
      var lat = pts.filter(function (p) { return p.lat > 0; });
      if (latencyBox && lat.length > 0) {
        latencyBox.hidden = false;
        latencyBox.innerHTML = lineChart('Average latency (live)', 'latency (ms)', axis,
          [{ name: 'average', pts: lat.map(function (p) { return [p.t, p.lat]; }) }]);
      }
    }

    function onStatus(d) {
      if (!d || !d.status) { return; }
      if (badge) {
        badge.textContent = d.status;
        badge.className = 'badge badge-' + (/^[a-z]+$/.test(d.status) ? d.status : 'unknown');
      }
      if (queue) {
        if (d.status === 'queued') {
          queue.hidden = false;
          queue.textContent = d.position > 0 ? 'position ' + d.position + ' in queue' : 'waiting in the queue';
        } else {
          queue.hidden = true;
        }
      }
      if (!phase.name) { set(phaseEl, d.status); }
    }

    function onProgress(d) {
      if (!d) { return; }
      var now = Date.now() / 1000;
      var done = Number(d.done) || 0, total = Number(d.total) || 0;
      if (d.phase !== phase.name) {
        phase = { name: d.phase, start: now, startDone: done };
      }
      set(phaseEl, PHASES[d.phase] || String(d.phase || ''));
      var pct = total > 0 ? Math.min(100, done / total * 100) : 0;
      if (d.phase === 'finishing') { pct = 100; }
      if (bar) {
        if (total > 0 || d.phase === 'finishing') {
          bar.max = 100;
          bar.value = pct;
          bar.setAttribute('aria-valuetext', (PHASES[d.phase] || d.phase) + ': ' + Math.floor(pct) + '%');
        } else {
          bar.removeAttribute('value');
        }
      }
      // "finishing" carries no counts: keep the measured phase's text.
      if (d.phase !== 'finishing') {
        set(textEl, total > 0 ? fmtNumber(done) + ' of ' + fmtNumber(total) + ' records (' + Math.floor(pct) + '%)' : fmtNumber(done) + ' records');
      }
      // The server's elapsed is the measured window's; other phases use
      // this page's clock from the phase's first event.
      var elapsed = d.phase === 'measure' && d.elapsed > 0 ? d.elapsed : now - phase.start;
      set(elapsedEl, fmtDuration(elapsed));
      var rate = d.phase === 'measure' && d.elapsed > 0 ? done / d.elapsed : (done - phase.startDone) / (now - phase.start);
      if (total > 0 && done < total && rate > 0 && isFinite(rate)) {
        set(etaEl, fmtDuration((total - done) / rate));
      } else {
        set(etaEl, d.phase === 'finishing' || (total > 0 && done >= total) ? 'any moment' : '—');
      }
    }

    // After each (re)connect the server first replays the output so far
    // in one event: that one replaces the text instead of adding to it.
    var replaceOutput = false;

    function onOutput(d) {
      if (!output || !d || typeof d.text !== 'string') { return; }
      var atBottom = output.scrollTop + output.clientHeight >= output.scrollHeight - 4;
      var text = (replaceOutput ? '' : output.textContent) + d.text;
      replaceOutput = false;
      if (text.length > MAX_OUTPUT) { text = text.slice(text.length - MAX_OUTPUT); }
      output.textContent = text;
      if (atBottom) { output.scrollTop = output.scrollHeight; }
    }

    if (chartsEl) {
      try {
        var initial = JSON.parse(chartsEl.getAttribute('data-points') || '[]');
        if (Array.isArray(initial)) { initial.forEach(addPoint); }
      } catch (e) { /* start empty */ }
    }
    draw();

    function handler(fn) {
      return function (ev) {
        var data;
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        fn(data);
      };
    }

    var es = new EventSource(url);
    set(conn, 'Connecting…');
    es.addEventListener('open', function () {
      replaceOutput = true;
      set(conn, 'Live: updates arrive as the run reports them.');
    });
    es.addEventListener('error', function () {
      set(conn, es.readyState === EventSource.CLOSED ? 'Disconnected: reload the page.' : 'Connection lost, reconnecting…');
    });
    es.addEventListener('progress', handler(onProgress));
    var drawTimer = 0;
    function scheduleDraw() {
      if (drawTimer) { return; }
      drawTimer = window.setTimeout(function () { drawTimer = 0; draw(); }, DRAW_DELAY_MS);
    }
    es.addEventListener('interval', handler(function (d) { if (addPoint(d)) { scheduleDraw(); } }));
    es.addEventListener('status', handler(onStatus));
    es.addEventListener('output', handler(onOutput));
    es.addEventListener('done', function (ev) {
      var d = null;
      try { d = JSON.parse(ev.data); } catch (e) { d = null; }
      es.close();
      onStatus(d);
      set(conn, 'Finished: loading the result…');
      window.location.reload();
    });
  }

  function init() {
    initCopy();
    var root = document.getElementById('run');
    if (root && root.getAttribute('data-live') === 'true') {
      initLive(root);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
