"""oomguard.export and oomguard.plan(module) find the values a module's forward still binds to a name when it
returns (one eager forward, python/oomguard/frame_locals.py), name them in the model's metadata
("oomguard.locals"), and the planner holds them until that forward returns instead of listing them as a risk."""
import json
import sys
import tempfile
import unittest
import warnings

import torch
import torch.nn.functional as F

import oomguard
from oomguard import frame_locals
from export_helpers import metadata as exported, plan_json


class Attention(torch.nn.Module):
    """Scores and weights bound to names (held until forward returns); the weighted sum a temporary."""

    def __init__(self, d=32):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.o = torch.nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # views of qkv's result, which they hold
        s = q @ k.transpose(-1, -2) / 8.0
        a = s.softmax(dim=-1)
        return self.o(a @ v)


class Net(torch.nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.embed = torch.nn.Linear(16, 32)
        self.attn = Attention()
        self.head = torch.nn.Linear(32, classes)

    def forward(self, x):
        h = self.embed(x)
        y = self.attn(h) + h
        return self.head(y.mean(dim=1))


class Gelu(torch.nn.Module):
    """F.gelu exports Div, Erf, Add, Mul, Mul, which no recorded call accounts for: the Mul held is not named,
    the Softmax is."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        g = F.gelu(self.lin(x))
        m = g * 2
        p = m.softmax(dim=-1)
        return self.lin((p * x)).sum(dim=1)


def without_locals(graph):
    import onnx
    proto = onnx.load_from_string(graph)
    for entry in list(proto.metadata_props):
        if entry.key == frame_locals.METADATA_KEY:
            proto.metadata_props.remove(entry)
    return proto.SerializeToString()


class FrameLocalsTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def plan(self, graph, batch):
        return plan_json(self, graph, self.dir.name, "--batch", str(batch), "--optimizer", "sgd")

    def test_the_names_each_frame_holds_are_named(self):
        _, entries = exported(Net(), torch.randn(4, 10, 16))
        # attn's s (the Div after the MatMul; chunk's shape arithmetic is not counted), a, and qkv's result, which
        # q, k and v view (chunk's views of linear's view of a 2-D product); the root's h (embed's result) and y.
        # Not a @ v (a temporary), x (an argument) or the output.
        self.assertEqual(entries["oomguard.locals"], ["/Add_output_0", "/attn/Div_1_output_0",
                                                      "/attn/Softmax_output_0", "/attn/qkv/Add_output_0",
                                                      "/embed/Add_output_0"])

    def test_a_scope_whose_counts_differ_names_nothing_of_that_type(self):
        _, entries = exported(Gelu(), torch.randn(4, 10, 16))
        self.assertEqual(entries["oomguard.locals"], ["/Softmax_output_0"])

    def test_the_forward_leaves_the_model_and_the_profiler_as_they_were(self):
        model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.BatchNorm1d(10), Net())
        before = {k: v.clone() for k, v in model.state_dict().items()}
        x = torch.randn(4, 10, 16)
        rng = torch.get_rng_state()

        def profiler(frame, event, arg):
            return None

        sys.setprofile(profiler)
        try:
            model.eval()
            found = frame_locals.held_calls(model, (x,))
            self.assertIs(sys.getprofile(), profiler)
        finally:
            sys.setprofile(None)
        self.assertIsNotNone(found)
        self.assertFalse(model.training)
        self.assertTrue(torch.equal(rng, torch.get_rng_state()))
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, before[k]), k)
        self.assertTrue(all(p.grad is None for p in model.parameters()))

    def test_the_plan_holds_them_until_forward_returns(self):
        graph, entries = exported(Net(), torch.randn(64, 10, 16))
        held = self.plan(graph, 64)
        plain = self.plan(without_locals(graph), 64)
        self.assertEqual(held["locals"], {"hint": "metadata", "held": len(entries["oomguard.locals"])})
        self.assertEqual(plain["locals"], {"hint": "none", "held": 0})
        self.assertGreaterEqual(held["peak_allocated_bytes"], plain["peak_allocated_bytes"])
        risk = {r["what"]: r["bytes"] for r in plain["risks"]}.get("locals_held_until_forward_returns", 0)
        held_risk = {r["what"]: r["bytes"] for r in held["risks"]}.get("locals_held_until_forward_returns", 0)
        self.assertLessEqual(held_risk, risk)
        # The plan with them held stays within what the risk said it might reach.
        self.assertLessEqual(held["peak_allocated_bytes"], plain["peak_allocated_bytes"] + risk)
        # The Python API plans the module the same way.
        api = oomguard.plan(Net(), example_inputs=torch.randn(64, 10, 16), target="cpu", optimizer="sgd")
        self.assertEqual(api["locals"], held["locals"])
        self.assertEqual(api["peak_allocated_bytes"], held["peak_allocated_bytes"])

    def test_names_that_are_no_value_are_a_warning(self):
        import onnx
        graph, _ = exported(Net(), torch.randn(4, 10, 16))
        proto = onnx.load_from_string(graph)
        for entry in proto.metadata_props:
            if entry.key == frame_locals.METADATA_KEY:
                entry.value = json.dumps(["/attn/Softmax_output_0", "no_such_value"])
        plan = self.plan(proto.SerializeToString(), 4)
        self.assertEqual(plan["locals"]["held"], 1)
        self.assertTrue(any("oomguard.locals" in w and "1 value" in w for w in plan["warnings"]), plan["warnings"])


if __name__ == "__main__":
    unittest.main()
