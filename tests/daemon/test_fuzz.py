"""Generated requests against the daemon's own OpenAPI document, judged by every schemathesis
check: no 5xx, every answer documented and shaped as documented, every request the schema
allows accepted, every request it forbids refused, `Allow` on a 405 listing the resource's
methods, and so on (`--checks all`).

schemathesis runs as its own process (its `st` command, as CI would run it) against a real
server (conftest.serve, loopback HTTP) and derives requests for each operation from
/openapi.json: the documented examples' phase, the coverage phase (boundary values: each
minimum, maximum, enum member, missing required field, wrong type) and the fuzzing phase
(random valid and invalid requests). The seed is fixed, so a run is reproducible, and the
examples per operation are few, so the run stays short.

The stateful phase chains operations through the document's links (remember, then read,
patch, delete, read again): a resource deleted must answer 404 to a plain read afterwards
(the use-after-free check). A few operations are left out of the CI run by name because they
walk the daemon's disk from a path in the request (`EXCLUDED`, each with its reason): fuzzed
paths like "/" would copy or index whole file systems, which is what those routes do when an
admin asks, not a schema question. Cost: MAX_EXAMPLES per operation and phase keeps the run at
a few minutes on a 2-core machine (about 6,000 requests).

One status is added to what "a valid request is accepted" allows: 422 `unprocessable`, the
answer for content the schema cannot judge in advance (a transcript that holds no
conversation: a harness format, not a JSON shape). Nothing else answers 422.

A second test checks the promise behind the rest: the query string may name only parameters
the route takes (the OpenAPI document cannot forbid others, so schemathesis cannot check it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from auth_tokens import auth
from signet.config import AuthConfig, SearchConfig

MAX_EXAMPLES = 8  # per operation and phase; the coverage phase adds its boundary cases
# Operations that read or copy a folder the request names: fuzzed, they walk the disk.
EXCLUDED = {
    "POST /api/skills": "copies the named folder into skills/ (a fuzzed '/' copies the disk)",
    "POST /api/import": "reads the named export folder or notes tree (a fuzzed '/' walks the disk)",
    "POST /api/connectors": "registers a folder that the connector worker then indexes",
    "POST /api/connectors/{connector_id}/sync": "walks the registered folder at once",
}
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]


# The run is one subprocess bounded by its own timeout below; the suite's per-test default
# (300 s) would cut a loaded machine's run short.
@pytest.mark.timeout(960)
def test_every_schemathesis_check_passes_on_every_operation(serve, tmp_path: Path) -> None:
    # A configured max_limit other than the default: the document must state this one.
    served = serve(auth=AuthConfig(rate_limit_per_minute=1_000_000),  # the run is a burst
                   search=SearchConfig(max_limit=77))
    for content in ("alpha memory about tea", "beta memory about coffee"):
        served.client.post("/api/memory/remember", json={"content": content})
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        "[checks.positive_data_acceptance]\n"
        f"expected-statuses = {POSITIVE_STATUSES!r}\n".replace("'", '"'),
        encoding="utf-8",
    )
    st = Path(sys.executable).with_name("st")
    run = subprocess.run(
        [str(st), "--config-file", str(config), "--no-color", "run",
         f"{served.url}/openapi.json", "-H", f"Authorization: Bearer {served.token}",
         "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
         *[arg for name in EXCLUDED for arg in ("--exclude-name", name)],
         "--max-examples", str(MAX_EXAMPLES), "--seed", "1", "--workers", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,  # it writes .hypothesis there
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-20_000:]
    tested = int(report.split("Tested: ")[1].split()[0])
    assert tested >= 74, report[-3000:]
    assert "Stateful" in report, report[-3000:]


def test_every_operation_documents_what_the_middleware_answers(serve) -> None:
    """The answers given around a handler are in the document too: 400 for an unknown query
    parameter anywhere, 408/413 wherever there is a body, 503 wherever the store is read, 429
    on the login paths (they spend the unauthenticated rate limit)."""
    served = serve()
    spec = served.client.get("/openapi.json").json()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            label = f"{method.upper()} {path}"
            assert "400" in codes, label
            assert path == "/health" or "503" in codes, label
            assert "requestBody" not in operation or {"408", "413"} <= codes, label
            assert not path.startswith("/auth/") or "429" in codes, label
    # ... and a body too large is such an answer, on an operation that had not said so.
    big = served.client.post("/api/memory/feedback", content=b"{" + b" " * (2 << 20) + b"}",
                             headers={"Content-Type": "application/json"})
    assert big.status_code == 413 and big.json()["code"] == "payload_too_large"


def test_the_document_states_the_configured_limits(serve) -> None:
    served = serve(search=SearchConfig(max_limit=77, default_limit=5))
    spec = served.client.get("/openapi.json").json()
    recall = spec["components"]["schemas"]["RecallBody"]["properties"]["limit"]["anyOf"][0]
    assert recall["maximum"] == 77 and recall["minimum"] == 1
    search = next(p for p in spec["paths"]["/api/memory/search"]["get"]["parameters"]
                  if p["name"] == "limit")
    assert search["schema"]["anyOf"][0]["maximum"] == 77
    assert "x-signet-config-bound" not in str(spec)
    # ... and the handler agrees at both edges of the bound.
    ok = served.client.post("/api/memory/recall", json={"query": "tea", "limit": 77})
    over = served.client.post("/api/memory/recall", json={"query": "tea", "limit": 78})
    assert ok.status_code == 200 and over.status_code == 400 and "77" in over.json()["error"]


def test_an_unknown_query_parameter_is_refused_naming_it(serve) -> None:
    served = serve()
    served.client.post("/api/memory/remember", json={"content": "gamma memory"})
    typo = served.client.get("/api/memories", params={"limt": 1})
    assert typo.status_code == 400 and typo.json()["code"] == "invalid_input"
    assert "'limt'" in typo.json()["error"] and "limit" in typo.json()["error"]
    assert typo.json()["unknown_parameters"] == ["limt"]
    # Parameters of the route's dependencies count as its own; a body route takes none.
    assert served.client.get("/api/memories", params={"limit": 1}).status_code == 200
    body_route = served.client.post("/api/memory/recall", params={"x": "1"}, json={"query": "q"})
    assert body_route.status_code == 400 and "'x'" in body_route.json()["error"]
    # Refused before anything is done: a write with an unknown parameter writes nothing.
    before = served.client.get("/api/memories").json()["total"]
    write = served.client.post("/api/memory/remember", params={"dry_run": "1"},
                               json={"content": "delta memory"})
    assert write.status_code == 400 and served.client.get("/api/memories").json()["total"] == before
    # Pages outside the API document keep their own query strings (the dashboard's links).
    page = httpx.get(f"{served.url}/app/welcome", params={"login": "failed"},
                     headers=auth(served.token))
    assert page.status_code == 200


def test_a_405_lists_every_method_of_the_resource(serve) -> None:
    served = serve()
    memory_id = served.client.post("/api/memory/remember", json={"content": "eps"}).json()["id"]
    answer = served.client.request("PUT", f"/api/memory/{memory_id}")
    assert answer.status_code == 405
    assert set(answer.headers["allow"].split(", ")) == {"GET", "PATCH", "DELETE"}
    # A literal path wins over a template that also matches it (/api/memory/{memory_id}).
    literal = served.client.request("PUT", "/api/memory/feedback")
    assert literal.status_code == 405 and literal.headers["allow"] == "POST"
