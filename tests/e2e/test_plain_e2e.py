"""The app on plain gradio (`DECODING_LAB_PLAIN=1`, none of ui/kit installed), and the app whose direct route cannot
find gradio's (a FastAPI that renamed its private router): each writes the same tokens as the app with its kit, for a
Prefill and three Steps in a browser. What differs is how fast, and what the kit's page scripts do: ui/kit/charts.py
releases each plotly chart gradio replaces, which plain gradio keeps (the sandbox's sweep, a plotly chart redrawn at
each preset)."""

import os
from pathlib import Path

import pytest

from tests.helpers.pages import figure, idle, listeners, new_page, pick, until
from ui.kit.switch import PLAIN
from ui.launch import ROOT, free_port, start_app
from ui.pages import path_of
from ui.sandbox.tab import SPEC as SANDBOX

pytestmark = [pytest.mark.browser, pytest.mark.bundled]

STEPS = 3
HIDDEN_ROUTER = Path(__file__).parents[1] / "helpers" / "hidden_router"


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """Two more apps beside the session's: on plain gradio, and with the private router hidden (its log kept)."""
    log = tmp_path_factory.mktemp("hidden") / "app.log"
    started = {}
    try:
        for name, env, kept in (
            ("plain", {PLAIN: "1"}, None),
            ("hidden", {"PYTHONPATH": f"{HIDDEN_ROUTER}{os.pathsep}{ROOT}"}, log),
        ):
            port = free_port()
            started[name] = (start_app(port, log=kept, OMP_NUM_THREADS="1", **env), f"http://127.0.0.1:{port}/")
        yield {name: url for name, (_, url) in started.items()}, log
    finally:
        for proc, _ in started.values():
            proc.terminate()
            proc.wait(timeout=20)


def tokens(browser, url: str) -> tuple[list[str], dict]:
    """A Prefill and STEPS Steps on the Step lesson's defaults (seed 0): the tokens drawn, as the page shows them, and
    what of the kit's page scripts the page runs."""
    page = new_page(browser)
    try:
        page.goto(f"{url}step?projector=0")
        page.locator("#step-prefill").wait_for()
        idle(page)
        page.click("#step-prefill")
        page.wait_for_selector("#step-chips .tok.prompt", timeout=120_000)
        for made in range(1, STEPS + 1):
            idle(page)
            page.click("#step-step")
            until(page, lambda n=made: page.locator("#step-chips .tok.gen").count() == n, 120, f"token {made}")
        idle(page)
        kit = page.evaluate("() => ({frames: 'labLoaderLoopsEnded' in window, charts: 'labDrawing' in window})")
        return page.locator("#step-chips .tok.gen").all_inner_texts(), kit
    finally:
        page.close()


def test_plain_gradio_and_a_hidden_router_write_the_kit_s_tokens(browser, app_url, apps):
    urls, log = apps
    kits, with_kit = tokens(browser, app_url)
    assert len(kits) == STEPS and with_kit == {"frames": True, "charts": True}
    plains, on_plain = tokens(browser, urls["plain"])
    assert plains == kits, f"plain gradio wrote {plains}, the kit's app {kits}"
    assert on_plain == {"frames": False, "charts": False}  # none of the kit's page scripts on plain gradio
    hiddens, _ = tokens(browser, urls["hidden"])
    assert hiddens == kits, f"with the router hidden the app wrote {hiddens}, the kit's app {kits}"
    said = [line for line in log.read_text().splitlines() if "direct route off" in line]
    assert len(said) == 1, said


# presets picked in turn on the sandbox: each draws a new temperature sweep, a plotly chart gradio replaces
SWEEPS = ("confident", "flat", "two-way tie") * 2


def replaced_charts_held(browser, url: str) -> tuple[int, int]:
    """The event listeners the sandbox's page holds more after SWEEPS new sweeps than before them (after a garbage
    collection), and the plotly charts on the page at the end."""
    page = new_page(browser)
    try:
        page.goto(url + path_of(SANDBOX) + "?projector=0")
        page.locator("#sandbox-sweep .js-plotly-plot").wait_for()
        idle(page)
        held, shown = listeners(page), figure(page, "sandbox-sweep")
        for preset in SWEEPS:
            pick(page, "sandbox-preset", preset)
            until(page, lambda was=shown: figure(page, "sandbox-sweep") != was, 60, f"the sweep of {preset}")
            idle(page)
            shown = figure(page, "sandbox-sweep")
        return listeners(page) - held, page.locator("#sandbox-sweep .js-plotly-plot").count()
    finally:
        page.close()


def test_the_kit_releases_each_plotly_chart_gradio_replaces_and_plain_gradio_keeps_them(browser, app_url, apps):
    urls, _ = apps
    kept_by_kit, charts = replaced_charts_held(browser, app_url)
    kept_by_plain, _ = replaced_charts_held(browser, urls["plain"])
    # measured here: 0 with the kit, 624 on plain gradio (~100 listeners a replaced chart keeps, with its SVG)
    said = f"listeners held after {len(SWEEPS)} new sweeps: {kept_by_kit} with the kit, {kept_by_plain} on plain gradio"
    assert charts == 1, said
    assert kept_by_plain >= 50 * len(SWEEPS), f"plain gradio no longer keeps a replaced chart: {said}"
    assert kept_by_kit < kept_by_plain / 10, f"the kit's page keeps the charts gradio replaced: {said}"
