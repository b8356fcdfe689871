"""Slow references for the tie rules of the ranking measures (mlknn.metrics ``ties=``).

Written from the definitions, one instance and one label at a time:

* "optimistic": the strict order that puts, within every group of equal
  scores, the relevant labels first;
* "average": one-error, coverage and ranking loss are the mean over **every**
  order of the tied labels (enumerated with itertools.permutations, so only
  for small groups); average precision takes, for each relevant label, its
  expected count of relevant labels at or above it over its expected rank;
* "mulan": Weka 3.7.12's ``Utils.stableSort`` as MULAN calls it
  (``MultiLabelOutput.ranksFromValues``): ascending sort, groups opened at a
  value not within 1e-6 of the group's first value, each group in ascending
  label index, rank = q - ascending position.

Degenerate instances (no or every label relevant) are left out, as in mlknn.
"""

import itertools

SMALL = 1e-6


def _kept(Y, S):
    out = []
    for y, s in zip(Y, S):
        y = [int(v) for v in y]
        if 0 < sum(y) < len(y):
            out.append((y, [float(v) for v in s]))
    return out


def _measures_of_order(y, order):
    """(one-error, coverage, ranking loss, average precision) of a strict order (best first)."""
    q = len(y)
    rank = {label: i + 1 for i, label in enumerate(order)}
    rel = [j for j in range(q) if y[j]]
    irr = [j for j in range(q) if not y[j]]
    oe = 0.0 if y[order[0]] else 1.0
    cov = max(rank[j] for j in rel) - 1.0
    bad = sum(1 for a in rel for b in irr if rank[a] > rank[b])
    rl = bad / (len(rel) * len(irr))
    ap = 0.0
    for a in rel:
        ap += sum(1 for b in rel if rank[b] <= rank[a]) / rank[a]
    return oe, cov, rl, ap / len(rel)


def _groups(s):
    """Labels grouped by equal score, best group first."""
    values = sorted(set(s), reverse=True)
    return [[j for j in range(len(s)) if s[j] == v] for v in values]


def mulan_order(s):
    q = len(s)
    asc = sorted(range(q), key=lambda j: s[j])
    out = []
    i = 0
    while i < q:
        group = [asc[i]]
        j = i + 1
        while j < q and s[asc[j]] - s[asc[i]] < SMALL and s[asc[i]] - s[asc[j]] < SMALL:
            group.append(asc[j])
            j += 1
        out.extend(sorted(group))
        i = j
    return out[::-1]  # rank q - position: best first


def ref_ranking(Y, S, ties):
    """The four ranking measures under a tie rule, averaged over the kept instances."""
    totals = [0.0, 0.0, 0.0, 0.0]
    kept = _kept(Y, S)
    for y, s in kept:
        if ties == "mulan":
            vals = _measures_of_order(y, mulan_order(s))
        elif ties == "optimistic":
            order = [j for g in _groups(s) for j in sorted(g, key=lambda j: -y[j])]
            vals = _measures_of_order(y, order)
        elif ties == "average":
            groups = _groups(s)
            acc = [0.0, 0.0, 0.0]
            count = 0
            for perm in itertools.product(*[itertools.permutations(g) for g in groups]):
                order = [j for g in perm for j in g]
                oe, cov, rl, _ = _measures_of_order(y, order)
                acc[0] += oe
                acc[1] += cov
                acc[2] += rl
                count += 1
            # Average precision: expected count over expected rank, per relevant label.
            ap = 0.0
            start = 0
            rel_before = 0
            for g in groups:
                r = sum(y[j] for j in g)
                for j in g:
                    if y[j]:
                        ap += (rel_before + (r + 1) / 2) / (start + (len(g) + 1) / 2)
                start += len(g)
                rel_before += r
            vals = (acc[0] / count, acc[1] / count, acc[2] / count, ap / sum(y))
        else:
            raise ValueError(ties)
        for i in range(4):
            totals[i] += vals[i]
    return tuple(t / len(kept) for t in totals)
