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


def onnx_nodes(model, x):
    """(name, op type) of every node of model's training-mode export, Constants included."""
    import onnx
    buf = io.BytesIO()
    torch.onnx.export(model, (x,), buf, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input"], dynamic_axes={"input": {0: "batch"}})
    return [(n.name, n.op_type) for n in onnx.load_from_string(buf.getvalue()).graph.node]


def found(model, x):
    """What oomguard.export finds for in-place calls in forward alone."""
    return inplace_names.functional_node_names(inplace_names.functional_calls(model, (x,)), onnx_nodes(model, x))


class Calls(torch.nn.Module):
    """In-place calls of every spelling in the root's own forward, beside out-of-place ones of the same op types."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.lin2 = torch.nn.Linear(8, 8)

    def forward(self, x):
        F = torch.nn.functional
        h = self.lin(x)
        a = F.relu(h)                      # /Relu, out of place
        h = F.relu(h, inplace=True)        # /Relu_1
        h = F.leaky_relu(h, 0.2, True)     # /LeakyRelu (inplace given by position)
        h = F.leaky_relu_(h, 0.1)          # /LeakyRelu_1
        h = torch.sigmoid(h) + a           # /Sigmoid, out of place
        h = torch.sigmoid_(h)              # /Sigmoid_1
        h = h.clamp_(min=0.1)              # /Clip
        h = h.clamp(0.1, 0.9)              # /Clip_1, out of place
        h = F.hardtanh_(h, -0.5, 0.5)      # /Clip_2
        h = F.elu_(h)                      # /Elu
        h = h.relu_()                      # /Relu_2
        h = torch.relu_(h)                 # /Relu_3
        h = F.silu(h, inplace=True)        # /Sigmoid_2 (its Mul is not named)
        return self.lin2(h)


class Twice(torch.nn.Module):
    """A block called twice, in place only on its second call; its child called in both."""

    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(8, 8)

    def forward(self, x, inplace):
        return torch.nn.functional.leaky_relu(self.inner(x).relu_(), 0.1, inplace=inplace)


class CalledTwice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Twice()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.block(self.block(x, False), True))


class FunctionalTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")

    def test_calls_in_the_roots_forward_by_every_spelling(self):
        names = found(Calls(), torch.randn(2, 8))
        self.assertEqual(names, ["/Clip", "/Clip_2", "/Elu", "/LeakyRelu", "/LeakyRelu_1", "/Relu_1", "/Relu_2",
                                 "/Relu_3", "/Sigmoid_1", "/Sigmoid_2"])

    def test_a_module_called_twice(self):
        # The block's scopes are "block" and "block_1" (torch 1.13 suffixes the second call); its Linear's are
        # "block/inner" and "block/inner_1"; x.relu_() runs in both calls, leaky_relu in place only in the second.
        names = found(CalledTwice(), torch.randn(2, 8))
        self.assertEqual(names, ["/block/Relu", "/block_1/LeakyRelu", "/block_1/Relu"])
        self.assertIn(("/block/inner_1/Gemm", "Gemm"), onnx_nodes(CalledTwice(), torch.randn(2, 8)))

    def test_modules_with_inplace_true_are_still_named(self):
        # net(True) has no call in forward of its own; the calls the modules make (nn.LeakyReLU's
        # F.leaky_relu(x, 0.1, True)) name what the module scopes name.
        x = torch.randn(2, 3, 16, 16)
        self.assertEqual(found(net(True), x), ["/2/LeakyRelu", "/3/relu/Relu", "/3/relu_1/Relu"])
        buf = io.BytesIO()
        self.assertEqual(oomguard.export(net(True), x, buf), ["/2/LeakyRelu", "/3/relu/Relu", "/3/relu_1/Relu"])
        self.assertEqual(found(net(False), x), [])

    def test_a_scope_whose_counts_differ_names_nothing(self):
        class Exported(torch.nn.Module):  # one more Relu traced in the export than run eagerly
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x):
                h = self.lin(x)
                if torch.onnx.is_in_onnx_export():
                    h = torch.relu(h)
                return torch.nn.functional.relu(h, inplace=True)

        class Outer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.odd = Exported()

            def forward(self, x):
                return self.odd(x).relu_()

        self.assertEqual(found(Outer(), torch.randn(2, 8)), ["/Relu"])  # the root's stands; odd's names nothing

    def test_calls_that_cannot_be_told_apart_name_nothing(self):
        call = inplace_names._Call
        relu_ip, relu = (("Relu",), True), (("Relu",), False)

        def calls(*spec):
            out = []
            for path, records in spec:
                c = call(path)
                c.records.extend(records)
                out.append(c)
            return out

        # Three calls of "b" that all ran an activation, but only two scopes traced: which call lost its nodes?
        three = calls(((), []), (("b",), [relu_ip]), (("b",), [relu]), (("b",), [relu]))
        self.assertEqual(inplace_names.functional_node_names(three, [("/b/Relu", "Relu"), ("/b_1/Relu", "Relu")]), [])
        # As many scopes as calls that ran an activation: the call without one traced nothing.
        two = calls(((), []), (("b",), []), (("b",), [relu_ip]), (("b",), [relu]))
        self.assertEqual(inplace_names.functional_node_names(two, [("/b/Relu", "Relu"), ("/b_1/Relu", "Relu")]),
                         ["/b/Relu"])
        # "relu_1" is a module of its own and relu's second call: the scopes mix, and neither names anything.
        mixed = calls(((), []), (("relu",), [relu]), (("relu_1",), [relu_ip]), (("relu",), [relu_ip]))
        self.assertEqual(inplace_names.functional_node_names(mixed, [("/relu/Relu", "Relu"), ("/relu_1/Relu", "Relu"),
                                                                      ("/relu_1/Relu_1", "Relu")]), [])
        # ... even where relu's second call traced no Relu, so that the counts would agree.
        mixed = calls(((), []), (("relu",), [relu]), (("relu_1",), [relu_ip]), (("relu",), [(("Clip",), False)]))
        self.assertEqual(inplace_names.functional_node_names(mixed, [("/relu/Relu", "Relu"), ("/relu_1/Relu", "Relu"),
                                                                      ("/relu_1/Clip", "Clip")]), [])
        # A scope missing from the export (the 2nd of 2) and an extra one (a 3rd): nothing.
        self.assertEqual(inplace_names.functional_node_names(calls(((), []), (("b",), [relu_ip]), (("b",), [relu_ip])),
                                                             [("/b_1/Relu", "Relu")]), [])
        self.assertEqual(inplace_names.functional_node_names(
            calls(((), []), (("b",), [relu_ip])), [("/b/Relu", "Relu"), ("/b_1/Relu", "Relu")]), [])

    def test_torchvisions_functional_relus(self):
        # GoogLeNet's BasicConv2d ends in F.relu(x, inplace=True): no module has inplace=True, and every one of
        # its 57 Relu nodes, in branches nested two deep, ran in place.
        try:
            from torchvision.models import googlenet
        except ImportError:
            self.skipTest("no torchvision")
        torch.manual_seed(0)
        model = googlenet(aux_logits=False, init_weights=False)
        nodes = onnx_nodes(model, torch.randn(2, 3, 96, 96))
        relus = sorted(n for n, op in nodes if op == "Relu")
        self.assertEqual(len(relus), 57)
        self.assertEqual(inplace_names.inplace_node_names(model, [n for n, _ in nodes]), [])
        self.assertEqual(found(model, torch.randn(2, 3, 96, 96)), relus)

    def test_the_calls_forward_runs_on_two_samples(self):
        class Seen(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)
                self.batches = []

            def forward(self, x):
                if not torch.jit.is_tracing():
                    self.batches.append(x.shape[0])
                return self.lin(x).relu_()

        model, x = Seen(), torch.randn(8, 8)
        buf = io.BytesIO()
        torch.onnx.export(model, (x,), buf, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        import onnx
        proto = onnx.load_from_string(inplace_names.add_inplace_metadata(buf.getvalue(), model, (x,)))
        self.assertEqual([json.loads(e.value) for e in proto.metadata_props if e.key == "oomguard.inplace"], [["/Relu"]])
        self.assertEqual(model.batches, [2])

    def test_the_forward_leaves_the_model_as_it_was(self):
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.Dropout(0.5))
        model.eval()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        x = torch.randn(4, 8)
        torch.manual_seed(3)
        expected = torch.rand(1)
        torch.manual_seed(3)
        self.assertIsNotNone(inplace_names.functional_calls(model, (x,)))
        self.assertEqual(torch.rand(1), expected)
        self.assertFalse(model.training)
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, before[k]), k)
        self.assertEqual(model._forward_hooks, {})
        self.assertEqual(model[0]._forward_pre_hooks, {})

    def test_the_plan_follows_calls_in_forward_and_matches_torch(self):
        class ConvNet(torch.nn.Module):  # leaky_relu_ keeps its result: in place, one tensor fewer per layer
            def __init__(self, inplace):
                super().__init__()
                torch.manual_seed(0)
                self.inplace = inplace
                self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
                self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
                self.fc = torch.nn.Linear(8 * 16 * 16, 10)

            def forward(self, x):
                F = torch.nn.functional
                h = F.leaky_relu(self.c1(x), 0.1, inplace=self.inplace)
                h = F.leaky_relu(self.c2(h), 0.1, inplace=self.inplace)
                return self.fc(h.flatten(1))

        x = torch.randn(4, 3, 16, 16)
        measured = {flag: saved_bytes(ConvNet(flag), x) for flag in (False, True)}
        self.assertLess(measured[True], measured[False])
        with tempfile.TemporaryDirectory() as d:
            for flag in (False, True):
                path = os.path.join(d, "net%d.onnx" % flag)
                names = oomguard.export(ConvNet(flag), x, path)
                self.assertEqual(names, ["/LeakyRelu", "/LeakyRelu_1"] if flag else [])
                rc, j, err = cli("plan", path, "--batch", "4", "--target", "cpu", "--loss", "none", "--json")
                self.assertEqual(rc, 0, err)
                self.assertEqual(j["inplace"]["hint"], "metadata")
                self.assertFalse(j["inplace"]["unsure"])
                self.assertEqual(j["bytes"]["activations_saved"], measured[flag], flag)

    def test_stored_probes_plan_within_one_percent_with_the_metadata(self):
        # tools/probe_families.py --store: real PyTorch 1.13 steps of nets whose in-place activations are calls
        # in forward, their files carrying "oomguard.inplace" as oomguard.export writes it.
        data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "plan")
        with open(os.path.join(data, "family_probes.json")) as f:
            cases = json.load(f)["cases"]
        import onnx
        for name, named in (("fn_relu_resblocks", 11), ("method_inplace_disc", 5), ("fn_act_mlp", 4)):
            case = cases[name]
            path = os.path.join(data, case["onnx"])
            meta = {e.key: e.value for e in onnx.load(path, load_external_data=False).metadata_props}
            self.assertEqual(len(json.loads(meta["oomguard.inplace"])), named, name)
            for row in case["rows"]:
                args = ["plan", path, "--target", "cpu", "--batch", str(row["batch"]), "--optimizer",
                        case["optimizer"], "--loss", "cross_entropy", "--json"]
                rc, j, err = cli(*args)
                self.assertEqual(rc, 0, err)
                self.assertEqual(j["inplace"]["hint"], "metadata")
                self.assertFalse(j["inplace"]["unsure"])
                measured = row["measured_peak"]
                self.assertLess(abs(j["peak_allocated_bytes"] - measured), 0.01 * measured, (name, row["batch"]))
                if name == "method_inplace_disc" and row["batch"] == 16:  # out of place it is 14 % high
                    rc, plain, err = cli(*args, "--inplace", "none")
                    self.assertGreater(plain["peak_allocated_bytes"], 1.1 * measured)


if __name__ == "__main__":
    unittest.main()
