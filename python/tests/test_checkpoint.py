"""oomguard.export and oomguard.plan(module) find the nodes run inside torch.utils.checkpoint calls (a second
export traces each call inside a scope level of its own, python/oomguard/checkpoint.py), name them per call in
the model's metadata ("oomguard.checkpointed"), and the planner drops what they save until backward recomputes it.
The reentrant form, which torch 1.13's exporter refuses, exports through oomguard.export."""
import tempfile
import unittest

import torch
import torch.utils.checkpoint as ckpt

import oomguard
from oomguard import checkpoint
from export_helpers import metadata, plan_json


class Blocks(torch.nn.Module):
    """A stem, three residual MLP blocks (each checkpointed when `mode` says so) and a head."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.stem = torch.nn.Linear(32, 64)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)) for _ in range(3))
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            if self.mode == "plain":
                x = x + blk(x)
            else:
                x = x + ckpt.checkpoint(blk, x, use_reentrant=self.mode == "reentrant")
        return self.head(x)


class CheckpointTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_export_names_each_calls_nodes_and_no_other(self):
        x = torch.randn(4, 32)
        for mode in ("non_reentrant", "reentrant"):
            with self.subTest(mode=mode):
                graph, entries = metadata(Blocks(mode), x)
                segments = entries["oomguard.checkpointed"]
                self.assertEqual(len(segments), 3)
                for k, names in enumerate(segments):
                    self.assertEqual(names[0], "/blocks.%d/blocks.%d.0/Gemm" % (k, k))
                    self.assertEqual(names[-1], "/blocks.%d/blocks.%d.2/Gemm" % (k, k))
                    self.assertTrue(all(n.startswith("/blocks.%d/" % k) for n in names), names)
                    self.assertFalse(any(n.endswith("Constant") or "/Constant_" in n for n in names), names)
                # The stem, the residual adds and the head are in no segment; nor is anything under no_grad.
                named = {n for s in segments for n in s}
                self.assertFalse(any(n.startswith(("/stem/", "/head/", "/Add")) for n in named))
                self.assertEqual(entries["oomguard.no_grad"], [])
                # use_reentrant=True's calls are named again (their backward holds more).
                self.assertEqual(entries["oomguard.checkpointed_reentrant"],
                                 sorted(named) if mode == "reentrant" else [])
                # The file is the plain forward's.
                plain, none = metadata(Blocks("plain"), x)
                self.assertEqual(none["oomguard.checkpointed"], [])
                import onnx
                self.assertEqual([n.name for n in onnx.load_from_string(graph).graph.node],
                                 [n.name for n in onnx.load_from_string(plain).graph.node])

    def test_the_plan_keeps_only_the_segments_inputs(self):
        x = torch.randn(4, 32)
        graph, _ = metadata(Blocks("non_reentrant"), x)
        plain, _ = metadata(Blocks("plain"), x)
        args = ("--batch", "256", "--optimizer", "sgd")
        hinted = plan_json(self, graph, self.dir.name, *args)
        recorded = plan_json(self, plain, self.dir.name, *args)
        self.assertEqual(hinted["checkpointed"], {"hint": "metadata", "segments": 3, "nodes": 21})
        self.assertEqual(recorded["checkpointed"], {"hint": "none", "segments": 0, "nodes": 0})
        self.assertLess(hinted["peak_allocated_bytes"], recorded["peak_allocated_bytes"])
        self.assertLess(hinted["bytes"]["activations_saved"], recorded["bytes"]["activations_saved"])
        # The Python API plans the module the same way.
        api = oomguard.plan(Blocks("non_reentrant"), example_inputs=torch.randn(256, 32), target="cpu",
                            optimizer="sgd")
        self.assertEqual(api["checkpointed"], hinted["checkpointed"])
        self.assertEqual(api["peak_allocated_bytes"], hinted["peak_allocated_bytes"])
        # use_reentrant=True: the recompute also holds the block's output until its backward is done.
        reentrant, _ = metadata(Blocks("reentrant"), x)
        held = plan_json(self, reentrant, self.dir.name, *args)
        self.assertEqual(held["checkpointed"], hinted["checkpointed"])
        self.assertGreaterEqual(held["peak_allocated_bytes"], hinted["peak_allocated_bytes"] + 256 * 64 * 4)

    def test_checkpoint_is_torchs_own_outside_the_export(self):
        model = Blocks("reentrant")
        x = torch.randn(4, 32)
        before = ckpt.checkpoint
        metadata(model, x)
        self.assertIs(ckpt.checkpoint, before)
        with checkpoint.traced_checkpoints() as calls:
            model(x).sum().backward()  # not traced: torch's checkpoint, with its recompute
        self.assertEqual(calls.count, 0)
        self.assertTrue(all(p.grad is not None for p in model.parameters()))
        self.assertEqual(checkpoint.count_calls(model, (x,)), 3)

    def test_a_checkpoint_bound_before_the_export_is_seen(self):
        import functools

        class Bound(Blocks):  # Hugging Face's gradient_checkpointing_enable binds checkpoint with its keywords
            def __init__(self, reentrant):
                super().__init__("plain")
                self.run = functools.partial(ckpt.checkpoint, use_reentrant=reentrant)

            def forward(self, x):
                x = self.stem(x)
                for blk in self.blocks:
                    x = x + self.run(blk, x)
                return self.head(x)
        for reentrant in (False, True):
            with self.subTest(reentrant=reentrant):
                _, entries = metadata(Bound(reentrant), torch.randn(4, 32))
                self.assertEqual([len(s) for s in entries["oomguard.checkpointed"]], [7, 7, 7])
                self.assertEqual(len(entries["oomguard.checkpointed_reentrant"]), 21 if reentrant else 0)

    def test_a_second_export_that_differs_names_nothing(self):
        import onnx
        plain, _ = metadata(Blocks("plain"), torch.randn(4, 32))
        other, _ = metadata(torch.nn.Linear(32, 10), torch.randn(4, 32))
        self.assertIsNone(checkpoint.scoped_segments(onnx.load_from_string(plain).graph,
                                                     onnx.load_from_string(other).graph))


if __name__ == "__main__":
    unittest.main()
