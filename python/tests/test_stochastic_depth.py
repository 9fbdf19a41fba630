"""Stochastic depth and DropBlock draw masks with Tensor.bernoulli_, which torch's exporter refuses in
training mode; oomguard's export turns it into an exportable mask of the same shape (real torch)."""

import io
import os
import tempfile
import unittest
import warnings

import onnx
import torch

import oomguard
from test_inplace import cli, saved_bytes


def stochastic_depth(x, p, training):
    """torchvision.ops.stochastic_depth, mode "row": one draw per sample."""
    if not training or p == 0.0:
        return x
    survival = 1.0 - p
    noise = torch.empty([x.shape[0]] + [1] * (x.ndim - 1), dtype=x.dtype, device=x.device)
    noise = noise.bernoulli_(survival)
    noise.div_(survival)
    return x * noise


class Residual(torch.nn.Module):
    def __init__(self, channels, p):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(channels)
        self.p = p

    def forward(self, x):
        return x + stochastic_depth(torch.nn.functional.gelu(self.norm(self.conv(x))), self.p, self.training)


class DropBlockLike(torch.nn.Module):
    """A mask drawn in place whose return value is ignored, as torchvision's DropBlock2d does."""

    def forward(self, x):
        if not self.training:
            return x
        noise = torch.empty((x.shape[0], 1, x.shape[2], x.shape[3]), dtype=x.dtype, device=x.device)
        noise.bernoulli_(0.9)
        return x * noise


class Failing(torch.nn.Module):
    def forward(self, x):
        torch.empty(x.shape[0]).bernoulli_(0.5)
        raise RuntimeError("a forward that fails after drawing a mask")


def net():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), Residual(16, 0.2), Residual(16, 0.2), DropBlockLike(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))


class StochasticDepthExportTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore")
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_export_makes_an_exportable_mask_and_the_plan_matches_torch(self):
        x = torch.randn(4, 3, 16, 16)
        path = os.path.join(self.dir.name, "sd.onnx")
        oomguard.export(net(), x, path)
        ops = [n.op_type for n in onnx.load(path).graph.node]
        self.assertNotIn("Bernoulli", ops)
        self.assertEqual(ops.count("RandomUniformLike"), 3)  # two residual masks and the block mask
        rc, j, err = cli("plan", path, "--batch", "4", "--target", "cpu", "--loss", "none", "--json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(j["warnings"], [])
        self.assertEqual(j["uncovered"], [])
        # What autograd keeps, masks included (one float per sample, or per sample and pixel).
        self.assertEqual(j["bytes"]["activations_saved"], saved_bytes(net(), x))

    def test_plan_of_a_live_module_with_stochastic_depth(self):
        r = oomguard.plan(net(), torch.randn(8, 3, 16, 16), target="cpu", loss="none")
        self.assertEqual(r.batch, 8)
        self.assertGreater(r.peak_allocated_bytes, 0)

    def test_bernoulli_is_itself_again_after_the_export(self):
        original = torch.Tensor.bernoulli_
        oomguard.export(net(), torch.randn(2, 3, 16, 16), io.BytesIO())
        self.assertIs(torch.Tensor.bernoulli_, original)
        with self.assertRaises(RuntimeError):  # also after an export that fails while tracing
            oomguard.export(Failing(), torch.randn(2, 3, 16, 16), io.BytesIO())
        self.assertIs(torch.Tensor.bernoulli_, original)
        torch.manual_seed(1)
        draws = torch.empty(10000).bernoulli_(0.25)
        self.assertTrue(bool(((draws == 0) | (draws == 1)).all()))
        self.assertAlmostEqual(float(draws.mean()), 0.25, delta=0.03)


if __name__ == "__main__":
    unittest.main()
