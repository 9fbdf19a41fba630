"""oomguard.plan/fit/split/explain from Python equal the CLI's answers, and fail like it."""

import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import torch

import oomguard

EXE = os.environ["OOMGUARD_EXE"]


class SmallNet(torch.nn.Module):
    """Conv + BatchNorm + ReLU + Dropout + Linear: ops whose saved tensors differ in training mode."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.pool = torch.nn.AdaptiveAvgPool2d(4)
        self.drop = torch.nn.Dropout(0.25)
        self.fc = torch.nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(self.drop(torch.flatten(x, 1)))


def cli(*args):
    """(exit status, JSON or None, stderr) of the oomguard binary."""
    p = subprocess.run([EXE, *args], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr.strip()


def without_model(d):
    return {k: v for k, v in d.items() if k != "model"}


class PlanFromPython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.net = SmallNet()
        cls.x = torch.randn(8, 3, 32, 32)
        cls.tmp = tempfile.TemporaryDirectory()
        # The export docs/python.md describes, weights included: oomguard.export is torch.onnx.export in
        # training mode plus the in-place metadata, which a live module's plan writes too.
        cls.onnx_path = os.path.join(cls.tmp.name, "small.onnx")
        oomguard.export(cls.net, (cls.x,), cls.onnx_path, opset_version=14)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_live_module_equals_the_cli_on_the_same_export(self):
        r = oomguard.plan(self.net, self.x, optimizer=torch.optim.Adam(self.net.parameters()), gpu="rtx-3090")
        rc, expected, _ = cli("plan", self.onnx_path, "--batch", "8", "--optimizer", "adam", "--gpu", "rtx-3090",
                              "--json")
        self.assertEqual(rc, 0)
        self.assertEqual(without_model(r.to_dict()), without_model(expected))
        self.assertEqual(r.model, "SmallNet")
        self.assertEqual(r.batch, 8)
        self.assertTrue(r.fits)
        self.assertEqual(r.peak_allocated_bytes, r["peak_allocated_bytes"])
        self.assertEqual(r.parameter_count, sum(p.numel() for p in self.net.parameters()))
        self.assertIsInstance(r.advice, list)
        self.assertIsInstance(r.warnings, list)
        self.assertTrue(self.net.training, "the export leaves the module's mode as it was")

    def test_cpu_target_and_memory_equal_the_cli(self):
        r = oomguard.plan(self.net, self.x, batch=5, optimizer="momentum", target="cpu", memory="64MiB",
                          precision="fp32")
        _, expected, _ = cli("plan", self.onnx_path, "--batch", "5", "--optimizer", "momentum", "--target", "cpu",
                             "--memory", "64MiB", "--json")
        self.assertEqual(without_model(r.to_dict()), without_model(expected))

    def test_optimizer_instances_map_to_the_planner_options(self):
        params = list(self.net.parameters())
        cases = [(torch.optim.SGD(params, lr=0.1), "sgd"),
                 (torch.optim.SGD(params, lr=0.1, momentum=0.9), "momentum"),
                 (torch.optim.AdamW(params), "adamw"),
                 (torch.optim.Adagrad(params), "adagrad")]
        for opt, name in cases:
            self.assertEqual(oomguard.plan(self.net, self.x, optimizer=opt, target="cpu").optimizer, name)
        foreach = torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=True)
        self.assertEqual(oomguard.plan(self.net, self.x, optimizer=foreach).optimizer_impl, "foreach")
        with self.assertRaisesRegex(oomguard.Error, "amsgrad"):
            oomguard.plan(self.net, self.x, optimizer=torch.optim.Adam(params, amsgrad=True))

    def test_fit_and_split_equal_the_cli(self):
        r = oomguard.fit(self.net, self.x, memory="256MiB", target="cpu")
        _, expected, _ = cli("fit", self.onnx_path, "--memory", "256MiB", "--target", "cpu", "--json")
        self.assertEqual(without_model(r.to_dict()), without_model(expected))
        self.assertGreater(r.max_batch, 8)
        s = oomguard.split("resnet18", global_batch=96, gpu_memory=["4GiB", "8GiB"])
        _, expected, _ = cli("split", "resnet18", "--global-batch", "96", "--gpu-memory", "4GiB,8GiB", "--json")
        self.assertEqual(s.to_dict(), expected)
        self.assertEqual(sum(g["batch"] for g in s.per_gpu), 96)

    def test_zoo_name_and_onnx_path_and_html(self):
        r = oomguard.plan("resnet18", batch=4, gpu="rtx-3090")
        _, expected, _ = cli("plan", "resnet18", "--batch", "4", "--gpu", "rtx-3090", "--json")
        self.assertEqual(r.to_dict(), expected)
        p = oomguard.plan(self.onnx_path, batch=8, memory="1GiB")
        self.assertEqual(p.model, self.onnx_path)
        html = os.path.join(self.tmp.name, "plan.html")
        r.to_html(html)
        with open(html) as f:
            self.assertIn("<html", f.read(200).lower())

    def test_a_step_that_does_not_fit_is_a_result_not_an_error(self):
        r = oomguard.plan("resnet50", batch=256, gpu="gtx-1080-ti")
        self.assertFalse(r.fits)
        self.assertEqual(r.exit_status, 1)
        self.assertGreater(len(r.advice), 0)

    def test_errors_carry_the_cli_reason(self):
        rc, _, line = cli("plan", "resnet5O", "--batch", "4")
        self.assertEqual(rc, 2)
        with self.assertRaises(oomguard.Error) as e:
            oomguard.plan("resnet5O", batch=4)
        self.assertEqual(str(e.exception), line)
        with self.assertRaisesRegex(oomguard.Error, "unknown optimizer 'adan'"):
            oomguard.plan(self.net, self.x, optimizer="adan")
        with self.assertRaisesRegex(oomguard.Error, "example_inputs"):
            oomguard.plan(self.net)
        with self.assertRaisesRegex(oomguard.Error, "no counterpart"):
            oomguard.plan(self.net, self.x, optimizer=torch.optim.LBFGS(self.net.parameters()))
        with self.assertRaisesRegex(oomguard.Error, "nothing to fit into"):
            oomguard.fit("resnet18")


class ExplainFromPython(unittest.TestCase):
    LOG = ("Traceback (most recent call last):\n"
           "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.70 GiB total "
           "capacity; 20.10 GiB already allocated; 1.02 GiB free; 21.50 GiB reserved in total by PyTorch)\n")

    def test_text_and_path_give_the_cli_findings(self):
        r = oomguard.explain(self.LOG)
        self.assertGreater(len(r.findings), 0)
        with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
            f.write(self.LOG)
            f.flush()
            from_path = oomguard.explain(f.name)
            _, expected, _ = cli("explain", f.name, "--json")
        self.assertEqual(from_path.to_dict(), expected)
        self.assertEqual(r.findings, expected["findings"])

    def test_a_missing_file_is_an_error(self):
        with self.assertRaisesRegex(oomguard.Error, "no-such.log"):
            oomguard.explain(pathlib.Path("/nonexistent/no-such.log"))


if __name__ == "__main__":
    unittest.main()
