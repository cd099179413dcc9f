"""The class round in the browser, without a round trip: a click on one of the ten tokens a student guesses among,
the round's link written out whole (with this page's own address) wherever the view shows it, Enter in a knob's
number box, and the page asking whether its round changed. Plain JavaScript, attached once when the tab
loads."""

from ui.classround.shown import ROUTE

PROJECTOR_EVERY_MS = 250  # a draw shows on the projector a quarter second after it was counted, and a refresh's time
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

# the teacher's click on a seat the projector lists puts its id in a hidden box and presses a hidden button: removed;
# a click on the projector's Lock joining / Unlock presses the hidden lock button
REMOVE_ON_CLICK = """
document.addEventListener('click', (ev) => {
  if (ev.target.closest && ev.target.closest('#classround-view .classround-lock')) {
    document.querySelector('#classround-lock').click();
    return;
  }
  const seat = ev.target.closest && ev.target.closest('#classround-view .classround-seat[data-seat]');
  if (!seat) return;
  const input = document.querySelector('#classround-seat textarea, #classround-seat input');
  input.value = seat.dataset.seat;
  input.dispatchEvent(new Event('input', {bubbles: true}));
  setTimeout(() => document.querySelector('#classround-remove').click(), 50);
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

# the page asks its round whether it changed: the projector every quarter second (anything it shows: a draw, a guess,
# a join), a student's page every 3 s (what every student sees: the teacher's next step, kind, settings, reveal, end);
# a plain GET outside gradio's queue (ui/classround/shown.py), one at a time. The projector asks only while it shows
# the round; a student's page asks hidden too, with its seat's ping, for that ask is how the round hears the page is
# open (a page not heard from is counted out). When the answer differs from what its view shows, a page in view
# presses the hidden refresh button (one gradio event: the view's changes; pressed again while it runs, gradio keeps
# the one)
ASKS = f"""
let asked = 0, asking = false;
setInterval(() => {{
  const root = document.querySelector('#classround-view .classround-view[data-code]');
  if (asking || !root) return;
  const teacher = root.dataset.role === 'teacher';
  const inView = document.visibilityState === 'visible' && root.getClientRects().length > 0;
  if ((teacher && !inView) || (!teacher && performance.now() - asked < {STUDENT_EVERY_MS})) return;
  asked = performance.now();
  asking = true;
  const ping = root.dataset.ping ? '&seat=' + encodeURIComponent(root.dataset.ping) : '';
  fetch('{ROUTE}?code=' + encodeURIComponent(root.dataset.code) + ping)
    .then(r => (r.ok ? r.json() : null))
    .then(d => {{
      const now = root.isConnected ? root : document.querySelector('#classround-view .classround-view');
      const seen = teacher ? now.dataset.version : now.dataset.shown;
      const shows = document.visibilityState === 'visible' && now.getClientRects().length > 0;
      const changed = d && String(teacher ? d.version : d.shown) !== seen;
      if (changed && shows) document.querySelector('#classround-refresh').click();
    }})
    .catch(() => {{}})
    .finally(() => {{ asking = false; }});
}}, {PROJECTOR_EVERY_MS});
"""

JS = (
    "if (!window.__classroundScript) { window.__classroundScript = true; "
    + "\n".join((PICK_ON_CLICK, REMOVE_ON_CLICK, WHOLE_LINKS, ENTER_APPLIES, ASKS))
    + " }"
)
