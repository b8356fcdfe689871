"""Experiment grids on a Dask cluster: fold tasks on the workers, results written here.

:func:`mlknn.experiments.run_experiment` plans the grid (the missing cells of
every fold), and hands each dataset's fold tasks to an *executor*. The interface
is one method::

    executor.run_folds(fn, tasks, X, Y)  ->  iterator of fn(task, X, Y)

yielding one result per task, each exactly once, in any order. :class:`DaskExecutor`
implements it with a Dask client: ``X`` and ``Y`` are scattered to every worker
once per dataset, each fold task is one Dask task (``retries=``), and results are
yielded as they finish (``as_completed``), so the harness writes each finished fold
into the SQLite database at once, in this process only. The resumability
guarantees of the harness are unchanged: a fold is written in one transaction,
``INSERT OR IGNORE`` makes a second copy of a cell a no-op, and running the same
command again computes only the missing cells.

Faults
------
* A task that raises is run again by Dask up to ``retries`` times (then the run
  stops with the task's error, as on one machine).
* A worker that dies in the middle of a task: the scheduler reruns the task on
  another worker (up to ``distributed.scheduler.allowed-failures`` times); if it
  gives up (``KilledWorker``) or the scattered data were lost, this executor
  scatters the data again and resubmits the task, at most ``max_resubmits`` times
  per task.
* Nothing is lost or written twice: a task's rows reach the database only when the
  task finished, and each task is yielded once.

:attr:`DaskExecutor.stats` counts what happened (lost workers, tasks rerun after a
worker died, tasks rerun after an error, tasks resubmitted) and
:meth:`DaskExecutor.report` says it in one line.
"""

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ._client import Client, Future, _is_lost_data_error, get_client

if TYPE_CHECKING:
    from ..experiments import ExperimentConfig

#: The harness's fold function: ``fn(task, X, Y) -> (task, rows)``.
FoldFunction = Callable[[Any, Any, Any], Any]

__all__ = ["DaskExecutor", "dask_executor", "local_client", "run_experiment"]

logger = logging.getLogger("mlknn.distributed")

#: Event topic the fold tasks log their errors to (counted as retried tasks).
EVENT_TOPIC = "mlknn-fold-task"


def _logged_call(fn: FoldFunction, task: Any, X: Any, Y: Any) -> Any:
    """Run ``fn(task, X, Y)`` on a worker; an exception is logged as an event first."""
    try:
        return fn(task, X, Y)
    except Exception as exc:
        try:
            from distributed import get_worker

            get_worker().log_event(EVENT_TOPIC, {"action": "task-error", "error": f"{type(exc).__name__}: {exc}"})
        except Exception:  # noqa: BLE001 - not on a worker, or no event log
            pass
        raise


class DaskExecutor:
    """Runs the experiment harness's fold tasks on a Dask cluster.

    Parameters
    ----------
    client : distributed.Client, optional
        Default: the current default client.
    retries : int, default=2
        ``retries=`` of every fold task (reruns after an exception).
    max_resubmits : int, default=3
        How many times one fold task may be resubmitted after ``KilledWorker`` or
        lost input data.
    fold_function : callable, optional
        Replaces the ``fn`` the harness passes (same signature
        ``fn(task, X, Y) -> (task, rows)``); for wrapping fold tasks, e.g. fault
        injection in tests. Must be importable or picklable on the workers.
    verbose : bool, default=False
        Also print :meth:`report` after each dataset (it is always logged to the
        ``mlknn.distributed`` logger).

    Attributes
    ----------
    stats : dict
        ``tasks`` submitted, ``lost_workers``, ``rescheduled`` (tasks that were
        running on a worker that died, rerun by the scheduler), ``retried`` (tasks
        rerun after an exception), ``resubmitted`` (by this executor), ``rescattered``
        (times the data were sent again).

    See Also
    --------
    dask_executor : Builds one on a new or running cluster.
    run_experiment : The harness with this executor.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> from mlknn.distributed import DaskExecutor, local_client
    >>> with local_client(n_workers=2) as client:  # doctest: +SKIP
    ...     print(DaskExecutor(client).stats)
    {'tasks': 0, 'lost_workers': 0, 'rescheduled': 0, 'retried': 0, 'resubmitted': 0, 'rescattered': 0}
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        retries: int = 2,
        max_resubmits: int = 3,
        fold_function: FoldFunction | None = None,
        verbose: bool = False,
    ) -> None:
        self.client = client
        self.retries = retries
        self.max_resubmits = max_resubmits
        self.fold_function = fold_function
        self.verbose = verbose
        self.stats = {"tasks": 0, "lost_workers": 0, "rescheduled": 0, "retried": 0, "resubmitted": 0, "rescattered": 0}
        self._lost_seen: set[tuple[float, str]] = set()

    # ----------------------------------------------------------- interface
    def run_folds(self, fn: FoldFunction, tasks: Sequence[Any], X: Any, Y: Any) -> Iterator[Any]:
        """Yield ``fn(task, X, Y)`` for every task, each once, as they finish.

        Parameters
        ----------
        fn : callable
            The harness's fold function (picklable: a module-level function).
        tasks : list
            Fold tasks (picklable).
        X, Y : arrays
            The dataset; scattered to every worker once.

        Yields
        ------
        fn(task, X, Y)
        """
        import distributed

        # Unannotated in distributed: given a type here for the strict check.
        as_completed: Callable[..., Any] = distributed.as_completed

        client = get_client(self.client, "DaskExecutor")
        fn = self.fold_function or fn
        tasks = list(tasks)
        if not tasks:
            return
        mark = self._event_mark(client)
        data = self._scatter(client, X, Y)
        live: dict[Any, tuple[int, Future]] = {}
        attempts: dict[int, int] = {}
        keys: set[Any] = set()

        def submit(i: int) -> Future:
            fut = client.submit(_logged_call, fn, tasks[i], *data, retries=self.retries, pure=False)
            live[fut.key] = (i, fut)
            keys.add(fut.key)
            return fut

        pending = as_completed([submit(i) for i in range(len(tasks))])
        self.stats["tasks"] += len(tasks)
        try:
            for fut in pending:
                i, _ = live.pop(fut.key)
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - resubmitted or re-raised
                    if not _is_lost_data_error(exc) or attempts.get(i, 0) >= self.max_resubmits:
                        raise
                    attempts[i] = attempts.get(i, 0) + 1
                    self.stats["resubmitted"] += 1
                    logger.warning("fold task %d failed with %s: %s; resubmitting", i, type(exc).__name__, exc)
                    if any(d.status != "finished" for d in data):
                        data = self._scatter(client, X, Y)
                        self.stats["rescattered"] += 1
                    pending.add(submit(i))
                    continue
                fut.release()
                yield result
        finally:
            for _, fut in live.values():  # stopped early (error, interrupt): cancel the rest
                fut.cancel()
            self._count_events(client, mark, keys)
            msg = self.report()
            logger.info(msg)
            if self.verbose:
                print(msg)

    # --------------------------------------------------------------- helpers
    @staticmethod
    def _scatter(client: Client, X: Any, Y: Any) -> list[Future]:
        # On every worker: each fold task reads the whole dataset, and a worker
        # that dies then leaves a copy on the others.
        scattered: list[Future] = client.scatter([X, Y], broadcast=True, hash=False)
        return scattered

    @staticmethod
    def _event_mark(client: Client) -> float | None:
        """The scheduler's clock now (event timestamps are on that clock), or None."""

        def now(dask_scheduler: Any = None) -> float:  # nested: pickled by value, no mlknn needed there
            import time as _time

            return _time.time()

        try:
            mark: float | None = client.run_on_scheduler(now)
            return mark
        except Exception:  # noqa: BLE001 - statistics only
            return None

    def _count_events(self, client: Client, mark: float | None, keys: set[Any]) -> None:
        # The events are filtered on the scheduler: some entries of the "all" topic
        # (WorkerState objects) cannot be sent to a client.
        if mark is None:
            return

        def collect(
            dask_scheduler: Any = None, since: float = 0.0, topic: str = ""
        ) -> tuple[list[tuple[float, str, bool, list[str]]], int]:
            removed: list[tuple[float, str, bool, list[str]]] = []
            for ts, msg in dask_scheduler.get_events("all"):
                if ts > since and isinstance(msg, dict) and msg.get("action") == "remove-worker":
                    keys_ = [str(k) for k in (msg.get("processing-tasks") or ())]
                    removed.append((ts, str(msg.get("worker")), bool(msg.get("expected")), keys_))
            errors = sum(1 for ts, _ in dask_scheduler.get_events(topic) if ts > since)
            return removed, errors

        try:
            removed, errors = client.run_on_scheduler(collect, since=mark, topic=EVENT_TOPIC)
        except Exception as exc:  # noqa: BLE001 - statistics only
            logger.debug("could not read the scheduler's events: %s", exc)
            return
        keys = {str(k) for k in keys}
        for ts, worker, expected, processing in removed:
            if expected or (ts, worker) in self._lost_seen:  # retired on purpose / counted
                continue
            self._lost_seen.add((ts, worker))
            self.stats["lost_workers"] += 1
            self.stats["rescheduled"] += len(set(processing) & keys)
        self.stats["retried"] += errors

    def report(self) -> str:
        """One line: tasks, lost workers and the tasks run again.

        Returns
        -------
        str
            A summary of :attr:`stats`.
        """
        s = self.stats
        return (
            f"dask: {s['tasks']} fold task(s); {s['lost_workers']} worker(s) lost, "
            f"{s['rescheduled']} task(s) rerun after a worker died, {s['retried']} after an error, "
            f"{s['resubmitted']} resubmitted"
            + (f", data scattered again {s['rescattered']} time(s)" if s["rescattered"] else "")
        )


@contextlib.contextmanager
def local_client(
    n_workers: int | None = None, *, scheduler: str | None = None, threads_per_worker: int = 1, **cluster_kwargs: Any
) -> Iterator[Client]:
    """A Dask client for ``scheduler`` (an address), or for a new LocalCluster.

    Parameters
    ----------
    n_workers : int, optional
        Worker processes of the LocalCluster (when ``scheduler`` is None).
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``).
    threads_per_worker : int, default=1
        One thread per worker process: BLAS and the kernels use one core each.
    **cluster_kwargs
        Passed to ``distributed.LocalCluster``.

    Yields
    ------
    distributed.Client

    See Also
    --------
    get_client : The client the other functions use by default.
    dask_executor : A :class:`DaskExecutor` on a new or running cluster.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> from mlknn.distributed import local_client
    >>> with local_client(n_workers=2) as client:  # doctest: +SKIP
    ...     print(len(client.scheduler_info()["workers"]))
    2
    """
    from ._client import _distributed

    distributed = _distributed("mlknn.distributed.local_client")
    if scheduler is not None:
        with distributed.Client(scheduler) as client:
            yield client
        return
    cluster_kwargs.setdefault("processes", True)
    cluster_kwargs.setdefault("dashboard_address", None)
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, **cluster_kwargs) as cluster:
        with distributed.Client(cluster) as client:
            yield client


@contextlib.contextmanager
def dask_executor(
    scheduler: str | None = None,
    n_workers: int | None = None,
    *,
    retries: int = 2,
    max_resubmits: int = 3,
    verbose: bool = False,
) -> Iterator[DaskExecutor]:
    """A :class:`DaskExecutor` on a running scheduler or on a new LocalCluster.

    What the CLI's ``mlknn run DATASET... --db FILE --scheduler tcp://HOST:8786``
    / ``--dask-workers N`` use.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running Dask scheduler.
    n_workers : int, optional
        Worker processes of a new LocalCluster (one thread each); exactly one of
        ``scheduler`` and ``n_workers`` must be given.
    retries, max_resubmits, verbose
        See :class:`DaskExecutor`.

    Yields
    ------
    DaskExecutor

    See Also
    --------
    DaskExecutor : The executor.
    local_client : A client without an executor.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> from mlknn.distributed import dask_executor
    >>> with dask_executor(n_workers=2) as executor:  # doctest: +SKIP
    ...     print(type(executor).__name__)
    DaskExecutor
    """
    if (scheduler is None) == (n_workers is None):
        raise ValueError(
            "Give exactly one of --scheduler (the address of a running Dask scheduler) and "
            f"--dask-workers (a local cluster of N worker processes). Got scheduler={scheduler!r}, "
            f"dask_workers={n_workers!r}."
        )
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1):
        raise ValueError(f"The '--dask-workers' option must be an int >= 1. Got {n_workers!r} instead.")
    if scheduler is not None and not isinstance(scheduler, str):
        raise ValueError(f"The '--scheduler' option must be an address such as tcp://host:8786. Got {scheduler!r} instead.")
    with local_client(n_workers, scheduler=scheduler) as client:
        yield DaskExecutor(client, retries=retries, max_resubmits=max_resubmits, verbose=verbose)


def run_experiment(
    config: "ExperimentConfig",
    db: Any,
    *,
    client: Client | None = None,
    retries: int = 2,
    max_resubmits: int = 3,
    progress: Any = None,
    data: Any = None,
    data_home: Any = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """:func:`mlknn.experiments.run_experiment` with the fold tasks on a Dask cluster.

    Parameters
    ----------
    config : ExperimentConfig
        The experiment grid (data sets, methods, folds) whose fold tasks are run.
    db : ResultsDB or path
        Written by this process only.
    client : distributed.Client, optional
        Default: the current default client.
    retries, max_resubmits, verbose
        See :class:`DaskExecutor`.
    progress, data, data_home
        As for :func:`mlknn.experiments.run_experiment`.

    Returns
    -------
    dict
        The harness's summary plus ``"dask"``: :attr:`DaskExecutor.stats`.

    See Also
    --------
    mlknn.experiments.run_experiment : The same in this process (joblib).
    DaskExecutor : What runs the fold tasks.

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> import os, tempfile
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.distributed import local_client, run_experiment
    >>> from mlknn.experiments import ExperimentConfig, ProtocolConfig, ResultsDB
    >>> toy = make_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    >>> config = ExperimentConfig(datasets=("toy",), algorithms=("mlknn",), k=(5,),
    ...                           protocol=ProtocolConfig("holdout", n_repeats=2))
    >>> db = ResultsDB(os.path.join(tempfile.mkdtemp(), "results.db"))
    >>> with local_client(n_workers=2) as client:  # doctest: +SKIP
    ...     summary = run_experiment(config, db, client=client, data={"toy": (toy.X, toy.Y)})
    >>> summary["total"], summary["dask"]["tasks"]  # doctest: +SKIP
    (2, 2)
    """
    from ..experiments import run_experiment as _run

    executor = DaskExecutor(client, retries=retries, max_resubmits=max_resubmits, verbose=verbose)
    start = time.perf_counter()
    summary: dict[str, Any] = dict(_run(config, db, progress=progress, data=data, data_home=data_home, executor=executor))
    summary["dask"] = dict(executor.stats)
    summary["dask_seconds"] = time.perf_counter() - start
    summary["dask_report"] = executor.report()
    return summary
