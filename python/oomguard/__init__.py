"""oomguard from Python: plan a live PyTorch model's training-step memory, find the
largest batch, split a batch over GPUs, read an error log, stream JPEGs under a byte
budget, and install oomguard's CUDA allocator in PyTorch.

    import oomguard
    r = oomguard.plan(model, torch.randn(32, 3, 224, 224), optimizer="adam", gpu="rtx-3090")
    print(r.fits, r.peak_allocated_bytes, r.advice[0]["description"])

Results carry the fields of the CLI's JSON (docs/DESIGN.md), as attributes and as
r["key"]; errors raise oomguard.Error with the CLI's one-line reason.
"""

from ._commands import Error, Result, explain, fit, gpus, models, plan, split
from ._export import export
from . import feed

__all__ = ["Error", "Result", "plan", "fit", "split", "explain", "models", "gpus", "feed", "export"]
__version__ = "0.1.0"
