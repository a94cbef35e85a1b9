// compare_progress.js: while a comparison's runs are queued or running
// (#compare-progress), reload the page every 5 seconds so that its figures
// follow the runs as they finish; the server renders the latest. A reload
// would throw away what the user is typing, so none happens while a form
// field of the page has the focus or has been changed. Without JavaScript
// the box says to reload by hand.
(function () {
  'use strict';

  var DELAY_MS = 5000;

  function init() {
    var box = document.getElementById('compare-progress');
    if (!box) {
      return;
    }
    var hint = box.querySelector('.js-only');
    if (hint) {
      hint.hidden = false;
    }
    var edited = false;
    document.addEventListener('input', function () {
      edited = true;
    });

    function busy() {
      var el = document.activeElement;
      return edited || (el && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
    }

    function tick() {
      if (busy()) {
        window.setTimeout(tick, DELAY_MS);
        return;
      }
      window.location.reload();
    }
    window.setTimeout(tick, DELAY_MS);
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
