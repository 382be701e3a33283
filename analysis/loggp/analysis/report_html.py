"""The study report page's HTML pieces: its style sheet, tables, embedded images and
numbers as the page shows them."""
import base64
import html

import numpy as np


CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f2f2f2}td:first-child{text-align:left}
img{max-width:100%;margin:.5em 0}.bad{background:#fde8e8}.meta td{text-align:left}
.note{color:#555;font-size:.9em}pre.note{white-space:pre-wrap}
"""


def fmt(v, digits=3):
    if v is None:
        return ""
    if isinstance(v, float):
        if v.is_integer() and abs(v) >= 1000 and abs(v) < 1e15:
            return f"{int(v):,}"          # counts: 23,302,912 reads better than 2.33e+07
        return f"{v:.{digits}g}"
    return str(v)


def interval_text(low, high, digits=3):
    """'[a, b]', or what an unbounded interval means."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "(too few runs for an interval)"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def html_img(png, alt):
    data = base64.b64encode(png).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def html_table(header, rows, cls=""):
    """An HTML table; header None gives none (a key/value table needs no row of empty cells)."""
    head = ("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>"
            if header else "")
    body = "".join("<tr>" + "".join(f"<td>{html.escape(fmt(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f'<table class="{cls}">{head}<tbody>{body}</tbody></table>'


def pct(fraction):
    return "" if fraction is None else f"{100 * fraction:.1f} %"
