"""plan, fit, split, explain, models, gpus: the CLI's subcommands run in-process.

Each call turns keyword arguments into the subcommand's options (optimizer="adam" ->
--optimizer adam, optimizer_impl="foreach" -> --optimizer-impl foreach, a True flag ->
--flag, a list -> the option repeated) and runs the same C++ code as the oomguard binary
with --json, so the result equals `oomguard plan ... --json`.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional

from . import _oomguard
from ._export import model_argument


class Error(Exception):
    """Bad input: the message is the CLI's one-line reason (what exits 2 there)."""


class Result:
    """A command's JSON object: fields as attributes (r.fits) and as items (r["fits"]).

    exit_status is what the CLI would exit with (0, or 1 when the answer is no)."""

    def __init__(self, data: Dict[str, Any], exit_status: int, rerun: Optional[Callable[[List[str]], Any]]):
        self._data = data
        self.exit_status = exit_status
        self._rerun = rerun

    def __getattr__(self, name: str) -> Any:
        data = self.__dict__.get("_data")
        if data is not None and name in data:
            return data[name]
        raise AttributeError(name)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def keys(self):
        return self._data.keys()

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object (the same dict, not a copy)."""
        return self._data

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self._data, indent=indent)

    def to_html(self, path: str) -> str:
        """Writes the CLI's self-contained HTML report (plan and fit) to `path`."""
        if self._rerun is None:
            raise Error("this result has no HTML report (plan and fit have one)")
        self._rerun(["--html", os.fspath(path)])
        return os.fspath(path)

    def __repr__(self) -> str:
        keys = [k for k in ("model", "batch", "max_batch", "fits", "peak_allocated_bytes", "required_bytes",
                            "possible", "findings") if k in self._data]
        inner = ", ".join("%s=%r" % (k, self._data[k] if k != "findings" else len(self._data[k])) for k in keys)
        return "oomguard.Result(%s)" % inner


def _run(command: str, args: List[str], stdin_text: Optional[str] = None):
    rc, out, err = _oomguard.run(command, args, stdin_text)
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace").strip()
    if rc not in (0, 1):
        raise Error(err.splitlines()[-1] if err else "oomguard %s failed (exit %d)" % (command, rc))
    return rc, out


def _options(kwargs: Dict[str, Any]) -> List[str]:
    args: List[str] = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif key == "input" and isinstance(value, dict):
            for name, dims in value.items():
                args += [flag, "%s=%s" % (name, "x".join(str(int(d)) for d in dims))]
        elif key == "gpu_memory" and isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def _planning(command: str, model: Any, example_inputs: Any, kwargs: Dict[str, Any], with_html: bool) -> Result:
    takes_batch = command == "plan"
    with model_argument(model, example_inputs, kwargs, takes_batch) as (path, display_name, options):
        args = [path] + _options(options) + ["--json"]
        rc, out = _run(command, args)
        data = json.loads(out)
        if "model" in data and display_name is not None:
            data["model"] = display_name
    rerun = None
    if with_html:
        def rerun(extra: List[str]) -> None:
            with model_argument(model, example_inputs, kwargs, takes_batch) as (p, _, o):
                _run(command, [p] + _options(o) + extra)
    return Result(data, rc, rerun)


def plan(model: Any, example_inputs: Any = None, **options: Any) -> Result:
    """Predicts one training step's memory (oomguard plan).

    model: a torch.nn.Module (exported in training mode with example_inputs, weights never
    written anywhere), an .onnx path or a zoo name (oomguard.models()).
    example_inputs: a tensor or tuple of tensors for a Module; its first dimension is the
    batch unless batch= is given.
    options: the CLI's plan options: batch, optimizer (a name or a torch.optim.Optimizer),
    optimizer_impl, precision, loss, target, gpu, memory, fraction, input={name: dims}.
    """
    return _planning("plan", model, example_inputs, options, with_html=True)


def fit(model: Any, example_inputs: Any = None, **options: Any) -> Result:
    """The largest batch whose step fits (oomguard fit): .max_batch, .fits_budget, the plan
    at that batch and advice. Options as plan() plus reserve, margin, max_batch."""
    return _planning("fit", model, example_inputs, options, with_html=True)


def split(model: Any, example_inputs: Any = None, **options: Any) -> Result:
    """A global batch split over GPUs (oomguard split): global_batch=N or maximize=True;
    gpus=K with gpu= or memory=, or gpu_memory=[...]; strategy, reserve, margin, bucket_mib."""
    return _planning("split", model, example_inputs, options, with_html=False)


def explain(text_or_path: Any, here: bool = False) -> Result:
    """Reads an error log (a path, or the log's text) and returns the findings
    (oomguard explain --json): .findings, each with what ran out, why and what to do."""
    args = ["--json"] + (["--here"] if here else [])
    if isinstance(text_or_path, os.PathLike) or (
            isinstance(text_or_path, str) and "\n" not in text_or_path and os.path.isfile(text_or_path)):
        _, out = _run("explain", [os.fspath(text_or_path)] + args)
    else:
        if isinstance(text_or_path, bytes):
            text_or_path = text_or_path.decode("utf-8", "replace")
        if not isinstance(text_or_path, str):
            raise Error("explain takes a log's text or a path, got %s" % type(text_or_path).__name__)
        _, out = _run("explain", ["-"] + args, stdin_text=text_or_path)
    return Result(json.loads(out), 0, None)


def models() -> List[Dict[str, Any]]:
    """The built-in model zoo (oomguard models --json)."""
    return json.loads(_run("models", ["--json"])[1])


def gpus() -> List[Dict[str, Any]]:
    """The built-in GPU catalog (oomguard gpus --json)."""
    return json.loads(_run("gpus", ["--json"])[1])
