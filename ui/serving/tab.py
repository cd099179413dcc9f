"""Continuous batching: the server's own traffic, live. Every student's Step rides in the scheduler's ticks;
this tab reads the tick log. Layout and wiring; the data comes from decoding.serving, the view (one element the page
patches: each refresh sends what changed) from visuals.serving.view."""

import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass

import gradio as gr

from decoding import values
from decoding.serving.students import MAX_STUDENTS, PROMPTS
from decoding.serving.traffic import summary
from ui.context import AppConfig, get_model, scheduler_for, simulated_class, this_server
from ui.events import message_line, teach
from ui.lesson import lesson, style, try_this
from ui.patch import Patcher, patched
from ui.tabs import TabSpec
from ui.validate import whole_number_box
from visuals.glossary import glossed, term
from visuals.serving import blocks, cost
from visuals.serving import traffic as serving
from visuals.serving.view import CSS, traffic_view
from visuals.words import count

WINDOW_S = 60.0
SECONDS_RANGE = (5, 300)  # how long a simulated class steps
LESSON = (
    f"Continuous batching runs every student's next token in one shared {term('forward pass')}: the weights are read "
    "once for "
    "everyone, and students join and leave at every pass."
)
INTRO = f"""
**Decode is memory-bound:** one step reads every weight of the model to produce one token. Read them once for
*everyone's* next token and the cost is shared: "if you have many users sending requests, you can stuff their
decode steps together (batch dim grows) and amortize the weight bandwidth cost".

This server does exactly that. Each **{term("tick")}**, its scheduler takes every student's pending Step (and a chunk
of any new prompt: *{term("chunked prefill")}*) and runs them as **one forward pass**, packed into one row with
{term("no padding")}; only attention is computed per student, against each one's own {term("KV cache")}. Students
join and leave at every tick: nobody waits for a batch to fill. That is **continuous batching**, as vLLM and TGI serve.
"""
TRY = f"""
1. Press **Open simulated students** (8 students, 2 minutes); the charts go live. Watch the bars grow: several
   students per pass. (Tick **Live** to watch the real class's traffic.)
2. Read the second chart: each bar is the measured median time of one pass holding that many students; the dash
   above it is the same students one pass after another. The line above the charts gives both numbers for the largest
   pass. Below the line, sharing saved time. On a busy 2-core CPU the saving is modest (the CPU computes as well as
   reads); where reading the weights dominates (a GPU, an idle machine) the dots stay nearly flat.
3. Go to **Step by step** and press Step a few times: the **Forward pass** line, below the chart's tokens and its
   token picker, says how many others shared your pass.
4. Tick **Run my steps alone** there: your steps become {term("bit-exact with generate()")}, at the price of
   their own pass.
5. Back here, choose **{PROMPTS[2]}** and press Open again: the third chart draws each student's
   {term("KV cache")} as its {term("KV block", "blocks")}. One student computed the prompt's blocks; every other
   copied the same blocks (same hashes) from the server's {term("prefix cache")}. The line above it says how many
   prompt tokens were not computed, and what the copies cost in memory.
6. Choose **{glossed(PROMPTS[1], "chat template")}** and Open: the chat template's blocks are shared, each
   student's own question is computed. On **Step by step**, a first Step whose prompt started that way says so,
   and that its {term("logit", "logits")} can differ from one pass over the whole prompt by float noise.
"""


class Sent:
    """What each page watching the traffic was last sent (a `Patcher` per session), the most recent MAX_PAGES kept:
    a page that comes back after its patcher was let go gets the whole view again."""

    MAX_PAGES = 256

    def __init__(self):
        self._by_session: OrderedDict[str, Patcher] = OrderedDict()
        self._lock = threading.Lock()

    def patcher(self, session: str) -> Patcher:
        with self._lock:
            found = self._by_session.pop(session, None) or Patcher()
            self._by_session[session] = found
            while len(self._by_session) > self.MAX_PAGES:
                self._by_session.popitem(last=False)
            return found

    def forget(self, session: str) -> None:
        with self._lock:
            self._by_session.pop(session, None)


SENT = Sent()
# the pages whose view was frozen by Stop them, by session: the time it was pressed (until Live or Open again)
FROZEN: dict[str, float] = {}


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "default"


def view(config: AppConfig, frozen_at: float | None = None):
    """The tick log read now, as the whole view (visuals.serving.view.traffic_view's Parts); or, `frozen_at` (the
    time Stop was pressed), its window ending then, said to be frozen."""
    scheduler = scheduler_for(get_model(config))
    if scheduler is None:
        alone = "DECODING_LAB_BATCHING=0, or a model whose attention cannot be packed"
        said = f"<p>This server runs each request on its own ({alone}): no shared ticks.</p>"
        return traffic_view(said, [], time.time(), "", "", "")
    now = frozen_at or time.time()
    ticks = scheduler.log.recent(WINDOW_S, now)
    s = summary(ticks, WINDOW_S)
    crowd = simulated_class(scheduler).status()
    extra = (
        f"{count(crowd.students, 'simulated student is', 'simulated students are')} stepping "
        f"({crowd.seconds_left:.0f} s left)."
        if crowd.students
        else None
    )
    return traffic_view(
        serving.traffic_html(s, scheduler.noise, extra, frozen=frozen_at is not None, server=this_server()),
        ticks,
        now,
        cost.tick_time_figure(s),
        serving.prefix_html(scheduler.prefix.stats(), scheduler.prefix_noise),
        blocks.blocks_figure(scheduler.prefix.sessions()),
    )


def refresh(config: AppConfig, request: gr.Request | None = None, frozen_at: float | None = None) -> dict:
    """This page's next value of the view: what changed since it was last sent (ui/patch.py)."""
    return SENT.patcher(_session(request)).send(view(config, frozen_at))


def whole(request: gr.Request | None = None) -> dict:
    """The whole view as last sent, for a page whose copy missed a change."""
    return SENT.patcher(_session(request)).resend()


def traffic(config: AppConfig) -> dict:
    """The last minute's traffic as numbers (the load benchmark reads this): batch sizes, tokens/s, noise."""
    scheduler = scheduler_for(get_model(config))
    if scheduler is None:
        return {"scheduler": False}
    noise = scheduler.noise.value if scheduler.noise else None
    numbers = summary(scheduler.log.recent(WINDOW_S), WINDOW_S)
    for name in ("rows_histogram", "median_ms_by_rows"):  # JSON keys are text
        numbers[name] = {str(rows): v for rows, v in numbers[name].items()}
    prefix = scheduler.prefix.stats()
    numbers["prefix"] = {**asdict(prefix), "hit_rate": prefix.hit_rate, "prefix_noise": scheduler.prefix_noise}
    return {"scheduler": True, "noise": noise, **numbers}


def server_note(config: AppConfig) -> str:
    """A line for the top of every page while long work holds the model alone (a timing measurement)."""
    try:
        scheduler = scheduler_for(get_model(config))
    except gr.Error:  # the model failed to load: the tabs say so when used
        return ""
    holder = scheduler.turns.holder if scheduler is not None else None
    if holder is None or not holder.exclusive:
        return ""
    left = holder.left_s(time.monotonic())
    about = f": about {left:.0f} s left" if left else ": almost done"
    return f"**Please wait: {holder.label} is running for everyone on this server{about}.** Steps wait until it ends."


def open_students(config: AppConfig, students, seconds, prompts: str = PROMPTS[0]) -> None:
    students = values.whole("Simulated students", students, 1, MAX_STUDENTS)
    seconds = values.whole("Seconds", seconds, *SECONDS_RANGE)
    scheduler = scheduler_for(get_model(config))
    if scheduler is None:
        raise gr.Error("simulated students need the shared scheduler, which this server does not run")
    # the status line says so (a toast would cover Stop them)
    simulated_class(scheduler).start(students, seconds, prompts=prompts)


def stop_students(config: AppConfig) -> str:
    """Stop the simulated class, and say what was stopped (or that nothing was running)."""
    scheduler = scheduler_for(get_model(config))
    crowd = simulated_class(scheduler).status() if scheduler is not None else None
    if crowd is None or not crowd.students:
        return "No simulated students were stepping: nothing to stop."
    simulated_class(scheduler).stop()
    return f"Stopped {count(crowd.students, 'simulated student')} ({crowd.seconds_left:.0f} s were left)."


@dataclass(frozen=True)
class ServingPage:
    students: gr.Number
    seconds: gr.Number
    prompts: gr.Dropdown
    open_btn: gr.Button
    stop_btn: gr.Button
    live: gr.Checkbox
    timer: gr.Timer
    message: gr.HTML
    view: gr.HTML  # the traffic: its words, the passes beside the roofline, the prefix cache's blocks (patched)


def layout(config: AppConfig) -> ServingPage:
    """The tab's components, inside the caller's gr.Tab. `config` is unused: nothing is read at layout."""
    style(CSS, "serving-css")
    lesson(
        LESSON,
        "Continuous batching",
        first="**Start here:** press **Open simulated students** and watch them share each pass.",
    )
    with gr.Row(equal_height=False):
        with gr.Accordion("How this server batches everyone's steps", open=False, elem_id="serving-how"):
            gr.Markdown(INTRO)
        try_this(TRY, 6, "serving-try")
    # the controls above the charts: after Open, its button, Stop and both charts' axes share one screen (1280x720)
    with gr.Row():  # boxes with no range of their own: a typed -5 reaches open_students' check, which names the box
        many = f"1 to {MAX_STUDENTS}"
        students = whole_number_box(8, label="Simulated students", info=many, elem_id="serving-students")
        seconds = whole_number_box(
            120, label="Seconds", info=f"{SECONDS_RANGE[0]} to {SECONDS_RANGE[1]}", elem_id="serving-seconds"
        )
        # a dropdown, not a radio: three options stacked would make the row, and so the charts' screen, taller
        prompts = gr.Dropdown(list(PROMPTS), value=PROMPTS[0], label="Their prompts", elem_id="serving-prompts")
        open_btn = gr.Button("Open simulated students", variant="primary", elem_id="serving-open")
        stop_btn = gr.Button("Stop them", elem_id="serving-stop")
        live = gr.Checkbox(value=False, label="Live (refresh every 2 s)", elem_id="serving-live")
    message = message_line("serving-message")
    # the status line, the passes beside the roofline (side by side down to 420 px each), the prefix cache's line and
    # its blocks: one element, which each refresh patches
    shown = patched(traffic_view("", [], 0.0, "", "", "").html, elem_id="serving-view")
    return ServingPage(
        students=students,
        seconds=seconds,
        prompts=prompts,
        open_btn=open_btn,
        stop_btn=stop_btn,
        live=live,
        # off until asked for: a timer ticks on every open page, whichever tab it shows, and thirty pages redrawing
        # two charts every 2 s would cost the class's server more than their steps do
        timer=gr.Timer(2.0, active=False),
        message=message,
        view=shown,
    )


def wire(c: ServingPage, config: AppConfig) -> None:
    """The refresh (every 2 s while Live is ticked) is one event with one output, the patched view, and no inputs:
    the page's session says which patcher it is."""

    def opened(students, seconds, prompts, request: gr.Request) -> dict:
        open_students(config, students, seconds, prompts)
        FROZEN.pop(_session(request), None)
        # watching them is the point; the status names the class
        return {c.live: True, c.view: refresh(config, request)}

    def traffic_numbers() -> dict:
        return traffic(config)

    def tick(request: gr.Request):
        # a tick already on its way when Stop froze the view must not bring the live numbers back
        session = _session(request)
        return gr.skip() if session in FROZEN else refresh(config, request)

    def live_changed(on: bool, request: gr.Request):
        # ticked: live again; unticked (by Stop them, or by hand): the view holds what it shows
        if not on:
            return gr.skip()
        FROZEN.pop(_session(request), None)
        return refresh(config, request)

    def stopped(request: gr.Request) -> dict:
        # the numbers a teacher reads out after stopping the class hold still: the window ends at Stop, and the
        # refresh stops with Live
        gr.Info(stop_students(config))
        FROZEN[_session(request)] = time.time()
        return {c.live: False, c.view: refresh(config, request, frozen_at=FROZEN[_session(request)])}

    c.timer.tick(tick, None, c.view, concurrency_limit=None, show_progress="hidden")
    c.live.change(live_changed, c.live, c.view, concurrency_limit=None, show_progress="hidden")
    gr.api(traffic_numbers, api_name="traffic", concurrency_limit=None)
    c.open_btn.click(
        teach(opened, c.message),
        [c.students, c.seconds, c.prompts],
        [c.live, c.message, c.view],
        concurrency_limit=None,
        show_progress="hidden",
    )
    c.stop_btn.click(stopped, None, [c.live, c.view], concurrency_limit=None, show_progress="hidden")
    c.live.change(lambda on: gr.Timer(active=on), c.live, c.timer, show_progress="hidden")
    c.view.input(whole, None, c.view, concurrency_limit=None, show_progress="hidden")


def forget(request: gr.Request) -> None:
    """A page closed: its patcher goes, and its frozen time."""
    SENT.forget(_session(request))
    FROZEN.pop(_session(request), None)


def build(config: AppConfig):
    """The tab; returns the function app.py calls with the page, to let a closed page's patcher go."""
    wire(layout(config), config)
    return lambda demo, first_open: demo.unload(forget)  # no setup to run as the tab opens


SPEC = TabSpec(
    "Continuous batching",
    "serving",
    40,
    build,
    main="#serving-open",
    chart="#serving-ticks",
    try_this="#serving-try",
    stop="#serving-stop",  # the simulated class steps for two minutes unless stopped
    summary=(
        "the server batches every student's steps into shared forward passes; its own traffic, live, with simulated "
        "students for one person alone."
    ),
)
