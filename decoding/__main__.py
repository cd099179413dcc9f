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
from decoding.knobs import KNOBS
from decoding.models import ModelLoadError, load_model
from decoding.options import USAGE_ERROR, build_parser
from decoding.pipeline import SamplerSettings


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


def settings_from(args: argparse.Namespace, vocab_size: int | None = None) -> SamplerSettings:
    """The sampler settings the arguments ask for, checked as every tab checks them (decoding.knobs)."""
    return knobs.settings_from({field: getattr(args, field) for field in (*KNOBS, "order")}, vocab_size=vocab_size)


def sample(args: argparse.Namespace, lm, prompt):
    """Token-by-token sampling (greedy at temperature 0): the instrumented loop, to the end."""
    from decoding.loop import run_to_end
    from decoding.static import static_kind

    return run_to_end(
        lm,
        prompt,
        settings_from(args, lm.vocab_size),
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
        stop_strings=args.stop,
        top_n=args.top_n,
        path=static_kind(lm) if args.static else "eager",
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
