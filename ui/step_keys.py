"""The step tab in the browser, without a round trip: the keys a teacher steps with, Enter and the arrow keys on
the knobs, and clicking a bar to force it. Plain JavaScript, attached once when the tab loads."""

# gr.Plot has no click event (gradio 6.31: only change): listen to plotly's own click,
# put the token id in a hidden box and press a hidden button
FORCE_ON_CLICK = """
const attach = () => {
  const plot = document.querySelector('#step-dist .js-plotly-plot');
  if (!plot || plot._forceHooked || !plot.on) return;
  plot._forceHooked = true;
  plot.on('plotly_click', (ev) => {
    const point = (ev.points || []).find((pt) => pt.customdata);
    if (!point) return;
    const box = document.querySelector('#force-click textarea, #force-click input');
    box.value = String(point.customdata[0]);
    box.dispatchEvent(new Event('input', {bubbles: true}));
    setTimeout(() => document.querySelector('#force-click-btn').click(), 50);
  });
};
new MutationObserver(attach).observe(document.body, {childList: true, subtree: true});
"""

# → Step, ← Back, P Prefill, never while typing (a text box, a number box, a slider or a radio has the focus).
# gradio's slider sends "release" on pointerup or when its number box loses focus: Enter in the box blurs it,
# and letting go of an arrow key on the slider sends the pointerup a mouse would have.
KEYS = """
const typing = (t) => t && (['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.isContentEditable);
const SHORTCUTS = {ArrowRight: '#btn-step', ArrowLeft: '#btn-back', p: '#btn-prefill', P: '#btn-prefill'};
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
