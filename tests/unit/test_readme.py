"""README.md's list of the lessons is written from the specs (deploy/readme.py): every lesson the app has, in its
teaching order, with its summary; a lesson added or renamed without `make readme` fails here."""

import importlib.util
from pathlib import Path

from ui.tabs import specs

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("readme", ROOT / "deploy" / "readme.py")
readme = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme)


def test_every_lesson_has_a_summary_of_its_own():
    summaries = [spec.summary for spec in specs()]
    assert all(s.strip() for s in summaries), [spec.id for spec in specs() if not spec.summary.strip()]
    assert len(set(summaries)) == len(summaries)


def test_the_readme_lists_every_lesson_from_its_spec_in_teaching_order():
    text = (ROOT / "README.md").read_text()
    assert readme.with_lessons(text) == text, "README.md's lessons differ from the specs': run `make readme`"
    listed = text[text.index(readme.HEADING) :].split("\n\n")[1]
    titles = [line.split("**")[1] for line in listed.splitlines() if line.startswith("- **")]
    assert titles == [spec.title for spec in specs()]


def test_a_changed_summary_is_seen(monkeypatch):
    text = (ROOT / "README.md").read_text()
    first = specs()[0]
    monkeypatch.setattr(readme, "specs", lambda: (type(first)(**{**first.__dict__, "summary": "something else."}),))
    assert readme.with_lessons(text) != text and "- **Start here**: something else.\n\n## " in readme.with_lessons(text)
