"""oomguard.feed.Loader: JPEG batches under one hard host-memory budget, for PyTorch.

    loader = oomguard.feed.Loader("photos/", budget="1GiB", batch=64, size=(224, 224),
                                  rank=rank, world_size=world)
    for epoch in range(10):
        loader.set_epoch(epoch)
        for images in loader:                      # uint8 numpy array, N x H x W x 3
            x = torch.from_numpy(images)           # shares the buffer; no copy
            ...

Each array views the batch's buffer in the pipeline (no copy). The batch's bytes stay
counted in the budget until the array (and every tensor made from it) is released; hold
too many and the next batch fails with an error that says so rather than hanging.
Every image of the rank's shard comes exactly once per epoch; the shards of the ranks are
disjoint and together hold every image (the order is shuffled with (seed, epoch), the
same on every rank, like torch.utils.data.DistributedSampler).
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _oomguard
from ._commands import Error, _run

__all__ = ["Loader"]

_MASK64 = (1 << 64) - 1


def _epoch_seed(seed: int, epoch: int) -> int:
    """One seed per (seed, epoch): splitmix64 of their combination."""
    z = (seed + (epoch + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _bytes(value: Union[int, str]) -> int:
    if isinstance(value, bool):
        raise Error("budget must be a byte count like 512MiB or an integer")
    if isinstance(value, int):
        if value <= 0:
            raise Error("budget must be positive, got %d" % value)
        return value
    try:
        return _oomguard.parse_bytes(str(value))  # the CLI's parser: "512MiB", "1.5GiB", "24GB"
    except ValueError as e:
        raise Error("budget: %s" % e) from None


def _size(value: Any) -> Optional[Tuple[int, int]]:
    if value is None:
        return None
    if isinstance(value, int):
        return (value, value)
    if isinstance(value, str):
        parts = value.lower().split("x")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return (int(parts[0]), int(parts[1]))
        raise Error("size must be W x H like (224, 224) or '224x224', got %r" % value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (value[0], value[1])
    raise Error("size must be W x H like (224, 224) or '224x224', got %r" % (value,))


class Loader:
    """An iterable over uint8 NHWC batches (numpy arrays) of the JPEG images in
    `dir_or_list` (a directory, searched recursively, a list file with one path per line,
    or a Python list of paths).

    budget: bytes the pipeline and the batches you hold may use together ("1GiB" or int).
    batch: images per batch (the last batch of an epoch may be smaller).
    workers: decoder threads (0: one per core). scale: DCT scaling "1", "1/2", "1/4", "1/8".
    size: (W, H) after scaling: centre crop or zero pad; needed for NHWC batches unless all
    images have one size. shuffle, seed: the order (per epoch, see set_epoch).
    rank, world_size: this process's shard. epochs: epochs per iteration of the loader.
    skip_errors: skip an undecodable image (counted in stats()) instead of raising.
    readahead: batches decoded ahead of your loop (2 keeps the workers busy; more only hold
    memory); 0: as many as the budget holds.
    return_indices: yield (array, indices into files()) instead of the array alone.
    """

    def __init__(self, dir_or_list: Union[str, os.PathLike, Sequence[str]], budget: Union[int, str] = "256MiB",
                 batch: int = 32, workers: int = 0, scale: str = "1", size: Any = None, shuffle: bool = True,
                 seed: int = 0, rank: int = 0, world_size: int = 1, epochs: int = 1, skip_errors: bool = True,
                 return_indices: bool = False, readahead: int = 2):
        if isinstance(dir_or_list, os.PathLike):
            dir_or_list = os.fspath(dir_or_list)
        if not isinstance(dir_or_list, str):
            dir_or_list = [os.fspath(p) for p in dir_or_list]
        for name, value, low in (("batch", batch, 1), ("workers", workers, 0), ("rank", rank, 0),
                                 ("world_size", world_size, 1), ("epochs", epochs, 1), ("seed", seed, 0),
                                 ("readahead", readahead, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise Error("%s must be an integer >= %d, got %r" % (name, low, value))
        if rank >= world_size:
            raise Error("rank %d must be less than world_size %d" % (rank, world_size))
        self._source = dir_or_list
        self._options = dict(budget=_bytes(budget), batch=batch, workers=workers, scale=str(scale),
                             size=_size(size), shuffle=bool(shuffle), rank=rank, world_size=world_size,
                             epochs=epochs, skip_errors=bool(skip_errors), readahead=readahead)
        self._seed = seed
        self._epoch = 0
        self._return_indices = return_indices
        self._feed = self._start()  # checks the options and lists the images now

    def _start(self):
        try:
            return _oomguard.Feed(self._source, seed=_epoch_seed(self._seed, self._epoch), **self._options)
        except ValueError as e:
            raise Error(str(e)) from None

    def set_epoch(self, epoch: int) -> None:
        """Chooses the shuffled order of the next iteration (the same on every rank)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise Error("epoch must be an integer >= 0, got %r" % (epoch,))
        if epoch != self._epoch:
            self._epoch = epoch
            if self._feed is not None:
                self._feed.close()
            self._feed = None

    def files(self) -> List[str]:
        """Every image of the data set (all ranks), in the order indices refer to."""
        return self._current().files()

    def _current(self):
        if self._feed is None:
            self._feed = self._start()
        return self._feed

    def __len__(self) -> int:
        """Batches per iteration: epochs x ceil(this rank's images / batch)."""
        n = len(self.files())
        o = self._options
        shard = (n - o["rank"] + o["world_size"] - 1) // o["world_size"]
        return o["epochs"] * math.ceil(shard / o["batch"])

    def __iter__(self) -> Iterator[Any]:
        feed = self._current()
        self._feed = None  # the next iteration starts afresh
        self._last = feed
        while True:
            try:
                item = feed.next()
            except RuntimeError as e:
                raise Error(str(e)) from None
            if item is None:
                stats = feed.stats()
                if stats["images"] == 0 and stats["skipped"] > 0:  # as `oomguard feed` says it
                    kinds = ", ".join("%s %d" % kv for kv in sorted(stats["skipped_by_kind"].items()))
                    raise Error("no image could be read (%d skipped: %s)" % (stats["skipped"], kinds))
                return
            array, indices = item
            yield (array, indices) if self._return_indices else array

    def stats(self) -> Dict[str, Any]:
        """The last iteration's pipeline statistics: images, batches, skipped, budget_bytes,
        peak_budget_bytes, budget_in_use_bytes (bytes of batches still held, and in flight)."""
        feed = getattr(self, "_last", None) or self._current()
        return feed.stats()
