"""Random masks torch's exporter refuses in training mode — stochastic depth and DropBlock (Tensor.bernoulli_),
nn.Dropout1d/2d/3d (feature_dropout), nn.AlphaDropout — are exported by oomguard as exportable masks of the
same shape, and the plan keeps what torch keeps (real torch)."""

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


def channel_dropout_net(dims):
    torch.manual_seed(0)
    conv = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[dims]
    drop = {1: torch.nn.Dropout1d, 2: torch.nn.Dropout2d, 3: torch.nn.Dropout3d}[dims]
    return torch.nn.Sequential(conv(3, 8, 3, padding=1), torch.nn.ReLU(), drop(0.3), conv(8, 8, 3, padding=1),
                               torch.nn.Flatten(), torch.nn.LazyLinear(10))


def alpha_net(feature):
    torch.manual_seed(0)
    if feature:
        return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.SELU(),
                                   torch.nn.FeatureAlphaDropout(0.2), torch.nn.Conv2d(8, 4, 1), torch.nn.Flatten())
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.SELU(), torch.nn.AlphaDropout(0.2),
                               torch.nn.Linear(64, 10))


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

    def test_channel_and_alpha_dropout_export_and_keep_what_torch_keeps(self):
        cases = [(channel_dropout_net(1), torch.randn(4, 3, 20)), (channel_dropout_net(2), torch.randn(4, 3, 12, 12)),
                 (channel_dropout_net(3), torch.randn(2, 3, 4, 6, 6)), (alpha_net(False), torch.randn(8, 32)),
                 (alpha_net(True), torch.randn(4, 3, 8, 8))]
        for i, (model, x) in enumerate(cases):
            model(x)  # LazyLinear takes its shape
            path = os.path.join(self.dir.name, "drop%d.onnx" % i)
            oomguard.export(model, x, path)
            self.assertIn("RandomUniformLike", [n.op_type for n in onnx.load(path).graph.node], i)
            rc, j, err = cli("plan", path, "--batch", str(x.shape[0]), "--target", "cpu", "--loss", "none", "--json")
            self.assertEqual(rc, 0, err)
            # The 3-D net's convolution of 8 input channels runs oneDNN's gemm weight gradient, planned for
            # one thread: its only warning says so.
            self.assertEqual([r["what"] for r in j["risks"]], ["cpu_thread_scratch"] if i == 2 else [], i)
            self.assertEqual(len(j["warnings"]), len(j["risks"]), i)
            self.assertEqual(j["bytes"]["activations_saved"], saved_bytes(model, x), i)
        # Outside an export the functions are torch's own: a channel is dropped whole.
        torch.manual_seed(0)
        y = torch.nn.functional.dropout2d(torch.ones(64, 16, 5, 5), 0.5, True)
        per_channel = y.sum(dim=(2, 3))
        self.assertTrue(bool(((per_channel == 0) | (per_channel == 50)).all()))

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
