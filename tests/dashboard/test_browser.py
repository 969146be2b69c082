"""The dashboard end to end, in headless Chromium: what a person does, click by click.

One daemon serves the module (tests/dashboard/conftest.py) and one browser serves the session;
each test logs in with its own one-time link, the one `signet dashboard --print` prints
(test_session.py runs that command in a subprocess), in a fresh browser context (fresh
cookies). Every test fails on any uncaught script error of the page. Each page's screenshot
goes to the folder printed at the end of the run (docs/dashboard.md shows them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from seed import dead_job, map_points, review_item

VIEWPORT = {"width": 1280, "height": 860}


@pytest.fixture
def page(browser: Any, daemon: Any) -> Iterator[Page]:
    """A logged-in page: the login link followed as a person would, landing on Memories."""
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.goto(daemon.quick_link())
    expect(opened).to_have_url(f"{daemon.url}/app/memories")
    expect(opened.locator("#who")).to_have_text("dashboard (admin)")
    yield opened
    context.close()
    assert not errors, f"script errors on the page: {errors}"


def shot(page: Page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=False)


def remember(daemon: Any, content: str, **fields: Any) -> dict[str, Any]:
    reply = daemon.client.post("/api/memory/remember", json={"content": content, **fields})
    assert reply.status_code == 200, reply.text
    return dict(reply.json()["memory"])


def test_search_shows_recall_results_with_their_evidence(page: Page, daemon: Any, shots_folder: Path) -> None:
    remember(daemon, "The quarterly budget review moved to Thursday afternoons", tags=["planning"], project="ops")
    remember(daemon, "Maya prefers tea over coffee in the morning", type="preference")
    remember(daemon, "Deploys go out from the release branch after the budget sign-off", project="ops")
    page.reload()
    expect(page.locator("ul.rows li")).to_have_count(3)
    shot(page, shots_folder, "memories-list")
    page.keyboard.press("/")
    page.keyboard.type("quarterly budget review")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{daemon.url}/app/memories?q=quarterly+budget+review")
    first = page.locator("ul.rows li").first
    expect(first).to_contain_text("The quarterly budget review moved to Thursday")
    expect(first.locator(".evidence")).to_contain_text("lexical")
    expect(page.locator("#results")).to_contain_text("method")
    shot(page, shots_folder, "memories-search")
    page.select_option("select[name=pinned]", "true")  # a filter nothing matches: the empty state
    page.click("form.filters button[type=submit]")
    expect(page.locator(".state.empty")).to_contain_text("Nothing recalled")
    page.goto(f"{daemon.url}/app/memories?project=ops")  # the list, filtered by project
    expect(page.locator("ul.rows li")).to_have_count(2)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text("Memory")


def test_an_edit_against_a_stale_version_is_a_conflict_not_an_overwrite(
    page: Page, daemon: Any, shots_folder: Path
) -> None:
    memory = remember(daemon, "The staging database lives on host db-2")
    page.goto(f"{daemon.url}/app/memories/{memory['id']}")
    expect(page.locator("#memory-content")).to_have_text("The staging database lives on host db-2")
    # someone else changes it after the page loaded version 1
    theirs = daemon.client.patch(f"/api/memory/{memory['id']}", json={
        "content": "The staging database lives on host db-3", "version": 1})
    assert theirs.status_code == 200
    page.keyboard.press("e")
    page.fill("textarea[name=content]", "The staging database lives on host db-9")
    page.click("#editor button[type=submit]")
    expect(page.locator(".conflict")).to_contain_text("Version conflict")
    assert daemon.app.get(memory["id"]).content == "The staging database lives on host db-3"
    shot(page, shots_folder, "memory-conflict")
    page.click(".conflict button")
    expect(page.locator("#memory-content")).to_have_text("The staging database lives on host db-3")
    page.click("#edit")
    page.fill("textarea[name=content]", "The staging database lives on host db-4")
    page.click("#editor button[type=submit]")
    expect(page.locator("#memory-content")).to_have_text("The staging database lives on host db-4")
    assert daemon.app.get(memory["id"]).version == 3
    assert daemon.app.history(memory["id"])[-1].changed_by == "dashboard"
    newest = page.locator(".history-event").first  # newest first, with the words that changed
    expect(newest.locator("del")).to_have_text("db-3")
    expect(newest.locator("ins")).to_have_text("db-4")
    page.click("#pin")
    expect(page.locator("#pin")).to_have_text("Unpin")
    assert daemon.app.get(memory["id"]).pinned is True
    shot(page, shots_folder, "memory-detail")


def test_forget_then_recover(page: Page, daemon: Any) -> None:
    memory = remember(daemon, "The office wifi password rotates monthly")
    page.goto(f"{daemon.url}/app/memories/{memory['id']}")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#forget")
    expect(page.locator(".banner")).to_contain_text("Forgotten")
    assert daemon.app.get(memory["id"]).is_deleted is True
    page.click("#recover")
    expect(page.locator("#forget")).to_be_visible()
    assert daemon.app.get(memory["id"]).is_deleted is False
    events = [e.event for e in daemon.app.history(memory["id"])]
    assert events[-2:] == ["deleted", "recovered"]


def test_approving_a_review_applies_the_proposal(page: Page, daemon: Any, shots_folder: Path) -> None:
    memory = remember(daemon, "The API uses REST for every public endpoint")
    item = review_item(daemon.app, memory["id"], memory["content"],
                       "The API uses GraphQL for every public endpoint")
    other = remember(daemon, "Backups run at midnight")
    rejected = review_item(daemon.app, other["id"], other["content"], "Backups never run")
    page.click("nav a[data-page=review]")
    card = page.locator(f"li.review-item[data-id='{item}']")
    expect(card.locator("ins")).to_have_text("GraphQL")
    shot(page, shots_folder, "review")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_have_count(0)
    assert daemon.app.get(memory["id"]).content == "The API uses GraphQL for every public endpoint"
    page.locator(f"li.review-item[data-id='{rejected}']").get_by_role("button", name="Reject").click()
    expect(page.locator(".state.empty")).to_contain_text("Nothing waits for review")
    assert daemon.app.get(other["id"]).content == "Backups run at midnight"


def test_opening_an_entity_shows_its_graph_and_pins_it(page: Page, daemon: Any, shots_folder: Path) -> None:
    remember(daemon, "Nadia leads the Atlas migration and depends on the Vault service", graph={
        "entities": [{"name": "Nadia", "type": "person"}, {"name": "Atlas", "type": "project"},
                     {"name": "Vault", "type": "service"}],
        "aspects": [{"entity": "Nadia", "aspect": "role"}],
        "attributes": [{"entity": "Nadia", "aspect": "role", "key": "leads", "value": "Atlas migration"}],
        "dependencies": [{"source": "Nadia", "target": "Atlas", "type": "leads"},
                         {"source": "Atlas", "target": "Vault", "type": "depends_on"}],
    })
    page.click("nav a[data-page=graph]")
    page.fill("input[name=q]", "nadia")
    page.keyboard.press("Enter")
    page.get_by_role("link", name="Nadia", exact=True).click()
    expect(page.locator("h1")).to_contain_text("Nadia")
    expect(page.locator("main")).to_contain_text("leads: Atlas migration")
    hood = page.locator("svg.hood")
    expect(hood).to_contain_text("Atlas")
    expect(hood).to_contain_text("Vault")  # two hops: Nadia -> Atlas -> Vault
    shot(page, shots_folder, "entity")
    page.click("#pin-entity")
    expect(page.locator("#toast")).to_contain_text("Pinned")
    entity_id = page.url.rsplit("/", 1)[1]
    assert daemon.client.get(f"/api/knowledge/entities/{entity_id}").json()["pinned"]
    hood.locator("a", has_text="Atlas").click()  # walk the neighbourhood
    expect(page.locator("h1")).to_contain_text("Atlas")
    page.click("nav a[data-page=graph]")
    page.get_by_role("button", name="Detect communities now").click()
    expect(page.locator("main")).to_contain_text("entities")
    shot(page, shots_folder, "graph")


def test_the_map_draws_10k_points_and_opens_the_one_clicked(page: Page, daemon: Any, shots_folder: Path) -> None:
    map_points(daemon.app, 10_000)
    page.click("nav a[data-page=map]")  # 202 while the projection computes; the page polls
    canvas = page.locator("canvas#map")
    expect(canvas).to_have_attribute("data-points", re.compile(r"^\d{5,}$"), timeout=120_000)
    cached = daemon.client.get("/api/embeddings/projection")
    assert cached.status_code == 200
    total = cached.json()["count"]
    assert total >= 10_000
    expect(canvas).to_have_attribute("data-points", str(total))
    expect(page.locator("#map-status")).to_contain_text("drawn in")
    expect(page.locator(".legend")).to_contain_text("fact")
    x, y = canvas.evaluate("""c => {
        const p = c.signetPlot, [sx, sy] = p.toScreen(p.points.x[p.count - 1], p.points.y[p.count - 1]);
        const r = c.getBoundingClientRect();
        return [r.left + sx / p.ratio, r.top + sy / p.ratio];
    }""")
    page.mouse.move(x, y)
    expect(page.locator(".tip")).to_contain_text("map point", timeout=10_000)
    shot(page, shots_folder, "map")
    page.select_option("select[name=color]", "project")
    expect(page.locator(".legend")).to_contain_text("cluster-")
    canvas = page.locator("canvas#map")
    expect(canvas).to_have_attribute("data-points", str(total), timeout=30_000)
    x, y = canvas.evaluate("""c => {
        const p = c.signetPlot, [sx, sy] = p.toScreen(p.points.x[p.count - 6], p.points.y[p.count - 6]);
        const r = c.getBoundingClientRect();
        return [r.left + sx / p.ratio, r.top + sy / p.ratio];
    }""")
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    expect(page).to_have_url(re.compile(r"/app/memories/[0-9a-f]{32}$"))
    expect(page.locator("#memory-content")).to_contain_text("map point")


def test_requeueing_a_dead_job_from_the_pipeline_page(page: Page, daemon: Any, shots_folder: Path) -> None:
    memory = remember(daemon, "This memory's extraction keeps failing")
    job_id = dead_job(daemon.app, memory["id"], "llm timed out after 30 s")
    page.click("nav a[data-page=pipeline]")
    row = page.locator("#dead-letters tr", has_text=job_id[:12])
    expect(row).to_contain_text("llm timed out")
    expect(page.locator("main")).to_contain_text("embedded")
    expect(page.locator("main")).to_contain_text("database size")
    expect(page.locator("#health-checks")).to_contain_text("storage ok")
    shot(page, shots_folder, "pipeline")
    row.get_by_role("button", name="Requeue").click()
    expect(page.locator("#toast")).to_contain_text("Requeued 1 job")
    expect(page.locator("#dead-letters")).not_to_contain_text(job_id[:12])
    assert daemon.app.job(job_id).status == "pending"


def test_sessions_page_and_logout(page: Page, daemon: Any, shots_folder: Path) -> None:
    turns = [("user", "We decided to ship the dashboard on Friday"),
             ("assistant", "Noted: the dashboard ships Friday.")]
    transcript = "\n".join(json.dumps({"role": r, "content": t}) for r, t in turns)
    imported = daemon.client.post("/api/sessions/s-dash/transcript", json={
        "harness": "generic", "content": transcript, "project": "signet"})
    assert imported.status_code == 201, imported.text
    page.click("nav a[data-page=sessions]")
    expect(page.locator("#sessions")).to_contain_text("s-dash")
    page.get_by_role("button", name="Synthesize now").click()
    expect(page.locator("pre.content")).to_contain_text("#", timeout=20_000)
    shot(page, shots_folder, "sessions")
    page.get_by_role("link", name="s-dash").click()
    expect(page.locator("ul.rows li")).to_have_count(2)
    expect(page.locator("main")).to_contain_text("ship the dashboard on Friday")
    page.click("#logout")
    expect(page).to_have_url(f"{daemon.url}/app/welcome?logout=1")
    expect(page.locator("main")).to_contain_text("signet dashboard --print")
    status = page.evaluate("fetch('/api/memories').then(r => r.status)")
    assert status == 401  # the cookie's token is revoked
    page.goto(f"{daemon.url}/app/memories")
    expect(page).to_have_url(f"{daemon.url}/app/welcome")
    shot(page, shots_folder, "welcome")


def test_the_browser_is_refused_without_the_cookie_or_with_a_wrong_csrf_token(
    page: Page, browser: Any, daemon: Any
) -> None:
    post = """csrf => fetch('/api/memory/remember', {method: 'POST', headers: {
        'Content-Type': 'application/json', ...(csrf ? {'X-Signet-CSRF': csrf} : {})},
        body: JSON.stringify({content: 'written from a page script'})}).then(r => r.status)"""
    assert page.evaluate(post, "not-the-token") == 403
    assert page.evaluate(post, None) == 403
    csrf = page.evaluate("fetch('/api/dashboard/session').then(r => r.json()).then(s => s.csrf)")
    assert page.evaluate(post, csrf) == 200
    stranger = browser.new_context()
    try:
        other = stranger.new_page()
        other.goto(f"{daemon.url}/app/memories")
        expect(other).to_have_url(f"{daemon.url}/app/welcome")
        assert other.evaluate(post, csrf) == 401  # a stolen CSRF token is nothing without the cookie
        other.goto(daemon.quick_link().replace("code=", "code=x"))
        expect(other.locator(".banner")).to_contain_text("invalid, already used or expired")
    finally:
        stranger.close()
