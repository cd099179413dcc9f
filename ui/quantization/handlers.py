"""The quantization tab's step-by-step handlers. A `SideBySide` holds three KV caches, so the page keeps a short
session id and `RUNS` (a view of the one session store, ui.sessions) maps it to the run; the quantized copy comes
from the process's few shared copies (decoding.quantization.copies). Every forward pass runs inside `model_turn`,
so a class's batched steps go between them. A handler takes the session id and the controls by name and answers
with the whole `View`: the session id and the side by side, one patched element (ui/patch.py) to which a step sends
what it changed: its words, its distributions, its KL column and a chip on each stream."""

import html
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from decoding import values
from decoding.models import BUNDLED
from decoding.prompts import encode_prompt, token_texts
from decoding.quantization.copies import COPIES
from decoding.quantization.formats import AS_STORED, BOTH, FORMATS, PARTS
from decoding.quantization.linear import SIMULATED
from decoding.quantization.model import kernels_of
from decoding.quantization.side_by_side import SideBySide, tally
from ui.alive import gone
from ui.context import CHAT, RAW, AppConfig, get_model, model_turn
from ui.patch import Patcher
from ui.running import Running
from ui.sessions import STORE, kv_bytes_at
from visuals.glossary import stop_reason, term
from visuals.quantization import side_by_side as figs

CHOICES = [name for name in FORMATS if name != "float32"]  # every format but the reference, new ones included
DEFAULT_FORMAT = "int8"
MAX_NEW, RUN_N, LABEL = 64, 20, "the quantization side by side"
STEPS_LABEL = f"Steps per Run (1-{MAX_NEW})"


def choices(model_id: str) -> list[str]:
    """The formats offered for a model: "as stored" only for the bundled file, whose weights it holds exactly."""
    return [name for name in CHOICES if name != AS_STORED or model_id == BUNDLED]


@dataclass(frozen=True)
class Controls:
    prompt: Any
    template: Any
    fmt: Any
    steps: Any  # how many steps Run takes
    part: Any = BOTH  # which part the format rounds: formats.PARTS


class Started(NamedTuple):
    model_id: str
    ids: tuple[int, ...]
    fmt: str
    part: str
    template: str


class View(NamedTuple):
    """The step outputs by name: a handler's answer, and (holding components) the page's outputs."""

    sid: Any
    # the side by side: the step's three numbers and the running tally, both distributions on the same context, KL
    # per step, both greedy streams as chips with the first divergence marked
    shown: Any


@dataclass
class Session:
    key: Started
    pair: SideBySide
    label: str  # the format's label and how it runs
    running: Running = field(default_factory=Running)  # its views before the answer that stops it (ui.running)
    sent: Patcher = field(default_factory=Patcher)  # what the page's side by side was last sent


RUNS = STORE.kind(
    "quantization run",
    bytes_of=lambda s: 3 * kv_bytes_at(s.pair.reference.lm, len(s.key.ids) + MAX_NEW),
    again="press Step",
    smaller="use a shorter prompt",
)


def release(sid: str | None) -> None:
    """gr.State's delete_callback: a plain function, so gradio's config copy never deep-copies the runs."""
    RUNS.release(sid)


def reference_config(config: AppConfig) -> AppConfig:
    """The float32 model's settings, whatever --weights the other tabs serve and on every device (on a GPU the
    default dtype is bfloat16, and every format here is rounded from float32's weights)."""
    return replace(config, weights="float32", dtype="float32")


def reference_model(config: AppConfig):
    """The float32 model, whatever --weights the other tabs serve."""
    return get_model(reference_config(config))


def how_it_runs(lm) -> str:
    kernels = kernels_of(lm.model)
    return ", ".join(k if k == SIMULATED else f"kernel {k}" for k in kernels)


def _started(config: AppConfig, controls: Controls) -> tuple[Started, Any]:
    lm = reference_model(config)
    fmt = values.choice("Format", controls.fmt, choices(lm.model_id))
    part = values.choice("Rounded", controls.part, PARTS)
    template = values.choice("Prompt format", controls.template, [RAW, CHAT])
    if not isinstance(controls.prompt, str) or not controls.prompt.strip():
        raise ValueError("the prompt is empty: type some text for both formats to continue")
    prompt = encode_prompt(lm.tokenizer, controls.prompt, template == CHAT, lm.context_length - MAX_NEW)
    return Started(lm.model_id, tuple(prompt.ids), fmt, part, template), prompt


def _current(config: AppConfig, sid, controls: Controls) -> tuple[str, Session]:
    """This session's pair, or a fresh prefilled one when there is none or a control changed since it began."""
    key, prompt = _started(config, controls)
    session = RUNS.get(sid)
    if session is not None and session.key == key:
        return sid, session
    lm = reference_model(config)
    with model_turn(lm, LABEL):
        quantized = COPIES.get(lm, key.fmt, key.part)
        pair = SideBySide(lm, quantized, prompt, MAX_NEW)
        pair.prefill()
    on = "" if key.part == BOTH else f" on the {key.part.replace(' only', '')} only"
    session = Session(key, pair, f"{key.fmt}{on} ({how_it_runs(quantized)})")
    sid = sid or uuid.uuid4().hex
    RUNS.put(sid, session)
    return sid, session


def step(config: AppConfig, sid, controls: Controls):
    """One step, its view yielded (as Run's are): a Format change waits for it, so the two reach the page in order."""
    sid, session = _current(config, sid, controls)
    _not_stopped(session)
    yield from _steps(sid, session, 1)


def run_n(config: AppConfig, sid, controls: Controls):
    """Run's steps, the view after each one: the streams grow as it goes, and a Format change can stop it."""
    n = values.whole(STEPS_LABEL, controls.steps, 1, MAX_NEW)
    sid, session = _current(config, sid, controls)
    _not_stopped(session)
    yield from _steps(sid, session, n)


def _steps(sid: str, session: Session, n: int):
    """Up to `n` steps of this session's pair, each view yielded as `Running` does: a new format or Reset stops
    them, and its answer reaches the page after their last view (ui.running). A view is drawn only when it is sent:
    each is the changes since the one before it on the page."""

    def each():
        for _ in range(n):
            if session.pair.done or RUNS.get(sid) is not session:  # ended, or freed for another session's run
                return
            with model_turn(session.pair.reference.lm, LABEL):
                session.pair.step()
            yield session

    yield from session.running.views(each(), draw=lambda _: view(sid, session))


def _not_stopped(session: Session) -> None:
    if session.pair.done:
        reason = session.pair.reference.trace.stop_reason
        raise ValueError(f"float32 has stopped ({reason}): press Reset, or change the prompt{_raw_hint(session)}")


def _raw_hint(session: Session) -> str:
    """What to try when a chat model given raw text stops at once: it was trained to answer inside its template."""
    if session.key.template == RAW and session.pair.reference.trace.stop_reason == "eos":
        return "; this chat model was trained to answer inside its chat template: pick chat template as Prompt format"
    return ""


def back(sid) -> View:
    session = RUNS.get(sid)
    if session is None:
        raise ValueError(gone("run", "press Step to start one", had=sid is not None))
    session.pair.back()
    return view(sid, session)


def reset(sid) -> View:
    _stop(sid)
    return blank()


def changed(sid, fmt, part) -> View:
    """A new format, part or prompt format: the old run is let go and the page says what the next Step starts."""
    _stop(sid)
    on = "" if part == BOTH else f", on the {html.escape(str(part))}"
    said = (
        f"<i>Now <b>{html.escape(str(fmt))}</b>{on}: press <b>Step</b> or <b>Run</b> to start it beside float32 (the "
        "last run was cleared).</i>"
    )
    return blank(said)


def _stop(sid) -> None:
    """Release this session's run, and stop a Run under way after the view in flight (ui.running)."""
    session = RUNS.get(sid)
    RUNS.release(sid)
    if session is not None:
        session.running.stop()


BLANK = "<i>Press <b>Step</b> or <b>Run</b>: float32 and the chosen format take greedy steps from the same prompt.</i>"


def blank(status: str = BLANK) -> View:
    """The side by side before a run, whole (a new run's first answer is whole too)."""
    return View(sid=None, shown=figs.step_view(status, figs.distributions_figure([], [], [], "", 0)).html)


def whole(sid) -> dict | str:
    """The whole side by side as last sent, for a page whose copy missed a change (ui/patch.py)."""
    session = RUNS.get(sid) if sid else None
    return session.sent.resend() if session is not None else blank().shown


def view(sid: str, session: Session) -> View:
    pair, fmt = session.pair, session.key.fmt
    tok = pair.reference.lm.tokenizer
    steps, divergence = pair.steps, pair.first_divergence()
    if not steps:
        return View(
            sid=sid,
            shown=session.sent.send(figs.step_view(BLANK, figs.distributions_figure([], [], [], "", 0), fmt=fmt)),
        )
    reference = token_texts(tok, [s.reference for s in steps])
    own = token_texts(tok, [s.own for s in steps if s.own is not None])
    last, t = steps[-1], tally(steps)
    gap = steps[divergence].gap if divergence is not None else None
    status = (
        f"<b>{html.escape(session.label)}</b> · step {len(steps)}: {term('KL')} <b>{last.kl:.4f}</b> {term('nats')} · "
        f"Δp <b>{last.delta_p:+.3f}</b> · same {term('top-1')} <b>{'yes' if last.same_top1 else 'no'}</b><br>"
        f"{figs.tally_line(t.same_top1, t.steps, t.kl_mean)}. {figs.divergence_line(divergence, gap, fmt)}"
    )
    if pair.done:
        status += f"<br>float32 stopped ({stop_reason(pair.reference.trace.stop_reason)}){_raw_hint(session)}."
    dist = figs.distributions_figure(
        token_texts(tok, list(last.top_ids)), list(last.p_reference), list(last.p_format), fmt, len(steps)
    )
    kls, same = [s.kl for s in steps], [s.same_top1 for s in steps]
    shown = figs.step_view(status, dist, kls, same, divergence, reference, own, fmt)
    return View(sid=sid, shown=session.sent.send(shown))
