"""Every stored run takes its entry's lock, as the Step tab's run does (`STORE.holding`): two events of one session
raced on the same run (threads released together by a barrier, the tiny model) never interleave half-steps, and
leave it as the same events one after the other leave it. Speculative runs, beam searches, constrained runs and a
class round's greedy seat, each raced with two Steps."""

import threading
from collections import defaultdict

import pytest

from decoding.classround.records import GREEDY
from decoding.classround.round import Round
from decoding.loop import Run
from decoding.models import TINY
from decoding.pipeline import SamplerSettings
from decoding.prompts import encode_prompt
from decoding.speculative.run import SpecRun
from ui.beams import handlers as beams
from ui.constrained import handlers as constrained
from ui.context import AppConfig
from ui.sessions import STORE
from ui.speculative import handlers as speculative

CONFIG = AppConfig(model_id=TINY, device="cpu")


class Overlap:
    """How many calls of one method were inside it at once, on the same object, at most."""

    def __init__(self):
        self.inside, self.most, self.calls = defaultdict(int), 0, 0
        self._lock = threading.Lock()

    def wrap(self, monkeypatch, owner, name, of=lambda *args: id(args[0])):
        original = getattr(owner, name)

        def counted(*args, **kwargs):
            key = of(*args)
            with self._lock:
                self.inside[key] += 1
                self.most, self.calls = max(self.most, self.inside[key]), self.calls + 1
            try:
                return original(*args, **kwargs)
            finally:
                with self._lock:
                    self.inside[key] -= 1

        monkeypatch.setattr(owner, name, counted)


def race(*events):
    """Run the events at once, each in its own thread released by one barrier; raise the first error any raised."""
    barrier, errors, results = threading.Barrier(len(events)), [], [None] * len(events)

    def go(i, event):
        barrier.wait()
        try:
            results[i] = event()
        except Exception as err:  # noqa: BLE001 -- handed to the test's thread
            errors.append(err)

    threads = [threading.Thread(target=go, args=(i, event)) for i, event in enumerate(events)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a raced event never finished: a deadlock"
    if errors:
        raise errors[0]
    return results


@pytest.fixture(autouse=True)
def no_scheduler(monkeypatch):
    # each event runs its own passes (no scheduler to serialise them): only the entry's lock keeps them apart
    monkeypatch.setattr(constrained, "scheduler_for", lambda lm: None)
    monkeypatch.setattr("ui.context.scheduler_for", lambda lm: None)


def test_two_speculative_rounds_at_once_take_turns_on_the_run_and_write_what_two_in_a_row_write(monkeypatch):
    controls = speculative.Controls(
        prompt="abcabcabc abcabc abc",
        template="raw text",
        source="prompt lookup",
        k=4,
        layer=1,
        max_new=24,
        seed=0,
        knobs={"temperature": 0.0, "top_k": 0, "top_p": 1.0, "repetition_penalty": 1.0, "order": "transformers"},
    )
    serial = speculative.prefill(CONFIG, None, controls).sid
    for _ in range(2):
        speculative.step(CONFIG, serial, controls)
    overlap = Overlap()
    overlap.wrap(monkeypatch, SpecRun, "round")
    raced = speculative.prefill(CONFIG, None, controls).sid
    race(*[lambda: speculative.step(CONFIG, raced, controls)] * 2)
    mine, theirs = speculative.RUNS.get(raced).run, speculative.RUNS.get(serial).run
    assert overlap.calls == 2 and overlap.most == 1, "two rounds ran inside one run at once"
    assert len(mine.rounds) == 2 and mine.ids == theirs.ids
    for sid in (serial, raced):
        speculative.reset(sid)


def test_two_beam_steps_at_once_take_turns_on_the_search_and_grow_it_by_two(monkeypatch):
    knobs = {"num_beams": 3, "length_penalty": 1.0, "early_stopping": "false", "max_new_tokens": 6}
    serial = beams.step(CONFIG, None, "Tell me a story.", beams.CHAT, knobs).sid
    for _ in range(2):
        beams.step(CONFIG, serial, "Tell me a story.", beams.CHAT, knobs)
    raced = beams.step(CONFIG, None, "Tell me a story.", beams.CHAT, knobs).sid
    overlap = Overlap()
    overlap.wrap(monkeypatch, beams, "_advance", of=lambda config, search: id(search))
    race(*[lambda: beams.step(CONFIG, raced, "Tell me a story.", beams.CHAT, knobs)] * 2)
    mine, theirs = beams.SEARCHES.get(raced), beams.SEARCHES.get(serial)
    assert overlap.calls == 2 and overlap.most == 1, "two beam steps ran inside one search at once"
    assert len(mine.steps) == len(theirs.steps) == 3
    assert [s.beams for s in mine.steps] == [s.beams for s in theirs.steps]
    for sid in (serial, raced):
        beams.reset(sid)


def test_two_constrained_steps_at_once_take_turns_on_the_run_and_write_what_two_in_a_row_write(monkeypatch):
    controls = constrained.Controls(
        prompt="When?",
        kind="regular expression",
        text="(19|20)[0-9]{2}-(0[1-9]|1[0-2])-[0-3][0-9]",
        seed=0,
        max_new=24,
        fast_forward=False,
        knobs={"order": "transformers", "temperature": 1.0, "top_k": 0, "top_p": 1.0},
    )
    serial = constrained.step(CONFIG, None, controls).run_id
    for _ in range(2):
        constrained.step(CONFIG, serial, controls)
    raced = constrained.step(CONFIG, None, controls).run_id
    overlap = Overlap()
    overlap.wrap(monkeypatch, constrained, "_advance")
    race(*[lambda: constrained.step(CONFIG, raced, controls)] * 2)
    mine, theirs = STORE.get(raced).run, STORE.get(serial).run
    assert overlap.calls == 2 and overlap.most == 1, "two constrained steps ran inside one run at once"
    assert [s.token_id for s in mine.trace.steps] == [s.token_id for s in theirs.trace.steps]
    assert len(mine.trace.steps) == 3 and mine.ids == theirs.ids
    for run_id in (serial, raced):
        constrained.reset(run_id)


def test_two_greedy_steps_of_one_seat_at_once_take_turns_on_its_run(tiny, monkeypatch):
    prompt = encode_prompt(tiny.tokenizer, "hello there", chat=False)
    r = Round(tiny, prompt, SamplerSettings(), GREEDY, code="K7QF", key="key", draws_per_s=1e9).open()
    r.join("ada", 1)
    r.join("bob", 2)
    r.greedy_step("bob", 6)  # the serial run
    overlap = Overlap()
    overlap.wrap(monkeypatch, Run, "step")
    assert race(lambda: r.greedy_step("ada", 3), lambda: r.greedy_step("ada", 3)) == [3, 3]
    assert overlap.calls == 6 and overlap.most == 1, "two steps ran inside the seat's run at once"
    seats, steps = r.greedy.seats, r.greedy.sequences()  # the tokens each seat wrote to the round's state
    assert steps["ada"] == steps["bob"]
    assert len(seats["ada"].run.trace.steps) == 6
