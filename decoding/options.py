"""The command line's options: what `python -m decoding --help` lists, each value checked as it is parsed (a bad
one prints one line and exits 2). Ranges and the seed limit come from decoding.knobs, the one home of each."""

import argparse

from decoding.knobs import check_seed
from decoding.models import BUNDLED
from decoding.pipeline import ORDERS
from decoding.quantization.formats import SERVED as SERVED_WEIGHTS

USAGE_ERROR = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # one line, not the whole usage block: classroom scripts read stderr
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see --help)\n")


def _seed(text: str) -> int:
    """The seed, under the one rule of every tab, link and command line (decoding.knobs.SEED_MAX)."""
    try:
        return check_seed(text, "the seed")
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m decoding", description="Decode a prompt one token at a time and print the result.")
    p.add_argument("--prompt", required=True, help="the user message (chat) or raw text to continue")
    p.add_argument("--model", default=BUNDLED, help=f"model id (default {BUNDLED}, the bundled SmolLM2-135M)")
    p.add_argument(
        "--chat",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="wrap the prompt in the model's chat template (default: yes if the model has one)",
    )
    p.add_argument("--max-new-tokens", type=int, default=64, metavar="N")
    p.add_argument("--seed", type=_seed, default=0, metavar="S", help="same as torch.manual_seed(S) before generate()")
    p.add_argument("--stop", nargs="+", action="extend", default=[], metavar="STR", help="stop strings")
    p.add_argument("--top-n", type=int, default=20, metavar="N", help="candidates recorded per step in --json")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda[:N]")
    p.add_argument(
        "--dtype", default="auto", help="auto (float32 on CPU, bfloat16 on CUDA), float32, bfloat16, float16"
    )
    p.add_argument(
        "--weights",
        choices=SERVED_WEIGHTS,
        default="float32",
        help="weight format: float32 (default), bfloat16, int8 (weight-only), int4 (weight-only, group 32)",
    )
    p.add_argument("--json", action="store_true", help="print the whole trace as JSON, and nothing else")
    for add_group in (_sampling, _beam_search, _speculative, _constrained):
        add_group(p)
    return p


def _sampling(p: argparse.ArgumentParser) -> None:
    s = p.add_argument_group("sampling (all off unless given)")
    s.add_argument("--temperature", type=float, default=1.0, metavar="T", help="0 = greedy (argmax); default 1.0")
    s.add_argument("--top-k", type=int, default=0, metavar="K", help="0 = off")
    s.add_argument("--top-p", type=float, default=1.0, metavar="P", help="1.0 = off")
    s.add_argument("--min-p", type=float, default=0.0, metavar="M", help="0 = off")
    s.add_argument("--typical-p", type=float, default=1.0, metavar="P", help="1.0 = off")
    s.add_argument("--epsilon", type=float, default=0.0, metavar="E", help="epsilon cutoff, 0 = off")
    s.add_argument("--eta", type=float, default=0.0, metavar="E", help="eta cutoff, 0 = off")
    s.add_argument("--repetition-penalty", type=float, default=1.0, metavar="R", help="CTRL rule, 1.0 = off")
    s.add_argument("--presence-penalty", type=float, default=0.0, metavar="A", help="OpenAI rule, 0 = off")
    s.add_argument("--frequency-penalty", type=float, default=0.0, metavar="F", help="OpenAI rule, 0 = off")
    s.add_argument("--order", choices=sorted(ORDERS), default="transformers", help="the pipeline's stage order")
    s.add_argument(
        "--static",
        action="store_true",
        help="decode through a static KV cache (prompt + max new tokens), its step captured as a CUDA graph on CUDA",
    )


def _beam_search(p: argparse.ArgumentParser) -> None:
    b = p.add_argument_group("beam search (--num-beams K > 1; deterministic, the sampling options do not apply)")
    b.add_argument("--num-beams", type=int, default=1, metavar="K", help="1 = the sampling path above; 2-16 beams")
    b.add_argument(
        "--length-penalty",
        type=float,
        default=1.0,
        metavar="L",
        help="a finished beam scores log p / generated length ** L; in [-5, 5], default 1.0",
    )
    b.add_argument(
        "--early-stopping",
        type=_early_stopping,
        default=False,
        metavar="{true,false,never}",
        help="true: stop once K hypotheses are done; false (default): when none can improve; never: at max length",
    )


def _speculative(p: argparse.ArgumentParser) -> None:
    sp = p.add_argument_group("speculative decoding (the same samplers; greedy output equals plain greedy)")
    sp.add_argument("--speculative", choices=("prompt-lookup", "early-exit"), default=None, help="the draft source")
    sp.add_argument("--draft-tokens", type=int, default=5, metavar="K", help="tokens drafted per round, 1-16")
    sp.add_argument("--exit-layer", type=int, default=None, metavar="L", help="early exit: the draft's layers")


def _constrained(p: argparse.ArgumentParser) -> None:
    c = p.add_argument_group("constrained decoding (one of these; the answer is always legal under it)")
    one = c.add_mutually_exclusive_group()
    one.add_argument("--json-schema", metavar="FILE", help="a JSON schema file the answer must validate against")
    one.add_argument("--regex", metavar="R", help="a regular expression the whole answer must match")
    one.add_argument("--choices", metavar="A,B,C", help="the answer is exactly one of these strings")
    one.add_argument("--lark", metavar="FILE", help="a Lark grammar file (llguidance's dialect)")
    c.add_argument("--no-fast-forward", action="store_true", help="sample every token, forced ones included")


def _early_stopping(text: str) -> bool | str:
    choices = {"true": True, "false": False, "never": "never"}
    if text.lower() not in choices:
        raise argparse.ArgumentTypeError(f"early stopping must be true, false or never, got {text!r}")
    return choices[text.lower()]
