"""The step tab in the browser, without a round trip: the keys a teacher steps with, Enter and the arrow keys on
the knobs, clicking a bar to force it, and which costly panels are on screen. Plain JavaScript, attached once when
the tab loads."""

# a click on a bar's column (even a bar a few pixels tall) puts its token id (the column's data-key, visuals.chart)
# in a hidden box and presses a hidden button: the step forces that token
FORCE_ON_CLICK = """
document.addEventListener('click', (ev) => {
  const column = ev.target.closest && ev.target.closest('#step-dist .lc-col[data-key]');
  if (!column) return;
  const input = document.querySelector('#step-force-click textarea, #step-force-click input');
  input.value = column.dataset.key;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  setTimeout(() => document.querySelector('#step-force-click-btn').click(), 50);
}, true);
"""

# "Each strategy alone" is vocabulary-sized work on the server: the page tells each click whether the panel is on
# screen (a hidden box the click reads), and when it comes on screen showing another chart than the one above (its
# data-view is older), presses the hidden button that draws it
ON_SCREEN = """
const watchPanels = () => {
  const panel = document.querySelector('#step-strategies');
  const box = document.querySelector('#step-on-screen textarea, #step-on-screen input');
  if (!panel || !box) return setTimeout(watchPanels, 500);
  const drawnFor = (sel) => (document.querySelector(`${sel} .step-drawn`) || {dataset: {}}).dataset.view;
  new IntersectionObserver(([seen]) => {
    const on = seen.isIntersecting;
    if ((box.value === 'strategies') !== on) {
      box.value = on ? 'strategies' : '';
      box.dispatchEvent(new Event('input', {bubbles: true}));
    }
    const chart = drawnFor('#step-dist');
    if (on && chart && drawnFor('#step-strategies') !== chart) document.querySelector('#step-strategies-draw').click();
  }).observe(panel);
};
watchPanels();
"""

# → Step, ← Back, P Prefill, never while typing (a text box, a number box, a slider or a radio has the focus).
# gradio's slider sends "release" on pointerup or when its number box loses focus: Enter in the box blurs it,
# and letting go of an arrow key on the slider sends the pointerup a mouse would have.
KEYS = """
const typing = (t) => t && (['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.isContentEditable);
const SHORTCUTS = {ArrowRight: '#step-step', ArrowLeft: '#step-back', p: '#step-prefill', P: '#step-prefill'};
const SLIDER_KEYS = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End'];
document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (typing(t)) {
    if (ev.key === 'Enter' && t.type === 'number' && t.closest('.knob')) t.blur();
    return;
  }
  const button = SHORTCUTS[ev.key] && document.querySelector(SHORTCUTS[ev.key]);
  if (!button || button.offsetParent === null || button.disabled) return;  // only while the step tab shows
  ev.preventDefault();
  button.click();
});
document.addEventListener('keyup', (ev) => {
  const t = ev.target;
  if (t && t.type === 'range' && t.closest('.knob') && SLIDER_KEYS.includes(ev.key)) {
    t.dispatchEvent(new PointerEvent('pointerup', {bubbles: true}));
  }
});
"""

JS = f"if (!window.__stepTabKeys) {{ window.__stepTabKeys = true; {FORCE_ON_CLICK}\n{KEYS}\n{ON_SCREEN} }}"
