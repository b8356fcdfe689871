"""The error of the dataset readers, and ARFF name unescaping (shared by the ARFF modules)."""

from __future__ import annotations

import os
import re

#: Longest message a DatasetFormatError carries: a malformed data row can be very long,
#: and the message is meant to be read on one terminal line or two.
MAX_MESSAGE = 400


class DatasetFormatError(ValueError):
    """A dataset file (ARFF, MULAN XML, gzip or MANIFEST) is malformed.

    A subclass of :class:`ValueError`. The message names the offending file
    and, where the parser knows it, the 1-based line number; the text after
    them is cut at :data:`MAX_MESSAGE` characters (a quoted data row can be
    thousands of characters long).

    Parameters
    ----------
    message : str
        What is wrong.
    path : str or path-like, default=None
        The file that could not be read.
    line : int, default=None
        1-based line number of the problem, when known.

    Attributes
    ----------
    path : str or None
        The file that could not be read.
    line : int or None
        1-based line number of the problem, when known.
    """

    def __init__(
        self,
        message: object,
        *,
        path: str | os.PathLike[str] | None = None,
        line: int | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        message = str(message)
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 5].rstrip() + " [...]"
        super().__init__(where + message)


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------

_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)


def unescape_name(name: str) -> str:
    r"""Remove ARFF backslash escapes from an attribute or label name.

    ``TAG_m\'usica`` becomes ``TAG_m'usica``. MULAN's XML files are not
    consistent about escaping (delicious keeps ``TAG_m\'usica`` while other
    files would write ``TAG_m'usica``), so names are compared after this
    normalisation on both sides. liac-arff strips the surrounding quotes of a
    name but leaves escapes in place, hence this extra step.
    """
    return _ESCAPE_RE.sub(r"\1", name)

