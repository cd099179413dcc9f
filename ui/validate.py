"""The browser's side of checking values: controls that let any typed value reach the handler's check (gradio's own
range checks name no control), stop strings as typed in a box, and the page's script (`JS`, `CSS`) that keeps the one
rule for a bad value on every tab: its message beside the control that caused it, naming the value and the range, and
the box showing the value in effect (a slider's typed value out of range is set to the range's end and said so, never
clamped silently). The checks themselves (a number in its range, a choice among the allowed) are `decoding.values`;
the sampler knobs' ranges are `decoding.knobs`.
"""

import re

import gradio as gr

from decoding.knobs import KNOBS
from decoding.stopping import MAX_STOP_LENGTH, MAX_STOP_STRINGS
from decoding.values import short
from ui.kit.slider import typed_through

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def stop_strings(text) -> list[str]:
    """One stop string per line of `text`; `\\n`, `\\t`, `\\r` and `\\\\` are escapes, every other backslash is
    literal (so non-ASCII text and a trailing backslash pass as typed). Empty lines are skipped."""
    if text is None:
        return []
    if not isinstance(text, str):
        raise ValueError(f"stop strings must be text, one per line, got {short(text)}")
    lines = [line for line in text.splitlines() if line]
    if len(lines) > MAX_STOP_STRINGS:
        raise ValueError(f"at most {MAX_STOP_STRINGS} stop strings (one per line), got {len(lines):,}")
    stops = []
    for n, line in enumerate(lines, 1):
        stop = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[0]), line)
        if len(stop) > MAX_STOP_LENGTH:
            raise ValueError(f"stop string {n} has {len(stop):,} characters; each may have 1 to {MAX_STOP_LENGTH}")
        bad = next((c for c in stop if 0xD800 <= ord(c) <= 0xDFFF), None)
        if bad is not None:
            # generated text never contains a lone surrogate, so such a stop string could never match
            raise ValueError(f"stop string {n} contains a lone surrogate (U+{ord(bad):04X}), which no text can match")
        stops.append(stop)
    return stops


def knob_slider(*args, **kwargs) -> gr.Slider:
    """A gr.Slider whose typed value reaches the handler's check even when it is out of range.

    gr.Slider refuses a typed 5 for top-p in its own preprocessing with a bare "Value 5 is greater than maximum
    value 1." that names no control; the handler's `checked` names the control, its range and the value instead.
    (ui/kit/slider.py lets it through; on plain gradio, gradio's message answers.)
    """
    return typed_through(gr.Slider(*args, **kwargs))


def knob(field: str, value: float, info: str, **options) -> gr.Slider:
    """A sampler knob's slider, its range, step and label those of its record (decoding.knobs.KNOBS[field])."""
    r = KNOBS[field]
    return knob_slider(r.lo, r.hi, value, step=r.step, label=r.label, info=info, **options)


def whole_number_box(value: int, **kwargs) -> gr.Number:
    """A number box for a whole number that the handler checks with `whole` (or the engine), unrounded.

    gr.Number(precision=0) rounds in gradio's own preprocessing, where NaN or infinity (an API client can send
    them) fails with a bare "Error"; unrounded, they reach the check that names the box and its range.
    """
    return gr.Number(value, precision=None, step=1, **kwargs)


# The one rule for a bad value, on the page's side, for every tab: the message sits beside the control that caused it,
# names the value and the range, and the box shows the value in effect.
# - A slider's number box: gradio's Slider sets a typed value back inside its range as the box loses focus, silently
#   (its blur handler clamps it; a Step or Run then reads the clamped value). Before that handler runs (a listener on
#   the document's capture phase), this script sets the value in range itself and says so beside the slider: "Top-k:
#   999999 is above its largest value, 200: set to 200". An emptied box gets back the value it had when it took the
#   focus ("an empty box is not a number from 0 to 200: kept 50"). The box then shows the value the next click uses.
# - A handler's message (`ui.events.teach`, in the tab's message line): every check names the control by its label
#   first ("Top-k must be a whole number in [0, 200], got 2.5"), so the script finds the control whose label begins the
#   message, nearest the message line, and shows the message beside it (its panel opened if it is closed); the line
#   under the buttons is then hidden. A message that names no control stays in the line.
BESIDE = "lab-beside"
JS = """
(() => {
  const NOTE = 'lab-beside';
  const kept = new WeakMap();  // a slider's box -> its value as it took the focus
  // a component's block (gradio's wrapper div; a Number's own <label> has the class too), and its own label
  const blockOf = e => e.closest('div.block');
  const sliderBox = e => e instanceof HTMLInputElement && e.type === 'number' && blockOf(e)
    && blockOf(e).querySelector('input[type=range]') ? e : null;
  const labelOf = block => {
    const l = block && [...block.querySelectorAll('[data-testid=block-info]')].find(l => blockOf(l) === block);
    return l ? l.textContent.trim() : '';
  };
  const clear = (block, from) => {
    for (const n of block ? block.querySelectorAll(`:scope > .${NOTE}`) : [])
      if (!from || n.dataset.from === from) n.remove();
  };
  const say = (block, text, from) => {  // one note per source: the slider's own, or a message line's
    clear(block, from);
    const note = document.createElement('div');
    note.className = `lab-error ${NOTE}`;
    note.setAttribute('role', 'alert');
    note.dataset.from = from;
    note.textContent = text;
    block.appendChild(note);
  };
  const num = x => (Number.isInteger(x) ? x.toLocaleString('en-US') : String(x));
  document.addEventListener('focus', e => {
    const box = sliderBox(e.target);
    if (box && box.value !== '') kept.set(box, box.value);
  }, true);
  // typing again, or moving the slider, takes back what was said about the old value
  document.addEventListener('input', e => {
    const block = e.target instanceof Element && blockOf(e.target);
    if (block) clear(block, 'slider');
  }, true);
  const check = e => {
    const box = sliderBox(e.target);
    if (!box) return;
    const lo = parseFloat(box.min), hi = parseFloat(box.max), raw = box.value, x = parseFloat(raw);
    const block = blockOf(box), label = labelOf(block);
    let set = null, why = '';
    if (raw === '' || !Number.isFinite(x)) {
      set = kept.get(box) ?? String(lo);
      why = `${label}: an empty box is not a number from ${num(lo)} to ${num(hi)}: kept ${set}`;
    } else if (x < lo) {
      set = String(lo);
      why = `${label}: ${raw} is below its smallest value, ${num(lo)}: set to ${num(lo)}`;
    } else if (x > hi) {
      set = String(hi);
      why = `${label}: ${raw} is above its largest value, ${num(hi)}: set to ${num(hi)}`;
    }
    if (set === null) return;
    box.value = set;
    box.dispatchEvent(new Event('input', {bubbles: true}));  // gradio's binding takes the value in effect
    say(block, why, 'slider');
    kept.set(box, set);
  };
  document.addEventListener('blur', check, true);
  document.addEventListener('keydown', e => { if (e.key === 'Enter') check(e); }, true);
  // a handler's message, beside the control its first words name
  const controls = () => [...document.querySelectorAll('div.block')].filter(labelOf);
  const depth = (a, b) => {  // how deep the two share an ancestor: the nearer control wins
    let n = 0;
    for (let p = a; p; p = p.parentElement) if (p.contains(b)) { for (let q = p; q; q = q.parentElement) n++; break; }
    return n;
  };
  const place = line => {
    const error = line.querySelector('.lab-error:not(.' + NOTE + ')');
    const from = line.id || 'message';
    for (const n of document.querySelectorAll(`.${NOTE}[data-from="${from}"]`)) n.remove();
    if (!error) return;
    const text = error.textContent.trim().toLowerCase();
    let best = null, bestLen = 0, bestDepth = -1;
    for (const block of controls()) {
      const label = labelOf(block).toLowerCase();
      if (!label || !(text.startsWith(label + ' ') || text.startsWith(label + ':'))) continue;
      const d = depth(block, line);
      if (label.length > bestLen || (label.length === bestLen && d > bestDepth))
        [best, bestLen, bestDepth] = [block, label.length, d];
    }
    if (!best) { delete error.dataset.beside; return; }
    // in a closed panel ("More settings"): each panel around it opened, so the control and its message show
    for (let p = best.parentElement; p; p = p.parentElement) {
      const title = p.matches('div.block') && p.querySelector(':scope > .label-wrap:not(.open)');
      if (title) title.click();
    }
    say(best, error.textContent.trim(), from);
    // the line under the buttons hidden only once the message shows beside its control
    const shown = tries => {
      if (!error.isConnected) return;
      if (best.getClientRects().length) error.dataset.beside = '';
      else if (tries) setTimeout(() => shown(tries - 1), 50);
    };
    shown(20);
  };
  let asked = false;
  const seen = new WeakMap();
  const look = () => {
    asked = false;
    // gradio puts a component's classes on its block and on the element inside it: the outer one is the line
    for (const line of document.querySelectorAll('.lab-message')) {
      if (line.parentElement && line.parentElement.closest('.lab-message')) continue;
      const now = line.textContent;  // its words: the mark this script sets on it is no change
      if (seen.get(line) !== now) { seen.set(line, now); place(line); }
    }
  };
  const watch = () => new MutationObserver(() => { if (!asked) { asked = true; requestAnimationFrame(look); } })
    .observe(document.body, {childList: true, subtree: true, characterData: true});
  document.body ? watch() : addEventListener('DOMContentLoaded', watch);
})();
"""
HEAD = f"<script>{JS}</script>"
# the message beside its control: the line under the buttons hidden while its message is shown there
CSS = f"""
.{BESIDE} {{ margin-top: 6px; }}
.lab-message:has(.lab-error[data-beside]) {{ display: none; }}
"""
