"""A learned per-candidate combiner, fitted offline and judged held out as the lead rule is.

Input: runs saved by `signet bench locomo|memaware --leads ... --candidates --save FILE`. The fit
is listwise (softmax over a question's candidates, ridge on standardised weights) by plain
gradient descent from zero, so it is deterministic. A question's ranking is cut where the
benchmark cuts recall's page, so it is scored as recall would rank; splits are bench/loo.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from signet.bench import loo
from signet.bench.loo import Run
from signet.bench.metrics import score
from signet.errors import InvalidInput
from signet.recall.combine import linear, model_inputs

RIDGE = 0.01
STEPS = 300
RATE = 0.5
# Recall's page as the benchmarks ask it: so many hits beyond the quoted ones.
DEPTH = {"locomo": 10, "locomo-long": 10, "memaware": 50}
LEAD_RULE = "lead rule (held out)"
COMBINER = "combiner (held out)"


@dataclass(frozen=True)
class Batch:
    """Training candidates: features (rows), the question each belongs to, gold or not."""

    x: np.ndarray
    query: np.ndarray
    gold: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[tuple[Run, Sequence[str]]]) -> Batch:
        xs, queries, golds = [], [], []
        index = 0
        for run, qids in rows:
            gold = {q.qid: q.gold for q in run.questions}
            for qid in qids:
                cands = run.candidates.get(qid, [])
                marks = [bool(gold[qid] & set(c["keys"])) for c in cands]
                if not any(marks):
                    continue  # nothing to learn where no candidate is gold
                xs += model_inputs(cands)
                queries += [index] * len(cands)
                golds += marks
                index += 1
        if not xs:
            raise InvalidInput("no saved candidates to fit the combiner on (--candidates)")
        return cls(np.array(xs, dtype=float), np.array(queries), np.array(golds, dtype=bool))


def _standard(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0
    return (x - mean) / std, mean, std


def fit(rows: Sequence[tuple[Run, Sequence[str]]]) -> tuple[float, ...]:
    """The combiner's weights (one per `MODEL`) fitted on these questions' candidates:
    gradient descent whose step is halved until the loss falls (the inputs are collinear, so a
    fixed step can overshoot)."""
    batch = Batch.of(rows)
    xs, _mean, std = _standard(batch.x)
    starts = np.flatnonzero(np.r_[True, batch.query[1:] != batch.query[:-1]])

    def loss_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = xs @ w
        top = np.maximum.reduceat(s, starts)[batch.query]
        e = np.exp(s - top)
        total = np.add.reduceat(e, starts)
        eg = np.where(batch.gold, e, 0.0)
        gold = np.add.reduceat(eg, starts)
        loss = float(np.mean(np.log(total) - np.log(gold))) + RIDGE * float(w @ w)
        p, pg = e / total[batch.query], eg / gold[batch.query]
        return loss, xs.T @ (p - pg) / len(starts) + 2 * RIDGE * w

    weights = np.zeros(xs.shape[1])
    loss, grad = loss_grad(weights)
    rate = RATE
    for _ in range(STEPS):
        while rate > 1e-6:
            trial = weights - rate * grad
            trial_loss, trial_grad = loss_grad(trial)
            if trial_loss < loss:
                break
            rate /= 2
        else:
            break
        weights, loss, grad = trial, trial_loss, trial_grad
        rate *= 1.5
    return tuple(round(float(w), 4) for w in weights / std)


def fit_pointwise(rows: Sequence[tuple[Run, Sequence[str]]]) -> tuple[float, ...]:
    """A logistic fit of `gold` on the same features (intercept first), every candidate one
    example: a probability per candidate."""
    batch = Batch.of(rows)
    xs, mean, std = _standard(batch.x)
    y = batch.gold.astype(float)
    bias, weights = 0.0, np.zeros(xs.shape[1])
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(xs @ weights + bias)))
        bias -= RATE * float((p - y).mean())
        weights -= RATE / xs.shape[1] * (xs.T @ (p - y) / len(y) + 2 * RIDGE * weights)
    raw = weights / std
    return (round(bias - float(raw @ mean), 4), *(round(float(w), 4) for w in raw))


def _scores(cands: Sequence[Mapping[str, Any]], weights: Sequence[float]) -> np.ndarray:
    return np.array([linear(x, weights) for x in model_inputs(cands)])


def ranked(run: Run, qids: Sequence[str], weights: Sequence[float]) -> dict[str, list[str]]:
    """Each question's doc keys as recall with this combiner ranks them."""
    quoted = {q.qid: len(q.quoted) for q in run.questions}
    out = {}
    for qid in qids:
        cands = run.candidates.get(qid, [])
        # The recall's own arithmetic (recall/combine.py), so near ties break alike.
        scores = [linear(x, weights) for x in model_inputs(cands)]
        order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))
        page = order[: DEPTH[run.benchmark] + quoted[qid]]
        out[qid] = [k for i in page for k in cands[i]["keys"]]
    return out


def top_probabilities(
    run: Run, qids: Sequence[str], weights: Sequence[float], pointwise: Sequence[float],
) -> dict[str, tuple[float, float]]:
    """Per question, of its first hit under `weights`: its softmax share, and the pointwise
    fit's probability that it is gold."""
    out = {}
    for qid in qids:
        cands = run.candidates.get(qid, [])
        if not cands:
            continue
        scores = _scores(cands, weights)
        first = int(np.lexsort((np.arange(len(cands)), -scores))[0])
        share = np.exp(scores - scores.max())
        logit = pointwise[0] + linear(model_inputs(cands)[first], pointwise[1:])
        out[qid] = (float(share[first] / share.sum()), 1 / (1 + np.exp(-logit)))
    return out


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The chance a random positive scores above a random negative (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


@dataclass(frozen=True)
class Held:
    """One split's held-out rankings: the combiner's, the lead rule's, and the probabilities."""

    combiner: dict[str, list[str]]
    lead_rule: dict[str, list[str]]
    chosen: dict[str, str]
    probabilities: dict[str, tuple[float, float]]


def _split(train: Sequence[tuple[Run, Sequence[str]]], test: Run, qids: Sequence[str],
           name: str) -> Held:
    weights, pointwise = fit(train), fit_pointwise(train)
    lead = loo.choose(train[0][0], train[0][1]) if len(train) == 1 else loo.FIXED
    return Held(
        ranked(test, qids, weights), {q: test.ranked[lead][q] for q in qids},
        {name: f"combiner {' '.join(f'{w:g}' for w in weights)}; lead rule {lead}"},
        top_probabilities(test, qids, weights, pointwise),
    )


def _merged(parts: Sequence[Held]) -> Held:
    return Held(*({k: v for part in parts for k, v in getattr(part, f).items()}
                  for f in ("combiner", "lead_rule", "chosen", "probabilities")))


def _by_conversation(run: Run) -> Held:
    folds: dict[str, list[str]] = {}
    for q in run.questions:
        folds.setdefault(q.group, []).append(q.qid)
    return _merged([
        _split([(run, [q for other, ids in folds.items() if other != fold for q in ids])],
               run, qids, fold)
        for fold, qids in folds.items()
    ])


def _report(run: Run, held: Held) -> dict[str, Any]:
    """bench/loo.py's report of the combiner, the lead rule beside it, and the combiner's noise
    against the lead rule per group; the AUCs of its first hit's probabilities."""
    beside = replace(run, ranked={**run.ranked, LEAD_RULE: held.lead_rule})
    rep = loo.report(beside, held.combiner, held.chosen)
    groups = run.groups()
    rep["scores"][COMBINER] = rep["scores"].pop(loo.HELD_OUT)
    rep["scores"][LEAD_RULE] = score(run.questions, held.lead_rule, groups)
    rep["against_lead_rule"] = {
        group: loo.against(beside, held.combiner, qids, LEAD_RULE) for group, qids in groups.items()
    }
    gold = {q.qid: q.gold for q in run.questions}
    qids = [q for q in held.probabilities if q in held.combiner]
    first = [bool(held.combiner[q][:1] and held.combiner[q][0] in gold[q]) for q in qids]
    rep["auc_first_hit_gold"] = {
        "softmax share": auc([held.probabilities[q][0] for q in qids], first),
        "pointwise": auc([held.probabilities[q][1] for q in qids], first),
    }
    return rep


def reports(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The combiner held out, each split as bench/loo.py reports the lead (its docstring)."""
    named = {r.benchmark: r for r in runs if r.candidates}
    locomo, long, memaware = (named.get(n) for n in ("locomo", "locomo-long", "memaware"))
    out = []

    def all_of(run: Run) -> list[str]:
        return [q.qid for q in run.questions]

    if locomo is not None:
        out.append({"split": "combiner, one LoCoMo conversation out",
                    **_report(locomo, _by_conversation(locomo))})
    if long is not None:
        out.append({"split": "combiner, LoCoMo long queries, one conversation out",
                    **_report(long, _by_conversation(long))})
        if locomo is not None:
            held = _split([(locomo, all_of(locomo))], long, all_of(long), "fit on locomo")
            out.append({"split": "combiner fit on LoCoMo questions, test on long queries",
                        **_report(long, held)})
    if locomo is not None and memaware is not None:
        held = _split([(locomo, all_of(locomo))], memaware, all_of(memaware), "fit on locomo")
        out.append({"split": "combiner fit on LoCoMo, test on MemAware",
                    **_report(memaware, held)})
        held = _split([(memaware, all_of(memaware))], locomo, all_of(locomo), "fit on memaware")
        out.append({"split": "combiner fit on MemAware, test on LoCoMo",
                    **_report(locomo, held)})
    return out


def format_reports(found: Sequence[Mapping[str, Any]]) -> str:
    """loo's tables, then per group the combiner against the lead rule, and the AUCs."""
    lines = [loo.format_reports(found)]
    for rep in found:
        lines.append(f"### {rep['split']}: combiner vs the lead rule (held out)")
        for group, noise in rep["against_lead_rule"].items():
            low, high = noise["mrr_ci95"]
            lines.append(
                f"- {group}: Hit@1 won / lost {noise['hit1_won']} / {noise['hit1_lost']}"
                f" (p {noise['hit1_p']:.2f}), MRR {100 * noise['mrr_diff']:+.1f}"
                f" [{100 * low:+.1f}, {100 * high:+.1f}]")
        aucs = rep["auc_first_hit_gold"]
        lines.append(f"- AUC, first hit gold: softmax share {aucs['softmax share']:.3f},"
                     f" pointwise {aucs['pointwise']:.3f}")
        lines.append("")
    return "\n".join(lines)
