"""Slow, obviously-correct reference implementations of the multi-label metrics.

Pure Python loops over instances and labels, written straight from the
formulas of Zhang & Zhou (2014, Knowl 3-4) with the conventions of
``docs/metrics.md``. Used only by the tests to check the vectorised code in
:mod:`mlknn.metrics`. Inputs are lists (or arrays) of 0/1 rows and of score
rows; outputs are floats, NaN where a metric is undefined.
"""

import math

NAN = float("nan")


def _rows(Y):
    return [[int(v) for v in row] for row in Y]


def _srows(S):
    return [[float(v) for v in row] for row in S]


def _label_set(row):
    return {j for j, v in enumerate(row) if v}


# ---------------------------------------------------------------- 0/0 rules


def ref_precision(tp, fp, fn):
    if tp + fp == 0:
        return 1.0 if fn == 0 else 0.0
    return tp / (tp + fp)


def ref_recall(tp, fp, fn):
    if tp + fn == 0:
        return 1.0 if fp == 0 else 0.0
    return tp / (tp + fn)


def ref_fbeta(tp, fp, fn, beta=1.0):
    if tp + fp + fn == 0:
        return 1.0
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


# ---------------------------------------------------------- example-based


def ref_hamming_loss(Y_true, Y_pred):
    Yt, Yp = _rows(Y_true), _rows(Y_pred)
    q = len(Yt[0])
    total = 0.0
    for t, p in zip(Yt, Yp):
        total += len(_label_set(t) ^ _label_set(p)) / q
    return total / len(Yt)


def ref_subset_accuracy(Y_true, Y_pred):
    Yt, Yp = _rows(Y_true), _rows(Y_pred)
    return sum(1.0 for t, p in zip(Yt, Yp) if t == p) / len(Yt)


def _per_instance(Y_true, Y_pred):
    for t, p in zip(_rows(Y_true), _rows(Y_pred)):
        T, P = _label_set(t), _label_set(p)
        yield len(T & P), len(P - T), len(T - P), T, P


def ref_example_accuracy(Y_true, Y_pred):
    vals = []
    for _, _, _, T, P in _per_instance(Y_true, Y_pred):
        vals.append(1.0 if not (T | P) else len(T & P) / len(T | P))
    return sum(vals) / len(vals)


def ref_example_precision(Y_true, Y_pred):
    vals = [ref_precision(tp, fp, fn) for tp, fp, fn, _, _ in _per_instance(Y_true, Y_pred)]
    return sum(vals) / len(vals)


def ref_example_recall(Y_true, Y_pred):
    vals = [ref_recall(tp, fp, fn) for tp, fp, fn, _, _ in _per_instance(Y_true, Y_pred)]
    return sum(vals) / len(vals)


def ref_example_f1(Y_true, Y_pred, beta=1.0):
    vals = [ref_fbeta(tp, fp, fn, beta) for tp, fp, fn, _, _ in _per_instance(Y_true, Y_pred)]
    return sum(vals) / len(vals)


# ---------------------------------------------------------- ranking-based


def _rank(scores, j):
    """Pessimistic rank: number of labels scoring at least as high as label j."""
    return sum(1 for s in scores if s >= scores[j])


def _kept(Y_true, Y_score):
    """Non-degenerate instances: at least one relevant and one irrelevant label."""
    out = []
    for t, s in zip(_rows(Y_true), _srows(Y_score)):
        T = _label_set(t)
        if 0 < len(T) < len(t):
            out.append((T, s))
    return out


def ref_one_error(Y_true, Y_score):
    kept = _kept(Y_true, Y_score)
    if not kept:
        return NAN
    errors = 0
    for T, s in kept:
        best = max(s)
        top = [j for j in range(len(s)) if s[j] == best]
        if any(j not in T for j in top):
            errors += 1
    return errors / len(kept)


def ref_coverage(Y_true, Y_score):
    kept = _kept(Y_true, Y_score)
    if not kept:
        return NAN
    total = 0.0
    for T, s in kept:
        total += max(_rank(s, j) for j in T) - 1
    return total / len(kept)


def ref_ranking_loss(Y_true, Y_score):
    kept = _kept(Y_true, Y_score)
    if not kept:
        return NAN
    total = 0.0
    for T, s in kept:
        F = [k for k in range(len(s)) if k not in T]
        bad = 0
        for j in T:
            for k in F:
                if s[j] <= s[k]:
                    bad += 1
        total += bad / (len(T) * len(F))
    return total / len(kept)


def ref_average_precision(Y_true, Y_score):
    kept = _kept(Y_true, Y_score)
    if not kept:
        return NAN
    total = 0.0
    for T, s in kept:
        acc = 0.0
        for j in T:
            rj = _rank(s, j)
            above = sum(1 for k in T if _rank(s, k) <= rj)
            acc += above / rj
        total += acc / len(T)
    return total / len(kept)


# ------------------------------------------------------------ label-based


def _label_counts(Y_true, Y_pred):
    Yt, Yp = _rows(Y_true), _rows(Y_pred)
    q = len(Yt[0])
    counts = []
    for j in range(q):
        tp = fp = fn = 0
        for t, p in zip(Yt, Yp):
            if t[j] and p[j]:
                tp += 1
            elif p[j] and not t[j]:
                fp += 1
            elif t[j] and not p[j]:
                fn += 1
        counts.append((tp, fp, fn))
    return counts


def ref_macro_precision(Y_true, Y_pred):
    c = _label_counts(Y_true, Y_pred)
    return sum(ref_precision(*x) for x in c) / len(c)


def ref_macro_recall(Y_true, Y_pred):
    c = _label_counts(Y_true, Y_pred)
    return sum(ref_recall(*x) for x in c) / len(c)


def ref_macro_f1(Y_true, Y_pred, beta=1.0):
    c = _label_counts(Y_true, Y_pred)
    return sum(ref_fbeta(*x, beta) for x in c) / len(c)


def _micro_counts(Y_true, Y_pred):
    c = _label_counts(Y_true, Y_pred)
    return sum(x[0] for x in c), sum(x[1] for x in c), sum(x[2] for x in c)


def ref_micro_precision(Y_true, Y_pred):
    return ref_precision(*_micro_counts(Y_true, Y_pred))


def ref_micro_recall(Y_true, Y_pred):
    return ref_recall(*_micro_counts(Y_true, Y_pred))


def ref_micro_f1(Y_true, Y_pred, beta=1.0):
    return ref_fbeta(*_micro_counts(Y_true, Y_pred), beta)


def _pair_auc(pos, neg):
    """Fraction of (positive, negative) score pairs ordered correctly; a tie counts 1/2."""
    good = 0.0
    for a in pos:
        for b in neg:
            if a > b:
                good += 1.0
            elif a == b:
                good += 0.5
    return good / (len(pos) * len(neg))


def ref_macro_auc(Y_true, Y_score):
    Yt, S = _rows(Y_true), _srows(Y_score)
    aucs = []
    for j in range(len(Yt[0])):
        pos = [S[i][j] for i in range(len(Yt)) if Yt[i][j]]
        neg = [S[i][j] for i in range(len(Yt)) if not Yt[i][j]]
        if pos and neg:
            aucs.append(_pair_auc(pos, neg))
    return sum(aucs) / len(aucs) if aucs else NAN


def ref_micro_auc(Y_true, Y_score):
    Yt, S = _rows(Y_true), _srows(Y_score)
    pos, neg = [], []
    for i in range(len(Yt)):
        for j in range(len(Yt[0])):
            (pos if Yt[i][j] else neg).append(S[i][j])
    return _pair_auc(pos, neg) if pos and neg else NAN


def ref_macro_accuracy(Y_true, Y_pred):
    Yt, Yp = _rows(Y_true), _rows(Y_pred)
    q = len(Yt[0])
    per_label = [sum(1 for t, p in zip(Yt, Yp) if t[j] == p[j]) / len(Yt) for j in range(q)]
    return sum(per_label) / q


def ref_micro_accuracy(Y_true, Y_pred):
    Yt, Yp = _rows(Y_true), _rows(Y_pred)
    right = sum(1 for t, p in zip(Yt, Yp) for a, b in zip(t, p) if a == b)
    return right / (len(Yt) * len(Yt[0]))


def ref_evaluate(Y_true, Y_pred, Y_score):
    """All metrics, keyed like :func:`mlknn.metrics.evaluate`."""
    return {
        "hamming_loss": ref_hamming_loss(Y_true, Y_pred),
        "subset_accuracy": ref_subset_accuracy(Y_true, Y_pred),
        "accuracy": ref_example_accuracy(Y_true, Y_pred),
        "precision": ref_example_precision(Y_true, Y_pred),
        "recall": ref_example_recall(Y_true, Y_pred),
        "f1": ref_example_f1(Y_true, Y_pred),
        "one_error": ref_one_error(Y_true, Y_score),
        "coverage": ref_coverage(Y_true, Y_score),
        "ranking_loss": ref_ranking_loss(Y_true, Y_score),
        "average_precision": ref_average_precision(Y_true, Y_score),
        "macro_precision": ref_macro_precision(Y_true, Y_pred),
        "macro_recall": ref_macro_recall(Y_true, Y_pred),
        "macro_f1": ref_macro_f1(Y_true, Y_pred),
        "micro_precision": ref_micro_precision(Y_true, Y_pred),
        "micro_recall": ref_micro_recall(Y_true, Y_pred),
        "micro_f1": ref_micro_f1(Y_true, Y_pred),
        "macro_auc": ref_macro_auc(Y_true, Y_score),
        "micro_auc": ref_micro_auc(Y_true, Y_score),
        "macro_accuracy": ref_macro_accuracy(Y_true, Y_pred),
        "micro_accuracy": ref_micro_accuracy(Y_true, Y_pred),
    }


def same(a, b, tol=1e-12):
    """Equal within ``tol``, NaN equal to NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
