"""Greedy runs on the server's scheduler and alone, and sessions started together: what the scheduler and
prefix cache tests compare."""

import threading

from decoding.forward import forward_one


def greedy_alone(lm, ids, steps):
    logits, cache = forward_one(lm, ids, None, 0)
    out, seen = [], []
    for _ in range(steps):
        seen.append(logits)
        out.append(int(logits.argmax()))
        logits, cache = forward_one(lm, [out[-1]], cache, len(ids) + len(out) - 1)
    return out, seen


def greedy_through(scheduler, ids, steps, alone=False):
    logits, cache, first = scheduler.forward(ids, None, 0, alone=alone)
    out, seen, passes = [], [], [first]
    for _ in range(steps):
        seen.append(logits)
        out.append(int(logits.argmax()))
        logits, cache, p = scheduler.forward([out[-1]], cache, len(ids) + len(out) - 1, alone=alone)
        passes.append(p)
    return out, seen, passes


def together(fn, args_list):
    results = [None] * len(args_list)
    barrier = threading.Barrier(len(args_list))

    def worker(i):
        barrier.wait()
        results[i] = fn(*args_list[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(args_list))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results
