"""oomguard.export and oomguard.plan(module) find the modules run under torch.no_grad() or whose result is
.detach()ed (one eager forward, python/oomguard/grad_mode.py), and code under no_grad or values .detach()ed in a
forward of their own (a second export that marks them), name their nodes in the model's metadata
("oomguard.no_grad", "oomguard.detached"), and the planner keeps nothing of them for backward."""
import tempfile
import unittest
import warnings

import torch
import torch.nn.functional as F

import oomguard
from oomguard import grad_mode
from export_helpers import metadata, plan_json


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


class Target(torch.nn.Module):
    """A target computed in the forward and .detach()ed, no module of its own (a BYOL-style stop-gradient on an
    expression): its MatMuls and GELU are recorded, and their graph dies with the values."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(16, 32)
        self.w1 = torch.nn.Parameter(torch.randn(32, 128) / 8)
        self.w2 = torch.nn.Parameter(torch.randn(128, 32) / 8)

    def forward(self, x):
        h = self.enc(x)
        t = (F.gelu(h @ self.w1) @ self.w2).detach()
        return ((h - t) ** 2).sum(dim=1, keepdim=True)


class AlsoUsed(torch.nn.Module):
    """A value .detach()ed that the loss also reads without .detach(): its producers are recorded for backward."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(16, 32)
        self.w = torch.nn.Parameter(torch.randn(32, 32) / 8)

    def forward(self, x):
        h = self.enc(x)
        t = torch.tanh(h @ self.w)
        return (((h - t.detach()) ** 2).sum(dim=1, keepdim=True) + t.sum(dim=1, keepdim=True)
                + F.normalize(t.detach(), dim=1).sum(dim=1, keepdim=True))


class StraightThrough(torch.nn.Module):
    """VQ-VAE's quantizer written in the forward: the codebook losses and the straight-through estimator."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(16, 8)
        self.codebook = torch.nn.Parameter(torch.randn(32, 8))
        self.dec = torch.nn.Linear(8, 16)

    def forward(self, x):
        z = self.enc(x)
        d = (z * z).sum(dim=1, keepdim=True) - 2 * z @ self.codebook.t() + (self.codebook ** 2).sum(dim=1)
        q = self.codebook[d.argmin(dim=1)]
        zq = z + (q - z).detach()
        return (self.dec(zq).sum(dim=1, keepdim=True) + ((q - z.detach()) ** 2).sum(dim=1, keepdim=True)
                + 0.25 * ((q.detach() - z) ** 2).sum(dim=1, keepdim=True))


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
        # forward's own x * 2 under no_grad (found by the second export's scope), and the softmax of the detached
        # teacher's result, which no input requiring grad reaches (the second export's .detach() marker).
        self.assertEqual(entries["oomguard.no_grad"], ["/Mul", "/Softmax", "/key/key.0/Gemm", "/key/key.1/Relu",
                                                       "/key/key.2/Gemm", "/shared/Gemm"])
        _, none = metadata(Distill("plain"), x)
        self.assertEqual((none["oomguard.no_grad"], none["oomguard.detached"]), ([], []))
        plan = plan_json(self, graph, self.dir.name, "--batch", "64", "--optimizer", "adam")
        self.assertEqual(plan["grad_mode"]["hint"], "metadata")
        self.assertEqual(plan["grad_mode"]["detached_nodes"], 4)
        self.assertEqual(plan["grad_mode"]["no_grad_nodes"], 6)
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
        self.assertTrue(grad_mode.eager_forward(Codes(), (x,)).ran_without_grad)
        self.assertFalse(grad_mode.eager_forward(Distill("plain"), (x,)).ran_without_grad)
        graph, entries = metadata(Codes(), x)
        # not MatMul_1 / LogSoftmax, which run with grad; the names are the plain export's
        self.assertEqual(entries["oomguard.no_grad"], ["/Div", "/MatMul", "/ReduceSum", "/Softmax"])
        import onnx
        self.assertEqual([n.name for n in onnx.load_from_string(graph).graph.node if n.op_type != "Constant"],
                         ["/enc/Gemm", "/MatMul", "/Softmax", "/ReduceSum", "/Div", "/MatMul_1", "/LogSoftmax",
                          "/Mul", "/ReduceSum_1"])
        from oomguard._export import export_onnx

        def saved(data):
            return plan_json(self, data, self.dir.name, "--batch", "64")["bytes"]["activations_saved"]
        # The no_grad nodes keep nothing: at least the [64, 512] softmax output (which Softmax and Div keep when
        # they run with grad) is not saved.
        self.assertGreaterEqual(saved(export_onnx(Codes(), x)) - saved(graph), 64 * 512 * 4)

    def test_a_second_export_that_differs_names_nothing(self):
        import onnx
        from onnx import helper
        a = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="/Relu")], "a", [], [])
        b = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"], name="/oomguard_no_grad/Sigmoid")], "b",
                              [], [])
        self.assertIsNone(grad_mode.scoped_node_modes(a, b))
        c = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="/enc/oomguard_no_grad_1/Relu")], "c",
                              [], [])
        self.assertEqual(grad_mode.scoped_node_modes(a, c), {"/Relu": "no_grad"})
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


    def test_a_value_detached_in_a_forward_names_its_producers(self):
        x = torch.randn(4, 16)
        self.assertTrue(grad_mode.eager_forward(Target(), (x,)).detached)
        self.assertTrue(grad_mode.eager_forward(Distill("hints"), (x,)).detached)
        self.assertFalse(grad_mode.eager_forward(Distill("plain"), (x,)).detached)
        graph, entries = metadata(Target(), x)
        # the two MatMuls and GELU (Div, Erf, Add, Mul, Mul); not the encoder, nor what reads the detached target
        self.assertEqual(entries["oomguard.detached"], ["/Add", "/Div", "/Erf", "/MatMul", "/MatMul_1", "/Mul",
                                                        "/Mul_1"])
        self.assertEqual(entries["oomguard.no_grad"], [])
        from oomguard._export import export_onnx

        def planned(data):
            return plan_json(self, data, self.dir.name, "--batch", "64")
        with_hint, plain = planned(graph), planned(export_onnx(Target(), x))
        self.assertEqual(with_hint["grad_mode"]["detached_nodes"], 7)
        self.assertEqual(with_hint["grad_mode"]["no_grad_parameters"], 2 * 32 * 128)  # w1 and w2
        # GELU's input and output, [64, 128] each, are kept for backward only in the plain plan.
        self.assertGreaterEqual(plain["bytes"]["activations_saved"] - with_hint["bytes"]["activations_saved"],
                                2 * 64 * 128 * 4)

    def test_a_value_also_read_without_detach_names_none_of_its_producers(self):
        graph, entries = metadata(AlsoUsed(), torch.randn(4, 16))
        self.assertEqual(entries["oomguard.detached"], [])
        # F.normalize of the detached alias records nothing (no input requires grad); MatMul and Tanh are recorded.
        self.assertEqual(entries["oomguard.no_grad"], ["/Clip", "/Div", "/Expand", "/ReduceL2", "/ReduceSum_2"])
        import onnx
        names = [n.name for n in onnx.load_from_string(graph).graph.node]
        self.assertIn("/MatMul", names)
        self.assertIn("/Tanh", names)

    def test_the_straight_through_estimator_names_the_difference(self):
        _, entries = metadata(StraightThrough(), torch.randn(4, 16))
        # (q - z) reaches the loss only through .detach(); q and z are read without it too
        self.assertEqual(entries["oomguard.detached"], ["/Sub_1"])
        self.assertEqual(entries["oomguard.no_grad"], [])

    def test_markers_are_dropped_before_the_graphs_are_paired(self):
        from onnx import TensorProto, helper
        w = [helper.make_tensor(n, TensorProto.FLOAT, [1], [1.0]) for n in ("w", "v")]
        plain = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"], name="/MatMul"),
                                   helper.make_node("MatMul", ["h", "v"], ["t"], name="/MatMul_1"),
                                   helper.make_node("Sub", ["h", "t"], ["y"], name="/Sub")],
                                  "plain", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], w)

        def scoped(*reads):
            nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="/MatMul"),
                     helper.make_node("MatMul", ["h", "v"], ["t"], name="/MatMul_1"),
                     helper.make_node("Neg", ["t"], ["n"], name="/oomguard_detach/Neg"),
                     helper.make_node("Neg", ["n"], ["d"], name="/oomguard_detach/Neg_1"),
                     helper.make_node("Sub", list(reads), ["y"], name="/Sub")]
            return helper.make_graph(nodes, "scoped", [], list(plain.output), w)
        self.assertEqual(grad_mode.scoped_node_modes(plain, scoped("h", "d")), {"/MatMul_1": "detached"})
        self.assertEqual(grad_mode.scoped_node_modes(plain, scoped("d", "t")), {})  # read without .detach() too
        # a frozen v: MatMul_1 is recorded (h requires grad), still detached, and so is MatMul now that the Sub
        # reads only the alias; the Sub records nothing
        self.assertEqual(grad_mode.scoped_node_modes(plain, scoped("d", "d"), untrained=["v"]),
                         {"/MatMul": "detached", "/MatMul_1": "detached", "/Sub": "no_grad"})
        self.assertIsNone(grad_mode.scoped_node_modes(plain, helper.make_graph(plain.node[:2], "short", [], [])))

    def test_one_eager_forward_finds_what_ran_how(self):
        from oomguard._export import export_onnx
        model, x = Target(), torch.randn(4, 16)
        eager = []
        model.register_forward_pre_hook(lambda m, args: None if torch.jit.is_tracing() else eager.append(m))
        graph = grad_mode.add_grad_mode_metadata(export_onnx(model, (x,)), model, (x,),
                                                 reexport=lambda: export_onnx(model, (x,)))
        self.assertEqual(len(eager), 1)
        import onnx
        self.assertIn("/MatMul", [e.value for e in onnx.load_from_string(graph).metadata_props
                                  if e.key == "oomguard.detached"][0])

if __name__ == "__main__":
    unittest.main()
