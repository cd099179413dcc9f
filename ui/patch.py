"""A page element the server patches: the whole view once, then only what changed (visuals.parts).

Its value is `{"v": n, "html": ...}` (the whole view) or `{"v": n, "base": n - 1, "ops": [...]}` (the changes from
the view numbered n - 1). The page's script applies changes only to the view they were made from; an element that
missed one (a message lost, the element drawn again) asks the server for the whole view (its `input` event, wired
by the tab to `Patcher.resend`), so a page never shows a strip the server did not send.

One `Patcher` per element and session keeps what that element was last sent: the `Parts` of its view (small
strings), so the next view sends only its changes.
"""

import gradio as gr

from visuals.parts import Parts, changes

# the element's own script (gradio 6's HTML `js_on_load`): `props.value` is the last value the server sent, `watch`
# calls `show` after each new one, `trigger('input')` asks for the whole view. Defined once in the app's cached head
# (HEAD): each patched element's config holds only the call (its 1 KB body was sent in the config once per element)
HEAD = """<script>
window.labPatched = (element, props, watch, trigger) => {
const root = element.querySelector('.patched');
let version = null;
const whole = () => { root.dataset.stale = '1'; trigger('input'); };
const apply = (op) => {
  const el = op[1] ? root.querySelector(op[1]) : root;
  if (!el) return false;
  if (op[0] === 'append') el.insertAdjacentHTML('beforeend', op[2]);
  else if (op[0] === 'html') el.innerHTML = op[2];
  else if (op[0] === 'attr') el.setAttribute(op[2], op[3]);
  else if (op[0] === 'drop') for (let i = 0; i < op[2] && el.lastElementChild; i++) el.lastElementChild.remove();
  else if (op[0] === 'shift') for (let i = 0; i < op[2] && el.firstElementChild; i++) el.firstElementChild.remove();
  else return false;
  return true;
};
const show = () => {
  const p = props.value;
  if (p === null || p === undefined || typeof p === 'string') { root.innerHTML = p || ''; version = null; return; }
  if (p.html !== undefined) { root.innerHTML = p.html; version = p.v; delete root.dataset.stale; return; }
  if (p.base !== version || !p.ops.every(apply)) return whole();
  version = p.v;
};
show();
watch('value', show);
};
</script>"""
JS = "labPatched(element, props, watch, trigger);"


# gradio dims an output to opacity .2 while its event is pending and brings it back when the answer lands: on a patched
# view (a lesson's chart and strip) that flashed the whole view at every Step and cost the page two more paints of it,
# 28 ms of a Step's 142 (bench/browser_cost.py, the Step tab at 1280x720). The view stays as it is while its next
# answer comes, as a learner reads it; an answer slower than SLOW_S (a busy class) says so in the element's corner
SLOW_S = 0.4
CSS = f"""
.lab-patched .html-container.pending {{ opacity: 1; position: relative; }}
.lab-patched .html-container.pending::after {{
  content: "working…"; position: absolute; top: 0; right: 0; padding: 2px 8px; z-index: var(--layer-2);
  font-size: var(--text-sm); color: var(--body-text-color-subdued); background: var(--block-background-fill);
  border-radius: var(--radius-sm); pointer-events: none; animation: lab-slow 0s {SLOW_S}s both;
}}
@keyframes lab-slow {{ from {{ visibility: hidden; }} to {{ visibility: visible; }} }}
"""


def patched(value: str = "", elem_classes=(), **options) -> gr.HTML:
    """A gr.HTML the server patches (`Patcher`); `value` is what it shows first."""
    classes = ["lab-patched", *([elem_classes] if isinstance(elem_classes, str) else elem_classes)]
    return gr.HTML(value, html_template="<div class='patched'></div>", js_on_load=JS, elem_classes=classes, **options)


class Patcher:
    """What one patched element of one session was last sent, and the value that turns it into a new view."""

    def __init__(self):
        self.sent: Parts | None = None
        self.version = 0

    def send(self, parts: Parts) -> dict:
        """The value that shows `parts`: its changes from the last view sent, or the whole view."""
        ops = changes(self.sent, parts)
        self.version += 1
        self.sent = parts
        if ops is None:
            return {"v": self.version, "html": parts.html}
        return {"v": self.version, "base": self.version - 1, "ops": ops}

    def resend(self) -> dict:
        """The whole of the last view sent: for an element that missed a change."""
        self.version += 1
        return {"v": self.version, "html": self.sent.html if self.sent is not None else ""}
