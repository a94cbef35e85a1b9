// mini.js: the least a page can do to draw the profile page's first view,
// for bench/flame/pages.py's reference variants (not used by kbench).
// It reads the inline rows (#flamegraph-data), draws the rows the window
// shows, one colour per frame name, labels cut to fit, and signals
// "drawn" as flamegraph.js does. window.__miniMode: "canvas" (a 2D canvas
// in a .fg-scroll box, as kbench draws), "dom" (absolutely positioned
// boxes written as HTML with style attributes, as pprof draws) or
// "dom-csp" (the same boxes made with createElement, styled by a class
// and the CSSOM: what kbench's Content-Security-Policy, which refuses
// style attributes in markup, would allow; pages.py adds the class's
// rule to the page's inline style sheet). No legend, tooltip, search,
// zoom or colours by package: it is a lower bound, not a viewer.
(function () {
  var ROW = 18, PAD = 4, FONT = '12px ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace';
  var csp = window.__miniMode === 'dom-csp';
  var dom = csp || window.__miniMode === 'dom';
  var el = document.getElementById('flamegraph');
  var rows = JSON.parse(document.getElementById('flamegraph-data').textContent).rows;
  var levels = rows.levels, names = rows.names, stride = rows.stride;
  function hash(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return h >>> 0;
  }
  function colour(name) {
    var h = hash(name);
    return 'hsl(' + (150 + h % 180) + ',45%,' + (62 + (h >>> 9) % 14) + '%)';
  }
  function escape(s) { return s.replace(/[&<]/g, function (c) { return c === '&' ? '&amp;' : '&lt;'; }); }
  var canvas = el.querySelector('canvas');
  var box = document.createElement('div');
  box.className = 'fg-scroll';
  canvas.parentNode.insertBefore(box, canvas);
  box.appendChild(canvas);
  el.querySelector('.fg-message').hidden = true;
  // Reading the width lays out the page above, as flamegraph.js does.
  var W = canvas.clientWidth, dpr = window.devicePixelRatio || 1;
  var k = W / levels[0][1];
  var n = Math.min(levels.length, Math.ceil((window.innerHeight - box.getBoundingClientRect().top) / ROW));
  var ctx = null, charW = 7.2, html = [], layer = null;
  if (dom) {
    canvas.style.display = 'none';
    box.style.position = 'relative';
    box.style.height = n * ROW + 'px';
    if (csp) {
      layer = document.createElement('div');
      layer.className = 'mini-layer';
      layer.style.height = n * ROW + 'px';
    }
  } else {
    canvas.width = W * dpr;
    canvas.height = n * ROW * dpr;
    canvas.style.height = n * ROW + 'px';
    ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    charW = ctx.measureText('MMMMMMMMMM').width / 10;
  }
  for (var d = 0; d < n; d++) {
    var lv = levels[d], x = 0;
    for (var j = 0; j < lv.length; j += stride) {
      x += lv[j];
      var px = x * k, pw = lv[j + 1] * k, ni = lv[j + stride - 1];
      x += lv[j + 1];
      if (pw < 0.5) { continue; }
      var name = ni >= 0 ? names[ni] : '';
      var fill = ni >= 0 ? colour(name) : '#e4e7eb', w = pw > 2 ? pw - 1 : pw;
      var max = Math.floor((pw - PAD * 2) / charW);
      var label = ni < 0 || max < 2 ? '' : name.length > max ? name.slice(0, max - 1) + '…' : name;
      if (csp) {
        var b = document.createElement('div'), bs = b.style;
        b.className = 'mini-box';
        bs.left = px.toFixed(1) + 'px';
        bs.top = d * ROW + 'px';
        bs.width = w.toFixed(1) + 'px';
        bs.backgroundColor = fill;
        if (label) { b.textContent = label; }
        layer.appendChild(b);
        continue;
      }
      if (dom) {
        html.push('<div style="position:absolute;overflow:hidden;white-space:nowrap;box-sizing:border-box;padding-left:' + PAD +
          'px;font:' + FONT + ';line-height:' + (ROW - 1) + 'px;left:' + px.toFixed(1) + 'px;top:' + d * ROW + 'px;width:' + w.toFixed(1) +
          'px;height:' + (ROW - 1) + 'px;background:' + fill + '">' + escape(label) + '</div>');
        continue;
      }
      ctx.fillStyle = fill;
      ctx.fillRect(px, d * ROW, w, ROW - 1);
      if (label) {
        ctx.fillStyle = '#1b1f24';
        ctx.fillText(label, px + PAD, d * ROW + ROW / 2);
      }
    }
  }
  if (csp) {
    box.appendChild(layer);
  } else if (dom) {
    box.insertAdjacentHTML('beforeend', html.join(''));
  }
  el.setAttribute('data-rendered', 'true');
  el.dispatchEvent(new CustomEvent('flamegraph:rendered', { bubbles: true }));
})();
