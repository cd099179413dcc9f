"""Click Step 30 times in headless Chromium on the bundled model and time each round trip.

click_to_chart_ms: from the click to the moment the chart shows the new step (browser clock), each click on a
settled page (the panels below the chart have finished drawing the previous step, as when a learner reads it).
server_step_ms: the server's time inside the Step handler (forward pass, sampling, inspectors, drawing),
read from the page. The difference is transport, gradio and plotly rendering in the browser.
Prints one JSON object as its last line.
"""

import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui.launch import CHROMIUM, CHROMIUM_ARGS, free_port, start_app  # noqa: E402

CLICKS = 30
WARMUP = 3

CLICK_AND_WAIT_JS = """
async (k) => {
  const t0 = performance.now();
  document.querySelector('#step-step').click();
  await new Promise((resolve) => {
    const check = () => {
      const title = document.querySelector('#step-dist .gtitle');
      const server = document.querySelector('#server-ms');
      if (title && title.textContent.startsWith(`step ${k} `) && server) resolve();
      else requestAnimationFrame(check);
    };
    check();
  });
  const result = [performance.now() - t0, parseFloat(document.querySelector('#server-ms').textContent)];
  // then let the panels below the chart finish (the timeline shows step k) before the next click:
  // a learner looks at the chart before pressing Step again
  await new Promise((resolve) => {
    const settled = () => {
      const gd = document.querySelector('#step-time .js-plotly-plot');
      const bars = gd && gd.data && gd.data.length > 1 ? gd.data[1].x.length : 0;
      if (bars >= k) resolve();
      else setTimeout(settled, 20);
    };
    settled();
  });
  return result;
}
"""


def main() -> dict:
    from playwright.sync_api import sync_playwright

    port = free_port()
    proc = start_app(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"http://127.0.0.1:{port}/?tab=step")  # the app opens on Start here
            page.locator("#step-buttons").wait_for()
            # open the accordion that holds max new tokens
            page.get_by_role("button", name=re.compile("^Penalties, seed, length")).click()
            page.fill("#step-max-new input[type=number]", "200")
            page.click("#step-prefill")
            page.wait_for_selector("#step-dist .gtitle", timeout=120_000)
            samples = [page.evaluate(CLICK_AND_WAIT_JS, k) for k in range(1, CLICKS + WARMUP + 1)][WARMUP:]
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    click = [c for c, _ in samples]
    server = [s for _, s in samples]
    return {
        "clicks": len(samples),
        "click_to_chart_ms_median": round(statistics.median(click), 1),
        "server_step_ms_median": round(statistics.median(server), 1),
        "transport_and_drawing_ms_median": round(statistics.median(c - s for c, s in samples), 1),
        "click_to_chart_ms_p90": round(sorted(click)[int(0.9 * len(click))], 1),
        "model": "smollm2-135m",
        "device": "cpu",
    }


if __name__ == "__main__":
    print(json.dumps(main()))
