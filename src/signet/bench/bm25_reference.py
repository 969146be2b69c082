"""Plain Okapi BM25 in memory, to check that our loaders and metrics reproduce the published
baseline (LoCoMo dev categories 1-4 Hit@10 about 62.8; MemAware dev about 55.7 / 46.7 / 8.3). If
it drifts, suspect the loaders before recall; the product does not use it.

The recipe: k1 = 1.2, b = 0.75, lowercase `\\w+` tokens without NLTK's English stop words, Lucene's
non-negative IDF. `signet bench baseline` prints the tables and exits 1 when a check fails.
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from signet.bench.datasets import UNITS, BenchDoc, BenchQuestion, load_locomo, load_memaware
from signet.bench.metrics import format_table, locomo_groups, memaware_groups, percentile, score

K1 = 1.2
B = 0.75

STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did doing
    a an the and but if or because as until while of at by for with about against between into
    through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now d ll m o re
    ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn
    weren won wouldn
    """.split()
)

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


class BM25:
    """An inverted index over a fixed list of texts; `search` returns their indexes, best first."""

    def __init__(self, texts: Sequence[str], k1: float = K1, b: float = B) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths = []
        for index, text in enumerate(texts):
            tokens = tokenize(text)
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                self._postings[term].append((index, tf))
        count = len(lengths)
        average = (sum(lengths) / count if count else 0.0) or 1.0
        # Per-document length factor of the BM25 denominator, computed once.
        self._norm = [k1 * (1 - b + b * n / average) for n in lengths]
        self._k1 = k1
        self._idf = {
            term: math.log(1 + (count - len(p) + 0.5) / (len(p) + 0.5))
            for term, p in self._postings.items()
        }

    def search(self, query: str, limit: int | None = None) -> list[int]:
        scores: dict[int, float] = defaultdict(float)
        for term in tokenize(query):
            idf = self._idf.get(term, 0.0)
            for index, tf in self._postings.get(term, ()):
                scores[index] += idf * tf * (self._k1 + 1) / (tf + self._norm[index])
        # Ties go to the earlier document so runs are reproducible.
        ranked = sorted(scores, key=lambda i: (-scores[i], i))
        return ranked if limit is None else ranked[:limit]


def rank(
    docs: Sequence[BenchDoc], questions: Sequence[BenchQuestion], limit: int | None = None
) -> tuple[dict[str, list[str]], list[float]]:
    """Rank each question's own group of docs: {qid: doc keys}, and per-query latency in ms."""
    by_group: dict[str, list[BenchDoc]] = defaultdict(list)
    for doc in docs:
        by_group[doc.group].append(doc)
    indexes = {group: BM25([d.text for d in members]) for group, members in by_group.items()}
    ranked: dict[str, list[str]] = {}
    latency: list[float] = []
    for q in questions:
        members = by_group.get(q.group, [])
        started = time.perf_counter()
        hits = indexes[q.group].search(q.text, limit) if members else []
        latency.append((time.perf_counter() - started) * 1000)
        ranked[q.qid] = [members[i].key for i in hits]
    return ranked, latency


def report(data_dir: Path) -> str:
    """Both benchmarks under plain BM25 (MemAware at each unit), as two tables."""
    # The README's baseline indexed bare "<speaker>: <text>" turns, without image captions.
    docs, questions = load_locomo(data_dir / "locomo" / "locomo-dev.json", captions=False)
    ranked, ms = rank(docs, questions)
    locomo = format_table(
        {"bm25-turns": score(questions, ranked, locomo_groups(questions))},
        {"bm25-turns": _latency(ms)},
    )
    results, latency = {}, {}
    for unit in UNITS:
        docs, questions = load_memaware(
            data_dir / "memaware" / "sessions", data_dir / "memaware" / "questions-dev.json", unit
        )
        ranked, ms = rank(docs, questions)
        results[f"bm25-{unit}"] = score(questions, ranked, memaware_groups(questions))
        latency[f"bm25-{unit}"] = _latency(ms)
    return f"LoCoMo (dev)\n{locomo}\n\nMemAware (dev)\n{format_table(results, latency)}\n"


# Published baselines on the dev halves (the bench-data README and docs/benchmarks.md), percent;
# +-1.5 allows for the tokenizer details the README leaves open (a question or two sits exactly
# at rank 10).
LOCOMO_BM25_HIT10 = 62.8
MEMAWARE_BM25_HIT10 = {"easy": 55.7, "medium": 46.7, "hard": 8.3}
TOLERANCE = 1.5


def verify(data_dir: Path) -> list[str]:
    """The checks of the whole development data: every file loads whole, no id leaks into the
    text, and plain BM25 reproduces the published baselines. The problems found (none: [])."""
    problems = _verify_locomo(data_dir / "locomo" / "locomo-dev.json")
    problems += _verify_memaware(data_dir / "memaware")
    return problems


def _verify_locomo(path: Path) -> list[str]:
    problems: list[str] = []
    docs, questions = load_locomo(path)
    if {d.group for d in docs} != {q.group for q in questions}:
        problems.append("LoCoMo: a conversation without questions, or questions without turns")
    if len(questions) < 990:  # 999 minus the few without a valid evidence turn
        problems.append(f"LoCoMo: {len(questions)} questions with evidence, expected >= 990")
    keys = {(d.group, d.key) for d in docs}
    if not all((q.group, k) in keys for q in questions for k in q.gold):
        problems.append("LoCoMo: a gold turn that no document holds")
    if not all(d.event_at and d.event_at[4] == "-" and "T" in d.event_at for d in docs):
        problems.append("LoCoMo: a turn without an ISO session time")
    bare, _ = load_locomo(path, captions=False)
    ranked, _ = rank(bare, questions)
    hit10 = 100 * score(questions, ranked, locomo_groups(questions))["cat1-4"]["Hit@10"]
    if abs(hit10 - LOCOMO_BM25_HIT10) > TOLERANCE:
        problems.append(f"LoCoMo: BM25 Hit@10 {hit10:.1f}, published {LOCOMO_BM25_HIT10}")
    return problems


def _verify_memaware(root: Path) -> list[str]:
    problems: list[str] = []
    sessions, questions_path = root / "sessions", root / "questions-dev.json"
    docs, questions = load_memaware(sessions, questions_path, unit="session")
    session_ids = {d.key for d in docs}
    if not len(session_ids) == len(docs) > 1000:
        problems.append(f"MemAware: {len(docs)} sessions ({len(session_ids)} ids), expected > 1000")
    if {q.category for q in questions} != {"easy", "medium", "hard"}:
        problems.append("MemAware: the tiers are not easy, medium and hard")
    for unit in ("window", "message"):
        unit_docs, _ = load_memaware(sessions, questions_path, unit=unit)
        if not {d.key for d in unit_docs} <= session_ids:
            problems.append(f"MemAware: a {unit} from no session")
        if any("answer_" in d.text or "## Session" in d.text for d in unit_docs):
            problems.append(f"MemAware: a session id leaks into a {unit}'s text")
    ranked, _ = rank(docs, questions)
    result = score(questions, ranked, memaware_groups(questions))
    for tier, expected in MEMAWARE_BM25_HIT10.items():
        got = 100 * result[tier]["Hit@10"]
        if abs(got - expected) > TOLERANCE:
            problems.append(f"MemAware {tier}: BM25 Hit@10 {got:.1f}, published {expected}")
    return problems


def _latency(ms: list[float]) -> dict[str, float]:
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95)}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    default = Path(__file__).resolve().parents[3] / ".." / "shared" / "bench-data"
    sys.stdout.write(report(Path(args[0]) if args else default))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
