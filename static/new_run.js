// new_run.js: hides the options that do not apply to the chosen workload,
// and disables the fields that do not apply to the chosen target.
// Hidden fields still post; the server ignores flags of the other workload.
// Disabled fields do not post: the cluster and SASL fields while the
// embedded broker is chosen, the SASL ones unless a SASL protocol is (each
// field says when it applies in data-enabled-when). Without JavaScript
// every field shows and is enabled, marked with its workload, and the
// server ignores the cluster fields for the embedded broker.
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

    // value is the current value of a control: a radio group's checked
    // value, a select's or an input's value.
    function value(name) {
      var el = form.elements.namedItem(name);
      return el ? el.value : '';
    }

    // holds reports whether every "name=a|b" condition of when holds.
    function holds(when) {
      var conds = when.split(' ');
      for (var i = 0; i < conds.length; i++) {
        if (!conds[i]) {
          continue;
        }
        var eq = conds[i].indexOf('=');
        var allowed = conds[i].slice(eq + 1).split('|');
        if (allowed.indexOf(value(conds[i].slice(0, eq))) < 0) {
          return false;
        }
      }
      return true;
    }

    function updateEnabled() {
      var fields = form.querySelectorAll('.field[data-enabled-when]');
      for (var i = 0; i < fields.length; i++) {
        var on = holds(fields[i].getAttribute('data-enabled-when'));
        fields[i].classList.toggle('is-disabled', !on);
        var controls = fields[i].querySelectorAll('input, select, textarea');
        for (var j = 0; j < controls.length; j++) {
          controls[j].disabled = !on;
        }
      }
    }

    form.addEventListener('change', function (ev) {
      if (ev.target && ev.target.name === 'workload') {
        update();
      }
      updateEnabled();
    });
    update();
    updateEnabled();

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
