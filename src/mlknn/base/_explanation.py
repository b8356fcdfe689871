"""``Explanation``: why a kNN estimator scored each label as it did, as arrays.

What ``est.explain(X)`` returns (see :meth:`~mlknn.base.KNNMultiLabelBase.explain`):
the neighbours of each query (exactly ``kneighbors``), what the estimator counted
per label (the *evidence*), the terms that turn the evidence into the posterior
(named arrays, each with a description and its axes), the posterior itself and
the decision. ``summary(i)`` renders one instance as text; ``to_frame()`` gives a
long pandas table (pandas optional).

**Sparse labels.** An estimator fitted on a sparse Y (``sparse_labels_``) never
builds an (n, q) dense array here: ``evidence``, ``proba``, ``decision`` and the
(instance, label) terms are canonical ``csr_array`` sharing the evidence's
sparsity pattern (the labels some neighbour carries), and ``at_zero[name]``
(broadcastable to (n, q): one value per label, or per instance) is the value of
that field at every label a row does not store, i.e. at evidence 0. A row's dense
form is then ``at_zero`` with the stored entries written over it
(:meth:`Explanation.row`), O(q) for one row.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils._optional import check_optional_dependency
from ..utils._typing import LabelMatrix, MatrixLike, NDArray

#: The axis names a term may have; a term's shape is read from its axes, never guessed.
AXES = ("instance", "label", "neighbour", "input")


@dataclasses.dataclass(frozen=True)
class Term:
    """One named array of an explanation, what it means and its axes.

    Parameters
    ----------
    value : ndarray or csr_array
        The array; a sparse (instance, label) term shares the evidence's pattern.
    description : str
        One sentence: what the value is, in the paper's notation.
    axes : tuple of str
        Its axes among ``"instance"`` (n queries), ``"label"`` (q), ``"neighbour"``
        (k) and ``"input"`` (a model's inputs), e.g. ``("instance", "label")``.

    See Also
    --------
    Explanation : Holds the terms of one ``explain`` call.

    Examples
    --------
    >>> import numpy as np
    >>> from mlknn.base import Term
    >>> Term(np.array([0.2, 0.5]), "P(H_1^l), the prior", ("label",)).axes
    ('label',)
    """

    value: Any
    description: str
    axes: tuple[str, ...]

    def __post_init__(self) -> None:
        bad = [a for a in self.axes if a not in AXES]
        if bad or len(self.axes) != np.ndim(self.value) and not sp.issparse(self.value):
            raise ValueError(f"Term axes {self.axes} must be among {AXES} and match the value's "
                             f"{np.ndim(self.value)} dimensions.")


@dataclasses.dataclass(frozen=True, eq=False)
class Explanation:
    """The neighbours, evidence and posterior terms behind a kNN estimator's scores.

    Returned by ``est.explain(X)`` on every kNN estimator of mlknn; ``proba`` is
    ``predict_proba(X)`` (to the last bit for a dense Y: the same kernels compute
    both), ``decision`` is ``predict(X)``, and each ``terms`` entry is a step of the
    paper's equations between the evidence and the posterior (its ``description``
    says which).

    Parameters
    ----------
    estimator : str
        The estimator's class name and reading (e.g. ``"MLkNN(variant='paper')"``).
    indices : ndarray of shape (n, k), int
        Training indices of each query's neighbours, nearest first (``kneighbors``).
    distances : ndarray of shape (n, k), float64
        Their distances in the metric's units (``kneighbors``).
    evidence : ndarray or csr_array of shape (n, q)
        What the estimator counted per label (see ``evidence_description``).
    evidence_description : str
        In words, what ``evidence`` counts (for ML-kNN: the neighbours that
        carry each label); the text table of :meth:`summary` prints it.
    proba : ndarray or csr_array of shape (n, q)
        The posterior (``predict_proba``).
    decision : ndarray or csr_array of shape (n, q), uint8
        The 0/1 decision (``predict``).
    terms : dict of str to Term
        The named arrays that turn the evidence into the posterior.
    train_labels : ndarray or csr_array of shape (n_train, q), or None
        The training label matrix the neighbours' labels come from (a reference to
        the fitted estimator's, not a copy); None if the estimator kept none.
    at_zero : dict of str to ndarray
        Sparse explanations only: for ``"evidence"``, ``"proba"``, ``"decision"``
        and each sparse term, the value at a label a row does not store,
        broadcastable to (n, q). Empty when the arrays are dense.
    label_names : sequence of str, optional
        Names of the q labels, shown by :meth:`summary` (e.g. a dataset's
        ``label_names``); None: label indices.

    Attributes
    ----------
    n_samples : int
    n_labels : int
    sparse : bool
        Whether the (n, q) fields are CSR (an estimator fitted on sparse labels).

    See Also
    --------
    mlknn.MLkNN.explain : How an explanation is made (every kNN estimator has it).

    Examples
    --------
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> data = make_multilabel(n_samples=100, n_labels=4, random_state=0)
    >>> clf = MLkNN(n_neighbors=5).fit(data.X, data.Y)
    >>> ex = clf.explain(data.X[:3])
    >>> ex.indices.shape, ex.evidence.shape, sorted(ex.terms)
    ((3, 5), (3, 4), ['likelihood_false', 'likelihood_true', 'prior'])
    >>> print(ex.summary(0, top=2))  # doctest: +ELLIPSIS
    MLkNN(variant='paper'), instance 0
    ...
    """

    estimator: str
    indices: NDArray[Any]
    distances: NDArray[Any]
    evidence: MatrixLike
    evidence_description: str
    proba: MatrixLike
    decision: MatrixLike
    terms: dict[str, Term]
    train_labels: LabelMatrix | None
    at_zero: dict[str, NDArray[Any]] = dataclasses.field(default_factory=dict)
    label_names: Sequence[str] | None = None

    @property
    def n_samples(self) -> int:
        return int(self.indices.shape[0])

    @property
    def n_labels(self) -> int:
        return int(self.evidence.shape[1])

    @property
    def sparse(self) -> bool:
        return bool(sp.issparse(self.evidence))

    # ----------------------------------------------------------- access
    def _field(self, name: str) -> tuple[Any, tuple[str, ...]]:
        if name in ("evidence", "proba", "decision"):
            return getattr(self, name), ("instance", "label")
        if name in self.terms:
            return self.terms[name].value, self.terms[name].axes
        raise KeyError(f"An Explanation has no field or term {name!r}; terms: {sorted(self.terms)}.")

    def row(self, name: str, i: int) -> NDArray[Any]:
        """The (q,) values of a per-label field or term at instance ``i``.

        Dense whatever the storage: a sparse field's row is its ``at_zero`` value
        with the stored entries written over it (O(q) for the row).

        Parameters
        ----------
        name : str
            ``"evidence"``, ``"proba"``, ``"decision"`` or a term with a label axis
            (a ``("label",)`` term is the same for every instance).
        i : int
            Instance (row of the explained X).

        Returns
        -------
        ndarray of shape (n_labels,)
        """
        value, axes = self._field(name)
        if axes == ("label",):
            return np.asarray(value)
        if axes != ("instance", "label"):
            raise ValueError(f"Term {name!r} has axes {axes}, not a per-label value.")
        if not sp.issparse(value):
            return np.asarray(value[i])
        zero = np.broadcast_to(self.at_zero[name], (self.n_samples, self.n_labels))[i]
        out = np.array(zero, dtype=np.result_type(value.dtype, zero.dtype))
        start, stop = value.indptr[i], value.indptr[i + 1]
        out[value.indices[start:stop]] = value.data[start:stop]
        return out

    def neighbour_labels(self, i: int) -> list[NDArray[np.intp]]:
        """The label indices of each neighbour of instance ``i``, nearest first.

        Parameters
        ----------
        i : int
            Row of the explained instances (0 to ``n - 1``).

        Returns
        -------
        list of ndarray
            One array of label indices per neighbour.
        """
        if self.train_labels is None:  # a model saved before explanations existed
            return [np.empty(0, dtype=np.intp) for _ in self.indices[i]]
        rows = self.train_labels[self.indices[i]]
        if sp.issparse(rows):
            rows = sp.csr_array(rows)
            return [rows.indices[rows.indptr[j]:rows.indptr[j + 1]].astype(np.intp) for j in range(rows.shape[0])]
        return [np.flatnonzero(r) for r in np.asarray(rows)]

    def _label_name(self, label: int, names: Sequence[str] | None) -> str:
        return str(names[label]) if names is not None else str(label)

    # ---------------------------------------------------------- summary
    def summary_rows(
        self, i: int, top: int = 5, label_names: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """The content of :meth:`summary` as rows, for a caller that renders its own table.

        Parameters
        ----------
        i : int
            Instance (row of the explained X).
        top : int, default=5
            Labels shown: the ``top`` of highest posterior (ties by lower index),
            plus every decided label beyond them.
        label_names : sequence of str, optional
            Overrides ``self.label_names``.

        Returns
        -------
        dict
            ``"labels"``: list of dicts (label, name, proba, evidence, decision and
            each per-label term); ``"neighbours"``: list of dicts (rank, index,
            distance, labels and each per-neighbour term); ``"instance"``: the
            per-instance terms.
        """
        if not 0 <= int(i) < self.n_samples:
            raise ValueError(f"The 'i' parameter of Explanation.summary must be in [0, {self.n_samples - 1}]. "
                             f"Got {i!r} instead.")
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
            raise ValueError(f"The 'top' parameter of Explanation.summary must be an int >= 1. Got {top!r}.")
        i = int(i)
        names = self.label_names if label_names is None else label_names
        proba, decision = self.row("proba", i), self.row("decision", i)
        order = np.lexsort((np.arange(self.n_labels), -proba))
        shown = np.union1d(order[: int(top)], np.flatnonzero(decision))
        rank = np.empty(self.n_labels, dtype=np.intp)
        rank[order] = np.arange(self.n_labels)
        shown = shown[np.argsort(rank[shown])]  # by decreasing posterior
        per_label = [n for n, t in self.terms.items() if t.axes in (("instance", "label"), ("label",))]
        columns = {name: self.row(name, i) for name in ["evidence", *per_label]}
        labels = [
            {"label": int(lab), "name": self._label_name(int(lab), names), "proba": float(proba[lab]),
             **{name: columns[name][lab].item() for name in columns}, "decision": int(decision[lab])}
            for lab in shown
        ]
        per_neighbour = [n for n, t in self.terms.items() if t.axes == ("instance", "neighbour")]
        neighbours = [
            {"rank": j + 1, "index": int(self.indices[i, j]), "distance": float(self.distances[i, j]),
             "labels": [self._label_name(int(lab), names) for lab in labs],
             **{name: float(self.terms[name].value[i, j]) for name in per_neighbour}}
            for j, labs in enumerate(self.neighbour_labels(i))
        ]
        instance = {n: np.asarray(t.value[i]).item() for n, t in self.terms.items() if t.axes == ("instance",)}
        return {"labels": labels, "neighbours": neighbours, "instance": instance}

    def summary(self, i: int, top: int = 5, label_names: Sequence[str] | None = None) -> str:
        """One instance as text: its top labels and its neighbours.

        The label table lists the ``top`` labels of highest posterior (and every
        decided label beyond them) with the posterior, the evidence, the decision
        and the per-label terms; the neighbour table each neighbour's training
        index, distance and labels (and per-neighbour terms such as weights).

        Parameters
        ----------
        i : int
            Instance (row of the explained X).
        top : int, default=5
            Labels shown beside the decided ones.
        label_names : sequence of str, optional
            Overrides ``self.label_names``.

        Returns
        -------
        str
        """
        rows = self.summary_rows(i, top, label_names)
        lines = [f"{self.estimator}, instance {int(i)}"]
        lines += [f"  {name} = {_fmt(value)}" for name, value in rows["instance"].items()]
        lines += ["", f"Labels (evidence: {self.evidence_description})"]
        lines += _text_table(rows["labels"], exclude=("label",))
        lines += ["", "Neighbours"]
        lines += _text_table(
            [{**r, "labels": ", ".join(r["labels"]) or "-"} for r in rows["neighbours"]], exclude=()
        )
        return "\n".join(lines)

    def term_descriptions(self) -> dict[str, str]:
        """What each term is (its description, by name).

        Returns
        -------
        dict of str to str
        """
        return {name: term.description for name, term in self.terms.items()}

    # ------------------------------------------------------------ pandas
    def to_frame(self, label_names: Sequence[str] | None = None) -> Any:
        """A long pandas DataFrame: one row per (instance, label).

        Columns ``instance``, ``label``, ``name``, ``evidence``, ``proba``,
        ``decision`` and every per-label term. Dense explanations give n x q rows;
        sparse ones only the stored (instance, label) entries (the labels some
        neighbour carries; the others are at their ``at_zero`` value).

        Parameters
        ----------
        label_names : sequence of str, optional
            Overrides ``self.label_names``.

        Returns
        -------
        pandas.DataFrame
        """
        pd = check_optional_dependency("pandas", "Explanation.to_frame")
        names = self.label_names if label_names is None else label_names
        per_label = [n for n, t in self.terms.items() if t.axes in (("instance", "label"), ("label",))]
        if self.sparse:
            ev = sp.csr_array(self.evidence)
            rows = np.repeat(np.arange(self.n_samples), np.diff(ev.indptr))
            labels = ev.indices.astype(np.intp)

            def values(name: str) -> NDArray[Any]:
                value, axes = self._field(name)
                if axes == ("label",):
                    picked: NDArray[Any] = np.asarray(value)[labels]
                    return picked
                # The evidence's stored entries (a decision's CSR has its own pattern, 0 elsewhere).
                return np.asarray(sp.csr_array(value)[rows, labels]).ravel()
        else:
            rows, labels = (a.ravel() for a in np.indices((self.n_samples, self.n_labels)))

            def values(name: str) -> NDArray[Any]:
                value, axes = self._field(name)
                return np.asarray(np.broadcast_to(value, (self.n_samples, self.n_labels))).ravel()

        data: dict[str, Any] = {"instance": rows, "label": labels}
        if names is not None:
            data["name"] = np.asarray(names, dtype=object)[labels]
        for name in ["evidence", "proba", "decision", *per_label]:
            data[name] = values(name)
        return pd.DataFrame(data)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _text_table(rows: list[Mapping[str, Any]], exclude: Sequence[str]) -> list[str]:
    """Rows of dicts as an aligned plain-text table (header, rule, rows)."""
    if not rows:
        return ["  (none)"]
    keys = [k for k in rows[0] if k not in exclude]
    cells = [[_fmt(r[k]) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[j]) for c in cells)) for j, k in enumerate(keys)]
    line = "  " + "  ".join(k.ljust(w) for k, w in zip(keys, widths, strict=True))
    rule = "  " + "  ".join("-" * w for w in widths)
    return [line, rule, *("  " + "  ".join(c.ljust(w) for c, w in zip(cs, widths, strict=True)) for cs in cells)]
