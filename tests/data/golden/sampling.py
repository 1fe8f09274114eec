"""Generates sampling.json: the reference figures for tandem::stats::sampling.

Run: python3 tests/data/golden/sampling.py > tests/data/golden/sampling.json
(scipy; the version used is written into the file).

* plan: the binomial single sampling plan found by exact search with scipy.stats.binom:
  of the plans (n, c) with P(accept | AQL) >= 1 - alpha and P(accept | RQL) <= beta,
  the smallest n, then the smallest c; accept means at most c defects in the sample.
* bound: the exact one-sided (Clopper-Pearson) upper bound on the defect rate,
  scipy.stats.binomtest(k, n, alternative="less").proportion_ci(confidence, "exact").high.
* zero: the smallest n whose bound with no defect found is at most p.
"""
import json
import scipy
from scipy.stats import binom, binomtest


def plan(aql, rql, alpha, beta, n_max=200000):
    c = 0
    for n in range(1, n_max + 1):
        # The smallest acceptance number that the AQL's risk allows at this n.
        while binom.cdf(c, n, aql) < 1 - alpha:
            c += 1
        if binom.cdf(c, n, rql) <= beta:
            return {"n": n, "c": c,
                    "accept_at_aql": float(binom.cdf(c, n, aql)),
                    "accept_at_rql": float(binom.cdf(c, n, rql))}
    raise ValueError("no plan")


def bound(k, n, confidence):
    ci = binomtest(k, n, alternative="less").proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.high)


def zero(p, confidence):
    n = 1
    while bound(0, n, confidence) > p:
        n += 1
    return n


plans = [
    (0.01, 0.05, 0.05, 0.10),
    (0.005, 0.03, 0.05, 0.10),
    (0.02, 0.08, 0.05, 0.10),
    (0.01, 0.10, 0.05, 0.05),
    (0.05, 0.15, 0.05, 0.10),
    (0.001, 0.01, 0.05, 0.10),
    (0.10, 0.30, 0.10, 0.10),
    (0.02, 0.05, 0.05, 0.05),
]
bounds = [(3, 200, 0.95), (0, 300, 0.95), (0, 1, 0.95), (5, 5, 0.95), (10, 1000, 0.99),
          (1, 50, 0.90), (25, 100, 0.95), (7, 2040, 0.95), (0, 29, 0.95), (49, 50, 0.99)]
zeros = [(0.01, 0.95), (0.05, 0.95), (0.001, 0.99), (0.10, 0.90), (0.02, 0.95), (0.03, 0.99)]

out = {
    "schema_version": 1,
    "library_versions": {"scipy": scipy.__version__},
    "tolerance": {"abs": 1e-9, "rel": 1e-9},
    "plan": [dict(aql=a, rql=r, alpha=al, beta=b, expected=plan(a, r, al, b)) for a, r, al, b in plans],
    "bound": [dict(defects=k, n=n, confidence=c, upper=bound(k, n, c)) for k, n, c in bounds],
    "zero": [dict(p=p, confidence=c, n=zero(p, c)) for p, c in zeros],
}
print(json.dumps(out, indent=1))
