"""Projector mode: the whole page's type 1.4 times as large, for a room reading one screen from its back row.

It scales what the text is, not what the page looks like: gradio's type sizes (`--text-xxs` to `--text-xxl`, from which
its body text, labels, hints and buttons take theirs), the app's own sizes (each written `calc(15px * var(--lab-type,
1))` in the views' CSS, the HTML charts' among them: visuals.chart's parts are in em of its 15 px) and plotly's fonts
(ui/kit/charts.py redraws a chart with them). The CSS zoom it used before left every computed size alone and the charts'
text as it was: body text went from 14 to 15.4 px, help text stayed at 12, and the tab labels, made smaller to keep
one row, shrank to 12.

The class `projector` sits on <html> from the first paint (`HEAD`: a link's ?projector=1 or =0, else what this browser
chose last, on any page: a link's choice or the checkbox's is kept in localStorage, for the next page) and on <body>
once it exists; the checkbox at the top switches it (`SWITCH_JS`).
"""

import gradio as gr

TYPE = 1.4  # each text's size in projector mode, against the same text's in normal mode
NARROW_PX = 640  # a window narrower than this is a phone's: its layout (and its charts, ui/kit/charts.py) fit a column
STORED = "decoding-lab-projector"  # the browser's localStorage key: projector mode outlives a reload


def _px(size: str) -> str:
    return f"{float(size.removesuffix('px')) * TYPE:g}px"


# gradio's seven type sizes as this theme sets them (gr.themes.Default's text_md), each TYPE times as large: every
# text of gradio's takes one of them. On <html> itself, where gradio's :root defines them, so the theme's own
# variables built from them (--body-text-size: var(--text-md)) follow. In the page's head, not in the app's CSS: gradio
# scopes the app's rules under its own container, which <html> sits outside of.
TYPE_SIZES = "; ".join(
    f"--text-{name}: {_px(getattr(gr.themes.sizes.text_md, name))}"
    for name in ("xxs", "xs", "sm", "md", "lg", "xl", "xxl")
)
HEAD = f"""<style>
html.projector {{ {TYPE_SIZES}; --lab-type: {TYPE}; }}
</style>
<script>
(() => {{
  const asked = new URLSearchParams(location.search).get('projector');
  const on = asked !== null ? ['1', 'true', 'on'].includes(asked) : localStorage.getItem('{STORED}') === '1';
  // a link's choice is kept, so the pages the navigation opens next open in the same mode
  if (asked !== null) localStorage.setItem('{STORED}', on ? '1' : '0');
  document.documentElement.classList.toggle('projector', on);
  const mark = () => document.body.classList.toggle('projector', on);
  document.body ? mark() : addEventListener('DOMContentLoaded', mark);
}})();
</script>"""

# the checkbox, once the page loads, shows the mode the page opened in
SHOWN_JS = "() => document.documentElement.classList.contains('projector')"
# the page's plotly charts are drawn again with the new type (ui/kit/charts.py listens for the event), and laid out
# again for their boxes, which the new type may have widened or narrowed (plotly follows a window's resize alone)
SWITCH_JS = f"""(on) => {{
  for (const e of [document.documentElement, document.body]) e.classList.toggle('projector', Boolean(on));
  localStorage.setItem('{STORED}', on ? '1' : '0');
  dispatchEvent(new Event('lab-projector'));
  requestAnimationFrame(() => dispatchEvent(new Event('resize')));
}}"""

# the title's one line alone, its subtitle's height going to the lesson
CSS = """
.projector #app-title p { display: none; }
"""
