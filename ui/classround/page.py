"""The class round's page: its components, built by `layout` (inside the caller's gr.Tab) and named in
`ClassroundPage`, so the wiring (ui/classround/tab.py) and the handlers' answers read by name.

One page for everyone: the teacher's controls, a student's buttons and the join box are all on it, and the view's root
says who looks and what kind of round it is (visuals.classround.view): the style sheet shows each person only what is
theirs, so no click needs outputs to show or hide controls. A teacher's page is laid out for the projector, 1280x720:
the buttons, then the knobs beside the round's chart; a student's for a 390 px phone: their buttons, then the view."""

from dataclasses import dataclass

import gradio as gr

from decoding.classround.codes import LENGTH as CODE_LENGTH
from decoding.classround.guesses import GUESS_CHARS
from decoding.prompts import MAX_PROMPT_CHARS
from ui.classround.presets import DEFAULT_KIND, DEFAULT_PRESET, PRESETS
from ui.classround.script import JS
from ui.events import message_line
from ui.lesson import lesson, try_this
from ui.patch import patched
from ui.validate import knob
from visuals.classround.view import KIND_LABELS, blank_parts
from visuals.glossary import term

LESSON = (
    "Each student guesses, draws or steps greedy on their own page; the projector counts the class's choices against "
    "the model's probabilities."
)
HOW = f"""
**Start a round** on this page (the projector's): it shows a code and a link. Each student opens the link on a laptop
or phone (or types the code and presses **Join**) and sees the prompt and the tokens appended so far, read-only.
- **Guess, then reveal**: each student picks the token they expect next. **Reveal** shows the class's guesses beside
  the model's own probabilities (the {term("softmax")} of its {term("logit", "logits")}).
- **Sample together**: each **Draw** takes one token with the student's own seed from the round's probabilities after
  its settings, computed once for the class by the lab's own sampler pipeline. The chart counts the draws against what
  the probabilities expect; moving a knob starts a new draw; **Draw 100 each** shows the counts settle onto the dashes.
- **Greedy together**: every student runs greedy on the same text, their steps packed into the server's shared forward
  passes; the chart says whether every token agreed.
**Next: model's pick** appends the token the round's own draw takes (the {term("top-1")} at temperature 0), **Next:
class's pick** the class's most common guess or draw. Only this page can change the round: it keeps the round's key.
"""
TRY = """
1. Pick **Best pet**, choose **Guess, then reveal** and press **Start a round**. Read out the code; let the class guess.
2. Press **Reveal**: how many guessed the model's favourite? Then **Next: class's pick**.
3. Choose **Sample together**; everyone presses **Draw** a few times. Drag **Temperature** to 1.5: a new draw starts,
   flatter. Press **Draw 100 each**: the bars settle onto the dashes, and the chi-square line says they fit.
4. Choose **Greedy together**; everyone presses **Run greedy**. Did every token agree?
"""
CSS = """
#classround-style { display: none; }
#classround-buttons { gap: 8px; }
#classround-actions button { min-height: 44px; }
@media (max-width: 600px) { #classround-actions { flex-direction: column; } }
/* a student's message line keeps its one line whether it says something or not: a refusal never moves the page
   (the projector's stays out of the way of its chart until it has something to say) */
#classround-page:has(.classround-view:not([data-role=teacher])) #classround-message.lab-message {
  display: block !important; height: 40px; min-height: 40px; overflow: hidden; padding: 0; }
#classround-message .lab-error { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; line-height: 30px;
  box-sizing: border-box; height: 40px; }
/* on a phone a student's ten choices come first, then the box to type a guess of their own */
@media (max-width: 600px) {
  #classround-page:has(.classround-view[data-role=student][data-kind=guess]) #classround-actions { order: 1; }
  #classround-page:has(.classround-view[data-role=student][data-kind=guess]) #classround-more { order: 2; }
}
"""


@dataclass(frozen=True)
class ClassroundPage:
    teacher: gr.BrowserState  # {code, key} of the round this browser started: the key never leaves it
    preset: gr.Dropdown
    prompt: gr.Textbox
    chat: gr.Checkbox
    kind: gr.Radio
    start: gr.Button
    model_pick: gr.Button
    class_pick: gr.Button
    reveal: gr.Button
    draw_each: gr.Button
    lock: gr.Button
    end: gr.Button
    code: gr.Textbox
    join: gr.Button
    message: gr.HTML
    draw: gr.Button
    guess: gr.Textbox
    guess_btn: gr.Button
    pick: gr.Textbox  # a clicked token's id, put there by the page's script (ui/classround/script.py)
    pick_btn: gr.Button
    refresh: gr.Button  # pressed by the page's script when its round changed (ui/classround/script.py)
    seat: gr.Textbox  # a seat's id the teacher clicked to remove, put there by the page's script
    remove: gr.Button
    step_greedy: gr.Button
    run_greedy: gr.Button
    temperature: gr.Slider
    top_k: gr.Slider
    top_p: gr.Slider
    min_p: gr.Slider
    view: gr.HTML

    def knobs(self) -> list:
        return [self.temperature, self.top_k, self.top_p, self.min_p]


def layout() -> ClassroundPage:
    gr.HTML("", js_on_load=JS, container=False, elem_id="classround-style")
    lesson(LESSON, "Sample together")
    # drawn at the page's top level, outside the tabs (`on_page`): a component inside a tab the page has not shown yet
    # is not mounted, and a BrowserState not mounted sends nothing from the browser's storage to the page-load event
    teacher = gr.BrowserState(None, storage_key="decoding-lab-classround", render=False)
    with gr.Column(elem_id="classround-page"):
        with gr.Row(elem_id="classround-buttons", elem_classes="classround-teacher"):
            start = gr.Button("Start a round", variant="primary", elem_id="classround-start")
            running = "classround-running"
            model_pick = gr.Button("Next: model's pick", elem_id="classround-next-model", elem_classes=running)
            class_pick = gr.Button("Next: class's pick", elem_id="classround-next-class", elem_classes=running)
            reveal = gr.Button("Reveal", elem_id="classround-reveal", elem_classes=[running, "classround-for-guess"])
            draw_each = gr.Button(
                "Draw 100 each", elem_id="classround-draw-each", elem_classes=[running, "classround-for-sample"]
            )

            end = gr.Button("End", variant="stop", elem_id="classround-end", elem_classes=running)
        with gr.Row(equal_height=True, elem_classes="classround-visitor"):
            code = gr.Textbox(
                "",  # a value, so an API client's student clicks may leave the code out (they send it: tab.py)
                label="A student? Type the round's code",
                info=f"{CODE_LENGTH} letters and digits, as the projector shows it",
                placeholder="the code on the projector",
                max_lines=1,  # a box that never grows with what is typed into it: the page keeps its height
                scale=3,
                elem_id="classround-code",
            )
            join = gr.Button("Join", scale=1, elem_id="classround-join")
        message = message_line("classround-message")
        with gr.Row(equal_height=True, elem_id="classround-actions", elem_classes="classround-student"):
            draw = gr.Button("Draw", variant="primary", elem_id="classround-draw", elem_classes="classround-for-sample")
            # in a column of its own: the style sheet hides the column, and with it the box's grey frame
            with gr.Column(scale=2, min_width=200, elem_classes="classround-for-guess"):
                guess = gr.Textbox(
                    label="Or type your guess",
                    info=f"one token of the model's; up to {GUESS_CHARS} characters",
                    placeholder="a word",
                    max_lines=1,
                    elem_id="classround-guess",
                )
            guess_btn = gr.Button("Guess", elem_id="classround-guess-btn", elem_classes="classround-for-guess")
            greedy = "classround-for-greedy"
            step_greedy = gr.Button(
                "Step greedy", variant="primary", elem_id="classround-step-greedy", elem_classes=greedy
            )
            run_greedy = gr.Button("Run greedy", elem_id="classround-run-greedy", elem_classes=greedy)
        pick = gr.Textbox(visible="hidden", elem_id="classround-pick")
        pick_btn = gr.Button(visible="hidden", elem_id="classround-pick-btn")
        refresh = gr.Button(visible="hidden", elem_id="classround-refresh")
        seat = gr.Textbox(visible="hidden", elem_id="classround-seat")  # a seat the teacher removes, by its id
        remove = gr.Button(visible="hidden", elem_id="classround-remove")
        # pressed by the page's script from the projector's own "Lock joining" / "Unlock" (the button row stays one row)
        lock = gr.Button(visible="hidden", elem_id="classround-lock")
        with gr.Row(equal_height=False):
            # the teacher's setup beside the view: on the projector the round's chart sits right under the buttons
            with gr.Column(scale=1, min_width=280, elem_classes="classround-teacher"):
                preset = gr.Dropdown(list(PRESETS), value=DEFAULT_PRESET, label="Preset", elem_id="classround-preset")
                prompt = gr.Textbox(
                    PRESETS[DEFAULT_PRESET].prompt,
                    label="Prompt",
                    info=f"up to {MAX_PROMPT_CHARS:,} characters",
                    lines=1,
                    elem_id="classround-prompt",
                )
                chat = gr.Checkbox(PRESETS[DEFAULT_PRESET].chat, label="Chat template", elem_id="classround-chat")
                kind = gr.Radio(
                    list(KIND_LABELS.values()),
                    value=KIND_LABELS[DEFAULT_KIND],
                    label="Kind of round",
                    elem_id="classround-kind",
                )
                knobs = [
                    knob(name, value, info, elem_id=f"classround-{name.replace('_', '-')}")
                    for name, value, info in KNOBS
                ]
            with gr.Column(scale=3, min_width=340):
                view = patched(blank_parts().html, elem_id="classround-view")
        with gr.Row(equal_height=False, elem_id="classround-more"):
            with gr.Accordion("How a class round works", open=False, elem_id="classround-how"):
                gr.Markdown(HOW)
            try_this(TRY, 4, "classround-try")
    temperature, top_k, top_p, min_p = knobs
    return ClassroundPage(
        teacher=teacher,
        preset=preset,
        prompt=prompt,
        chat=chat,
        kind=kind,
        start=start,
        model_pick=model_pick,
        class_pick=class_pick,
        reveal=reveal,
        draw_each=draw_each,
        lock=lock,
        end=end,
        code=code,
        join=join,
        message=message,
        draw=draw,
        guess=guess,
        guess_btn=guess_btn,
        pick=pick,
        pick_btn=pick_btn,
        refresh=refresh,
        seat=seat,
        remove=remove,
        step_greedy=step_greedy,
        run_greedy=run_greedy,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        min_p=min_p,
        view=view,
    )


# the knobs a teacher sets (decoding.knobs' ranges), with what each does to the class's draws
KNOBS = (
    ("temperature", 1.0, "0 = greedy: every draw the same"),
    ("top_k", 0, "0 = off"),
    ("top_p", 1.0, "1 = off"),
    ("min_p", 0.0, "0 = off"),
)
