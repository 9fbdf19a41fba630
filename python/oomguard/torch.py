"""oomguard.torch.use_allocator: PyTorch's CUDA memory from oomguard's arena (liboomguard_torch.so).

    import oomguard.torch
    oomguard.torch.use_allocator("fraction=0.8,report=/tmp/oom.json")  # before any CUDA tensor
    ...
    print(oomguard.torch.stats())

The configuration is OOMGUARD_ALLOC_CONF's (docs/guard.md): it is checked here, so a
misspelled key is an oomguard.Error now instead of every allocation failing later.
Needs torch.cuda.memory.CUDAPluggableAllocator (PyTorch 2.0 or newer) and a CUDA device.
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, Optional

from . import _oomguard
from ._commands import Error

_PLUGIN_NAME = "liboomguard_torch.so"
_loaded: Optional[ctypes.CDLL] = None


def plugin_path() -> str:
    """The plug-in: $OOMGUARD_TORCH_PLUGIN, else the copy installed beside this package."""
    path = os.environ.get("OOMGUARD_TORCH_PLUGIN") or os.path.join(os.path.dirname(__file__), _PLUGIN_NAME)
    if not os.path.isfile(path):
        raise Error("%s: no such file (build oomguard, or set OOMGUARD_TORCH_PLUGIN)" % path)
    return path


def check_conf(conf: str) -> None:
    """Raises Error with the plug-in's reason when `conf` is not a valid OOMGUARD_ALLOC_CONF."""
    error = _oomguard.check_alloc_conf(conf)
    if error:
        raise Error(error)


def use_allocator(conf: str = "") -> None:
    """Installs oomguard's arena as PyTorch's CUDA allocator with settings `conf`
    (OOMGUARD_ALLOC_CONF's format; "" for the defaults). Call it before the first CUDA
    tensor: PyTorch cannot change its allocator once it has allocated."""
    global _loaded
    check_conf(conf)
    import torch

    memory = getattr(torch.cuda, "memory", None)
    if memory is None or not hasattr(memory, "CUDAPluggableAllocator"):
        raise Error("PyTorch %s has no torch.cuda.memory.CUDAPluggableAllocator (it came with PyTorch 2.0); "
                    "oomguard's allocator cannot be installed" % torch.__version__)
    if not torch.cuda.is_available():
        raise Error("PyTorch %s sees no CUDA device (torch.cuda.is_available() is False); oomguard's "
                    "allocator serves CUDA memory only" % torch.__version__)
    path = plugin_path()
    os.environ["OOMGUARD_ALLOC_CONF"] = conf
    try:
        allocator = memory.CUDAPluggableAllocator(path, "oomguard_malloc", "oomguard_free")
        memory.change_current_allocator(allocator)
    except RuntimeError as e:
        raise Error("cannot install oomguard's allocator: %s" % str(e).strip().splitlines()[0]) from None
    _loaded = ctypes.CDLL(path)


def stats() -> Dict[str, Any]:
    """The allocator's statistics (per device: limit, in use, peak, growth; last_error)."""
    if _loaded is None:
        raise Error("oomguard's allocator is not installed (call oomguard.torch.use_allocator first)")
    fn = _loaded.oomguard_stats_json
    fn.restype = ctypes.c_size_t
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    size = fn(None, 0) + 1
    buf = ctypes.create_string_buffer(size)
    fn(buf, size)
    return json.loads(buf.value.decode())
