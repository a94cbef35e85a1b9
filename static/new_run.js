// new_run.js: hides the options that do not apply to the chosen workload,
// and disables the fields that do not apply to the chosen target.
// Hidden fields still post; the server ignores flags of the other workload.
// Disabled fields do not post: the cluster and SASL fields while the
// embedded broker is chosen, the SASL ones unless a SASL protocol is (each
// field says when it applies in data-enabled-when). Without JavaScript
// every field shows and is enabled, marked with its workload, and the
// server ignores the cluster fields for the embedded broker.
// The "Compare configurations" section adds and removes configurations
// (initConfigs).
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

    // updateClusters offers only the named clusters and the tools the
    // chosen queue's workers name: each option lists its queues in
    // data-queues. A queue the form does not offer (no live worker) may
    // take any name, and the server checks every choice anyway.
    function updateClusters() {
      updateQueueChoices('target.cluster');
      updateQueueChoices('tool');
    }

    function updateQueueChoices(name) {
      var sel = form.elements.namedItem(name);
      var queue = form.elements.namedItem('queue');
      var list = document.getElementById('f-queue-list');
      if (!sel || !sel.options || !queue || !list) {
        return;
      }
      var q = queue.value.trim() || 'local';
      var known = false;
      for (var i = 0; i < list.options.length; i++) {
        known = known || list.options[i].value === q;
      }
      var first = null;
      for (var j = 0; j < sel.options.length; j++) {
        var opt = sel.options[j];
        var queues = opt.getAttribute('data-queues');
        opt.disabled = known && queues !== null && queues.split(' ').indexOf(q) < 0;
        if (!opt.disabled && first === null) {
          first = opt;
        }
      }
      var cur = sel.options[sel.selectedIndex];
      if (cur && cur.disabled && first) {
        first.selected = true;
      }
    }

    form.addEventListener('change', function (ev) {
      if (ev.target && ev.target.name === 'workload') {
        update();
      }
      updateEnabled();
      updateClusters();
    });
    form.addEventListener('input', function (ev) {
      if (ev.target && ev.target.name === 'queue') {
        updateClusters();
      }
    });
    update();
    updateEnabled();
    updateClusters();

    initConfigs(form);

    var summary = document.getElementById('error-summary');
    if (summary) {
      summary.focus();
    }
  }

  // initConfigs makes the "Add a configuration to compare" and "Remove"
  // buttons work in the page: without JavaScript they post the form, and
  // the server sends it back with a configuration more or fewer. Added
  // configurations are copies of the blank one in #config-template,
  // numbered 1, 2, … (fields "configs[1].label", …) and lettered B, C, …
  // after configuration A, the form's own; a removal renumbers the rest.
  function initConfigs(form) {
    var section = document.getElementById('section-configs');
    var list = document.getElementById('config-list');
    var tmpl = document.getElementById('config-template');
    var add = document.getElementById('add-config');
    if (!section || !list || !tmpl || !add) {
      return;
    }
    var max = parseInt(section.getAttribute('data-max-configs'), 10) || 10;

    function sets() {
      return list.querySelectorAll('.config-fieldset');
    }

    function renumber() {
      var all = sets();
      for (var k = 0; k < all.length; k++) {
        var i = k + 1;
        var fs = all[k];
        fs.id = 'config-' + i;
        fs.setAttribute('data-config', String(i));
        var els = fs.querySelectorAll('[name], [id], [for], [aria-describedby]');
        for (var j = 0; j < els.length; j++) {
          var el = els[j];
          if (el.name && /^configs\[\d+\]/.test(el.name)) {
            el.name = el.name.replace(/^configs\[\d+\]/, 'configs[' + i + ']');
          }
          ['id', 'for', 'aria-describedby'].forEach(function (attr) {
            var v = el.getAttribute(attr);
            if (v) {
              el.setAttribute(attr, v.replace(/f-configs-\d+-/g, 'f-configs-' + i + '-'));
            }
          });
          if (el.hasAttribute('data-remove-config')) {
            el.value = String(i);
          }
        }
        var letters = fs.querySelectorAll('.config-letter');
        for (var m = 0; m < letters.length; m++) {
          letters[m].textContent = String.fromCharCode(65 + i);
        }
      }
      add.hidden = all.length + 1 >= max;
    }

    add.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (sets().length + 1 >= max) {
        return;
      }
      list.appendChild(document.importNode(tmpl.content, true));
      renumber();
      var all = sets();
      var label = all[all.length - 1].querySelector('input');
      if (label) {
        label.focus();
      }
    });

    list.addEventListener('click', function (ev) {
      var button = ev.target.closest ? ev.target.closest('[data-remove-config]') : null;
      if (!button) {
        return;
      }
      ev.preventDefault();
      var fs = button.closest('.config-fieldset');
      if (fs) {
        fs.parentNode.removeChild(fs);
      }
      renumber();
      add.focus();
    });
    renumber();
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
