import pickle, sys, math, collections
from signet.bench.metrics import question_scores

def load(p):
    d = pickle.load(open(p, "rb"))
    return d

FLAT = ("lexical", "hint", "dated", "semantic", "source", "source_semantic")

def rrf(rankings, k=60, weights=None):
    weights = weights or {}
    out = {}
    for name, r in rankings.items():
        w = weights.get(name, 1.0)
        seen = set()
        rank = 0
        for keys, s in r:
            key = tuple(keys)
            if key in seen:
                continue
            seen.add(key)
            rank += 1
            out[key] = out.get(key, 0.0) + w / (k + rank)
    return out

def ranked_keys(fused, quoted):
    order = sorted(fused, key=lambda m: -fused[m])
    return [k for m in order for k in m if k not in quoted]

def evaluate(dump, fn, groupby="cat"):
    per = collections.defaultdict(list)
    for qid, q in dump.items():
        keys = fn(q)
        sc = question_scores(frozenset(q["gold"]), keys)
        per[q[groupby]].append(sc)
        per["ALL"].append(sc)
    return {g: {m: 100 * sum(s[m] for s in v) / len(v) for m in ("Hit@1", "Hit@10", "MRR")} | {"n": len(v)} for g, v in per.items()}

def modes_eval(d, groupby="cat"):
    out = {}
    for mode, ranked in d["modes"].items():
        out[mode] = evaluate(d["dump"], lambda q: ranked[qid_of[id(q)]], groupby) if False else None
    return out

def real(d, mode, groupby="cat"):
    per = collections.defaultdict(list)
    for qid, q in d["dump"].items():
        sc = question_scores(frozenset(q["gold"]), d["modes"][mode][qid])
        per[q[groupby]].append(sc); per["ALL"].append(sc)
    return {g: {m: 100 * sum(s[m] for s in v) / len(v) for m in ("Hit@1", "Hit@10", "MRR")} for g, v in per.items()}

def show(name, res):
    print(f"{name:28s}", " | ".join(f"{g[:6]} {r['Hit@1']:5.1f} {r['MRR']:5.1f}" for g, r in sorted(res.items())))

def margin(r):
    if len(r) < 2 or r[0][1] <= 0: return 1.0 if r else 0.0
    return (r[0][1] - r[1][1]) / r[0][1]

def adaptive(q, tau=0.3, base=0.3, k=60, mode="f1", gamma=1.0):
    rk = {n: r for n, r in q['rankings'].items() if n in FLAT}
    raw = q['raw']
    lexname = 'source' if 'source' in raw else 'lexical'
    lm = margin(raw.get(lexname, []))
    w = {'semantic': base, 'source_semantic': 1.0}
    if mode == "f1":
        f = max(0.0, 1 - lm / tau)
        w['semantic'] = base * f
        w['source_semantic'] = 1.0 * f
    fused = rrf(rk, k, w)
    if mode == "f2":
        # lexical top's lead carried into the fused score
        top = raw.get(lexname, [])
        if top:
            key = tuple(top[0][0])
            fused[key] = fused.get(key, 0) + gamma * lm / (k + 1)
    return ranked_keys(fused, q['quoted'])

def adaptive2(q, tau=0.2, maxwords=80, base=0.3, k=60):
    rk = {n: r for n, r in q['rankings'].items() if n in FLAT}
    raw = q['raw']
    f = 1.0
    if len(q['text'].split()) <= maxwords:
        lm = max(margin(raw.get('lexical', [])) if 'lexical' in raw else 0.0,
                 margin(raw.get('source', [])) if 'source' in raw else 0.0)
        f = max(0.0, 1 - lm / tau)
    w = {'semantic': base * f, 'source_semantic': 1.0 * f}
    return ranked_keys(rrf(rk, k, w), q['quoted'])
