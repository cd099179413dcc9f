"""What the step tab shows for a tiny-model run: the prompt's chips and one chip per step, the loop's phase, the
chart's bars with the chosen one marked, the numbers line; and the side panels drawn from the session's own run."""

import re
import threading

import gradio as gr

from decoding.knobs import settings_from
from decoding.models import TINY
from decoding.sandbox import each_strategy_alone
from tests.helpers.charts import read_chart
from tests.helpers.step import CONFIG, GREEDY, OFF
from tests.helpers.step_knobs import page
from tests.helpers.step_view import sent
from ui.context import RAW
from ui.events import teach
from ui.sessions import STORE
from ui.step import handlers as h
from ui.step import view as step_view
from ui.step.links import open_link
from ui.step.page import layout
from ui.step.tab import named
from visuals.glossary import term
from visuals.serving.traffic import IMPL_WORDS

KNOBS = {"temperature": 0.7, "top_k": 5, "top_p": 0.9, "min_p": 0.05, **OFF}


def bars(chart: str) -> dict[str, list[int]]:
    """The chart's token ids per series (one per fate: chosen, kept, removed by ...), its model-probability marks
    left out."""
    return {s.name: [c[0] for c in s.customdata] for s in read_chart(chart).data if s.customdata[0] is not None}


def test_the_view_shows_the_prompt_each_chosen_token_and_the_numbers(tiny):
    # a prompt no other test prefills: one seen before would come from the server's prefix cache, not be computed
    run_id = h.prefill(CONFIG, None, TINY, "qzxvw", RAW, 0, 4, "", page(GREEDY)).run_id
    shown = sent(run_id)
    chips, orders = shown["step-chips"], shown["step-orders"]
    assert chips.count('class="tok prompt"') == 5 and 'class="tok gen' not in chips
    assert f"prefill: one {term('forward pass')} over the whole prompt (5 tokens)" in shown["step-loop"]
    assert "<b>waiting for you</b>: no stop condition met yet; press Step" in shown["step-stop"]  # idle, not "running"
    chart = shown["step-dist"]
    assert bars(chart).keys() == {"kept"} and len(bars(chart)["kept"]) == step_view.TOP_N  # a preview: none chosen
    assert shown["step-force-row"].count("<option value=") == step_view.TOP_N + 1  # and "pick a candidate"
    assert "transformers" in orders and shown["step-numbers"] == ""  # no token yet, so no time per token
    # under the chart: how the prompt's forward pass ran (alone here), then the engine orders
    behind = f"<strong>{term('forward pass', 'Forward pass')} behind this distribution:</strong>"
    assert f"{behind} computed alone (nobody else was stepping)" in orders

    answer = h.step(run_id, page(GREEDY))
    shown = sent(run_id)
    first = STORE.get(run_id).trace.token_ids[0]
    top = int(shown["step-force-row"].split('<option value="')[2].split('"')[0])  # the first candidate
    assert (
        shown["step-chips"].count('class="tok gen"') == 1
        and f"step 1: one {term('forward pass')} over 6 tokens" in shown["step-loop"]
    )
    assert bars(shown["step-dist"])["chosen"] == [first] == [top]  # greedy chose the top bar
    assert sum(len(ids) for ids in bars(shown["step-dist"]).values()) == step_view.TOP_N
    tpot = term("TPOT", "time per output token")
    numbers = shown["step-numbers"]
    assert term("TTFT") in numbers and f"{tpot}</strong> — (" in numbers  # one token: no decode step yet

    answer = h.step(run_id, page(GREEDY))
    appended = [op for op in answer.stage["ops"] if op[0] == "append" and op[1] == "#step-chips .chips"]
    assert len(appended) == 1 and appended[0][2].count('class="tok gen"') == 1  # the one chip this step added
    numbers = sent(run_id)["step-numbers"]
    assert f"{tpot}</strong> —" not in numbers and "server-ms" in numbers
    STORE.release(run_id)


def test_strategies_panel_follows_the_pending_logits(tiny):
    on = page(KNOBS, strategies_open=True, on_screen="strategies")
    before = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 4, "", on)
    run_id, settings = before.run_id, settings_from(KNOBS)
    after = h.step(run_id, on)
    assert [read_chart(a.strategies).charts for a in (before, after)] == [5, 5]  # a panel per strategy
    expected = each_strategy_alone(STORE.get(run_id).run.logits, settings, step_view.TOP_N)
    kept = [r.kept for r in expected]
    assert [r.name for r in expected] == ["greedy", "temperature", "top_k", "top_p", "min_p"]
    assert kept[0] == 1 and kept[2] >= 5  # greedy keeps one; top-k keeps k (and ties)
    assert [after.strategies.count(f"<span>keeps {n:,}</span>") >= 1 for n in kept] == [True] * len(kept)
    STORE.release(run_id)


def test_no_run_gives_blank_panels():
    blank = step_view.empty_view()
    assert "Penalties appear here once a run starts" in blank.below["html"]
    assert "Press Prefill, then Step: each step&#x27;s time appears here" in blank.below["html"]
    assert step_view.STRATEGIES_BLANK in blank.strategies and step_view.CHART_BLANK in blank.stage["html"]
    assert blank.below["html"].count("lc-empty") == 2 and "lc-empty" in blank.strategies


def test_greedy_says_why_every_engine_keeps_every_token(tiny):
    knobs = {**GREEDY, "top_p": 0.5}  # top-p 0.5, skipped by greedy
    out = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 4, "", page(knobs))
    assert f"Temperature 0 is greedy: it takes the {term('argmax')}" in sent(out.run_id)["step-orders"]
    assert "top-p 0.5 is skipped" in h.settings_note(knobs)
    assert "Penalties on: repetition 1.3" in h.settings_note({**GREEDY, "temperature": 1.0, "repetition_penalty": 1.3})
    STORE.release(out.run_id)


def test_a_finished_run_says_so_in_the_strategies_panel_not_that_a_trace_was_loaded(tiny):
    run_id = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 2, "", page(GREEDY)).run_id
    list(h.run_to_end(run_id, page(GREEDY)))
    strategies = h.strategies_drawn(run_id, page(GREEDY))
    assert "press Prefill" in strategies and "replayed" not in strategies
    STORE.release(run_id)


def test_a_bad_value_is_one_message_and_every_panel_keeps_its_view(tiny):
    with gr.Blocks():
        c = layout(CONFIG, open_link(CONFIG, None))
    fn, inputs, outputs = named(h.step, c.answer, run_id=c.run_id, page=c.page)
    said = teach(fn, c.message)  # as the page wires the Step button
    assert inputs == [c.run_id, c.page] and outputs == list(c.answer)  # two inputs, four elements: a light click
    run_id = h.prefill(CONFIG, None, TINY, "hello", RAW, 0, 4, "", page(GREEDY)).run_id
    out = said(run_id, page({**GREEDY, "top_p": 5.0}))
    assert list(out) == [c.message]  # every panel keeps what it shows
    assert "Top-p must be between 0.01 and 1 (1 = off), got 5.0" in out[c.message]
    assert "class='lab-error'" in out[c.message]
    good = said(run_id, page(GREEDY))
    assert good[c.message] == "" and 'class="tok gen"' in str(good[c.stage]["ops"])  # the good step clears it
    assert set(good) == {*c.answer, c.message}
    STORE.release(run_id)


def test_stop_during_run_to_end_ends_it_says_how_soon_and_says_it_until_the_next_step(tiny):
    run_id = h.prefill(CONFIG, None, TINY, "stopped here", RAW, 0, 40, "", page(GREEDY)).run_id
    run = h.run_to_end(run_id, page(GREEDY))
    first = next(run)  # the first view: the run under way, how far, and a bar
    assert "<b>running</b>: token 1 of at most 40" in sent(run_id)["step-stop"]
    assert '<progress class="step-progress" value="1" max="40">' in sent(run_id)["step-stop"]
    assert first is not None
    stopping = {}
    stopper = threading.Thread(target=lambda: stopping.update(answer=h.halted(run_id, page(GREEDY))))
    stopper.start()
    rest = list(run)  # gradio asks for the next view: the run sees the Stop and ends, drawing nothing more
    stopper.join(10)
    assert rest == [None] and "answer" in stopping
    entry = STORE.get(run_id)
    made = len(entry.trace.steps)
    assert 1 <= made < 40 and not entry.run.done
    line = sent(run_id)["step-stop"]
    took = float(re.search(r"stopped by you</b>, ([\d.]+) s after you pressed Stop", line).group(1))
    assert 0 <= took < 1.0, line
    assert "press Step or Run to end to go on" in line
    h.stopped(run_id, page(GREEDY))  # "Bars show" changed: a redraw still says Stop ended the run
    assert "<b>stopped by you</b>" in sent(run_id)["step-stop"] and len(entry.trace.steps) == made
    h.halted(run_id, page(GREEDY))  # Stop again, nothing under way: it still says the first Stop, never "waiting"
    assert "<b>stopped by you</b>" in sent(run_id)["step-stop"]
    h.step(run_id, page(GREEDY))  # a step after it: the run goes on, and the line no longer says Stop
    assert "<b>waiting for you</b>" in sent(run_id)["step-stop"] and len(entry.trace.steps) == made + 1
    assert list(h.run_steps(run_id, 2, page(GREEDY)))[-1] is None  # a Run N after the Stop is not stopped by it
    assert len(entry.trace.steps) == made + 3
    STORE.release(run_id)


def test_stop_with_nothing_running_says_the_run_waits(tiny):
    run_id = h.prefill(CONFIG, None, TINY, "nothing running", RAW, 0, 8, "", page(GREEDY)).run_id
    h.step(run_id, page(GREEDY))
    h.halted(run_id, page(GREEDY))
    assert "<b>waiting for you</b>" in sent(run_id)["step-stop"]
    STORE.release(run_id)


def test_on_a_replica_of_a_lecture_hall_the_pass_line_names_the_server(tiny, monkeypatch):
    monkeypatch.setattr(step_view, "this_server", lambda: "this server, 2 of 4")
    run_id = h.prefill(CONFIG, None, TINY, "which server", RAW, 0, 4, "", page(GREEDY)).run_id
    h.step(run_id, page(GREEDY))
    assert "· on this server, 2 of 4" in sent(run_id)["step-orders"]


def test_the_pass_line_names_the_implementation_that_computed_the_distribution(tiny):
    run_id = h.prefill(CONFIG, None, TINY, "which implementation", RAW, 0, 4, "", page(GREEDY)).run_id
    h.step(run_id, page(GREEDY))
    line = sent(run_id)["step-orders"]
    assert sum(f"run by {words}" in line for words in IMPL_WORDS.values()) == 1, line
