// compare.js: the "Copy Markdown" button of comparison and report pages.
// It copies the Markdown <textarea> with the Clipboard API, or, where that
// is unavailable or refused, selects the text (and tries execCommand) so
// the user can copy it by hand. Without JavaScript the text stays there to
// select.
(function () {
  'use strict';

  function init() {
    var button = document.getElementById('copy-markdown');
    if (!button) {
      return;
    }
    var text = document.getElementById(button.getAttribute('data-target'));
    var status = document.getElementById('copy-status');
    if (!text) {
      return;
    }

    function say(msg) {
      if (status) {
        status.textContent = msg;
      }
    }

    function fallback() {
      text.focus();
      text.select();
      var ok = false;
      try {
        ok = document.execCommand('copy');
      } catch (e) {
        ok = false;
      }
      say(ok ? 'Copied.' : 'Selected: press Ctrl+C (⌘C) to copy.');
    }

    button.hidden = false;
    button.addEventListener('click', function () {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text.value).then(function () {
          say('Copied.');
        }, fallback);
      } else {
        fallback();
      }
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
