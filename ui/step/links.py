"""A setup in a link: `?tab=step&preset=confident&temperature=0.7` opens the step tab with that preset and those
settings, so a teacher can send the class exactly the lesson's starting point. "Copy a link" writes one."""

import html
import json

import gradio as gr

from decoding import knobs
from decoding.knobs import KNOBS
from ui.context import AppConfig
from ui.step import handlers as h
from ui.step.controls import FIELDS
from ui.step.lessons import DEFAULT_PRESET, PRESETS, SLUGS

# the settings a link carries, in the order of the step tab's knobs (then the seed)
PARAMS = ("temperature", "top_k", "top_p", "min_p", "repetition", "seed")


def settings_from_link(query: dict) -> tuple[str, dict, list[str]]:
    """(preset name, settings, what was wrong) from a link's query; a bad value is left out and named."""
    problems = []
    slug = query.get("preset")
    name = SLUGS.get(slug, DEFAULT_PRESET) if slug else DEFAULT_PRESET
    if slug and slug not in SLUGS:
        problems.append(f"the link's preset {slug!r} is not one of {', '.join(SLUGS)}")
    p = PRESETS[name]
    found = {"temperature": p.temperature, "top_k": p.top_k, "top_p": p.top_p, "min_p": p.min_p,
             "repetition": p.repetition, "seed": 0}  # fmt: skip
    for key in PARAMS:
        if key not in query:
            continue
        try:
            found[key] = knobs.check_seed(query[key]) if key == "seed" else KNOBS[FIELDS[key]].check(query[key])
        except ValueError as err:
            problems.append(f"in the link, {err}")
    return name, found, problems


def open_link(config: AppConfig, request: gr.Request):
    """On page load: the link's preset and settings (or the default preset), the start line, the settings note,
    and what the model reads for that prompt."""
    query = dict(request.query_params) if request is not None else {}
    name, v, problems = settings_from_link(query)
    p = PRESETS[name]
    knobs = [v["temperature"], v["top_k"], v["top_p"], v["min_p"], v["repetition"]]
    message = "".join(f"<div class='step-error'>{html.escape(m)}</div>" for m in problems)
    note = h.settings_note(*knobs, 0.0, 0.0, "transformers")
    try:
        templated, chips = h.prompt_view(config, config.model_id, p.prompt, p.template)
    except ValueError:  # the model cannot load (a hub id offline): Prefill will say so where it is pressed
        templated, chips = "", ""
    start = h.start_line(name)
    return (name, p.prompt, p.template, *knobs, v["seed"], p.max_new_tokens, start, message, note, templated, chips)


# runs in the browser with the controls' values: the link, written to the clipboard where the page may (https or
# localhost) and shown in the Link box either way
COPY_JS = f"""
(preset, temperature, top_k, top_p, min_p, repetition, seed) => {{
  const slugs = {json.dumps({name: slug for slug, name in SLUGS.items()})};
  const url = new URL(window.location.href);
  url.search = '';
  const values = {{tab: 'step', preset: slugs[preset], temperature, top_k, top_p, min_p, repetition, seed}};
  if (document.body.classList.contains('projector')) values.projector = '1';
  for (const [key, value] of Object.entries(values)) {{
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  }}
  const link = url.toString();
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(link).catch(() => {{}});
  return link;
}}
"""
