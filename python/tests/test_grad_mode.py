"""oomguard.export and oomguard.plan(module) find the modules run under torch.no_grad() or whose result is
.detach()ed (one eager forward, python/oomguard/grad_mode.py), name their nodes in the model's metadata
("oomguard.no_grad", "oomguard.detached"), and the planner keeps nothing of them for backward."""
import io
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import torch
import torch.nn.functional as F

import oomguard
from oomguard import grad_mode

EXE = os.environ["OOMGUARD_EXE"]


class Distill(torch.nn.Module):
    """A teacher .detach()ed, a key encoder under no_grad, a shared layer called with and without grad."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.teacher = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.BatchNorm1d(64), torch.nn.ReLU(),
                                           torch.nn.Linear(64, 8))
        self.key = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
        self.shared = torch.nn.Linear(16, 8)
        self.student = torch.nn.Linear(16, 8)

    def forward(self, x):
        s = self.student(x)
        if self.mode == "plain":
            return s + self.teacher(x) + self.key(x)
        t = self.teacher(x).detach()
        with torch.no_grad():
            k = self.key(x)
            u = self.shared(x * 2)
        return s + F.softmax(t, dim=1) + k + u + self.shared(x)


def metadata(model, x):
    buf = io.BytesIO()
    oomguard.export(model, x, buf)
    import onnx
    proto = onnx.load_from_string(buf.getvalue())
    entries = {e.key: json.loads(e.value) for e in proto.metadata_props}
    return buf.getvalue(), entries


class GradModeTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_calls_are_classified_from_one_forward(self):
        model = Distill("hints")
        modes = grad_mode.call_modes(model, (torch.randn(4, 16),))
        self.assertEqual(modes["teacher"], ["detached"])
        self.assertEqual(modes["teacher.0"], ["detached"])  # everything inside feeds only the detached result
        self.assertEqual(modes["key"], ["no_grad"])
        self.assertEqual(modes["shared"], ["no_grad", "recorded"])
        self.assertEqual(modes["student"], ["recorded"])

    def test_the_forward_leaves_the_model_as_it_was(self):
        model = Distill("hints")
        before = {k: v.clone() for k, v in model.state_dict().items()}
        x = torch.randn(4, 16)
        rng = torch.get_rng_state()
        model.eval()
        grad_mode.call_modes(model, (x,))
        self.assertFalse(model.training)
        self.assertTrue(torch.equal(rng, torch.get_rng_state()))
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, before[k]), k)  # BatchNorm's running statistics included
        self.assertTrue(all(p.grad is None for p in model.parameters()))

    def test_export_names_the_nodes_and_the_plan_follows(self):
        x = torch.randn(4, 16)
        graph, entries = metadata(Distill("hints"), x)
        self.assertEqual(entries["oomguard.detached"], ["/teacher/teacher.0/Gemm", "/teacher/teacher.1/BatchNormalization",
                                                        "/teacher/teacher.2/Relu", "/teacher/teacher.3/Gemm"])
        # key's nodes, the first (no_grad) call of shared (its second call, "shared_1", is recorded), and the
        # forward's own x * 2 under no_grad (found by the second export's scope).
        self.assertEqual(entries["oomguard.no_grad"], ["/Mul", "/key/key.0/Gemm", "/key/key.1/Relu",
                                                       "/key/key.2/Gemm", "/shared/Gemm"])
        _, none = metadata(Distill("plain"), x)
        self.assertEqual((none["oomguard.no_grad"], none["oomguard.detached"]), ([], []))
        path = os.path.join(self.dir.name, "distill.onnx")
        with open(path, "wb") as f:
            f.write(graph)
        p = subprocess.run([EXE, "plan", path, "--target", "cpu", "--batch", "64", "--optimizer", "adam", "--json"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        plan = json.loads(p.stdout)
        self.assertEqual(plan["grad_mode"]["hint"], "metadata")
        self.assertEqual(plan["grad_mode"]["detached_nodes"], 4)
        self.assertEqual(plan["grad_mode"]["no_grad_nodes"], 5)
        # teacher's and key's weights get no gradient; shared's does (its second call is recorded).
        frozen = sum(p.numel() for m in (Distill("hints").teacher, Distill("hints").key) for p in m.parameters())
        self.assertEqual(plan["grad_mode"]["no_grad_parameters"], frozen)
        # The Python API plans the module the same way.
        api = oomguard.plan(Distill("hints"), example_inputs=torch.randn(64, 16), target="cpu", optimizer="adam")
        self.assertEqual(api["grad_mode"], plan["grad_mode"])

    def test_code_under_no_grad_in_a_forward_of_its_own_is_found_by_a_second_export(self):
        class Codes(torch.nn.Module):  # SwAV-style targets computed in the root's forward, no module of their own
            def __init__(self):
                super().__init__()
                self.enc = torch.nn.Linear(16, 32)
                self.prototypes = torch.nn.Parameter(torch.randn(32, 512))

            def forward(self, x):
                h = self.enc(x)
                with torch.no_grad():
                    q = torch.softmax(h @ self.prototypes, dim=1)
                    q = q / q.sum(dim=1, keepdim=True)
                return (q * torch.log_softmax(h @ self.prototypes, dim=1)).sum(dim=1, keepdim=True)

        x = torch.randn(4, 16)
        self.assertTrue(grad_mode.ran_without_grad(Codes(), (x,)))
        self.assertFalse(grad_mode.ran_without_grad(Distill("plain"), (x,)))
        graph, entries = metadata(Codes(), x)
        # not MatMul_1 / LogSoftmax, which run with grad; the names are the plain export's
        self.assertEqual(entries["oomguard.no_grad"], ["/Div", "/MatMul", "/ReduceSum", "/Softmax"])
        import onnx
        self.assertEqual([n.name for n in onnx.load_from_string(graph).graph.node if n.op_type != "Constant"],
                         ["/enc/Gemm", "/MatMul", "/Softmax", "/ReduceSum", "/Div", "/MatMul_1", "/LogSoftmax",
                          "/Mul", "/ReduceSum_1"])
        from oomguard._export import export_onnx

        def saved(data):
            path = os.path.join(self.dir.name, "codes.onnx")
            with open(path, "wb") as f:
                f.write(data)
            p = subprocess.run([EXE, "plan", path, "--target", "cpu", "--batch", "64", "--json"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            return json.loads(p.stdout)["bytes"]["activations_saved"]
        # The no_grad nodes keep nothing: at least the [64, 512] softmax output (which Softmax and Div keep when
        # they run with grad) is not saved.
        self.assertGreaterEqual(saved(export_onnx(Codes(), x)) - saved(graph), 64 * 512 * 4)

    def test_a_second_export_that_differs_names_nothing(self):
        import onnx
        from onnx import helper
        a = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="/Relu")], "a", [], [])
        b = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"], name="/oomguard_no_grad/Sigmoid")], "b",
                              [], [])
        self.assertIsNone(grad_mode.scoped_no_grad_nodes(a, b))
        c = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="/enc/oomguard_no_grad_1/Relu")], "c",
                              [], [])
        self.assertEqual(grad_mode.scoped_no_grad_nodes(a, c), ["/Relu"])
        del onnx

    def test_the_forward_runs_on_two_samples_else_on_all(self):
        class FixedBatch(torch.nn.Module):  # reshapes to the batch it was written for: two samples fail
            def __init__(self):
                super().__init__()
                self.teacher = torch.nn.Linear(16, 8)
                self.student = torch.nn.Linear(16, 8)

            def forward(self, x):
                x = x.view(4, 16)
                return self.student(x) + self.teacher(x).detach()

        model = FixedBatch()
        seen = []
        model.register_forward_pre_hook(lambda m, args: seen.append(args[0].shape[0]))
        _, entries = metadata(model, torch.randn(4, 16))
        self.assertEqual(entries["oomguard.detached"], ["/teacher/Gemm"])
        self.assertIn(2, seen)  # the cheap forward was tried first
        small = Distill("hints")
        sizes = []
        small.register_forward_pre_hook(lambda m, args: sizes.append(args[0].shape[0]))
        grad_mode.add_grad_mode_metadata(metadata(Distill("hints"), torch.randn(64, 16))[0], small,
                                         (torch.randn(64, 16),))
        self.assertEqual(sizes, [2])


if __name__ == "__main__":
    unittest.main()
