"""One lesson, one page (ui/pages.py): the navigation links every lesson's page in teaching order and marks the one
it is on; the app's head is served as two files the browser keeps (ui/page_head.py)."""

import html
import re

from starlette.applications import Starlette
from starlette.testclient import TestClient

from ui.page_head import cached
from ui.pages import MIN_TAP_PX, nav_html, path_of
from ui.tabs import specs


def test_the_navigation_links_every_lesson_in_teaching_order_and_marks_the_page_it_is_on():
    here = specs()[3]
    links = re.findall(r'<a href="([^"]*)"( aria-current=page)?>([^<]*)</a>', nav_html(specs(), here))
    assert [(href, html.unescape(title)) for href, _, title in links] == [
        (f"./{path_of(spec)}", spec.title) for spec in specs()
    ]
    assert [html.unescape(title) for _, current, title in links if current] == [here.title]
    assert links[0][0] == "./"  # Start here is the app's root
    assert f'<summary>Lessons<span class="lab-nav-here">: {here.title}</span></summary>' in nav_html(specs(), here)


def test_each_page_sits_one_level_under_the_root_so_a_relative_link_reaches_every_other():
    assert [path_of(spec) for spec in specs()] == [""] + [spec.id for spec in specs()[1:]]
    assert all("/" not in path_of(spec) for spec in specs())


def test_every_link_of_the_navigation_is_a_full_tap_target():
    from ui.pages import CSS

    assert MIN_TAP_PX == 44 and f"min-height: {MIN_TAP_PX}px" in CSS


def test_the_head_is_two_files_named_by_what_they_hold_and_kept_by_the_browser():
    head = "<style>html { color: red; }</style><script>window.a = 1;</script><script>window.b = 2;</script>"
    tags, routes = cached(head)
    css, js = re.findall(r'(?:href|src)="([^"]+)"', tags)
    assert re.fullmatch(r"lab/head\.[0-9a-f]{12}\.css", css) and re.fullmatch(r"lab/head\.[0-9a-f]{12}\.js", js)
    client = TestClient(Starlette(routes=routes))
    got = client.get(f"/{js}")
    assert got.text == "window.a = 1;\nwindow.b = 2;" and got.headers["content-type"].startswith("text/javascript")
    assert "immutable" in got.headers["cache-control"]
    assert client.get(f"/{css}").text == "html { color: red; }"
    # what they hold changes their names, so a browser never keeps an old one
    assert cached(head.replace("red", "blue"))[0] != tags


def test_a_head_with_anything_else_than_plain_styles_and_scripts_is_refused():
    try:
        cached('<script src="x.js"></script>')
    except AssertionError:
        return
    raise AssertionError("a script with a src would have been dropped without a word")
