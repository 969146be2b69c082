"""`Operations`: what an operator's actions (signet/maintenance.py) run on: the `OpsStore` seam with
the config, embedder, clock and LLM, so the same maintenance functions run on both backends. The
app's `fts_check`, `run_maintenance`, `run_retention`, ... are those functions applied to
`app.operations`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from signet.clock import Clock
from signet.config import Config
from signet.errors import Frozen
from signet.providers.embedder import Embedder
from signet.providers.guard import ProviderGuard
from signet.providers.health_probe import HealthProbe
from signet.providers.llm import LLM
from signet.store.operations import OpsStore

__all__ = ["Operations"]


@dataclass(frozen=True, slots=True)
class Operations:
    config: Config
    ops: OpsStore
    embedder: Embedder | None
    clock: Clock
    llm: LLM | None = None  # named in the pipeline's status
    # Recall's deadline and breaker around the embedder, which the health probe shares.
    guard: ProviderGuard | None = None
    # The embedder's health probe (one call at a time, on its own thread): /api/embeddings/health.
    probe: HealthProbe | None = field(init=False, default=None, compare=False)

    def __post_init__(self) -> None:
        if self.embedder is not None:
            object.__setattr__(self, "probe", HealthProbe(self.embedder))

    def check_mutable(self) -> None:
        if self.config.pipeline.mutations_frozen:
            raise Frozen()
