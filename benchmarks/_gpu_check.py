"""The leave-one-out graph on the GPU with torch and faiss-gpu (called by gpu_check.sh).

``--probe`` prints why the GPU backends cannot run and exits 1, or exits 0 silently.
Otherwise: clustered float32 points (n x d), the exact leave-one-out graph (k = 10)
with ``neighbors="torch"`` and ``neighbors="faiss-gpu"``, each timed from fit to
graph; the graphs must be identical (both are exact, ties by index). Prints one
markdown row per backend.
"""

import argparse
import sys
import time

import numpy as np


def probe() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed: pip install 'mlknn[gpu]'"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    try:
        import faiss
    except ImportError:
        return "faiss is not installed: pip install 'mlknn[gpu]'"
    if not hasattr(faiss, "StandardGpuResources") or faiss.get_num_gpus() < 1:
        return "faiss has no GPU support or sees no GPU (pip uninstall faiss-cpu; pip install 'mlknn[gpu]')"
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=128)
    args = parser.parse_args()
    if args.probe:
        reason = probe()
        if reason:
            print(reason)
            sys.exit(1)
        return
    from mlknn.neighbors import build_graph, get_backend

    rng = np.random.default_rng(0)
    centers = rng.standard_normal((1000, args.d)).astype(np.float32)
    X = centers[rng.integers(0, 1000, args.n)] + 0.5 * rng.standard_normal((args.n, args.d), dtype=np.float32)
    graphs = {}
    for name in ("torch", "faiss-gpu"):
        start = time.perf_counter()
        graphs[name] = build_graph(get_backend(name).fit(X), None, 10)
        seconds = time.perf_counter() - start
        print(f"| LOO graph, n = {args.n:,}, d = {args.d}, k = 10 | {name} | {seconds:.1f} s |", flush=True)
    same = np.array_equal(graphs["torch"].indices, graphs["faiss-gpu"].indices)
    print(f"| torch and faiss-gpu graphs identical | {same} |")


if __name__ == "__main__":
    main()
