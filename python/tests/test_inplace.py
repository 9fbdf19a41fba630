"""oomguard.export records inplace=True activations, and the planner follows them (real torch)."""

import io
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import torch

import oomguard
from oomguard import inplace as inplace_names

EXE = os.environ["OOMGUARD_EXE"]


class Block(torch.nn.Module):
    """One ReLU module called twice (torch names the second call's scope "relu_1")."""

    def __init__(self, inplace):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.relu = torch.nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.relu(self.conv2(self.relu(self.conv1(x))))


def net(inplace):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.LeakyReLU(0.1, inplace=inplace),
        Block(inplace), torch.nn.Conv2d(8, 8, 1), torch.nn.LeakyReLU(0.1),  # never in place
        torch.nn.Flatten(), torch.nn.Linear(8 * 16 * 16, 10))


def saved_bytes(model, x):
    """Unique storages autograd keeps for backward, less parameters, buffers (BatchNorm's running
    statistics, which the plan counts with the weights) and the input."""
    skip = {t.data_ptr() for t in (*model.parameters(), *model.buffers())} | {x.data_ptr()}
    seen = {}

    def pack(t):
        s = t.storage()
        if s.data_ptr() not in skip:
            seen[s.data_ptr()] = s.nbytes()
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    out.sum().backward()
    return sum(seen.values())


def cli(*args):
    p = subprocess.run([EXE, *args], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr.strip()


class ExportTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_metadata_names_exactly_the_in_place_nodes(self):
        path = os.path.join(self.dir.name, "net.onnx")
        names = oomguard.export(net(True), torch.randn(2, 3, 16, 16), path)
        self.assertEqual(names, ["/2/LeakyRelu", "/3/relu/Relu", "/3/relu_1/Relu"])
        import onnx
        proto = onnx.load(path)
        entry = [e.value for e in proto.metadata_props if e.key == "oomguard.inplace"]
        self.assertEqual([json.loads(v) for v in entry], [names])
        # The out-of-place net gets an empty list: nothing ran in place, and the planner is sure of it.
        buf = io.BytesIO()
        self.assertEqual(oomguard.export(net(False), torch.randn(2, 3, 16, 16), buf), [])
        # Training mode, no folding: BatchNorm keeps its batch statistics (a training export).
        ops = [n.op_type for n in proto.graph.node]
        self.assertIn("BatchNormalization", ops)
        bn = next(n for n in proto.graph.node if n.op_type == "BatchNormalization")
        self.assertEqual(len(bn.output), 3)

    def test_metadata_names_the_registered_float_buffers(self):
        class Masked(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
                self.register_buffer("mask", torch.ones(8, 3, 3, 3))
                self.bn = torch.nn.BatchNorm2d(8)
                self.fc = torch.nn.Linear(8 * 16 * 16, 10)

            def forward(self, x):
                w = self.conv.weight * self.mask
                y = torch.nn.functional.conv2d(x, w, self.conv.bias, padding=1)
                return self.fc(self.bn(y).flatten(1))

        buf = io.BytesIO()
        oomguard.export(Masked(), torch.randn(2, 3, 16, 16), buf)
        import onnx
        proto = onnx.load_from_string(buf.getvalue())
        entry = [json.loads(e.value) for e in proto.metadata_props if e.key == "oomguard.buffers"]
        initializers = {t.name for t in proto.graph.initializer}
        self.assertEqual(len(entry), 1)
        self.assertIn("mask", entry[0])
        self.assertFalse(set(entry[0]) & {"conv.weight", "conv.bias", "fc.weight", "bn.weight"})
        self.assertTrue(set(entry[0]) <= initializers)
        # The planner then counts the mask's elements as no parameter.
        path = os.path.join(self.dir.name, "masked.onnx")
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        out = json.loads(subprocess.run([EXE, "plan", path, "--target", "cpu", "--batch", "2", "--json"],
                                        capture_output=True, text=True, check=True).stdout)
        params = sum(p.numel() for p in Masked().parameters())
        self.assertEqual(out["parameter_count"], params)

    def test_export_refuses_to_change_the_training_settings(self):
        with self.assertRaises(oomguard.Error):
            oomguard.export(net(True), torch.randn(2, 3, 16, 16), io.BytesIO(), do_constant_folding=True)

    def test_the_plan_follows_the_metadata_and_matches_torch(self):
        x = torch.randn(4, 3, 16, 16)
        measured = {flag: saved_bytes(net(flag), x) for flag in (False, True)}
        self.assertLess(measured[True], measured[False])  # the case is one where in place matters
        planned = {}
        for flag in (False, True):
            path = os.path.join(self.dir.name, "net%d.onnx" % flag)
            oomguard.export(net(flag), x, path)
            rc, j, err = cli("plan", path, "--batch", "4", "--target", "cpu", "--loss", "none", "--json")
            self.assertEqual(rc, 0, err)
            self.assertEqual(j["inplace"]["hint"], "metadata")
            self.assertFalse(j["inplace"]["unsure"])
            planned[flag] = j["bytes"]["activations_saved"]
        # What in place saves, and each figure, exactly.
        self.assertEqual(planned[False] - planned[True], measured[False] - measured[True])
        for flag in (False, True):
            self.assertEqual(planned[flag], measured[flag], flag)
        # Without the metadata (a plain export) the plan is unsure, and its range reaches the in-place plan.
        plain = os.path.join(self.dir.name, "plain.onnx")
        torch.onnx.export(net(True), (x,), plain, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["input"],
                          dynamic_axes={"input": {0: "batch"}})
        rc, j, err = cli("plan", plain, "--batch", "4", "--target", "cpu", "--loss", "none", "--json")
        self.assertEqual(rc, 0, err)
        self.assertTrue(j["inplace"]["unsure"])
        self.assertEqual(j["bytes"]["activations_saved"], planned[False])
        rc, hinted, err = cli("plan", plain, "--batch", "4", "--target", "cpu", "--loss", "none", "--json",
                              "--inplace", "/2/LeakyRelu,/3/relu/Relu,/3/relu_1/Relu")
        self.assertEqual(rc, 0, err)
        self.assertEqual(hinted["bytes"]["activations_saved"], planned[True])
        self.assertLessEqual(j["peak_allocated_range_bytes"]["low"], hinted["peak_allocated_bytes"])
        self.assertEqual(j["peak_allocated_range_bytes"]["high"], j["peak_allocated_bytes"])

    def test_plan_of_a_live_module_carries_the_hint(self):
        r = oomguard.plan(net(True), torch.randn(4, 3, 16, 16), target="cpu")
        self.assertEqual(r.inplace["hint"], "metadata")
        self.assertEqual(sorted(r.inplace["nodes"]), ["/2/LeakyRelu", "/3/relu/Relu", "/3/relu_1/Relu"])

    def test_scope_names_of_nested_and_repeated_modules(self):
        class Outer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(inplace=True))
                self.relu_1 = torch.nn.ReLU()  # a module really named like a repeated call

            def forward(self, x):
                return self.relu_1(self.body(x))

        names = ["/body/body.0/Gemm", "/body/body.1/Relu", "/relu_1/Relu", "/Relu"]
        self.assertEqual(inplace_names.inplace_node_names(Outer(), names), ["/body/body.1/Relu"])


if __name__ == "__main__":
    unittest.main()
