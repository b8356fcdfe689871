"""Weka's lexical rules for ARFF text, where liac-arff is stricter (applied line by line).

``weka.core.converters.ArffLoader.ArffReader.initTokenizer`` reads ARFF with a
``java.io.StreamTokenizer``. These helpers rewrite a line into the form liac-arff
accepts, or refuse a header line with a precise message.
"""

from __future__ import annotations

import re
from pathlib import Path

from ._arff_errors import DatasetFormatError

# ---- Weka's lexical rules (weka.core.converters.ArffLoader.ArffReader.initTokenizer):
# a java.io.StreamTokenizer where '%' starts a comment anywhere outside quotes, ' and "
# quote (backslash escapes inside), ',' and every control character are whitespace,
# '{' and '}' are tokens of their own (no space needed around them), and keywords
# compare case-insensitively. liac-arff is stricter on four points, normalised here.
_HEADER_KEYWORDS = ("@relation", "@attribute", "@data", "@end")
_KEYWORD_WS_RE = re.compile(r"^(\s*@[A-Za-z]+)[ \t\f\v]+")
_ATTR_BRACE_RE = re.compile(r"^(\s*@[Aa][Tt][Tt][Rr][Ii][Bb][Uu][Tt][Ee] +[^\s{'\"]+)\{")
_DATA_KEYWORD_RE = re.compile(r"^\s*@[Dd][Aa][Tt][Aa](?=\s|$)")


def _strip_comment(line: str) -> str:
    """``line`` without a ``%`` comment that starts outside quotes (Weka's rule).

    liac-arff only skips lines that *begin* with ``%``: a MEKA header such as
    ``@relation 'Slashdot: -C 22' %50`` or a data row ending in ``% note`` was
    refused. Quotes are ``'`` and ``"``; a backslash escapes the next character.
    """
    if "%" not in line:
        return line
    quote: str | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if quote is None:
            if c == "%":
                return line[:i].rstrip() + "\n"
            if c in "'\"":
                quote = c
        elif c == quote:
            quote = None
        i += 1
    return line


def _normalise_header_line(line: str) -> str:
    """A header line in the form liac-arff reads (keyword spacing, ``name{a,b}``)."""
    # '@attribute\tname\tnumeric': liac-arff splits the keyword off at one space.
    line = _KEYWORD_WS_RE.sub(r"\1 ", line, count=1)
    # '@attribute colour{red,green}': Weka's '{' ends the name by itself.
    return _ATTR_BRACE_RE.sub(r"\1 {", line, count=1)


def _check_header_keyword(s: str, path: Path, lineno: int) -> None:
    """Refuse a header line that is not a declaration, at that line.

    liac-arff skipped an unknown ``@atribute`` line and failed much later, at
    the first data row, with a message quoting the row: this names the line,
    the keyword it found and the ones it expects.
    """
    import difflib

    word = s.split(None, 1)[0]
    if word.lower() in _HEADER_KEYWORDS:
        return
    if word.startswith("@"):
        close = difflib.get_close_matches(word.lower(), _HEADER_KEYWORDS, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        what = f"unknown header keyword {word[:40]!r}{hint}"
    else:
        what = f"{s[:40]!r} in the header"
    raise DatasetFormatError(
        f"{what}: a header line must be an @relation, @attribute or @data declaration "
        "(or a % comment)",
        path=path,
        line=lineno,
    )
