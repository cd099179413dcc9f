"""The Gradio side: each lesson tab is a module (or, for the step tab, a package: ui/step/) that lays out its
components by name and wires them; the toolkit every tab shares is events, group, validate, sessions and context.
Only app.py and ui/ know decoding, visuals and gradio together."""
