"""The kernel survey of the Quantization tab as a table and a sentence: each kernel's one-token GEMVs over the
layers and over the LM head, their GB/s beside float32's, and, from those numbers, why a format runs simulated.
A kernel's GB/s is the weight bytes its GEMVs read ÷ their time, not the machine's copy bandwidth: both are said,
side by side, when the server keeps the machine's figure.

A row: kernel, format, layers_ms, layers_mb, head_ms, head_mb, used (whether the app runs its format with this
kernel on this device). The first row is float32's F.linear.
"""

from visuals.machine import beside_machine


def kernels_table(rows: list[dict], device: str, machine_gbs: float | None = None) -> str:
    """`machine_gbs`: this machine's copy bandwidth as the server keeps it (None: not measured yet)."""
    base = rows[0]
    lines = [
        f"One token's GEMVs on {device}, each kernel in turns (medians): every linear of the 30 layers, then the "
        f"LM head. GB/s here is one token's GEMVs' weight bytes ÷ their time, not a copy: float32's over the layers "
        f"is {beside_machine(_gbs(base, 'layers'), machine_gbs)}.\n",
        "| kernel | format | layers: MB | GB/s | × float32's speed | LM head: MB | GB/s | × float32's speed "
        "| the app |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        app = "runs it" if r["used"] else "–"
        lines.append(
            f"| {r['kernel']} | {r['format']} | {r['layers_mb']:.0f} | {_gbs(r, 'layers'):.1f} | "
            f"{base['layers_ms'] / r['layers_ms']:.2f} | {r['head_mb']:.0f} | {_gbs(r, 'head'):.1f} | "
            f"{base['head_ms'] / r['head_ms']:.2f} | {app} |"
        )
    return "\n".join(lines)


def kernels_said(rows: list[dict], machine_gbs: float | None = None) -> str:
    """Which kernels beat float32 over the layers here, which read fewer bytes yet took longer, and what the app
    does with each format. `machine_gbs`: this machine's copy bandwidth as the server keeps it (None: not yet)."""
    base, others = rows[0], rows[1:]
    if not others:
        return "No low-bit kernel builds on this device: every format runs **simulated** (rounded weights, float32)."
    fp32 = _gbs(base, "layers")
    said = [
        f"float32 streams the layers' {base['layers_mb']:.0f} MB at **{fp32:.1f} GB/s** in one token's GEMVs, "
        f"{beside_machine(fp32, machine_gbs)}."
    ]
    for r in others:
        fewer, took = base["layers_mb"] / r["layers_mb"], r["layers_ms"] / base["layers_ms"]
        if took >= 1:
            said.append(
                f"**{r['kernel']}** reads {fewer:.1f}× fewer bytes yet takes {took:.1f}× as long "
                f"({_gbs(r, 'layers'):.1f} GB/s): unpacking each weight costs more than the bytes it saves."
            )
        else:
            said.append(
                f"**{r['kernel']}** is {1 / took:.2f}× as fast over the layers, reading {fewer:.1f}× fewer bytes."
            )
        if not r["used"]:
            said[-1] += f" The app runs **{r['format']}** simulated on this device."
    return " ".join(said)


def _gbs(row: dict, part: str) -> float:
    return row[f"{part}_mb"] / row[f"{part}_ms"]  # MB per ms = GB/s
