"""README.md's list of the lessons, written from the lessons' specs (each tab's `SPEC.summary`, ui/tabs.py), so the
README names every lesson the app has, in its teaching order, in the words its package keeps:

    .venv/bin/python deploy/readme.py          # (re)writes the section under "## The lessons"
    .venv/bin/python deploy/readme.py --check  # exits 1 when README.md's list differs from the specs'
"""

import argparse
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ui.tabs import specs  # noqa: E402 -- the repository's root first on the path: run as a script

README = ROOT / "README.md"
HEADING = "## The lessons\n\n"
WIDTH = 120  # the README's line length


def lessons() -> str:
    """One bullet per lesson, in teaching order: its title in bold, then its summary."""
    return "".join(
        textwrap.fill(f"- **{spec.title}**: {spec.summary}", WIDTH, subsequent_indent="  ", break_on_hyphens=False)
        + "\n"
        for spec in specs()
    )


def with_lessons(text: str) -> str:
    """`text` (README.md's) with the section under HEADING, up to its next blank line, replaced by `lessons()`."""
    start = text.index(HEADING) + len(HEADING)
    end = text.index("\n\n", start) + 1
    return text[:start] + lessons() + text[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md's list differs from the specs'")
    args = parser.parse_args()
    text = README.read_text()
    wanted = with_lessons(text)
    if args.check:
        if wanted != text:
            print("README.md's lessons differ from the specs': run `make readme`", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
