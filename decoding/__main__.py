"""`python -m decoding --prompt TEXT ...`: decode from the command line, for classroom scripts and checks.

Prints the completion, or with `--json` the whole trace and nothing else on stdout (progress bars and
warnings go to stderr). Sampler options that are not given are off (top-k 0, top-p 1, min-p 0,
penalties neutral), never transformers' implicit top_k=50; temperature defaults to 1.0 as in
generate(), and 0 means greedy. `--seed S` reproduces `torch.manual_seed(S)` before
`generate(do_sample=True, ...)`. `--num-beams K` (K > 1) runs beam search instead, as
`generate(num_beams=K, do_sample=False)` does; its `--json` result gives the best beam's ids as `token_ids`.
`--speculative prompt-lookup|early-exit --draft-tokens K [--exit-layer L]` decodes speculatively (the same
samplers); its `--json` gives the tokens and one record per round (drafted, accepted, bonus, times).
`--json-schema FILE`, `--regex R`, `--choices a,b,c` or `--lark FILE` constrain the answer to a grammar (llguidance's
mask as one more sampler stage; tokens the grammar forces are fast-forwarded).
Sampler values and the seed are checked as on every tab (decoding.knobs: the teaching ranges, seeds up to
2**32 - 1); a bad value prints one line to stderr and exits with status 2.
"""

import argparse
import contextlib
import json
import sys

from decoding import knobs
from decoding.knobs import KNOBS, check_seed
from decoding.models import BUNDLED, ModelLoadError, load_model
from decoding.pipeline import ORDERS, SamplerSettings
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
    sp = p.add_argument_group("speculative decoding (the same samplers; greedy output equals plain greedy)")
    sp.add_argument("--speculative", choices=("prompt-lookup", "early-exit"), default=None, help="the draft source")
    sp.add_argument("--draft-tokens", type=int, default=5, metavar="K", help="tokens drafted per round, 1-16")
    sp.add_argument("--exit-layer", type=int, default=None, metavar="L", help="early exit: the draft's layers")
    c = p.add_argument_group("constrained decoding (one of these; the answer is always legal under it)")
    one = c.add_mutually_exclusive_group()
    one.add_argument("--json-schema", metavar="FILE", help="a JSON schema file the answer must validate against")
    one.add_argument("--regex", metavar="R", help="a regular expression the whole answer must match")
    one.add_argument("--choices", metavar="A,B,C", help="the answer is exactly one of these strings")
    one.add_argument("--lark", metavar="FILE", help="a Lark grammar file (llguidance's dialect)")
    c.add_argument("--no-fast-forward", action="store_true", help="sample every token, forced ones included")
    return p


def constraint_from(args: argparse.Namespace):
    """The constraint the arguments ask for, or None."""
    from decoding.constrained.kinds import Constraint

    given = (
        ("json_schema", args.json_schema, True),
        ("regex", args.regex, False),
        ("choices", args.choices, False),
        ("lark", args.lark, True),
    )
    for kind, value, is_file in given:
        if value is not None:
            try:
                return Constraint(kind, open(value, encoding="utf-8").read() if is_file else value)
            except OSError as err:
                raise ValueError(f"cannot read the {kind.replace('_', ' ')} file {value!r}: {err.strerror}") from None
    return None


def _early_stopping(text: str) -> bool | str:
    choices = {"true": True, "false": False, "never": "never"}
    if text.lower() not in choices:
        raise argparse.ArgumentTypeError(f"early stopping must be true, false or never, got {text!r}")
    return choices[text.lower()]


def settings_from(args: argparse.Namespace, vocab_size: int | None = None) -> SamplerSettings:
    """The sampler settings the arguments ask for, checked as every tab checks them (decoding.knobs)."""
    return knobs.settings_from({field: getattr(args, field) for field in (*KNOBS, "order")}, vocab_size=vocab_size)


def sample(args: argparse.Namespace, lm, prompt):
    """Token-by-token sampling (greedy at temperature 0): the instrumented loop, to the end."""
    from decoding.loop import run_to_end

    return run_to_end(
        lm,
        prompt,
        settings_from(args, lm.vocab_size),
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
        stop_strings=args.stop,
        top_n=args.top_n,
    )


def constrained(args: argparse.Namespace, lm, prompt):
    """Sampling under a grammar (decoding/constrained/): every token legal, forced ones fast-forwarded."""
    from decoding.constrained.run import run_constrained

    return run_constrained(
        lm,
        prompt,
        constraint_from(args),
        settings_from(args, lm.vocab_size),
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
        stop_strings=args.stop,
        top_n=args.top_n,
        fast_forward=not args.no_fast_forward,
    )


def beams(args: argparse.Namespace, lm, prompt):
    """Beam search (decoding/beams/search.py): the best finished hypothesis, as generate(num_beams=K) finds it."""
    from decoding.beams.search import beam_search

    if args.stop:
        raise ValueError("stop strings are not supported with beam search (--num-beams > 1); leave out --stop")
    return beam_search(lm, prompt.ids, args.num_beams, args.length_penalty, args.early_stopping, args.max_new_tokens)


def speculative(args: argparse.Namespace, lm, prompt):
    """Speculative decoding (decoding/speculative/): rounds of K drafted tokens verified in one pass each."""
    from decoding.speculative.run import SpecRun

    if args.stop or args.num_beams > 1:
        raise ValueError("--speculative works without --stop and --num-beams; leave them out")
    run = SpecRun(
        lm,
        prompt.ids,
        settings_from(args, lm.vocab_size),
        source=args.speculative,
        draft_tokens=args.draft_tokens,
        exit_layer=args.exit_layer,
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
    )
    return run.run_to_end()


def strategy(args: argparse.Namespace):
    """Which decoding strategy the arguments ask for. Each returns a result with `.text` and `.to_dict()`."""
    from decoding.beams.search import check_settings

    check_settings(args.num_beams, args.length_penalty, args.early_stopping, args.max_new_tokens)
    if args.speculative and constraint_from(args) is not None:
        raise ValueError("--speculative and a constraint do not combine here: choose one")
    if args.speculative:
        return speculative
    if constraint_from(args) is not None:
        if args.num_beams > 1:
            raise ValueError("a constraint works with sampling or greedy here, not beam search: leave out --num-beams")
        return constrained
    return beams if args.num_beams > 1 else sample


def decode(args: argparse.Namespace):
    from decoding.prompts import encode_prompt

    lm = load_model(args.model, device=args.device, dtype=args.dtype, weights=args.weights)
    chat = lm.chat if args.chat is None else args.chat
    prompt = encode_prompt(lm.tokenizer, args.prompt, chat=chat, context_length=lm.context_length)
    return strategy(args)(args, lm, prompt)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    out = sys.stdout
    try:
        # anything a library prints while loading or decoding goes to stderr; stdout carries only the result
        with contextlib.redirect_stdout(sys.stderr):
            result = decode(args)
    except (ValueError, ModelLoadError) as err:
        print(f"python -m decoding: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    out.write((json.dumps(result.to_dict(), ensure_ascii=False) if args.json else result.text) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
