"""Generated requests against the daemon's own OpenAPI document: no input makes a 5xx, and every
answer matches the schema the daemon publishes.

schemathesis reads /openapi.json from a real server (conftest.serve, loopback HTTP) and derives
valid and invalid requests for each operation from it; hypothesis keeps the run short and
reproducible (derandomised). A failure names the operation and the request that broke it.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from auth_tokens import auth
from signet.config import AuthConfig

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def test_no_generated_request_gets_a_5xx_or_an_undocumented_answer(serve) -> None:
    served = serve(auth=AuthConfig(rate_limit_per_minute=1_000_000))  # the run is a burst
    headers = auth(served.token)
    for content in ("alpha memory about tea", "beta memory about coffee"):
        served.client.post("/api/memory/remember", json={"content": content})
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json", headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 11
    for operation in operations:
        exercise(operation, GenerationMode.POSITIVE, headers)
        try:
            exercise(operation, GenerationMode.NEGATIVE, headers)
        except Unsatisfiable:
            pass  # every input is valid (no parameters, or only a free-form string id)


def exercise(operation, mode: GenerationMode, headers: dict[str, str]) -> None:
    @given(operation.as_strategy(generation_mode=mode))
    @settings(max_examples=30, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def call(case) -> None:
        case.call_and_validate(checks=CHECKS, headers=headers)

    call()
