"""The Gradio side: one module per lesson tab. Only app.py and ui/ know decoding, visuals and gradio together."""
