"""Multi-label ARFF files (MULAN and MEKA layouts): where the labels are.

The reading is split in modules: :mod:`._arff_weka` (Weka's lexical rules, line by
line), :mod:`._arff_tokens` (the ARFF text decoded by liac-arff), :mod:`._arff_encode` (attributes to
the float64 feature matrix and the 0/1 label matrix) and this one (which
attributes are labels: a MULAN ``.xml`` file, or MEKA's ``-C q`` in the
``@relation`` name). Everything is re-exported here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import arff  # noqa: F401  (tests reach liac-arff's regexes through this module)
import numpy as np
from numpy.typing import NDArray

from ..utils._typing import IntArray
from ._arff_encode import NOMINAL_ENCODINGS, encode
from ._arff_errors import DatasetFormatError, unescape_name
from ._arff_tokens import ArffContents, _nominal_decl_ok, read_arff  # noqa: F401

__all__ = [
    "DatasetFormatError",
    "ArffContents",
    "NOMINAL_ENCODINGS",
    "read_arff",
    "read_mulan_xml",
    "find_mulan_xml",
    "meka_label_count",
    "label_indices_from_names",
    "label_indices_from_meka",
    "encode",
    "unescape_name",
    "arff_stem",
]


# --------------------------------------------------------------------------
# Where are the labels?
# --------------------------------------------------------------------------


def read_mulan_xml(path: str | os.PathLike[str]) -> list[str]:
    """Label names declared in a MULAN ``.xml`` file, in document order.

    The XML is parsed with defusedxml (entity expansion and external entities
    are refused). Hierarchical files (nested ``<label>``) are flattened.

    Raises
    ------
    DatasetFormatError
        If the XML is malformed, unsafe, or declares no label.
    """
    import xml.etree.ElementTree as ET

    import defusedxml
    import defusedxml.ElementTree as DET

    path = Path(path)
    try:
        root = DET.parse(str(path)).getroot()
        # A parsed document always has a root element (the stub allows None).
        assert root is not None
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise DatasetFormatError(f"malformed MULAN XML ({exc})", path=path, line=line) from exc
    except defusedxml.DefusedXmlException as exc:
        raise DatasetFormatError(f"unsafe MULAN XML refused ({exc!r})", path=path) from exc
    except (LookupError, ValueError) as exc:
        # An XML declaration naming an unknown encoding (encoding="klingon")
        # raised a bare LookupError from the parser.
        raise DatasetFormatError(f"malformed MULAN XML ({exc})", path=path, line=1) from exc
    names: list[str] = []
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
        if tag == "label":
            name = el.get("name")
            if name is None:
                raise DatasetFormatError("<label> element without a name attribute", path=path)
            names.append(name)
    if not names:
        raise DatasetFormatError("MULAN XML declares no <label name=...>", path=path)
    return names


_TRAIN_TEST_RE = re.compile(r"[-_](train|test)$", re.IGNORECASE)
_SPARSE_RE = re.compile(r"[-_]sparse$", re.IGNORECASE)


def arff_stem(path: str | os.PathLike[str]) -> str:
    """File name without ``.arff`` / ``.arff.gz`` (``Imdb.arff.gz`` -> ``Imdb``)."""
    name = Path(path).name
    for suffix in (".arff.gz", ".arff", ".gz"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def find_mulan_xml(path: str | os.PathLike[str]) -> Path | None:
    """The MULAN ``.xml`` file belonging to an ARFF file, or None.

    Candidates, in order: same stem; stem without ``-sparse``; stem without
    ``-train``/``-test``; both removed (``Corel5k-train-sparse.arff`` ->
    ``Corel5k.xml``).
    """
    path = Path(path)
    stem = arff_stem(path)
    candidates = [stem]
    no_sparse = _SPARSE_RE.sub("", stem)
    candidates.append(no_sparse)
    candidates.append(_TRAIN_TEST_RE.sub("", stem))
    candidates.append(_TRAIN_TEST_RE.sub("", no_sparse))
    seen: set[str] = set()
    for c in candidates:
        if c in seen:
            continue
        seen.add(c)
        xml = path.with_name(c + ".xml")
        if xml.is_file():
            return xml
    return None


_META_C_RE = re.compile(r"(?:^|[\s:'\"])-C\s+(-?\d+)")


def meka_label_count(relation: str) -> int | None:
    """MEKA's ``-C q`` from a relation name, or None if absent.

    ``'Yeast: -C 14 -split-number 1500'`` -> 14. q > 0: the labels are the
    first q attributes; q < 0: the last |q|.
    """
    m = _META_C_RE.search(relation)
    return int(m.group(1)) if m else None


def label_indices_from_names(
    contents: ArffContents,
    label_names: Iterable[str],
    xml_path: str | os.PathLike[str] | None = None,
) -> NDArray[np.int64]:
    """Attribute indices of the labels named in a MULAN XML, in ARFF order.

    Names are compared after removing backslash escapes on both sides. The
    returned order is the ARFF attribute order, not the XML order (they differ
    for yeast and enron): this keeps ``Y`` columns aligned with the files.
    """
    wanted = {unescape_name(n) for n in label_names}
    arff_names = [unescape_name(n) for n in contents.names]
    idx = [j for j, n in enumerate(arff_names) if n in wanted]
    missing = wanted - {arff_names[j] for j in idx}
    if missing:
        shown = ", ".join(repr(s) for s in sorted(missing)[:5])
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise DatasetFormatError(
            f"{len(missing)} label(s) named in {xml_path or 'the XML'} are not "
            f"attributes of the ARFF file: {shown}{more}",
            path=contents.path,
        )
    return np.asarray(idx, dtype=np.int64)


def label_indices_from_meka(contents: ArffContents, q: int) -> IntArray:
    """Attribute indices of the labels for MEKA's ``-C q``."""
    m = len(contents.names)
    if q == 0 or abs(q) >= m:
        raise DatasetFormatError(
            f"MEKA option -C {q} is invalid for a file with {m} attributes",
            path=contents.path,
        )
    return np.arange(q) if q > 0 else np.arange(m + q, m)
