"""The results database: SQLite, one row per cell x metric, resumable.

Schema (``sqlite3`` from the standard library)::

    meta(key PRIMARY KEY, value)
    folds(dataset, protocol, prefilter, repeat, fold, n_samples,
          train BLOB, test BLOB, checksum,
          UNIQUE(dataset, protocol, prefilter, repeat, fold))
    results(dataset, algorithm, params, preprocessing, search, protocol,
            repeat, fold, metric, value,
            fit_seconds, predict_seconds, search_seconds,
            n_train, n_test, n_features, n_labels, estimator, version, created,
            UNIQUE(dataset, algorithm, params, preprocessing, search, protocol,
                   repeat, fold, metric))
    warnings(dataset, algorithm, params, preprocessing, search, protocol,
             repeat, fold, stage, category, message, count,
             UNIQUE(dataset, algorithm, params, preprocessing, search, protocol,
                    repeat, fold, stage, category, message))

``params``, ``preprocessing``, ``search`` and ``protocol`` are canonical JSON
(sorted keys). ``train`` / ``test`` are the exact row indices of the fold,
stored as zlib-compressed bit masks (:func:`mlknn.model_selection.encode_indices`);
``prefilter`` records dataset-level preprocessing applied before splitting
(``"null"`` when none). ``value`` is NULL where the metric is undefined (NaN).

``warnings`` holds what a cell's steps raised (``stage``: ``preprocess`` and
``search``, shared by the cells of the fold, then ``fit``, ``predict`` and
``evaluate``), one row per distinct (category, message) with its ``count``;
see :meth:`ResultsDB.warnings`. No array of the data (no (n, q) label or score
matrix) is stored: only scalars per cell and the folds' index masks.

Crash safety: all rows of one fold are written in one transaction, so a
fold is either fully stored or absent; ``INSERT OR IGNORE`` against the
UNIQUE constraint makes writing the same cell twice a no-op. The database
runs in WAL mode with a busy timeout, so two processes can write to it at
the same time.
"""

import csv
import datetime as _dt
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from ..model_selection import Fold, decode_indices, encode_indices, indices_checksum

#: 2: the ``warnings`` table (added to a version-1 database when it is opened).
SCHEMA_VERSION = "2"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS folds (
    dataset TEXT NOT NULL, protocol TEXT NOT NULL, prefilter TEXT NOT NULL,
    repeat INTEGER NOT NULL, fold INTEGER NOT NULL, n_samples INTEGER NOT NULL,
    train BLOB NOT NULL, test BLOB NOT NULL, checksum TEXT NOT NULL,
    UNIQUE(dataset, protocol, prefilter, repeat, fold)
);
CREATE TABLE IF NOT EXISTS results (
    dataset TEXT NOT NULL, algorithm TEXT NOT NULL, params TEXT NOT NULL,
    preprocessing TEXT NOT NULL, search TEXT NOT NULL, protocol TEXT NOT NULL,
    repeat INTEGER NOT NULL, fold INTEGER NOT NULL, metric TEXT NOT NULL, value REAL,
    fit_seconds REAL, predict_seconds REAL, search_seconds REAL,
    n_train INTEGER, n_test INTEGER, n_features INTEGER, n_labels INTEGER,
    estimator TEXT, version TEXT, created TEXT,
    UNIQUE(dataset, algorithm, params, preprocessing, search, protocol, repeat, fold, metric)
);
CREATE INDEX IF NOT EXISTS results_cell ON results(dataset, algorithm, params, protocol);
CREATE TABLE IF NOT EXISTS warnings (
    dataset TEXT NOT NULL, algorithm TEXT NOT NULL, params TEXT NOT NULL,
    preprocessing TEXT NOT NULL, search TEXT NOT NULL, protocol TEXT NOT NULL,
    repeat INTEGER NOT NULL, fold INTEGER NOT NULL,
    stage TEXT NOT NULL, category TEXT NOT NULL, message TEXT NOT NULL, count INTEGER NOT NULL,
    UNIQUE(dataset, algorithm, params, preprocessing, search, protocol, repeat, fold, stage, category, message)
);
"""

#: Columns of ``results`` in order (also the CSV header of :meth:`ResultsDB.to_csv`).
RESULT_COLUMNS = (
    "dataset", "algorithm", "params", "preprocessing", "search", "protocol",
    "repeat", "fold", "metric", "value",
    "fit_seconds", "predict_seconds", "search_seconds",
    "n_train", "n_test", "n_features", "n_labels", "estimator", "version", "created",
)  # fmt: skip

#: The columns that identify one cell (one fitted model on one fold).
CELL_COLUMNS = ("dataset", "algorithm", "params", "preprocessing", "search", "protocol", "repeat", "fold")

#: Columns of ``warnings`` in order (what :meth:`ResultsDB.warnings` returns).
WARNING_COLUMNS = CELL_COLUMNS + ("stage", "category", "message", "count")


class FoldMismatchError(ValueError):
    """The folds stored in the database differ from the ones computed now."""


def _version() -> str:
    try:
        from .. import __version__

        return __version__
    except ImportError:  # pragma: no cover
        return "unknown"


class ResultsDB:
    """A results database file (created on first use).

    Parameters
    ----------
    path : str or path-like
        The SQLite database file; created with its tables if it does not exist.
    timeout : float, default=120
        Seconds to wait for another process's write lock (busy timeout).

    See Also
    --------
    run_experiment : Fills the database.
    mlknn.report.build_report : Reports on it.

    Examples
    --------
    >>> import os, tempfile
    >>> from mlknn.experiments import ResultsDB
    >>> with ResultsDB(os.path.join(tempfile.mkdtemp(), "results.db")) as db:
    ...     db.count(), db.rows()
    (0, [])
    """

    def __init__(self, path: str | os.PathLike[str], timeout: float = 120.0) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            raise FileNotFoundError(f"The folder of the results database {str(self.path)!r} does not exist.")
        self.conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        self.conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        self._switch_to_wal(timeout)
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self._begin()
        try:
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    self.conn.execute(stmt)
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            self.conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('created_by', ?)", (f"mlknn {_version()}",))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _switch_to_wal(self, timeout: float) -> None:
        # Switching a database to WAL takes an exclusive lock, and SQLite answers a switch
        # that meets another connection's lock with "database is locked" at once, without
        # calling the busy handler. Two runs that open one new database at the same moment
        # meet exactly that, so the switch is retried here for up to the busy timeout.
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def _begin(self) -> None:
        # IMMEDIATE takes the write lock at once (waiting up to the busy timeout),
        # so a transaction never fails half-way on a lock upgrade.
        self.conn.execute("BEGIN IMMEDIATE")

    def close(self) -> None:
        """Close the connection (also done on leaving a ``with`` block)."""
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, *exc: type[BaseException] | BaseException | TracebackType | None
    ) -> None:
        self.close()

    # ----------------------------------------------------------------- folds
    def record_folds(
        self, dataset: str, protocol: str, prefilter: str, folds: Iterable[Fold], n_samples: int
    ) -> None:
        """Store the folds of one dataset, or check them against the stored ones.

        Parameters
        ----------
        dataset : str
            The dataset name.
        protocol : str
            The protocol key (:meth:`ProtocolConfig.key`).
        prefilter : str
            Key of the dataset-level preprocessing applied before splitting.
        folds : iterable of Fold
            The splits.
        n_samples : int
            Rows of the dataset the indices refer to.

        Raises
        ------
        FoldMismatchError
            When a stored fold's indices differ (the data file, the dataset-level
            preprocessing or the splitter changed): its results would not be comparable.
        """
        rows = []
        for f in folds:
            rows.append(
                (dataset, protocol, prefilter, int(f.repeat), int(f.fold), int(n_samples),
                 encode_indices(f.train, n_samples), encode_indices(f.test, n_samples),
                 indices_checksum(f.train, f.test))
            )  # fmt: skip
        stored = {
            (r, f): (n, c)
            for r, f, n, c in self.conn.execute(
                "SELECT repeat, fold, n_samples, checksum FROM folds WHERE dataset=? AND protocol=? AND prefilter=?",
                (dataset, protocol, prefilter),
            )
        }
        for row in rows:
            old = stored.get((row[3], row[4]))
            if old is not None and old != (row[5], row[8]):
                raise FoldMismatchError(
                    f"The folds stored in {str(self.path)!r} for dataset {dataset!r} (repeat {row[3]}, fold "
                    f"{row[4]}) differ from the folds computed now: the data, the dataset-level "
                    "preprocessing or the splitter changed. Use a new database."
                )
        new = [row for row in rows if (row[3], row[4]) not in stored]
        if new:
            self._begin()
            try:
                self.conn.executemany("INSERT OR IGNORE INTO folds VALUES (?,?,?,?,?,?,?,?,?)", new)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def folds(self, dataset: str | None = None) -> list[dict[str, Any]]:
        """The stored folds: list of dicts with decoded ``train`` / ``test`` indices.

        Parameters
        ----------
        dataset : str, default=None
            Only this dataset's folds; None: all.

        Returns
        -------
        list of dict
            ``dataset``, ``protocol``, ``prefilter``, ``repeat``, ``fold``,
            ``n_samples``, ``train``, ``test`` (ndarrays of row indices), ``checksum``.
        """
        sql = "SELECT dataset, protocol, prefilter, repeat, fold, n_samples, train, test, checksum FROM folds"
        args: tuple[Any, ...] = ()
        if dataset is not None:
            sql += " WHERE dataset = ?"
            args = (dataset,)
        out = []
        for ds, proto, pre, r, f, n, tr, te, chk in self.conn.execute(sql + " ORDER BY dataset, protocol, repeat, fold", args):
            out.append(
                {"dataset": ds, "protocol": proto, "prefilter": pre, "repeat": r, "fold": f, "n_samples": n,
                 "train": decode_indices(tr, n), "test": decode_indices(te, n), "checksum": chk}
            )  # fmt: skip
        return out

    # --------------------------------------------------------------- results
    def done_cells(self, datasets: Iterable[str] | None = None) -> set[tuple[Any, ...]]:
        """Set of cell keys (tuples in :data:`CELL_COLUMNS` order) already stored.

        Parameters
        ----------
        datasets : iterable of str, default=None
            Only these datasets; None: all.

        Returns
        -------
        set of tuple
            One key per stored cell.
        """
        sql = f"SELECT DISTINCT {', '.join(CELL_COLUMNS)} FROM results"
        args: tuple[Any, ...] = ()
        if datasets is not None:
            datasets = list(datasets)
            sql += f" WHERE dataset IN ({','.join('?' * len(datasets))})"
            args = tuple(datasets)
        return set(self.conn.execute(sql, args))

    def write_cells(
        self, rows: Sequence[dict[str, Any]], warnings: Sequence[dict[str, Any]] = ()
    ) -> int:
        """Write the rows of one or more finished cells in ONE transaction.

        Parameters
        ----------
        rows : list of dict
            Keys from :data:`RESULT_COLUMNS` (``version`` and ``created`` are filled in).
        warnings : list of dict, optional
            The cells' warnings, keys from :data:`WARNING_COLUMNS`.

        Returns
        -------
        int
            Result rows actually inserted (duplicates are ignored).
        """
        if not rows and not warnings:
            return 0
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        version = _version()
        values = []
        for r in rows:
            r = dict(r)
            r.setdefault("version", version)
            r.setdefault("created", now)
            v = r.get("value")
            if v is not None and isinstance(v, float) and math.isnan(v):
                r["value"] = None
            values.append(tuple(r.get(c) for c in RESULT_COLUMNS))
        placeholders = ",".join("?" * len(RESULT_COLUMNS))
        self._begin()
        try:
            before = self.conn.total_changes
            self.conn.executemany(
                f"INSERT OR IGNORE INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({placeholders})", values
            )
            inserted = self.conn.total_changes - before
            if warnings:
                self.conn.executemany(
                    f"INSERT OR IGNORE INTO warnings ({', '.join(WARNING_COLUMNS)}) "
                    f"VALUES ({','.join('?' * len(WARNING_COLUMNS))})",
                    [tuple(w[c] for c in WARNING_COLUMNS) for w in warnings],
                )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return inserted

    def set_meta(self, key: str, value: str) -> None:
        """Store a text value under ``key`` in the ``meta`` table (replacing an older one).

        Parameters
        ----------
        key : str
            The name the value is stored under.
        value : str
            The text to store.
        """
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        """The text stored under ``key`` in the ``meta`` table, or None.

        Parameters
        ----------
        key : str
            The name the value was stored under.

        Returns
        -------
        str or None

        Examples
        --------
        >>> import tempfile, os
        >>> with ResultsDB(os.path.join(tempfile.mkdtemp(), "r.db")) as db:
        ...     db.set_meta("note", "first run")
        ...     db.get_meta("note"), db.get_meta("missing")
        ('first run', None)
        """
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def count(self) -> int:
        """Number of result rows (one per cell and metric).

        Returns
        -------
        int
            The row count of the ``results`` table.
        """
        return int(self.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def rows(self, where: str | None = None, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """All result rows as dicts (``value`` NaN where stored as NULL).

        Parameters
        ----------
        where : str, default=None
            An SQL condition on the columns of :data:`RESULT_COLUMNS`, with ``?``
            placeholders (e.g. ``"metric = ?"``).
        args : tuple, default=()
            The values of the placeholders.

        Returns
        -------
        list of dict
            One dict per row, keyed by :data:`RESULT_COLUMNS`, ordered by dataset,
            algorithm, parameters, protocol, repeat, fold and metric.
        """
        sql = f"SELECT {', '.join(RESULT_COLUMNS)} FROM results"
        if where:
            sql += " WHERE " + where
        sql += " ORDER BY dataset, algorithm, params, protocol, repeat, fold, metric"
        out = []
        for row in self.conn.execute(sql, args):
            d = dict(zip(RESULT_COLUMNS, row))
            if d["value"] is None:
                d["value"] = float("nan")
            out.append(d)
        return out

    def warnings(self, dataset: str | None = None, algorithm: str | None = None) -> list[dict[str, Any]]:
        """The warnings recorded with the cells (what fitting, predicting... raised).

        Parameters
        ----------
        dataset, algorithm : str, optional
            Only this dataset / algorithm name (as in the ``algorithm`` column).

        Returns
        -------
        list of dict
            Keys :data:`WARNING_COLUMNS`: the cell, ``stage`` (``preprocess``,
            ``search``, ``fit``, ``predict`` or ``evaluate``), ``category`` (the
            warning class with its module, e.g.
            ``sklearn.exceptions.ConvergenceWarning``), ``message`` and
            ``count`` (how many times the cell raised it). Ordered by cell,
            stage, category and message.

        Examples
        --------
        >>> import tempfile, os
        >>> with ResultsDB(os.path.join(tempfile.mkdtemp(), "r.db")) as db:
        ...     db.warnings()
        []
        """
        sql = f"SELECT {', '.join(WARNING_COLUMNS)} FROM warnings"
        where, args = [], []
        for col, value in (("dataset", dataset), ("algorithm", algorithm)):
            if value is not None:
                where.append(f"{col} = ?")
                args.append(value)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY dataset, algorithm, params, protocol, repeat, fold, stage, category, message"
        return [dict(zip(WARNING_COLUMNS, row)) for row in self.conn.execute(sql, args)]

    def wide_rows(self) -> list[dict[str, Any]]:
        """One dict per cell: its parameters and each measure in columns of their own.

        The long rows of :meth:`rows` (one per cell and metric, parameters as JSON)
        pivoted: ``dataset``, ``algorithm``, one key per estimator parameter (a name
        that clashes with another column gets the prefix ``param_``), the
        ``preprocessing``, ``search`` and ``protocol`` (canonical JSON), ``repeat``,
        ``fold``, the timings and sizes, then one key per metric (NaN where undefined).

        Returns
        -------
        list of dict
            Ordered as :meth:`rows`; every dict has the same keys (a parameter
            one algorithm lacks is None).

        See Also
        --------
        to_frame : The same as a pandas DataFrame.

        Examples
        --------
        >>> import tempfile, os
        >>> with ResultsDB(os.path.join(tempfile.mkdtemp(), "r.db")) as db:
        ...     db.wide_rows()
        []
        """
        fixed = ("dataset", "algorithm")
        tail = ("preprocessing", "search", "protocol", "repeat", "fold", "fit_seconds", "predict_seconds",
                "search_seconds", "n_train", "n_test", "n_features", "n_labels")
        cells: dict[tuple[Any, ...], dict[str, Any]] = {}
        param_names: dict[str, None] = {}
        metric_names: dict[str, None] = {}
        for row in self.rows():
            key = tuple(row[c] for c in CELL_COLUMNS)
            cell = cells.get(key)
            if cell is None:
                params = json.loads(row["params"])
                for name in params:
                    param_names.setdefault(name)
                cell = {**{c: row[c] for c in fixed + tail}, "_params": params}
                cells[key] = cell
            cell[row["metric"]] = row["value"]
            metric_names.setdefault(row["metric"])
        taken = set(fixed + tail) | set(metric_names)
        columns = {name: (f"param_{name}" if name in taken else name) for name in param_names}
        out = []
        for cell in cells.values():
            params = cell.pop("_params")
            wide = {c: cell[c] for c in fixed}
            wide.update({columns[name]: params.get(name) for name in param_names})
            wide.update({c: cell[c] for c in tail})
            wide.update({m: cell.get(m, float("nan")) for m in metric_names})
            out.append(wide)
        return out

    def to_frame(self) -> Any:
        """The results as a pandas DataFrame, one row per cell (needs pandas).

        Returns
        -------
        pandas.DataFrame
            The rows of :meth:`wide_rows`: the cell, a column per estimator
            parameter and a column per measure.

        Raises
        ------
        ImportError
            pandas is not installed (``pip install 'mlknn[pandas]'``).

        See Also
        --------
        wide_rows : The same rows as dicts, without pandas.
        rows : The long rows, one per cell and metric.

        Examples
        --------
        >>> import tempfile, os
        >>> with ResultsDB(os.path.join(tempfile.mkdtemp(), "r.db")) as db:  # doctest: +SKIP
        ...     frame = db.to_frame()
        ...     frame.groupby(["dataset", "algorithm", "n_neighbors"])["hamming_loss"].mean()
        """
        from ..utils._optional import check_optional_dependency

        pd = check_optional_dependency("pandas", "ResultsDB.to_frame()")
        return pd.DataFrame(self.wide_rows())

    def to_csv(self, path: str | os.PathLike[str]) -> int:
        """Export every result row to CSV (header :data:`RESULT_COLUMNS`). Returns the row count.

        Parameters
        ----------
        path : str or path-like
            The CSV file to write.

        Returns
        -------
        int
            The number of rows written.
        """
        n = 0
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(RESULT_COLUMNS)
            for row in self.conn.execute(
                f"SELECT {', '.join(RESULT_COLUMNS)} FROM results "
                "ORDER BY dataset, algorithm, params, protocol, repeat, fold, metric"
            ):
                w.writerow(["" if v is None else v for v in row])
                n += 1
        return n

