// Client side of tailor's HTML reports: draws every chart of the page. The page carries its data
// as JSON in <script id="report-data">; every element with a data-chart attribute names one chart
// spec of that JSON. A chart that drew sets data-drawn; body gets data-ready when all are done.
/* global window, document */
(function (T) {
  'use strict';
  // ---- wiring ----

  function init() {
    var holder = document.getElementById('report-data');
    if (!holder) return;
    var data = JSON.parse(holder.textContent);
    var nodes = document.querySelectorAll('[data-chart]');
    Array.prototype.forEach.call(nodes, function (el) {
      var spec = data.charts[el.getAttribute('data-chart')];
      if (!spec) return;
      try {
        if (spec.type === 'lines') T.drawLines(el, spec);
        else if (spec.type === 'scatter') T.drawScatter(el, spec);
        else if (spec.type === 'heatmap') T.drawHeatmap(el, spec);
        else if (spec.type === 'ternary') T.drawTernary(el, spec, data.live || null);
        else throw new Error('unknown chart type ' + spec.type);
        el.setAttribute('data-drawn', 'true');
      } catch (err) {
        el.setAttribute('data-error', String(err && err.message));
        el.textContent = 'chart failed: ' + (err && err.message);
      }
    });
    document.body.setAttribute('data-ready', 'true');
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})(window.TailorReport);
