import sys, tempfile
from pathlib import Path
sys.path.insert(0, "tests/recall")
from test_ranking_hygiene import FACTS, SHORT_SUMMARY
from signet.app import SignetApp
from signet.config import Config
from signet.types import RecallQuery
d = tempfile.mkdtemp()
with SignetApp.open(Config.default(Path(d) / "ws")) as app:
    for t in FACTS: app.remember(t)
    for s in ["Asked about Go.", "The user asked about Go twice.", SHORT_SUMMARY, "asked about Go"]:
        app.remember(s, type="summary", source_type="session", source_id="s"+str(hash(s)), session_id="s"+str(hash(s)))
    app.run_pipeline_until_idle(only=["embed"])
    for q in ["Go", "Go code", "tabs or spaces in Go?", "what did we say about Go", "Go formatting", "golang indentation"]:
        hits = app.recall(RecallQuery(q, mode="full")).hits
        print(q); [print("   %.4f %s %s" % (h.score, h.memory.type, h.memory.content[:50].replace("\n"," "))) for h in hits[:4]]
