"""Maths as MathML, made here (latex2mathml): pages that show formulas with no script and no network.

Used where no MathJax runs: the feedback pages (:mod:`.feedback`) and the decks' speaker notes, which
reveal.js copies as HTML into its speaker view (``slides/build.py``).
"""

from __future__ import annotations

import html
import re

__all__ = ["mathml", "with_mathml", "render_markdown"]

_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
# inline maths may run over a line break, never over a blank line (a new paragraph)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)((?:[^$\n]|\n(?![ \t]*\n))+?)(?<!\\)\$")
_CODE = re.compile(r"(`+)(.+?)\1", re.S)


def mathml(latex: str, display: bool = False) -> str:
    """``<math>...</math>`` for ``latex`` (a block for ``display``); maths it cannot convert stays
    readable as its source, in ``<code>``."""
    from latex2mathml.converter import convert

    try:
        out = convert(latex.strip(), display="block" if display else "inline")
        return out.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)  # HTML needs none
    except Exception:
        return f"<code>{html.escape(latex)}</code>"


def _replace_maths(text: str, keep: object) -> str:
    """``text`` with each ``$$...$$`` and ``$...$`` outside code spans made ``keep(latex, display)``."""
    pieces, last = [], 0
    for code in _CODE.finditer(text):  # code spans are left as they are: `$x` is code, not maths
        pieces.append(_INLINE.sub(lambda m: keep(m.group(1), False),
                                  _DISPLAY.sub(lambda m: keep(m.group(1), True), text[last:code.start()])))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(_INLINE.sub(lambda m: keep(m.group(1), False),
                              _DISPLAY.sub(lambda m: keep(m.group(1), True), text[last:])))
    return "".join(pieces)


def with_mathml(markdown: str) -> str:
    """``markdown`` with its maths written as MathML (display maths as a block on a line of its own),
    for a renderer that passes HTML through and runs no MathJax."""
    return _replace_maths(markdown, lambda latex, display: (f"\n\n{mathml(latex, True)}\n\n" if display
                                                             else mathml(latex)))


def render_markdown(text: str) -> str:
    """Markdown to HTML with ``$...$`` and ``$$...$$`` as MathML (no script needed to show it)."""
    import mistune

    maths: list[str] = []

    def keep(latex: str, display: bool) -> str:
        maths.append(mathml(latex, display))
        return f"MATHPLACEHOLDER{len(maths) - 1}X"

    out = mistune.html(_replace_maths(text, keep))
    return re.sub(r"MATHPLACEHOLDER(\d+)X", lambda m: maths[int(m.group(1))], out)
