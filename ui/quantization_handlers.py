"""The quantization tab's step-by-step handlers. A `SideBySide` holds three KV caches, so the page keeps a short
session id and `RUNS` (a view of the one session store, ui.sessions) maps it to the run; the quantized copy comes
from the process's few shared copies (decoding.quantization.copies). Every forward pass runs inside `model_turn`,
so a class's batched steps go between them. A handler takes the session id and the controls by name and answers
with the whole `View`."""

import uuid
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from decoding import values
from decoding.prompts import encode_prompt, token_texts
from decoding.quantization.copies import COPIES
from decoding.quantization.formats import FORMATS
from decoding.quantization.linear import SIMULATED
from decoding.quantization.model import kernels_of
from decoding.quantization.side_by_side import SideBySide, tally
from ui.context import CHAT, AppConfig, get_model, model_turn
from ui.sessions import STORE, kv_bytes_at
from visuals import quantization as figs

CHOICES = [name for name in FORMATS if name != "float32"]  # every format but the reference, new ones included
DEFAULT_FORMAT = "int8"
MAX_NEW, RUN_N, LABEL = 64, 20, "the quantization side by side"
STEPS_LABEL = f"Steps per Run (1-{MAX_NEW})"


@dataclass(frozen=True)
class Controls:
    prompt: Any
    template: Any
    fmt: Any
    steps: Any  # how many steps Run takes


class Started(NamedTuple):
    model_id: str
    ids: tuple[int, ...]
    fmt: str


class View(NamedTuple):
    """The step outputs by name: a handler's answer, and (holding components) the page's outputs."""

    sid: Any
    status: Any  # the step's three numbers and the running tally
    streams: Any  # both greedy streams as chips, the first divergence marked
    dist: Any  # both distributions on the same context
    kl: Any  # KL per step


@dataclass
class Session:
    key: Started
    pair: SideBySide
    label: str  # the format's label and how it runs


RUNS = STORE.kind(
    "quantization run",
    bytes_of=lambda s: 3 * kv_bytes_at(s.pair.reference.lm, len(s.key.ids) + MAX_NEW),
    again="press Step",
    smaller="use a shorter prompt",
)


def release(sid: str | None) -> None:
    """gr.State's delete_callback: a plain function, so gradio's config copy never deep-copies the runs."""
    RUNS.release(sid)


def reference_model(config: AppConfig):
    """The float32 model, whatever --weights the other tabs serve."""
    return get_model(replace(config, weights="float32"))


def how_it_runs(lm) -> str:
    kernels = kernels_of(lm.model)
    return ", ".join(k if k == SIMULATED else f"kernel {k}" for k in kernels)


def _started(config: AppConfig, controls: Controls) -> tuple[Started, Any]:
    lm = reference_model(config)
    fmt = values.choice("Format", controls.fmt, CHOICES)
    template = values.choice("Prompt format", controls.template, ["raw text", CHAT])
    prompt = encode_prompt(lm.tokenizer, controls.prompt, template == CHAT, lm.context_length - MAX_NEW)
    return Started(lm.model_id, tuple(prompt.ids), fmt), prompt


def _current(config: AppConfig, sid, controls: Controls) -> tuple[str, Session]:
    """This session's pair, or a fresh prefilled one when there is none or a control changed since it began."""
    key, prompt = _started(config, controls)
    session = RUNS.get(sid)
    if session is not None and session.key == key:
        return sid, session
    lm = reference_model(config)
    with model_turn(lm, LABEL):
        quantized = COPIES.get(lm, key.fmt)
        pair = SideBySide(lm, quantized, prompt, MAX_NEW)
        pair.prefill()
    session = Session(key, pair, f"{key.fmt} ({how_it_runs(quantized)})")
    sid = sid or uuid.uuid4().hex
    RUNS.put(sid, session)
    return sid, session


def step(config: AppConfig, sid, controls: Controls, n: int = 1) -> View:
    sid, session = _current(config, sid, controls)
    lm = session.pair.reference.lm
    for _ in range(n):
        if session.pair.done:
            break
        with model_turn(lm, LABEL):
            session.pair.step()
    return view(sid, session)


def run_n(config: AppConfig, sid, controls: Controls) -> View:
    return step(config, sid, controls, values.whole(STEPS_LABEL, controls.steps, 1, MAX_NEW))


def back(sid) -> View:
    session = RUNS.get(sid)
    if session is None:
        raise ValueError("there is no run in this session: press Step to start one")
    session.pair.back()
    return view(sid, session)


def reset(sid) -> View:
    RUNS.release(sid)
    return blank()


def blank() -> View:
    return View(
        sid=None,
        status="*Press **Step**: float32 and the chosen format each take one greedy step from the same prompt.*",
        streams=figs.streams_html([], [], None, "format"),
        dist=figs.distributions_figure([], [], [], "", 0),
        kl=figs.kl_figure([], [], None),
    )


def view(sid: str, session: Session) -> View:
    pair, fmt = session.pair, session.key.fmt
    tok = pair.reference.lm.tokenizer
    steps, divergence = pair.steps, pair.first_divergence()
    reference = token_texts(tok, [s.reference for s in steps])
    own = token_texts(tok, [s.own for s in steps if s.own is not None])
    if not steps:
        return blank()._replace(sid=sid, streams=figs.streams_html([], [], None, fmt))
    last, t = steps[-1], tally(steps)
    gap = steps[divergence].gap if divergence is not None else None
    status = (
        f"**{session.label}** · step {len(steps)}: KL **{last.kl:.4f}** nats · "
        f"Δp **{last.delta_p:+.3f}** · same top-1 **{'yes' if last.same_top1 else 'no'}**  \n"
        f"{figs.tally_line(t.same_top1, t.steps, t.kl_mean)}. {figs.divergence_line(divergence, gap, fmt)}"
    )
    if pair.done:
        status += f"  \nfloat32 stopped ({pair.reference.trace.stop_reason})."
    return View(
        sid=sid,
        status=status,
        streams=figs.streams_html(reference, own, divergence, fmt),
        dist=figs.distributions_figure(
            token_texts(tok, list(last.top_ids)), list(last.p_reference), list(last.p_format), fmt, len(steps)
        ),
        kl=figs.kl_figure([s.kl for s in steps], [s.same_top1 for s in steps], divergence),
    )
