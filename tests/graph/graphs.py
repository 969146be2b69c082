"""Hand-built graphs with known answers, shared by the graph tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder

QUERY = "My Ford Mustang needs an air filter, where can I use my loyalty discounts?"
TARGET_TEXT = "Target RedCard gives five percent off every purchase"
DISTRACTORS = [
    "The coffee filter in the office kitchen broke again",
    "Spam filter settings were changed for the shared inbox",
    "Air quality was bad during the wildfire season",
    "The user needs new running shoes before the marathon",
    "Loyalty to the team matters more than individual stats",
    "Discounts on flights are best on Tuesday mornings",
    "The user can use the gym on weekends",
    "Where the user grew up there were many lakes",
    "Weekly standup moved to Thursday afternoon",
    "The dentist appointment is next month",
]


def traversal_config(tmp: Path, **traversal: Any) -> Config:
    cfg = Config.default(tmp)
    pipeline = cfg.pipeline
    return cfg.replace(pipeline=dataclasses.replace(
        pipeline, enabled=False,
        traversal=dataclasses.replace(pipeline.traversal, **traversal),
    ))


def open_app(
    tmp: Path, *, embedder: bool = True, store_url: str | None = None, **traversal: Any
) -> SignetApp:
    """The app on the workspace's SQLite file, or on the PostgreSQL database `store_url`."""
    config = traversal_config(tmp, **traversal)
    if store_url:
        config = config.replace(store=StoreConfig(backend="postgres", url=store_url))
    return SignetApp.open(config, embedder=HashEmbedder(64) if embedder else None)


def url_for(backend: str, request: Any) -> str | None:
    """The test's fresh PostgreSQL database when `backend` is postgres (the `backend` fixture)."""
    return str(request.getfixturevalue("pg_url")) if backend == "postgres" else None


def build_car_and_shopping(app: SignetApp) -> dict[str, str]:
    """Seed 003's shape: user -> vehicles -> Ford Mustang; user -> shopping -> Target card."""
    ids = {"distractor": app.remember(DISTRACTORS[0]).id}
    for text in DISTRACTORS[1:]:
        app.remember(text)
    ids["car"] = app.remember("I drive a Ford Mustang to work", graph={
        "entities": [{"name": "Ford Mustang", "type": "vehicle", "aliases": ["Mustang", "my car"]},
                     {"name": "User", "type": "person"}],
        "attributes": [{"entity": "User", "aspect": "vehicles", "key": "drives",
                        "value": "Ford Mustang"}],
        "dependencies": [{"source": "Ford Mustang", "target": "User", "type": "owned_by",
                          "strength": 0.9}],
    }).id
    ids["target"] = app.remember(TARGET_TEXT, graph={
        "attributes": [{"entity": "User", "aspect": "shopping", "key": "loyalty card",
                        "value": "Target"}],
    }).id
    return ids
