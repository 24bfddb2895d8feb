"""The report page's inline style and script: nothing is fetched, so the page works from a
CI artifact, a mail attachment or a file:// URL.

The script runs the results view. Its state (the query, "only differences", the baseline
column) lives in the URL's fragment, "#q=status:fail impl:ref&diff=1&base=syscall", so a
view can be linked to and the headless-browser test can drive it; "#c-CASE" is a case's
anchor, which shows its row whatever the query hides."""

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1em 1.5em;color:#222}
h1{margin:0;font-size:1.5em;display:inline-block}h2{margin:1.2em 0 .4em;font-size:1.2em}
.head{margin:0 0 .6em}.head span{margin-left:1em;color:#555}
table{border-collapse:collapse;margin:.4em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .45em;vertical-align:top;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.zero{color:#bbb}
table#verdicts td{white-space:nowrap}
table#verdicts td.cause{white-space:normal;max-width:34em;font-size:92%;color:#444}
td.cell a{display:block;color:inherit;text-decoration:none}
.bad{background:#f8d0d0}.known{background:#fbe8c0}.good{background:#d4f0d4}.none{background:#eee;color:#777}
.verdict-ok{color:#165d16;font-weight:bold}.verdict-fail{color:#a00;font-weight:bold}
.st-PASS{background:#d4f0d4}.st-FAIL,.st-XPASS,.st-BROKEN,.st-CRASH{background:#f8d0d0}
.st-XFAIL{background:#fbe8c0}.st-UNSUPPORTED,.st-ENV_SKIP{background:#eee;color:#666}
.st-none{background:#fff;color:#aaa}
td.r{font-size:88%;max-width:26em}td.r b{font-weight:600}
td.r .msg{display:block;white-space:pre-wrap;word-break:break-word;color:#333}
td.r .was{display:block;font-weight:bold;color:#36c}
tr.area th{background:#e6ecf5;text-align:left}
tr.case:target,tr.case.target{outline:3px solid #36c}
tr.case td.id{font-family:monospace;font-size:88%;white-space:nowrap}
tr.case td.id a{color:inherit;text-decoration:none}
tr.case td.id a.beh{font-size:85%;color:#36c;margin-right:.4em}
#controls{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #ccc}
#controls input[type=search]{width:34em;font:inherit;padding:.15em .3em}
#controls label{margin-left:1em}#shown{margin-left:1em;color:#555}
details{margin:.3em 0}summary{cursor:pointer}
code{font-size:92%}
"""

JS = r"""
(function () {
  var table = document.getElementById('results');
  if (!table) return;
  var q = document.getElementById('q'), diff = document.getElementById('diff-only');
  var base = document.getElementById('base'), shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(table.querySelectorAll('tr.case'));
  var groups = Array.prototype.slice.call(table.querySelectorAll('tbody'));
  var labels = Array.prototype.map.call(table.querySelectorAll('th[data-col]'), function (th) {
    return th.getAttribute('data-col').toLowerCase();
  });
  // impl:NAME is that column when one has the name, else every column containing it.
  function implMatch(impl, tok) {
    return labels.indexOf(tok) >= 0 ? impl === tok : impl.indexOf(tok) >= 0;
  }

  function parse(text) {
    var f = {status: [], impl: [], area: [], text: []};
    text.trim().split(/\s+/).forEach(function (tok) {
      if (!tok) return;
      var m = /^(status|impl|area):(.+)$/i.exec(tok);
      if (m) f[m[1].toLowerCase()].push(m[2].toLowerCase());
      else f.text.push(tok.toLowerCase());
    });
    return f;
  }
  function any(list, test) { return list.length === 0 || list.some(test); }
  function cellsOf(row, f) {
    return Array.prototype.slice.call(row.querySelectorAll('td.r')).filter(function (c) {
      var impl = c.getAttribute('data-impl').toLowerCase();
      return any(f.impl, function (i) { return implMatch(impl, i); });
    });
  }
  // Whether the row's shown cells disagree: with each other, with the baseline column
  // (an implementation's label), or ('@earlier') with the earlier run's statuses.
  function differs(row, cells, baseLabel) {
    if (baseLabel === '@earlier') {
      return cells.some(function (c) {
        return c.hasAttribute('data-was') && c.getAttribute('data-was') !== c.getAttribute('data-status');
      });
    }
    if (baseLabel) {
      var mine = row.querySelector('td.r[data-impl="' + CSS.escape(baseLabel) + '"]');
      return !!mine && cells.some(function (c) {
        return c !== mine && c.getAttribute('data-status') !== mine.getAttribute('data-status');
      });
    }
    return cells.some(function (c) {
      return c.getAttribute('data-status') !== cells[0].getAttribute('data-status');
    });
  }
  function matches(row, f, onlyDiff, baseLabel) {
    var area = row.getAttribute('data-area').toLowerCase();
    if (!any(f.area, function (a) { return area.indexOf(a) === 0; })) return false;
    var cells = cellsOf(row, f);
    if (!cells.length) return false;
    if (!any(f.status, function (s) {
      return cells.some(function (c) { return c.getAttribute('data-status').toLowerCase() === s; });
    })) return false;
    var text = row.getAttribute('data-case').toLowerCase() + ' ' +
      cells.map(function (c) { return c.textContent.toLowerCase(); }).join(' ');
    if (!f.text.every(function (t) { return text.indexOf(t) >= 0; })) return false;
    return !onlyDiff || differs(row, cells, baseLabel);
  }
  function apply(keepHash) {
    var f = parse(q.value), n = 0;
    rows.forEach(function (row) {
      var ok = matches(row, f, diff.checked, base.value);
      row.hidden = !ok;
      if (ok) n++;
    });
    table.querySelectorAll('[data-col]').forEach(function (c) {
      var impl = c.getAttribute('data-col').toLowerCase();
      c.hidden = !any(f.impl, function (i) { return implMatch(impl, i); });
    });
    table.querySelectorAll('td.r').forEach(function (c) {
      var impl = c.getAttribute('data-impl').toLowerCase();
      c.hidden = !any(f.impl, function (i) { return implMatch(impl, i); });
    });
    groups.forEach(function (g) {
      g.hidden = !g.querySelector('tr.case:not([hidden])');
    });
    shown.textContent = n + ' of ' + rows.length + ' cases shown';
    shown.setAttribute('data-shown', n);
    if (!keepHash) {
      var h = 'q=' + encodeURIComponent(q.value) + (diff.checked ? '&diff=1' : '') +
        (base.value ? '&base=' + encodeURIComponent(base.value) : '');
      history.replaceState(null, '', h === 'q=' ? location.pathname : '#' + h);
    }
  }
  function fromHash() {
    var h = decodeURIComponent(location.hash.slice(1));
    rows.forEach(function (r) { r.classList.remove('target'); });
    if (h.indexOf('c-') === 0) {
      var row = document.getElementById(h);
      if (row && row.hidden) {  // the anchor wins over the query that hid its row
        q.value = ''; diff.checked = false; apply(true);
      }
      if (row) { row.classList.add('target'); row.scrollIntoView(); }
      return;
    }
    if (h.indexOf('q=') === 0 || h.indexOf('diff=') === 0) {
      var p = {};
      location.hash.slice(1).split('&').forEach(function (kv) {
        var i = kv.indexOf('=');
        p[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
      });
      q.value = p.q || ''; diff.checked = p.diff === '1'; base.value = p.base || '';
      apply(true);
      if (table.scrollIntoView) table.scrollIntoView();
    }
  }
  q.addEventListener('input', function () { apply(false); });
  diff.addEventListener('change', function () { apply(false); });
  base.addEventListener('change', function () { apply(false); });
  window.addEventListener('hashchange', fromHash);
  apply(true);
  fromHash();
})();
"""
