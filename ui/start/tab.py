"""The "Start here" tab: what the lab is, the two ideas a learner needs first, and the class plans (ui/start/plans.py)
drawn as plain links, so a teacher can click a step or copy it and send it to the class."""

import html
import re

import gradio as gr

from ui.context import AppConfig, quoting
from ui.lesson import lesson
from ui.links import slugs
from ui.pages import href
from ui.start.plans import PLANS, Plan, Step
from ui.tabs import TabSpec, specs
from visuals.glossary import term

LESSON = (
    "Decoding Lab runs a real language model on this server and lets you watch it write, one token at a time, and "
    "see why it writes what it does."
)
PLANS_LINE = """\
Each page is one lesson (the links above). A class plan below takes about 50 minutes: each step's link opens its
lesson, set up (copy the link to send it to a class); do what the step says, and look for what it says to notice."""
INTRO = """\
Two ideas are all you need first:
- A **token** is a piece of text the model reads and writes: a word, a piece of a word, or a word with its leading
  space (shown as ␣Paris).
- At each step the model gives every token it knows a **probability** of coming next. A decoding strategy picks one
  of them, the text grows by that token, and the model is asked again."""
# two plans side by side on a laptop or a projector, one under the other on a narrow window; on a phone a plan is as
# wide as the screen (a column of 420 px ran 30 px past a 390 px phone's edge, and cut its words)
CSS = """
#start-plans .plans {
  display: grid; grid-template-columns: repeat(auto-fit, minmax(min(420px, 100%), 1fr)); gap: 12px 20px;
}
#start-plans .plan { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 4px 14px 8px; }
#start-plans h3 { margin: 6px 0 2px; }
#start-plans .goal { margin: 0 0 6px; color: var(--body-text-color-subdued); }
#start-plans ol { margin: 0; padding-left: 1.4em; }
#start-plans li { margin-bottom: 6px; }
#start-plans .notice { display: block; }
#start-plans a { padding: 0; }
"""


def inline(text: str) -> str:
    """A plan's words as HTML: **bold**, `code` and a glossary [[term]], everything else escaped."""
    text = html.escape(text, quote=False)
    text = re.sub(r"`(.+?)`", r"<code>\1</code>", re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text))
    return re.sub(r"\[\[(.+?)\]\]", lambda m: term(html.unescape(m.group(1))), text)


def tab_of(step: Step) -> TabSpec:
    """The tab a step's link opens, looked up as the page is built, never as this module is imported: finding the
    specs imports this module."""
    return next(spec for spec in specs() if spec.id == step.tab)


def where(step: Step) -> str:
    """The link's words: the tab's title, and the preset's name as its dropdown shows it."""
    tab = tab_of(step)
    preset = slugs(tab.presets)[step.preset] if step.preset else ""
    return html.escape(f"{tab.title} · {preset}" if preset else tab.title)


def page_link(step: Step) -> str:
    """The step's link as Start here draws it: straight to its lesson's page (`./step?tab=step&preset=...`), the
    same page and query a link sent before reaches through a redirect (ui.pages)."""
    return f"{href(tab_of(step))}{step.link}"


def step_html(step: Step, config: AppConfig) -> str:
    """A step, its notice led by the run its numbers were measured on where this run is another."""
    notice = quoting(step.notice, config) if step.quotes else step.notice
    return (
        f'<li><a href="{html.escape(page_link(step))}">{where(step)}</a> ({step.minutes} min). {inline(step.do)}'
        f'<span class="notice"><i>Notice:</i> {inline(notice)}</span></li>'
    )


def plan_html(plan: Plan, config: AppConfig) -> str:
    steps = "".join(step_html(step, config) for step in plan.steps)
    return (
        f'<section class="plan"><h3>{html.escape(plan.title)} ({plan.minutes} min)</h3>'
        f'<p class="goal">{inline(plan.goal)}</p><ol>{steps}</ol></section>'
    )


def plans_html(config: AppConfig) -> str:
    """Every plan, with the style that lays them out (in the same block: a block of its own would take a row)."""
    plans = "".join(plan_html(plan, config) for plan in PLANS)
    return f'<style>{CSS}</style><div class="plans">{plans}</div>'


def build(config: AppConfig) -> None:
    """The tab (inside the caller's gr.Tab): words and links only, no events; `config` names the run the notices'
    numbers were measured on where this run is another."""
    lesson(
        LESSON,
        "Start here",
        first="**New to this?** Open **Two ideas to know first** below, then **Step by step**, and press **Prefill**.",
    )
    # closed, so the plans' first link stays on a projector's first screen: the beginner's line points to it
    with gr.Accordion("Two ideas to know first: tokens and probabilities", open=False, elem_id="start-ideas"):
        gr.Markdown(INTRO, elem_id="start-intro")
    gr.Markdown(PLANS_LINE, elem_id="start-how")
    gr.HTML(plans_html(config), elem_id="start-plans")


SPEC = TabSpec(
    "Start here",
    "start",
    0,
    build,
    main="#start-plans a",
    summary=(
        "what a token and a probability are, and four class plans; each step of a plan is a link that opens its "
        "lesson set up."
    ),
)
