"""What a click of the step tab reads from the page, as one input: the sampler knobs, what the bars show, and which
costly panels are open and on screen.

Each input of a gradio event costs the page at every click (gradio 6 walks its components and copies their props for
each input's status; ~12 ms an input on this app's page, measured: docs/measurements/step.md). Twelve inputs made a
Step cost the page ~150 ms before its answer was drawn. So the page's own script keeps one hidden box up to date as
the knobs move (`WRITE_JS`, a gradio event that runs in the page alone) and as the panels open, close and scroll
(ui/step/keys.py), and a click sends that box. An API caller (the benchmarks) writes it with `written`.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass

from visuals.distribution import MODES

# the knobs' order in the box, as the page's script sends them: the `Knobs` group's fields
KNOB_FIELDS = (
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "order",
)
STRATEGIES = "strategies"  # the name of "each strategy alone" in `on_screen`
LOADING = "the page is still loading its controls: wait a moment and press again"


@dataclass(frozen=True)
class PageState:
    knobs: Mapping  # the sampler knobs by `SamplerSettings` field, and the engine order
    mode: str  # what the bars show (visuals.distribution.MODES)
    strategies_open: bool = True
    on_screen: tuple[str, ...] | None = None  # the costly panels on screen; None: not said (an API call)
    lens_open: bool = False
    asks: str = ""  # the page's own id for asking how far its Prefill has read (ui/step/reading.py)

    @property
    def strategies_shown(self) -> bool:
        """ "Each strategy alone" is drawn in a click's answer while it is open and on screen."""
        return self.strategies_open and (self.on_screen is None or STRATEGIES in self.on_screen)


def read(box) -> PageState:
    """The page's box as a `PageState`; a ValueError that says what to do when it is empty or not one."""
    try:
        raw = json.loads(box) if box else None
        knobs = dict(zip(KNOB_FIELDS, raw["knobs"], strict=True))
        mode = raw.get("mode", MODES[0])
    except (TypeError, ValueError, KeyError) as err:
        raise ValueError(f"{LOADING} ({err.__class__.__name__})") from None
    on_screen = raw.get("on_screen")
    return PageState(
        knobs=knobs,
        mode=mode,
        strategies_open=bool(raw.get("strategies_open", True)),
        on_screen=None if on_screen is None else tuple(str(on_screen).split()),
        lens_open=bool(raw.get("lens_open", False)),
        asks=str(raw.get("asks", ""))[:40],
    )


def written(
    knobs: Mapping, mode: str = MODES[0], strategies_open=True, on_screen: str | None = None, lens_open=False
) -> str:
    """The box as the page's script writes it, for an API caller."""
    state = {"knobs": [knobs[f] for f in KNOB_FIELDS], "mode": mode}
    state |= {"strategies_open": strategies_open, "lens_open": lens_open}
    return json.dumps(state | ({} if on_screen is None else {"on_screen": on_screen}))


# the page's side: the knobs as they change, merged into what the page's other scripts keep there (the bars' mode,
# the panels' state: ui/step/keys.py, ui/step/tab.py) and written as the box's value
WRITE_JS = """(...knobs) => {
  const state = window.__stepPage = window.__stepPage || {strategies_open: true, lens_open: false};
  state.knobs = knobs;
  // an id of its own, to ask how far its Prefill has read (ui/step/reading.py)
  state.asks = state.asks
    || Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => (b % 36).toString(36)).join('');
  return JSON.stringify(state);
}"""
