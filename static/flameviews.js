// flameviews.js: the views around the flame graphs of static/flamegraph.js
// (deferred, before it on pages whose graphs wait too; on the profile
// page, whose graph draws at once, flamegraph.js loads it after the
// first paint): the keyboard, copying a stack, and, on the
// graphs whose element has data-views, the top table, the sandwich of a
// function and the inverted view. Everything is computed by the server
// from the whole, filtered graph (view= of the format=rows routes); this
// script only asks and lays out.
//
// data-views names the page parameter that keeps the top table's sort:
// "sort", or "sort-N" on a page with several graphs; its suffix ("", "-N")
// names the graph's other parameters: view (view=inverted draws the
// bottom-up graph), sandwich (a function's name: its callers and callees
// graphs are added under the graph, their zooms in callers_zoom and
// callees_zoom). A click on a function of the top table focuses it
// (pprof's focus=^name$, on pages with a filter bar) or shows its sandwich.
//
// Keys (on the graph last clicked, else the page's first): arrows move the
// selection (outlined) between frames: up to the caller, down to the
// widest callee, left and right to the siblings; Enter zooms into it;
// Escape zooms out one level, a second Escape resets; / goes to the
// search box; c copies the selected stack (also the Copy stack button):
// the frame names from the root's child down, one per line, into the
// clipboard and the .fg-copied text box; ? lists the keys.
(function () {
  'use strict';

  var TOP_LIMIT = 50;

  function fmt() { return window.kbenchFormat; }

  // withParams sets (or, for null, deletes) query parameters of a URL.
  function withParams(href, updates) {
    var u = new URL(href, window.location.href);
    Object.keys(updates).forEach(function (k) {
      if (updates[k] === null || updates[k] === undefined) { u.searchParams.delete(k); } else { u.searchParams.set(k, updates[k]); }
    });
    return u.pathname + u.search + u.hash;
  }

  function pageParam(name) { return new URLSearchParams(window.location.search).get(name); }

  // quoteMeta escapes a frame name as Go's regexp.QuoteMeta does.
  function quoteMeta(s) { return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&'); }

  function make(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function getJSON(src) {
    return fetch(src, { credentials: 'same-origin', headers: { Accept: 'application/json' } }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (j) {
        if (!res.ok) { throw new Error((j && j.error) || (res.status + ' ' + res.statusText)); }
        return j;
      });
    });
  }

  // ---- the views of a graph with data-views (before it mounts) ----

  function names(el) {
    var sort = el.getAttribute('data-views') || 'sort';
    var suffix = sort.indexOf('sort') === 0 ? sort.slice(4) : '';
    return {
      sort: sort, view: 'view' + suffix, sandwich: 'sandwich' + suffix,
      callersZoom: 'callers_zoom' + suffix, calleesZoom: 'callees_zoom' + suffix,
      zoom: el.getAttribute('data-zoom-param') || '', search: el.getAttribute('data-search-param') || ''
    };
  }

  function prepare(el) {
    var p = names(el), src = el.getAttribute('data-src') || '';
    var flat = withParams(src, { view: null, 'function': null });
    var inverted = pageParam(p.view) === 'inverted';
    if (inverted && !el.flameGraph) {
      // The page's own graph draws bottom-up. A graph already drawn (the
      // profile page's) has it from the server: its inlined first view
      // and its data-src.
      el.setAttribute('data-src', withParams(src, { view: 'inverted' }));
    }
    el.setAttribute('data-view', inverted ? 'inverted' : 'flame');
    // The profile page holds the bar's place (an empty .fg-viewbar right
    // before the graph), so that filling it moves nothing below.
    var prev = el.previousElementSibling;
    var placed = !!prev && prev.classList.contains('fg-viewbar') && !prev.firstChild;
    var bar = placed ? prev : make('nav', 'fg-viewbar');
    bar.setAttribute('aria-label', 'Views of the graph');
    bar.appendChild(document.createTextNode('View: '));
    [['flame', 'Flame graph'], ['inverted', 'Inverted (callers below their callees)']].forEach(function (v) {
      var a = make('a', 'fg-view-link', v[1]);
      a.setAttribute('data-view', v[0]);
      var upd = {};
      upd[p.view] = v[0] === 'inverted' ? 'inverted' : null;
      if (p.zoom) { upd[p.zoom] = null; } // a zoom path of one view means nothing in the other
      a.href = withParams(window.location.href, upd);
      if ((v[0] === 'inverted') === inverted) { a.setAttribute('aria-current', 'page'); }
      bar.appendChild(a);
    });
    if (!placed) { el.parentNode.insertBefore(bar, el); }
    var after = el;
    var fn = pageParam(p.sandwich);
    if (fn) { after = sandwich(el, p, flat, fn); }
    var top = topSection(el, p, flat);
    after.parentNode.insertBefore(top, after.nextSibling);
    return top;
  }

  // sandwich adds the callers and callees graphs of function fn under el.
  function sandwich(el, p, flat, fn) {
    var sec = make('section', 'fg-sandwich');
    sec.id = el.id + '-sandwich';
    var h = make('h3', 'fg-sandwich-title', 'Sandwich of ');
    h.appendChild(make('code', 'fg-sandwich-name', fn));
    sec.appendChild(h);
    var totals = make('p', 'fg-sandwich-totals hint', 'Loading the function’s totals…');
    sec.appendChild(totals);
    var upd = {};
    upd[p.sandwich] = null;
    upd[p.callersZoom] = null;
    upd[p.calleesZoom] = null;
    var close = make('a', 'fg-sandwich-close', 'Close the sandwich');
    close.href = withParams(window.location.href, upd);
    sec.appendChild(close);
    [['callers', p.callersZoom, 'Callers: the function on top, the stacks that call it below (bottom-up), merged over all its call sites'],
      ['callees', p.calleesZoom, 'Callees: the function on top, what it calls below, merged over all its call sites']].forEach(function (v) {
      sec.appendChild(make('h4', 'fg-sandwich-heading', v[2]));
      var g = make('div', 'flamegraph fg-sandwich-' + v[0]);
      g.id = el.id + '-' + v[0];
      g.setAttribute('data-src', withParams(flat, { view: v[0], 'function': fn }));
      g.setAttribute('data-mode', el.getAttribute('data-mode') || 'tree');
      g.setAttribute('data-unit', el.getAttribute('data-unit') || '');
      g.setAttribute('data-zoom-param', v[1]);
      g.setAttribute('data-search-param', p.search);
      sec.appendChild(g);
    });
    el.parentNode.insertBefore(sec, el.nextSibling);
    getJSON(withParams(flat, { format: 'rows', view: 'callees', 'function': fn, width: '1' })).then(function (j) {
      var f = j['function'];
      if (!f) { throw new Error('the answer names no function'); }
      var unit = j.unit || el.getAttribute('data-unit') || '';
      var total = +j.total || 0;
      var F = fmt(), share = function (v) { return total > 0 ? ' (' + F.percent(v / total * 100) + ')' : ''; };
      var text = 'Total ' + F.profileValue(f.total, unit) + share(f.total) + ', self ' + F.profileValue(f.self, unit) + share(f.self);
      if (el.getAttribute('data-mode') === 'diff') {
        text += '; base: total ' + F.profileValue(+f.base_total || 0, unit) + ', self ' + F.profileValue(+f.base_self || 0, unit);
      }
      totals.textContent = text + '.';
      totals.setAttribute('data-total', String(f.total));
      totals.setAttribute('data-self', String(f.self));
    }).catch(function (err) {
      totals.classList.add('fg-error');
      totals.textContent = 'No sandwich: ' + err.message;
    });
    return sec;
  }

  // topSection is the top table's section; loadTop fills it.
  function topSection(el, p, flat) {
    var sec = make('section', 'fg-top');
    sec.id = el.id + '-top';
    sec.appendChild(make('h3', 'fg-top-title', 'Top functions'));
    var note = make('p', 'fg-top-note hint', 'Loading…');
    sec.appendChild(note);
    var wrap = make('div', 'table-wrap');
    var table = make('table', 'fg-top-table');
    table.id = el.id + '-top-table';
    wrap.appendChild(table);
    sec.appendChild(wrap);
    sec.fgTop = { el: el, p: p, flat: flat, note: note, table: table, seq: 0 };
    return sec;
  }

  var COLUMNS = {
    tree: [['name', 'Function'], ['self', 'Self', 'self'], ['self_pct', 'Self %'], ['total', 'Total', 'total'], ['total_pct', 'Total %']],
    diff: [['name', 'Function'], ['base_self', 'Base self'], ['self', 'Self'], ['delta_self', 'Δ self', 'delta_self'],
      ['base_total', 'Base total'], ['total', 'Total'], ['delta_total', 'Δ total', 'delta_total']]
  };

  function loadTop(sec, sort) {
    var s = sec.fgTop, el = s.el, diff = el.getAttribute('data-mode') === 'diff';
    sort = sort || pageParam(s.p.sort) || (diff ? 'delta_self' : 'self');
    var seq = ++s.seq;
    sec.setAttribute('data-state', 'loading');
    getJSON(withParams(s.flat, { format: 'rows', view: 'top', sort: sort, limit: String(TOP_LIMIT) })).then(function (j) {
      if (seq !== s.seq) { return; }
      renderTop(sec, j, diff);
      sec.setAttribute('data-state', 'ready');
      sec.setAttribute('data-sort', j.top.sort);
    }).catch(function (err) {
      if (seq !== s.seq) { return; }
      sec.setAttribute('data-state', 'error');
      s.note.classList.add('fg-error');
      s.note.textContent = 'The top table could not be loaded: ' + err.message;
    });
  }

  function renderTop(sec, j, diff) {
    var s = sec.fgTop, top = j.top, unit = j.unit || s.el.getAttribute('data-unit') || '', F = fmt();
    var total = +j.total || 0;
    var filters = !!document.getElementById('fg-filter-form');
    s.note.classList.remove('fg-error');
    s.table.textContent = '';
    if (top.functions.length === 0) {
      s.note.textContent = 'No function holds a value in this graph.';
      return;
    }
    s.note.textContent = 'The ' + top.functions.length + ' largest of ' + top.count + ' functions by ' + SORT_LABELS[top.sort] +
      ', over the whole graph' + (filters ? ' with its filters' : '') + '. ' +
      (filters ? 'Click a function to focus the graphs on it (pprof’s focus), “sandwich” for its callers and callees.' : 'Click “sandwich” for a function’s callers and callees.');
    var t = s.table;
    t.textContent = '';
    var cols = COLUMNS[diff ? 'diff' : 'tree'];
    var thead = make('thead'), hr = make('tr');
    cols.forEach(function (c) {
      var th = make('th');
      th.scope = 'col';
      if (c[0] !== 'name') { th.className = 'num'; }
      if (c[2]) {
        var b = make('button', 'fg-top-sort', c[1]);
        b.type = 'button';
        b.setAttribute('data-sort', c[2]);
        b.addEventListener('click', function () { sortBy(sec, c[2]); });
        th.appendChild(b);
        if (c[2] === top.sort) { th.setAttribute('aria-sort', 'descending'); }
      } else {
        th.textContent = c[1];
      }
      hr.appendChild(th);
    });
    thead.appendChild(hr);
    t.appendChild(thead);
    var tb = make('tbody');
    top.functions.forEach(function (f) {
      var tr = make('tr');
      tr.setAttribute('data-name', f.name);
      var bs = +f.base_self || 0, bt = +f.base_total || 0;
      cols.forEach(function (c) {
        var td = make('td', c[0] === 'name' ? 'fg-top-name' : 'num');
        switch (c[0]) {
          case 'name':
            var a = make('a', filters ? 'fg-top-focus' : 'fg-top-label', f.name);
            if (filters) {
              var upd = { focus: '^' + quoteMeta(f.name) + '$' };
              if (s.p.zoom) { upd[s.p.zoom] = null; }
              a.href = withParams(window.location.href, upd);
              a.title = 'Focus the graphs on ' + f.name;
              td.appendChild(a);
            } else {
              td.appendChild(make('code', 'fg-top-label', f.name));
            }
            var sw = make('a', 'fg-top-sandwich', 'sandwich');
            var su = {};
            su[s.p.sandwich] = f.name;
            su[s.p.callersZoom] = null;
            su[s.p.calleesZoom] = null;
            sw.href = withParams(window.location.href, su);
            sw.title = 'Callers and callees of ' + f.name;
            td.appendChild(document.createTextNode(' '));
            td.appendChild(sw);
            break;
          case 'self': td.textContent = F.profileValue(f.self, unit); break;
          case 'total': td.textContent = F.profileValue(f.total, unit); break;
          case 'self_pct': td.textContent = total > 0 ? F.percent(f.self / total * 100) : '—'; break;
          case 'total_pct': td.textContent = total > 0 ? F.percent(f.total / total * 100) : '—'; break;
          case 'base_self': td.textContent = F.profileValue(bs, unit); break;
          case 'base_total': td.textContent = F.profileValue(bt, unit); break;
          case 'delta_self': td.textContent = F.signedProfileValue(f.self - bs, unit); td.className += delta(f.self - bs); break;
          case 'delta_total': td.textContent = F.signedProfileValue(f.total - bt, unit); td.className += delta(f.total - bt); break;
        }
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    t.appendChild(tb);
  }

  var SORT_LABELS = { self: 'self', total: 'total', delta_self: '|Δ self|', delta_total: '|Δ total|' };

  function delta(d) { return d > 0 ? ' fg-grew' : (d < 0 ? ' fg-shrank' : ''); }

  // sortBy sorts the top table again (on the server) and keeps the sort
  // in the page's URL and in its forms' hidden copies of it.
  function sortBy(sec, sort) {
    var name = sec.fgTop.p.sort, upd = {};
    upd[name] = sort;
    window.history.replaceState(window.history.state, '', withParams(window.location.href, upd));
    document.querySelectorAll('input[type=hidden]').forEach(function (inp) {
      if (inp.name === name) { inp.value = sort; }
    });
    loadTop(sec, sort);
  }

  // ---- keyboard, selection and stack copy (every graph) ----

  var active = null;      // the graph element the keys act on
  var lastEscape = false; // the previous key was an Escape that zoomed out
  var overlay = null;

  function graphEls() {
    return Array.prototype.filter.call(document.querySelectorAll('.flamegraph'), function (el) { return !!el.flameGraph; });
  }

  function current() {
    if (active && active.flameGraph && document.contains(active)) { return active; }
    return graphEls()[0] || null;
  }

  function selected(el) {
    var s = el.getAttribute('data-selected');
    return s === null ? (el.getAttribute('data-current-zoom') || '') : s;
  }

  // select outlines the frame at path (a zoom path) of graph el. The
  // outline shows once the keys were used on the graph: until then the
  // selection is the zoomed frame, and nothing needs outlining.
  function select(el, path) {
    el.setAttribute('data-selected', path);
    el.setAttribute('data-keyed', 'true');
    outline(el);
  }

  function outline(el) {
    var box = el.querySelector('.fg-scroll'), canvas = el.querySelector('.fg-canvas');
    if (!box || !canvas || !el.flameGraph) { return; }
    var o = box.querySelector('.fg-selected');
    if (!o) {
      o = make('div', 'fg-selected');
      o.setAttribute('aria-hidden', 'true');
      box.appendChild(o);
    }
    var path = selected(el);
    if (!el.hasAttribute('data-keyed')) {
      o.hidden = true;
      return;
    }
    var b = el.flameGraph.frameBox(path);
    var f = el.flameGraph.frame(path);
    if (!b || !f) {
      o.hidden = true;
      return;
    }
    o.hidden = false;
    o.style.left = (canvas.offsetLeft + b.x) + 'px';
    o.style.top = (canvas.offsetTop + b.y) + 'px';
    o.style.width = Math.max(b.width, 2) + 'px';
    o.style.height = b.height + 'px';
    el.setAttribute('data-selected-name', f.names.length ? f.names[f.names.length - 1] : 'root');
  }

  // move returns the path the key moves the selection of el to (null: no move).
  function move(el, key) {
    var api = el.flameGraph, f = api.frame(selected(el));
    if (!f) { f = api.frame(api.state().zoom); }
    if (!f) { return null; }
    if (key === 'ArrowUp') { return f.parent; }
    if (key === 'ArrowDown') {
      var best = null;
      f.children.forEach(function (c) { if (!best || c.value > best.value) { best = c; } });
      return best ? best.path : null;
    }
    if (f.parent === null) { return null; }
    var sibs = api.frame(f.parent).children, k;
    for (k = 0; k < sibs.length && sibs[k].path !== f.path; k++) { /* find f */ }
    k += key === 'ArrowLeft' ? -1 : 1;
    return k >= 0 && k < sibs.length ? sibs[k].path : null;
  }

  // copyStack writes the selected stack of el (root's child first, one
  // frame per line) into the clipboard and the graph's .fg-copied box.
  function copyStack(el) {
    var f = el.flameGraph && el.flameGraph.frame(selected(el));
    if (!f) { return; }
    var text = f.names.length ? f.names.join('\n') : 'root';
    var ta = el.querySelector('.fg-copied');
    if (!ta) {
      ta = make('textarea', 'fg-copied');
      ta.readOnly = true;
      ta.setAttribute('aria-label', 'The stack copied');
      var tb = el.querySelector('.fg-toolbar');
      el.insertBefore(ta, tb ? tb.nextSibling : el.firstChild);
    }
    ta.value = text;
    ta.rows = Math.min(Math.max(f.names.length, 1), 12);
    ta.hidden = false;
    el.setAttribute('data-copied', text);
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).catch(function () { ta.select(); });
    } else {
      ta.select();
    }
  }

  var KEYS = [['← →', 'previous / next sibling frame'], ['↑ ↓', 'caller / widest callee'], ['Enter', 'zoom into the selected frame'],
    ['Escape', 'zoom out one level; again: reset the zoom'], ['/', 'search'], ['c', 'copy the selected stack'], ['?', 'show or hide these keys']];

  function toggleKeys(show) {
    if (!overlay) {
      overlay = make('div', 'fg-keys');
      overlay.setAttribute('role', 'dialog');
      overlay.setAttribute('aria-label', 'Flame graph keys');
      overlay.appendChild(make('h2', 'fg-keys-title', 'Flame graph keys'));
      var dl = make('dl');
      KEYS.forEach(function (k) {
        var dt = make('dt');
        dt.appendChild(make('kbd', '', k[0]));
        dl.appendChild(dt);
        dl.appendChild(make('dd', '', k[1]));
      });
      overlay.appendChild(dl);
      var close = make('button', 'button fg-keys-close', 'Close');
      close.type = 'button';
      close.addEventListener('click', function () { toggleKeys(false); });
      overlay.appendChild(close);
      overlay.hidden = true;
      document.body.appendChild(overlay);
    }
    overlay.hidden = show === undefined ? !overlay.hidden : !show;
  }

  function onKey(ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var tag = ev.target && ev.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || (ev.target && ev.target.isContentEditable)) { return; }
    var el = current();
    if (!el) { return; }
    var api = el.flameGraph, key = ev.key, escape = lastEscape;
    lastEscape = false;
    switch (key) {
      case 'ArrowUp': case 'ArrowDown': case 'ArrowLeft': case 'ArrowRight':
        var to = move(el, key);
        if (to !== null) { select(el, to); }
        break;
      case 'Enter':
        if (tag === 'A' || tag === 'BUTTON') { return; }
        api.zoomTo(selected(el));
        break;
      case 'Escape':
        if (overlay && !overlay.hidden) { toggleKeys(false); break; }
        var z = api.state().zoom;
        if (!z) { break; }
        if (escape) {
          api.reset();
        } else {
          var f = api.frame(z);
          api.zoomTo(f && f.parent !== null ? f.parent : '');
          lastEscape = true;
        }
        break;
      case '/':
        var s = el.querySelector('.fg-search');
        if (!s) { return; }
        s.focus();
        break;
      case 'c':
        copyStack(el);
        break;
      case '?':
        toggleKeys();
        break;
      default:
        return;
    }
    if (key !== '?' && key !== '/' && !el.hasAttribute('data-keyed')) {
      el.setAttribute('data-keyed', 'true');
      outline(el);
    }
    ev.preventDefault();
  }

  // setup adds a rendered graph's buttons and follows its zoom.
  function setup(el) {
    if (el.getAttribute('data-fg-views-ready')) { return; }
    el.setAttribute('data-fg-views-ready', 'true');
    var tb = el.querySelector('.fg-toolbar');
    if (tb) {
      var copy = make('button', 'button fg-copy', 'Copy stack');
      copy.type = 'button';
      copy.title = 'Copy the selected frame’s stack (key c)';
      copy.addEventListener('click', function () { active = el; copyStack(el); });
      tb.appendChild(copy);
      var keys = make('button', 'button button-quiet fg-keys-button', 'Keys');
      keys.type = 'button';
      keys.title = 'The keyboard (key ?)';
      keys.addEventListener('click', function () { toggleKeys(); });
      tb.appendChild(keys);
    }
    // A zoom (a click, Enter, Escape, a fetched view) selects the zoomed
    // frame and moves the outline; a redraw of any kind moves it too.
    new MutationObserver(function (ms) {
      ms.forEach(function (m) {
        if (m.attributeName === 'data-current-zoom') {
          el.setAttribute('data-selected', el.getAttribute('data-current-zoom') || '');
        }
      });
      window.requestAnimationFrame(function () { outline(el); });
    }).observe(el, { attributes: true, attributeFilter: ['data-current-zoom', 'data-state', 'data-search-state'] });
    window.requestAnimationFrame(function () { outline(el); });
  }

  function onPointer(ev) {
    var el = ev.target && ev.target.closest && ev.target.closest('.flamegraph');
    if (el && el.flameGraph) {
      active = el;
      lastEscape = false;
    }
  }

  // ---- start ----

  var tops = [];
  document.querySelectorAll('.flamegraph[data-views]').forEach(function (el) { tops.push(prepare(el)); });
  document.addEventListener('flamegraph:rendered', function (ev) { setup(ev.target); });
  document.querySelectorAll('.flamegraph[data-rendered=true]').forEach(setup);
  window.addEventListener('keydown', onKey, true);
  document.addEventListener('pointerdown', onPointer, true);
  document.addEventListener('focusin', onPointer, true);
  window.addEventListener('resize', function () { graphEls().forEach(outline); });

  function loadTops() { tops.forEach(function (sec) { loadTop(sec); }); }
  // The top tables load after the page's first paint: the graphs come first.
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', function () { window.setTimeout(loadTops, 0); });
  } else {
    window.setTimeout(loadTops, 0);
  }
})();
