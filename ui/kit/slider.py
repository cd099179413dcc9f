"""A slider's typed value let through to the handler's check.

gr.Slider refuses a typed 5 for top-p in its own preprocessing with a bare "Value 5 is greater than maximum value 1."
that names no control; the handler's `checked` names the control, its range and the value instead
(ui/validate.py's `knob_slider`). gradio has no public switch for it: `typed_through` replaces the slider's
`preprocess` on the instance (a gr.Slider subclass would make gradio write a .pyi stub beside this file). On plain
gradio (`DECODING_LAB_PLAIN=1`) the slider is left as gradio made it, and gradio's own message answers.
"""

import gradio as gr

from ui.kit.switch import plain


def typed_through(slider: gr.Slider) -> gr.Slider:
    """`slider`, its payload handed to the handler as typed (see the module). Returns `slider`."""
    if not plain():
        slider.preprocess = lambda payload: payload
    return slider
