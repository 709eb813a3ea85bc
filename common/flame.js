/* flame.js - the interactive part of kp-flame's SVG: tooltips and a
 * details line, click to zoom, Reset Zoom, search by regular expression
 * with the share of samples matched.  Embedded in the SVG at build
 * time (Makefile: build/gen/flame_js.c); the SVG's ids, classes and
 * data- attributes it reads are written by common/flame_svg.c. */
'use strict';
var svg, frames, details, zoombtn, searchbtn, matched, W, FH, INV;
var CW = 12 * 0.59, XPAD = 10, searching = null;
function kp_init() {
  svg = document.documentElement;
  frames = document.getElementById('frames');
  details = document.getElementById('details').firstChild;
  zoombtn = document.getElementById('unzoom');
  searchbtn = document.getElementById('search');
  matched = document.getElementById('matched').firstChild;
  W = +svg.getAttribute('width');
  FH = +svg.getAttribute('data-fh');
  INV = svg.getAttribute('data-inverted') === '1';
  frames.addEventListener('click', function (e) {
    var g = group(e.target); if (g) zoom(g); });
  frames.addEventListener('mouseover', function (e) {
    var g = group(e.target);
    if (g) details.nodeValue = g.firstChild.textContent.replace(/\n/g, '; '); });
  frames.addEventListener('mouseout', function () {
    details.nodeValue = ' '; });
  zoombtn.addEventListener('click', unzoom);
  searchbtn.addEventListener('click', search_prompt);
  window.addEventListener('keydown', function (e) {
    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
      e.preventDefault(); search_prompt();
    } else if (e.keyCode === 27) { reset_search(); unzoom(); }
  });
}
function group(n) {
  while (n && n !== frames) {
    if (n.nodeName === 'g') return n;
    n = n.parentNode;
  }
  return null;
}
function fname(g) {
  var t = g.firstChild.textContent, i = t.indexOf('\n');
  return i < 0 ? t : t.substring(0, i);
}
function orig(e, a) {
  var o = e.getAttribute('data-' + a);
  if (o === null) { o = e.getAttribute(a); e.setAttribute('data-' + a, o); }
  return +o;
}
function label(g, x, w) {
  var r = g.getElementsByTagName('rect')[0];
  var t = g.getElementsByTagName('text')[0];
  var name = fname(g), n = Math.floor((w - 6) / CW);
  if (n < 3) { if (t) t.textContent = ''; return; }
  if (!t) {
    t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    t.setAttribute('y', (+r.getAttribute('y') + FH / 2 + 4).toFixed(1));
    g.appendChild(t);
  }
  t.setAttribute('x', (x + 3).toFixed(2));
  t.textContent = name.length <= n ? name : name.substring(0, n - 2) + '..';
}
function place(g, x, w) {
  var r = g.getElementsByTagName('rect')[0];
  r.setAttribute('x', x.toFixed(2));
  r.setAttribute('width', w.toFixed(2));
  label(g, x, w);
}
function zoom(g) {
  var r = g.getElementsByTagName('rect')[0], x0 = orig(r, 'x'), w0 = orig(r, 'width');
  var y0 = +r.getAttribute('y'), k = (W - 2 * XPAD) / w0, eps = 0.0001;
  var fs = frames.children, i;
  for (i = 0; i < fs.length; i++) {
    var h = fs[i], hr = h.getElementsByTagName('rect')[0];
    var x = orig(hr, 'x'), w = orig(hr, 'width'), y = +hr.getAttribute('y');
    var above = INV ? y > y0 : y < y0;
    h.classList.remove('h'); h.classList.remove('p');
    if (h === g || (above && x >= x0 - eps && x + w <= x0 + w0 + eps)) {
      place(h, XPAD + (x - x0) * k, w * k);
    } else if (y !== y0 && !above && x <= x0 + eps && x + w >= x0 + w0 - eps) {
      h.classList.add('p'); place(h, XPAD, W - 2 * XPAD);
    } else {
      h.classList.add('h');
    }
  }
  zoombtn.classList.remove('h');
}
function unzoom() {
  var fs = frames.children, i;
  for (i = 0; i < fs.length; i++) {
    var h = fs[i], r = h.getElementsByTagName('rect')[0];
    h.classList.remove('h'); h.classList.remove('p');
    place(h, orig(r, 'x'), orig(r, 'width'));
  }
  zoombtn.classList.add('h');
}
function search_prompt() {
  if (searching !== null) { reset_search(); return; }
  var term = prompt('Search for a function (a regular expression, e.g. ^ext4_)', '');
  if (term) search(term);
}
function reset_search() {
  var fs = frames.children, i;
  for (i = 0; i < fs.length; i++) {
    var r = fs[i].getElementsByTagName('rect')[0];
    if (r.getAttribute('data-fill') !== null) {
      r.setAttribute('fill', r.getAttribute('data-fill'));
      r.removeAttribute('data-fill');
    }
  }
  searching = null;
  searchbtn.firstChild.nodeValue = 'Search';
  matched.nodeValue = ' ';
}
function count(g) {
  var m = /\ninclusive: (\d+) /.exec(g.firstChild.textContent);
  return m ? +m[1] : 0;
}
/* the share of samples under the matching frames, each sample once:
   the counts of the matches not inside another match */
function search(term) {
  var re, fs = frames.children, i, spans = [], sum = 0, end = -1, total = 0;
  reset_search();
  try { re = new RegExp(term); } catch (e) {
    re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
  for (i = 0; i < fs.length; i++) {
    var r = fs[i].getElementsByTagName('rect')[0];
    if (fs[i].getAttribute('data-all') !== null) { total = count(fs[i]); continue; }
    if (!re.test(fname(fs[i]))) continue;
    r.setAttribute('data-fill', r.getAttribute('fill'));
    r.setAttribute('fill', 'rgb(230,0,230)');
    spans.push([orig(r, 'x'), orig(r, 'width'), count(fs[i])]);
  }
  /* outer frames first: by x, then the wider first */
  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  for (i = 0; i < spans.length; i++) {
    var e = spans[i][0] + spans[i][1];
    if (e <= end + 0.02) continue; /* inside a match (rounding) */
    sum += spans[i][2];
    end = e;
  }
  searching = term;
  searchbtn.firstChild.nodeValue = 'Reset Search';
  matched.nodeValue = 'Matched: ' + (total ? 100 * sum / total : 0).toFixed(2) + '%';
  return total ? sum / total : 0;
}
