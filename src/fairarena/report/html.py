"""A self-contained HTML report: one file, no network, readable without JavaScript.

A :class:`Report` is a title and :class:`Section` s; a section holds blocks — :class:`Text`,
:class:`~fairarena.report.tables.Table`, :class:`FigureBlock` (a matplotlib figure or SVG text, inlined
as SVG), :class:`KeyValues` (e.g. the study file's fields and provenance), :class:`Preformatted` and a
:class:`DrillDown` of per-item details (e.g. one item per debate: its transcript, proposal tables and
metrics) with a text filter, tag filters, sorting by an item's numbers and expand/collapse-all; an item's
``lazy`` blocks (e.g. a debate's transcript) are embedded gzip-compressed and base64-encoded, inflated
by the page (the browser's ``DecompressionStream``) when the item is first opened, so thousands of
transcripts fit in one offline file. Tables whose ``meta["dims"]`` name their dimensions get drop-down
filters (metric, framework, opponent) per section; every table sorts by a click on a column header.

Everything is inline: the stylesheet, the SVG figures and a small script (tabs, drill-down filter).
A Content-Security-Policy meta tag forbids every external load (``default-src 'none'``), so a report
that works in the test browser works offline. Tabs are addressable by URL (``report.html#tables``;
changing the hash switches the tab). Without JavaScript every section is shown one after another, each
drill-down item is a native ``<details>`` element and compressed bodies are not shown.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from matplotlib.figure import Figure

from fairarena.fsutil import atomic_write_text
from fairarena.report.bodycache import Packed
from fairarena.report.figures import prefix_ids, svg_of
from fairarena.report.tables import Table, table_dim_values, to_html


@dataclass(frozen=True)
class Text:
    """Plain text; blank lines separate paragraphs (escaped, never interpreted as HTML)."""

    text: str


@dataclass(frozen=True)
class FigureBlock:
    """A figure: a matplotlib Figure (rendered to SVG when the report is rendered) or SVG text."""

    figure: Figure | str
    caption: str = ""
    alt: str = ""


@dataclass(frozen=True)
class KeyValues:
    items: Mapping[str, Any]
    title: str = ""


@dataclass(frozen=True)
class Preformatted:
    text: str
    title: str = ""


Block = Union[Text, Table, FigureBlock, KeyValues, Preformatted, "DrillDown"]


@dataclass(frozen=True)
class Item:
    """One drill-down entry (e.g. one debate): a title, a one-line summary, tags to filter on, blocks."""

    title: str
    blocks: Sequence[Block] = ()
    summary: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, float] = field(default_factory=dict)   # numbers the drill-down can sort by
    lazy: Sequence[Block] = ()   # more blocks, embedded gzip-compressed (base64), rendered when first opened
    packed: Packed | None = None  # or those blocks already rendered and compressed (BodyPacker, a BodyCache)


@dataclass(frozen=True)
class DrillDown:
    items: Sequence[Item]
    title: str = ""
    filters: Sequence[str] = ()      # tag names offered as drop-down filters


@dataclass(frozen=True)
class Section:
    title: str
    blocks: Sequence[Block] = ()


@dataclass(frozen=True)
class Report:
    title: str
    sections: Sequence[Section]
    subtitle: str = ""
    footer: str = ""


# Notes on the stylesheet: a section's scroll margin as tall as the window makes the browser's jump to a
# tab opened by its URL (#tab) land at the top of the page (title and tabs shown, not the section's heading
# hidden under the sticky tabs); text cells may wrap (table cells ignore min-width, so a table of long
# labels -- a cohort's patients -- otherwise overflows its block at 1,400 px).
_CSS = """
:root{--fg:#1d232b;--muted:#5b6572;--line:#d6dbe1;--bg:#fff;--soft:#f3f5f8;--acc:#1f5fa8;--win:#e7f1e2}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header.top{padding:18px 28px 10px;border-bottom:1px solid var(--line)}
header.top h1{margin:0;font-size:22px}
header.top p{margin:4px 0 0;color:var(--muted)}
nav.tabs{position:sticky;top:0;z-index:2;background:var(--bg);border-bottom:1px solid var(--line);padding:0 20px;display:flex;flex-wrap:wrap;gap:2px}
nav.tabs button{border:0;background:none;padding:10px 14px;font:inherit;color:var(--muted);cursor:pointer;border-bottom:3px solid transparent}
nav.tabs button[aria-selected=true]{color:var(--fg);border-bottom-color:var(--acc);font-weight:600}
main{padding:8px 28px 40px;max-width:1400px}
section.sec>h2{font-size:19px;margin:18px 0 10px}
html.js section.sec{display:none}
section.sec{scroll-margin-top:100vh}
html.js section.sec.active{display:block}
.block{margin:12px 0 20px}
.scroll{overflow-x:auto}
table.fa{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
table.fa caption{text-align:left;font-weight:600;padding:4px 0 8px;font-size:14px}
table.fa th,table.fa td{padding:4px 9px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
table.fa thead th{background:var(--soft);text-align:center;font-weight:600}
table.fa tbody th{text-align:left;font-weight:500}
table.fa tr.group th{background:#fbfcfd;text-align:left;font-style:italic;color:var(--muted)}
table.fa td.txt{text-align:left;white-space:normal}
table.fa td.long{white-space:normal;min-width:14em;max-width:36em}
table.fa td.win{font-weight:700;background:var(--win)}
table.fa sup{color:#a3361f;font-weight:700}
p.notes{color:var(--muted);font-size:12px;margin:6px 0 0}
figure{margin:0}
figure svg{max-width:100%;height:auto}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;font-size:13px;margin:0}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0;font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
pre{background:var(--soft);padding:10px;overflow-x:auto;font-size:12.5px;white-space:pre-wrap}
.dd-controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:6px 0 10px}
.dd-controls input,.dd-controls select,.dd-controls button{font:inherit;font-size:13px;padding:4px 8px}
.dd-controls input[type=number]{width:7em}
.dd-count{color:var(--muted);font-size:13px}
details.item{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:var(--bg)}
details.item>summary{cursor:pointer;padding:7px 10px;list-style-position:inside}
details.item>summary .sum{color:var(--muted);margin-left:8px;font-size:13px}
details.item[open]>summary{background:var(--soft);border-bottom:1px solid var(--line)}
details.item .body{padding:4px 12px 10px}
details.item .body h3{font-size:14px;margin:14px 0 6px}
.tag{display:inline-block;background:var(--soft);border-radius:10px;padding:0 7px;margin-left:4px;font-size:11.5px;color:var(--muted)}
footer{color:var(--muted);font-size:12px;padding:14px 28px;border-top:1px solid var(--line)}
html.js table.fa thead th.leaf,html.js table.fa thead th.ix{cursor:pointer}
html.js table.fa thead th.leaf:hover,html.js table.fa thead th.ix:hover{color:var(--acc)}
html.js table.fa thead th.leaf:focus-visible,html.js table.fa thead th.ix:focus-visible{outline:2px solid var(--acc);outline-offset:-2px}
table.fa th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
table.fa th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
.tfilter{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:6px 0 4px;font-size:13px}
.tfilter select{font:inherit;font-size:13px;padding:4px 8px}
.tf-count,.tf-hint,.dd-size{color:var(--muted);font-size:13px}
.figrow{display:flex;flex-wrap:wrap;gap:12px}
.figrow>figure{flex:1 1 560px;min-width:0}
@media print{nav.tabs{display:none}html.js section.sec{display:block}}
"""

_JS = """
(function(){
  var d=document; d.documentElement.classList.add('js');
  var all=function(root,q){return [].slice.call(root.querySelectorAll(q));};
  var tabs=all(d,'nav.tabs button');
  function show(id){
    var found=false;
    tabs.forEach(function(b){var on=b.dataset.target===id; b.setAttribute('aria-selected',on); if(on)found=true;});
    if(!found&&tabs.length){id=tabs[0].dataset.target; tabs[0].setAttribute('aria-selected',true);}
    all(d,'section.sec').forEach(function(s){s.classList.toggle('active',s.id===id);});
  }
  tabs.forEach(function(b){b.addEventListener('click',function(){
    show(b.dataset.target); if(location.hash!=='#'+b.dataset.target) history.pushState(null,'','#'+b.dataset.target);});});
  window.addEventListener('hashchange',function(){show((location.hash||'').slice(1));});
  window.addEventListener('popstate',function(){show((location.hash||'').slice(1));});
  show((location.hash||'').slice(1));
  function num(t){var x=parseFloat(String(t).replace(/[^0-9eE.+\\-]/g,'')); return isNaN(x)?null:x;}
  function cmp(a,b){ if(a[0]!==null&&b[0]!==null) return a[0]-b[0]; if(a[0]!==null) return -1; if(b[0]!==null) return 1;
    return a[1]<b[1]?-1:a[1]>b[1]?1:0; }
  /* sortable tables: click a column header (or the row-label header); delegated, so tables inserted
     later (an inflated transcript) sort too */
  function sortBy(th){
    var t=th.closest('table'), heads=all(t,'thead th.leaf, thead th.ix');
    var col=th.classList.contains('ix')?0:(+th.dataset.col+1), dir=th.getAttribute('aria-sort')==='ascending'?-1:1;
    heads.forEach(function(h){h.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',dir>0?'ascending':'descending');
    all(t,'tbody').forEach(function(tb){
      var rows=all(tb,'tr').filter(function(r){return !r.classList.contains('group');});
      rows.map(function(r,i){var c=r.children[col], txt=c?c.textContent:''; return [[col?num(txt):null, txt], r, i];})
        .sort(function(a,b){return dir*cmp(a[0],b[0])||a[2]-b[2];}).forEach(function(x){tb.appendChild(x[1]);});
    });
  }
  function sortable(ev){
    var th=ev.target.closest&&ev.target.closest('table.fa thead th.leaf, table.fa thead th.ix');
    if(!th) return;
    if(ev.type==='click') sortBy(th);
    else if(ev.key==='Enter'||ev.key===' '||ev.key==='Spacebar'){ev.preventDefault(); sortBy(th);}
  }
  d.addEventListener('click',sortable); d.addEventListener('keydown',sortable);
  /* table filters (metric, framework, opponent) of a section's tables */
  all(d,'.tfilter').forEach(function(bar){
    var sec=bar.closest('section')||d, sels=all(bar,'select');
    function ok(el){ return sels.every(function(s){ var v=el.getAttribute('data-f-'+s.dataset.dim); return !s.value||v===null||v===s.value; }); }
    function apply(){
      var shown=0;
      all(sec,'table.fa[data-dims]').forEach(function(t){
        var leaves=all(t,'thead th.leaf'), vis=leaves.map(ok);
        leaves.forEach(function(th,k){th.hidden=!vis[k];});
        all(t,'thead th.span').forEach(function(th){
          var a=+th.dataset.c0, n=+th.dataset.n, k=0; for(var i=a;i<a+n;i++) if(vis[i]) k++;
          th.hidden=k===0; if(k) th.colSpan=k;
        });
        var rowsShown=0;
        all(t,'tbody').forEach(function(tb){
          var any=false;
          all(tb,'tr').forEach(function(r){
            if(r.classList.contains('group')) return;
            var on=ok(r); r.hidden=!on; if(on){any=true; rowsShown++;}
            [].slice.call(r.children,1).forEach(function(c,k){c.hidden=!vis[k];});
          });
          all(tb,'tr.group').forEach(function(g){g.hidden=!any||!ok(g);});
        });
        var on=rowsShown>0&&vis.some(Boolean); t.hidden=!on; if(on) shown++;
      });
      bar.querySelector('.tf-count').textContent=shown+' tables shown';
    }
    sels.forEach(function(s){s.addEventListener('change',apply);}); apply();
  });
  /* drill-downs: text and tag filters, sorting, lazily inflated bodies */
  function inflate(b64){
    var bin=atob(b64), u=new Uint8Array(bin.length); for(var i=0;i<bin.length;i++) u[i]=bin.charCodeAt(i);
    return new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
  }
  all(d,'.drilldown').forEach(function(dd){
    var items=all(dd,'details.item'), list=dd.querySelector('.dd-items');
    var q=dd.querySelector('input.dd-filter'), sels=all(dd,'select.dd-tag'), sortSel=dd.querySelector('select.dd-sort');
    var count=dd.querySelector('.dd-count'), mkey=dd.querySelector('select.dd-mkey');
    var lo=dd.querySelector('input.dd-min'), hi=dd.querySelector('input.dd-max');
    function inRange(it){
      if(!mkey||!mkey.value) return true;
      var a=lo.value===''?null:+lo.value, b=hi.value===''?null:+hi.value;
      if(a===null&&b===null) return true;
      var x=it.getAttribute('data-v-'+mkey.value); if(x===null||x==='') return false; x=+x;
      return (a===null||x>=a)&&(b===null||x<=b);
    }
    items.forEach(function(it){
      it.addEventListener('toggle',function(){
        if(!it.open||!it.dataset.z) return;
        var z=it.dataset.z, body=it.querySelector('.body .lazy'); it.removeAttribute('data-z'); body.textContent='loading…';
        inflate(z).then(function(h){body.innerHTML=h; it.setAttribute('data-loaded','1');},
                        function(e){body.textContent='could not decompress: '+e;});
      });
    });
    function apply(){
      var text=(q.value||'').toLowerCase(), shown=0;
      items.forEach(function(it){
        var ok=it.dataset.search.indexOf(text)>=0&&inRange(it);
        sels.forEach(function(s){ if(s.value && it.getAttribute('data-t-'+s.dataset.tag)!==s.value) ok=false; });
        it.hidden=!ok; if(ok) shown++;
      });
      count.textContent=shown+' of '+items.length+' shown';
    }
    function sort(){
      var v=sortSel.value, key=v.slice(1), dir=v.charAt(0)==='-'?-1:1;
      items.map(function(it,i){var x=v?it.getAttribute('data-v-'+key):null; return [x===null||x===''?null:+x, i, it];})
        .sort(function(a,b){ if(a[0]===null||b[0]===null) return (a[0]===null)-(b[0]===null)||a[1]-b[1];
                             return dir*(a[0]-b[0])||a[1]-b[1]; })
        .forEach(function(x){list.appendChild(x[2]);});
    }
    q.addEventListener('input',apply); sels.forEach(function(s){s.addEventListener('change',apply);});
    if(mkey){mkey.addEventListener('change',apply); lo.addEventListener('input',apply); hi.addEventListener('input',apply);}
    if(sortSel) sortSel.addEventListener('change',sort);
    dd.querySelector('button.dd-open').addEventListener('click',function(){items.forEach(function(it){if(!it.hidden)it.open=true;});});
    dd.querySelector('button.dd-close').addEventListener('click',function(){items.forEach(function(it){it.open=false;});});
    apply();
  });
})();
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def _slug(s: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "section"
    slug, k = base, 2
    while slug in taken:
        slug, k = f"{base}-{k}", k + 1
    taken.add(slug)
    return slug


def _tag_key(name: str) -> str:
    """A tag name as a data-attribute suffix: ``data-t-<key>`` (HTML lower-cases attribute names)."""
    return re.sub(r"[^a-z0-9]", "", name.lower()) or "x"


class _Renderer:
    def __init__(self) -> None:
        self.n_fig = 0
        self.n_table = 0
        self.memo: dict[int, tuple[Block, str]] = {}    # compressed bodies' blocks shared by items (an instance)

    def lazy_block(self, b: Block) -> str:
        """A block of a compressed body: tables without ids (a body may be shown twice, e.g. the instance
        of two debates of one cohort), a block object shared by several items rendered once."""
        hit = self.memo.get(id(b))
        if hit is not None and hit[0] is b:
            return hit[1]
        out = f'<div class="block scroll">{to_html(b)}</div>' if isinstance(b, Table) else self.block(b)
        self.memo[id(b)] = (b, out)
        return out

    def pack(self, blocks: Sequence[Block]) -> Packed:
        """Blocks of a compressed body rendered (:meth:`lazy_block`), gzip-compressed and base64-encoded."""
        more = "".join(self.lazy_block(b) for b in blocks).encode("utf-8")
        return Packed(len(more), base64.b64encode(gzip.compress(more, compresslevel=6, mtime=0)).decode("ascii"))

    def block(self, b: Block) -> str:
        e = html.escape
        if isinstance(b, Table):
            self.n_table += 1
            return f'<div class="block scroll">{to_html(b, table_id=f"t{self.n_table}")}</div>'
        if isinstance(b, Text):
            paras = [p.strip() for p in re.split(r"\n\s*\n", b.text) if p.strip()]
            return '<div class="block">' + "".join(f"<p>{e(p)}</p>" for p in paras) + "</div>"
        if isinstance(b, FigureBlock):
            self.n_fig += 1
            prefix = f"fig{self.n_fig}-"
            svg = svg_of(b.figure, prefix=prefix) if isinstance(b.figure, Figure) else prefix_ids(b.figure, prefix)
            if b.alt:
                svg = svg.replace("<svg ", f'<svg aria-label="{e(b.alt)}" ', 1)
            cap = f"<figcaption>{e(b.caption)}</figcaption>" if b.caption else ""
            return f'<figure class="block">{svg}{cap}</figure>'
        if isinstance(b, KeyValues):
            head = f"<h3>{e(b.title)}</h3>" if b.title else ""
            rows = "".join(f"<dt>{e(str(k))}</dt><dd>{e(_fmt_value(v))}</dd>" for k, v in b.items.items())
            return f'<div class="block">{head}<dl class="kv">{rows}</dl></div>'
        if isinstance(b, Preformatted):
            head = f"<h3>{e(b.title)}</h3>" if b.title else ""
            return f'<div class="block">{head}<pre>{e(b.text)}</pre></div>'
        if isinstance(b, DrillDown):
            return self.drilldown(b)
        raise TypeError(f"not a report block: {type(b).__name__}")

    def drilldown(self, dd: DrillDown) -> str:
        e = html.escape
        out = ['<div class="block drilldown">']
        if dd.title:
            out.append(f"<h3>{e(dd.title)}</h3>")
        ctl = ['<div class="dd-controls"><input type="search" class="dd-filter" placeholder="filter…" '
               'aria-label="filter items">']
        for tag in dd.filters:
            values = sorted({str(it.tags[tag]) for it in dd.items if tag in it.tags}, key=_natural)
            opts = "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values)
            ctl.append(f'<select class="dd-tag" data-tag="{_tag_key(tag)}" aria-label="{e(tag)}">'
                       f'<option value="">any {e(tag)}</option>{opts}</select>')
        keys = list(dict.fromkeys(k for it in dd.items for k in it.values))
        if keys:
            opts = "".join(f'<option value="{sign}{_tag_key(k)}">{e(k)} {arrow}</option>'
                           for k in keys for sign, arrow in (("+", "ascending"), ("-", "descending")))
            ctl.append(f'<select class="dd-sort" aria-label="sort by"><option value="">study order</option>{opts}</select>')
            opts = "".join(f'<option value="{_tag_key(k)}">{e(k)}</option>' for k in keys)
            ctl.append(f'<select class="dd-mkey" aria-label="filter by a number"><option value="">any value of</option>'
                       f'{opts}</select><input type="number" step="any" class="dd-min" placeholder="min" '
                       'aria-label="at least"><input type="number" step="any" class="dd-max" placeholder="max" '
                       'aria-label="at most">')
        ctl.append('<button type="button" class="dd-open">expand all</button>'
                   '<button type="button" class="dd-close">collapse all</button>'
                   f'<span class="dd-count">{len(dd.items)} items</span>')
        body_parts = []
        raw = packed = n_lazy = 0
        for it in dd.items:
            tags = "".join(f' data-t-{_tag_key(k)}="{e(str(v))}"' for k, v in it.tags.items())
            tags += "".join(f' data-v-{_tag_key(k)}="{_num_attr(v)}"' for k, v in it.values.items())
            search = " ".join([it.title, it.summary, *map(str, it.tags.values())]).lower()
            chips = "".join(f'<span class="tag">{e(str(v))}</span>' for v in it.tags.values())
            body = "".join(self.block(b) for b in it.blocks)
            pk = it.packed if it.packed is not None else self.pack(it.lazy) if it.lazy else None
            if pk is not None:
                raw, packed, n_lazy = raw + pk.raw, packed + len(pk.z), n_lazy + 1
                tags += f' data-z="{pk.z}"'
                body += '<div class="lazy"><noscript>(compressed: shown with JavaScript)</noscript></div>'
            body_parts.append(f'<details class="item" data-search="{e(search)}"{tags}><summary><b>{e(it.title)}</b>'
                              f'<span class="sum">{e(it.summary)}</span>{chips}</summary><div class="body">{body}</div></details>')
        if n_lazy:
            ctl.append(f'<span class="dd-size">{n_lazy} bodies embedded gzip-compressed: {_mb(packed)} '
                       f'(uncompressed {_mb(raw)}), decompressed in the page when opened</span>')
        ctl.append("</div>")
        out.append("".join(ctl))
        out.append('<div class="dd-items">' + "".join(body_parts) + "</div></div>")
        return "".join(out)

    def filter_bar(self, blocks: Sequence[Block]) -> str:
        """Drop-down filters over the dimensions (metric, framework, opponent) of the section's tables."""
        e = html.escape
        dims: dict[str, list[str]] = {}
        for b in blocks:
            if isinstance(b, Table):
                for dim, values in table_dim_values(b).items():
                    dims.setdefault(dim, [])
                    dims[dim] += [v for v in values if v not in dims[dim]]
        if not dims:
            return ""
        sels = "".join(f'<select data-dim="{_tag_key(dim)}" aria-label="{e(dim)}"><option value="">any {e(dim)}</option>'
                       + "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values) + "</select>"
                       for dim, values in dims.items() if len(values) > 1)
        if not sels:
            return ""
        return (f'<div class="tfilter">{sels}<span class="tf-count"></span>'
                '<span class="tf-hint">click a column header to sort</span></div>')


class BodyPacker:
    """Renders and compresses items' ``lazy`` blocks ahead of the report (an :class:`Item`'s ``packed``),
    as :func:`render_html` would: the same bytes, and a block object shared by several items (a cohort's
    instance) rendered once."""

    def __init__(self) -> None:
        self._r = _Renderer()

    def pack(self, blocks: Sequence[Block]) -> Packed:
        return self._r.pack(blocks)


def _natural(v: str) -> tuple[Any, ...]:
    """Sort key: numbers by value ("2" before "10"), then text."""
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def _num_attr(v: Any) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return ""
    return repr(x) if math.isfinite(x) else ""


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _fmt_value(v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(v)


def render_html(report: Report) -> str:
    """The whole report as one HTML document (a string)."""
    e = html.escape
    r = _Renderer()
    taken: set[str] = set()
    ids = [_slug(s.title, taken) for s in report.sections]
    nav = "".join(f'<button type="button" role="tab" data-target="{i}">{e(s.title)}</button>'
                  for i, s in zip(ids, report.sections))
    secs = []
    for i, s in zip(ids, report.sections):
        body = r.filter_bar(s.blocks) + "".join(r.block(b) for b in s.blocks)
        secs.append(f'<section class="sec" id="{i}" role="tabpanel"><h2>{e(s.title)}</h2>{body}</section>')
    sub = f"<p>{e(report.subtitle)}</p>" if report.subtitle else ""
    foot = f"<footer>{e(report.footer)}</footer>" if report.footer else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(report.title)}</title><style>{_CSS}</style></head><body>"
            f'<header class="top"><h1>{e(report.title)}</h1>{sub}</header>'
            f'<nav class="tabs" role="tablist">{nav}</nav><main>{"".join(secs)}</main>{foot}'
            f"<script>{_JS}</script></body></html>\n")


def write_html(report: Report, path: str | os.PathLike[str]) -> Path:
    """Render and write atomically (a reader never sees a half-written report)."""
    return atomic_write_text(path, render_html(report))
