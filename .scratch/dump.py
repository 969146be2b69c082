"""Dump per-question channel rankings and mode results (scratch, not committed)."""
import pickle, sys, time, os
from pathlib import Path
from signet.bench import retrieval
from signet.bench.datasets import load_locomo, load_memaware, with_dialogue
from signet.bench.metrics import locomo_groups, memaware_groups
from signet.types import RecallQuery

which = sys.argv[1]
out_path = Path(sys.argv[2])
dump = {}
modes_out = {}
def observe(q, mode, resp, keys_of):
    if q is None: return
    modes_out.setdefault(mode, {})[q.qid] = [k for h in resp.hits for k in keys_of.get(h.memory.id, []) if k not in q.quoted]

def after(app, asked, keys_of):
    rec = app.recaller
    for q in asked:
        query = RecallQuery(q.text, limit=10 + len(q.quoted) if which != "memaware" else 50, mode="hybrid")
        from signet.recall.hybrid import validated
        query = validated(query, rec.config)
        emb = rec._query_vector(query, {})
        with rec.reads.reader() as reader:
            found = rec._channels(reader, query, {}, [], emb)
        tok = lambda r: [(keys_of.get(m, []), s) for m, s in r]
        dump[q.qid] = {
            "rankings": {n: tok(r[:100]) for n, r in found.rankings.items()},
            "raw": {n: tok(r[:100]) for n, r in found.raw.items()},
            "lifts": {tuple(keys_of.get(m, [])): v for m, v in found.lifts.items()},
            "gold": q.gold, "quoted": q.quoted, "cat": q.category, "group": q.group,
            "text": q.text,
        }

kw = dict(progress=lambda m: print(m, flush=True), cache=Path("/work/wt-ranking/.cache/embeddings"), after_ask=after, observe=observe)
t0 = time.time(); c0 = time.process_time()
if which == "memaware":
    res = retrieval.run_memaware(None, None, ("bm25", "vector", "hybrid"), **kw)
else:
    res = retrieval.run_locomo(None, ("bm25", "vector", "hybrid"), long_queries=10 if which == "long" else 0, **kw)
print("wall", time.time() - t0, "cpu", time.process_time() - c0)
pickle.dump({"dump": dump, "results": res.results, "modes": modes_out}, out_path.open("wb"))
