// Charts of tailor's HTML reports, part 1: helpers, uPlot line and scatter charts, the heat map.
// Plain browser JavaScript (the page inlines uPlot before it); web/report-simplex.js adds the
// ternary control and web/report.js draws the charts of the page. Shared through TailorReport.
/* global window, document, uPlot */
window.TailorReport = (function () {
  'use strict';
  var PALETTE = [
    '#1f77b4',
    '#d62728',
    '#2ca02c',
    '#ff7f0e',
    '#9467bd',
    '#8c564b',
    '#e377c2',
    '#7f7f7f',
    '#bcbd22',
    '#17becf',
  ];

  function color(i) {
    return PALETTE[i % PALETTE.length];
  }

  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    return Number(v).toFixed(digits === undefined ? 3 : digits);
  }

  function pct(v) {
    return v === null || v === undefined || !isFinite(v) ? '–' : (100 * v).toFixed(2);
  }

  // Viridis-like ramp for heat maps (value in 0..1).
  var RAMP = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
  ];
  function ramp(t) {
    if (!isFinite(t)) return 'rgb(220,220,220)';
    t = Math.max(0, Math.min(1, t));
    var x = t * (RAMP.length - 1);
    var i = Math.min(RAMP.length - 2, Math.floor(x));
    var f = x - i;
    var a = RAMP[i];
    var b = RAMP[i + 1];
    return (
      'rgb(' +
      [0, 1, 2]
        .map(function (k) {
          return Math.round(a[k] + f * (b[k] - a[k]));
        })
        .join(',') +
      ')'
    );
  }

  function widthOf(el) {
    return Math.max(320, Math.min(el.clientWidth || 720, 1100));
  }

  // ---- uPlot charts ----

  function axisFor(label, side, scale) {
    var a = { label: label || '', stroke: '#333', grid: { stroke: '#eee' } };
    if (side !== undefined) a.side = side;
    if (scale) a.scale = scale;
    return a;
  }

  // Names at whole-number x positions (categories such as ablation variants), split only there.
  function categoryTicks(axis, ticks, positions) {
    axis.values = function (u, splits) {
      return splits.map(function (v) {
        return Number.isInteger(v) && ticks[v] !== undefined ? ticks[v] : '';
      });
    };
    axis.splits = function () {
      return positions;
    };
    axis.rotate = -30;
    axis.size = 60;
  }

  function drawLines(el, spec) {
    var series = [{ label: spec.xLabel || 'x' }];
    var data = [spec.x];
    var hasY2 = false;
    spec.series.forEach(function (s, i) {
      var scale = s.axis === 'y2' ? 'y2' : 'y';
      if (scale === 'y2') hasY2 = true;
      series.push({
        label: s.label,
        scale: scale,
        stroke: s.color || color(i),
        width: 1.6,
        dash: s.dash ? [6, 4] : undefined,
        points: { show: s.points === undefined ? spec.x.length <= 40 : s.points, size: 6 },
        spanGaps: false,
      });
      data.push(s.values);
    });
    var xScale = { time: false };
    if (spec.logX) xScale.distr = 3;
    if (spec.reverseX) xScale.dir = -1;
    var scales = { x: xScale, y: { auto: true } };
    if (spec.yRange) scales.y = { range: spec.yRange };
    if (spec.logY) scales.y.distr = 3;
    if (hasY2) scales.y2 = spec.y2Range ? { range: spec.y2Range } : { auto: true };
    var axes = [axisFor(spec.xLabel), axisFor(spec.yLabel)];
    if (spec.xTicks) categoryTicks(axes[0], spec.xTicks, spec.x.slice());
    if (spec.integerX) axes[0].incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
    if (hasY2) axes.push(axisFor(spec.y2Label, 1, 'y2'));
    var opts = {
      width: widthOf(el),
      height: spec.height || 300,
      scales: scales,
      series: series,
      axes: axes,
      legend: { show: true },
      cursor: { drag: { x: spec.zoom !== false, y: false, setScale: true } },
    };
    return new uPlot(opts, data, el);
  }

  // Scatter through uPlot's aligned-data mode: one sorted x array, one y array per series with
  // nulls where another series owns the point; points only, no connecting paths.
  function drawScatter(el, spec) {
    var all = [];
    spec.series.forEach(function (s, si) {
      for (var i = 0; i < s.x.length; i++) all.push({ x: s.x[i], y: s.y[i], s: si });
    });
    all.sort(function (a, b) {
      return a.x - b.x;
    });
    var xs = all.map(function (p) {
      return p.x;
    });
    var data = [xs];
    var series = [{ label: spec.xLabel || 'x' }];
    spec.series.forEach(function (s, si) {
      data.push(
        all.map(function (p) {
          return p.s === si ? p.y : null;
        }),
      );
      series.push({
        label: s.label,
        stroke: s.color || color(si),
        fill: s.color || color(si),
        paths: function () {
          return null;
        },
        points: {
          show: true,
          size: spec.pointSize || 7,
          fill: s.color || color(si),
          stroke: s.color || color(si),
        },
      });
    });
    var xScale = { time: false };
    if (spec.logX) xScale.distr = 3;
    var yScale = spec.yRange ? { range: spec.yRange } : { auto: true };
    if (spec.ellipses && spec.ellipses.length && !spec.yRange) {
      // Fit the ellipses into view as well as the points.
      var lo = Infinity,
        hi = -Infinity,
        xlo = Infinity,
        xhi = -Infinity;
      all.forEach(function (p) {
        lo = Math.min(lo, p.y);
        hi = Math.max(hi, p.y);
        xlo = Math.min(xlo, p.x);
        xhi = Math.max(xhi, p.x);
      });
      spec.ellipses.forEach(function (e) {
        var r = Math.max(e.rx, e.ry);
        lo = Math.min(lo, e.cy - r);
        hi = Math.max(hi, e.cy + r);
        xlo = Math.min(xlo, e.cx - r);
        xhi = Math.max(xhi, e.cx + r);
      });
      yScale = { range: [lo, hi] };
      xScale.range = [xlo, xhi];
    }
    var hooks = {};
    if (spec.ellipses && spec.ellipses.length) {
      hooks.draw = [
        function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.beginPath();
          ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
          ctx.clip();
          spec.ellipses.forEach(function (e, i) {
            ctx.beginPath();
            for (var t = 0; t <= 64; t++) {
              var th = (2 * Math.PI * t) / 64;
              var ex = e.rx * Math.cos(th);
              var ey = e.ry * Math.sin(th);
              var x = e.cx + ex * Math.cos(e.angle) - ey * Math.sin(e.angle);
              var y = e.cy + ex * Math.sin(e.angle) + ey * Math.cos(e.angle);
              var px = u.valToPos(x, 'x', true);
              var py = u.valToPos(y, 'y', true);
              if (t === 0) ctx.moveTo(px, py);
              else ctx.lineTo(px, py);
            }
            ctx.strokeStyle = e.color || color(i);
            ctx.lineWidth = 2 * (window.devicePixelRatio || 1);
            ctx.stroke();
            var cx = u.valToPos(e.cx, 'x', true);
            var cy = u.valToPos(e.cy, 'y', true);
            ctx.fillStyle = '#000';
            ctx.fillRect(cx - 3, cy - 3, 6, 6);
          });
          ctx.restore();
        },
      ];
    }
    var axes = [axisFor(spec.xLabel), axisFor(spec.yLabel)];
    if (spec.xTicks) {
      var positions = spec.xTicks.map(function (_, i) {
        return i;
      });
      categoryTicks(axes[0], spec.xTicks, positions);
      // room on both sides for points set beside their category
      if (!xScale.range) xScale.range = [-0.5, spec.xTicks.length - 0.5];
    }
    var opts = {
      width: widthOf(el),
      height: spec.height || 360,
      mode: 1,
      scales: { x: xScale, y: yScale },
      series: series,
      axes: axes,
      cursor: { drag: { x: true, y: true, setScale: true } },
      hooks: hooks,
    };
    return new uPlot(opts, data, el);
  }

  // ---- canvas charts: heat map and ternary simplex ----

  function makeCanvas(el, w, h) {
    var dpr = window.devicePixelRatio || 1;
    var c = document.createElement('canvas');
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.width = w + 'px';
    c.style.height = h + 'px';
    el.appendChild(c);
    var ctx = c.getContext('2d');
    ctx.scale(dpr, dpr);
    return { canvas: c, ctx: ctx };
  }

  function drawHeatmap(el, spec) {
    var n = spec.matrix.length;
    var m = n ? spec.matrix[0].length : 0;
    var showLabels = n <= 40;
    var margin = showLabels ? 110 : 40;
    var size = Math.min(widthOf(el) - margin - 20, 640);
    var cell = size / Math.max(1, Math.max(n, m));
    var cv = makeCanvas(el, margin + cell * m + 70, margin + cell * n + 10);
    var ctx = cv.ctx;
    var shown = spec.matrix.map(function (row) {
      var total = row.reduce(function (a, b) {
        return a + b;
      }, 0);
      return row.map(function (v) {
        return spec.normalizeRows ? (total > 0 ? v / total : NaN) : v;
      });
    });
    var max = 0;
    shown.forEach(function (row) {
      row.forEach(function (v) {
        if (isFinite(v)) max = Math.max(max, v);
      });
    });
    for (var i = 0; i < n; i++) {
      for (var j = 0; j < m; j++) {
        ctx.fillStyle = ramp(max > 0 ? shown[i][j] / max : 0);
        ctx.fillRect(margin + j * cell, margin + i * cell, Math.ceil(cell), Math.ceil(cell));
      }
    }
    ctx.fillStyle = '#222';
    ctx.font = '11px sans-serif';
    if (showLabels) {
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      for (var r = 0; r < n; r++)
        ctx.fillText(String(spec.rows[r]).slice(0, 16), margin - 4, margin + (r + 0.5) * cell);
      for (var c = 0; c < m; c++) {
        ctx.save();
        ctx.translate(margin + (c + 0.5) * cell, margin - 4);
        ctx.rotate(-Math.PI / 3);
        ctx.textAlign = 'left';
        ctx.fillText(String(spec.cols[c]).slice(0, 16), 0, 0);
        ctx.restore();
      }
    }
    ctx.textAlign = 'left';
    ctx.fillText((spec.xLabel || '') + ' →', margin, 12);
    // Colour bar.
    var bx = margin + cell * m + 20;
    for (var t = 0; t < 100; t++) {
      ctx.fillStyle = ramp(1 - t / 99);
      ctx.fillRect(bx, margin + (t / 100) * cell * n, 14, (cell * n) / 100 + 1);
    }
    ctx.fillStyle = '#222';
    ctx.fillText(fmt(max, 2), bx + 16, margin + 6);
    ctx.fillText('0', bx + 16, margin + cell * n - 2);
    cv.canvas.addEventListener('mousemove', function (ev) {
      var rect = cv.canvas.getBoundingClientRect();
      var j2 = Math.floor((ev.clientX - rect.left - margin) / cell);
      var i2 = Math.floor((ev.clientY - rect.top - margin) / cell);
      if (i2 >= 0 && i2 < n && j2 >= 0 && j2 < m) {
        cv.canvas.title =
          (spec.yLabel || 'row') +
          ' ' +
          spec.rows[i2] +
          ', ' +
          (spec.xLabel || 'column') +
          ' ' +
          spec.cols[j2] +
          ': ' +
          spec.matrix[i2][j2] +
          (spec.normalizeRows ? ' (' + pct(shown[i2][j2]) + '% of the row)' : '');
      }
    });
    return cv;
  }

  // Ternary coordinates: expert 1 bottom-left, expert 2 top, expert 3 bottom-right.
  return {
    color: color,
    fmt: fmt,
    pct: pct,
    ramp: ramp,
    widthOf: widthOf,
    makeCanvas: makeCanvas,
    drawLines: drawLines,
    drawScatter: drawScatter,
    drawHeatmap: drawHeatmap,
  };
})();
