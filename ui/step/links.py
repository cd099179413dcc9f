"""A setup in a link: `?tab=step&preset=confident&temperature=0.7` opens the step tab with that preset and those
settings, so a teacher can send the class exactly the lesson's starting point. "Copy a link" writes one."""

import json
from typing import NamedTuple

import gradio as gr

from decoding import knobs
from decoding.knobs import KNOBS
from decoding.stages import MIN_P, REPETITION, TEMPERATURE, TOP_K, TOP_P
from ui.context import AppConfig
from ui.events import error_html
from ui.step import handlers as h
from ui.step.controls import Reads, Setup, opens_more
from ui.step.lessons import DEFAULT_PRESET, PRESETS, SLUGS

# a link's names for the settings it carries (their stages' names) -> the knobs they set (then the seed, checked by
# knobs.check_seed)
PARAMS = {stage.name: stage.field for stage in (TEMPERATURE, TOP_K, TOP_P, MIN_P, REPETITION)}


class Opened(NamedTuple):
    """What a link sets on the page as it loads."""

    preset: str
    setup: Setup
    seed: int
    message: str  # what was wrong in the link, if anything
    note: str  # the settings note beside the knobs
    reads: Reads

    def values(self) -> list:
        """Its values one by one, the setup's and what the model reads unpacked: in the order of the page's
        components it sets (ui.step.tab.setup_outputs)."""
        return [self.preset, *self.setup, self.seed, self.message, self.note, *self.reads]


def settings_from_link(query: dict) -> tuple[str, dict, list[str]]:
    """(preset name, settings by knob field and "seed", what was wrong) from a link's query; a bad value is left out
    and named."""
    problems = []
    if query.get("tab", "step") != "step":  # a link to another tab: its preset and settings are that tab's
        query = {}
    slug = query.get("preset")
    name = SLUGS.get(slug, DEFAULT_PRESET) if slug else DEFAULT_PRESET
    if slug and slug not in SLUGS:
        problems.append(f"the link's preset {slug!r} is not one of {', '.join(SLUGS)}")
    p = PRESETS[name]
    found = dict(
        temperature=p.temperature, top_k=p.top_k, top_p=p.top_p, min_p=p.min_p, repetition_penalty=p.repetition, seed=0
    )
    for key in [*PARAMS, "seed"]:
        if key not in query:
            continue
        try:
            field = PARAMS.get(key, key)
            found[field] = knobs.check_seed(query[key]) if key == "seed" else KNOBS[field].check(query[key])
        except ValueError as err:
            problems.append(f"in the link, {err}")
    return name, found, problems


def open_link(config: AppConfig, request: gr.Request) -> Opened:
    """On page load: the link's preset and settings (or the default preset), the start line, the settings note,
    and what the model reads for that prompt."""
    query = dict(request.query_params) if request is not None else {}
    name, v, problems = settings_from_link(query)
    seed = v.pop("seed")
    setup = h.apply_preset(config, name)._replace(**v)
    # a knob the link sets in "More settings" (min-p, a penalty, the seed) opens it, so the class sees it
    more = opens_more(setup.min_p, setup.repetition_penalty) if not seed else gr.Accordion(open=True)
    setup = setup._replace(more=more)
    try:
        reads = h.prompt_view(config, config.model_id, setup.prompt, setup.template)
    except ValueError:  # the model cannot load (a hub id offline): Prefill will say so where it is pressed
        reads = Reads(text="", chips="")
    message = "".join(error_html(ValueError(m)) for m in problems)
    return Opened(preset=name, setup=setup, seed=seed, message=message, note=h.settings_note(v), reads=reads)


LINK_INPUTS = ["preset", *PARAMS, "seed"]  # the order of the controls the Copy button passes (ui/step/tab.py)

# runs in the browser with the controls' values: the link, written to the clipboard where the page may (https or
# localhost) and shown in the Link box either way
COPY_JS = f"""
({", ".join(LINK_INPUTS)}) => {{
  const slugs = {json.dumps({name: slug for slug, name in SLUGS.items()})};
  const url = new URL(window.location.href);
  url.search = '';
  const values = {{tab: 'step', preset: slugs[preset], {", ".join(LINK_INPUTS[1:])}}};
  if (document.body.classList.contains('projector')) values.projector = '1';
  for (const [key, value] of Object.entries(values)) {{
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  }}
  const link = url.toString();
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(link).catch(() => {{}});
  return link;
}}
"""
