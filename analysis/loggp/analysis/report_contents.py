"""The report's contents: each section's heading gets an anchor, and a list of
links to them opens the page, so a reader (and the browser test) can reach every
section."""
import html
import re

HEADING = re.compile(r"<h2>(.*?)</h2>", re.S)


def anchor(title, taken):
    """A readable, unique id for a heading: "Sensitivity table" -> "sensitivity-table"."""
    text = re.sub(r"<[^>]+>", "", html.unescape(title))
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def add(sections):
    """(contents HTML, sections with an anchor before each <h2>)."""
    taken, entries, out = set(), [], []
    for section in sections:
        def named(m):
            ident = anchor(m.group(1), taken)
            entries.append((ident, m.group(1)))
            # an anchor before the heading: the heading itself stays as it was written
            return f"<a id='{ident}'></a><h2>{m.group(1)}</h2>"
        out.append(HEADING.sub(named, section))
    if not entries:
        return "", out
    links = "".join(f"<li><a href='#{ident}'>{title}</a></li>" for ident, title in entries)
    return f"<nav class='contents'><h2>Contents</h2><ul>{links}</ul></nav>", out
