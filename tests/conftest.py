import os
from pathlib import Path

# numba (pynndescent's JIT) caches compiled code beside the sources, inside the virtual
# environment, so a fresh venv (CI recreates it) recompiled for about 7 minutes. A cache
# folder outside the venv survives it: numba keys the cache by the source's hash and
# folder, so a reinstall of the same version reuses it. Set before numba is imported (no
# test module is collected before this file); an explicit NUMBA_CACHE_DIR wins.
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "mlknn-numba"))

from collections import Counter  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def small_problem():
    """A small dense multi-label problem with distinct points (no distance ties)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6))
    W = rng.normal(size=(6, 4))
    Y = (X @ W + 0.3 * rng.normal(size=(80, 4)) > 0.4).astype(np.uint8)
    return X, Y


def data_home():
    """The benchmark-data folder, or None when MLKNN_DATA is unset."""
    path = os.environ.get("MLKNN_DATA")
    return Path(path) if path else None


@pytest.fixture
def data_dir():
    path = data_home()
    if path is None:
        pytest.skip("MLKNN_DATA is not set (CI always sets it)")
    return path


# ----------------------------------------------------------------- the quick subset
# `pytest -m "not slow"` leaves out the long equivalence sweeps, the dataset sweeps and
# the multi-process runs below: together about 85% of the suite's time, measured per test
# with --durations on the shared 2-core machine (each function listed took 3 s or more
# over its parametrisations). The full suite (README command 2, .ci/run) runs them all.
# Kept here, in one place, rather than as decorators spread over the files; a name that
# no longer matches a test is listed at the end of the run.
SLOW_MODULES = ("test_datasets_real.py", "test_distributed.py")
SLOW_TESTS = {
    "test_backend_registry.py": ("test_registered_backend_end_to_end",),
    "test_backends.py": (
        "test_float32_and_float64",
        "test_sorted_loo_and_query_contract",
        "test_sparse_input_supported_or_named_error",
    ),
    "test_compiled_kernel.py": (
        "test_compiled_equals_numpy_path_and_loop_on_ties_and_duplicates",
        "test_import_mlknn_does_not_import_numba_and_the_variable_disables_it",
        "test_mixed_dtypes_equal_the_numpy_path",
        "test_sparse_training_major_selection_equals_numpy_path_and_loop",
    ),
    "test_determinism.py": ("test_identical_across_processes_and_hash_seeds", "test_two_fits_identical"),
    "test_exact_kernel.py": ("test_small_problems_match_loop_reference",),
    "test_exact_loo.py": ("test_tiled_path_on_ragged_tiles_equals_plain_and_loop", "test_symmetric_equals_plain_random"),
    "test_experiments.py": (
        "test_approximate_search_records_its_recall",
        "test_killed_run_resumes_to_exactly_the_expected_rows",
        "test_parallel_run_equals_serial",
        "test_two_runs_writing_at_once",
    ),
    "test_experiments_sparse.py": ("test_an_extreme_classification_file_runs_by_path_with_sparse_labels",),
    "test_fetch.py": ("test_real_entries_against_local_mirror",),
    "test_fuzz_loaders.py": ("test_fuzz_hypothesis", "test_regression_nominal_check_agrees_with_liac"),
    "test_iblr.py": (
        "test_fit_from_graph_equals_fit",
        "test_matches_loop_reference",
        "test_matches_loop_reference_on_emotions",
    ),
    "test_logistic_batched.py": (
        "test_head_blocks_reach_the_optimum_and_a_full_head_is_the_exact_hessian",
        "test_rotated_unrotated_and_float32_products_reach_the_same_optimum",
        "test_tail_model_reaches_the_exact_optimum",
    ),
    "test_logistic_fused.py": ("test_each_pass_equals_its_numpy_expression",),
    "test_mlhiknn.py": ("test_ablation_variants_match_loop_and_differ_from_full_model",),
    "test_properties.py": (
        "test_label_permutation_equivariance",
        "test_predict_proba_finite_in_unit_interval",
        "test_row_permutation_invariance_without_ties",
    ),
    "test_radius_overflow.py": ("test_tiny_data_neighbours_and_counts_exact",),
    "test_small_selection.py": (
        "test_candidate_counts_around_the_rank_limit_equal_numpy_path",
        "test_vector_leaf_equals_the_scalar_leaf_and_numpy_bit_for_bit",
    ),
    "test_sparse_labels.py": ("test_sparse_labels_equal_dense_path", "test_sparse_path_allocates_nothing_of_shape_n_by_q"),
}
_unmatched_slow: set[tuple[str, str]] = set()


def pytest_collection_modifyitems(config, items):
    """Mark the tests of SLOW_MODULES and SLOW_TESTS ``slow``."""
    seen = set()
    for item in items:
        module = item.path.name
        name = getattr(item, "originalname", item.name)
        seen.add((module, name))
        if module in SLOW_MODULES or name in SLOW_TESTS.get(module, ()):
            item.add_marker(pytest.mark.slow)
    collected_modules = {module for module, _ in seen}
    _unmatched_slow.update(
        (module, name) for module, names in SLOW_TESTS.items() if module in collected_modules
        for name in names if (module, name) not in seen and not config.getoption("keyword")
        and not any("::" in str(arg) for arg in config.args)
    )  # fmt: skip


def _skip_reason(report):
    # A skip's longrepr is (path, line, "Skipped: reason"); a skipif's reason has no prefix.
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line per skip reason with its count, instead of one line per skipped test."""
    if _unmatched_slow:
        terminalreporter.section("tests/conftest.py: SLOW_TESTS names that match no test")
        for module, name in sorted(_unmatched_slow):
            terminalreporter.write_line(f"{module}::{name}")
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    counts = Counter(_skip_reason(report) for report in skipped)
    terminalreporter.section(f"{len(skipped)} skipped, by reason")
    for reason, count in sorted(_merge_by_subject(counts).items(), key=lambda item: (-item[1], item[0])):
        terminalreporter.write_line(f"{count:5d}  {reason}")


def _merge_by_subject(counts):
    """One line for a reason that only its first word varies in ("MLkNN does not have a
    decision_function method", "IBLR does not have ..."): "does not have ...: IBLR, MLkNN"."""
    by_tail = {}
    for reason in counts:
        subject, _, tail = reason.partition(" ")
        by_tail.setdefault(tail, []).append(subject)
    merged = Counter()
    for reason, count in counts.items():
        subject, _, tail = reason.partition(" ")
        subjects = by_tail[tail]
        key = f"{tail.rstrip('.')}: {', '.join(sorted(set(subjects)))}" if tail and len(subjects) >= 3 else reason
        merged[key] += count
    return merged
