"""What the model file holds, as the Quantization tab opens: each kind of tensor in its stored type, its bytes drawn
as a bar against what a float32 decode step reads; or, for a model that is not the bundled file, what the
reference weights are. Pure functions of decoding.quantization.stored's plain records (read by attribute); no torch.
"""

import html

from visuals.glossary import glossed, term
from visuals.theme import CHOSEN, KEPT, OTHER, TEXT

MB = 1e6
TYPE_TERMS = ("Q4_1", "Q8_0")  # the ggml types the glossary explains


def stored_html(stored) -> str:
    """A table: per part, its ggml type, what that stores, bits a weight and MB with a bar; then float32's row."""
    widest = stored.float32_bytes
    rows = [
        _row(
            glossed(f"{k.part} ({k.tensors})" if k.tensors > 1 else k.part, "LM head"),
            term(k.ggml_type) if k.ggml_type in TYPE_TERMS else html.escape(k.ggml_type),
            html.escape(k.format),
            k.bits_per_weight,
            k.bytes,
            widest,
            CHOSEN,
        )
        for k in stored.kinds
    ]
    run = stored.float32_bytes
    rows.append(_row("all of it, as run here", "float32", "dequantized, 4 bytes a weight", 32, run, widest, KEPT))
    ratio = stored.float32_bytes / stored.tensor_bytes
    said = (
        f"<p class='quantization-said'><b>{html.escape(stored.name)}</b> holds "
        f"<b>{stored.tensor_bytes / MB:.1f} MB</b> of weights; the lab runs it dequantized to float32 and reads "
        f"<b>{stored.float32_bytes / MB:.0f} MB</b> a token, {ratio:.1f}× as much. Its layers are already int4 in "
        f"groups of 32, so rounding them to int4 again changes no weight, and the format <b>as stored</b> holds "
        f"exactly what runs in these {stored.tensor_bytes / MB:.1f} MB.</p>"
    )
    head = "<tr><th>part</th><th>stored as</th><th>what that holds</th><th>bits a weight</th><th>MB</th></tr>"
    return (
        f"<div id='quantization-file-body'>{said}<table class='quantization-file'>{head}{''.join(rows)}</table></div>"
    )


def _row(part_html: str, kind: str, words: str, bits: float, nbytes: int, widest: int, colour: str) -> str:
    width = max(1.0, 100 * nbytes / widest)  # of a track of fixed width beside the number
    bar = (
        f"<span class='quantization-track'><span class='quantization-bar' style='width:{width:.1f}%; "
        f"background:{colour}'></span></span>"
    )
    return (
        f"<tr><td>{part_html}</td><td>{kind}</td><td>{words}</td><td class='quantization-right'>{bits:g}</td>"
        f"<td class='quantization-bytes'><span class='quantization-mb'>{nbytes / MB:.1f}</span>{bar}</td></tr>"
    )


def reference_html(model_id: str) -> str:
    """For a model that is not the bundled file: what the float32 reference is, and why no "as stored"."""
    return (
        f"<div id='quantization-file-body'><p class='quantization-said'>The reference: "
        f"<b>{html.escape(model_id)}</b>'s weights as published, run in float32. They are not a file this lab rounded "
        "to blocks, so there is no <b>as stored</b> format here: every format rounds from these weights, and its "
        "drift is all rounding.</p></div>"
    )


CSS = f"""
#quantization-file .quantization-file {{
  border-collapse: collapse; font-size: calc(14px * var(--lab-type, 1)); line-height: 1.3; width: 100%; margin: 0;
    border: none !important;
}}
#quantization-file .quantization-file th, #quantization-file .quantization-file td {{
  text-align: left; padding: 1px 12px 1px 0 !important; border: none !important; background: none !important;
  color: {TEXT};
}}
#quantization-file .quantization-file th {{ border-bottom: 1px solid {OTHER} !important; }}
#quantization-file .quantization-file td:nth-child(2), #quantization-file .quantization-file td:last-child {{
  white-space: nowrap;
}}
#quantization-file .quantization-file .quantization-right {{ text-align: right; font-variant-numeric: tabular-nums; }}
#quantization-file .quantization-mb {{
  display: inline-block; min-width: 3.2em; text-align: right; font-variant-numeric: tabular-nums;
}}
.quantization-track {{ display: inline-block; width: 7em; margin-left: 6px; vertical-align: middle; }}
.quantization-bar {{ display: block; height: 10px; }}
.quantization-said {{ margin: 0 0 4px 0; }}
"""
