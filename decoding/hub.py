"""A model from the Hugging Face hub: from the local cache when it is there, else fetched, with a quick look first
whether the hub can be reached at all (transformers' own retries take most of a minute to give up)."""

import os
import socket

import torch


def load_pretrained(path: str, dtype: torch.dtype, **kwargs):
    """(model, tokenizer) from a directory or a hub id, never running code from the repository."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, trust_remote_code=False, **kwargs)
    return model, tokenizer


def fetch(model_id: str, dtype: torch.dtype):
    """(model, tokenizer) for a hub id; an OSError that says why when it is neither cached nor reachable."""
    try:  # already downloaded?
        return load_pretrained(model_id, dtype, local_files_only=True)
    except OSError:
        pass
    if not reachable():
        raise OSError(
            f"could not fetch {model_id!r}: the Hugging Face hub is not reachable from this machine "
            f"and the model is not in the local cache."
        )
    try:
        return load_pretrained(model_id, dtype)
    except OSError as err:
        raise OSError(f"could not fetch {model_id!r} from the Hugging Face hub: {err}.") from None


def reachable(timeout: float = 3.0) -> bool:
    """Whether huggingface.co answers on 443 (False at once when HF_HUB_OFFLINE is set)."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    try:
        socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
        return True
    except OSError:
        return False
