"""The Dask side of mlknn.distributed: the client, the cluster's size, and recovery from lost workers."""


from typing import Any, TypeAlias

__all__ = ["get_client"]

#: A ``distributed.Client`` (dask is optional, imported on first use: typed loosely).
Client: TypeAlias = Any
#: A ``distributed.Future``.
Future: TypeAlias = Any


def _distributed(caller: str) -> Any:
    from ..utils import check_optional_dependency

    check_optional_dependency("dask", caller)
    return check_optional_dependency("distributed", caller)


def get_client(client: Client | None = None, caller: str = "mlknn.distributed") -> Client:
    """The Dask client to use: ``client``, or the default one of this process.

    Parameters
    ----------
    client : distributed.Client, optional
        The client to use; None: the current default client.
    caller : str
        Named in the error messages.

    Returns
    -------
    distributed.Client

    Raises
    ------
    ImportError
        When dask[distributed] is not installed.
    ValueError
        When ``client`` is None and no client has been created in this process.

    See Also
    --------
    local_client : Create a client (and a LocalCluster).

    Examples
    --------
    >>> # not run in the doctests: starting a Dask cluster takes seconds
    >>> import numpy as np
    >>> from mlknn import MLkNN
    >>> from mlknn.datasets import make_multilabel
    >>> from mlknn.distributed import get_client
    >>> data = make_multilabel(n_samples=80, n_features=5, n_labels=3, random_state=0)
    >>> from distributed import Client  # doctest: +SKIP
    >>> client = Client(n_workers=2, threads_per_worker=1)  # doctest: +SKIP
    >>> get_client() is client  # doctest: +SKIP
    True
    >>> client.close()  # doctest: +SKIP
    """
    distributed = _distributed(caller)
    if client is not None:
        return client
    try:
        return distributed.default_client()
    except ValueError:
        raise ValueError(
            f"{caller} needs a Dask client: pass client=, or create one first, e.g. "
            "distributed.Client(distributed.LocalCluster(n_workers=2)) or "
            "distributed.Client('tcp://scheduler:8786')."
        ) from None


def _n_workers(client: Client) -> int:
    try:
        return max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
    except TypeError:  # older distributed: no n_workers argument
        return max(1, len(client.scheduler_info()["workers"]))
    except Exception:  # noqa: BLE001 - a default only
        return 1


def _is_lost_data_error(exc: BaseException) -> bool:
    """Errors that mean a worker died with data or tasks (not a bug in a task)."""
    name = type(exc).__name__
    return name in ("FutureCancelledError", "CancelledError", "KilledWorker", "FutureLostError") or (
        "lost" in str(exc).lower() and "scattered" in str(exc).lower()
    )
