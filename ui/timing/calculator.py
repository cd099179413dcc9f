"""The "Prefill vs decode" tab's back-of-envelope calculator: an editable table of models and machines, and what
follows from each row (the floor per token, the KV cache per sequence, how many sequences fit)."""

from dataclasses import dataclass

import gradio as gr

from decoding.timing import calculator as calc
from ui.events import message_line, teach
from visuals.glossary import term

HEADERS = {
    "model": "model",
    "params_b": "params (B)",
    "bytes_per_param": "bytes/param",
    "layers": "layers",
    "kv_heads": "KV heads",
    "head_dim": "head dim",
    "context": "context",
    "hardware": "hardware",
    "bandwidth_gbs": "GB/s",
    "memory_gb": "memory GB",
    "measured_ms": "measured ms",
    "weights_gb": "weights GB",
    "floor_ms": "floor ms",
    "max_tokens_per_s": "max tok/s",
    "kv_gb_per_seq": "KV GB/seq",
    "sequences_fit": "seqs fit",
    "mbu": "MBU",
}
EDITABLE = (
    "model",
    "params_b",
    "bytes_per_param",
    "layers",
    "kv_heads",
    "head_dim",
    "context",
    "hardware",
    "bandwidth_gbs",
    "memory_gb",
)
RESULTS = (
    "model",
    "hardware",
    "weights_gb",
    "floor_ms",
    "measured_ms",
    "mbu",
    "max_tokens_per_s",
    "kv_gb_per_seq",
    "sequences_fit",
)
INTEGERS = ("layers", "kv_heads", "head_dim", "context")


def table_values(rows: list[calc.CalculatorRow], columns: tuple[str, ...]) -> list[list]:
    """The calculator's rows as table cells, rounded for reading."""
    return [[_round(calc.calculate(row)[c]) for c in columns] for row in rows]


def _round(v):
    if isinstance(v, float):
        return round(v, 3) if abs(v) < 10 else round(v, 1)
    return "—" if v is None else v


def recalculate(inputs, measured: dict | None) -> list[list]:
    """The results table from the (possibly edited) inputs table; `measured` is {model: ms} from Measure."""
    rows = inputs.values.tolist() if hasattr(inputs, "values") else inputs
    parsed = [_parse_row(r, measured or {}) for r in rows if any(str(v).strip() for v in r)]
    return table_values(parsed, RESULTS)


def _parse_row(values: list, measured: dict) -> calc.CalculatorRow:
    fields = {}
    for name, v in zip(EDITABLE, values):
        if name in ("model", "hardware"):
            fields[name] = str(v)
            continue
        try:
            fields[name] = int(float(v)) if name in INTEGERS else float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{HEADERS[name]} must be a number, got {v!r}") from None
    return calc.CalculatorRow(**fields, measured_ms=measured.get(fields["model"]))


@dataclass(frozen=True)
class Calculator:
    inputs: gr.Dataframe  # editable
    message: gr.HTML  # what is wrong with an edited cell
    results: gr.Dataframe


def layout() -> Calculator:
    """The calculator's components, inside the caller's gr.Tab."""
    gr.Markdown(
        "### Back-of-envelope calculator\nFloor per token = weights ÷ bandwidth; KV cache = 2 × layers × KV heads × "
        "head dim × tokens × bytes; sequences that fit = (memory − weights − overhead) ÷ KV per sequence. "
        "Overhead is 3 GB, as in the references. Edit any cell of the first table; the second recomputes. "
        "After **Measure**, the first row is the loaded model on this machine, its measured decode step next to "
        f"its floor ({term('MBU')}: floor ÷ measured)."
    )
    inputs = gr.Dataframe(
        value=table_values(calc.REFERENCE_ROWS, EDITABLE),
        headers=[HEADERS[c] for c in EDITABLE],
        type="array",
        interactive=True,
        label="inputs (editable)",
        elem_id="timing-inputs",
        column_widths=["22%", *["8.5%"] * 6, "16%", "7%", "8%"],
        datatype=["str", *["number"] * 6, "str", "number", "number"],
    )
    message = message_line("timing-calculator-message")
    results = gr.Dataframe(
        value=table_values(calc.REFERENCE_ROWS, RESULTS),
        headers=[HEADERS[c] for c in RESULTS],
        type="array",
        interactive=False,
        label="what follows",
        elem_id="timing-results",
        column_widths=["22%", "16%", *["9%"] * 7],
    )
    return Calculator(inputs=inputs, message=message, results=results)


def wire(c: Calculator, measured: gr.State) -> None:
    """Every edit recomputes the results; `measured` holds {model: ms} from the tab's last measurement."""

    def recalculated(inputs, measured_ms) -> dict:
        return {c.results: recalculate(inputs, measured_ms)}

    changed = teach(recalculated, c.message)
    c.inputs.input(changed, [c.inputs, measured], [c.results, c.message], show_progress="hidden")
