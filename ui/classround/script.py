"""The class round in the browser, without a round trip: a click on one of the ten tokens a student guesses among,
the round's link written out whole (with this page's own address) wherever the view shows it, Enter in a knob's
number box, and a student's page asking whether the round changed. Plain JavaScript, attached once when the tab
loads."""

from ui.classround.shown import ROUTE

STUDENT_EVERY_MS = 3000  # the teacher's next step reaches a student's phone within about 3 s, without their click

# a click on a token to guess puts its id in a hidden box and presses a hidden button: the guess is sent
PICK_ON_CLICK = """
document.addEventListener('click', (ev) => {
  const choice = ev.target.closest && ev.target.closest('#classround-view .classround-choice[data-key]');
  if (!choice) return;
  const input = document.querySelector('#classround-pick textarea, #classround-pick input');
  input.value = choice.dataset.key;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  setTimeout(() => document.querySelector('#classround-pick-btn').click(), 50);
}, true);
"""

# the view holds the link relative to the page (the server cannot know the address the class reaches it by): its text
# becomes the whole address, the one to read out or type
WHOLE_LINKS = """
const watchLinks = () => {
  const view = document.querySelector('#classround-view');
  if (!view) return setTimeout(watchLinks, 500);
  const whole = () => {
    for (const a of view.querySelectorAll('a.classround-link')) if (a.textContent !== a.href) a.textContent = a.href;
  };
  new MutationObserver(whole).observe(view, {childList: true, subtree: true, characterData: true});
  whole();
};
watchLinks();
"""

# gradio's slider says "release" (the teacher's new setting) when its number box loses focus: Enter there blurs it, so a
# typed temperature applies as a dragged one does
ENTER_APPLIES = """
document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  if (ev.key === 'Enter' && t && t.type === 'number' && t.closest('#classround-page')) t.blur();
});
"""

# a student's page asks whether what every student sees changed (the teacher's next step, kind, settings, reveal or
# end): a plain GET outside gradio's queue (ui/classround/shown.py), only while the page shows the round; when the
# answer differs from what its view shows, it presses the hidden refresh button (one gradio event: the view's changes)
STUDENT_ASKS = f"""
setInterval(() => {{
  const root = document.querySelector('#classround-view .classround-view[data-role=student]');
  if (document.visibilityState !== 'visible' || !root || !root.getClientRects().length) return;
  fetch('{ROUTE}?code=' + encodeURIComponent(root.dataset.code))
    .then(r => (r.ok ? r.json() : null))
    .then(d => {{
      if (d && String(d.shown) !== root.dataset.shown) document.querySelector('#classround-refresh').click();
    }})
    .catch(() => {{}});
}}, {STUDENT_EVERY_MS});
"""

JS = (
    "if (!window.__classroundScript) { window.__classroundScript = true; "
    + "\n".join((PICK_ON_CLICK, WHOLE_LINKS, ENTER_APPLIES, STUDENT_ASKS))
    + " }"
)
