// runs.js: keeps the "Compare selected (n)" link of the runs list in step
// with the ticked runs, oldest first (the first is the comparison's
// baseline). Without JavaScript the table is a GET form whose submit
// button sends /compare?runs=2&runs=1, which the server also takes oldest
// first.
//
// It also keeps the rows of unfinished (queued or running) runs current:
// every 2 s while the table shows one, it asks the list itself for just
// those runs (?ids=3,5,7) and puts the server's rows in place of the old
// ones, so a refreshed row reads exactly as a reload shows it. Polling
// stops once no row is unfinished; without JavaScript rows stay as loaded.
(function () {
  'use strict';

  var REFRESH_MS = 2000;
  var MAX_BACKOFF_MS = 30000;
  var MAX_IDS = 500; // the list's largest page
  var UNFINISHED = { queued: true, running: true };

  function initRefresh() {
    var table = document.getElementById('runs-table');
    if (!table || !window.fetch || !window.DOMParser) {
      return;
    }
    var base = table.getAttribute('data-list-path') || '/';
    var gone = {}; // runs the server no longer lists (deleted)
    var timer = 0;
    var busy = false; // a request is on its way
    var delay = REFRESH_MS;

    function rowOf(root, id) {
      var rows = root.querySelectorAll('tbody tr[data-run-id]');
      for (var i = 0; i < rows.length; i++) {
        if (rows[i].getAttribute('data-run-id') === id) {
          return rows[i];
        }
      }
      return null;
    }

    function unfinished() {
      var ids = [];
      var rows = table.querySelectorAll('tbody tr[data-run-id]');
      for (var i = 0; i < rows.length && ids.length < MAX_IDS; i++) {
        var id = rows[i].getAttribute('data-run-id');
        if (UNFINISHED[rows[i].getAttribute('data-status')] && !gone[id]) {
          ids.push(id);
        }
      }
      return ids;
    }

    function schedule() {
      window.clearTimeout(timer);
      timer = 0;
      if (unfinished().length > 0) {
        timer = window.setTimeout(refresh, delay);
      }
    }

    // update puts the server's row in place of the shown one, cell by
    // cell, leaving the first cell (the tick box, maybe ticked or
    // focused) alone when the row's shape is unchanged.
    function update(mine, fresh) {
      if (mine.children.length !== fresh.children.length) {
        var box = mine.querySelector('input[type="checkbox"]');
        var row = document.importNode(fresh, true);
        var newBox = row.querySelector('input[type="checkbox"]');
        if (box && newBox) {
          newBox.checked = box.checked;
        }
        mine.parentNode.replaceChild(row, mine);
        return;
      }
      for (var i = 1; i < fresh.children.length; i++) {
        if (mine.children[i].innerHTML !== fresh.children[i].innerHTML) {
          mine.replaceChild(document.importNode(fresh.children[i], true), mine.children[i]);
        }
      }
      ['data-status', 'class'].forEach(function (name) {
        var v = fresh.getAttribute(name);
        if (v === null) {
          mine.removeAttribute(name);
        } else {
          mine.setAttribute(name, v);
        }
      });
    }

    function refresh() {
      timer = 0;
      if (document.hidden) {
        return; // visibilitychange resumes
      }
      var ids = unfinished();
      if (ids.length === 0) {
        return;
      }
      var url = base + '?ids=' + ids.join(',') + '&per_page=' + ids.length;
      busy = true;
      window.fetch(url, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/html' } })
        .then(function (resp) {
          if (!resp.ok || resp.redirected) {
            throw new Error('runs list: ' + resp.status);
          }
          return resp.text();
        })
        .then(function (html) {
          var doc = new window.DOMParser().parseFromString(html, 'text/html');
          if (!doc.querySelector('p.count')) {
            throw new Error('runs list: not the runs page');
          }
          ids.forEach(function (id) {
            var mine = rowOf(table, id);
            var fresh = rowOf(doc, id);
            if (!fresh) {
              gone[id] = true;
            } else if (mine) {
              update(mine, fresh);
            }
          });
          busy = false;
          delay = REFRESH_MS;
          schedule();
        })
        .catch(function () {
          // The server may be restarting: try again, less often.
          busy = false;
          delay = Math.min(delay * 2, MAX_BACKOFF_MS);
          schedule();
        });
    }

    document.addEventListener('visibilitychange', function () {
      if (!document.hidden && timer === 0 && !busy) {
        refresh();
      }
    });
    schedule();
  }

  function initCompare() {
    var form = document.getElementById('compare-form');
    var link = document.getElementById('compare-link');
    var submit = document.getElementById('compare-submit');
    if (!form || !link) {
      return;
    }
    var base = link.getAttribute('href') || '/compare';

    function update() {
      var ids = [];
      var boxes = form.querySelectorAll('input[type="checkbox"][name="runs"]');
      for (var i = 0; i < boxes.length; i++) {
        if (boxes[i].checked) {
          ids.push(boxes[i].value);
        }
      }
      ids.sort(function (a, b) { return Number(a) - Number(b); });
      link.textContent = 'Compare selected (' + ids.length + ')';
      if (ids.length > 0) {
        link.setAttribute('href', base + '?runs=' + ids.map(encodeURIComponent).join(','));
        link.removeAttribute('aria-disabled');
      } else {
        link.setAttribute('href', base);
        link.setAttribute('aria-disabled', 'true');
      }
    }

    link.hidden = false;
    if (submit) {
      submit.hidden = true;
    }
    link.addEventListener('click', function (ev) {
      if (link.getAttribute('aria-disabled') === 'true') {
        ev.preventDefault();
      }
    });
    form.addEventListener('change', update);
    // Browsers restore ticks on back navigation: count them now.
    window.addEventListener('pageshow', update);
    update();
  }

  function init() {
    initCompare();
    initRefresh();
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
