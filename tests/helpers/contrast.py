"""WCAG AA contrast on the page as it is now, for the browser tests: axe-core's colour-contrast rule (HTML text),
and the same 4.5:1 rule applied to the text inside plotly's SVG charts, which axe does not check."""

from axe_playwright_python.sync_playwright import Axe

from tests.helpers.pages import idle

AXE = Axe()

# every visible text of every plotly chart: its fill, faded by its own and its parents' opacity onto the white page,
# against that page; 3:1 for large text (24 px, or 18.66 px bold) as WCAG allows
CHART_TEXT = """
() => {
  const lum = (r, g, b) => [r, g, b]
    .map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const out = [];
  for (const t of document.querySelectorAll('.js-plotly-plot svg text')) {
    if (!t.textContent.trim() || t.closest('.hoverlayer')) continue;
    const box = t.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const cs = getComputedStyle(t);
    const m = cs.fill.match(/rgba?\\(([^)]+)\\)/);
    if (!m || cs.visibility === 'hidden') continue;
    const [r, g, b, a0] = m[1].split(',').map(Number);
    let a = (Number.isNaN(a0) || a0 === undefined ? 1 : a0) * Number(cs.fillOpacity || 1);
    for (let e = t; e && e.tagName !== 'svg'; e = e.parentElement) a *= Number(getComputedStyle(e).opacity || 1);
    const mix = v => v * a + 255 * (1 - a);
    const ratio = 1.05 / (lum(mix(r), mix(g), mix(b)) + 0.05);
    const size = parseFloat(cs.fontSize);
    const bold = Number(cs.fontWeight) >= 700 || t.querySelector('b, tspan[style*="bold"]');
    if (ratio < (size >= 24 || (bold && size >= 18.66) ? 3 : 4.5))
      out.push(`chart text "${t.textContent.slice(0, 40)}": ${cs.fill} at opacity ${a.toFixed(2)}, `
               + `${ratio.toFixed(2)}:1`);
  }
  return out;
}
"""


def contrast_problems(page) -> list[str]:
    """Every text on the page under 4.5:1 (axe's colour-contrast rule, then the charts' SVG text), one line each,
    once no event is at work and no output is still fading back from the dimmed look of a pending one."""
    idle(page, 600)
    found = AXE.run(page, options={"runOnly": ["color-contrast"]}).response["violations"]
    lines = []
    for violation in found:
        for node in violation["nodes"]:
            data = node["any"][0]["data"] if node["any"] else {}
            lines.append(
                f"{node['html'][:80]}: {data.get('fgColor')} on {data.get('bgColor')}, {data.get('contrastRatio')}:1"
            )
    return lines + page.evaluate(CHART_TEXT)
