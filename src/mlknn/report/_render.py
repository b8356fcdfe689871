"""Rendering sections to Markdown and to one self-contained HTML file."""

import base64
import html
from collections.abc import Sequence

from ._model import Figure, Section, Table


def _md_table(t: Table) -> str:
    def cell(i: int, j: int, v: object) -> str:
        text = str(v).replace("|", "\\|")
        return f"**{text}**" if (i, j) in t.bold else text

    out = [f"**{t.title}**", "", "| " + " | ".join(t.header) + " |", "|" + "---|" * len(t.header)]
    for i, r in enumerate(t.rows):
        out.append("| " + " | ".join(cell(i, j, v) for j, v in enumerate(r)) + " |")
    if t.note:
        out += ["", f"_{t.note}_"]
    return "\n".join(out)


def _html_table(t: Table) -> str:
    cls = " class='wrap'" if t.wrap else ""
    parts = [f"<div class='tbl'><table{cls}><caption>{html.escape(t.title)}</caption><thead><tr>"]
    parts += [f"<th>{html.escape(str(h))}</th>" for h in t.header]
    parts.append("</tr></thead><tbody>")
    for i, r in enumerate(t.rows):
        parts.append("<tr>")
        for j, v in enumerate(r):
            tag = "th" if j == 0 else "td"
            text = html.escape(str(v))
            if (i, j) in t.bold:
                text = f"<b>{text}</b>"
            parts.append(f"<{tag}>{text}</{tag}>")
        parts.append("</tr>")
    parts.append("</tbody></table></div>")
    if t.note:
        parts.append(f'<p class="note">{html.escape(t.note)}</p>')
    return "".join(parts)


# Sized for a 1280-px window: the body is at most 1240 px wide, tables are split by
# columns (see _tables.split_columns), long messages wrap, images shrink to fit.
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em auto;max-width:1240px;color:#222;padding:0 16px;box-sizing:border-box}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:1.6em}h3{margin-top:1.4em}
.tbl{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:0.8em 0;font-size:12px}caption{font-weight:bold;text-align:left;padding:4px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}thead th{background:#f2f2f2}
tbody th{text-align:left;background:#fafafa}table.wrap td,table.wrap th{white-space:normal;text-align:left}
table.wrap td:last-child{min-width:320px}
p{max-width:1000px;line-height:1.45}p.note,p.legend{font-size:14px;color:#222}
figure{display:inline-block;margin:0.5em;vertical-align:top;max-width:100%}figcaption{font-size:14px;color:#222;max-width:640px;line-height:1.4;margin-top:4px}
img{max-width:100%;height:auto}code{background:#f4f4f4;padding:1px 3px;font-size:11px}
"""


def _inline_code(text: str) -> str:
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def render(
    sections: Sequence[Section], title: str, fig_dir_name: str = "figures"
) -> tuple[str, str, list[Figure]]:
    """(markdown, html, figures) of a list of sections."""
    md = [f"# {title}", ""]
    head = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>")  # fmt: skip
    ht = [head, f"<h1>{html.escape(title)}</h1>"]
    figures: list[Figure] = []
    for s in sections:
        md += ["#" * s.level + " " + s.title, ""]
        ht.append(f"<h{s.level}>{html.escape(s.title)}</h{s.level}>")
        for p in s.paragraphs:
            md += [p, ""]
            ht.append(f"<p>{_inline_code(p)}</p>")
        for it in s.items:
            if isinstance(it, Table):
                md += [_md_table(it), ""]
                ht.append(_html_table(it))
            elif isinstance(it, Figure):
                figures.append(it)
                md += [f"![{it.caption}]({fig_dir_name}/{it.name}.png)", "", f"_{it.caption}_", ""]
                b64 = base64.b64encode(it.png).decode("ascii")
                ht.append(
                    f"<figure><img alt='{html.escape(it.caption)}' src='data:image/png;base64,{b64}'>"
                    f"<figcaption>{html.escape(it.caption)}</figcaption></figure>"
                )
            else:
                md += [str(it), ""]
                ht.append(f"<p class='legend'>{_inline_code(str(it))}</p>")
    ht.append("</body></html>")
    return "\n".join(md) + "\n", "\n".join(ht) + "\n", figures
