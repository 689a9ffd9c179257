// Focus follows the result of an action (issue 32, item 6): after a form post or a search, the
// page's message or result heading (marked data-focus-result, with tabindex="-1") takes focus,
// so a screen reader reads what happened and the keyboard continues from there.
(function () {
  'use strict';
  var el = document.querySelector('[data-focus-result]');
  if (el && typeof el.focus === 'function') el.focus();
})();
