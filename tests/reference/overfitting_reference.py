"""The Deflated Sharpe Ratio and the Probability of Backtest Overfitting,
written from the papers' formulas with numpy and scipy, independently of
the engine:

- Bailey and Lopez de Prado, "The Deflated Sharpe Ratio" (2014), eq. 2
  (expected maximum Sharpe ratio of N trials) and eq. 9 (PSR / DSR), with
  the paper's worked example (section 4);
- Bailey, Borwein, Lopez de Prado and Zhu, "The Probability of Backtest
  Overfitting" (2015), the CSCV algorithm of section 2.3: S blocks, every
  combination of S/2 as the training set, the training best's relative rank
  in the testing set, logit, PBO = share of logits <= 0; performance
  degradation (OLS of testing on training performance) and the probability
  of loss (testing performance < 0).

Input: {"matrix": path of N x T float64 little-endian (strategy-major),
"strategies": N, "observations": T, "blocks": S, "trials": N or null,
"direct": true to compute each split's Sharpe ratios from the concatenated
returns (np.std) instead of from block sums}.
Output: the statistics, and per split the training best's training and
testing Sharpe ratio and the logit."""

import itertools
import json
import sys

import numpy as np
from scipy import stats


def sharpe(x):
    """Per-period Sharpe ratio of each column: mean / sample sd; 0 when flat."""
    sd = x.std(axis=0, ddof=1)
    mu = x.mean(axis=0)
    return np.where(sd > 0, mu / np.where(sd > 0, sd, 1.0), 0.0)


def expected_max(variance, n):
    g = np.euler_gamma
    return np.sqrt(variance) * ((1 - g) * stats.norm.ppf(1 - 1 / n) + g * stats.norm.ppf(1 - 1 / (n * np.e)))


def psr(sr, sr0, t, skew, kurt):
    return stats.norm.cdf((sr - sr0) * np.sqrt(t - 1) / np.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr ** 2))


req = json.load(sys.stdin)
n, t, s = req["strategies"], req["observations"], req["blocks"]
m = np.fromfile(req["matrix"], dtype="<f8").reshape(n, t).T  # T x N

# The paper's example: SR 2.5 a year, V = 0.5 a year, 100 trials, 1,250
# daily returns, skewness -3, kurtosis 10.
example_emax = expected_max(0.5 / 250, 100)
example = {"expected_max_sharpe": float(example_emax),
           "dsr": float(psr(2.5 / np.sqrt(250), example_emax, 1250, -3.0, 10.0))}

# DSR of the best column.
sr = sharpe(m)
best = int(np.argmax(sr))
variance = float(np.var(sr, ddof=1))
trials = req["trials"] or n
emax = float(expected_max(variance, trials))
r = m[:, best]
skew = float(stats.skew(r, bias=True))
kurt = float(stats.kurtosis(r, fisher=False, bias=True))
deflated = {
    "best": best,
    "sharpe": float(sr[best]),
    "sharpe_variance": variance,
    "skewness": skew,
    "kurtosis": kurt,
    "expected_max_sharpe": emax,
    "psr": float(psr(sr[best], 0.0, t, skew, kurt)),
    "dsr": float(psr(sr[best], emax, t, skew, kurt)),
}

# CSCV: equal blocks, the oldest T mod S returns left out.
length = t // s
skip = t - length * s
blocks = [m[skip + b * length: skip + (b + 1) * length] for b in range(s)]
if not req["direct"]:
    block_sum = np.array([b.sum(axis=0) for b in blocks])
    block_sq = np.array([(b * b).sum(axis=0) for b in blocks])
half = s // 2
count = half * length


def split_sharpe(chosen):
    if req["direct"]:
        return sharpe(np.concatenate([blocks[b] for b in chosen]))
    total = block_sum[list(chosen)].sum(axis=0)
    sq = block_sq[list(chosen)].sum(axis=0)
    mean = total / count
    var = (sq - count * mean * mean) / (count - 1)
    return np.where(var > 0, mean / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)


train, test, logits = [], [], []
for chosen in itertools.combinations(range(s), half):
    rest = [b for b in range(s) if b not in chosen]
    r_in = split_sharpe(chosen)
    r_out = split_sharpe(rest)
    star = int(np.argmax(r_in))
    omega = stats.rankdata(r_out)[star] / (n + 1)
    logits.append(float(np.log(omega / (1 - omega))))
    train.append(float(r_in[star]))
    test.append(float(r_out[star]))
logits = np.array(logits)
fit = stats.linregress(train, test)
json.dump({
    "example": example,
    "deflated": deflated,
    "pbo": float(np.mean(logits <= 0)),
    "splits": len(logits),
    "skipped": skip,
    "block_length": length,
    "slope": float(fit.slope),
    "intercept": float(fit.intercept),
    "r_squared": float(fit.rvalue ** 2),
    "prob_loss": float(np.mean(np.array(test) < 0)),
    "mean_logit": float(logits.mean()),
    "histogram": [int(c) for c in np.histogram(logits, bins=[-np.inf] + [k / 2 for k in range(-8, 9)] + [np.inf])[0]],
    "in_sample": train,
    "out_of_sample": test,
    "logits": logits.tolist(),
}, sys.stdout)
