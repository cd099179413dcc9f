"""A stand-in for Hugging Face's `spaces` package, for tests only: `spaces.GPU` runs each call as ZeroGPU does.

On a ZeroGPU Space (spaces 0.51.3, `zero/wrappers.py`, `regular_function_wrapper`) every call of a `spaces.GPU`
function runs in a forked worker process, and its arguments and its result are pickled across the boundary. This
stand-in does the same, in the harshest form: a fresh fork for every call, so nothing a call leaves in the worker's
memory is there for the next one. It also refuses what must never cross (a tensor, a model, a tokenizer, a KV cache,
a gradio component, a session's run): the real runtime would hang on a CUDA tensor, and a session's state written
in a worker is lost to the server.

A test puts this folder first on PYTHONPATH and sets SPACES_ZERO_GPU=true. With ZEROGPU_STANDIN_LOG set to a path,
each call appends a JSON line there as its worker starts (the worker's pid) and one as it ends: the bytes that
crossed each way, and what went wrong, if anything.
"""

import dataclasses
import json
import multiprocessing
import os
import pickle
import traceback
from functools import wraps

_FORK = multiprocessing.get_context("fork")
# types that must never cross, by (module prefix, class name): checked by name, so this module imports none of them
_REFUSED = (
    ("torch", "Tensor"),
    ("torch", "Module"),
    ("transformers", "PreTrainedTokenizerBase"),
    ("transformers", "Cache"),
    ("gradio", "Block"),
    ("decoding.loop", "Run"),
    ("decoding.models", "LoadedModel"),
)


class NotPlainData(TypeError):
    """Something other than plain data was about to cross into or out of a GPU call."""


def GPU(task=None, *, duration=None, size=None, **_):  # noqa: N802 (the real decorator's name)
    """`@spaces.GPU`, `@spaces.GPU(duration=60)` or `spaces.GPU(fn, duration=...)`, as the real one is called."""
    if task is None:
        return lambda fn: GPU(fn, duration=duration, size=size)

    @wraps(task)
    def call(*args, **kwargs):
        if callable(duration):  # the real runtime calls a dynamic duration with the call's arguments
            seconds = duration(*args, **kwargs)
            assert isinstance(seconds, int | float) and seconds > 0, f"duration gave {seconds!r}"
        sent = _pickled((args, kwargs), f"the arguments of {task.__qualname__}")
        receive, send = _FORK.Pipe(duplex=False)
        worker = _FORK.Process(target=_work, args=(task, sent, send), daemon=True)
        worker.start()
        send.close()
        _log({"fn": task.__qualname__, "started": worker.pid})
        try:
            answer = receive.recv_bytes()
        except EOFError:
            worker.join()
            _log(_ended(task, worker, sent, b"", f"the worker died with exit code {worker.exitcode}"))
            raise RuntimeError(f"ZeroGPU worker error: the worker exited with code {worker.exitcode}") from None
        worker.join()
        status, value = pickle.loads(answer)
        _log(_ended(task, worker, sent, answer, None if status == "ok" else str(value)))
        if status == "refused":
            raise NotPlainData(value)
        if status == "raised":
            raise value
        return value

    call.zerogpu = None
    return call


def _work(task, sent: bytes, send) -> None:
    """In the worker: unpickle, run, check and pickle the result (an exception crosses back as itself)."""
    try:
        args, kwargs = pickle.loads(sent)
        result = task(*args, **kwargs)
        answer = pickle.dumps(("ok", result))
        _check_plain(result, f"the result of {task.__qualname__}")
    except NotPlainData as err:
        answer = pickle.dumps(("refused", str(err)))
    except Exception as err:  # the real runtime sends the exception back, and the server raises it
        traceback.print_exc()
        answer = pickle.dumps(("raised", err))
    send.send_bytes(answer)
    send.close()


def _pickled(value, what: str) -> bytes:
    _check_plain(value, what)
    return pickle.dumps(value)


def _check_plain(value, what: str) -> None:
    """Raise NotPlainData if `value` holds, at any depth, an object of a refused type."""
    seen: set[int] = set()
    stack = [(value, what)]
    while stack:
        obj, path = stack.pop()
        if id(obj) in seen or isinstance(obj, str | bytes | int | float | bool | type(None)):
            continue
        seen.add(id(obj))
        for cls in type(obj).__mro__:
            if (cls.__module__.split(".")[0], cls.__name__) in _REFUSED or (cls.__module__, cls.__name__) in _REFUSED:
                raise NotPlainData(f"{path} holds a {cls.__module__}.{cls.__name__}: only plain data may cross")
        if isinstance(obj, dict):
            stack += [(v, f"{path}[{k!r}]") for k, v in obj.items()] + [(k, f"{path} key") for k in obj]
        elif isinstance(obj, list | tuple | set | frozenset):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            stack += [(getattr(obj, f.name), f"{path}.{f.name}") for f in dataclasses.fields(obj)]
        elif hasattr(obj, "__dict__") and not callable(obj):
            stack += [(v, f"{path}.{k}") for k, v in vars(obj).items()]


def _ended(task, worker, sent: bytes, answer: bytes, problem: str | None) -> dict:
    sizes = {"sent": len(sent), "received": len(answer)}
    return {"fn": task.__qualname__, "ended": worker.pid, **sizes, "problem": problem}


def _log(line: dict) -> None:
    path = os.environ.get("ZEROGPU_STANDIN_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({**line, "server": os.getpid()}) + "\n")
