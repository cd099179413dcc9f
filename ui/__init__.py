"""The Gradio side: each lesson tab is a package named as its lesson in decoding/ (ui/step/, ui/speculative/, ...) that
lays out its components by name and wires them; the toolkit every tab shares is events, group, validate, sessions and
context.
Only app.py and ui/ know decoding, visuals and gradio together."""
