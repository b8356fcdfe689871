"""Shared helpers of the benchmarks: machine description, timers, tables."""

import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np


def machine_info():
    """A dict describing the machine and the software stack of this run."""
    info = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _mem_gb(),
        "numpy": np.__version__,
    }
    try:
        from threadpoolctl import threadpool_info

        blas = [f"{p['internal_api']} {p.get('version', '')} ({p['num_threads']} threads, "
                f"{p.get('architecture', '?')})" for p in threadpool_info() if p["user_api"] == "blas"]
        info["blas"] = "; ".join(blas)
    except Exception:  # pragma: no cover - informational only
        pass
    for mod in ("scipy", "sklearn", "faiss", "hnswlib", "pynndescent", "skmultilearn"):
        try:
            m = __import__(mod)
            info[mod] = getattr(m, "__version__", "installed")
        except Exception:
            info[mod] = "not installed"
    info["loadavg_start"] = load_average()
    return info


def back_guest_memory(gib=8.0, chunk_mib=256):
    """Touch ``gib`` GiB of fresh memory once, then free it; returns its GiB/s.

    On a virtual machine that backs guest memory lazily (this project's
    firecracker VMs), the first touch of guest memory never used since boot
    costs about 2.6 s/GiB, against 0.18 s/GiB once the host backs it (measured
    2026-12-02 with ``np.ones(2**27)``: 2,657 ms the first time, 177-182 ms
    after). A benchmark child would pay that for whatever part of its peak RSS
    happened to land on never-used pages, so its time would depend on which
    runs came before it, and an estimator with a large footprint would pay
    15x the page-fault cost of a normal machine. Touching the memory once up
    front puts every run in the steady state. Capped at half the available
    memory.
    """
    try:
        with open("/proc/meminfo") as f:
            avail = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable")) / 2**20
        gib = min(gib, avail / 2)
    except (OSError, StopIteration):  # pragma: no cover - not Linux
        pass
    chunks = max(0, int(gib * 1024 // chunk_mib))
    t = time.perf_counter()
    held = []
    for _ in range(chunks):
        held.append(np.ones(chunk_mib * 2**20 // 8))
    del held
    dt = time.perf_counter() - t
    return chunks * chunk_mib / 1024 / dt if dt > 0 else float("inf")


def load_average():
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_gb():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return "?"


def timed(fn, *args, **kwargs):
    """(seconds, result) of one call."""
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, out


def best_of_interleaved(fns, repeats, once=()):
    """Run every callable of ``fns`` (a dict) once per round, ``repeats`` rounds.

    Interleaving makes the competitors share whatever else the machine is doing;
    the minimum over rounds is the least disturbed run. Names in ``once`` run in
    the first round only (slow references). Returns {name: seconds}.
    """
    best = {name: float("inf") for name in fns}
    for round_ in range(repeats):
        for name, fn in fns.items():
            if fn is None or (round_ > 0 and name in once):
                continue
            t, _ = timed(fn)
            best[name] = min(best[name], t)
    return {name: (None if fn is None else best[name]) for name, fn in fns.items()}


def gemm_only(X, rows=1024):
    """The matrix products of an exact all-pairs search and nothing else.

    X @ X.T chunk by chunk (``rows`` queries at a time, one reused output buffer):
    exactly 2 n^2 d flops at this machine's GEMM throughput for this shape. Its
    time is the lower bound an exact GEMM-based kNN search is compared with.
    """
    n = X.shape[0]
    rows = min(rows, n)
    out = np.empty((rows, n), dtype=X.dtype)
    for start in range(0, n, rows):
        A = X[start : start + rows]
        np.matmul(A, X.T, out=out[: A.shape[0]])


_SQUARE = {}


def square_gemm(size=4096, dtype=np.float32):
    """One ``size x size`` by ``size x size`` product (2 size^3 flops) into a reused buffer.

    The machine's near-peak matrix-multiply rate: every dimension is large, so
    packing and the output's traffic are amortised. The exact kernel's own GEMM is
    skinny (K = d + 1): ``gemm_only`` measures that shape, this one the hardware.
    """
    key = (size, np.dtype(dtype))
    if key not in _SQUARE:
        rng = np.random.default_rng(0)
        A = rng.standard_normal((size, size)).astype(dtype)
        _SQUARE[key] = (A, np.empty_like(A))
    A, out = _SQUARE[key]
    np.matmul(A, A, out=out)


def square_gemm_gflops(seconds, size=4096):
    return 2.0 * size**3 / seconds / 1e9


def gemm_gflops(d, n, dtype=np.float32, rows=1024, repeats=3):
    """Matrix-multiply throughput (GFLOP/s) of (rows x d) @ (d x n), best of ``repeats``.

    This is the GEMM shape a chunked exact kNN search runs; 2 rows n d flops each.
    """
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)).astype(dtype)
    A = np.ascontiguousarray(X[:rows])
    out = np.empty((rows, n), dtype=dtype)
    np.matmul(A, X.T, out=out)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        np.matmul(A, X.T, out=out)
        best = min(best, time.perf_counter() - t)
    return 2.0 * rows * n * d / best / 1e9


def markdown_table(header, rows):
    def fmt(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            if v != v:
                return "-"
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
        return str(v)

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def run_subprocess(code, timeout=1800):
    """Run ``code`` in a fresh interpreter (same venv); return its stdout.

    Started through ``/bin/sh`` (which forks it): on Linux a process's
    ``ru_maxrss`` starts from its parent's peak RSS at fork, so a child forked
    straight from this (large) benchmark process would report our peak, not its own.
    """
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
        path = f.name
    try:
        cmd = ["/bin/sh", "-c", '"$0" "$1"; exit $?', sys.executable, path]
        if not os.path.exists("/bin/sh"):
            cmd = [sys.executable, path]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        os.unlink(path)
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])
    return res.stdout


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)
