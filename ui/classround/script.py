"""The class round in the browser, without a round trip: a click on one of the ten tokens a student guesses among,
the round's link written out whole (with this page's own address) wherever the view shows it, and Enter in a knob's
number box. Plain JavaScript,
attached once when the tab loads."""

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

JS = (
    "if (!window.__classroundScript) { window.__classroundScript = true; "
    + "\n".join((PICK_ON_CLICK, WHOLE_LINKS, ENTER_APPLIES))
    + " }"
)
