// Charts of tailor's HTML reports, part 2: the ternary (simplex) heat map of a PRL run's
// controllability grid with a draggable preference point. Offline it shows the nearest grid
// point's values; served by `tailor serve` it asks the preference endpoint (data.live).
/* global window, document, fetch, setTimeout */
(function (T) {
  'use strict';
  var fmt = T.fmt;
  var pct = T.pct;
  var ramp = T.ramp;
  var widthOf = T.widthOf;
  var makeCanvas = T.makeCanvas;

  function ternaryGeometry(side, pad) {
    var h = (side * Math.sqrt(3)) / 2;
    var A = [pad, pad + h];
    var B = [pad + side / 2, pad];
    var C = [pad + side, pad + h];
    return {
      A: A,
      B: B,
      C: C,
      h: h,
      toXY: function (r) {
        return [r[0] * A[0] + r[1] * B[0] + r[2] * C[0], r[0] * A[1] + r[1] * B[1] + r[2] * C[1]];
      },
      toBary: function (x, y) {
        var det = (B[1] - C[1]) * (A[0] - C[0]) + (C[0] - B[0]) * (A[1] - C[1]);
        var a = ((B[1] - C[1]) * (x - C[0]) + (C[0] - B[0]) * (y - C[1])) / det;
        var b = ((C[1] - A[1]) * (x - C[0]) + (A[0] - C[0]) * (y - C[1])) / det;
        return [a, b, 1 - a - b];
      },
    };
  }

  function projectToSimplex(r) {
    var c = r.map(function (v) {
      return Math.max(0, v);
    });
    var s = c[0] + c[1] + c[2];
    return s > 0
      ? c.map(function (v) {
          return v / s;
        })
      : [1 / 3, 1 / 3, 1 / 3];
  }

  function nearestPoint(points, r) {
    var best = null;
    var bestD = Infinity;
    points.forEach(function (p) {
      var d = 0;
      for (var k = 0; k < r.length; k++) d += (p.preference[k] - r[k]) * (p.preference[k] - r[k]);
      if (d < bestD) {
        bestD = d;
        best = p;
      }
    });
    return best;
  }

  function drawTernary(el, spec, live) {
    var side = Math.min(widthOf(el) - 140, 460);
    var pad = 30;
    var geo = ternaryGeometry(side, pad);
    var wrap = document.createElement('div');
    wrap.className = 'ternary-wrap';
    el.appendChild(wrap);
    var controls = document.createElement('div');
    controls.className = 'ternary-controls';
    var select = document.createElement('select');
    select.setAttribute('aria-label', 'metric shown as colour');
    spec.metrics.forEach(function (m) {
      var o = document.createElement('option');
      o.value = m;
      o.textContent = m;
      select.appendChild(o);
    });
    controls.appendChild(document.createTextNode('colour: '));
    controls.appendChild(select);
    wrap.appendChild(controls);
    var cv = makeCanvas(wrap, side + 2 * pad + 90, geo.h + 2 * pad + 20);
    cv.canvas.className = 'ternary-canvas';
    // Corner positions in CSS pixels (expert 1, 2, 3), for tests and tools that drive the control.
    cv.canvas.setAttribute('data-corners', JSON.stringify([geo.A, geo.B, geo.C]));
    var ctx = cv.ctx;
    var marker = projectToSimplex([1 / 3, 1 / 3, 1 / 3]);

    function render() {
      var metric = select.value;
      var vals = spec.points
        .map(function (p) {
          return p.values[metric];
        })
        .filter(function (v) {
          return v !== null && isFinite(v);
        });
      var lo = Math.min.apply(null, vals.length ? vals : [0]);
      var hi = Math.max.apply(null, vals.length ? vals : [1]);
      ctx.clearRect(0, 0, cv.canvas.width, cv.canvas.height);
      var step = 4;
      for (var y = pad; y <= pad + geo.h; y += step) {
        for (var x = pad; x <= pad + side; x += step) {
          var r = geo.toBary(x + step / 2, y + step / 2);
          if (r[0] < -0.01 || r[1] < -0.01 || r[2] < -0.01) continue;
          var p = nearestPoint(spec.points, r);
          var v = p ? p.values[metric] : null;
          ctx.fillStyle =
            v === null || v === undefined ? 'rgb(220,220,220)' : ramp(hi > lo ? (v - lo) / (hi - lo) : 0.5);
          ctx.fillRect(x, y, step, step);
        }
      }
      // Mask the spill outside the triangle, then outline it.
      ctx.save();
      ctx.globalCompositeOperation = 'destination-in';
      ctx.beginPath();
      ctx.moveTo(geo.A[0], geo.A[1]);
      ctx.lineTo(geo.B[0], geo.B[1]);
      ctx.lineTo(geo.C[0], geo.C[1]);
      ctx.closePath();
      ctx.rect(pad + side + 10, 0, 200, geo.h + 2 * pad + 20);
      ctx.rect(0, pad + geo.h + 2, side + 2 * pad + 90, 30);
      ctx.rect(0, 0, side + 2 * pad + 90, pad - 2);
      ctx.fill();
      ctx.restore();
      ctx.strokeStyle = '#333';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(geo.A[0], geo.A[1]);
      ctx.lineTo(geo.B[0], geo.B[1]);
      ctx.lineTo(geo.C[0], geo.C[1]);
      ctx.closePath();
      ctx.stroke();
      ctx.fillStyle = '#222';
      ctx.font = '12px sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(spec.corners[0], geo.A[0] + 10, geo.A[1] + 16);
      ctx.fillText(spec.corners[1], geo.B[0], geo.B[1] - 8);
      ctx.fillText(spec.corners[2], geo.C[0] - 10, geo.C[1] + 16);
      spec.points.forEach(function (p) {
        var q = geo.toXY(p.preference);
        ctx.fillStyle = 'rgba(255,255,255,0.7)';
        ctx.fillRect(q[0] - 1, q[1] - 1, 2, 2);
      });
      var bx = pad + side + 30;
      for (var t = 0; t < 100; t++) {
        ctx.fillStyle = ramp(1 - t / 99);
        ctx.fillRect(bx, pad + (t / 100) * geo.h, 14, geo.h / 100 + 1);
      }
      ctx.fillStyle = '#222';
      ctx.textAlign = 'left';
      ctx.fillText(pct(hi) + '%', bx + 18, pad + 8);
      ctx.fillText(pct(lo) + '%', bx + 18, pad + geo.h);
      var m = geo.toXY(marker);
      ctx.beginPath();
      ctx.arc(m[0], m[1], 7, 0, 2 * Math.PI);
      ctx.fillStyle = '#fff';
      ctx.fill();
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = '#d62728';
      ctx.stroke();
    }
    select.addEventListener('change', render);
    render();

    var panel = document.createElement('div');
    panel.className = 'simplex-panel';
    wrap.appendChild(panel);
    var prefLine = document.createElement('p');
    prefLine.id = 'simplex-preference';
    panel.appendChild(prefLine);
    var status = document.createElement('p');
    status.id = 'simplex-status';
    panel.appendChild(status);
    var table = document.createElement('table');
    table.id = 'simplex-values';
    table.className = 'numbers';
    panel.appendChild(table);
    var keys = spec.metrics;
    table.innerHTML = '<tr><th>metric</th><th>accuracy %</th></tr>';
    var cells = {};
    keys.forEach(function (k) {
      var tr = document.createElement('tr');
      var th = document.createElement('td');
      th.textContent = k;
      var td = document.createElement('td');
      td.setAttribute('data-key', k);
      td.textContent = '–';
      tr.appendChild(th);
      tr.appendChild(td);
      table.appendChild(tr);
      cells[k] = td;
    });

    function show(values, r, note) {
      keys.forEach(function (k) {
        cells[k].textContent = pct(values[k]);
      });
      prefLine.textContent =
        'r = (' +
        r
          .map(function (v) {
            return v.toFixed(3);
          })
          .join(', ') +
        ')';
      status.textContent = note;
      table.setAttribute(
        'data-preference',
        r
          .map(function (v) {
            return v.toFixed(4);
          })
          .join(','),
      );
    }

    var inFlight = false;
    var pending = null;
    var retryIn = 0;
    function query(r) {
      if (!live) {
        var p = nearestPoint(spec.points, r);
        if (p)
          show(
            p.values,
            r,
            'values of the nearest grid point r = (' +
              p.preference
                .map(function (v) {
                  return v.toFixed(2);
                })
                .join(', ') +
              '); run `tailor serve` for exact values',
          );
        table.setAttribute('data-state', 'ready');
        return;
      }
      if (inFlight) {
        pending = r;
        return;
      }
      inFlight = true;
      table.setAttribute('data-state', 'pending');
      var url =
        live.endpoint +
        '?r=' +
        r
          .map(function (v) {
            return v.toFixed(6);
          })
          .join(',');
      fetch(url, { method: 'GET' })
        .then(function (res) {
          return res.json().then(function (body) {
            return {
              ok: res.ok,
              status: res.status,
              body: body,
              retry: Number(res.headers.get('retry-after')),
            };
          });
        })
        .then(function (out) {
          // Busy (its queue is full): ask again for the latest point when the server says.
          if (out.status === 503) {
            retryIn = Math.min(10, out.retry > 0 ? out.retry : 1);
            if (!pending) pending = r;
            status.textContent = 'server busy: asking again in ' + retryIn + ' s';
            return;
          }
          if (!out.ok) throw new Error(out.body && out.body.error ? out.body.error : 'HTTP ' + out.status);
          var b = out.body;
          var values = { top1: b.top1, many: b.many, medium: b.medium, few: b.few };
          Object.keys(b.distributions || {}).forEach(function (d) {
            values[d] = b.distributions[d];
          });
          show(values, b.preference || r, 'evaluated by the server in ' + fmt(b.seconds, 3) + ' s');
        })
        .catch(function (err) {
          status.textContent = 'server: ' + err.message;
        })
        .then(function () {
          var wait = retryIn * 1000;
          retryIn = 0;
          setTimeout(function () {
            inFlight = false;
            if (pending) {
              var next = pending;
              pending = null;
              query(next);
            } else {
              table.setAttribute('data-state', 'ready');
            }
          }, wait);
        });
    }

    var dragging = false;
    function moveTo(ev) {
      var rect = cv.canvas.getBoundingClientRect();
      marker = projectToSimplex(geo.toBary(ev.clientX - rect.left, ev.clientY - rect.top));
      render();
      query(marker);
    }
    cv.canvas.addEventListener('pointerdown', function (ev) {
      dragging = true;
      if (cv.canvas.setPointerCapture) cv.canvas.setPointerCapture(ev.pointerId);
      moveTo(ev);
    });
    cv.canvas.addEventListener('pointermove', function (ev) {
      if (dragging) moveTo(ev);
    });
    cv.canvas.addEventListener('pointerup', function () {
      dragging = false;
    });
    query(marker);
    return cv;
  }

  T.drawTernary = drawTernary;
  T.projectToSimplex = projectToSimplex;
})(window.TailorReport);
