"""gradio's navbar band hidden.

gradio's own navbar band (50 px above every page, a lone "Home" link) stays drawn even with gr.Navbar(visible=False):
the app draws its own navigation (ui/pages.py). gradio's CSS class for the band, `.nav-holder`, is not a public name;
tests/e2e/test_pages_e2e.py checks no "Home" link shows. On plain gradio (`DECODING_LAB_PLAIN=1`) the band shows.
"""

HEAD = "<style>.nav-holder { display: none; }</style>"
