#!/usr/bin/env python3
"""Cross-check gpuforecast's split-conformal and CQR intervals against MAPIE on the same residuals.

Usage:
    conformal_dump residuals.csv          # C++ program from benchmarks/conformal_dump.cpp
    python3 crosscheck.py residuals.csv   # needs `pip install mapie` (tested with MAPIE 1.6)

The dump holds, for a calibration set and a test set of one real space, the observed runtime,
the surrogate's median, 5%/95% quantiles and spread, and our intervals. MAPIE gets the same
calibration residuals through "prefit" estimators that return the dumped predictions:
  - split conformal on normalised residuals |log t - log t_hat| / s is MAPIE's absolute score
    on y = log(t) / s with prediction log(t_hat) / s; the interval maps back to ms per point as
    t_hat * exp(+-q s);
  - CQR in log space: MAPIE's ConformalizedQuantileRegressor on y = log t with the 5%/95%/50%
    heads as its three prefit quantile estimators, symmetric correction; exp() gives ms.
Prints both mean widths (ms) and coverages; exits 1 if a width differs by more than 1%.
"""
import sys

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from mapie.regression import ConformalizedQuantileRegressor, SplitConformalRegressor


class Fixed(RegressorMixin, BaseEstimator):
    """A 'fitted' regressor whose prediction for row i is values[i] (X holds the row index)."""

    def __init__(self, values=None):
        self.values = values

    def fit(self, X, y=None):
        self.fitted_ = True
        return self

    def predict(self, X):
        return np.asarray(self.values)[np.asarray(X)[:, 0].astype(int)]


def load(path):
    rows = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    return rows


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    d = load(sys.argv[1])
    alpha = float(d["alpha"][0])
    cal = d["set"] == "cal"
    test = ~cal
    idx = np.arange(len(d)).reshape(-1, 1).astype(float)
    t = d["observed_ms"]
    med, lo, hi, s = d["median_ms"], d["lower_ms"], d["upper_ms"], d["spread"]

    # Split conformal on normalised log residuals.
    y = np.log(t) / s
    pred = Fixed(np.log(med) / s).fit(idx)
    split = SplitConformalRegressor(estimator=pred, confidence_level=1 - alpha, prefit=True)
    split.conformalize(idx[cal], y[cal])
    _, iv = split.predict_interval(idx[test])
    q = (iv[:, 1, 0] - iv[:, 0, 0]) / 2  # half width in normalised units: the quantile
    split_low = med[test] * np.exp(-q * s[test])
    split_high = med[test] * np.exp(q * s[test])

    # CQR in log space on the quantile head.
    ylog = np.log(t)
    heads = [Fixed(np.log(lo)).fit(idx), Fixed(np.log(hi)).fit(idx), Fixed(np.log(med)).fit(idx)]
    cqr = ConformalizedQuantileRegressor(estimator=heads, confidence_level=1 - alpha, prefit=True)
    cqr.conformalize(idx[cal], ylog[cal])
    # Our CQR is Romano et al.'s symmetric one (one quantile of max(lo - y, y - hi)); MAPIE's
    # default corrects each side separately, so ask for the symmetric correction.
    _, iv_q = cqr.predict_interval(idx[test], symmetric_correction=True)
    cqr_low, cqr_high = np.exp(iv_q[:, 0, 0]), np.exp(iv_q[:, 1, 0])

    tt = t[test]
    rows = [
        ("split", d["split_low_ms"][test], d["split_high_ms"][test], split_low, split_high),
        ("CQR", d["cqr_low_ms"][test], d["cqr_high_ms"][test], cqr_low, cqr_high),
    ]
    print(f"calibration {cal.sum()} points, test {test.sum()} points, alpha {alpha}")
    print("| method | gpuforecast width ms | MAPIE width ms | rel. diff | gpuforecast coverage | MAPIE coverage |")
    print("|---|---|---|---|---|---|")
    ok = True
    for name, a_lo, a_hi, b_lo, b_hi in rows:
        wa, wb = np.mean(a_hi - a_lo), np.mean(b_hi - b_lo)
        rel = abs(wa - wb) / wb
        ca = np.mean((tt >= a_lo) & (tt <= a_hi))
        cb = np.mean((tt >= b_lo) & (tt <= b_hi))
        print(f"| {name} | {wa:.6f} | {wb:.6f} | {100 * rel:.4f}% | {ca:.4f} | {cb:.4f} |")
        ok = ok and rel <= 0.01
    print("widths agree within 1%" if ok else "WIDTHS DISAGREE by more than 1%")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
