"""The documentation site in a real browser: headless Chromium on the built HTML.

Run by ``.ci/run`` after it builds the site, with ``MLKNN_DOCS_HTML`` naming the build
folder (``docs/_build/html``) and the site built with a local MathJax
(``MLKNN_DOCS_MATHJAX``): the index, an algorithm page whose equations MathJax rendered,
and the gallery with a real thumbnail per example. Skipped without a built site or without
Chromium.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
SITE = Path(os.environ["MLKNN_DOCS_HTML"]) if os.environ.get("MLKNN_DOCS_HTML") else None
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: apt-get install -y chromium"),
    pytest.mark.skipif(SITE is None, reason="MLKNN_DOCS_HTML does not name a built site (.ci/run sets it)"),
]

# Written into the DOM after the page (and MathJax) ran; --dump-dom returns the DOM.
_CHECKS = """
<script>
window.addEventListener('load', function () {
  setTimeout(function () {
    var imgs = Array.prototype.slice.call(document.images);
    var out = {
      title: document.title,
      math_sources: document.querySelectorAll('.math.notranslate').length,
      math_rendered: document.querySelectorAll('mjx-container, .MathJax, .MathJax_Display, .MathJax_CHTML').length,
      math_errors: document.querySelectorAll('.MathJax_Error, mjx-merror').length,
      images: imgs.map(function (i) { return [i.getAttribute('src'), i.complete && i.naturalWidth > 0]; }),
      code_overflow: Array.prototype.slice.call(document.querySelectorAll('div.highlight pre'))
        .filter(function (p) { return p.scrollWidth > p.clientWidth + 1; })
        .map(function (p) { return [p.scrollWidth, p.clientWidth, p.textContent.split(String.fromCharCode(10)).sort(function (a, b) { return b.length - a.length; })[0]]; })
    };
    var pre = document.createElement('pre');
    pre.id = 'mlknn-checks';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 3000);
});
</script>
"""


def _checks(page, tmp_path):
    """Load ``page`` (relative to the site) with the check script; return what it found."""
    source = SITE / page
    assert source.is_file(), f"{page} is missing from the built site"
    probe = source.with_name(f"_probe_{source.name}")
    probe.write_text(source.read_text(encoding="utf-8").replace("</body>", _CHECKS + "</body>"), encoding="utf-8")
    try:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--allow-file-access-from-files", "--disable-background-networking", "--disable-component-update",
               f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2000",
               "--virtual-time-budget=20000", "--dump-dom", probe.as_uri()]  # fmt: skip
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    finally:
        probe.unlink()
    m = re.search(r'<pre id="mlknn-checks">(.*?)</pre>', res.stdout, re.DOTALL)
    assert m, f"no checks in the DOM (chromium rc={res.returncode}): {res.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def test_index_loads(tmp_path):
    checks = _checks("index.html", tmp_path)
    assert "mlknn" in checks["title"]
    assert all(ok for _, ok in checks["images"]), checks["images"]


def test_algorithm_page_renders_its_equations(tmp_path):
    checks = _checks("mlknn.html", tmp_path)
    assert checks["math_sources"] >= 4, checks
    assert checks["math_rendered"] >= checks["math_sources"] and checks["math_errors"] == 0, checks
    assert checks["code_overflow"] == [], checks["code_overflow"]


def test_gallery_has_a_real_thumbnail_per_example(tmp_path):
    checks = _checks("auto_examples/index.html", tmp_path)
    thumbs = [(src, ok) for src, ok in checks["images"] if src and "thumb" in src]
    n_examples = len(list((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py")))
    assert len(thumbs) >= n_examples >= 5, checks["images"]
    assert all(ok for _, ok in thumbs), thumbs
    # sphinx-gallery's placeholder for an example without a figure
    assert not any(src.endswith("no_image.png") for src, _ in thumbs), thumbs


def test_class_pages_show_no_private_base_and_document_every_parameter():
    page = (SITE / "api" / "generated" / "mlknn.MLkNN.html").read_text(encoding="utf-8")
    assert "_BayesCountsMixin" not in page and "Bases:" not in page
    for name in ("n_jobs", "metric", "neighbors", "smoothing"):
        assert re.search(rf"{name}</strong>.*?</dt>\s*<dd><p>\w", page, re.DOTALL), name
