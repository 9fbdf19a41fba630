"""oomguard.export and oomguard.plan(module) name the parameters with requires_grad=False in the model's
metadata ("oomguard.frozen"), and the planner gives them no gradient and no optimizer state."""
import io
import json
import os
import subprocess
import tempfile
import unittest
import warnings

import torch

import oomguard

EXE = os.environ["OOMGUARD_EXE"]


def net(freeze):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 8 * 8, 10))
    if freeze:
        for p in [*model[0].parameters(), *model[1].parameters()]:
            p.requires_grad_(False)
    return model


def cli(*args):
    p = subprocess.run([EXE, *args], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr.strip()


class FrozenTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_export_names_the_frozen_parameters_and_the_plan_follows(self):
        x = torch.randn(2, 3, 8, 8)
        plans = {}
        for freeze in (False, True):
            buf = io.BytesIO()
            oomguard.export(net(freeze), x, buf)
            import onnx
            proto = onnx.load_from_string(buf.getvalue())
            entry = [json.loads(e.value) for e in proto.metadata_props if e.key == "oomguard.frozen"]
            self.assertEqual(len(entry), 1)
            expected = ["0.bias", "0.weight", "1.bias", "1.weight"] if freeze else []
            self.assertEqual(entry[0], expected)
            self.assertTrue(set(entry[0]) <= {t.name for t in proto.graph.initializer})
            path = os.path.join(self.dir.name, "net%d.onnx" % freeze)
            with open(path, "wb") as f:
                f.write(buf.getvalue())
            rc, plans[freeze], err = cli("plan", path, "--target", "cpu", "--batch", "2", "--json")
            self.assertEqual(rc, 0, err)
        frozen = sum(p.numel() for p in net(True).parameters() if not p.requires_grad)
        trained = sum(p.numel() for p in net(True).parameters() if p.requires_grad)
        self.assertEqual(plans[True]["frozen_parameters"], frozen)
        self.assertEqual(plans[True]["parameter_count"], trained)
        self.assertEqual(plans[False]["frozen_parameters"], 0)
        self.assertLess(plans[True]["bytes"]["optimizer_state"], plans[False]["bytes"]["optimizer_state"])
        self.assertLess(plans[True]["peak_allocated_bytes"], plans[False]["peak_allocated_bytes"])
        # --frozen on the unfrozen export plans the same step as the metadata.
        rc, flagged, err = cli("plan", os.path.join(self.dir.name, "net0.onnx"), "--target", "cpu", "--batch", "2",
                               "--json", "--frozen", "0.*,1.weight", "--frozen", "1.bias")
        self.assertEqual(rc, 0, err)
        self.assertEqual(flagged["frozen_parameters"], frozen)
        self.assertEqual(flagged["peak_allocated_bytes"], plans[True]["peak_allocated_bytes"])
        self.assertEqual(flagged["bytes"], plans[True]["bytes"])

    def test_plan_of_a_module_reads_requires_grad(self):
        x = torch.randn(2, 3, 8, 8)
        r = oomguard.plan(net(True), x, target="cpu")
        self.assertEqual(r["frozen_parameters"], sum(p.numel() for p in net(True).parameters() if not p.requires_grad))
        with self.assertRaises(oomguard.Error) as e:
            oomguard.plan(net(False), x, target="cpu", frozen=["backbone.*"])
        self.assertIn("--frozen 'backbone.*' matches no initializer", str(e.exception))


if __name__ == "__main__":
    unittest.main()
