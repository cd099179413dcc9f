"""The step tab in the browser, without a round trip: the keys a teacher steps with, Enter and the arrow keys on
the knobs, clicking a bar to force it, and which costly panels are on screen. Plain JavaScript, attached once when
the tab loads."""

# the page's box (ui/step/page_state.py): what the page's scripts keep of its state, written as the box's value
STATE = """
const stepState = () => window.__stepPage = window.__stepPage || {strategies_open: true, lens_open: false};
const writeStepState = () => {
  const box = document.querySelector('#step-page-state textarea, #step-page-state input');
  if (!box) return;
  box.value = JSON.stringify(stepState());
  box.dispatchEvent(new Event('input', {bubbles: true}));
};
"""

# a click on a bar's column (even a bar a few pixels tall) or on Force beside the picked candidate puts the token's
# id (the column's data-key, visuals.chart; the picker's value) in a hidden box and presses a hidden button: the step
# forces that token. A new "Bars show" redraws the chart (the same run: a hidden button's event).
FORCE_ON_CLICK = """
const forceToken = (id) => {
  const input = document.querySelector('#step-force-click textarea, #step-force-click input');
  input.value = id;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  setTimeout(() => document.querySelector('#step-force-click-btn').click(), 50);
};
document.addEventListener('click', (ev) => {
  const column = ev.target.closest && ev.target.closest('#step-dist .lc-col[data-key]');
  if (column) return forceToken(column.dataset.key);
  if (ev.target.closest && ev.target.closest('#step-force')) {
    forceToken(document.querySelector('#step-candidate').value);
  }
}, true);
document.addEventListener('change', (ev) => {
  if (ev.target.name !== 'step-mode') return;
  stepState().mode = ev.target.value;
  writeStepState();
  setTimeout(() => document.querySelector('#step-redraw').click(), 50);
});
"""

# "Each strategy alone" is vocabulary-sized work on the server: the page's box says whether the panel is on screen
# (a click's answer draws it only then), and when it comes on screen showing another chart than the one above (its
# data-view is older), the page presses the hidden button that draws it
ON_SCREEN = """
const watchPanels = () => {
  const panel = document.querySelector('#step-strategies');
  if (!panel || !document.querySelector('#step-page-state')) return setTimeout(watchPanels, 500);
  const drawnFor = (sel) => (document.querySelector(`${sel} .step-drawn`) || {dataset: {}}).dataset.view;
  new IntersectionObserver(([seen]) => {
    const on = seen.isIntersecting ? 'strategies' : '';
    if (stepState().on_screen !== on) {
      stepState().on_screen = on;
      writeStepState();
    }
    const chart = drawnFor('#step-dist');
    if (on && chart && drawnFor('#step-strategies') !== chart) document.querySelector('#step-strategies-draw').click();
  }).observe(panel);
};
watchPanels();
"""

# a costly panel opened or closed (a click, or Enter on its header): the page's box says so, written here as the click
# begins, before gradio's own expand event runs (an event of gradio's for each, page-side only, cost the page's config
# 0.8 KB each)
PANELS = """
const PANELS = {'step-lens': 'lens_open', 'step-strategies-panel': 'strategies_open'};
document.addEventListener('click', (ev) => {
  const head = ev.target.closest && ev.target.closest('.label-wrap');
  const panel = head && head.closest('.gr-accordion');
  if (!panel || !(panel.id in PANELS)) return;
  stepState()[PANELS[panel.id]] = !head.classList.contains('open');
  writeStepState();
}, true);
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

# on a narrow screen (the columns stacked, ui/step/page.py), a click that draws the chart (Prefill, Step, Back, the
# runs, a force) brings the buttons to the top of the screen when the chart's title and top bars are not on it above
# the knobs' bar: the chart then lands right under the buttons, the knobs under it, all on one screen
STACKED_PX = 900  # the page's CSS stacks its columns at this width and below
CHART_TOP_PX = 240  # the chart's title, legend and the top of its bars
CHART_IN_VIEW = f"""
const CHART_CLICKS = ['#step-prefill', '#step-step', '#step-back', '#step-run-end', '#step-run-n', '#step-force',
  '#step-dist .lc-col'].join(', ');
const chartInView = () => {{
  const buttons = document.querySelector('#step-buttons'), chart = document.querySelector('#step-stage');
  if (!buttons || !chart || !matchMedia('(max-width: {STACKED_PX}px)').matches) return;
  const knobs = document.querySelector('#step-knobs');
  const floor = knobs ? Math.min(innerHeight, knobs.getBoundingClientRect().top) : innerHeight;
  const top = chart.getBoundingClientRect().top;
  if (top >= 0 && top + Math.min(chart.offsetHeight, {CHART_TOP_PX}) <= floor) return;
  scrollBy(0, buttons.getBoundingClientRect().top - 8);
}};
document.addEventListener('click', (ev) => {{
  if (ev.target.closest && ev.target.closest(CHART_CLICKS)) chartInView();
}}, true);
"""

PARTS = (STATE, FORCE_ON_CLICK, PANELS, KEYS, ON_SCREEN, CHART_IN_VIEW)
JS = f"if (!window.__stepTabKeys) {{ window.__stepTabKeys = true; {chr(10).join(PARTS)} }}"
