"""A lesson is one spec (ui/tabs.py): the app builds one tab per spec, in the specs' order, with its title and link
id; a tab's ids on the page begin with its link id, the package's name; the style sheet reads the specs."""

import pkgutil
from importlib.util import find_spec

import gradio as gr
import pytest

import ui
from app import CSS, build_app
from ui.context import AppConfig
from ui.tabs import opened_by, specs


@pytest.fixture(scope="module")
def demo():
    return build_app(AppConfig("tiny-random", "cpu"))


def tab_of(block):
    """The lesson a block belongs to, as its spec (None: outside every lesson, in the page's header)."""
    while block is not None and "lab-page" not in (block.elem_classes or []):
        block = block.parent
    return None if block is None else next(spec for spec in specs() if block.elem_id == f"{spec.id}-page")


def test_the_app_builds_one_page_per_spec_in_teaching_order_with_its_title_and_link_id(demo):
    """Start here at the app's root, each lesson at its link id; each page holds its own lesson alone."""
    assert [(name, path) for path, name, _ in demo.pages] == [("Home", "")] + [
        (spec.title, spec.id) for spec in specs()[1:]
    ]
    assert specs()[0].id == "start"  # where the app opens
    lessons = [b.elem_id for b in demo.blocks.values() if "lab-page" in (b.elem_classes or [])]
    assert lessons == [f"{spec.id}-page" for spec in specs()]
    pages = {b.elem_id: b.page for b in demo.blocks.values() if "lab-page" in (b.elem_classes or [])}
    assert pages == {f"{spec.id}-page": "" if spec.id == "start" else spec.id for spec in specs()}
    for block in demo.blocks.values():
        if (spec := tab_of(block)) is not None:
            assert block.page == ("" if spec.id == "start" else spec.id), (spec.id, block.elem_id)


def test_every_package_in_ui_with_a_tab_module_is_a_tab_named_as_its_package():
    """A tab.py without a SPEC would be left out of the app without a word."""
    packages = {m.name for m in pkgutil.iter_modules(ui.__path__) if m.ispkg and find_spec(f"ui.{m.name}.tab")}
    assert {spec.id for spec in specs()} == packages
    assert [spec.order for spec in specs()] == sorted({spec.order for spec in specs()})


def test_an_old_link_id_opens_the_tab_it_was_given_to_and_an_unknown_one_none():
    assert opened_by("batching").id == "nondeterminism"
    assert opened_by("nondeterminism").id == "nondeterminism"
    assert opened_by("ui.step.tab") is None and opened_by("") is None and opened_by(None) is None


def test_a_tabs_element_ids_and_the_selectors_its_spec_names_begin_with_its_link_id(demo):
    """docs/architecture.md's rule, read from the built page (the beams tab's repetition panel: `repetition-`)."""
    prefixes = {spec.id: (f"{spec.id}-",) for spec in specs()} | {"beams": ("beams-", "repetition-")}
    stray = [
        (tab.id, block.elem_id)
        for block in demo.blocks.values()
        if (tab := tab_of(block)) is not None and block.elem_id and not block.elem_id.startswith(prefixes[tab.id])
    ]
    assert stray == []
    for spec in specs():
        named = [s for s in (spec.main, spec.chart, spec.try_this, spec.buttons) if s]
        assert all(s.startswith(f"#{spec.id}-") for s in named), (spec.id, named)


def test_a_tab_with_presets_picks_them_in_its_link_id_preset_dropdown(demo):
    """Links (`?tab=beams&preset=...`) and Start here's plans pick a preset by name in `#<link id>-preset`."""
    dropdowns = {b.elem_id: b for b in demo.blocks.values() if isinstance(b, gr.Dropdown) and b.elem_id}
    for spec in specs():
        if spec.presets:
            choices = [value for _, value in dropdowns[f"{spec.id}-preset"].choices]
            assert choices == list(spec.presets), spec.id


def test_projector_mode_keeps_every_row_of_buttons_a_spec_names_on_one_row_and_each_lesson_has_its_own_rules(demo):
    rows = [spec.buttons for spec in specs() if spec.buttons]
    assert rows and f".projector :is({', '.join(rows)}) > button" in CSS
    styled = [spec for spec in specs() if spec.css]
    assert styled and not [spec.id for spec in styled if spec.css in CSS]  # on its own page, not on every page
    for spec in styled:
        (block,) = [b for b in demo.blocks.values() if b.elem_id == f"{spec.id}-spec-css"]
        assert spec.css in block.value and tab_of(block) is spec


def test_every_lesson_names_what_its_main_action_draws_and_the_browser_tests_visit_each_one_from_the_specs():
    """The layout test visits every lesson, the ZeroGPU test every one it has no test of its own for, each by its
    spec: a new tab is in both without a line in either."""
    from tests.e2e import test_layout_e2e as layout
    from tests.e2e import test_zerogpu_e2e as zerogpu
    from tests.helpers.actions import ACTIONS

    lessons = [spec.id for spec in specs() if spec.id != "start"]
    assert [spec.id for spec in specs() if spec.chart is None] == ["start"]
    assert [spec.id for spec in layout.LESSONS] == lessons
    assert [spec.id for spec in zerogpu.IN_THE_SERVER] == [i for i in lessons if i not in zerogpu.OWN_TEST]
    assert set(ACTIONS) <= set(lessons) and set(zerogpu.OWN_TEST) <= set(lessons)


def test_a_page_that_loads_runs_no_server_event_and_each_setup_waits_for_its_tab(demo):
    """gradio's page keeps a loading status for every component an event of the page has touched, and rewrites them
    all at each status message of every later click (ui/opened.py): the page's load runs in the browser alone, and a
    tab's setup (a shared link's preset, what the model reads) listens to its tab's hidden button."""
    config = demo.get_config_file()
    loads = [d for d in config["dependencies"] if any(target[1] == "load" for target in d["targets"])]
    assert loads and not [d["api_name"] for d in loads if d["backend_fn"]]
    buttons = {c["props"].get("elem_id"): c["id"] for c in config["components"]}
    opened = {e: i for e, i in buttons.items() if str(e).endswith("-opened")}
    assert set(opened) == {"step-opened", "sandbox-opened", "classround-opened", *(f"{t}-opened" for t in LINKED)}
    for elem_id, component in opened.items():
        setups = [d for d in config["dependencies"] if [component, "click"] in [list(t) for t in d["targets"]]]
        assert len(setups) == 1 and setups[0]["backend_fn"], elem_id


LINKED = ("beams", "speculative", "constrained")  # tabs whose setup is a link's preset alone (ui.links.picked_on_load)
