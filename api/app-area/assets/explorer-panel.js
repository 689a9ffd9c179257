// The explorer's filter panel on a small screen (api/app-area/pages/explorer.ts): the page is
// served with every filter group in sight; under 60rem wide, with no filter set, the panel is
// folded to its "Filters" line so the results come next. Without script it stays open.
(function () {
  'use strict';
  var panel = document.querySelector('details.ex-all-filters[data-close-narrow]');
  if (panel && window.matchMedia && window.matchMedia('(max-width: 59.99rem)').matches) panel.open = false;
})();
