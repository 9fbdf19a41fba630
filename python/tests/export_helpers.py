"""What the tests of oomguard.export's metadata share: the exported file with its metadata entries, and the
planner's JSON plan of an exported file."""
import io
import json
import os
import subprocess

import oomguard

EXE = os.environ["OOMGUARD_EXE"]


def metadata(model, x):
    """(the bytes oomguard.export writes for `model` and example inputs `x`, its metadata_props as key -> JSON)."""
    buf = io.BytesIO()
    oomguard.export(model, x, buf)
    import onnx
    proto = onnx.load_from_string(buf.getvalue())
    entries = {e.key: json.loads(e.value) for e in proto.metadata_props}
    return buf.getvalue(), entries


def plan_json(test, graph, directory, *args):
    """`oomguard plan` of the ONNX bytes `graph` (written to `directory`) with `args`, --target cpu and --json,
    parsed; `test` (a TestCase) fails when the planner does."""
    path = os.path.join(directory, "model.onnx")
    with open(path, "wb") as f:
        f.write(graph)
    p = subprocess.run([EXE, "plan", path, "--target", "cpu", *args, "--json"], capture_output=True, text=True)
    test.assertEqual(p.returncode, 0, p.stderr)
    return json.loads(p.stdout)
