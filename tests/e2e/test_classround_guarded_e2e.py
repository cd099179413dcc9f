"""A class round no student can game, against the app on the bundled model, through gradio's own client (what every
page's footer advertises) and a real browser:
- stuffing: twenty scripted clients join and guess, then go; within 10 s the projector counts none of them and the
  class's pick is the one student still here; locked, the round refuses a new client;
- peeking: a client with only the round's code calls every API endpoint of the app before the Reveal, and no answer
  holds the round's top-1 probability, its guess counts or its numbers;
- flooding: a seat's draws above a person's rate are refused with a message, and the counts are exactly the draws
  that were answered;
- typing too much: a 100,000-character guess and a 5,000-character code each get a one-line message naming the
  limit, and the page stays the height it was."""

import html
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from gradio_client import Client
from playwright.sync_api import expect

from decoding.classround.round import DRAWS_PER_S
from tests.helpers.pages import ARTIFACTS, idle, new_page
from ui.classround.shown import ROUTE
from ui.server_note import ROUTE as NOTE

pytestmark = [pytest.mark.browser, pytest.mark.bundled]
PROMPT = "My favourite colour is"  # no tab's default prompt: no other endpoint computes this round's distribution
OFF = (1.0, 0, 1.0, 0.0)
GUESS, SAMPLE = "Guess, then reveal", "Sample together"
ROOT = re.compile(r'<div class="classround-view"([^>]*)>')
PHONE = {"width": 390, "height": 844}


def client(url: str) -> Client:
    return Client(url, verbose=False, analytics_enabled=False, httpx_kwargs={"timeout": 120})


def attrs(view) -> dict:
    """The view's root attributes an answer sets: from its whole HTML, or from its changes."""
    if not isinstance(view, dict):
        return {}
    if "html" in view:
        found = ROOT.search(view["html"])
        return dict(re.findall(r'data-([\w-]+)="([^"]*)"', found.group(1))) if found else {}
    return {op[2][5:]: op[3] for op in view.get("ops", []) if op[0] == "attr" and op[1] == ".classround-view"}


def said(answer) -> str:
    """The message line of an answer, as a person reads it."""
    return html.unescape(re.sub("<[^>]+>", "", str(answer[-1] or "")))


class Teacher:
    def __init__(self, url: str, kind: str):
        self.c = client(url)
        self.kept = self.c.predict(None, PROMPT, False, kind, *OFF, api_name="/start")[0]
        self.code = self.kept["code"]

    def __call__(self, api: str, *args):
        return self.c.predict(self.kept, *args, api_name=api)

    def numbers(self) -> dict:
        return self.c.predict(self.code, self.kept["key"], api_name="/round_numbers")

    def view(self) -> str:
        """The projector's view as its page shows it now."""
        self.c.predict(self.kept, api_name="/refresh")  # the key its page keeps, as the page sends it
        return html.unescape(re.sub("<[^>]+>", " ", self.c.predict(api_name="/resend")["html"]))


class Student:
    """A student's page: it joins, and asks after the round every 3 s with its seat's ping, as its script does."""

    def __init__(self, url: str, code: str):
        self.c, self.url = client(url), url.rstrip("/") + ROUTE
        answer = self.c.predict(code, api_name="/join")
        self.html, self.code = answer[0]["html"], code
        self.ping = attrs(answer[0])["ping"]
        self._stop = threading.Event()
        self._asks = threading.Thread(target=self._ask, daemon=True)
        self._asks.start()

    def _ask(self) -> None:
        while not self._stop.wait(3.0):
            httpx.get(self.url, params={"code": self.code, "seat": self.ping}, timeout=30)

    def close(self) -> None:
        self._stop.set()
        self.c.close()


def test_twenty_clients_that_join_guess_and_go_weigh_nothing_and_a_locked_round_refuses_a_new_one(app_url):
    teacher = Teacher(app_url, GUESS)
    honest = Student(app_url, teacher.code)
    choices = re.findall(r'data-key="(\d+:\d+)">([^<]*)</button>', honest.html)
    (mine, my_text), (theirs, _) = choices[0], choices[-1]
    assert not said(honest.c.predict(mine, api_name="/pick"))

    def stuff(_) -> Client:
        bot = client(app_url)
        assert not said(bot.predict(teacher.code, api_name="/join"))
        assert not said(bot.predict(theirs, api_name="/pick"))
        return bot

    with ThreadPoolExecutor(max_workers=10) as pool:
        bots = list(pool.map(stuff, range(20)))
    assert teacher.numbers()["guesses"]["guessed"] == 21
    assert "21 guesses from 21 students here" in teacher.view()
    gone = time.monotonic()
    for bot in bots:  # the scripts go: their heartbeats close, or their pages are simply never heard from again
        bot.close()
    while teacher.numbers()["present"] != 1:
        assert time.monotonic() - gone < 10, "the twenty stuffers still counted 10 s after they went"
        time.sleep(0.25)
    assert teacher.numbers()["guesses"]["guessed"] == 1
    shown = teacher.view()
    assert "1 guess from 1 student here" in shown and "1 student here (20 left)" in shown
    teacher("/reveal")
    assert not said(teacher("/advance_class"))
    chips = re.findall(
        r'classround-tok class"[^>]*>([^<]*)<', html.unescape(teacher.c.predict(api_name="/resend")["html"])
    )
    assert chips == [html.unescape(my_text)]  # the class's pick: the one student here, not the twenty who went

    teacher("/lock")
    late = client(app_url)
    refused = said(late.predict(teacher.code, api_name="/join"))
    assert f"round {teacher.code} is locked" in refused and "ask the teacher" in refused
    assert teacher.numbers()["present"] == 1 and "Locked: no new students" in teacher.view()
    teacher("/end")
    honest.close()
    late.close()


def quiet(app_url: str, within_s: float = 120) -> None:
    """Wait until the server's note says no measurement holds the model (or `within_s` has passed)."""
    until = time.monotonic() + within_s
    while httpx.get(app_url.rstrip("/") + NOTE, timeout=30).json()["html"] and time.monotonic() < until:
        time.sleep(0.2)


def test_a_client_with_only_the_code_reads_nothing_of_the_answer_from_any_endpoint_before_the_reveal(app_url):
    teacher = Teacher(app_url, GUESS)
    students = [Student(app_url, teacher.code) for _ in range(3)]
    for k, s in enumerate(students):
        picks = re.findall(r'data-key="(\d+:\d+)"', s.html)
        s.c.predict(picks[k % 2], api_name="/pick")
    numbers = teacher.numbers()
    top1, guessed = numbers["guesses"]["top1"], numbers["guesses"]["guessed"]
    p = dict(map(tuple, numbers["draw"]["probs"]))[top1]  # every knob off: the draw's probabilities are the model's
    secrets = (f"{p:.4f}", f"{p:.1%}", f"{p:.0%} of the model", f"{guessed} guesses from", '"top1"', "guessed the")

    peeker = client(app_url)
    endpoints = peeker.view_api(return_format="dict", print_info=False)["named_endpoints"]
    cancels = [name for name, info in endpoints.items() if name.startswith("/cancel") and not info["parameters"]]
    answers, finished = {}, set()
    for name, info in endpoints.items():  # one after another: all at once, the long ones grew the server past 18 GB
        # the code wherever a text can go (a forged teacher state too), every other input as the page starts it
        args = [
            teacher.code if "str" in str(q["python_type"]["type"]) else q.get("parameter_default")
            for q in info["parameters"]
        ]
        job = peeker.submit(*args, api_name=name)
        try:
            answers[name] = repr(job.result(timeout=8))
        except Exception as err:  # noqa: BLE001 -- a refusal is an answer too: what it says is checked
            answers[name] = f"{job.outputs()!r} {err}"
        if job.done():
            finished.add(name)
            continue
        # what still runs (a measurement, a run to the end): what it sent so far was read. Its tab's Cancel is
        # pressed as a page would (gradio's cancel of a job leaves a function that runs in a thread running), and
        # the next endpoint waits for the server to be quiet: two measurements at once held two regime maps' models
        job.cancel()
        for cancel in cancels:
            peeker.predict(api_name=cancel)
        quiet(app_url)
    # every endpoint that reads a round answered whole
    assert {"/round_numbers", "/join", "/refresh", "/resend", "/load", "/reveal"} <= finished
    leaks = {name: [s for s in secrets if s in answer] for name, answer in answers.items()}
    assert {name: found for name, found in leaks.items() if found} == {}
    assert "only the teacher who started round" in answers["/round_numbers"]
    assert not teacher.numbers()["guesses"]["revealed"]
    teacher("/end")
    for s in students:
        s.close()


def test_a_seats_draws_above_a_persons_rate_are_refused_with_why_and_the_counts_stay_exact(app_url):
    teacher = Teacher(app_url, SAMPLE)
    student = Student(app_url, teacher.code)
    drawn, refused = [], []
    shown = attrs({"html": student.html})  # the page's view: an answer sends only what changed (the same token drawn
    # twice in a row changes nothing)
    for _ in range(12):  # as fast as a script can send them, one after another
        answer = student.c.predict(api_name="/draw")
        shown |= attrs(answer[0])
        (refused if said(answer) else drawn).append(said(answer) or shown["drew"])
    assert refused and all(f"at most {DRAWS_PER_S:g} draws a second for each page" in r for r in refused)
    time.sleep(1.0)
    answer = student.c.predict(api_name="/draw")  # a person's next press, a second later, is drawn
    assert not said(answer)
    shown |= attrs(answer[0])
    drawn.append(shown["drew"])
    counted = teacher.numbers()["draw"]
    assert counted["made"] == counted["total"] == len(drawn) and counted["counts"] == dict(Counter(drawn))
    teacher("/end")
    student.close()


def test_too_much_typed_gets_one_line_naming_the_limit_and_the_page_keeps_its_height(browser, app_url):
    teacher = Teacher(app_url, GUESS)
    phone = new_page(browser, PHONE)
    phone.goto(f"{app_url}?tab=classround&round={teacher.code}")
    expect(phone.locator("#classround-view .classround-choice").first).to_be_visible(timeout=180_000)
    idle(phone)
    visitor = new_page(browser, PHONE)
    visitor.goto(f"{app_url}?tab=classround")
    expect(visitor.locator("#classround-code :is(textarea, input)")).to_be_visible(timeout=180_000)
    idle(visitor)
    for page, box, typed, press, stated, limit in (
        (
            phone,
            "#classround-guess",
            "x" * 100_000,
            "#classround-guess-btn",
            "up to 100 characters",
            "a guess is at most 100 characters",
        ),
        (
            visitor,
            "#classround-code",
            "K" * 5_000,
            "#classround-join",
            "4 letters and digits",
            "a round's code is 4 letters and digits",
        ),
    ):
        expect(page.locator(box)).to_contain_text(stated)  # the limit, beside its box
        height = page.evaluate("document.documentElement.scrollHeight")
        text = page.evaluate("document.body.innerText")
        page.locator(f"{box} :is(textarea, input)").fill(typed)
        page.click(press)
        message = page.locator("#classround-message .lab-error")
        expect(message).to_contain_text(limit)
        idle(page)
        line = message.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 24")
        assert message.evaluate("e => e.getBoundingClientRect().height") < 2 * line + 12  # one line
        assert len(message.inner_text()) < 200  # a short prefix of what was typed, never all of it
        grown = [line for line in page.evaluate("document.body.innerText").splitlines() if line not in text]
        assert page.evaluate("document.documentElement.scrollHeight") == height, f"lines the page gained: {grown}"
    phone.screenshot(path=str(ARTIFACTS / "e2e-classround-phone-too-long.png"))
    phone.close()
    visitor.close()
    teacher("/end")
