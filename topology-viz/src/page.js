// topology-viz's page: pan and zoom, lighting a vertex's neighbours, the
// side lists and the find box. Everything it reads is in the page.
(function () {
  'use strict';
  var canvas = document.getElementById('canvas');
  var view = document.getElementById('view');
  var picture = document.getElementById('picture');
  var selection = document.getElementById('selection');
  var W = Number(canvas.dataset.width), H = Number(canvas.dataset.height);
  var s = 1, tx = 0, ty = 0;

  // The graph, from the SVG: each vertex's edges.
  var vertices = {}, edges = [];
  canvas.querySelectorAll('.vertex').forEach(function (v) {
    vertices[v.id] = { el: v, edges: [] };
  });
  canvas.querySelectorAll('.edge').forEach(function (e) {
    var edge = { el: e, from: e.dataset.from, to: e.dataset.to };
    edges.push(edge);
    if (vertices[edge.from]) vertices[edge.from].edges.push(edge);
    if (vertices[edge.to]) vertices[edge.to].edges.push(edge);
  });

  function apply() {
    view.setAttribute('transform', 'translate(' + tx + ' ' + ty + ') scale(' + s + ')');
  }
  function fit() {
    var r = canvas.getBoundingClientRect();
    if (!r.width || !r.height || !W || !H) return;
    // Leave the bottom line to the hint.
    var h = Math.max(r.height - 22, 1);
    s = Math.min(r.width / W, h / H, 1.5);
    tx = (r.width - W * s) / 2;
    ty = (h - H * s) / 2;
    apply();
  }
  function zoom(factor, px, py) {
    var r = canvas.getBoundingClientRect();
    if (px === undefined) { px = r.width / 2; py = r.height / 2; }
    var next = Math.max(0.05, Math.min(8, s * factor));
    tx = px - (px - tx) * (next / s);
    ty = py - (py - ty) * (next / s);
    s = next;
    apply();
  }
  function centreOn(id) {
    var v = vertices[id];
    if (!v) return;
    var r = canvas.getBoundingClientRect(), b = v.el.getBoundingClientRect();
    tx += r.left + r.width / 2 - (b.left + b.width / 2);
    ty += r.top + r.height / 2 - (b.top + b.height / 2);
    apply();
  }

  // Lighting.
  var pinned = null;
  function name(id) { return vertices[id] ? vertices[id].el.dataset.name : id; }
  function kind(id) { return vertices[id] ? vertices[id].el.classList[1] : ''; }
  function clear() {
    canvas.classList.remove('focus');
    document.querySelectorAll('.hl, .selected').forEach(function (el) {
      el.classList.remove('hl', 'selected');
    });
    selection.hidden = true;
  }
  function light(id) {
    clear();
    var v = vertices[id];
    if (!v) return [];
    canvas.classList.add('focus');
    v.el.classList.add('hl', 'selected');
    var before = [], after = [], stores = [];
    v.edges.forEach(function (e) {
      e.el.classList.add('hl');
      var other = e.from === id ? e.to : e.from;
      if (vertices[other]) vertices[other].el.classList.add('hl');
      if (e.el.classList.contains('store')) stores.push(other);
      else if (e.to === id) before.push(other);
      else after.push(other);
    });
    document.querySelectorAll('[data-target="' + id + '"]').forEach(function (li) {
      li.classList.add('hl');
    });
    var list = function (title, ids) {
      if (!ids.length) return '';
      var items = ids.map(function (o) {
        var li = document.createElement('li');
        li.textContent = name(o);
        return li.outerHTML;
      }).join('');
      return '<div>' + title + '</div><ul>' + items + '</ul>';
    };
    var head = document.createElement('div');
    var strong = document.createElement('strong');
    strong.textContent = name(id);
    var k = document.createElement('span');
    k.className = 'kind';
    k.textContent = ' ' + kind(id);
    head.appendChild(strong);
    head.appendChild(k);
    selection.innerHTML = head.outerHTML + list('from', before) + list('to', after) +
      list(kind(id) === 'store' ? 'used by' : 'stores', stores);
    selection.hidden = false;
    return v.edges.map(function (e) { return name(e.from === id ? e.to : e.from); });
  }
  function byName(text) {
    for (var id in vertices) if (vertices[id].el.dataset.name === text) return id;
    return null;
  }

  // Hover lights; a click keeps the light until Esc, a click elsewhere or
  // on the same vertex.
  Object.keys(vertices).forEach(function (id) {
    var el = vertices[id].el;
    el.addEventListener('mouseenter', function () { if (!pinned) light(id); });
    el.addEventListener('mouseleave', function () { if (!pinned) clear(); });
    el.addEventListener('click', function (ev) {
      ev.stopPropagation();
      if (moved) return;
      if (pinned === id) { pinned = null; clear(); }
      else { pinned = id; light(id); }
    });
  });
  canvas.addEventListener('click', function () {
    if (moved) return;
    pinned = null;
    clear();
  });
  document.querySelectorAll('[data-target]').forEach(function (li) {
    li.addEventListener('click', function () {
      var id = li.dataset.target;
      if (!vertices[id]) return;
      pinned = id;
      light(id);
      centreOn(id);
    });
  });

  // Pan by dragging, zoom with the wheel.
  var drag = null, moved = false;
  canvas.addEventListener('pointerdown', function (ev) {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: tx, ty: ty };
    moved = false;
  });
  window.addEventListener('pointermove', function (ev) {
    if (!drag) return;
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!moved) { moved = true; canvas.classList.add('dragging'); }
    tx = drag.tx + dx;
    ty = drag.ty + dy;
    apply();
  });
  window.addEventListener('pointerup', function () {
    drag = null;
    canvas.classList.remove('dragging');
    // The click that ends a drag comes after this: let it see `moved`.
    setTimeout(function () { moved = false; }, 0);
  });
  canvas.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    var r = canvas.getBoundingClientRect();
    zoom(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  document.getElementById('zoom-in').addEventListener('click', function () { zoom(1.25); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoom(0.8); });
  document.getElementById('fit').addEventListener('click', fit);
  document.addEventListener('keydown', function (ev) {
    if (ev.target && ev.target.tagName === 'INPUT') return;
    if (ev.key === '+' || ev.key === '=') zoom(1.25);
    else if (ev.key === '-') zoom(0.8);
    else if (ev.key === '0') fit();
    else if (ev.key === 'Escape') { pinned = null; clear(); }
  });
  var find = document.getElementById('find');
  find.addEventListener('change', function () {
    var id = byName(find.value.trim());
    if (!id) return;
    pinned = id;
    light(id);
    centreOn(id);
  });
  window.addEventListener('resize', fit);

  fit();
  // For tests and the console.
  window.topologyViz = {
    select: function (text) {
      var id = vertices[text] ? text : byName(text);
      if (!id) return null;
      pinned = id;
      return light(id);
    },
    clear: function () { pinned = null; clear(); },
    fit: fit,
    zoom: zoom
  };
})();
