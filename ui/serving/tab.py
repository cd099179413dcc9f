"""Continuous batching: the server's own traffic, live. Every student's Step rides in the scheduler's ticks;
this tab reads the tick log. Layout and wiring; the data comes from decoding.serving, the figures from
visuals.serving.traffic."""

import time
from dataclasses import asdict, dataclass
from typing import NamedTuple

import gradio as gr

from decoding import values
from decoding.serving.students import MAX_STUDENTS, PROMPTS
from decoding.serving.traffic import summary
from ui.context import AppConfig, get_model, scheduler_for, simulated_class
from ui.events import message_line, teach
from ui.lesson import lesson, try_this
from ui.tabs import TabSpec
from ui.validate import whole_number_box
from visuals.glossary import glossed, term
from visuals.serving import traffic as serving
from visuals.words import count

WINDOW_S = 60.0
SECONDS_RANGE = (5, 300)  # how long a simulated class steps
LESSON = (
    "Continuous batching runs every student's next token in one shared forward pass: the weights are read once for "
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
2. Read the second chart: each dot is the measured median time of one pass holding that many students; the dashed
   line is the same students one pass after another. The line above the charts gives both numbers for the largest
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


class TrafficView(NamedTuple):
    """What shows the traffic; the tab holds one of its components, and `refresh` answers by its fields."""

    ticks: object
    cost: object
    status: object
    blocks: object
    prefix: object


def refresh(config: AppConfig, view: TrafficView) -> dict:
    """The tick log read now: the two figures and what they say, keyed by `view`'s entries."""
    scheduler = scheduler_for(get_model(config))
    if scheduler is None:
        alone = "DECODING_LAB_BATCHING=0, or a model whose attention cannot be packed"
        return {view.status: f"This server runs each request on its own ({alone}): no shared ticks."}
    now = time.time()
    ticks = scheduler.log.recent(WINDOW_S, now)
    s = summary(ticks, WINDOW_S)
    crowd = simulated_class(scheduler).status()
    extra = (
        f"{count(crowd.students, 'simulated student is', 'simulated students are')} stepping "
        f"({crowd.seconds_left:.0f} s left)."
        if crowd.students
        else None
    )
    return {
        view.ticks: serving.ticks_figure(ticks, now),
        view.cost: serving.tick_time_figure(s),
        view.status: serving.traffic_markdown(s, scheduler.noise, extra),
        view.blocks: serving.blocks_figure(scheduler.prefix.sessions()),
        view.prefix: serving.prefix_markdown(scheduler.prefix.stats(), scheduler.prefix_noise),
    }


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
    view: TrafficView  # of components


def layout(config: AppConfig) -> ServingPage:
    """The tab's components, inside the caller's gr.Tab. `config` is unused: nothing is read at layout."""
    lesson(LESSON, "Continuous batching")
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
    status = gr.Markdown(elem_id="serving-status")
    with gr.Row():
        # side by side down to 420 px each (a projector's 1280 too); narrower, one above the other, titles whole
        ticks = gr.Plot(label="forward passes", elem_id="serving-ticks", min_width=420)
        cost = gr.Plot(label="time per pass", elem_id="serving-cost", min_width=420)
    prefix = gr.Markdown(elem_id="serving-prefix")
    blocks = gr.Plot(label="KV blocks", elem_id="serving-blocks")
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
        view=TrafficView(ticks=ticks, cost=cost, status=status, blocks=blocks, prefix=prefix),
    )


def wire(c: ServingPage, config: AppConfig) -> None:
    def opened(students, seconds, prompts) -> dict:
        open_students(config, students, seconds, prompts)
        return {c.live: True, **refresh(config, c.view)}  # watching them is the point; the status names the class

    def traffic_numbers() -> dict:
        return traffic(config)

    def read() -> dict:
        return refresh(config, c.view)

    gr.on(
        [c.timer.tick, c.live.change],
        read,
        outputs=list(c.view),
        concurrency_limit=None,
        show_progress="hidden",
    )
    gr.api(traffic_numbers, api_name="traffic", concurrency_limit=None)
    outputs = [c.live, c.message, *c.view]
    c.open_btn.click(
        teach(opened, c.message),
        [c.students, c.seconds, c.prompts],
        outputs,
        concurrency_limit=None,
        show_progress="hidden",
    )
    c.stop_btn.click(lambda: gr.Info(stop_students(config)), concurrency_limit=None)
    c.live.change(lambda on: gr.Timer(active=on), c.live, c.timer)


def build(config: AppConfig) -> None:
    wire(layout(config), config)


SPEC = TabSpec(
    "Continuous batching",
    "serving",
    40,
    build,
    main="#serving-open",
    chart="#serving-ticks",
    try_this="#serving-try",
    stop="#serving-stop",  # the simulated class steps for two minutes unless stopped
)
