"""The Gradio side: each lesson tab is a package named as its lesson in decoding/ (ui/step/, ui/speculative/, ...) that
lays out its components by name and wires them, and says what the app needs of it in one spec (ui/tabs.py); the
toolkit every tab shares is events, group, validate, sessions, context and tabs.
Only app.py and ui/ know decoding, visuals and gradio together."""
