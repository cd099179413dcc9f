"""How the page draws its plotly charts: each new value once, on the chart that shows it.

gradio 6's Plot gives each new value a new chart: it re-creates its plotly component (a `{#key}` on the value), but
the component being replaced still reads the new value first and draws it in full on its own chart, which leaves the
page a moment later. Every chart update was drawn twice, and the replaced charts were never released: plotly keeps a
window "resize" listener for each responsive chart, so each one stayed in memory with its SVG. Measured on the step
tab (2-vCPU AMD EPYC, Chromium 156; a Prefill then 10 Steps, three charts each): Chromium used 8.4 to 10.9 CPU-s
(four runs) and 7.3 to 8.1 with this script (eight); after 10 Steps the page held 27,900 DOM nodes and 4,500 event
listeners, and 6,800 and 710 with it (5,900 and 570 after 20).

`HEAD` goes in the page's <head>, before gradio loads plotly. When plotly is set on `window`, its `react` (what
gradio's Plot calls) waits one microtask, the time gradio takes to put the new chart in place of the old, then draws
on a chart that is on the page, and releases one that has left it (`Plotly.purge`: its listeners, its data)."""

HEAD = """<script>
(() => {
  let plotly;
  Object.defineProperty(window, 'Plotly', {
    configurable: true,
    get: () => plotly,
    set(P) {
      plotly = P;
      if (!P || P.drawsOnce) return;
      P.drawsOnce = true;
      const react = P.react;
      // a replaced chart has left the page by the next microtask: its value is drawn on the chart that took its place
      P.react = (gd, ...args) => Promise.resolve().then(() => {
        if (gd.isConnected) return react.call(P, gd, ...args);
        P.purge(gd);
        return gd;
      });
    },
  });
})();
</script>"""
