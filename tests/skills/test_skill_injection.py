"""The prompt-submit hook surfaces the right skill for a task through ordinary recall (the skill
is a procedural memory), with the real bundled embedding model behind the relevance gate."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from signet import injection
from signet.app import SignetApp
from signet.config import Config
from signet.workspace import init_workspace
from write_paths import inline

SKILLS = {
    "deploy": ("deploy-fly", "Deploy the web application to Fly.io",
               "Run `flyctl deploy` from the repository root, then watch `flyctl status`."),
    "notes": ("release-notes", "Write release notes from merged pull requests",
              "List merged pull requests since the last tag and group them by label."),
    "sql": ("sql-migrations", "Write and apply a database schema migration",
            "Add a numbered SQL file, make it idempotent, run the migration tests."),
}


def test_the_hook_injects_the_skill_the_prompt_needs_and_not_the_others(tmp_path: Path) -> None:
    init_workspace(tmp_path / "ws")
    cfg = inline(Config.default(tmp_path / "ws"))
    cfg = cfg.replace(pipeline=dataclasses.replace(cfg.pipeline, enabled=False))
    for folder, (name, description, body) in SKILLS.items():
        path = cfg.workspace / "skills" / folder
        path.mkdir(parents=True)
        (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    with SignetApp.open(cfg, llm=None) as app:  # the configured (bundled local) embedder
        app.remember("The user prefers dark roast coffee in the morning")
        app.remember("Our staging server runs in Frankfurt")
        assert len(app.reconcile_skills(datetime.now(UTC))["added"]) == 3
        ids = {s["name"]: s["memory_id"] for s in app.list_skills()}
        shown = injection.handle(
            app, "user-prompt-submit", {"prompt": "How do I deploy this web app to Fly.io?"}
        )
    assert ids["deploy-fly"] in shown.memories and "flyctl deploy" in shown.context
    assert ids["release-notes"] not in shown.memories
    assert ids["sql-migrations"] not in shown.memories
