// flamegraph.js: flame graphs drawn on a canvas, as icicles (the root on
// top, callees below their callers), for the profile, compare and run pages.
//
// It mounts on every <div class="flamegraph" data-src="URL"> of the page:
//
//   data-src           the flame graph API in the row format (format=rows
//                      of /api/profiles/:id/flamegraph or /api/diff, with
//                      the page's filters and order): the script adds
//                      zoom=, width= and search=, and draws the rows (see
//                      decodeRows). The profile page inlines its first
//                      answer (an inert <script type="application/json"
//                      id="ID-data">): it draws without a request.
//   data-mode          "tree" (default) or "diff": rows whose frames carry
//                      base values too (already normalised by the server)
//                      and, when the server's significance test decided,
//                      rows.significant (per name: true, false, null):
//                      tested, not significant frames are drawn dark grey
//                      and the legend says so; an undecided answer
//                      (significance.decided false) gets a .fg-banner
//                      saying how many runs per side would decide
//   data-zoom          the zoomed frame: frame names from the root's child
//                      down, joined with ";" (";" and "%" inside a name are
//                      written %3B and %25)
//   data-search        a regular expression to highlight (Go's RE2
//                      syntax): the server runs it, never this script
//   data-unit          the values' unit when the JSON gives none
//   data-zoom-param,   the query parameters that keep zoom and search in the
//   data-search-param  page's URL (history.replaceState); default "zoom" and
//                      "search", "" for none. Graphs sharing a search
//                      parameter share their search.
//
// Inside the element it uses (and creates when missing) a toolbar with the
// search input .fg-search, a .fg-reset button and the .fg-match output,
// the canvas .fg-canvas (inside a .fg-scroll box it adds), the tooltip
// .fg-tooltip, the legend .fg-legend and the status line .fg-message.
// The rows drawn for the current zoom and width set the graph's height:
// frames too narrow to draw do not make it taller. The .fg-scroll box caps
// the height shown and scrolls (app CSS); the canvas is no taller than that
// box (it sticks to the box's top, a .fg-spacer below it makes up the
// rest of the height) and draws the rows scrolled into view, again on
// every scroll, so a tall graph's bitmap costs no more to fill and hand
// to the compositor than a short one's. After the first paint the element gets
// data-rendered="true" and data-timing (milliseconds) and fires a bubbling
// "flamegraph:rendered" event; element.flameGraph is a small API for tests.
// A first draw cut at the window's bottom (see resize) is marked
// data-clipped="true" until the canvas has grown to its box, the task
// after that frame: rows below the cut are not drawn until then.
//
// Click a frame to zoom into it, click one of its ancestors (drawn full
// width above it) to zoom out, Escape to reset. Nothing here uses inline
// code or markup styles, so it runs under script-src 'self'.
//
// Numbers, sizes and shares are formatted by format.js (window.kbenchFormat),
// which pages load before this script; the profile page loads it after its
// first paint, which needs no number: until it has come, the match line is
// left empty and no tooltip is shown.
(function () {
  'use strict';

  var ROW = 18;            // CSS pixels per stack level
  var MIN_FRAME = 0.5;     // frames narrower than this are not drawn
  var PAD = 4;             // label padding inside a frame
  var FONT = '12px ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace';
  var MAX_CANVAS = 32000;  // device pixels: browsers draw no taller canvas
  var LEGEND_MAX = 14;
  var SEARCH_DELAY = 120;  // ms between the last keystroke and the search

  // ---- formatting: format.js, the Go formatter's rules ----

  // F is format.js's formatter, undefined until it has loaded.
  function F() { return window.kbenchFormat; }

  function fmtValue(v, unit) { return F().profileValue(v, unit); }

  function fmtSigned(v, unit) { return F().signedProfileValue(v, unit); }

  // fmtPct formats a fraction as a share: 0.1234 → "12.3%".
  function fmtPct(f) { return F().percent(f * 100); }

  function fmtSignedPct(f) { return F().signedPercent(f * 100); }

  // ---- packages and colours ----

  var FAMILIES = {
    runtime: { label: 'Go runtime', bands: [[34, 50]], s: 0.88, l: 0.6 },
    std: { label: 'standard library', bands: [[196, 226]], s: 0.58, l: 0.7 },
    kafkago: { label: 'kafka-go', bands: [[88, 132]], s: 0.48, l: 0.6 },
    kbench: { label: 'kbench', bands: [[262, 292]], s: 0.52, l: 0.72 },
    kernel: { label: 'kernel', bands: [[356, 370]], s: 0.68, l: 0.66 },
    other: { label: 'other', bands: [[150, 182], [304, 336]], s: 0.4, l: 0.71 },
    native: { label: 'native code', bands: [[20, 36]], s: 0.16, l: 0.7 },
    root: { label: '', bands: [[210, 210]], s: 0.08, l: 0.8 }
  };

  // KERNEL_ENTRY names the usual Linux system call entries: native frames
  // below one of them are kernel frames even without perf's _[k] mark.
  var KERNEL_ENTRY = /^(entry_SYSCALL|do_syscall_64|system_call|sysenter_|__x64_sys_|__ia32_sys_|__se_sys_|__do_sys_|sys_[a-z0-9_]+$|ret_from_fork|page_fault|asm_exc_|asm_sysvec_|irq_exit|do_softirq|__softirqentry)/;

  // frameKind splits a frame name into its package and family:
  //   github.com/segmentio/kafka-go/protocol.(*encoder).Write → github.com/segmentio/kafka-go/protocol
  //   runtime.mallocgc → runtime;  sun/nio/ch/IOUtil:.write_[j] → sun/nio/ch;  tcp_sendmsg_[k] → kernel
  function frameKind(name) {
    var mark = /_\[([a-z0-9])\]$/.exec(name);
    var s = mark ? name.slice(0, mark.index) : name;
    if ((mark && mark[1] === 'k') || /^\[(kernel|vdso)/.test(name)) { return { pkg: 'kernel', family: 'kernel' }; }
    if (name.charAt(0) === '[' || s === '') { return { pkg: 'native code', family: 'native' }; }
    var colon = s.indexOf(':.');
    if (colon > 0 || (mark && s.indexOf('/') > 0 && s.indexOf('.') < 0)) {
      // Java as perf-map-agent writes it: package/Class:.method
      var cls = colon > 0 ? s.slice(0, colon) : s;
      var slash = cls.lastIndexOf('/');
      var jp = slash > 0 ? cls.slice(0, slash) : cls;
      return { pkg: jp, family: /^(java|javax|jdk|sun|com\/sun)(\/|$)/.test(jp) ? 'std' : 'other' };
    }
    if (s.indexOf('::') > 0 && s.indexOf('.') < 0) {
      return { pkg: s.slice(0, s.indexOf('::')), family: 'native' };
    }
    // Go: the package path ends at the first dot after the last slash;
    // type parameters ([…]) may hold slashes and dots of their own.
    var bracket = s.indexOf('[');
    var head = bracket > 0 ? s.slice(0, bracket) : s;
    var last = head.lastIndexOf('/');
    var dot = head.indexOf('.', last + 1);
    if (dot <= 0) {
      if (KERNEL_ENTRY.test(s)) { return { pkg: 'kernel', family: 'kernel' }; }
      return { pkg: 'native code', family: 'native' };
    }
    var pkg = head.slice(0, dot);
    var family = 'other';
    if (pkg === 'runtime' || pkg.indexOf('runtime/') === 0 || pkg.indexOf('internal/runtime/') === 0) {
      family = 'runtime';
    } else if (pkg === 'github.com/segmentio/kafka-go' || pkg.indexOf('github.com/segmentio/kafka-go/') === 0) {
      family = 'kafkago';
    } else if (pkg === 'github.com/kbench/kbench' || pkg.indexOf('github.com/kbench/kbench/') === 0) {
      family = 'kbench';
    } else if (/^(java|javax|jdk|sun)\./.test(s)) {
      pkg = s.split('.').slice(0, -2).join('.') || pkg;
      family = 'std';
    } else if (pkg !== 'main' && pkg.split('/')[0].indexOf('.') < 0) {
      family = 'std'; // no dot in the first path element: Go's own packages
    }
    return { pkg: pkg, family: family };
  }

  // shortName drops the package directory: github.com/a/b.F → b.F.
  function shortName(name) {
    var bracket = name.indexOf('[');
    var head = bracket > 0 ? name.slice(0, bracket) : name;
    var slash = head.lastIndexOf('/');
    return slash >= 0 && slash < name.length - 1 ? name.slice(slash + 1) : name;
  }

  function hash(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    return h >>> 0;
  }

  function hslToRgb(h, s, l) {
    h = ((h % 360) + 360) % 360 / 360;
    function f(n) {
      var k = (n + h * 12) % 12;
      var a = s * Math.min(l, 1 - l);
      return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
    }
    return [f(0), f(8), f(4)];
  }

  function luminance(rgb) {
    return (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
  }

  function mix(rgb, to, t) {
    return [Math.round(rgb[0] + (to[0] - rgb[0]) * t), Math.round(rgb[1] + (to[1] - rgb[1]) * t), Math.round(rgb[2] + (to[2] - rgb[2]) * t)];
  }

  function css(rgb) { return 'rgb(' + rgb[0] + ',' + rgb[1] + ',' + rgb[2] + ')'; }

  var WHITE = [255, 255, 255];

  // paint is a frame's fill, its faded fill (search misses) and label colour.
  function paint(rgb) {
    return { rgb: rgb, fill: css(rgb), faded: css(mix(rgb, WHITE, 0.72)), text: luminance(rgb) < 0.5 ? '#ffffff' : '#1b1f24' };
  }

  function packagePaint(pkg, family) {
    var fam = FAMILIES[family] || FAMILIES.other;
    var h = hash(pkg);
    var band = fam.bands[h % fam.bands.length];
    var hue = band[0] + ((h >>> 8) % 1000) / 1000 * (band[1] - band[0]);
    var light = fam.l + (((h >>> 18) % 9) - 4) / 100;
    return paint(hslToRgb(hue, fam.s, light));
  }

  var GREY = [206, 209, 214];
  var RED = [214, 40, 40];
  var BLUE = [36, 98, 204];
  var DIFF_STEPS = 40;
  var diffPaints = { grew: [], shrank: [], same: paint(GREY) };
  for (var step = 0; step <= DIFF_STEPS; step++) {
    diffPaints.grew.push(paint(mix(GREY, RED, step / DIFF_STEPS)));
    diffPaints.shrank.push(paint(mix(GREY, BLUE, step / DIFF_STEPS)));
  }

  // diffPaint colours a frame of a differential graph: red when the
  // candidate spends more than the base, blue when less, by how much.
  function diffPaint(value, base) {
    var m = Math.max(value, base);
    if (!(m > 0) || value === base) { return diffPaints.same; }
    var t = Math.pow(Math.abs(value - base) / m, 0.6);
    var k = Math.max(1, Math.round(t * DIFF_STEPS));
    return value > base ? diffPaints.grew[k] : diffPaints.shrank[k];
  }

  var NARROW = paint([228, 231, 235]);

  // NOISE paints a frame whose function the server tested and found not
  // significant (rows.significant false): whatever its Δ, the runs
  // cannot tell it from run-to-run noise.
  var NOISE = paint([160, 164, 171]);

  // ---- decoding ----

  // RUN_NAME names the stand-in frames of the rows' folded runs: no real
  // frame has it, and no search matches it.
  var RUN_NAME = '\u0000other';

  // decodeRows reads a format=rows answer (json.rows): Levels[d] holds the
  // frames at depth d left to right, Stride numbers each: offset (gap
  // after the previous frame of the row), width, value, self, [base,
  // base self,] name index; name index -1 is a folded run of narrow
  // siblings (self: how many frames). A frame's parent is the frame of
  // the row above whose span holds its left edge. The frames are stored
  // in pre-order, in typed columns: parent, depth, end (exclusive end of
  // the subtree), x and w (left edge and width, in value units), runN (>
  // 0 for a run). t.cut is the frame the view was cut for and t.cutScale
  // the pixels per value unit it was cut at: a frame at or under t.cut
  // shown at a scale no larger holds every frame wide enough to draw.
  function decodeRows(r) {
    var levels = r && r.levels, names = r && r.names, stride = r && r.stride;
    if (!Array.isArray(levels) || !Array.isArray(names) || (stride !== 5 && stride !== 7) || levels.length === 0) {
      throw new Error('malformed rows');
    }
    var diff = stride === 7;
    names = names.map(String);
    var runName = names.length;
    names.push(RUN_NAME);
    // Pass 1: absolute edges per row, and each frame's parent (by row
    // position) through a walk along the row above.
    var n = 0, rowStart = [], k, d;
    for (d = 0; d < levels.length; d++) {
      if (!Array.isArray(levels[d]) || levels[d].length % stride !== 0) { throw new Error('malformed row ' + d); }
      rowStart.push(n);
      n += levels[d].length / stride;
    }
    var rx = new Float64Array(n), rw = new Float64Array(n), rparent = new Int32Array(n), rdepth = new Int32Array(n);
    var total = levels[0].length >= stride ? +levels[0][1] || 0 : 0;
    var eps = Math.abs(total) * 1e-9;
    for (d = 0; d < levels.length; d++) {
      var lv = levels[d], end = 0, i0 = rowStart[d], p = d > 0 ? rowStart[d - 1] : -1;
      var pEnd = d > 0 ? rowStart[d] : -1, best = -1;
      for (k = 0; k < lv.length; k += stride) {
        var i = i0 + k / stride;
        rx[i] = end + (+lv[k] || 0);
        rw[i] = +lv[k + 1] || 0;
        end = rx[i] + rw[i];
        rdepth[i] = d;
        if (d === 0) { rparent[i] = -1; continue; }
        // The parent: the last frame (not a run) of the row above whose
        // left edge is at or before this one's.
        for (; p < pEnd && rx[p] <= rx[i] + eps; p++) {
          if (+levels[d - 1][(p - rowStart[d - 1]) * stride + stride - 1] !== -1) { best = p; }
        }
        if (best < 0) { throw new Error('a frame of row ' + d + ' has no parent'); }
        rparent[i] = best;
      }
    }
    // Pass 2: children lists, then a pre-order walk.
    var kids = new Array(n);
    for (var c = 1; c < n; c++) {
      var pp = rparent[c];
      if (pp < 0) { throw new Error('rows hold more than one root'); }
      (kids[pp] || (kids[pp] = [])).push(c);
    }
    var t = {
      n: n, names: names, nameIdx: new Int32Array(n), value: new Float64Array(n), self: new Float64Array(n),
      base: diff ? new Float64Array(n) : null, baseSelf: diff ? new Float64Array(n) : null,
      runN: new Float64Array(n), runs: 0, runName: runName,
      parent: new Int32Array(n), depth: new Int32Array(n), end: new Int32Array(n), x: new Float64Array(n), w: new Float64Array(n)
    };
    var order = new Int32Array(n), stack = [0], pos = 0, maxDepth = 0;
    var newIdx = new Int32Array(n);
    while (stack.length > 0) {
      var ri = stack.pop();
      if (ri < 0) { t.end[newIdx[-ri - 1]] = pos; continue; }
      var j = pos++;
      order[j] = ri;
      newIdx[ri] = j;
      var rd = rdepth[ri], row = levels[rd], off = (ri - rowStart[rd]) * stride;
      var ni = +row[off + stride - 1];
      t.value[j] = +row[off + 2] || 0;
      t.x[j] = rx[ri];
      t.w[j] = rw[ri];
      t.depth[j] = rd;
      t.parent[j] = rparent[ri] >= 0 ? newIdx[rparent[ri]] : -1;
      if (rd > maxDepth) { maxDepth = rd; }
      if (diff) {
        t.base[j] = +row[off + 4] || 0;
        t.baseSelf[j] = ni === -1 ? 0 : +row[off + 5] || 0;
      }
      if (ni === -1) {
        t.nameIdx[j] = runName;
        t.runN[j] = +row[off + 3] || 0;
        t.runs++;
      } else {
        t.nameIdx[j] = ni >= 0 && ni < runName ? ni : runName;
        t.self[j] = +row[off + 3] || 0;
      }
      stack.push(-ri - 1);
      var ks = kids[ri];
      if (ks) { for (var m = ks.length - 1; m >= 0; m--) { stack.push(ks[m]); } }
    }
    t.maxDepth = maxDepth;
    t.cutPath = typeof r.zoom === 'string' ? r.zoom : '';
    t.cutMissing = !!r.zoom_missing;
    t.cutWidth = +r.width || 0;
    t.match = r.match || null;
    // significant (diffs): per name index, the server's verdict on the
    // function (true, false: tested, not significant; null: not tested);
    // absent when the runs could not decide.
    t.sig = Array.isArray(r.significant) && r.significant.length === runName ? r.significant : null;
    return t;
  }

  // resolveIn finds the frame at the end of a zoom path in t, and
  // whether the whole path was found.
  function resolveIn(t, path) {
    var cur = 0, parts = path ? path.split(';') : [];
    for (var k = 0; k < parts.length; k++) {
      var want = decodeFrame(parts[k]), found = -1;
      for (var c = cur + 1; c < t.end[cur]; c = t.end[c]) {
        if (t.names[t.nameIdx[c]] === want && !(t.runN[c] > 0)) { found = c; break; }
      }
      if (found < 0) { return { i: cur, missing: true }; }
      cur = found;
    }
    return { i: cur, missing: false };
  }

  // cutOf sets t.cut and t.cutScale.
  function cutOf(t) {
    t.cut = resolveIn(t, t.cutPath).i;
    t.cutScale = t.w[t.cut] > 0 ? t.cutWidth / t.w[t.cut] : Infinity;
  }

  // covers says whether t holds every frame wide enough to draw when
  // frame f spans W pixels.
  function covers(t, f, W) {
    if (t.runs === 0) { return true; }
    if (f < t.cut || f >= t.end[t.cut]) { return false; }
    if (!(t.w[f] > 0)) { return true; }
    return W / t.w[f] <= t.cutScale * (1 + 1e-9);
  }

  function decode(json) {
    if (json && json.rows) { return decodeRows(json.rows); }
    throw new Error('the response holds no flame graph rows');
  }

  // classify gives every frame a package and its paint. Native frames
  // called from the kernel are kernel frames.
  function classify(t) {
    var pkgIndex = new Map(), packages = [];
    function intern(pkg, family) {
      var key = family + '\u0000' + pkg;
      var id = pkgIndex.get(key);
      if (id === undefined) {
        id = packages.length;
        pkgIndex.set(key, id);
        packages.push({ name: pkg, family: family, paint: packagePaint(pkg, family) });
      }
      return id;
    }
    var byName = new Int32Array(t.names.length);
    for (var k = 0; k < t.names.length; k++) {
      var fk = frameKind(t.names[k]);
      byName[k] = intern(fk.pkg, fk.family);
    }
    var kernel = intern('kernel', 'kernel');
    var pkgOf = new Int32Array(t.n);
    for (var i = 0; i < t.n; i++) {
      var id = byName[t.nameIdx[i]];
      var p = t.parent[i];
      if (p < 0) {
        id = intern(t.names[t.nameIdx[i]], 'root');
      } else if (packages[id].family === 'native' && packages[pkgOf[p]].family === 'kernel') {
        id = kernel;
      }
      pkgOf[i] = id;
    }
    t.packages = packages;
    t.pkgOf = pkgOf;
    t.shortNames = new Array(t.names.length);
  }

  // ---- zoom paths in URLs ----

  function encodeFrame(name) { return name.replace(/[%;]/g, function (c) { return c === '%' ? '%25' : '%3B'; }); }
  function decodeFrame(s) { return s.replace(/%(25|3B)/gi, function (m, c) { return c === '25' ? '%' : ';'; }); }

  function readParam(name) {
    if (!name) { return null; }
    return new URLSearchParams(window.location.search).get(name);
  }

  function writeParams(updates) {
    var u = new URL(window.location.href);
    var changed = false;
    Object.keys(updates).forEach(function (k) {
      if (!k) { return; }
      var v = updates[k];
      if (v) {
        if (u.searchParams.get(k) !== v) { u.searchParams.set(k, v); changed = true; }
      } else if (u.searchParams.has(k)) {
        u.searchParams.delete(k);
        changed = true;
      }
    });
    if (changed) {
      window.history.replaceState(window.history.state, '', u.pathname + u.search + u.hash);
    }
    document.querySelectorAll('input[data-fg-sync]').forEach(function (inp) {
      var k = inp.getAttribute('data-fg-sync');
      if (Object.prototype.hasOwnProperty.call(updates, k)) { inp.value = updates[k] || ''; }
    });
  }

  // ---- the graph ----

  var graphs = [];
  var active = null;

  function child(el, cls, tag, parent, before) {
    var found = el.querySelector('.' + cls);
    if (found) { return found; }
    var made = document.createElement(tag);
    made.className = cls;
    (parent || el).insertBefore(made, before || null);
    return made;
  }

  function attr(el, name, dflt) {
    return el.hasAttribute(name) ? el.getAttribute(name) : dflt;
  }

  function Graph(el) {
    this.el = el;
    this.mode = el.getAttribute('data-mode') === 'diff' ? 'diff' : 'tree';
    this.unit = el.getAttribute('data-unit') || '';
    this.zoomParam = attr(el, 'data-zoom-param', 'zoom');
    this.searchParam = attr(el, 'data-search-param', 'search');
    this.t = null;
    this.focus = 0;
    // hover is the frame under the pointer: ≥ 0 a frame, < 0 a run of
    // narrow frames (see hitAt), null none.
    this.hover = null;
    this.query = '';
    // found is the server's answer to the current search: the frame names
    // it matches ({q, names: Set}), or its refusal ({q, error}). The page
    // never runs an expression itself: a JavaScript regexp can take
    // exponential time (^(.+)+#$), and searches come from shared links.
    this.found = null;
    this.nameMatch = null;
    this.hits = [];
    this.narrow = [];
    this.width = 0;
    this.dpr = 1;
    this.rows = 1;
    // viewH: the canvas's CSS height, the part of the graph's height
    // (rows × ROW) its box shows; scrollY: the box's scrollTop, kept
    // from its scroll events so that a draw never forces a layout.
    this.viewH = 0;
    this.scrollY = 0;
    this.pending = 0;
    this.dirty = false; // a redraw is asked for (schedule)
    this.draws = 0;     // canvas paints, for tests
    // clipped: the canvas was cut at the window's bottom for the page's
    // first paint (resize), grown to the box's height after it (grow).
    this.clipped = false;
    this.painted = false;
    this.legendKey = '';
    // viewSrc (data-src) is the format=rows API: the graph holds only
    // the frames wide enough to draw for the current zoom (see
    // decodeRows), fetches a zoomed frame's subtree when it needs more,
    // and asks the server for a search's totals and matches.
    this.viewSrc = el.getAttribute('data-src') || '';
    // onlyMatching: the server keeps only the stacks the search matches,
    // so a new search is a new graph.
    try {
      this.onlyMatching = new URL(this.viewSrc, window.location.href).searchParams.get('only_matching') === '1';
    } catch (e) {
      this.onlyMatching = false;
    }
    this.views = [];
    this.viewSeq = 0;
    this.matchSeq = 0;
    this.matchPending = '';
    this.serverMatch = null;
    this.fetches = 0;
    this.build();
  }

  Graph.prototype.build = function () {
    var el = this.el, g = this;
    var toolbar = el.querySelector('.fg-toolbar');
    if (!toolbar) {
      toolbar = document.createElement('div');
      toolbar.className = 'fg-toolbar';
      el.insertBefore(toolbar, el.firstChild);
    }
    this.toolbar = toolbar;
    this.input = el.querySelector('.fg-search');
    if (!this.input) {
      var label = document.createElement('label');
      label.className = 'fg-search-label';
      label.textContent = 'Search ';
      this.input = document.createElement('input');
      this.input.type = 'search';
      this.input.className = 'fg-search';
      this.input.placeholder = 'regexp';
      this.input.autocomplete = 'off';
      this.input.spellcheck = false;
      label.appendChild(this.input);
      toolbar.appendChild(label);
    }
    this.reset = child(el, 'fg-reset', 'button', toolbar);
    if (!this.reset.textContent) {
      this.reset.type = 'button';
      this.reset.textContent = 'Reset zoom';
      this.reset.classList.add('button');
    }
    this.reset.hidden = false;
    this.reset.disabled = true;
    this.match = child(el, 'fg-match', 'output', toolbar);
    this.match.setAttribute('aria-live', 'polite');
    var submit = el.querySelector('.fg-search-submit');
    if (submit) { submit.hidden = true; }
    this.message = child(el, 'fg-message', 'p');
    this.message.setAttribute('role', 'status');
    this.message.textContent = 'Loading the flame graph…';
    this.message.hidden = false;
    this.canvas = child(el, 'fg-canvas', 'canvas');
    if (!this.canvas.parentNode.classList.contains('fg-scroll')) {
      var box = document.createElement('div');
      box.className = 'fg-scroll';
      this.canvas.parentNode.insertBefore(box, this.canvas);
      box.appendChild(this.canvas);
    }
    this.box = this.canvas.parentNode;
    this.spacer = child(this.box, 'fg-spacer', 'div');
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('role', 'img');
    if (!this.canvas.hasAttribute('aria-label')) { this.canvas.setAttribute('aria-label', 'Flame graph'); }
    this.canvas.setAttribute('aria-description', 'Click a frame to zoom into it, an ancestor to zoom out, Escape to reset; the search box highlights frames.');
    this.tooltip = child(el, 'fg-tooltip', 'div');
    this.tooltip.setAttribute('role', 'tooltip');
    this.tooltip.hidden = true;
    this.legend = child(el, 'fg-legend', 'ul');
    this.ctx = this.canvas.getContext('2d');

    var form = this.input.form;
    if (form) {
      form.addEventListener('submit', function (ev) {
        ev.preventDefault();
        g.setSearch(g.input.value, { sync: true });
      });
    }
    var timer = 0;
    this.input.addEventListener('input', function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () { g.setSearch(g.input.value, { sync: true }); }, SEARCH_DELAY);
    });
    this.reset.addEventListener('click', function () { active = g; g.setFocus(0); });
    this.canvas.addEventListener('mousemove', function (ev) { g.onMove(ev); });
    this.canvas.addEventListener('mouseleave', function () { g.onLeave(); });
    this.canvas.addEventListener('click', function (ev) { g.onClick(ev); });
    this.canvas.addEventListener('focus', function () { active = g; });
    // The canvas shows the box's visible part: a scroll draws what came
    // into view (scroll events come once a frame, before its paint).
    this.box.addEventListener('scroll', function () {
      var y = g.box.scrollTop;
      if (y === g.scrollY) { return; }
      g.scrollY = y;
      if (g.t) { g.draw(); }
    }, { passive: true });
    if (window.ResizeObserver) {
      new ResizeObserver(function () { g.schedule(true); }).observe(el);
    }
  };

  // fetchJSON gets and parses a JSON answer; an error answer becomes an
  // Error with the server's message, status and field.
  function fetchJSON(src) {
    return fetch(src, { credentials: 'same-origin', headers: { Accept: 'application/json' } }).then(function (res) {
      return res.text().then(function (body) {
        if (res.ok) { return body; }
        var err = new Error(res.status + ' ' + res.statusText);
        err.status = res.status;
        try {
          var j = JSON.parse(body);
          if (j && typeof j.error === 'string') { err.message = j.error; }
          if (j && typeof j.field === 'string') { err.field = j.field; }
        } catch (e) { /* not JSON */ }
        throw err;
      });
    });
  }

  // prepare decodes an answer and lays it out.
  function prepare(json) {
    var t = decode(json);
    classify(t);
    cutOf(t);
    return t;
  }

  Graph.prototype.load = function () {
    var g = this, el = this.el;
    el.setAttribute('data-state', 'loading');
    var t0 = performance.now();
    // The profile page inlines its first view (an inert JSON script
    // element): it draws without waiting for a request.
    var inline = document.getElementById(el.id + '-data');
    var fail = function (err) {
      el.setAttribute('data-state', 'error');
      g.message.hidden = false;
      g.message.classList.add('fg-error');
      g.message.textContent = 'The flame graph could not be loaded: ' + (err && err.message ? err.message : String(err));
      el.dispatchEvent(new CustomEvent('flamegraph:error', { bubbles: true, detail: String(err && err.message) }));
    };
    var show = function (body) {
      var t1 = performance.now();
      var json = JSON.parse(body);
      var t = decode(json);
      var t2 = performance.now();
      classify(t);
      cutOf(t);
      var t3 = performance.now();
      if (json.unit) { g.unit = String(json.unit); }
      g.variants = json.name_variants && typeof json.name_variants === 'object' ? json.name_variants : null;
      g.showSignificance(json);
      g.t = t;
      g.keepView(t);
      g.takeMatch(t, el.getAttribute('data-search') || readParam(g.searchParam) || '');
      g.start();
      var t4 = performance.now();
      var timing = {
        fetch: round(t1 - t0), decode: round(t2 - t1), layout: round(t3 - t2), paint: round(t4 - t3),
        total: round(t4 - t1), nodes: t.n
      };
      el.setAttribute('data-nodes', String(t.n));
      el.setAttribute('data-state', 'ready');
      el.setAttribute('data-rendered', 'true');
      el.setAttribute('data-timing', JSON.stringify(timing));
      el.dispatchEvent(new CustomEvent('flamegraph:rendered', { bubbles: true, detail: timing }));
      g.ensureView();
      afterFrame(function () { g.grow(); });
    };
    if (inline) { // drawn at once, in this task
      try {
        show(inline.textContent);
      } catch (err) {
        fail(err);
      }
      return;
    }
    var q0 = el.getAttribute('data-search') || readParam(this.searchParam) || '';
    var src = this.viewURL(el.getAttribute('data-zoom') || readParam(this.zoomParam) || '', this.canvas.clientWidth || el.clientWidth, q0);
    fetchJSON(src).then(show).catch(fail);
  };

  // viewURL is the rows API's address for a zoom path, a width (CSS
  // pixels) and a search.
  Graph.prototype.viewURL = function (path, width, q) {
    var u = new URL(this.viewSrc, window.location.href);
    u.searchParams.set('format', 'rows');
    if (path) { u.searchParams.set('zoom', path); } else { u.searchParams.delete('zoom'); }
    u.searchParams.set('width', String(Math.max(1, Math.ceil(width || 1))));
    if (q) { u.searchParams.set('search', q); } else { u.searchParams.delete('search'); }
    return u.pathname + u.search;
  };

  // takeMatch keeps the search's answer a view came with: the names it
  // matches and its totals at the view's zoom.
  Graph.prototype.takeMatch = function (t, q) {
    if (!q || !t.match) { return; }
    var names = new Set();
    (Array.isArray(t.match.names) ? t.match.names : []).forEach(function (i) {
      if (i >= 0 && i < t.runName) { names.add(t.names[i]); }
    });
    this.found = { q: q, names: names };
    this.serverMatch = { q: q, zoom: t.cutPath, m: t.match };
  };

  // keepView remembers a view for zooming back to it; the first (the
  // page's own) stays.
  Graph.prototype.keepView = function (t) {
    this.views.push(t);
    if (this.views.length > 8) { this.views.splice(1, 1); }
  };

  // ensureView fetches the current zoom at the canvas's width when the
  // pruned view drawn lacks frames wide enough to draw (a zoom into a
  // narrow frame, a wider window).
  Graph.prototype.ensureView = function () {
    var t = this.t;
    if (!this.viewSrc || !t || covers(t, this.focus, this.width)) { return; }
    this.zoomPath(this.pathOf(this.focus));
  };

  // zoomPath zooms to the frame at path: from a view kept that covers
  // it, else from the server (always, with fresh set: a new search of an
  // only-matching graph).
  Graph.prototype.zoomPath = function (path, fresh) {
    var W = this.width || this.canvas.clientWidth;
    for (var k = fresh ? -1 : this.views.length - 1; k >= 0; k--) {
      var v = this.views[k], r = resolveIn(v, path);
      if (!r.missing && covers(v, r.i, W)) {
        this.useTree(v, r.i);
        return;
      }
    }
    var g = this, el = this.el, seq = ++this.viewSeq;
    el.setAttribute('data-state', 'loading');
    this.fetches++;
    var q = this.query;
    fetchJSON(this.viewURL(path, W, q)).then(function (body) {
      if (seq !== g.viewSeq) { return; }
      var t = prepare(JSON.parse(body));
      if (fresh) { g.views = []; }
      g.keepView(t);
      g.takeMatch(t, q);
      el.setAttribute('data-state', 'ready');
      el.setAttribute('data-fetches', String(g.fetches));
      g.useTree(t, t.cut);
      if (t.cutMissing) {
        g.message.hidden = false;
        g.message.textContent = 'Some frames of the zoom path are not in this profile: zoomed to the deepest one that is.';
      }
    }).catch(function (err) {
      if (seq !== g.viewSeq) { return; }
      el.setAttribute('data-state', 'error');
      g.message.hidden = false;
      g.message.classList.add('fg-error');
      g.message.textContent = 'The zoomed frames could not be loaded: ' + (err && err.message ? err.message : String(err));
    });
  };

  // useTree switches to another view's tree and focuses frame i of it.
  Graph.prototype.useTree = function (t, i) {
    if (this.t !== t) {
      this.t = t;
      this.compile(this.query);
      this.el.setAttribute('data-nodes', String(t.n));
    }
    this.setFocus(i, true);
  };

  function round(ms) { return Math.round(ms * 10) / 10; }

  // start applies the initial focus and search (data-* attributes, else
  // the URL) and draws for the first time.
  Graph.prototype.start = function () {
    var t = this.t, el = this.el;
    this.message.hidden = true;
    if (!(t.value[0] > 0) && !(t.base && t.base[0] > 0)) {
      this.message.hidden = false;
      this.message.textContent = 'This profile has no samples of this type.';
    }
    var zoom = el.getAttribute('data-zoom') || readParam(this.zoomParam) || '';
    var search = this.searched ? this.query : el.getAttribute('data-search') || readParam(this.searchParam) || '';
    // The view was cut for this zoom: the server resolved it.
    this.focus = t.cut;
    t.focusMissing = !!t.cutMissing;
    if (zoom && this.t.focusMissing) {
      this.message.hidden = false;
      this.message.textContent = 'Some frames of the zoom path are not in this profile: zoomed to the deepest one that is.';
    }
    this.input.value = search;
    this.compile(search);
    this.resize();
    this.draw();
    this.updateControls();
    this.updateMatch();
  };

  // resolve finds the frame at the end of a zoom path.
  Graph.prototype.resolve = function (path) {
    var r = resolveIn(this.t, path);
    this.t.focusMissing = r.missing;
    return r.i;
  };

  Graph.prototype.pathOf = function (i) {
    var t = this.t, parts = [];
    for (var a = i; a > 0; a = t.parent[a]) { parts.push(encodeFrame(t.names[t.nameIdx[a]])); }
    return parts.reverse().join(';');
  };

  // compile marks the names of the frames the search matches, from the
  // server's answer (asked for when missing: nothing is marked meanwhile).
  Graph.prototype.compile = function (q) {
    this.query = q;
    this.nameMatch = null;
    this.reError = '';
    this.input.removeAttribute('aria-invalid');
    if (!q) { return; }
    var f = this.found;
    if (!f || f.q !== q) {
      this.fetchMatch(this.t ? this.pathOf(this.focus) : '');
      return;
    }
    if (f.error) {
      this.reError = f.error;
      this.input.setAttribute('aria-invalid', 'true');
      return;
    }
    if (!this.t) { return; }
    var names = this.t.names, m = new Uint8Array(names.length);
    for (var i = 0; i < names.length; i++) {
      if (f.names.has(names[i])) { m[i] = 1; }
    }
    m[this.t.runName] = 0;
    this.nameMatch = m;
  };

  Graph.prototype.setSearch = function (q, opts) {
    q = q || '';
    if (q === this.query && this.input.value === q) { return; }
    if (this.input.value !== q) { this.input.value = q; }
    this.searched = true;
    if (this.onlyMatching && this.t) {
      // The stacks kept depend on the search: draw the server's new graph.
      this.query = q;
      this.zoomPath(this.pathOf(this.focus), true);
    }
    this.compile(q);
    if (this.t) {
      this.draw();
      this.updateMatch();
    }
    var upd = {};
    upd[this.searchParam] = q;
    writeParams(upd);
    if (opts && opts.sync && this.searchParam) {
      var self = this;
      graphs.forEach(function (o) {
        if (o !== self && o.searchParam === self.searchParam) { o.setSearch(q); }
      });
    }
  };

  Graph.prototype.setFocus = function (i, fetched) {
    if (!this.t) { return; }
    if (i < 0 || i >= this.t.n) { i = 0; }
    if (!fetched && this.viewSrc && !covers(this.t, i, this.width)) {
      this.hover = null;
      this.hideTooltip();
      this.zoomPath(this.pathOf(i));
      return;
    }
    this.focus = i;
    this.hover = null;
    this.hideTooltip();
    this.draw();
    this.updateControls();
    this.updateMatch();
    var upd = {};
    upd[this.zoomParam] = this.pathOf(i);
    writeParams(upd);
    this.el.setAttribute('data-current-zoom', this.pathOf(i));
  };

  Graph.prototype.updateControls = function () {
    this.reset.disabled = this.focus === 0;
    this.el.setAttribute('data-current-zoom', this.pathOf(this.focus));
  };

  // matchTotals is the server's answer to the search at the current zoom
  // (null while it is on its way; asked for here). The page counts
  // nothing itself: the server counts every frame of the whole graph.
  Graph.prototype.matchTotals = function () {
    var path = this.pathOf(this.focus), sm = this.serverMatch;
    if (sm && sm.q === this.query && sm.zoom === path) { return sm.m; }
    this.fetchMatch(path);
    return null;
  };

  // fetchMatch asks the server what the current search matches (Go's
  // RE2, linear in the names searched). An expression the server refuses
  // (a look-ahead, a back-reference, one too long) is shown as its error.
  Graph.prototype.fetchMatch = function (path) {
    var g = this, q = this.query, key = q + '\n' + path;
    if (!q || this.matchPending === key) { return; }
    this.matchPending = key;
    this.el.setAttribute('data-search-state', 'pending');
    var seq = ++this.matchSeq;
    fetchJSON(this.viewURL(path, this.width || this.canvas.clientWidth, q)).then(function (body) {
      if (seq !== g.matchSeq) { return; }
      g.matchPending = '';
      var t = decode(JSON.parse(body));
      g.takeMatch(t, q);
      if (!g.serverMatch || g.serverMatch.q !== q) { g.serverMatch = { q: q, zoom: t.cutPath, m: { total: 0, zoom: 0, count: 0 } }; }
      g.searchAnswered(q);
    }).catch(function (err) {
      if (seq !== g.matchSeq) { return; }
      g.matchPending = '';
      if (err && err.status === 400 && err.field === 'search') {
        g.found = { q: q, error: String(err.message || 'refused').replace(/^search: /, '') };
        g.searchAnswered(q);
        return;
      }
      g.match.classList.add('fg-error');
      g.match.textContent = 'The search failed: ' + (err && err.message ? err.message : String(err));
    });
  };

  // searchAnswered redraws with the server's answer for q, if q is still
  // the search.
  Graph.prototype.searchAnswered = function (q) {
    if (q !== this.query) { return; }
    this.compile(q);
    if (this.t) {
      this.draw();
      this.updateMatch();
    }
    this.el.setAttribute('data-search-state', this.reError ? 'error' : 'ready');
  };

  Graph.prototype.updateMatch = function () {
    var out = this.match, t = this.t;
    if (!F()) { return; } // again once format.js has come (loadLater)
    out.classList.remove('fg-error');
    out.removeAttribute('data-total-pct');
    out.removeAttribute('data-zoom-pct');
    if (this.reError) {
      out.classList.add('fg-error');
      out.textContent = 'Search refused: ' + this.reError;
      return;
    }
    if (!this.nameMatch || !t) {
      out.textContent = this.query && t ? 'searching…' : '';
      return;
    }
    var r = this.matchTotals();
    if (!r) {
      out.textContent = 'searching…';
      return;
    }
    var tot = t.value[0] > 0 ? r.total / t.value[0] : 0;
    var text = 'matched: ' + fmtPct(tot) + ' of total';
    out.setAttribute('data-total-pct', String(tot * 100));
    if (this.focus !== 0) {
      var zv = t.value[this.focus];
      var zp = zv > 0 ? r.zoom / zv : 0;
      out.setAttribute('data-zoom-pct', String(zp * 100));
      text += ', ' + fmtPct(zp) + ' of the zoomed frame';
    }
    if (t.base && t.base[0] > 0) {
      text += ' (base: ' + fmtPct((+r.base_total || 0) / t.base[0]) + ')';
    }
    if (r.count === 0) { text += ': no frame matches'; }
    out.textContent = text;
  };

  // ---- drawing ----

  // visibleRows counts the rows draw would fill for the current focus at
  // width W: the deepest frame at least MIN_FRAME wide, or run of narrow
  // frames at least a pixel wide, with the same merging as draw. Deeper
  // frames than the canvas can hold are left out.
  Graph.prototype.visibleRows = function (W) {
    var t = this.t, dpr = window.devicePixelRatio || 1;
    var cap = Math.max(1, Math.floor(MAX_CANVAS / (ROW * dpr)));
    if (!t || !(W > 0)) { return 1; }
    var f = this.focus, deepest = t.depth[f];
    var x0 = t.x[f], k = t.w[f] > 0 ? W / t.w[f] : 0;
    var last = t.end[f], ends = t.end, depth = t.depth, xs = t.x, ws = t.w, runN = t.runN;
    var runD = -1, runX0 = 0, runX1 = 0;
    for (var i = f; i < last;) {
      var pw = ws[i] * k;
      if (pw < MIN_FRAME || (runN && runN[i] > 0)) {
        var px = (xs[i] - x0) * k;
        if (runD === depth[i] && Math.abs(px - runX1) < 1e-6) {
          runX1 = px + pw;
        } else {
          if (runD > deepest && runX1 - runX0 >= 1) { deepest = runD; }
          runD = depth[i];
          runX0 = px;
          runX1 = px + pw;
        }
        i = ends[i];
        continue;
      }
      if (runD > deepest && runX1 - runX0 >= 1) { deepest = runD; }
      runD = -1;
      if (depth[i] > deepest) {
        deepest = depth[i];
        if (deepest + 1 >= cap) { break; }
      }
      i++;
    }
    if (runD > deepest && runX1 - runX0 >= 1) { deepest = runD; }
    return Math.min(deepest + 1, cap);
  };

  // viewCap is the most CSS pixels of height the .fg-scroll box shows
  // (its max-height; Infinity when it has none).
  Graph.prototype.viewCap = function () {
    var cap = parseFloat(window.getComputedStyle(this.box).maxHeight);
    return cap > 0 ? cap : Infinity;
  };

  Graph.prototype.resize = function () {
    var w = this.canvas.clientWidth || this.el.clientWidth;
    var dpr = window.devicePixelRatio || 1;
    var rows = this.visibleRows(w);
    this.rows = rows;
    var h = rows * ROW;
    // The canvas is as tall as what the box shows, never the whole graph;
    // until the graph's first frame has been rendered, no taller than
    // what the window shows of the box either (whole rows): a page's
    // first paint fills and hands to the compositor no pixel out of
    // sight, and grow draws the rest right after it.
    var view = Math.min(h, this.viewCap());
    if (!this.painted) {
      var shown = Math.ceil((window.innerHeight - this.box.getBoundingClientRect().top) / ROW) * ROW;
      this.clipped = shown < view;
      if (this.clipped) {
        view = Math.max(ROW, shown);
        this.el.setAttribute('data-clipped', 'true');
      }
    }
    if (w === this.width && dpr === this.dpr && h === this.height && view === this.viewH) { return false; }
    this.width = w;
    this.height = h;
    this.viewH = view;
    this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(w * dpr));
    this.canvas.height = Math.max(1, Math.round(view * dpr));
    this.canvas.style.height = view + 'px';
    this.spacer.style.height = (h - view) + 'px';
    return true;
  };

  // grow ends the first paint's clipping (resize): once the graph's
  // first frame has been rendered, the canvas takes the box's whole
  // height.
  Graph.prototype.grow = function () {
    this.painted = true;
    if (this.clipped && this.resize()) { this.draw(); }
    this.clipped = false;
    this.el.removeAttribute('data-clipped');
  };

  // afterFrame runs fn in a task after the next frame has been rendered
  // (a timeout queued from that frame's requestAnimationFrame callback).
  function afterFrame(fn) {
    window.requestAnimationFrame(function () { window.setTimeout(fn, 0); });
  }

  // top is the graph's y (CSS pixels) at the canvas's top edge: the box's
  // scroll, as far as the graph's height allows.
  Graph.prototype.top = function () {
    return Math.max(0, Math.min(this.scrollY, this.height - this.viewH));
  };

  // schedule redraws in the next animation frame. With resized set (the
  // ResizeObserver, the window's resize) it redraws only when the canvas's
  // size did change: the observer's first call, right after the first
  // draw, would otherwise paint the same graph again.
  Graph.prototype.schedule = function (resized) {
    var g = this;
    if (!resized) { this.dirty = true; }
    if (this.pending || !this.t) { return; }
    this.pending = window.requestAnimationFrame(function () {
      g.pending = 0;
      if (g.resize() || g.dirty) {
        g.dirty = false;
        g.draw();
      }
      g.ensureView();
    });
  };

  Graph.prototype.paintOf = function (i) {
    var t = this.t, p;
    if (this.mode === 'diff' && t.base) {
      p = i === 0 ? diffPaints.same : (t.sig && t.sig[t.nameIdx[i]] === false ? NOISE : diffPaint(t.value[i], t.base[i]));
    } else {
      p = t.packages[t.pkgOf[i]].paint;
    }
    return p;
  };

  Graph.prototype.draw = function () {
    if (!this.t) { return; }
    // A zoom or a search changes no width, but a zoom changes which rows
    // are drawn: the canvas follows before it is painted.
    if (this.visibleRows(this.width) !== this.rows) { this.resize(); }
    var t = this.t, ctx = this.ctx, W = this.width;
    if (W <= 0) { return; }
    this.draws++;
    // The canvas shows rows [rowFrom, rowTo) of the graph: frames in other
    // rows are kept for hit-testing and the legend but not painted.
    var top = this.top();
    this.rowFrom = Math.floor(top / ROW);
    this.rowTo = Math.ceil((top + this.viewH) / ROW);
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, -top * this.dpr);
    ctx.clearRect(0, top, W, this.viewH);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    if (!this.charW) { this.charW = ctx.measureText('MMMMMMMMMM').width / 10 || 7; }
    var rows = this.rows;
    this.hits.length = Math.min(this.hits.length, rows);
    for (var r = 0; r < rows; r++) {
      if (this.hits[r]) { this.hits[r].length = 0; } else { this.hits[r] = []; }
    }
    this.narrow.length = 0;
    this.pkgWidth = new Float64Array(t.packages.length);
    this.hoverRect = null;

    var f = this.focus;
    var chain = [];
    for (var a = t.parent[f]; a >= 0; a = t.parent[a]) { chain.push(a); }
    for (var c = chain.length - 1; c >= 0; c--) { this.frame(chain[c], 0, W); }

    var x0 = t.x[f], k = t.w[f] > 0 ? W / t.w[f] : 0;
    var end = t.end[f], depth = t.depth, xs = t.x, ws = t.w, runN = t.runN;
    var run = { d: -1, x0: 0, x1: 0, n: 0, parent: -1, value: 0 };
    for (var i = f; i < end;) {
      var pw = ws[i] * k;
      // A run of a pruned view (frames the server left out as too
      // narrow) is drawn as the frames it stands for would be.
      var many = runN && runN[i] > 0 ? runN[i] : 0;
      if (pw < MIN_FRAME || depth[i] >= rows || many) {
        var px = (xs[i] - x0) * k;
        if (run.d === depth[i] && Math.abs(px - run.x1) < 1e-6) {
          run.x1 = px + pw;
          run.n += many || 1;
          run.value += t.value[i];
        } else {
          this.flushNarrow(run);
          run.d = depth[i];
          run.x0 = px;
          run.x1 = px + pw;
          run.n = many || 1;
          run.parent = t.parent[i];
          run.value = t.value[i];
        }
        i = t.end[i];
        continue;
      }
      if (run.n > 0) { this.flushNarrow(run); }
      this.frame(i, (xs[i] - x0) * k, pw);
      i++;
    }
    this.flushNarrow(run);
    if (this.hoverRect) {
      var hr = this.hoverRect;
      ctx.strokeStyle = '#1b1f24';
      ctx.lineWidth = 1.5;
      ctx.strokeRect(hr[0] + 0.75, hr[1] + 0.75, Math.max(hr[2] - 2.5, 0.5), ROW - 2.5);
    }
    this.updateLegend();
  };

  // flushNarrow draws a run of adjacent frames each too narrow to draw as
  // one grey block, when the run together is at least a pixel wide.
  Graph.prototype.flushNarrow = function (run) {
    if (run.n > 0 && run.x1 - run.x0 >= 1 && run.d < this.rows) {
      var ctx = this.ctx, y = run.d * ROW;
      if (run.d >= this.rowFrom && run.d < this.rowTo) {
        ctx.fillStyle = NARROW.fill;
        ctx.fillRect(run.x0, y, run.x1 - run.x0, ROW - 1);
      }
      var id = this.narrow.length;
      this.narrow.push({ n: run.n, parent: run.parent, value: run.value });
      this.hits[run.d].push(run.x0, run.x1 - run.x0, -1 - id);
    }
    run.n = 0;
    run.d = -1;
  };

  Graph.prototype.frame = function (i, px, pw) {
    var t = this.t, ctx = this.ctx, d = t.depth[i], y = d * ROW;
    if (d >= this.rows) { return; }
    this.hits[d].push(px, pw, i);
    this.pkgWidth[t.pkgOf[i]] += pw;
    if (i === this.hover) { this.hoverRect = [px, y, pw]; }
    if (d < this.rowFrom || d >= this.rowTo) { return; } // scrolled out of view
    var p = this.paintOf(i);
    var miss = this.nameMatch && !this.nameMatch[t.nameIdx[i]];
    ctx.fillStyle = miss ? p.faded : p.fill;
    ctx.fillRect(px, y, pw > 2 ? pw - 1 : pw, ROW - 1);
    if (pw < PAD * 2 + this.charW * 2) { return; }
    var ni = t.nameIdx[i], name = t.names[ni];
    var max = Math.floor((pw - PAD * 2) / this.charW);
    var label = name;
    if (name.length > max) {
      var short = t.shortNames[ni];
      if (short === undefined) { short = t.shortNames[ni] = shortName(name); }
      label = short.length <= max ? short : short.slice(0, max - 1) + '…';
    }
    ctx.fillStyle = miss ? '#6b7380' : p.text;
    ctx.fillText(label, Math.max(px, 0) + PAD, y + ROW / 2);
  };

  Graph.prototype.updateLegend = function () {
    var t = this.t, ul = this.legend;
    if (this.mode === 'diff' && t.base) {
      var key = t.sig ? 'diff-sig' : 'diff';
      if (this.legendKey === key) { return; }
      this.legendKey = key;
      ul.textContent = '';
      var items = t.sig ? [['fg-swatch-grew', 'candidate spends more than the base: significant, or not tested (under 1 % of the total)'],
        ['fg-swatch-shrank', 'candidate spends less: significant, or not tested (frames gone from the candidate keep their base width)'],
        ['fg-swatch-noise', 'tested, not significant: the change is within the runs\' noise'],
        ['fg-swatch-same', 'unchanged'],
        ['fg-swatch-narrow', 'frames too narrow to draw']] : [['fg-swatch-grew', 'candidate spends more than the base'],
        ['fg-swatch-shrank', 'candidate spends less (frames gone from the candidate keep their base width)'],
        ['fg-swatch-same', 'unchanged'],
        ['fg-swatch-narrow', 'frames too narrow to draw']];
      items.forEach(function (e) {
        var li = document.createElement('li');
        var sw = document.createElement('span');
        sw.className = 'fg-swatch ' + e[0];
        li.appendChild(sw);
        li.appendChild(document.createTextNode(e[1]));
        ul.appendChild(li);
      });
      return;
    }
    var ids = [];
    for (var i = 0; i < t.packages.length; i++) {
      if (this.pkgWidth[i] > 0 && t.packages[i].family !== 'root') { ids.push(i); }
    }
    var pw = this.pkgWidth;
    ids.sort(function (a, b) { return pw[b] - pw[a] || (t.packages[a].name < t.packages[b].name ? -1 : 1); });
    var more = ids.length - LEGEND_MAX;
    ids = ids.slice(0, LEGEND_MAX);
    var key = ids.join(',') + '+' + more;
    if (key === this.legendKey) { return; }
    this.legendKey = key;
    ul.textContent = '';
    ids.forEach(function (id) {
      var pkg = t.packages[id];
      var li = document.createElement('li');
      var sw = document.createElement('span');
      sw.className = 'fg-swatch';
      sw.style.backgroundColor = pkg.paint.fill;
      li.appendChild(sw);
      li.appendChild(document.createTextNode(pkg.name));
      li.title = FAMILIES[pkg.family].label;
      ul.appendChild(li);
    });
    if (more > 0) {
      var li = document.createElement('li');
      li.className = 'fg-legend-more';
      li.textContent = '+' + more + ' more';
      ul.appendChild(li);
    }
  };

  // showSignificance shows, above a diff, the banner of an answer whose
  // runs are too few for the significance test (json.significance not
  // decided): the colours then show every change, noise included.
  Graph.prototype.showSignificance = function (json) {
    var s = json && json.significance;
    if (this.mode !== 'diff' || !s || typeof s !== 'object') { return; }
    // A banner the page rendered just before the graph (the Profiles
    // section's) is the graph's own: it is not said twice.
    var el = this.el, prev = el.previousElementSibling;
    var banner = el.querySelector('.fg-banner') || (prev && prev.classList.contains('fg-banner') ? prev : null);
    if (s.decided) {
      if (banner) { banner.hidden = true; }
      return;
    }
    if (!banner) {
      banner = document.createElement('p');
      banner.className = 'fg-banner';
      banner.setAttribute('role', 'note');
      var scroll = this.canvas.parentNode;
      scroll.parentNode.insertBefore(banner, scroll);
    }
    var nb = Array.isArray(json.runs_base) ? json.runs_base.length : 1;
    var nt = Array.isArray(json.runs_target) ? json.runs_target.length : 1;
    var need = +s.runs_needed || 3;
    banner.textContent = 'This diff cannot separate a change from noise: it has ' + nb + (nb === 1 ? ' run' : ' runs') +
      ' on the base side and ' + nt + ' on the candidate side. ' + need +
      ' runs per side would let the significance test (Welch\'s t on log shares) tell which changes are real; until then every change is coloured, noise included.';
    banner.hidden = false;
  };

  // ---- pointer ----

  // hitAt returns the frame under a point: ≥ 0 a frame, < 0 a narrow run
  // (-1 - index into this.narrow), null nothing.
  Graph.prototype.hitAt = function (x, y) {
    var row = this.hits[Math.floor(y / ROW)];
    if (!row || row.length === 0) { return null; }
    var lo = 0, hi = row.length / 3 - 1, best = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (row[mid * 3] <= x) { best = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    if (best < 0 || x > row[best * 3] + row[best * 3 + 1]) { return null; }
    return row[best * 3 + 2];
  };

  // pointer is where an event is in the graph (CSS pixels): the canvas
  // shows the graph from top() down.
  function pointer(g, ev) {
    var r = g.canvas.getBoundingClientRect();
    return { x: ev.clientX - r.left, y: ev.clientY - r.top + g.top() };
  }

  Graph.prototype.onMove = function (ev) {
    if (!this.t) { return; }
    if (!F()) {
      // format.js comes after the first frame (loadLater): a pointer
      // already over the graph gets its tooltip when it has come.
      this.pendingMove = { clientX: ev.clientX, clientY: ev.clientY };
      return;
    }
    active = this;
    var p = pointer(this, ev);
    var id = this.hitAt(p.x, p.y);
    this.canvas.classList.toggle('fg-pointer', id !== null);
    if (id === null) {
      this.onLeave();
      return;
    }
    if (id !== this.hover || this.tooltip.hidden) {
      this.hover = id;
      this.fillTooltip(id);
      this.schedule();
    }
    this.placeTooltip(ev);
  };

  Graph.prototype.onLeave = function () {
    this.pendingMove = null;
    this.hideTooltip();
    if (this.hover !== null) {
      this.hover = null;
      this.schedule();
    }
  };

  // hideTooltip hides the tooltip and empties it: it is only ever shown
  // filled for what is under the pointer.
  Graph.prototype.hideTooltip = function () {
    this.tooltip.hidden = true;
    this.tooltip.textContent = '';
  };

  Graph.prototype.onClick = function (ev) {
    if (!this.t) { return; }
    active = this;
    var p = pointer(this, ev);
    var id = this.hitAt(p.x, p.y);
    if (id === null) { return; }
    if (id < 0) { id = this.narrow[-1 - id].parent; }
    if (id !== this.focus) { this.setFocus(id); }
  };

  Graph.prototype.placeTooltip = function (ev) {
    var tip = this.tooltip, box = this.el.getBoundingClientRect();
    tip.hidden = false;
    var x = ev.clientX - box.left + 14, y = ev.clientY - box.top + 16;
    var tw = tip.offsetWidth, th = tip.offsetHeight;
    if (x + tw > box.width - 4) { x = Math.max(4, ev.clientX - box.left - tw - 14); }
    if (y + th > box.height - 4 && ev.clientY - box.top - th - 8 > 0) { y = ev.clientY - box.top - th - 8; }
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  };

  function row(dl, term, value, cls) {
    var dt = document.createElement('dt');
    dt.textContent = term;
    var dd = document.createElement('dd');
    dd.textContent = value;
    if (cls) { dd.className = cls; }
    dl.appendChild(dt);
    dl.appendChild(dd);
  }

  Graph.prototype.fillTooltip = function (id) {
    var t = this.t, tip = this.tooltip, unit = this.unit;
    tip.textContent = '';
    var title = document.createElement('strong');
    title.className = 'fg-tip-name';
    var dl = document.createElement('dl');
    dl.className = 'fg-tip-rows';
    var hint = document.createElement('p');
    hint.className = 'fg-tip-hint';
    var total = t.value[0], focus = this.focus, zv = t.value[focus];
    var shares = function (v) {
      var s = fmtPct(total > 0 ? v / total : 0) + ' of total';
      if (focus !== 0 && zv > 0) { s += ', ' + fmtPct(v / zv) + ' of zoomed'; }
      return s;
    };
    if (id < 0) {
      var nr = this.narrow[-1 - id];
      title.textContent = nr.n + (nr.n === 1 ? ' frame' : ' frames') + ' too narrow to draw';
      tip.appendChild(title);
      row(dl, 'Total', fmtValue(nr.value, unit) + ' (' + shares(nr.value) + ')');
      tip.appendChild(dl);
      hint.textContent = 'Click to zoom into their caller.';
      tip.appendChild(hint);
      return;
    }
    var name = t.names[t.nameIdx[id]];
    title.textContent = name;
    tip.appendChild(title);
    var pkg = t.packages[t.pkgOf[id]];
    if (pkg.family !== 'root') {
      var sub = document.createElement('span');
      sub.className = 'fg-tip-pkg';
      sub.textContent = pkg.name + (pkg.family === 'other' || pkg.family === 'native' ? '' : ' · ' + FAMILIES[pkg.family].label);
      tip.appendChild(sub);
    }
    // The names the server merged into this one (JVM lambdas of several
    // processes): name_variants of the answer.
    var variants = this.variants && Object.prototype.hasOwnProperty.call(this.variants, name) ? this.variants[name] : null;
    if (Array.isArray(variants) && variants.length > 0) {
      var vs = document.createElement('p');
      vs.className = 'fg-tip-variants';
      vs.textContent = 'Merged from ' + variants.length + (variants.length === 1 ? ' name: ' : ' names: ') + variants.join(', ');
      tip.appendChild(vs);
    }
    var v = t.value[id], s = t.self[id];
    if (this.mode === 'diff' && t.base) {
      var b = t.base[id], bs = t.baseSelf[id], dv = v - b;
      row(dl, 'Base', fmtValue(b, unit) + ' (self ' + fmtValue(bs, unit) + ')');
      row(dl, 'Candidate', fmtValue(v, unit) + ' (self ' + fmtValue(s, unit) + ')');
      var pct = b > 0 ? fmtSignedPct(dv / b) : (v > 0 ? 'new in the candidate' : '—');
      if (v === 0 && b > 0) { pct += ', gone from the candidate'; }
      row(dl, 'Δ', fmtSigned(dv, unit) + ' (' + pct + ')', dv > 0 ? 'fg-grew' : (dv < 0 ? 'fg-shrank' : ''));
      row(dl, 'Δ self', fmtSigned(s - bs, unit));
      if (t.sig && id > 0 && t.runN[id] === 0) {
        var sv = t.sig[t.nameIdx[id]];
        row(dl, 'Significance', sv === true ? 'significant' : (sv === false ? 'not significant: within the runs\' noise' : 'not tested (under 1 % of the total)'));
      }
      row(dl, 'Share', shares(v));
    } else {
      row(dl, 'Total', fmtValue(v, unit) + ' (' + shares(v) + ')');
      row(dl, 'Self', fmtValue(s, unit) + ' (' + shares(s) + ')');
    }
    tip.appendChild(dl);
    if (id === this.focus) {
      hint.textContent = id === 0 ? 'The whole profile.' : 'Zoomed frame: click an ancestor above or press Escape to zoom out.';
    } else if (t.depth[id] < t.depth[this.focus]) {
      hint.textContent = 'Click to zoom out to this frame.';
    } else {
      hint.textContent = 'Click to zoom in.';
    }
    tip.appendChild(hint);
  };

  // ---- the API for tests and other scripts ----

  Graph.prototype.api = function () {
    var g = this;
    return {
      zoomTo: function (path) {
        path = path || '';
        if (g.viewSrc && g.t) {
          // A frame the view left out comes from the server: the zoom
          // lands when it has arrived.
          var r = resolveIn(g.t, path);
          if (r.missing || !covers(g.t, r.i, g.width)) {
            g.hover = null;
            g.hideTooltip();
            g.zoomPath(path);
            return path;
          }
        }
        g.setFocus(path ? g.resolve(path) : 0);
        return g.pathOf(g.focus);
      },
      reset: function () { g.setFocus(0); },
      search: function (q) { g.setSearch(q, { sync: true }); },
      state: function () {
        return {
          zoom: g.t ? g.pathOf(g.focus) : '', search: g.query, mode: g.mode, unit: g.unit,
          nodes: g.t ? g.t.n : 0, match: g.match.textContent,
          // pruned: the view holds folded runs of narrow frames;
          // fetches: how many zooms fetched a subtree.
          pruned: !!(g.t && g.t.runs > 0), fetches: g.fetches,
          // rows: the frame names held, row by row from the zoomed frame
          // (runs as "…"), for tests of the order.
          rows: g.rowNames(),
          // total: the root's value (what the filters kept); highlighted:
          // how many frames held the server's answer marks.
          total: g.t ? g.t.value[0] : 0, highlighted: g.highlighted(),
          // draws: how often the canvas was painted.
          draws: g.draws,
          // view: the graph's height, the canvas's (what its box shows),
          // the box's scroll and the rows [from, to) the canvas shows.
          view: { height: g.height, canvas: g.viewH, top: g.t ? g.top() : 0, from: g.rowFrom || 0, to: g.rowTo || 0 }
        };
      },
      // fill is the colour a frame is painted with (a diff's red, blue or
      // grey), null when the path is not in the graph.
      fill: function (path) {
        if (!g.t) { return null; }
        var r = resolveIn(g.t, path || '');
        return r.missing ? null : g.paintOf(r.i).fill;
      },
      // frameBox gives a drawn frame's box in CSS pixels relative to the
      // canvas as scrolled (y < 0 or past the canvas: scrolled out of
      // view), or null when the path is not drawn.
      frameBox: function (path) {
        if (!g.t) { return null; }
        var i = path ? g.resolve(path) : 0;
        if (g.t.focusMissing) { return null; }
        var rowHits = g.hits[g.t.depth[i]] || [];
        for (var k = 0; k < rowHits.length; k += 3) {
          if (rowHits[k + 2] === i) { return { x: rowHits[k], y: g.t.depth[i] * ROW - g.top(), width: rowHits[k + 1], height: ROW - 1 }; }
        }
        return null;
      },
      // frame describes the frame at a zoom path in the view held (null
      // when the view lacks it), for flameviews.js's keyboard and stack
      // copy: its names from the root's child down, its parent's path
      // (null for the root), its children's paths and values left to
      // right (folded runs left out).
      frame: function (path) {
        if (!g.t) { return null; }
        var r = resolveIn(g.t, path || '');
        if (r.missing) { return null; }
        var t = g.t, i = r.i, names = [], kids = [];
        for (var a = i; a > 0; a = t.parent[a]) { names.push(t.names[t.nameIdx[a]]); }
        names.reverse();
        for (var c = i + 1; c < t.end[i]; c = t.end[c]) {
          if (!(t.runN[c] > 0)) { kids.push({ path: g.pathOf(c), value: t.value[c] }); }
        }
        return { path: g.pathOf(i), names: names, parent: i > 0 ? g.pathOf(t.parent[i]) : null, children: kids, value: t.value[i] };
      }
    };
  };

  // rowNames lists the names of the frames held under the zoomed frame,
  // row by row, left to right (runs as "…").
  Graph.prototype.rowNames = function () {
    var t = this.t, out = [];
    if (!t) { return out; }
    var f = this.focus;
    for (var i = f; i < t.end[f]; i++) {
      var d = t.depth[i] - t.depth[f];
      while (out.length <= d) { out.push([]); }
      out[d].push(t.runN[i] > 0 ? '…' : t.names[t.nameIdx[i]]);
    }
    return out;
  };

  Graph.prototype.highlighted = function () {
    var t = this.t, m = this.nameMatch, n = 0;
    if (!t || !m) { return 0; }
    for (var i = 0; i < t.n; i++) { if (m[t.nameIdx[i]]) { n++; } }
    return n;
  };

  // ---- page wiring ----

  function onKey(ev) {
    if (ev.key !== 'Escape' || ev.defaultPrevented) { return; }
    var tag = ev.target && ev.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') { return; }
    var g = active || graphs[0];
    if (g && g.t && g.focus !== 0) { g.setFocus(0); }
  }

  function onSearchLink(ev) {
    var a = ev.target.closest && ev.target.closest('a[data-fg-search]');
    if (!a || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) { return; }
    var param = a.getAttribute('data-fg-param') || 'search';
    var q = a.getAttribute('data-fg-search');
    var targets = graphs.filter(function (g) { return g.searchParam === param; });
    if (targets.length === 0) { return; }
    ev.preventDefault();
    targets.forEach(function (g) { g.setSearch(q); });
    var id = (a.hash || '').slice(1);
    var dest = id && document.getElementById(id);
    if (dest) { dest.scrollIntoView({ block: 'start' }); }
  }

  // mount starts every graph of the page not started yet.
  function mount() {
    document.querySelectorAll('.flamegraph[data-src]').forEach(function (el) {
      if (el.flameGraph) { return; }
      var g = new Graph(el);
      graphs.push(g);
      el.flameGraph = g.api();
      g.load();
    });
    if (graphs.length > 0) { afterFirstPaint(); }
  }

  // ---- the page's second stage ----

  // The profile page's first frame holds its header, facts and graph
  // and little else: its style sheets are inline (profile-first.css),
  // and the parts it skips (class fp-later: the forms, the search box,
  // the write-path table) wait for the style sheets and scripts its
  // data-later-styles and data-later-scripts name. Those are loaded once
  // the frame holding the graph has been rendered (the task after that
  // frame's requestAnimationFrame), and the parts shown when all have
  // arrived, so none is drawn half styled; the graphs the scripts added
  // are mounted then (data-later="ready").
  var laterStarted = false;

  function afterFirstPaint() {
    var host = document.querySelector('[data-later-styles], [data-later-scripts]');
    if (laterStarted || !host) { return; }
    laterStarted = true;
    afterFrame(function () { loadLater(host); });
  }

  function loadLater(host) {
    var urls = function (name) { return (host.getAttribute(name) || '').split(/\s+/).filter(Boolean); };
    var pending = 1;
    var done = function () {
      if (--pending > 0) { return; }
      document.querySelectorAll('.fp-later').forEach(function (el) { el.classList.remove('fp-later'); });
      mount(); // the graphs the scripts added (a sandwich's)
      graphs.forEach(function (g) { // format.js has come
        if (!g.t) { return; }
        g.updateMatch();
        var move = g.pendingMove;
        if (move) {
          g.pendingMove = null;
          g.onMove(move);
        }
      });
      host.setAttribute('data-later', 'ready');
    };
    var add = function (el) {
      pending++;
      el.addEventListener('load', done);
      el.addEventListener('error', done);
      document.head.appendChild(el);
    };
    host.setAttribute('data-later', 'loading');
    urls('data-later-styles').forEach(function (href) {
      var link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = href;
      add(link);
    });
    urls('data-later-scripts').forEach(function (src) {
      var script = document.createElement('script');
      script.src = src;
      script.async = false; // in the order given
      add(script);
    });
    done();
  }

  function init() {
    mount();
    document.addEventListener('keydown', onKey);
    document.addEventListener('click', onSearchLink);
    window.addEventListener('resize', function () { graphs.forEach(function (g) { g.schedule(true); }); });
    // A GET form whose select should apply at once (the sample picker).
    document.querySelectorAll('select[data-autosubmit]').forEach(function (sel) {
      sel.addEventListener('change', function () {
        if (sel.form) { sel.form.submit(); }
      });
    });
  }

  if (document.readyState === 'loading') {
    // Loaded by a script element right after the graph (the profile
    // page): draw the graphs already parsed now, before the browser's
    // first frame, and wire the rest once the page is parsed.
    mount();
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
