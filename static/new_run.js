// new_run.js: hides the options that do not apply to the chosen workload.
// Hidden fields still post; the server ignores flags of the other workload.
// Without JavaScript every field shows, marked with its workload.
(function () {
  'use strict';

  function init() {
    var form = document.getElementById('run-form');
    if (!form) {
      return;
    }

    function chosen() {
      var radios = form.querySelectorAll('input[name="workload"]');
      for (var i = 0; i < radios.length; i++) {
        if (radios[i].checked) {
          return radios[i].value;
        }
      }
      return form.getAttribute('data-workload') || '';
    }

    function update() {
      var workload = chosen();
      var fields = form.querySelectorAll('.field[data-workload]');
      for (var i = 0; i < fields.length; i++) {
        var applies = (' ' + fields[i].getAttribute('data-workload') + ' ').indexOf(' ' + workload + ' ') >= 0;
        // Never hide a field that shows an error: the user must see it.
        fields[i].hidden = !applies && !fields[i].classList.contains('has-error');
      }
    }

    form.addEventListener('change', function (ev) {
      if (ev.target && ev.target.name === 'workload') {
        update();
      }
    });
    update();

    var summary = document.getElementById('error-summary');
    if (summary) {
      summary.focus();
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
