"""The run viewer's page in a real browser (docs/viewer.md): Debian's headless Chromium,
driven by Playwright through ``executable_path`` (Playwright never downloads a browser
here).  The page is opened from a file with every request outside it refused and the
browser offline; the tests check the graph's nodes and colours against the trace, a
clicked call's arguments, a skipped call's reason, a hostile tool output kept as text,
that nothing is requested from the network and that the console shows no error; and that
``--serve`` follows a journaled run while it runs.

Run them with ``OBELISK_INTEGRATION=1`` (``.ci/run`` installs Chromium and Playwright);
each skips with the reason where Chromium or Playwright is missing.  Run as a script,
``python tests/integration/test_viewer_chromium.py docs/viewer.png`` takes the screenshot
of docs/viewer.md.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk.viewer.load import read_document
from obelisk.viewer.page import COLOURS, render_page
from obelisk.viewer.serve import ViewServer

pytestmark = pytest.mark.integration("chromium")

ROOT = Path(__file__).resolve().parents[2]


@obelisk.tool(pure=True)
def get_customer(customer_id: str) -> dict[str, str]:
    """Look a customer up."""
    return {"id": customer_id, "email": f"{customer_id}@example.com"}


@obelisk.tool
def charge(customer: str, amount: float) -> str:
    """Charge a customer; fails for a negative amount."""
    if amount < 0:
        raise ValueError("declined")
    return f"r-{customer}"


@obelisk.tool
def notify(text: str) -> str:
    """Send a text."""
    return f"sent {text}"


TOOLS = [get_customer, charge, notify]
PLAN = [
    {"_tool": "get_customer", "customer_id": "†input.id", "_outputPath": "†state.customer"},
    {
        "_tool": "charge",
        "customer": "†state.customer.id",
        "amount": "†input.amount",
        "_outputPath": "†state.receipt || †state.error",
    },
    {"_tool": "notify", "text": "†state.receipt", "_outputPath": "†state.sent"},
    {"_tool": "notify", "text": "†state.error.error.message", "_outputPath": "†state.sorry"},
    {"_tool": "charge", "customer": "†state.customer.id", "amount": -2, "_outputPath": "†state.x"},
]
PAYLOAD = '</script><img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


def _chromium() -> str:
    """Debian's Chromium, or a skip that says how to install it."""
    for candidate in (
        os.environ.get("OBELISK_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        "/usr/bin/chromium",
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.skip("no Chromium on this machine: .ci/run installs Debian's (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is missing: pip install 'obelisk[browser]'"
    )
    executable = _chromium()
    with sync_api.sync_playwright() as driver:
        try:
            launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except Exception as exc:  # a Chromium that cannot start here: say why
            pytest.skip(f"Chromium {executable} does not start: {exc}")
        yield launched
        launched.close()


class Visit:
    """One page in a fresh offline context: every request that is not for the page
    itself is refused and recorded, and so is every console error."""

    def __init__(self, browser: Any, allowed: str) -> None:
        self.context = browser.new_context(
            offline=allowed.startswith("file:"), viewport={"width": 1300, "height": 1000}
        )
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route(allowed))
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _route(self, allowed: str) -> Any:
        def route(handle: Any) -> None:
            url = handle.request.url
            if url.startswith(allowed):
                handle.continue_()
            else:
                self.requests.append(url)
                handle.abort()

        return route

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"{message.type}: {message.text}")

    def open(self, url: str) -> Any:
        self.page.goto(url)
        self.page.wait_for_selector("body[data-rendered]")
        return self.page

    def close(self) -> None:
        self.context.close()


def _off_loop(work: Callable[[], Any]) -> Any:
    """``work()`` in a thread of its own: Playwright's sync API keeps an event loop
    running in this one, where ``run_sync`` refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()


def _trace(input: Any, plan: Any = PLAN, tools: Any = TOOLS) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    _off_loop(
        lambda: obelisk.run_sync(
            plan, tools, input=input, on_event=lambda e: events.append(e.to_dict())
        )
    )
    return json.loads(json.dumps(events, default=str))


def _page_file(tmp_path: Path, events: list[dict[str, Any]], plan: Any = PLAN) -> str:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    from obelisk.viewer.load import read_document as read

    page = tmp_path / "run.html"
    page.write_text(render_page(read(str(trace), plan=plan)), encoding="utf-8")
    return page.as_uri()


@pytest.fixture()
def visit(browser: Any, tmp_path: Path) -> Iterator[tuple[Visit, list[dict[str, Any]]]]:
    events = _trace({"id": "c-7", "amount": -1})
    url = _page_file(tmp_path, events)
    seen = Visit(browser, url)
    seen.open(url)
    yield seen, events
    seen.close()
    assert seen.requests == []  # nothing but the page itself was asked for
    assert seen.errors == []  # no error, no warning on the console


def _last_status(events: list[dict[str, Any]]) -> dict[int, str]:
    ends = {
        "call_succeeded": "succeeded",
        "call_failed": "failed",
        "call_skipped": "skipped",
        "call_invalid_output": "invalid_output",
    }
    return {e["call"]: ends[e["event"]] for e in events if e["event"] in ends}


def test_the_nodes_and_their_colours_match_the_trace(visit: tuple[Visit, Any]) -> None:
    seen, events = visit
    statuses = _last_status(events)
    assert sorted(set(statuses.values())) == ["failed", "skipped", "succeeded"]
    nodes = seen.page.locator("#graph-svg .node")
    assert nodes.count() == len(statuses) == len(PLAN)
    for index, status in statuses.items():
        node = seen.page.locator(f'#graph-svg .node[data-key="{index}"]')
        assert node.get_attribute("data-status") == status
        fill = node.locator("rect").evaluate("rect => getComputedStyle(rect).fill")
        red, green, blue = (int(COLOURS[status][i : i + 2], 16) for i in (1, 3, 5))
        assert fill == f"rgb({red}, {green}, {blue})"
    assert seen.page.locator("#graph-svg .edge-alternative").count() == 2
    assert seen.page.locator("#timeline-svg .bar").count() == 4  # the skipped call never ran


def test_clicking_a_call_shows_its_arguments(visit: tuple[Visit, Any]) -> None:
    seen, events = visit
    seen.page.click('#graph-svg .node[data-key="1"]')
    started = next(e for e in events if e["event"] == "call_started" and e["call"] == 1)
    assert seen.page.inner_text("#detail-label") == "#1 charge"
    assert json.loads(seen.page.inner_text("#detail-arguments")) == started["arguments"]
    seen.page.click('#graph-svg .node[data-key="4"]')  # no error arm: it failed
    assert json.loads(seen.page.inner_text("#detail-error"))["message"] == "declined"
    assert json.loads(seen.page.inner_text("#detail-arguments"))["amount"] == -2


def test_a_skipped_call_shows_its_reason(visit: tuple[Visit, Any]) -> None:
    seen, events = visit
    skipped = next(e for e in events if e["event"] == "call_skipped")
    node = f'#graph-svg .node[data-key="{skipped["call"]}"]'
    shown = seen.page.text_content(f"{node} .node-reason") or ""
    assert shown[:20] == skipped["reason"][:20]
    seen.page.click(node)
    assert seen.page.inner_text("#detail-reason") == skipped["reason"]
    assert skipped["reason"] in seen.page.inner_text("#skipped")


@obelisk.tool
async def pause(n: int) -> int:
    """Wait 50 ms, then return ``n``."""
    import asyncio

    await asyncio.sleep(0.05)
    return n


def test_calls_that_ran_together_overlap_on_the_timeline(browser: Any, tmp_path: Path) -> None:
    plan = [
        {"_tool": "pause", "n": 1, "_outputPath": "†state.a"},
        {"_tool": "pause", "n": 2, "_outputPath": "†state.b"},
        {"_tool": "notify", "text": "done", "_after": [1], "_outputPath": "†state.c"},
    ]
    url = _page_file(tmp_path, _trace(None, plan, [pause, notify]), plan)
    seen = Visit(browser, url)
    try:
        page = seen.open(url)
        assert page.get_attribute("#in-flight", "data-peak") == "2"
        first, second = (
            page.locator(f'#timeline-svg .bar[data-key="{key}"] rect').bounding_box()
            for key in ("0", "1")
        )
        assert first is not None and second is not None
        assert (
            first["x"] < second["x"] + second["width"] and second["x"] < first["x"] + first["width"]
        )
        assert seen.page.locator("#graph-svg .edge-after").count() == 1
        assert seen.requests == [] and seen.errors == []
    finally:
        seen.close()


def test_a_hostile_tool_output_stays_text(browser: Any, tmp_path: Path) -> None:
    @obelisk.tool
    def hostile(text: str) -> str:
        """Return what an attacker wrote."""
        return PAYLOAD + text

    plan = [{"_tool": "hostile", "text": "<b>x</b>", "_outputPath": "†state.x"}]
    url = _page_file(tmp_path, _trace(None, plan, [hostile]), plan)
    seen = Visit(browser, url)
    try:
        page = seen.open(url)
        page.click('#graph-svg .node[data-key="0"]')
        assert page.inner_text("#detail-output") == PAYLOAD + "<b>x</b>"
        assert page.evaluate("() => window.pwned") is None
        assert page.locator("img").count() == 0 and page.locator("main b").count() == 0
        assert seen.requests == [] and seen.errors == []
    finally:
        seen.close()


def test_every_input_kind_renders_without_errors(browser: Any, tmp_path: Path) -> None:
    journal = str(tmp_path / "runs.db")
    order = {"id": "c-1", "amount": 2}
    _off_loop(lambda: obelisk.run_sync(PLAN, TOOLS, input=order, journal=journal))
    report = _off_loop(lambda: obelisk.simulate(PLAN, TOOLS, input=order).to_dict())
    answers = [{"calls": PLAN[:2], "output": None}, {"calls": [PLAN[2]], "output": "†state.sent"}]
    loop = obelisk.Loop(obelisk.ScriptedModel(answers), TOOLS)
    result = _off_loop(lambda: loop.run_sync(order))
    (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    (tmp_path / "loop.jsonl").write_text(result.to_jsonl(), encoding="utf-8")
    cases = [
        (read_document(None, journal=journal), "#graph-svg .node", len(PLAN)),
        (read_document(str(tmp_path / "report.json"), plan=PLAN), "#scenario-table th", 0),
        (read_document(str(tmp_path / "loop.jsonl")), "#turns .turn", 2),
    ]
    for number, (document, selector, count) in enumerate(cases):
        page_file = tmp_path / f"kind{number}.html"
        page_file.write_text(render_page(document), encoding="utf-8")
        seen = Visit(browser, page_file.as_uri())
        try:
            page = seen.open(page_file.as_uri())
            assert page.locator(selector).count() >= max(count, 1)
            if document["kind"] == "simulation":
                assert page.locator("#scenario-table tr").first.locator("th").count() == 1 + len(
                    report["scenarios"]
                )
            assert seen.requests == [] and seen.errors == []
        finally:
            seen.close()


def test_the_served_page_follows_a_run_in_progress(browser: Any, tmp_path: Path) -> None:
    release, entered = threading.Event(), threading.Event()

    @obelisk.tool
    def slow(n: int) -> int:
        """Wait for the test, then return ``n + 1``."""
        entered.set()
        release.wait(30)
        return n + 1

    plan = [
        {"_tool": "notify", "text": "go", "_outputPath": "†state.a"},
        {"_tool": "slow", "n": 1, "_after": [0], "_outputPath": "†state.b"},
    ]
    journal = str(tmp_path / "runs.db")
    worker = threading.Thread(
        target=lambda: obelisk.run_sync(plan, [notify, slow], journal=journal, run_id="live"),
        daemon=True,
    )
    worker.start()
    try:
        assert entered.wait(30)
        with ViewServer(lambda: read_document("live", journal=journal)) as server:
            seen = Visit(browser, server.url)
            try:
                page = seen.open(server.url)
                page.wait_for_selector('.node[data-key="1"][data-status="running"]')
                release.set()
                done = '.node[data-key="1"][data-status="succeeded"]'
                page.wait_for_selector(done, timeout=15000)
                page.click('.node[data-key="1"]')  # the page drew again; clicks still work
                assert page.inner_text("#detail-output") == "2"
                assert seen.requests == [] and seen.errors == []
            finally:
                seen.close()
    finally:
        release.set()
        worker.join(30)


def screenshot(target: Path) -> None:
    """The picture of docs/viewer.md: the payment example's trace, its skipped call
    clicked (run as a script)."""
    import tempfile

    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp())
    sys.path.insert(0, str(ROOT / "examples" / "payment"))
    example = ROOT / "examples" / "payment"
    plan = json.loads((example / "plan.json").read_text(encoding="utf-8"))
    import tools as payment  # type: ignore[import-not-found]

    found = [getattr(payment, n) for n in dir(payment)]
    tools = [t for t in found if isinstance(t, obelisk.Tool)]
    order = json.loads((example / "input.json").read_text(encoding="utf-8"))
    url = _page_file(work, _trace(order, plan, tools), plan)
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        page = launched.new_page(viewport={"width": 1200, "height": 1000})
        page.goto(url)
        page.wait_for_selector("body[data-rendered]")
        page.click('#graph-svg .node[data-key="3"]')
        page.screenshot(path=str(target), clip={"x": 0, "y": 0, "width": 1200, "height": 1000})
        launched.close()


if __name__ == "__main__":
    screenshot(Path(sys.argv[1]))
