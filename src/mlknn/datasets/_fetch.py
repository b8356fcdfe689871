"""Downloading the benchmark datasets, pinned by SHA-256.

:func:`fetch` copies one dataset of the standard MULAN / MEKA collection from
the public repositories it comes from (at a fixed commit) into a local data
folder laid out like the shared one::

    <data_home>/MANIFEST.tsv          one row per dataset fetched
    <data_home>/<name>/<files>        e.g. emotions/emotions.arff, emotions.xml

so that ``mlknn.datasets.load(name, data_home=...)`` works afterwards.

Safety rules
------------
* Every file is pinned: the SHA-256 (and size) of what ends up on disk is
  part of this module; a file whose hash differs is refused.
* A download is written to a temporary file in the target folder, checked,
  and only then renamed into place (``os.replace``, atomic). An interrupted or
  corrupt download never leaves a file that looks complete, and the
  ``MANIFEST.tsv`` row is written only once every file of the dataset is in
  place.
* Sizes are bounded: a response longer than the pinned size (or a ``.bz2``
  stream that decompresses to more) is cut off and refused.
* File names come from the pinned table only; a name that would land outside
  the dataset folder (``../x``, an absolute path) is refused. No archive
  (zip / tar) is ever extracted: MEKA's ``.bz2`` files are single compressed
  streams.
* MEKA ships some files as ``.arff.bz2`` (the ``source`` column says
  ``(bunzip2)`` or ``(bunzip2+gzip)``): they are decompressed and checked
  against the SHA-256 of the decompressed ARFF; ``(bunzip2+gzip)`` files are
  then stored gzip-compressed, as in the shared folder. gzip output is not
  byte-reproducible across compressors, so for those the pin is the SHA-256 of
  the decompressed content and the ``MANIFEST.tsv`` row records the hash of
  the ``.gz`` actually written.
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import gzip
import hashlib
import http.client
import io
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

from ._manifest import ENV_VAR, MANIFEST
from ._pinned import _COLUMNS, _REGISTRY, PinnedDataset, PinnedFile, fetchable_datasets, pinned_dataset  # noqa: F401

__all__ = ["fetch", "fetchable_datasets", "default_data_home", "FetchError", "ChecksumError"]

#: Where the ``owner/repo/commit/path`` URLs point by default.
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"

#: Seconds a connection may stay silent before the download is abandoned.
TIMEOUT = 60

_CHUNK = 1 << 16


class FetchError(OSError):
    """A dataset could not be downloaded or verified.

    Parameters
    ----------
    message : str
        What failed.
    url : str, default=None
        The URL that failed.

    Attributes
    ----------
    url : str or None
        The URL that failed.
    """

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class ChecksumError(FetchError):
    """A downloaded file does not have its pinned SHA-256.

    Parameters
    ----------
    message : str
        What failed.
    url : str
        The URL of the file.
    expected : str
        The pinned hex SHA-256 digest.
    actual : str
        The digest of the downloaded file.

    Attributes
    ----------
    url : str
    expected, actual : str
        Hex SHA-256 digests.
    """

    def __init__(self, message: str, *, url: str, expected: str, actual: str) -> None:
        super().__init__(message, url=url)
        self.expected = expected
        self.actual = actual


def default_data_home() -> Path:
    """``$MLKNN_DATA`` if set, else the user cache folder (``platformdirs``)."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        return Path(value).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("mlknn"))


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

_HEX40 = re.compile(r"[0-9a-f]{40}")


def _safe_child(folder: str | os.PathLike[str], name: str, what: str = "file") -> Path:
    """``folder / name``, refusing any name that could leave ``folder``."""
    if (
        not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\x00" in name
        or Path(name).is_absolute()
        or Path(name).drive
    ):
        raise FetchError(f"refusing {what} name {name!r}: it must be a plain name inside {folder}")
    target = Path(folder) / name
    if target.resolve().parent != Path(folder).resolve():
        raise FetchError(f"refusing {what} name {name!r}: it resolves outside {folder}")
    return target


def source_url(source: str, base_url: str | None = None) -> str:
    """URL of a ``owner/repo:path@commit`` source at ``base_url``.

    >>> source_url("tsoumakas/mulan:data/x.arff@" + "0" * 40)
    'https://raw.githubusercontent.com/tsoumakas/mulan/0000000000000000000000000000000000000000/data/x.arff'
    """
    spec = source.split(" (", 1)[0].strip()
    repo, sep, rest = spec.partition(":")
    path, sep2, commit = rest.rpartition("@")
    parts = repo.split("/")
    if not (sep and sep2 and len(parts) == 2 and all(parts) and _HEX40.fullmatch(commit)):
        raise FetchError(f"malformed source {source!r} (expected owner/repo:path@<40-hex commit>)")
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise FetchError(f"refusing source path {path!r}: empty, '.' or '..' segment")
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    quoted = "/".join(urllib.parse.quote(s, safe="") for s in [*parts, commit, *segments])
    return f"{base}/{quoted}"


def _sha256_file(path: Path, *, gunzip: bool = False) -> str:
    h = hashlib.sha256()
    with gzip.open(path, "rb") if gunzip else open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def _is_valid(path: Path, pinned: PinnedFile) -> bool:
    """True if ``path`` already holds the pinned file."""
    if not path.is_file():
        return False
    try:
        if pinned.transform == "bunzip2+gzip":
            return _sha256_file(path, gunzip=True) == pinned.sha256
        return path.stat().st_size == pinned.size and _sha256_file(path) == pinned.sha256
    except (OSError, EOFError, ValueError):
        return False


def _download(url: str, dest: IO[bytes], limit: int, expected_sha: str) -> tuple[str, int]:
    """Stream ``url`` into the open binary file ``dest``; return (sha256, n_bytes)."""
    request = urllib.request.Request(url, headers={"User-Agent": "mlknn-fetch"})
    h = hashlib.sha256()
    total = 0
    hint = f"(expected sha256 {expected_sha})"
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as resp:
            announced = resp.headers.get("Content-Length")
            length = int(announced) if announced and announced.isdigit() else None
            if length is not None and length > limit:
                raise FetchError(
                    f"refusing {url}: the server announces {length} bytes, more than the "
                    f"{limit} expected {hint}",
                    url=url,
                )
            while True:
                chunk = resp.read(min(_CHUNK, limit + 1 - total))
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    raise FetchError(f"refusing {url}: larger than the {limit} bytes expected {hint}", url=url)
                h.update(chunk)
                dest.write(chunk)
            if length is not None and total != length:
                raise FetchError(
                    f"download of {url} interrupted after {total} of {length} bytes {hint}", url=url
                )
    except FetchError:
        raise
    except urllib.error.HTTPError as exc:
        raise FetchError(f"could not download {url}: HTTP {exc.code} {exc.reason} {hint}", url=url) from exc
    except urllib.error.URLError as exc:
        raise FetchError(
            f"could not download {url}: {exc.reason} {hint}. Are you offline? "
            "Use a mirror with the same owner/repo/commit/path layout (base_url= in Python, --base-url "
            "on the command line), or copy the files by hand.",
            url=url,
        ) from exc
    except (http.client.HTTPException, OSError) as exc:
        # IncompleteRead, a reset connection, a timeout mid-body
        raise FetchError(
            f"download of {url} interrupted after {total} bytes ({type(exc).__name__}: {exc}) {hint}",
            url=url,
        ) from exc
    return h.hexdigest(), total


def _bunzip2(src_path: Path, dest: IO[bytes], limit: int, url: str) -> tuple[str, int]:
    """Decompress the bzip2 file ``src_path`` into ``dest``; return (sha256, n)."""
    h = hashlib.sha256()
    total = 0
    try:
        with bz2.open(src_path, "rb") as fh:
            while True:
                chunk = fh.read(min(_CHUNK, limit + 1 - total))
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    raise FetchError(
                        f"refusing {url}: it decompresses to more than the {limit} bytes expected",
                        url=url,
                    )
                h.update(chunk)
                dest.write(chunk)
    except FetchError:
        raise
    except (OSError, EOFError, ValueError) as exc:
        raise FetchError(f"{url} is not a valid bzip2 stream ({exc})", url=url) from exc
    return h.hexdigest(), total


@contextlib.contextmanager
def _temp_file(folder: str | os.PathLike[str], name: str) -> Iterator[tuple[Path, IO[bytes]]]:
    """A temporary file beside the target (same file system, so os.replace
    is atomic); removed unless it was renamed into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "w+b") as fh:
            yield Path(tmp), fh
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _fsync_replace(fh: IO[bytes], tmp: Path, target: Path) -> None:
    fh.flush()
    os.fsync(fh.fileno())
    os.replace(tmp, target)


def _fetch_file(pinned: PinnedFile, folder: Path, base_url: str | None) -> None:
    """Download one pinned file into ``folder`` (atomically, verified)."""
    target = _safe_child(folder, pinned.name)
    url = source_url(pinned.source, base_url)
    transform = pinned.transform
    if transform is None:
        with _temp_file(folder, pinned.name) as (tmp, fh):
            actual, _n = _download(url, fh, pinned.size, pinned.sha256)
            if actual != pinned.sha256:
                raise ChecksumError(
                    f"checksum mismatch for {url}: expected sha256 {pinned.sha256}, got {actual}; "
                    "the file was not saved",
                    url=url,
                    expected=pinned.sha256,
                    actual=actual,
                )
            _fsync_replace(fh, tmp, target)
        return
    # bzip2 source: the compressed size is unknown; bzip2 never grows text
    # by more than a small header, so bound it by the decompressed size.
    limit = pinned.size + (1 << 20)
    with _temp_file(folder, pinned.name + ".bz2") as (raw_tmp, raw_fh):
        _download(url, raw_fh, limit, pinned.sha256)
        raw_fh.flush()
        with _temp_file(folder, pinned.name + ".arff") as (arff_tmp, arff_fh):
            actual, _n = _bunzip2(raw_tmp, arff_fh, pinned.size, url)
            if actual != pinned.sha256:
                raise ChecksumError(
                    f"checksum mismatch for {url} after bunzip2: expected sha256 "
                    f"{pinned.sha256}, got {actual}; the file was not saved",
                    url=url,
                    expected=pinned.sha256,
                    actual=actual,
                )
            if transform == "bunzip2":
                _fsync_replace(arff_fh, arff_tmp, target)
                return
            arff_fh.flush()
            arff_fh.seek(0)
            with _temp_file(folder, pinned.name) as (gz_tmp, gz_fh):
                with gzip.GzipFile(fileobj=gz_fh, mode="wb", compresslevel=6, mtime=0) as gz:
                    shutil.copyfileobj(arff_fh, gz, _CHUNK)
                _fsync_replace(gz_fh, gz_tmp, target)


@contextlib.contextmanager
def _locked(home: str | os.PathLike[str]) -> Iterator[None]:
    """An advisory lock on the data folder while MANIFEST.tsv is rewritten."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        yield
        return
    with open(Path(home) / f".{MANIFEST}.lock", "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _manifest_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    if not path.is_file():
        return list(_COLUMNS), []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        rows = list(reader)
        columns = list(reader.fieldnames or [])
    return columns + [c for c in _COLUMNS if c not in columns], rows


def _has_row(home: str | os.PathLike[str], row: Mapping[str, str]) -> bool:
    _cols, rows = _manifest_rows(Path(home) / MANIFEST)
    return any(all(r.get(k) == v for k, v in row.items()) for r in rows)


def _write_row(home: str | os.PathLike[str], row: dict[str, str]) -> None:
    """Add or replace the MANIFEST.tsv row of ``row['name']`` (atomically)."""
    path = Path(home) / MANIFEST
    with _locked(home):
        columns, rows = _manifest_rows(path)
        rows = [r for r in rows if r.get("name") != row["name"]] + [row]
        with _temp_file(home, MANIFEST) as (tmp, fh):
            text = io.StringIO()
            writer = csv.DictWriter(
                text, fieldnames=columns, delimiter="\t", quoting=csv.QUOTE_NONE,
                lineterminator="\n", restval="", extrasaction="ignore",
            )
            writer.writeheader()
            writer.writerows(rows)
            fh.write(text.getvalue().encode("utf-8"))
            _fsync_replace(fh, tmp, path)


# --------------------------------------------------------------------------
# Public function
# --------------------------------------------------------------------------


def fetch(
    name: str, *, data_home: str | os.PathLike[str] | None = None, base_url: str | None = None
) -> Path:
    """Download a benchmark dataset (pinned by SHA-256) into a local data folder.

    Parameters
    ----------
    name : str
        A dataset of the standard collection (case-insensitive):
        see :func:`fetchable_datasets` (``'emotions'``, ``'yeast'``,
        ``'medical'``, ``'bibtex'``, ``'yeast-meka'``, ...).
    data_home : str or path-like, default=None
        Folder to download into; created if needed. Default:
        ``$MLKNN_DATA`` when set, else the user cache folder
        (``platformdirs.user_cache_dir("mlknn")``).
    base_url : str, default=None
        Where the files are fetched from. Default
        ``https://raw.githubusercontent.com``: each file is
        ``{base_url}/{owner}/{repo}/{commit}/{path}`` for its pinned source
        (MULAN's and MEKA's GitHub repositories at a fixed commit). A mirror
        must keep that layout.

    Returns
    -------
    data_home : pathlib.Path
        The folder that now holds ``MANIFEST.tsv`` and ``<name>/``; pass it
        to :func:`mlknn.datasets.load` as ``data_home`` (or set
        ``MLKNN_DATA`` to it).

    Raises
    ------
    ValueError
        Unknown dataset name (the message lists the known ones).
    FetchError
        A download failed (offline, HTTP error, interrupted transfer, larger
        than expected) - the message names the URL and the expected
        SHA-256 - or a file name would leave the dataset folder.
    ChecksumError
        A downloaded file does not match its pinned SHA-256 (the message
        names the URL, the expected and the actual hash).

    See Also
    --------
    fetchable_datasets : The names this function knows.
    load : Load the fetched dataset.

    Notes
    -----
    Files already present with the right hash are not downloaded again, and
    a folder that already holds the whole dataset (such as a read-only shared
    copy) is left untouched. A failure leaves no partial file under a final
    name and no MANIFEST row: :func:`~mlknn.datasets.load` cannot pick up a
    half-fetched dataset.

    Examples
    --------
    >>> from mlknn.datasets import fetch, load        # doctest: +SKIP
    >>> home = fetch("emotions")                      # doctest: +SKIP
    >>> load("emotions", data_home=home).X.shape      # doctest: +SKIP
    (593, 72)
    """
    entry = pinned_dataset(name)
    home = Path(data_home).expanduser() if data_home is not None else default_data_home()
    folder = _safe_child(home, entry.name, what="dataset")
    row = dict(entry.row)

    # Fast path: everything already there (e.g. a read-only shared folder).
    if folder.is_dir() and all(_is_valid(folder / f.name, f) for f in entry.files):
        if _has_row(home, {"name": entry.name, "files": row["files"]}):
            return home
    home.mkdir(parents=True, exist_ok=True)
    folder.mkdir(exist_ok=True)
    for f in entry.files:
        target = _safe_child(folder, f.name)
        if not _is_valid(target, f):
            _fetch_file(f, folder, base_url)
    row["sha256"] = ";".join(_stored_sha(folder, f) for f in entry.files)
    _write_row(home, row)
    return home


def _stored_sha(folder: Path, pinned: PinnedFile) -> str:
    """SHA-256 of the file as stored (differs from the pin for +gzip files)."""
    if pinned.transform == "bunzip2+gzip":
        return _sha256_file(folder / pinned.name)
    return pinned.sha256
