"""Why row 0's logits move inside a batch: the causes the references list, and which of them a run exercised.

Pure python (no torch): the batching lab's captions read it. `experiment` is a
`decoding.nondeterminism.experiment.BatchingExperiment` (rows, condition, dtype).
"""

# the causes the references list, in order; causes() says which of them a run exercised
CAUSES = {
    "non-associative sums": "Floating-point addition is not associative: (a + b) + c can differ from a + (b + c) "
    "in the last bits, so any change in the order a kernel adds in changes the logits a little.",
    "batch-size-dependent kernels": "Matmul and attention kernels choose how to split and order their sums by the "
    "shapes they see, so row 0 is added up differently in a batch of 8 than alone.",
    "padding": "Batchmates of other lengths left-pad the shorter rows: the attention mask and the longer padded "
    "block change row 0's arithmetic, although the masked positions carry no weight.",
    "precision boundaries": "In bfloat16/float16 a value keeps only a few significant digits, so a tiny difference "
    "can round to a whole low-precision step and grow into logit noise of ~0.1.",
    "tensor-parallel reduction order": "Split across GPUs, partial sums are all-reduced in an order that depends "
    "on the topology and the kernel; not here (one device).",
    "mixture-of-experts routing": "In a mixture-of-experts model, batchmates compete for expert capacity, so the "
    "same token can be routed to other experts; not here (a dense model).",
}


def causes(experiment) -> list[str]:
    """The names (keys of CAUSES) this run exercised: changed the shapes or precision row 0 was computed with."""
    used = []
    if any(r.max_noise > 0 for r in experiment.rows):
        used.append("non-associative sums")
    if experiment.rows:
        used.append("batch-size-dependent kernels")
        if experiment.condition == "padded":
            used.append("padding")
    if experiment.dtype != "float32":
        used.append("precision boundaries")
    return used
