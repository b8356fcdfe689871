"""Run mlknn's performance benchmarks and write benchmarks/results.md.

Usage (from the repository root, with the package installed)::

    python benchmarks/run.py            # everything but the NUS-WIDE-scale run
    python benchmarks/run.py --quick    # a few minutes on 2 cores
    python benchmarks/run.py --full     # adds the 270k-point approximate run (minutes)
    python benchmarks/run.py --only graph,skml   # some sections

Sections: ``graph`` (exact training graph vs the square- and skinny-GEMM bounds,
scikit-learn and the first version), ``threads`` (the graph with 1 and 2 BLAS
threads), ``sparse`` (tmc2007-500's training graph vs its own sparse product, one-thread
CPU time), ``skml`` (MLkNN vs scikit-multilearn; needs scikit-multilearn and the
datasets), ``small`` (MLkNN on yeast's seeded 50/50 split vs scikit-multilearn and
its two GEMMs), ``estimators`` (every kNN estimator per dataset), ``memory`` (peak RSS
vs input size, and of every kNN estimator on tmc2007-500), ``grid`` (seed 001's kNN
grid end to end: cost per cell), ``nuswide`` (``--full``). The benchmark datasets are read from
``$MLKNN_DATA`` (default ``../shared/datasets`` relative to the repository root).
Competitors are timed interleaved, in the same run, and reported as ratios: the
machine may be shared, so absolute seconds vary; the load average is recorded.
"""

import argparse
import importlib.util
import json
import os
import sys
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import back_guest_memory, load_average, log, machine_info  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, fewer repeats (a few minutes)")
    p.add_argument("--full", action="store_true", help="also the NUS-WIDE-scale approximate run")
    p.add_argument("--only", default="", help="comma-separated sections to run")
    p.add_argument("--output", default=str(HERE / "results.md"))
    args = p.parse_args(argv)

    if "MLKNN_DATA" not in os.environ:
        default = HERE.parent.parent / "shared" / "datasets"
        if default.exists():
            os.environ["MLKNN_DATA"] = str(default)
    sections = ["graph", "threads", "sparse", "skml", "small", "estimators", "memory", "grid"] + (["nuswide"] if args.full else [])
    if args.only:
        sections = [s for s in args.only.split(",") if s]
    info = machine_info()
    mode = "quick" if args.quick else ("full" if args.full else "default")
    log(f"mode {mode}; sections {sections}; load average {info['loadavg_start']}")
    # The VM's first touch of never-used guest memory costs 2.6 s/GiB (see back_guest_memory).
    info["memory_backed"] = f"8 GiB touched first at {back_guest_memory(8.0):.1f} GiB/s"
    log(info["memory_backed"])
    results, tables = {}, []
    t0 = time.perf_counter()

    try:
        if "graph" in sections:
            import bench_graph

            sizes = (5000, 20000) if args.quick else (5000, 20000, 50000)
            results["graph"] = bench_graph.run(sizes=sizes, repeats=1 if args.quick else None, cpu_check=not args.quick)
            tables.append(("Exact leave-one-out training graph (d = 120, float32, k = 10)",
                           bench_graph.table(results["graph"]), _graph_note(results["graph"])))
        if "threads" in sections:
            import bench_graph

            results["threads"] = bench_graph.thread_scaling(n=10000 if args.quick else 20000)
            tables.append(("Thread scaling of the exact leave-one-out graph (d = 120, float32, k = 10)",
                           bench_graph.thread_table(results["threads"]),
                           "Efficiency = t(1 thread) / (2 x t(2 threads)); on a shared machine the second core "
                           "is only as free as the load average says."))
        if "sparse" in sections:
            import bench_graph

            results["sparse"] = bench_graph.sparse_graph(repeats=2 if args.quick else 3)
            tables.append(("Sparse training graph: tmc2007-500 against its own product (one-thread CPU time)",
                           bench_graph.sparse_table(results["sparse"]),
                           textwrap.dedent(bench_graph.sparse_graph.__doc__.split("\n\n", 1)[1]).strip()))
        if "skml" in sections:
            if importlib.util.find_spec("skmultilearn") is None:
                tables.append(("MLkNN vs scikit-multilearn", "skipped: pip install scikit-multilearn", ""))
            else:
                import bench_skml

                if args.quick:  # tmc2007-500 on a subset: scikit-multilearn alone takes minutes on it
                    results["skml"] = bench_skml.run(("yeast",), repeats=3)
                    results["skml"] += bench_skml.run(("tmc2007-500",), repeats=1, max_train=6000, max_test=2000)
                else:
                    results["skml"] = bench_skml.run(repeats=3)
                tables.append(("MLkNN vs scikit-multilearn (k = 10, fixed train/test split)",
                               bench_skml.table(results["skml"]), "Why" + bench_skml.__doc__.split("Why", 1)[1]))
        if "small" in sections and importlib.util.find_spec("skmultilearn") is not None:
            import bench_skml

            results["small"] = [bench_skml.run_small("yeast", repeats=3 if args.quick else 7)]
            tables.append(("Small problems: MLkNN on yeast's seeded 50/50 split (k = 10)",
                           bench_skml.small_table(results["small"]),
                           textwrap.dedent(bench_skml.run_small.__doc__.split("\n\n", 1)[1]).split("\n\n")[0]))
        if "estimators" in sections:
            import bench_estimators

            ds = ("emotions", "yeast", "scene") if args.quick else ("emotions", "yeast", "scene", "tmc2007-500")
            results["estimators"] = bench_estimators.run(datasets=ds, repeats=1 if args.quick else 2)
            tables.append(("Fit + predict of every kNN estimator (k = 10, default backend)",
                           bench_estimators.table(results["estimators"]), ""))
        if "memory" in sections:
            import bench_memory

            sizes = (5000, 10000, 20000) if args.quick else (5000, 10000, 20000, 40000)
            results["memory"] = bench_memory.run(sizes=sizes)
            tables.append(("Peak RSS of MLkNN fit + predict (d = 120 float32, q = 20, test = n / 4)",
                           bench_memory.table(results["memory"]), ""))
            names = ["mlknn", "mlhiknn"] if args.quick else None  # None: every kNN estimator
            results["memory_estimators"] = bench_memory.run_estimators("tmc2007-500", names=names)
            tables.append(("Peak RSS of each kNN estimator's fit + predict on tmc2007-500 (k = 10, sparse input)",
                           bench_memory.table_estimators(results["memory_estimators"]),
                           "Target: MLHiKNN under 1.5 GB peak RSS. `ru_maxrss` includes loading the data."))
        if "grid" in sections:
            import bench_grid

            if args.quick:  # a documented subset: one dataset, two algorithms, two k, one repetition
                results["grid"] = bench_grid.run(("emotions",), algorithms=("mlknn", "brknna"), k=(5, 10), n_repeats=1)
            else:
                results["grid"] = bench_grid.run()
            tables.append(("Seed 001's kNN grid end to end (5 algorithms x 5 k x 5 x 2 CV)" +
                           (" - quick subset" if args.quick else ""), bench_grid.table(results["grid"]),
                           bench_grid.__doc__.split("\n\n")[1]))
        if "nuswide" in sections:
            import bench_nuswide

            results["nuswide"] = bench_nuswide.run()
            r = results["nuswide"]
            tables.append((f"NUS-WIDE scale, approximate backends ({r['n_train']} train + {r['n_test']} test, "
                           f"d = {r['d']}, q = {r['q']}, cardinality {r['cardinality']:.2f})",
                           bench_nuswide.table(r),
                           f"Data generated in {r['data_s']:.0f}s; exact neighbours of the sampled rows "
                           f"took {r['exact_sample_s']:.0f}s (not counted)."))

    except Exception as exc:  # keep the sections already measured: write them, then fail
        failed = f"{type(exc).__name__}: {exc}"
        log(f"section failed: {failed}")
        tables.append(("A section failed; the run stopped here", f"`{failed}`", ""))
        raise
    finally:
        info["loadavg_end"] = load_average()
        info["total_minutes"] = round((time.perf_counter() - t0) / 60, 1)
        _write(Path(args.output), info, mode, tables)
        with open(Path(args.output).with_suffix(".json"), "w") as f:
            json.dump({"machine": info, "mode": mode, "results": results}, f, indent=1, default=str)
    for title, table, _ in tables:  # the ratios on the terminal too, not only in the file
        print(f"\n## {title}\n\n{table}", flush=True)
    log(f"wrote {args.output} ({info['total_minutes']} min)")


def _graph_note(rows):
    out = []
    for r in rows:
        cpu = "" if r.get("cpu_ratio") is None else f", {r['cpu_ratio']:.2f}x in one-thread CPU time"
        if r.get("cpu_ratio_square") is not None:
            cpu += (f"; one-thread CPU time over the square-GEMM bound {r['cpu_ratio_square']:.2f}x "
                    f"(the plain path, each pair computed twice: {r['cpu_ratio_square_plain']:.2f}x)")
        half = "" if r.get("half_s") is None else (
            f" (its own half product alone: {r['half_over_square']:.2f}x the square bound; the rest "
            f"{r['ratio_half']:.2f}x the half product)")
        out.append(f"n = {r['n']}: mlknn brute at {r['ratio_square']:.2f}x the square-GEMM bound{half} and "
                   f"{r['ratio_bound']:.2f}x the skinny-GEMM bound{cpu} "
                   f"(v0: {r['legacy_ratio_bound']:.2f}x), {r['sklearn_over_ours']:.2f}x faster than "
                   "scikit-learn brute" + ("" if r["faiss_over_ours"] is None else
                                           f", faiss exact / mlknn brute = {r['faiss_over_ours']:.2f}"))
    return "; ".join(out) + "."


def _write(path, info, mode, tables):
    lines = ["# mlknn benchmark results", "",
             f"Generated by `python benchmarks/run.py` ({mode} mode) on {info['date']}.", "",
             "## Machine", ""]
    for key in ("cpu", "cores", "memory_gb", "platform", "python", "numpy", "blas", "scipy", "sklearn",
                "faiss", "hnswlib", "pynndescent", "skmultilearn", "memory_backed", "loadavg_start", "loadavg_end",
                "total_minutes"):
        if key in info:
            lines.append(f"- {key}: {info[key]}")
    lines.append("")
    for title, table, note in tables:
        lines += [f"## {title}", "", table, ""]
        if note:
            lines += [note.strip(), ""]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
