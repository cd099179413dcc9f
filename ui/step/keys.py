"""The step tab in the browser, without a round trip: the keys a teacher steps with, Enter and the arrow keys on
the knobs, and clicking a bar to force it. Plain JavaScript, attached once when the tab loads."""

# gr.Plot has no click event (gradio 6.31: only change): a click in a bar's column (even a bar a few pixels tall)
# puts its token id in a hidden box and presses a hidden button. The column is found from the plot area's box and
# the axis range, not from plotly's own click, which misses under projector mode's CSS zoom.
FORCE_ON_CLICK = """
document.addEventListener('click', (ev) => {
  const plot = ev.target.closest && ev.target.closest('#step-dist .js-plotly-plot');
  const area = plot && plot.querySelector('.nsewdrag');
  const labels = plot && plot.layout && plot.layout.xaxis && plot.layout.xaxis.categoryarray;
  if (!area || !labels || !labels.length) return;
  const box = area.getBoundingClientRect();
  if (ev.clientX < box.left || ev.clientX > box.right || ev.clientY < box.top || ev.clientY > box.bottom) return;
  // category i sits at x = i; the axis range (padded for the dashes' width) maps the click to the nearest one
  const [lo, hi] = plot.layout.xaxis.range || [-0.5, labels.length - 0.5];
  const label = labels[Math.round(lo + (ev.clientX - box.left) / box.width * (hi - lo))];
  const trace = plot.data.find((t) => t.type === 'bar' && t.customdata && t.x.includes(label));
  if (!trace) return;
  const input = document.querySelector('#step-force-click textarea, #step-force-click input');
  input.value = String(trace.customdata[trace.x.indexOf(label)][0]);
  input.dispatchEvent(new Event('input', {bubbles: true}));
  setTimeout(() => document.querySelector('#step-force-click-btn').click(), 50);
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

JS = f"if (!window.__stepTabKeys) {{ window.__stepTabKeys = true; {FORCE_ON_CLICK}\n{KEYS} }}"
