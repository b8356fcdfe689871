"""Reading one ARFF file into X / Y: :func:`load_arff` and the file reader behind :func:`load`."""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Literal, TypeAlias, overload

import numpy as np
from numpy.typing import NDArray
from sklearn.utils import Bunch

from ..utils._typing import MatrixLike
from . import _arff
from ._arff import DatasetFormatError
from ._arff_encode import NominalEncoding

_StrPath: TypeAlias = str | PathLike[str]
#: What :func:`_read_file` returns: X, Y, feature names, label names, files read, format.
_FileData: TypeAlias = tuple[MatrixLike, NDArray[np.uint8], list[str], list[str], list[str], str]


def _read_file(
    path: _StrPath,
    *,
    xml: _StrPath | None = None,
    meka_c: int | None = None,
    fmt: str | None = None,
    nominal: NominalEncoding = "weka",
) -> _FileData:
    """Decode one ARFF file and split it into X / Y.

    ``fmt='mulan'`` requires an XML (found beside the file if ``xml`` is
    None); ``fmt='meka'`` uses ``-C``; ``fmt=None`` prefers an XML beside the
    file and falls back to ``-C``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ARFF file {str(path)!r} not found")
    if xml is None and fmt != "meka" and meka_c is None:
        xml = _arff.find_mulan_xml(path)
    contents = _arff.read_arff(path)
    sources = [str(path)]
    if meka_c is not None:
        label_idx = _arff.label_indices_from_meka(contents, int(meka_c))
        fmt = "meka"
    elif xml is not None:
        names = _arff.read_mulan_xml(xml)
        label_idx = _arff.label_indices_from_names(contents, names, xml_path=xml)
        sources.append(str(xml))
        fmt = "mulan"
    elif fmt == "mulan":
        raise DatasetFormatError(
            "MULAN file without its .xml label file (looked for "
            f"{_arff.arff_stem(path)}.xml and the stem without -train/-test/-sparse)",
            path=path,
        )
    else:
        q = _arff.meka_label_count(contents.relation)
        if q is None:
            raise DatasetFormatError(
                "cannot tell which attributes are labels: no MULAN .xml beside the "
                "file and no MEKA '-C q' in the @relation name "
                f"({contents.relation!r})",
                path=path,
            )
        label_idx = _arff.label_indices_from_meka(contents, q)
        fmt = "meka"
    X, Y, feature_names, label_names = _arff.encode(contents, label_idx, nominal=nominal)
    return X, Y, feature_names, label_names, sources, fmt


@overload
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = ...,
    n_labels: int | None = ...,
    nominal: NominalEncoding = ...,
    return_X_y: Literal[False] = ...,
) -> Bunch: ...
@overload
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = ...,
    n_labels: int | None = ...,
    nominal: NominalEncoding = ...,
    return_X_y: Literal[True],
) -> tuple[MatrixLike, NDArray[np.uint8]]: ...
@overload
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = ...,
    n_labels: int | None = ...,
    nominal: NominalEncoding = ...,
    return_X_y: bool = ...,
) -> Bunch | tuple[MatrixLike, NDArray[np.uint8]]: ...
def load_arff(
    path: _StrPath,
    *,
    xml: _StrPath | None = None,
    n_labels: int | None = None,
    nominal: NominalEncoding = "weka",
    return_X_y: bool = False,
) -> Bunch | tuple[MatrixLike, NDArray[np.uint8]]:
    """Load one multi-label ARFF file (dense or sparse, plain or gzip).

    Parameters
    ----------
    path : str or path-like
        ``.arff`` or ``.arff.gz`` file.
    xml : str or path-like, default=None
        MULAN label file. When None (and ``n_labels`` is None) the ``.xml``
        beside the file is used if there is one: same stem, else the stem
        without ``-sparse`` and/or ``-train``/``-test``
        (``Corel5k-train-sparse.arff`` -> ``Corel5k.xml``).
    n_labels : int, default=None
        MEKA-style label count overriding the file: q > 0 takes the first q
        attributes as labels, q < 0 the last ``|q|``. When None and no XML is
        found, MEKA's ``-C q`` in the ``@relation`` name is used.
    nominal : {"weka", "onehot"}, default="weka"
        Encoding of nominal features with three or more values, as in
        :func:`load`.
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        See :func:`load`. ``name`` is the file stem (``emotions-train``).
    (X, Y) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    DatasetFormatError
        Malformed ARFF / gzip / XML (the message names the file and line), or
        no way to tell which attributes are labels.

    See Also
    --------
    load : Load a dataset of the manifest by name (or a file by path).
    list_datasets : The datasets of ``MANIFEST.tsv``.

    References
    ----------
    G. Tsoumakas, E. Spyromitros-Xioufis, J. Vilcek and I. Vlahavas, "Mulan: A
    Java Library for Multi-Label Learning", Journal of Machine Learning Research
    12, 2011 (the ARFF + XML format).

    J. Read, P. Reutemann, B. Pfahringer and G. Holmes, "MEKA: A Multi-label/
    Multi-target Extension to WEKA", Journal of Machine Learning Research 17,
    2016 (the ``-C q`` relation name).

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.datasets import load_arff
    >>> text = '''@relation toy
    ... @attribute x0 numeric
    ... @attribute x1 numeric
    ... @attribute y0 {0,1}
    ... @attribute y1 {0,1}
    ... @data
    ... 0.5,1.0,1,0
    ... 0.1,0.2,0,1
    ... 0.9,0.4,1,1
    ... '''
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.arff")
    >>> with open(path, "w") as f:
    ...     _ = f.write(text)
    >>> data = load_arff(path, n_labels=-2)
    >>> data.X.shape, data.Y.tolist(), data.label_names
    ((3, 2), [[1, 0], [0, 1], [1, 1]], ['y0', 'y1'])
    """
    if xml is not None and n_labels is not None:
        raise ValueError("pass at most one of xml and n_labels")
    _check_format(path)
    X, Y, fn, ln, sources, fmt = _read_file(path, xml=xml, meka_c=n_labels, nominal=nominal)
    if return_X_y:
        return X, Y
    return Bunch(
        X=X,
        Y=Y,
        feature_names=fn,
        label_names=ln,
        name=_arff.arff_stem(path),
        source=sources,
        format=fmt,
        split=None,
    )


#: The file formats :func:`load` reads, for messages.
READ_FORMATS = (
    "ARFF files (.arff, or gzip-compressed .arff.gz), in the MULAN or MEKA layout, and "
    "Extreme Classification Repository / LIBSVM multi-label text files (.txt, .svm, .libsvm, "
    "optionally .gz), and CSV / TSV tables with a header row (.csv, .tsv, optionally .gz; the label "
    "columns given by labels=)"
)


def _check_format(path: _StrPath) -> None:
    """Refuse a file that is not ARFF, naming the formats that are read."""
    low = Path(path).name.lower()
    if low.endswith((".arff", ".arff.gz")) or (low.endswith(".gz") and not low.endswith((".csv.gz", ".txt.gz"))):
        return
    suffix = "".join(Path(path).suffixes) or "no extension"
    raise ValueError(
        f"Cannot read {str(path)!r} ({suffix}): mlknn.datasets reads {READ_FORMATS}. "
        "Convert the file to one of them, or build X and Y yourself (numpy / scipy.sparse)."
    )
