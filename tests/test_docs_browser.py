"""The documentation site in a real browser: headless Chromium at 1280 px.

Reads a built site (``$MLKNN_DOCS_HTML``, default ``docs/_build/html``); ``.ci/run`` runs this
file again right after it builds the site, so CI always checks the site it just built. Without
a built site, or without Chromium, the tests skip, saying what to do.

Each page is loaded from a copy that has a ``<base>`` pointing at the site (so its styles,
images and scripts load) and a small script that, once the page has loaded, writes what it
sees into the DOM (``--dump-dom`` returns the DOM after the scripts ran): the page width,
images that did not decode, code blocks wider than their box, and the rendered math.

MathJax: the site loads it from a CDN, which CI cannot reach; ``.ci/run`` builds it with a
local MathJax (``MLKNN_DOCS_MATHJAX``, Debian's ``libjs-mathjax``), and a site built with
the CDN's is checked with the local one swapped in. That checks what the site controls: the
equations reach the page as math markup that MathJax typesets, within the page's width, with
no ``$`` left over from the Markdown.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("MLKNN_DOCS_HTML") or ROOT / "docs" / "_build" / "html")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
MATHJAX = Path("/usr/share/javascript/mathjax/MathJax.js")
WIDTH = 1280
#: The user guide's algorithm pages, each with its equations.
ALGORITHM_PAGES = ["mlknn.html", "dmlknn.html", "mlhiknn.html", "bmlknn.html", "brknn.html", "iblr.html",
                   "hubness.html"]
#: Every page whose equations are written as math, the algorithm pages included.
MATH_PAGES = [*ALGORITHM_PAGES, "metrics.html", "extreme.html", "baselines.html"]

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: apt-get install -y chromium"),
    pytest.mark.skipif(not (SITE / "index.html").is_file(),
                       reason=f"no built docs site in {SITE}: build it with sphinx-build (see .ci/run)"),
]

_CHECKS = """
<script>
function mlknnChecks() {
    var doc = document.documentElement;
    var main = document.querySelector('article') || document.body;
    var imgs = Array.prototype.slice.call(document.images);
    var pres = Array.prototype.slice.call(main.querySelectorAll('pre'));
    var text = main.textContent;
    var out = {
      title: document.title,
      viewport: window.innerWidth,
      page_width: Math.max(doc.scrollWidth, document.body.scrollWidth),
      images: imgs.map(function (i) { return i.getAttribute('src'); }),
      broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                  .map(function (i) { return i.getAttribute('src'); }),
      wide_code: pres.filter(function (p) { return p.scrollWidth > p.clientWidth + 1; })
                     .map(function (p) { return p.textContent.split('\\n')[0].slice(0, 60); }),
      math: main.querySelectorAll('.math').length,
      wide_math: Array.prototype.slice.call(main.querySelectorAll('.MJXc-display, mjx-container[display]'))
                      .filter(function (m) { return m.scrollWidth > m.clientWidth + 1; })
                      .map(function (m) { return m.textContent.trim().slice(0, 60); }),
      typeset: main.querySelectorAll('.MathJax_CHTML, .MathJax, mjx-container').length,
      dollars: (text.match(/\\$\\$/g) || []).length,
      links: Array.prototype.slice.call(document.querySelectorAll('a[href]'))
                  .map(function (a) { return a.getAttribute('href'); }),
      tables: Array.prototype.slice.call(main.querySelectorAll('table.autosummary')).map(function (t) {
        return Array.prototype.slice.call(t.querySelectorAll('tr')).map(function (r) {
          return Array.prototype.slice.call(r.cells).map(function (c) { return c.textContent.trim(); });
        });
      }),
      params: Array.prototype.slice.call(main.querySelectorAll('dl.field-list > dd dt')).map(function (dt) {
        var dd = dt.nextElementSibling;
        return [dt.querySelector('strong') ? dt.querySelector('strong').textContent : dt.textContent,
                dd && dd.tagName === 'DD' ? dd.textContent.trim() : ''];
      }),
      text: text
    };
    var pre = document.createElement('div');
    pre.id = 'mlknn-checks';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
}
window.addEventListener('load', function () {
  // MathJax 2 typesets after the page has loaded: wait until its queue is empty (20 s at most).
  var waited = 0;
  (function poll() {
    var hub = window.MathJax && window.MathJax.Hub;
    var busy = hub && !(window.MathJax.isReady && hub.queue.pending === 0 && !hub.queue.running);
    if (busy && waited < 20000) { waited += 200; setTimeout(poll, 200); } else { mlknnChecks(); }
  })();
});
</script>
"""


def _load(page, tmp_path):
    """Open ``page`` (relative to the site) in Chromium; return what the script saw."""
    html = (SITE / page).read_text(encoding="utf-8")
    base = (SITE / page).parent.as_uri() + "/"
    html = html.replace("<head>", f'<head><base href="{base}">', 1)
    local = MATHJAX.as_uri() + "?config=TeX-AMS_CHTML" if MATHJAX.is_file() else None
    if local:
        # The site's MathJax (version 4) and its configuration give way to the local version 2,
        # configured the same way: typeset what Sphinx marks "math", although the theme marks
        # the rest of the page as not to be typeset.
        config = ('<script type="text/x-mathjax-config">MathJax.Hub.Config({tex2jax: '
                  '{processClass: "math|tex2jax_process"}});</script>')
        html = re.sub(r"<script>window.MathJax = .*?</script>", "", html, flags=re.DOTALL)
        html = re.sub(r'<script[^>]*src="[^"]*mathjax[^"]*"[^>]*></script>',
                      f'{config}<script src="{local}"></script>', html)
    copy = tmp_path / ("check-" + page.replace("/", "-"))
    copy.write_text(html.replace("</body>", _CHECKS + "</body>"), encoding="utf-8")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--allow-file-access-from-files", f"--user-data-dir={tmp_path / 'profile'}",
           f"--window-size={WIDTH},2000", "--hide-scrollbars", "--virtual-time-budget=60000",
           "--dump-dom", copy.as_uri()]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    m = re.search(r'<div id="mlknn-checks">(.*?)</div>', res.stdout, re.DOTALL)
    assert m, f"{page}: no checks in the DOM (chromium rc={res.returncode}): {res.stderr[-2000:]}"
    raw = m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    checks = json.loads(raw)
    assert checks["viewport"] == WIDTH
    assert checks["page_width"] <= WIDTH, f"{page} is wider than the window: {checks['page_width']} px"
    assert checks["broken"] == [], f"{page}: images that do not load: {checks['broken']}"
    return checks


def test_index_links_the_guide_the_gallery_and_the_api(tmp_path):
    checks = _load("index.html", tmp_path)
    assert "mlknn" in checks["title"]
    for target in ("user_guide.html", "auto_examples/index.html", "api/index.html", "mlknn.html"):
        assert any(href.split("#")[0].endswith(target) for href in checks["links"]), target


@pytest.mark.skipif(not MATHJAX.is_file(), reason="no local MathJax: apt-get install -y libjs-mathjax")
@pytest.mark.parametrize("page", MATH_PAGES)
def test_page_renders_its_equations(page, tmp_path):
    checks = _load(page, tmp_path)
    assert checks["math"] >= 5, f"{page}: only {checks['math']} equations in the page"
    assert checks["typeset"] >= checks["math"], f"{page}: MathJax typeset {checks['typeset']} of {checks['math']}"
    assert checks["dollars"] == 0, f"{page}: '$$' left in the text (dollarmath not applied)"
    assert checks["wide_math"] == [], f"{page}: equations wider than the page: {checks['wide_math']}"
    if page in ALGORITHM_PAGES:
        assert checks["wide_code"] == [], f"{page}: code wider than its box: {checks['wide_code']}"


def test_gallery_has_a_real_thumbnail_per_example(tmp_path):
    checks = _load("auto_examples/index.html", tmp_path)
    examples = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))
    thumbs = [src for src in checks["images"] if "thumb" in src]
    assert len(thumbs) == len(examples) >= 5, (thumbs, examples)
    placeholders = [src for src in thumbs if "no_image" in src]
    assert placeholders == [], f"placeholder thumbnails: {placeholders}"


@pytest.mark.parametrize("example", sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py")))
def test_gallery_code_fits_the_page(example, tmp_path):
    checks = _load(f"auto_examples/{example}.html", tmp_path)
    assert checks["wide_code"] == [], f"{example}: code lines wider than the page: {checks['wide_code']}"


def test_api_index_lists_the_packages(tmp_path):
    checks = _load("api/index.html", tmp_path)
    packages = {href.split("#")[0] for href in checks["links"] if re.fullmatch(r"mlknn(\.\w+)*\.html", href.split("#")[0])}
    assert len(packages) >= 10, packages


@pytest.mark.parametrize("package", ["mlknn", "mlknn.metrics", "mlknn.neighbors"])
def test_api_package_page_has_a_summary_for_every_name(package, tmp_path):
    checks = _load(f"api/{package}.html", tmp_path)
    rows = [row for table in checks["tables"] for row in table]
    assert len(rows) >= 5, rows
    empty = [row[0] for row in rows if len(row) < 2 or not row[1]]
    assert empty == [], f"names without a one-line summary: {empty}"


def test_class_page_shows_no_private_base_and_documents_every_parameter(tmp_path):
    checks = _load("api/generated/mlknn.MLkNN.html", tmp_path)
    assert "_BayesCountsMixin" not in checks["text"] and "Bases:" not in checks["text"]
    described = dict(checks["params"])
    for name in ("n_neighbors", "smoothing", "neighbors", "metric", "n_jobs", "hubness", "variant"):
        assert name in described, f"{name} missing from the Parameters"
        assert len(described[name]) > 10, f"{name} has no description: {described[name]!r}"
