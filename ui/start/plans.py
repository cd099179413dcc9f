"""Class plans: a few paths of about 50 minutes through the lab, each an ordered list of steps. A step opens one tab,
set up, through a shared link (`?tab=beams&preset=2-2`), says in one line what to do there and in one sentence
what to notice (a glossary term written [[term]] is marked where it first appears). Every notice is something the
page prints after the step's action, on the bundled model (SmolLM2-135M-Instruct, float32, on a CPU): `shows` and
`pattern` say where and what, and tests/test_start_plans_e2e.py follows every plan in a browser and checks each one. A
notice that quotes a number measured there (`quotes`) names that run on any other (ui.context.measured_on)."""

from dataclasses import dataclass, field
from urllib.parse import urlencode


@dataclass(frozen=True)
class Step:
    tab: str  # the tab's id in a link (its spec's id, ui/tabs.py)
    preset: str  # the preset's link name on that tab (ui.links.slug), "" for a tab without presets
    do: str  # one line: what to do there
    notice: str  # one sentence: what to notice
    minutes: int
    presses: tuple[str, ...]  # the buttons `do` presses, in order (CSS selectors)
    shows: str  # the element whose text says the notice (`#` and its id): the link brings it on screen
    pattern: str  # a regex that the element's text matches once the notice is true
    settings: dict = field(default_factory=dict)  # more of the link: knobs the tab's links take (ui/step/links.py)
    # the notice quotes what the bundled model measured (a probability, a count, a text), not a setting or a rule
    quotes: bool = True
    # the class guesses first: nothing on the page says the notice before the step's action, and a notice the page
    # shows without one (no `presses`) is covered until the teacher presses it (the link's guess=1, ui/start/notice.py)
    guess: bool = False

    @property
    def link(self) -> str:
        """The step's shared link, relative to the page: `?tab=step&preset=confident&notice=step-dist`. Its `notice`
        names the element to bring on screen once it says the notice (ui/start/notice.py)."""
        preset = {"preset": self.preset} if self.preset else {}
        guess = {"guess": "1"} if self.guess and not self.presses else {}
        notice = {"notice": self.shows.removeprefix("#")}
        return "?" + urlencode({"tab": self.tab, **preset, **self.settings, **notice, **guess})


@dataclass(frozen=True)
class Plan:
    title: str
    goal: str  # one sentence: what the class will have seen
    steps: tuple[Step, ...]

    @property
    def minutes(self) -> int:
        return sum(step.minutes for step in self.steps)


PICK_A_WORD = Plan(
    "How a model picks a word",
    "The model gives every possible next token a probability; a decoding strategy turns those into one choice.",
    (
        Step(
            "step",
            "confident",
            "Press **Prefill**, and read the chart's title.",
            "One bar, ␣Paris, holds most of the probability: the chart's title puts it 0.7 ahead of the second bar.",
            10,
            ("#step-prefill",),
            "#step-dist",
            r"top-1 − top-2 gap 0\.7\d",
        ),
        Step(
            "step",
            "open",
            "Press **Prefill**: a story could start in many ways.",
            "No bar holds even a quarter of the probability: its [[entropy]] is 4.9 bits, against 2.1 for Confident.",
            8,
            ("#step-prefill",),
            "#step-dist",
            r"entropy 4\.9\d? bits",
        ),
        Step(
            "sandbox",
            "reference-exercise",
            "Guess how many tokens top-p 0.9 keeps, then press **Measured here** to show the numbers.",
            "At temperature 1, top-p 0.9 keeps 22,782 of the 32,000 tokens, while min-p 0.1 keeps 3.",
            10,
            (),
            "#sandbox-measured",
            r"top-p 22,782, min-p 3\b",
            quotes=False,
            guess=True,
        ),
        Step(
            "step",
            "greedy-loop",
            "Press **Prefill**, then **Run to end**.",
            'Temperature 0 always takes the top bar, and the text loops: "I\'m a cat." again and again.',
            10,
            ("#step-prefill", "#step-run-end"),
            "#step-chips",
            r"(I'm␣a␣cat\.␣){3}",
        ),
        Step(
            "beams",
            "2-2",
            "Guess: is beam search's answer more or less likely than greedy's? Then press **Run to end** and read the "
            "table under the tree.",
            "Beam search's answer is about 100× as likely as greedy's, though greedy took the likeliest token at "
            "every step.",
            12,
            ("#beams-end",),
            "#beams-compare-text",
            r"\b\d{2,3}(\.\d)?× as likely",
            guess=True,
        ),
    ),
)

SLOW = Plan(
    "Why generation is slow",
    "Every new token costs one more pass over all the weights, so decoding waits on memory, and a cheap draft can "
    "make one pass write several tokens.",
    (
        Step(
            "step",
            "greedy-loop",
            "Press **Prefill**, then **Run to end**, and read the numbers under **Time**.",
            "Prefill reads the whole prompt in one pass; then each token needs a pass of its own, and decode takes "
            "most of the time.",
            10,
            ("#step-prefill", "#step-run-end"),
            "#step-numbers",
            r"decode is ([5-9]\d|100)% of the measured time",
            quotes=False,
        ),
        Step(
            "timing",
            "",
            "Press **Measure** (about a minute) and read the sentence under the [[roofline]].",
            "Decode at batch 1 does one FLOP or less per byte it reads, many times below the ridge point where the "
            "[[matmul]] units would become the limit: it waits on memory.",
            15,
            ("#timing-measure",),
            "#timing-roofline-note",
            r"did [0-2]\.\d\d FLOPs per byte, \d+× below this machine's ridge point",
        ),
        Step(
            "speculative",
            "copy-edit",
            "Press **Run to end**.",
            "The answer copies the prompt, so the guesses are mostly right: each pass of the model writes about 6 "
            "tokens, plain decoding 1.",
            13,
            ("#speculative-end",),
            "#speculative-run-text",
            r"\b[4-9]\.\d\d tokens per pass \(plain decoding: 1\.00\)",
        ),
        Step(
            "speculative",
            "open-story",
            "Press **Run to end**.",
            "A new story repeats little of its prompt: about 1 token per pass, no better than plain decoding.",
            12,
            ("#speculative-end",),
            "#speculative-run-text",
            r"\b1\.\d\d tokens per pass",
        ),
    ),
)

CLASS = Plan(
    "Serving a whole class",
    "One server answers many students by putting their steps in one pass, and greedy text can then change with the "
    "batch.",
    (
        Step(
            "serving",
            "",
            "Press **Open simulated students**, watch a minute, then **Stop them**.",
            "One [[forward pass]] serves several students at once, and the line above the charts compares its time "
            "with theirs one after another.",
            15,
            ("#serving-open",),
            "#serving-status",
            r"One pass for \d+ students took \d+ ms; one after another they would have taken",
            quotes=False,
        ),
        Step(
            "timing",
            "",
            "Press **Measure** (about a minute) and read the sentence under the roofline.",
            "A bigger batch does more work for each byte of weights read: many FLOPs per byte at batch 64, against "
            "0.5 at batch 1.",
            15,
            ("#timing-measure",),
            "#timing-roofline-note",
            r"At batch 64 a step did [\d.]+ FLOPs/byte",
        ),
        Step(
            "nondeterminism",
            "",
            "Press **Run** (under a minute), then read **The fix**.",
            "Batch-invariant mode writes the solo text at every batch size, with noise exactly 0.",
            20,
            ("#nondeterminism-run",),
            "#nondeterminism-fix-note",
            r"3 of 3 batch sizes wrote the solo text",
            quotes=False,
        ),
    ),
)

FAST_AND_FAITHFUL = Plan(
    "Making it fast and faithful",
    "A grammar makes the answer always parse, and speculation makes it faster without changing a token.",
    (
        Step(
            "constrained",
            "extract-name-and-age-as-json",
            "Press **Step** once.",
            'The grammar forces `{"name":` at once: three tokens, none sampled, no model call for them.',
            12,
            ("#constrained-step",),
            "#constrained-status",
            r"0 sampled, 3 forced by the grammar",
        ),
        Step(
            "constrained",
            "answer-yes-or-no",
            "Press **Step** once and read the grammar's row.",
            "The model's favourites, No and Yes with capitals, are illegal: almost all its probability was on illegal "
            "tokens.",
            12,
            ("#constrained-step",),
            "#constrained-rows",
            r"illegal mass 9\d(\.\d)?%",
        ),
        Step(
            "speculative",
            "copy-edit",
            "Press **Run to end** and read the timing under it.",
            "Speculation writes exactly the tokens plain decoding writes, in fewer passes of the model.",
            13,
            ("#speculative-end",),
            "#speculative-speed",
            r"the same tokens",
            quotes=False,
        ),
        Step(
            "speculative",
            "early-exit",
            "Press **Run to end**.",
            "This model was not trained to exit early: its first 8 layers guess so badly that almost no guess is kept "
            "(under 10%).",
            13,
            ("#speculative-end",),
            "#speculative-run-text",
            r"Guesses kept: \d+ of \d+ \(\d%\)",
        ),
    ),
)

SAMPLING_TOGETHER = Plan(
    "Sampling, with the whole class",
    "Each student draws from the model's own probabilities with a seed of their own: together the class's draws take "
    "the shape of those probabilities, and greedy writes the same text for everyone.",
    (
        Step(
            "classround",
            "capital-of-france",
            "Press **Start a round** and read out its code; once the class has guessed, press **Reveal**.",
            "Beside the class's guesses stand the model's own probabilities: ␣Paris holds 77%, and the line says how "
            "many guessed it.",
            12,
            ("#classround-start", "#classround-reveal"),
            "#classround-view",
            r"guessed the top-1, ␣Paris \(77% of the model's probability",
            {"kind": "guess"},
        ),
        Step(
            "classround",
            "best-pet",
            "Press **Start a round**; everyone presses **Draw** a few times, then press **Draw 100 each**.",
            "The bars settle onto the dashes, the counts the probabilities expect, and the chi-square test says "
            "the draws fit them.",
            13,
            ("#classround-start", "#classround-draw-each"),
            "#classround-view",
            r"Chi-square test: p = [\d.]+, the draws fit the probabilities",
            {"kind": "sample"},
            quotes=False,
        ),
        Step(
            "classround",
            "favourite-colour",
            "Press **Start a round** and **Draw 100 each**; then drag **Temperature** to 1.5 and draw 100 each again.",
            "At temperature 0.5 a draw takes ␣blue with p = 0.37, against 0.11 at 1: the class's draws crowd onto "
            "the likeliest colours, and at 1.5 they scatter.",
            12,
            ("#classround-start", "#classround-draw-each"),
            "#classround-view",
            r"A draw takes ␣blue with p = 0\.37",
            {"kind": "sample", "temperature": "0.5"},
        ),
        Step(
            "classround",
            "tell-me-a-story",
            "Press **Start a round**; everyone presses **Run greedy**.",
            "The projector compares everyone's greedy text step by step, and says that a shared pass can move a "
            "[[logit]] only by float noise, so any split comes where the top two tokens nearly tie.",
            13,
            ("#classround-start",),
            "#classround-view",
            r"the batching noise \((up to \S+ on this server|measured when the server starts)\)",
            {"kind": "greedy"},
            quotes=False,
        ),
    ),
)

PLANS = (PICK_A_WORD, SLOW, CLASS, FAST_AND_FAITHFUL, SAMPLING_TOGETHER)
