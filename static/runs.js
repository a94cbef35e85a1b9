// runs.js: keeps the "Compare selected (n)" link of the runs list in step
// with the ticked runs, oldest first (the first is the comparison's
// baseline). Without JavaScript the table is a GET form whose submit
// button sends /compare?runs=2&runs=1, which the server also takes oldest
// first.
(function () {
  'use strict';

  function init() {
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

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
