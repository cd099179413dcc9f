"""How the page draws its plotly charts: each new value once, on the chart that shows it, fitted to the room it is
read in (projector mode's type, a phone's width).

Once: gradio 6's Plot gives each new value a new chart: it re-creates its plotly component (a `{#key}` on the value),
but the component being replaced still reads the new value first and draws it in full on its own chart, which leaves
the page a moment later. Every chart update was drawn twice, and the replaced charts were never released: plotly
keeps a window "resize" listener for each responsive chart, so each one stayed in memory with its SVG. Measured on
the step tab (2-vCPU AMD EPYC, Chromium 156; a Prefill then 10 Steps, three charts each): Chromium used 8.4 to 10.9
CPU-s (four runs) and 7.3 to 8.1 with this script (eight); after 10 Steps the page held 27,900 DOM nodes and 4,500
event listeners, and 6,800 and 710 with it (5,900 and 570 after 20).

Fitted: a figure is written once on the server, for no screen in particular. The page draws a copy of it fitted to
the room, and draws it again when the room changes (projector mode switched, a window narrowed past a phone's width):
- in projector mode every font of the chart is `ui.projector.TYPE` times as large, as is every text of the page, and
  the top margin with the title in it;
- on a phone (narrower than `NARROW_PX`): subplots side by side are stacked one above the other, the legend sits
  under the plot, the axes have fewer ticks, long titles and notes wrap to the chart's width, notes that would cover
  one another move apart, and plotly's toolbar, which a tap shows over the title, is not drawn.

`HEAD` goes in the page's <head>, before gradio loads plotly. When plotly is set on `window`, its `react` (what
gradio's Plot calls) waits one microtask, the time gradio takes to put the new chart in place of the old, then draws
on a chart that is on the page, and releases one that has left it (`Plotly.purge`: its listeners, its data)."""

from ui.projector import NARROW_PX, TYPE

STACKED_PX = 240  # on a phone, the height of each subplot once stacked
WRAP_EM = 0.55  # the width of an average character of the charts' font, in em: how many fit a line

HEAD = f"""<script>
(() => {{
  let plotly;
  const TYPE = {TYPE}, NARROW_PX = {NARROW_PX}, STACKED_PX = {STACKED_PX}, WRAP_EM = {WRAP_EM};
  const room = () => ({{
    type: document.documentElement.classList.contains('projector') ? TYPE : 1,
    narrow: innerWidth < NARROW_PX,
  }});
  const named = r => `${{r.type}} ${{r.narrow}}`;

  // every font size of a figure's part (layout or trace: font, tickfont, textfont...), and sizes written in its text
  const scaleFonts = (o, s) => {{
    if (Array.isArray(o)) {{
      if (o.length && typeof o[0] !== 'object' && typeof o[0] !== 'string') return;  // data
      o.forEach((v, i) => (typeof v === 'string' ? (o[i] = scaleText(v, s)) : scaleFonts(v, s)));
      return;
    }}
    if (!o || typeof o !== 'object') return;
    for (const [k, v] of Object.entries(o)) {{
      if (typeof v === 'string') o[k] = scaleText(v, s);
      else if (/font$/i.test(k) && v && typeof v.size === 'number') v.size *= s;
      else if (/font$/i.test(k) && v && Array.isArray(v.size)) v.size = v.size.map(x => x * s);
      else scaleFonts(v, s);
    }}
  }};
  const scaleText = (t, s) => (t.includes('font-size') ? t.replace(/font-size:\\s*([\\d.]+)px/g,
    (_, n) => `font-size:${{(n * s).toFixed(1)}}px`) : t);

  // a text's lines wrapped at spaces to `chars` visible characters (tags such as <b> or <span> count as none)
  // (a tag's own spaces, as in <span style='font-size: 9px'>, are not places to wrap: kept as \\0 while splitting)
  const wrap = (text, chars) => String(text).split(/<br\\s*\\/?>/i).map(line => {{
    const out = [];
    let width = 0;
    const words = line.replace(/<[^>]*>/g, tag => tag.replace(/ /g, '\\0')).split(' ').map(w => w.replace(/\\0/g, ' '));
    for (const word of words) {{
      const shown = word.replace(/<[^>]*>/g, '').length;
      if (width && width + 1 + shown > chars) {{ out.push('<br>'); width = 0; }} else if (out.length) out.push(' ');
      out.push(word);
      width += (width ? 1 : 0) + shown;
    }}
    return out.join('').replace(/ <br>/g, '<br>');
  }}).join('<br>');
  const sizeOf = (part, layout) => ((part && part.font && part.font.size) || (layout.font && layout.font.size) || 12);
  const axesOf = (layout, letter) => Object.keys(layout).filter(k => new RegExp(`^${{letter}}axis\\\\d*$`).test(k));
  const titleOf = part => (part && part.title && typeof part.title === 'object' ? part.title : null);

  // subplots side by side (one row of columns, make_subplots' cols=n), one above the other, each STACKED_PX tall and
  // `gap` px apart; their titles (paper notes over each column) moved over their row
  const stack = (layout, gap) => {{
    const cols = axesOf(layout, 'x').map(k => ({{x: layout[k], y: 'yaxis' + ((layout[k].anchor || 'y').slice(1))}}))
      .filter(c => Array.isArray(c.x.domain) && layout[c.y] && !layout[c.y].overlaying)
      .sort((a, b) => a.x.domain[0] - b.x.domain[0]);
    if (cols.length < 2 || cols.some((c, i) => i && c.x.domain[0] < cols[i - 1].x.domain[1] - 1e-6)) return;
    if (cols.some(c => {{ const d = layout[c.y].domain || [0, 1]; return d[0] > 0.01 || d[1] < 0.99; }})) return;
    const n = cols.length, plot = n * STACKED_PX + (n - 1) * gap, m = layout.margin || {{}};
    const old = cols.map(c => c.x.domain.slice());
    cols.forEach((c, i) => {{
      const top = 1 - (i * (STACKED_PX + gap)) / plot;
      c.x.domain = [0, 1];
      layout[c.y].domain = [top - STACKED_PX / plot, top];
    }});
    for (const a of layout.annotations || []) {{
      if (a.xref !== 'paper' || a.yref !== 'paper') continue;
      const i = old.findIndex(d => a.x >= d[0] - 1e-6 && a.x <= d[1] + 1e-6);
      if (i < 0) continue;
      const [lo, hi] = layout[cols[i].y].domain;
      a.x = (a.x - old[i][0]) / (old[i][1] - old[i][0]);
      a.y = lo + a.y * (hi - lo);
    }}
    layout.height = plot + (m.t || 80) + (m.b || 80);
  }};

  // the chart's title wrapped to `width` px: a title wrapped onto more lines grows down, over the plot and its axis
  // titles, so the top margin grows with it, and the chart's height, so the plot keeps its own. plotly puts the
  // title's first line at the margin's middle and the others under it: `room` 2 keeps the title as far from the
  // plot as it was (a phone's subplot titles stand in the margin too), 1 halves that gap to keep the chart shorter
  const lineCount = text => String(text).split(/<br\\s*\\/?>/i).length;
  // `px` more top margin, and as much more height, so the plot keeps its own
  const growTop = (layout, px) => {{
    if (px <= 0) return;
    layout.margin = {{...layout.margin, t: ((layout.margin || {{}}).t ?? 80) + px}};
    if (typeof layout.height === 'number') layout.height += px;
  }};
  const wrapTitle = (layout, width, room = 1) => {{
    const title = titleOf(layout);
    if (!title || !title.text) return;
    const before = lineCount(title.text);
    title.text = wrap(title.text, Math.max(12, Math.floor(width / (WRAP_EM * sizeOf(title, layout)))));
    growTop(layout, Math.round(room * (lineCount(title.text) - before) * sizeOf(title, layout) * 1.3));
  }};

  const fit = (figure, r, box) => {{
    const layout = (figure.layout = figure.layout || {{}});
    const config = (figure.config = figure.config || {{}});
    if (r.type !== 1) {{
      layout.font = {{size: 12, ...layout.font}};
      scaleFonts(layout, r.type);
      scaleFonts(figure.data, r.type);
      if (layout.margin && typeof layout.margin.t === 'number') layout.margin.t = Math.round(layout.margin.t * r.type);
      // a legend under the plot (a negative y) sat a fixed fraction of the plot below it, where the larger tick labels
      // and x title now reach: it goes to the chart's bottom edge, and the bottom margin grows as the type does
      const legend = layout.legend;
      if (legend && typeof legend.y === 'number' && legend.y < 0 && legend.yref !== 'container') {{
        layout.legend = {{...legend, y: 0, yanchor: 'bottom', yref: 'container'}};
        layout.margin = {{...layout.margin, b: Math.round(((layout.margin || {{}}).b ?? 80) * r.type)}};
      }}
    }}
    if (!r.narrow) {{
      // in projector mode's larger type a title as wide as its chart ran past the chart's edge: wrapped to its box
      if (r.type !== 1 && box) wrapTitle(layout, box);
      return figure;
    }}
    config.displayModeBar = false;
    // the chart's width (its box's, or the screen's less a card's padding), and its plot's (less its side margins)
    const width = box || document.documentElement.clientWidth - 48, m = layout.margin || {{}};
    const plot = width - (m.l ?? 80) - (m.r ?? 80);
    const chars = (part, w = width) => Math.max(12, Math.floor(w / (WRAP_EM * sizeOf(part, layout))));
    if (layout.legend) layout.legend = {{...layout.legend, orientation: 'h', x: 0, xanchor: 'left', y: 0,
      yanchor: 'bottom', yref: 'container'}};
    wrapTitle(layout, width, 2);
    for (const k of [...axesOf(layout, 'x'), ...axesOf(layout, 'y')]) {{
      const axis = layout[k];
      axis.automargin = true;
      if (!axis.tickvals && !axis.dtick && axis.type !== 'category') axis.nticks = k.startsWith('x') ? 5 : 6;
      const t = titleOf(axis);
      if (t && t.text && k.startsWith('x')) t.text = wrap(t.text, chars(t, plot));
    }}
    // a note wrapped onto more lines above the top subplot (its title) grows up into the chart's title, which sits
    // centred in the top margin: the margin grows by twice its new lines (half of it goes above the title), and the
    // chart's height with it
    let above = 0;
    for (const a of layout.annotations || []) {{
      if (!a.text) continue;
      const before = lineCount(a.text);
      a.text = wrap(a.text, chars(a));
      if (a.yref === 'paper' && a.yanchor === 'bottom' && a.y >= 0.999)
        above = Math.max(above, Math.round(2 * (lineCount(a.text) - before) * sizeOf(a, layout) * 1.3));
    }}
    growTop(layout, above);
    // each legend entry wrapped to the chart's width less its symbol's: one longer than that ran past the screen's edge
    for (const trace of figure.data || [])
      if (typeof trace.name === 'string') trace.name = wrap(trace.name, chars(layout.legend, width - 50));
    // between two stacked subplots: the upper one's tick labels and x title, the lower one's title (lines of text)
    const lines = t => (t && t.text ? String(t.text).split('<br>').length : 0);
    const xLines = Math.max(0, ...axesOf(layout, 'x').map(k => lines(titleOf(layout[k]))));
    const noteLines = Math.max(0, ...(layout.annotations || []).map(lines));
    stack(layout, Math.round(sizeOf(null, layout) * (1.6 + 1.3 * (xLines + noteLines))) + 28);
    return figure;
  }};

  // on a phone, notes that still cover one another once drawn: each moved below the one it covers; and a note that
  // runs past the chart's right (or left) edge moved back inside it
  const apart = (P, gd) => {{
    const notes = [...gd.querySelectorAll('.infolayer .annotation')];
    const box = gd.getBoundingClientRect();
    const moves = {{}};
    const noteOf = el => (gd.layout.annotations || [])[Number(el.dataset.index)];
    for (let i = 0; i < notes.length; i++) {{
      const b = notes[i].getBoundingClientRect(), note = noteOf(notes[i]);
      const k = Number(notes[i].dataset.index);
      const shift =
        b.right > box.right - 2 ? box.right - b.right - 4 : b.left < box.left + 2 ? box.left - b.left + 4 : 0;
      if (note && shift) moves[`annotations[${{k}}].xshift`] = (note.xshift || 0) + shift;
      for (let j = 0; j < i; j++) {{
        const a = notes[j].getBoundingClientRect();
        const over = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && over > 1 && note)
          moves[`annotations[${{k}}].yshift`] = (note.yshift || 0) - over - 2;
      }}
    }}
    return Object.keys(moves).length ? P.relayout(gd, moves) : gd;
  }};

  // `window.labDrawing` counts the charts being drawn: a page (or a test) that reads a chart waits for it to be 0
  window.labDrawing = 0;
  const draw = (P, react, gd, r) => {{
    window.labDrawing += 1;
    gd.labRoom = named(r);  // at once: a second refit in the same task (a resize beside a switch) draws nothing more
    let drawn;
    try {{
      const figure = fit(JSON.parse(gd.labFigure), r, gd.clientWidth);
      // gradio makes every chart responsive, so a window's resize deletes the layout's height and sizes the chart to
      // its box, whose height is the chart's own: after a refit (projector mode) it came out 0 and the chart vanished.
      // The height on the box itself: a resize finds it there
      if (typeof figure.layout.height === 'number') gd.style.height = `${{figure.layout.height}}px`;
      drawn = react.call(P, gd, figure.data, figure.layout, figure.config).then(() => (r.narrow ? apart(P, gd) : gd));
    }} catch (err) {{
      drawn = Promise.reject(err);
    }}
    return drawn.finally(() => {{ window.labDrawing -= 1; }});
  }};

  Object.defineProperty(window, 'Plotly', {{
    configurable: true,
    get: () => plotly,
    set(P) {{
      plotly = P;
      if (!P || P.drawsOnce) return;
      P.drawsOnce = true;
      const react = P.react;
      // a replaced chart has left the page by the next microtask: its value is drawn on the chart that took its
      // place; the figure as the server wrote it is kept on the chart, to fit it again when the room changes
      P.react = (gd, data, layout, config) => Promise.resolve().then(() => {{
        if (!gd.isConnected) {{
          P.purge(gd);
          return gd;
        }}
        gd.labFigure = JSON.stringify({{data, layout, config}});
        return draw(P, react, gd, room());
      }});
      const refit = () => {{
        const r = room();
        for (const gd of document.querySelectorAll('.js-plotly-plot'))
          if (gd.labFigure && gd.labRoom !== named(r)) draw(P, react, gd, r);
      }};
      addEventListener('lab-projector', refit);
      addEventListener('resize', refit);
    }},
  }});
}})();
</script>"""
