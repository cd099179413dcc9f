"""A class plan's step lands on what to notice: its link (`?tab=step&preset=greedy-loop&notice=step-numbers`) names
the element that says the notice (the step's `shows`), and the page's script brings that sentence on screen and
marks it when it appears.

On a 1280x720 projector most notices sat below the fold after the step's action (the Time numbers about 2,000 px
down, the roofline's sentence 450 px), and nothing told the teacher to scroll. The script watches the page while
the link's notice is asked for: when the named element's text comes to match one of its steps' patterns (the same
`pattern` the plan's browser test checks), the smallest part of it that matches is scrolled to the middle of the
screen and outlined for a few seconds, in which it is followed if the page's layout moves it (a chart drawn above
it). It lands each time the notice appears (a new run that clears and rewrites it lands again), and again when
projector mode is switched while it is shown, since the larger type moves it; otherwise the reader's own scrolling is
left alone."""

import json

from ui.start.plans import PLANS

PARAM = "notice"  # the link's key
GUESS = "guess"  # the link's key for a step the class guesses first (ui.start.plans.Step.guess): its notice covered
GUESS_LINE = "Guess first, then press here to show the numbers"
HIGHLIGHT_MS = 4000  # how long the notice stays outlined, and followed if the layout moves it

# {element id: the patterns of the steps that name it}: several steps read one element (the speculative run's line)
PATTERNS: dict[str, list[str]] = {}
for _step in (step for plan in PLANS for step in plan.steps):
    PATTERNS.setdefault(_step.shows.removeprefix("#"), []).append(_step.pattern)

HEAD = f"""<style>
.lab-notice {{ outline: 3px solid var(--color-accent, #c2410c); outline-offset: 3px; border-radius: 4px;
  transition: outline-color 0.6s; }}
/* a guess step's notice, covered: its numbers blurred under a line that says what to press */
[data-lab-guess] {{ position: relative; cursor: pointer; min-height: 44px; }}
[data-lab-guess] > * {{ filter: blur(9px); user-select: none; }}
[data-lab-guess]::after {{ content: '{GUESS_LINE}'; position: absolute; inset: 0; display: flex; align-items: center;
  justify-content: center; text-align: center; padding: 8px; font-weight: 700; font-size: var(--text-lg);
  color: var(--body-text-color); background: color-mix(in srgb, var(--background-fill-primary) 55%, transparent); }}
</style>
<script>
(() => {{
  const id = new URLSearchParams(location.search).get('{PARAM}');
  const patterns = ({json.dumps(PATTERNS, ensure_ascii=False)})[id];
  if (!patterns) return;
  // a step the class guesses first: its notice is covered the first time it lands, until pressed (a click, a tap,
  // Enter or Space); a data attribute, which gradio's own rendering of the element leaves alone
  let guessing = new URLSearchParams(location.search).get('{GUESS}') === '1';
  const cover = root => {{
    guessing = false;
    root.dataset.labGuess = '';
    root.tabIndex = 0;
    root.setAttribute('role', 'button');
    root.setAttribute('aria-label', '{GUESS_LINE}');
    const show = () => {{
      delete root.dataset.labGuess;
      root.removeAttribute('role');
      root.removeAttribute('aria-label');
      root.removeAttribute('tabindex');
      root.removeEventListener('click', show, true);
      root.removeEventListener('keydown', key, true);
    }};
    const key = e => {{ if (e.key === 'Enter' || e.key === ' ') {{ e.preventDefault(); show(); }} }};
    root.addEventListener('click', show, true);
    root.addEventListener('keydown', key, true);
  }};
  const res = patterns.map(p => new RegExp(p));
  const says = text => res.some(re => re.test(text));
  // the smallest element inside the notice's element whose text still says the notice: the sentence, not the panel
  const sentence = root => {{
    let found = root;
    for (let inner = true; inner; ) {{
      inner = false;
      for (const child of found.children) if (child.getClientRects().length && says(child.textContent)) {{
        found = child;
        inner = true;
        break;
      }}
    }}
    return found;
  }};
  // where an element sits in the page: a layout change moves it, the reader's own scrolling does not
  const offset = e => e.getBoundingClientRect().top + scrollY;
  let shown = false, target = null, landed = 0, until = 0;
  const scroll = () => {{
    const tall = target.getBoundingClientRect().height > innerHeight * 0.7;
    target.scrollIntoView({{block: tall ? 'start' : 'center', behavior: 'instant'}});
    landed = offset(target);
  }};
  // for a few seconds after landing, the sentence is followed if the page's layout moves it (a chart drawn above it,
  // projector mode's larger type settling); then it is left where it is, and so is the reader
  const follow = () => {{
    if (performance.now() > until) return target && target.classList.remove('lab-notice');
    if (!target.isConnected) {{
      const root = document.getElementById(id);
      if (!root || !says(root.textContent)) return;
      (target = sentence(root)).classList.add('lab-notice');
    }}
    if (Math.abs(offset(target) - landed) > 4) scroll();
    requestAnimationFrame(follow);
  }};
  const land = () => {{
    const root = document.getElementById(id);
    if (!root || !root.getClientRects().length) return;
    if (target) target.classList.remove('lab-notice');
    if (guessing) cover(root);
    (target = sentence(root)).classList.add('lab-notice');
    scroll();
    const following = performance.now() <= until;
    until = performance.now() + {HIGHLIGHT_MS};
    if (!following) requestAnimationFrame(follow);
  }};
  // once a frame at most, whatever the page changed: does the notice say its sentence now, and did it not before?
  let asked = false;
  const check = () => {{
    asked = false;
    const root = document.getElementById(id);
    const now = Boolean(root && root.getClientRects().length && says(root.textContent));
    if (now && !shown) land();
    shown = now;
  }};
  const watch = () => new MutationObserver(() => {{
    if (!asked) {{ asked = true; requestAnimationFrame(check); }}
  }}).observe(document.body, {{childList: true, subtree: true, characterData: true}});
  document.body ? watch() : addEventListener('DOMContentLoaded', watch);
  // projector mode's larger type moves everything: the notice, if shown, is brought back once the page has settled
  addEventListener('lab-projector', () => shown && requestAnimationFrame(land));
}})();
</script>"""
