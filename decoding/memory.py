"""Giving the machine back the memory a measurement freed.

A measurement builds large tensors for a while (the quantization tab's rounded copies of the model, ~540 MB each;
the regime map's larger shapes) and frees them when it ends. glibc's malloc keeps much of what was freed for reuse:
tensors of a layer's size (a few MB) fall under its adaptive mmap threshold once a larger block was freed, so they
come from its heaps, and a heap gives back only what lies free at its top. The server's resident memory stayed where
the measurement took it: on the bundled model, the quantization tab's speed and quality measurements took a server
from 1.5 to 4.8 GB, and `malloc_trim(0)` brought it back to 2.6 GB (docs/measurements/space.md). One class's server
runs every lesson's measurements, so what one kept, the next one's free memory (the regime map reads it) lacked.

`give_back()` asks glibc to return every free page of its heaps (`malloc_trim(0)`); where the C library has no
such call (musl, macOS) it does nothing.
"""

import ctypes
import ctypes.util


def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def can_give_back() -> bool:
    """Whether this C library can return freed heap memory on request (glibc can)."""
    return _TRIM is not None


def give_back() -> bool:
    """Return the free pages of the C library's heaps to the machine; True if some were returned."""
    return _TRIM is not None and bool(_TRIM(0))  # glibc locks each heap while it trims it
