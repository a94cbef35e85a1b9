// run.js: the run page.
//
// On every run page it wires the output's Copy button. On a live run
// (#run[data-live="true"]) it follows the run over Server-Sent Events from
// data-events-url:
//   progress {phase, done, total, elapsed}  → progress bar, counts, ETA
// The elapsed time counts from the run's start (data-started-at, in ms
// of the server's clock, data-server-now; the badge's turn to running
// when the page was loaded while queued), every second. A run of
// --duration (data-duration, seconds) shows the time left instead of an
// ETA: what remains of its measured window while it measures (the
// progress events' elapsed), the whole duration before.
//   interval {t, records_per_sec, …}        → fresh live charts (below)
//   status   {status, position}  → status badge, queue position
//   output   {text}              → appended to the live output (the first
//                                   after a (re)connect, the server's replay
//                                   of everything so far, replaces it)
//   done     {status, error}     → reload: the server then renders the result
// Unknown events are ignored; EventSource reconnects by itself.
//
// The live charts are drawn by the server, with the code of every other
// chart: after new intervals, run.js fetches #live-charts[data-charts-url]
// (at most one request at a time, a burst of events fetching once) and
// moves the fresh boxes' content into the page's boxes of the same id.
// Numbers and durations come from format.js (window.kbenchFormat), loaded
// before this script. No inline code anywhere, so the page runs under
// script-src 'self'.
(function () {
  'use strict';

  var F = window.kbenchFormat;
  var fmtNumber = F.number;

  // fmtDuration formats seconds as numfmt.Duration does ("12.3 s", "1m 05s").
  function fmtDuration(seconds) {
    if (!isFinite(seconds) || seconds < 0) { return '—'; }
    return F.duration(Math.round(seconds * 1e9));
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
  var DRAW_DELAY_MS = 100; // a burst of events (catching up) fetches the charts once

  function initLive(root) {
    var url = root.getAttribute('data-events-url');
    if (!url || !window.EventSource) { return; }
    var el = function (id) { return document.getElementById(id); };
    var badge = el('run-status'), queue = el('queue-position'), conn = el('connection-state');
    var bar = el('progress-bar'), phaseEl = el('progress-phase'), textEl = el('progress-text');
    var elapsedEl = el('progress-elapsed'), etaEl = el('progress-eta');
    var output = el('live-output'), chartsEl = el('live-charts');
    var chartsURL = chartsEl ? chartsEl.getAttribute('data-charts-url') : '';

    var phase = { name: '', start: 0, startDone: 0 };
    // The server's clock less the browser's: times from the server are
    // compared with Date.now() + skew.
    var skew = (Number(root.getAttribute('data-server-now')) || Date.now()) - Date.now();
    var startedAt = Number(root.getAttribute('data-started-at')) || 0; // ms, server clock
    var duration = Number(root.getAttribute('data-duration')) || 0; // s; 0: a run of a count
    var measured = null; // {window: s, at: ms}: the latest measure-phase progress
    var startedEl = el('run-started'), etaLabel = el('progress-eta-label');

    function set(node, text) { if (node) { node.textContent = text; } }

    function serverNow() { return Date.now() + skew; }

    // fmtTime shows a time as the server does: "2006-01-02 15:04:05" UTC.
    function fmtTime(ms) { return new Date(ms).toISOString().slice(0, 19).replace('T', ' '); }

    // tick updates the elapsed time and, for a run of --duration, the
    // time left.
    function tick() {
      if (!startedAt) { return; }
      set(elapsedEl, fmtDuration(Math.round((serverNow() - startedAt) / 1000)));
      if (!duration) { return; }
      set(etaLabel, 'left');
      if (phase.name === 'finishing') {
        set(etaEl, 'any moment');
      } else if (measured) {
        var left = duration - measured.window - (Date.now() - measured.at) / 1000;
        set(etaEl, left > 0 ? fmtDuration(Math.round(left)) : 'any moment');
      } else {
        set(etaEl, fmtDuration(duration) + (phase.name === 'warmup' || phase.name === 'prefill' ? ' after the warm-up' : ' after start-up'));
      }
    }
    window.setInterval(tick, 1000);

    // applyCharts moves the content of the fetched boxes into the page's
    // boxes of the same id, which stay in place.
    function applyCharts(html) {
      var tpl = document.createElement('template');
      tpl.innerHTML = html;
      Array.prototype.forEach.call(tpl.content.children, function (fresh) {
        var box = fresh.id ? document.getElementById(fresh.id) : null;
        if (!box || !chartsEl.contains(box)) { return; }
        box.replaceChildren.apply(box, Array.prototype.slice.call(fresh.childNodes));
        box.hidden = fresh.hidden;
      });
    }

    var chartsBusy = false, chartsAgain = false, chartsTimer = 0;

    function fetchCharts() {
      if (chartsBusy) { chartsAgain = true; return; }
      chartsBusy = true;
      fetch(chartsURL, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/html' } })
        .then(function (res) { return res.ok ? res.text() : null; })
        .then(function (html) { if (html !== null) { applyCharts(html); } }, function () { /* the next interval tries again */ })
        .then(function () {
          chartsBusy = false;
          if (chartsAgain) { chartsAgain = false; scheduleCharts(); }
        });
    }

    function scheduleCharts() {
      if (!chartsURL || chartsTimer) { return; }
      chartsTimer = window.setTimeout(function () { chartsTimer = 0; fetchCharts(); }, DRAW_DELAY_MS);
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
      if (d.status === 'running' && !startedAt) {
        // Loaded while queued: it started now, or when the server says.
        startedAt = d.started_at ? Date.parse(d.started_at) : serverNow();
        set(startedEl, fmtTime(startedAt));
        tick();
      }
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
      if (d.phase === 'measure' && d.elapsed > 0) {
        measured = { window: d.elapsed, at: Date.now() };
      }
      if (startedAt) {
        tick();
      } else {
        // No start known: the measured window's time, or this page's
        // clock from the phase's first event.
        set(elapsedEl, fmtDuration(d.phase === 'measure' && d.elapsed > 0 ? d.elapsed : now - phase.start));
      }
      if (duration) { return; } // the time left, not an ETA: tick
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
    es.addEventListener('interval', scheduleCharts);
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

  // A drag over an interval chart selects the windows of the run's
  // windowed CPU profile it covers (each window is "START-END" in whole
  // seconds; the server lists them in data-windows) and links to their
  // flame graph: the profile page with tagfocus=window=^(A|B)$. A click
  // without a drag selects the window under it.
  function windowsOf(names) {
    return names.split(' ').map(function (n) {
      var m = /^(\d+)-(\d+)$/.exec(n);
      return m ? { name: n, start: Number(m[1]), end: Number(m[2]) } : null;
    }).filter(function (w) { return w !== null; });
  }

  function selectWindows(windows, a, b) {
    var lo = Math.min(a, b);
    var hi = Math.max(a, b);
    var picked = windows.filter(function (w) {
      return lo === hi ? (w.start <= lo && lo < w.end) : (w.start < hi && w.end > lo);
    });
    if (picked.length === 0 && windows.length > 0) {
      // Before the first window or past the last one: the nearest.
      picked = [hi < windows[0].start ? windows[0] : windows[windows.length - 1]];
    }
    return picked;
  }

  function initWindowSelection() {
    var box = document.getElementById('window-charts');
    var out = document.getElementById('window-selection');
    if (!box || !out) {
      return;
    }
    var windows = windowsOf(box.getAttribute('data-windows') || '');
    var profileURL = box.getAttribute('data-profile-url');
    var flameAPI = box.getAttribute('data-flame-api');
    var drag = null;

    function at(svg, ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX;
      pt.y = ev.clientY;
      var p = pt.matrixTransform(svg.getScreenCTM().inverse());
      var l = Number(svg.dataset.plotLeft);
      var r = Number(svg.dataset.plotRight);
      var lo = Number(svg.dataset.xLo);
      var hi = Number(svg.dataset.xHi);
      var x = Math.min(Math.max(p.x, l), r);
      return { x: x, t: lo + (x - l) / (r - l) * (hi - lo) };
    }

    // band is the chart's selection band, drawn hidden by the server.
    function band(svg) {
      return svg.querySelector('rect.window-band');
    }

    function drawBand(svg, x0, x1) {
      Array.prototype.forEach.call(box.querySelectorAll('rect.window-band'), function (r) {
        if (r.ownerSVGElement !== svg) { r.setAttribute('visibility', 'hidden'); }
      });
      var rect = band(svg);
      if (!rect) { return; }
      rect.setAttribute('x', String(Math.min(x0, x1)));
      rect.setAttribute('width', String(Math.max(Math.abs(x1 - x0), 1)));
      rect.setAttribute('visibility', 'visible');
    }

    function show(a, b) {
      var picked = selectWindows(windows, a, b);
      if (picked.length === 0) {
        return;
      }
      var names = picked.map(function (w) { return w.name; });
      var focus = 'window=^(' + names.join('|') + ')$';
      var link = document.createElement('a');
      link.id = 'window-flame-link';
      link.href = profileURL + '?tagfocus=' + encodeURIComponent(focus);
      link.setAttribute('data-api', flameAPI + '?tagfocus=' + encodeURIComponent(focus));
      link.textContent = 'Flame graph of ' + picked[0].start + '–' + picked[picked.length - 1].end + ' s';
      out.textContent = '';
      out.appendChild(link);
      out.appendChild(document.createTextNode(' (client CPU, window' + (names.length > 1 ? 's ' : ' ') + names.join(', ') + ')'));
      out.hidden = false;
    }

    Array.prototype.forEach.call(box.querySelectorAll('svg[data-x-lo]'), function (svg) {
      svg.addEventListener('mousedown', function (ev) {
        if (ev.button !== 0) { return; }
        ev.preventDefault();
        var p = at(svg, ev);
        drag = { svg: svg, x: p.x, t: p.t };
        drawBand(svg, p.x, p.x);
      });
    });
    document.addEventListener('mousemove', function (ev) {
      if (!drag) { return; }
      drawBand(drag.svg, drag.x, at(drag.svg, ev).x);
    });
    document.addEventListener('mouseup', function (ev) {
      if (!drag) { return; }
      var d = drag;
      drag = null;
      var p = at(d.svg, ev);
      drawBand(d.svg, d.x, p.x);
      show(d.t, p.t);
    });
  }

  function init() {
    initCopy();
    initWindowSelection();
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
