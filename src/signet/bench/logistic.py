"""Logistic regression by Newton's method with an L2 penalty: how the benchmarks fit recall's
confidence, its candidate features and the prompt hook's judge (the product only reads the
fitted coefficients)."""

from __future__ import annotations

import numpy as np

__all__ = ["newton_logistic"]


def newton_logistic(
    x: np.ndarray, y: np.ndarray, l2: float, *, steps: int = 50, tolerance: float = 1e-8
) -> np.ndarray:
    """The weights w of P(label) = 1 / (1 + exp(-x @ w)) that minimise the log loss plus
    l2/2 * |w|^2 (x holds a column of ones where a bias is wanted): Newton steps, at most
    `steps`, until the largest change is below `tolerance`."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, x.T @ (p - y) + l2 * w)
        w -= step
        if float(np.abs(step).max()) < tolerance:
            break
    return w
