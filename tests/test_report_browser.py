"""The HTML report in a real browser: headless Chromium at 1280 px (issue 14 point 8).

A small inline script, run by Chromium after the page has loaded, writes its checks into
the DOM (``--dump-dom`` returns the DOM after the scripts ran): the page and every table
fit the 1280-px window (no horizontal overflow) and every image decoded. Skipped with the
install command when Chromium is missing (``.ci/run`` installs it).
"""

import json
import re
import shutil
import subprocess

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from mlknn.experiments import ExperimentConfig, ProtocolConfig, run_experiment
from mlknn.report import build_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: apt-get install -y chromium")

WIDTH = 1280

_CHECKS = """
<script>
window.addEventListener('load', function () {
  var doc = document.documentElement;
  var imgs = Array.prototype.slice.call(document.images);
  var tables = Array.prototype.slice.call(document.querySelectorAll('.tbl'));
  var out = {
    viewport: window.innerWidth,
    page_width: Math.max(doc.scrollWidth, document.body.scrollWidth),
    images: imgs.length,
    broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length,
    tables: tables.length,
    overflowing: tables.filter(function (t) { return t.scrollWidth > t.clientWidth + 1; })
                       .map(function (t) { return t.querySelector('caption').textContent; })
  };
  var pre = document.createElement('pre');
  pre.id = 'mlknn-checks';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def _chromium(*args, profile):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", f"--window-size={WIDTH},2000", "--hide-scrollbars",
           "--virtual-time-budget=10000", *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def _data(seed, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = (X @ rng.normal(size=(4, 4)) + 0.5 * rng.normal(size=(n, 4)) > 0).astype(np.uint8)
    return X, Y


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Every metric (the widest tables), 6 configurations, 2 datasets, curves over k."""
    tmp = tmp_path_factory.mktemp("browser")
    cfg = ExperimentConfig(datasets=("first dataset", "données/2.arff"), algorithms=("mlknn", "brknn", "dmlknn"),
                           k=(3, 5), protocol=ProtocolConfig("5x2", n_repeats=1, seed=0))  # fmt: skip
    run_experiment(cfg, tmp / "r.db", data={"first dataset": _data(1), "données/2.arff": _data(2)})
    paths = build_report(tmp / "r.db", tmp / "rep", dataset_figures=False)
    return tmp, paths


def test_report_fits_1280_px_and_every_image_loads(report):
    tmp, paths = report
    page = tmp / "check.html"
    page.write_text(paths["html"].read_text(encoding="utf-8").replace("</body>", _CHECKS + "</body>"), encoding="utf-8")
    res = _chromium("--dump-dom", page.as_uri(), profile=tmp / "profile-dom")
    m = re.search(r'<pre id="mlknn-checks">(.*?)</pre>', res.stdout, re.DOTALL)
    assert m, f"no checks in the DOM (chromium rc={res.returncode}): {res.stderr[-2000:]}"
    checks = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert checks["viewport"] == WIDTH
    assert checks["page_width"] <= WIDTH, checks
    assert checks["images"] == len(paths["figures"]) >= 3 and checks["broken"] == 0, checks
    assert checks["tables"] >= 10 and checks["overflowing"] == [], checks


def test_report_screenshot(report):
    """A screenshot to look at (kept under the test's tmp folder); it must not be blank."""
    tmp, paths = report
    shot = tmp / "report.png"
    res = _chromium(f"--screenshot={shot}", paths["html"].as_uri(), profile=tmp / "profile-shot")
    assert shot.exists(), res.stderr[-2000:]
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)
    assert img.shape[1] == WIDTH and img.std() > 0.01


_NEW_PARTS = """
<script>
window.addEventListener('load', function () {
  var caps = Array.prototype.slice.call(document.querySelectorAll('figcaption, p.note, p.legend'));
  var out = {
    captions: caps.length,
    smallest_px: Math.min.apply(null, caps.map(function (c) { return parseFloat(getComputedStyle(c).fontSize); })),
    shown_once: document.body.textContent.indexOf('Shown once: macro_accuracy') >= 0,
    median_note: document.body.textContent.indexOf('median seconds per fold') >= 0
  };
  var pre = document.createElement('pre');
  pre.id = 'mlknn-new';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def test_report_new_parts_are_legible_in_the_browser(report):
    """Issue 30: captions and notes at a readable size, the shown-once note, the median run time."""
    tmp, paths = report
    page = tmp / "new.html"
    page.write_text(paths["html"].read_text(encoding="utf-8").replace("</body>", _NEW_PARTS + "</body>"),
                    encoding="utf-8")
    res = _chromium("--dump-dom", page.as_uri(), profile=tmp / "profile-new")
    m = re.search(r'<pre id="mlknn-new">(.*?)</pre>', res.stdout, re.DOTALL)
    assert m, f"no checks in the DOM (chromium rc={res.returncode}): {res.stderr[-2000:]}"
    checks = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert checks["captions"] >= 3 and checks["smallest_px"] >= 13, checks
    assert checks["shown_once"] and checks["median_note"], checks
