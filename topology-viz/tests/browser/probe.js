// Added to a copy of the page by the browser test, after the page's own
// script: measures what a reader sees, clicks a vertex, and writes what
// it found into a pre element (id probe), which `chromium --dump-dom` prints.
(function () {
  'use strict';
  var out = [];
  var canvas = document.getElementById('canvas');
  var box = canvas.getBoundingClientRect();
  var vw = window.innerWidth, vh = window.innerHeight;
  function within(r, o) {
    return r.left >= o.left - 0.5 && r.right <= o.right + 0.5 &&
      r.top >= o.top - 0.5 && r.bottom <= o.bottom + 0.5;
  }
  function overlap(a, b) {
    return a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
      a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  }
  var labels = [];
  document.querySelectorAll('#canvas .vertex').forEach(function (v) {
    var label = v.querySelector('text');
    var r = label.getBoundingClientRect();
    var shape = v.querySelector('.shape').getBoundingClientRect();
    var style = getComputedStyle(v);
    var shown = style.visibility === 'visible' && style.display !== 'none' &&
      Number(style.opacity) > 0 && r.width > 0;
    var inView = within(r, box) && r.right <= vw && r.bottom <= vh && r.left >= 0 && r.top >= 0;
    var text = Array.prototype.map.call(label.querySelectorAll('tspan'), function (t) {
      return t.textContent;
    }).join('');
    labels.push({ name: v.dataset.name, rect: r });
    out.push(['vertex', v.dataset.name, text, inView ? 'in-view' : 'out-of-view',
      shown ? 'shown' : 'hidden', within(r, shape) ? 'fits' : 'overflows',
      (r.height / label.querySelectorAll('tspan').length).toFixed(1)].join('\t'));
  });
  labels.forEach(function (a, i) {
    labels.slice(i + 1).forEach(function (b) {
      if (overlap(a.rect, b.rect)) out.push(['overlap', a.name, b.name].join('\t'));
    });
  });
  // Click a vertex as a reader does, then ask the hook about another.
  var clicked = document.querySelector('#canvas .vertex[data-name="' + window.PROBE_CLICK + '"]');
  clicked.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
  function names(selector) {
    return Array.prototype.map.call(document.querySelectorAll(selector), function (el) {
      return el.dataset.name;
    }).sort().join(', ');
  }
  function edges() {
    return Array.prototype.map.call(document.querySelectorAll('#canvas .edge.hl'), function (e) {
      var from = document.getElementById(e.dataset.from).dataset.name;
      var to = document.getElementById(e.dataset.to).dataset.name;
      return from + ' -> ' + to;
    }).sort().join(', ');
  }
  out.push(['focus', String(canvas.classList.contains('focus'))].join('\t'));
  out.push(['lit edges', edges()].join('\t'));
  out.push(['lit vertices', names('#canvas .vertex.hl')].join('\t'));
  out.push(['selected', names('#canvas .vertex.selected')].join('\t'));
  out.push(['lit list items', document.querySelectorAll('#side li.hl').length].join('\t'));
  var lit = document.querySelector('#canvas .edge.hl');
  out.push(['lit edge colour', lit ? getComputedStyle(lit).stroke : 'none'].join('\t'));
  out.push(['hook', (window.topologyViz.select(window.PROBE_HOOK) || []).slice().sort().join(', ')].join('\t'));
  canvas.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  out.push(['after clearing', String(canvas.classList.contains('focus')), names('#canvas .vertex.hl')].join('\t'));
  // Zoom with the wheel at a point, pan by dragging, find by name.
  var view = document.getElementById('view');
  function transform() {
    var m = /translate\(([-\d.e]+) ([-\d.e]+)\) scale\(([-\d.e]+)\)/.exec(view.getAttribute('transform'));
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
  }
  var t0 = transform();
  canvas.dispatchEvent(new WheelEvent('wheel', {
    deltaY: -200, clientX: box.left + 100, clientY: box.top + 100, bubbles: true, cancelable: true
  }));
  var t1 = transform();
  out.push(['zoom', (t1[2] / t0[2]).toFixed(3)].join('\t'));
  canvas.dispatchEvent(new PointerEvent('pointerdown', { button: 0, clientX: 200, clientY: 200, bubbles: true }));
  window.dispatchEvent(new PointerEvent('pointermove', { clientX: 260, clientY: 170, bubbles: true }));
  window.dispatchEvent(new PointerEvent('pointerup', { clientX: 260, clientY: 170, bubbles: true }));
  var t2 = transform();
  out.push(['pan', (t2[0] - t1[0]).toFixed(1), (t2[1] - t1[1]).toFixed(1)].join('\t'));
  var find = document.getElementById('find');
  find.value = 'names';
  find.dispatchEvent(new Event('change'));
  out.push(['found', names('#canvas .vertex.selected')].join('\t'));
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
