"""mlknn.datasets.fetch (issue 8): pinned, atomic, verified downloads.

Every test serves its files from a local http.server on 127.0.0.1 (a thread,
ephemeral port) built in tmp_path; nothing here touches the internet.
"""

import bz2
import csv
import functools
import gzip
import hashlib
import http.server
import os
import socket
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mlknn.datasets import ChecksumError, FetchError, _fetch, fetch, fetchable_datasets, load

COMMIT = "0123456789abcdef0123456789abcdef01234567"

TOY_ARFF = """\
@relation toy
@attribute f1 numeric
@attribute f2 numeric
@attribute a {0,1}
@attribute b {0,1}
@data
1,2,0,1
3,4,1,1
5,6,1,0
"""
TOY_XML = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<labels xmlns="http://mulan.sourceforge.net/labels"><label name="a"></label>'
    '<label name="b"></label></labels>\n'
)
TOY_MEKA = TOY_ARFF.replace("@relation toy", "@relation 'toy: -C -2'")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the fixture folder; ``server.mode`` injects failures."""

    def do_GET(self):  # noqa: N802 - http.server API
        self.server.hits.append(self.path)
        mode = self.server.mode
        if mode in ("cut", "cut_no_length"):
            path = Path(self.translate_path(self.path))
            if path.is_file():
                body = path.read_bytes()
                self.send_response(200)
                if mode == "cut":
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "srv"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root))
    )
    httpd.hits = []
    httpd.mode = None
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield SimpleNamespace(
        root=root, url=f"http://127.0.0.1:{httpd.server_address[1]}", hits=httpd.hits, httpd=httpd
    )
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _short_timeout(monkeypatch):
    monkeypatch.setattr(_fetch, "TIMEOUT", 10)


def _sha(blob):
    return hashlib.sha256(blob).hexdigest()


def _publish(server, source, blob):
    """Put ``blob`` where ``source`` (owner/repo:path@commit) is served."""
    repo, _, rest = source.split(" (")[0].partition(":")
    path, _, commit = rest.rpartition("@")
    dest = server.root / repo / commit / path
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(blob)
    return dest


def _register(monkeypatch, name, files, fmt="mulan", label_location="xml"):
    """Pin a dataset: ``files`` = [(file name, stored bytes, source, pinned sha or None)]."""
    pinned, shas, sources = [], [], []
    for fname, stored, source, sha in files:
        sha = sha or _sha(stored)
        pinned.append(_fetch.PinnedFile(fname, sha, source, len(stored)))
        shas.append(sha)
        sources.append(source)
    row = {
        "name": name, "files": ";".join(f[0] for f in files), "format": fmt,
        "label_location": label_location, "n": "3", "d": "2", "q": "2", "lcard": "1.333",
        "ldens": "0.667", "ldiv": "3", "sparse": "no", "sha256": ";".join(shas),
        "source": ";".join(sources),
    }
    entry = _fetch.PinnedDataset(name, tuple(pinned), row)
    monkeypatch.setitem(_fetch._REGISTRY, name, entry)
    return entry


@pytest.fixture
def toy(server, monkeypatch):
    """A pinned MULAN dataset 'toy' (ARFF + XML) published on the server."""
    files = []
    for fname, text in (("toy.arff", TOY_ARFF), ("toy.xml", TOY_XML)):
        source = f"owner/repo:data/toy/{fname}@{COMMIT}"
        _publish(server, source, text.encode())
        files.append((fname, text.encode(), source, None))
    return _register(monkeypatch, "toy", files)


def _leftovers(folder):
    return sorted(p.name for p in Path(folder).rglob("*") if p.name.endswith(".part"))


def _manifest_names(home):
    path = Path(home) / "MANIFEST.tsv"
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return [r["name"] for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)]


def _assert_nothing_usable(home, name="toy"):
    """A failed fetch leaves no file under a final name, no .part, no row."""
    assert _leftovers(home) == []
    assert name not in _manifest_names(home)
    folder = Path(home) / name
    assert not folder.exists() or sorted(p.name for p in folder.iterdir()) == []
    with pytest.raises((ValueError, FileNotFoundError)):
        load(name, data_home=home)


# --------------------------------------------------------------------------
# Success
# --------------------------------------------------------------------------


def test_fetch_then_load(server, toy, tmp_path):
    home = tmp_path / "home"
    out = fetch("toy", data_home=home, base_url=server.url)
    assert out == home
    assert sorted(p.name for p in (home / "toy").iterdir()) == ["toy.arff", "toy.xml"]
    assert (home / "toy" / "toy.arff").read_text() == TOY_ARFF
    assert _manifest_names(home) == ["toy"]
    assert _leftovers(home) == []
    data = load("toy", data_home=home)
    np.testing.assert_array_equal(data.Y, [[0, 1], [1, 1], [1, 0]])
    assert data.label_names == ["a", "b"]
    assert server.hits == [f"/owner/repo/{COMMIT}/data/toy/toy.arff", f"/owner/repo/{COMMIT}/data/toy/toy.xml"]
    # Second call: everything verified in place, no request at all.
    fetch("TOY", data_home=home, base_url=server.url)
    assert len(server.hits) == 2


def test_fetch_keeps_other_manifest_rows(server, toy, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    other = "\t".join(_fetch._COLUMNS) + "\n" + "\t".join(
        ["other", "o.arff", "meka", "first 1", "1", "1", "1", "1", "1", "1", "no", "x", "y"]
    ) + "\n"
    (home / "MANIFEST.tsv").write_text(other)
    fetch("toy", data_home=home, base_url=server.url)
    assert _manifest_names(home) == ["other", "toy"]
    fetch("toy", data_home=home, base_url=server.url)  # re-fetch replaces, never duplicates
    assert _manifest_names(home) == ["other", "toy"]


def test_corrupt_local_copy_is_downloaded_again(server, toy, tmp_path):
    home = tmp_path / "home"
    fetch("toy", data_home=home, base_url=server.url)
    (home / "toy" / "toy.arff").write_text(TOY_ARFF.replace("5,6", "7,8"))
    fetch("toy", data_home=home, base_url=server.url)
    assert (home / "toy" / "toy.arff").read_text() == TOY_ARFF
    assert len(server.hits) == 3  # only the damaged file again


def test_bunzip2_sources(server, monkeypatch, tmp_path):
    """'(bunzip2)' files are stored decompressed, '(bunzip2+gzip)' as gzip;
    both are checked against the hash of the decompressed ARFF."""
    plain, big = TOY_MEKA.encode(), (TOY_MEKA + "7,8,0,0\n" * 50).encode()
    s1 = f"Waikato/meka:src/main/data/Toy.arff.bz2@{COMMIT} (bunzip2)"
    s2 = f"Waikato/meka:src/main/data/Big.arff.bz2@{COMMIT} (bunzip2+gzip)"
    _publish(server, s1, bz2.compress(plain))
    _publish(server, s2, bz2.compress(big))
    _register(monkeypatch, "toy-meka", [("Toy.arff", plain, s1, None)], "meka", "last 2")
    _register(monkeypatch, "big-meka", [("Big.arff.gz", big, s2, None)], "meka", "last 2")
    home = tmp_path / "home"
    fetch("toy-meka", data_home=home, base_url=server.url)
    fetch("big-meka", data_home=home, base_url=server.url)
    assert (home / "toy-meka" / "Toy.arff").read_bytes() == plain
    gz = (home / "big-meka" / "Big.arff.gz").read_bytes()
    assert gz[:2] == b"\x1f\x8b" and gzip.decompress(gz) == big
    with open(home / "MANIFEST.tsv", newline="") as fh:
        rows = {r["name"]: r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)}
    assert rows["big-meka"]["sha256"] == _sha(gz)  # the hash of the file actually stored
    assert rows["toy-meka"]["sha256"] == _sha(plain)
    assert load("big-meka", data_home=home).X.shape == (53, 2)
    assert load("toy-meka", data_home=home).Y.shape == (3, 2)
    n = len(server.hits)
    fetch("big-meka", data_home=home, base_url=server.url)
    assert len(server.hits) == n
    assert _leftovers(home) == []


def test_bad_bzip2_and_bzip2_bomb(server, monkeypatch, tmp_path):
    plain = TOY_MEKA.encode()
    s1 = f"Waikato/meka:src/main/data/Bad.arff.bz2@{COMMIT} (bunzip2)"
    _publish(server, s1, b"BZh9 not really bzip2")
    _register(monkeypatch, "bad-meka", [("Bad.arff", plain, s1, None)], "meka", "last 2")
    s2 = f"Waikato/meka:src/main/data/Bomb.arff.bz2@{COMMIT} (bunzip2)"
    _publish(server, s2, bz2.compress(b"0" * 5_000_000))  # 5 MB from a few hundred bytes
    _register(monkeypatch, "bomb-meka", [("Bomb.arff", plain, s2, None)], "meka", "last 2")
    home = tmp_path / "home"
    with pytest.raises(FetchError, match=r"Bad\.arff\.bz2 is not a valid bzip2 stream"):
        fetch("bad-meka", data_home=home, base_url=server.url)
    _assert_nothing_usable(home, "bad-meka")
    with pytest.raises(FetchError, match=r"decompresses to more than the \d+ bytes expected"):
        fetch("bomb-meka", data_home=home, base_url=server.url)
    _assert_nothing_usable(home, "bomb-meka")


# --------------------------------------------------------------------------
# Failures
# --------------------------------------------------------------------------


def test_wrong_checksum(server, toy, tmp_path):
    source = toy.files[0].source
    _publish(server, source, TOY_ARFF.replace("3,4", "3,5").encode())  # same size, other bytes
    home = tmp_path / "home"
    with pytest.raises(ChecksumError) as info:
        fetch("toy", data_home=home, base_url=server.url)
    err = info.value
    url = f"{server.url}/owner/repo/{COMMIT}/data/toy/toy.arff"
    assert err.url == url and err.expected == toy.files[0].sha256
    assert err.actual == _sha(TOY_ARFF.replace("3,4", "3,5").encode())
    msg = str(err)
    assert url in msg and err.expected in msg and err.actual in msg
    _assert_nothing_usable(home)


def test_server_down(toy, tmp_path):
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "home"
    with pytest.raises(FetchError) as info:
        fetch("toy", data_home=home, base_url=f"http://127.0.0.1:{port}")
    msg = str(info.value)
    assert f"http://127.0.0.1:{port}/owner/repo/{COMMIT}/data/toy/toy.arff" in msg
    assert toy.files[0].sha256 in msg and "offline" in msg
    _assert_nothing_usable(home)


@pytest.mark.parametrize("mode", ["cut", "cut_no_length"])
def test_interrupted_transfer(server, toy, tmp_path, mode):
    """The server closes the connection half-way through the body."""
    server.httpd.mode = mode
    home = tmp_path / "home"
    with pytest.raises(FetchError) as info:
        fetch("toy", data_home=home, base_url=server.url)
    msg = str(info.value)
    assert "toy.arff" in msg and toy.files[0].sha256 in msg
    if mode == "cut":  # Content-Length known: reported as an interruption
        assert "interrupted" in msg and not isinstance(info.value, ChecksumError)
    else:  # no length: the short file fails its checksum
        assert isinstance(info.value, ChecksumError)
    _assert_nothing_usable(home)
    server.httpd.mode = None  # the next attempt succeeds and leaves a complete dataset
    fetch("toy", data_home=home, base_url=server.url)
    assert load("toy", data_home=home).X.shape == (3, 2)


def test_http_error(server, toy, tmp_path):
    (server.root / "owner" / "repo" / COMMIT / "data" / "toy" / "toy.xml").unlink()
    home = tmp_path / "home"
    with pytest.raises(FetchError, match=r"toy\.xml: HTTP 404"):
        fetch("toy", data_home=home, base_url=server.url)
    # toy.arff arrived intact, but without its XML the dataset is not listed.
    assert "toy" not in _manifest_names(home) and _leftovers(home) == []


def test_oversized_response_is_cut_off(server, toy, tmp_path):
    _publish(server, toy.files[0].source, TOY_ARFF.encode() + b"%" * 100_000)
    home = tmp_path / "home"
    with pytest.raises(FetchError, match=r"more than the \d+ expected|larger than the \d+ bytes expected"):
        fetch("toy", data_home=home, base_url=server.url)
    _assert_nothing_usable(home)


@pytest.mark.parametrize("bad", ["../evil.arff", "/tmp/evil.arff", "..", "sub/evil.arff", "a\\..\\evil"])
def test_path_traversal_in_file_name_refused(server, monkeypatch, tmp_path, bad):
    source = f"owner/repo:data/evil.arff@{COMMIT}"
    _publish(server, source, TOY_ARFF.encode())
    _register(monkeypatch, "evil", [(bad, TOY_ARFF.encode(), source, None)])
    home = tmp_path / "home"
    with pytest.raises(FetchError, match="refusing file name"):
        fetch("evil", data_home=home, base_url=server.url)
    assert server.hits == []  # refused before any request
    assert not (tmp_path / "evil.arff").exists() and not (home / "evil.arff").exists()
    assert "evil" not in _manifest_names(home)


def test_path_traversal_in_dataset_name_or_source_refused(server, monkeypatch, tmp_path):
    source = f"owner/repo:data/toy.arff@{COMMIT}"
    _register(monkeypatch, "../escape", [("toy.arff", TOY_ARFF.encode(), source, None)])
    with pytest.raises(FetchError, match="refusing dataset name"):
        fetch("../escape", data_home=tmp_path / "home", base_url=server.url)
    assert not (tmp_path / "escape").exists()
    _register(monkeypatch, "dots", [("toy.arff", TOY_ARFF.encode(), f"owner/repo:data/../../x@{COMMIT}", None)])
    with pytest.raises(FetchError, match="'..' segment"):
        fetch("dots", data_home=tmp_path / "home", base_url=server.url)
    assert server.hits == []


def test_unknown_name_lists_known_ones(tmp_path):
    with pytest.raises(ValueError, match=r"unknown dataset 'nope' for fetch; known: emotions, scene"):
        fetch("nope", data_home=tmp_path)


# --------------------------------------------------------------------------
# The pinned table itself
# --------------------------------------------------------------------------


def test_pinned_table_covers_the_collection():
    names = fetchable_datasets()
    assert {"emotions", "scene", "yeast", "medical", "enron", "corel5k", "bibtex", "llog",
            "tmc2007-500", "delicious", "imdb", "emotions-meka", "scene-meka", "yeast-meka",
            "enron-meka"} <= set(names)
    for name in names:
        for f in _fetch._REGISTRY[name].files:
            assert len(f.sha256) == 64 and f.size > 0
            url = _fetch.source_url(f.source)
            assert url.startswith("https://raw.githubusercontent.com/") and " " not in url
    imdb = _fetch._REGISTRY["imdb"].files[0]
    assert imdb.transform == "bunzip2+gzip" and imdb.source.split("@")[0].endswith(".bz2")
    assert _fetch._REGISTRY["yeast-meka"].files[0].transform == "bunzip2"
    assert _fetch._REGISTRY["emotions"].files[0].transform is None


def test_source_url_rejects_malformed_sources():
    for bad in ["noslash:x@" + COMMIT, "a/b:x@short", "a/b:x", "a/b/c:x@" + COMMIT, "a/b:/x@" + COMMIT]:
        with pytest.raises(FetchError, match="source"):
            _fetch.source_url(bad)
    assert _fetch.source_url(f"a/b:d/x y.arff@{COMMIT}", "http://m/") == f"http://m/a/b/{COMMIT}/d/x%20y.arff"


def test_default_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("MLKNN_DATA", str(tmp_path))
    assert _fetch.default_data_home() == tmp_path
    monkeypatch.delenv("MLKNN_DATA")
    import platformdirs

    assert _fetch.default_data_home() == Path(platformdirs.user_cache_dir("mlknn"))


@pytest.mark.data
def test_real_entries_against_local_mirror(data_dir, server, tmp_path):
    """The pinned hashes of real datasets, through a mirror built from the
    shared folder: a plain MULAN set, a (bunzip2) and a (bunzip2+gzip) MEKA set."""
    for name in ("emotions", "yeast-meka", "scene-meka"):
        for f in _fetch._REGISTRY[name].files:
            blob = (data_dir / name / f.name).read_bytes()
            if f.transform == "bunzip2+gzip":
                blob = bz2.compress(gzip.decompress(blob), 1)
            elif f.transform == "bunzip2":
                blob = bz2.compress(blob, 1)
            _publish(server, f.source, blob)
    home = tmp_path / "home"
    for name in ("emotions", "yeast-meka", "scene-meka"):
        assert fetch(name, data_home=home, base_url=server.url) == home
    assert _manifest_names(home) == ["emotions", "yeast-meka", "scene-meka"]
    assert (home / "yeast-meka" / "Yeast.arff").read_bytes() == (data_dir / "yeast-meka" / "Yeast.arff").read_bytes()
    mine, shared = (gzip.decompress((d / "scene-meka" / "Scene.arff.gz").read_bytes()) for d in (home, data_dir))
    assert mine == shared
    a, b = load("emotions", data_home=home), load("emotions", data_home=data_dir)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert load("yeast-meka", data_home=home, return_X_y=True)[1].shape == (2417, 14)


@pytest.mark.data
def test_complete_read_only_folder_is_left_untouched(data_dir):
    """fetch() on the shared folder (read-only in CI) verifies and returns,
    without writing or connecting (the base URL has no server)."""
    before = (data_dir / "MANIFEST.tsv").stat().st_mtime_ns
    assert fetch("emotions", data_home=data_dir, base_url="http://127.0.0.1:9") == data_dir
    assert (data_dir / "MANIFEST.tsv").stat().st_mtime_ns == before


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def test_cli_fetch(server, toy, tmp_path, capsys):
    from mlknn.cli._main import main

    home = tmp_path / "home"
    main(["datasets", "fetch", "toy", "--data-home", str(home), "--base-url", server.url])
    assert f"toy: ready in {home / 'toy'}" in capsys.readouterr().out
    assert load("toy", data_home=home).X.shape == (3, 2)

    _publish(server, toy.files[1].source, TOY_XML.replace("a", "c").encode())
    os.remove(home / "toy" / "toy.xml")
    with pytest.raises(SystemExit) as info:
        main(["datasets", "fetch", "toy", "--data-home", str(home), "--base-url", server.url])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: checksum mismatch") and "ChecksumError" not in err and toy.files[1].sha256 in err


def test_load_falls_back_to_the_fetch_cache(tmp_path, monkeypatch):
    """Without MLKNN_DATA, data_home() is the user cache once something was fetched."""
    import platformdirs

    from mlknn.datasets import data_home

    monkeypatch.delenv("MLKNN_DATA", raising=False)
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda appname: str(tmp_path / appname))
    with pytest.raises(RuntimeError, match="MLKNN_DATA"):
        data_home()
    (tmp_path / "mlknn").mkdir()
    (tmp_path / "mlknn" / "MANIFEST.tsv").write_text("name\tfiles\n")
    assert data_home() == tmp_path / "mlknn"
