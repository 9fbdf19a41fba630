"""oomguard.feed.Loader: every image once per epoch over the shards, zero-copy batches whose
bytes go back to the budget when released, and Python exceptions on bad input."""

import gc
import os
import subprocess
import tempfile
import unittest

import numpy as np

import oomguard
from oomguard.feed import Loader

COUNT, WIDTH, HEIGHT = 23, 64, 48


class LoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "photos")
        subprocess.run([os.environ["OOMGUARD_MAKE_PHOTOS"], "--out", cls.dir, "--count", str(COUNT),
                        "--width", str(WIDTH), "--height", str(HEIGHT), "--per-folder", "10"], check=True,
                       stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_image_exactly_once_per_epoch_across_shards(self):
        world, rank0 = 3, []
        loaders = [Loader(self.dir, budget="8MiB", batch=4, workers=2, size=(WIDTH, HEIGHT), seed=7, rank=r,
                          world_size=world, return_indices=True) for r in range(world)]
        for epoch in range(3):
            seen = []
            for rank, loader in enumerate(loaders):
                loader.set_epoch(epoch)
                batches = list(loader)
                self.assertEqual(len(batches), len(loader))
                shard = []
                for images, indices in batches:
                    self.assertEqual(images.dtype, np.uint8)
                    self.assertEqual(images.shape, (len(indices), HEIGHT, WIDTH, 3))
                    shard += indices
                if rank == 0:
                    rank0.append(shard)
                seen += shard
                del batches
            self.assertEqual(sorted(seen), list(range(COUNT)), "epoch %d" % epoch)
        self.assertNotEqual(rank0[0], rank0[1], "set_epoch reshuffles")
        loaders[0].set_epoch(1)
        self.assertEqual([i for _, idx in loaders[0] for i in idx], rank0[1], "an epoch's order is reproducible")

    def test_several_epochs_in_one_iteration(self):
        loader = Loader(self.dir, budget="8MiB", batch=5, size=(32, 32), epochs=2, shuffle=False,
                        return_indices=True)
        seen = [i for _, idx in loader for i in idx]
        self.assertEqual(len(loader), 2 * 5)
        self.assertEqual(sorted(seen), sorted(list(range(COUNT)) * 2))
        self.assertEqual(seen[:COUNT], list(range(COUNT)), "no shuffle: the files' order")

    def test_batches_are_views_whose_bytes_return_to_the_budget(self):
        loader = Loader(self.dir, budget="16MiB", batch=8, size=(WIDTH, HEIGHT), workers=1)
        held = list(loader)
        self.assertEqual(sum(len(a) for a in held), COUNT)
        self.assertTrue(all(not a.flags.owndata for a in held), "the arrays view the batches' buffers")
        stats = loader.stats()
        self.assertGreaterEqual(stats["budget_in_use_bytes"], COUNT * WIDTH * HEIGHT * 3)
        self.assertLessEqual(stats["peak_budget_bytes"], 16 << 20)
        view = held[0][1:2]  # a slice keeps the batch alive too
        del held
        gc.collect()
        self.assertGreater(loader.stats()["budget_in_use_bytes"], 0)
        del view
        gc.collect()
        self.assertEqual(loader.stats()["budget_in_use_bytes"], 0)
        self.assertEqual(loader.stats()["images"], COUNT)

    def test_readahead_bounds_what_a_slow_loop_leaves_in_flight(self):
        import time
        batch_bytes = 2 * WIDTH * HEIGHT * 3
        for readahead, low, high in ((1, 2 * batch_bytes, 2 * batch_bytes), (0, COUNT * WIDTH * HEIGHT * 3, 16 << 20)):
            loader = Loader(self.dir, budget="16MiB", batch=2, size=(WIDTH, HEIGHT), readahead=readahead)
            it = iter(loader)
            first = next(it)  # held by the loop, which is now "training" slowly
            time.sleep(0.3)
            in_use = loader.stats()["budget_in_use_bytes"]  # the held batch and what is decoded ahead
            self.assertGreaterEqual(in_use, low, "readahead=%d" % readahead)
            self.assertLessEqual(in_use, high, "readahead=%d" % readahead)
            self.assertEqual(len(first) + sum(len(a) for a in it), COUNT)

    def test_torch_from_numpy_shares_the_buffer(self):
        import torch
        loader = Loader(self.dir, budget="4MiB", batch=4, size=(16, 16))
        images = next(iter(loader))
        t = torch.from_numpy(images)
        self.assertEqual(t.data_ptr(), images.ctypes.data)
        del images
        gc.collect()
        self.assertGreater(loader.stats()["budget_in_use_bytes"], 0, "the tensor still holds the batch")
        self.assertEqual(t.permute(0, 3, 1, 2).float().shape, (4, 3, 16, 16))

    def test_pixels_match_an_independent_decoder(self):
        from PIL import Image
        loader = Loader(self.dir, budget="4MiB", batch=1, size=(WIDTH, HEIGHT), shuffle=False,
                        return_indices=True)
        images, (index,) = next(iter(loader))
        with Image.open(loader.files()[index]) as im:
            reference = np.asarray(im.convert("RGB"), dtype=np.int16)
        self.assertLess(np.abs(images[0].astype(np.int16) - reference).mean(), 2.0)

    def test_holding_too_many_batches_is_an_error_not_a_hang(self):
        loader = Loader(self.dir, budget=5 * WIDTH * HEIGHT * 3, batch=1, size=(WIDTH, HEIGHT))
        with self.assertRaisesRegex(oomguard.Error, "budget"):
            held = [a for a in loader]  # noqa: F841

    def test_bad_input_raises_with_a_reason(self):
        cases = [
            (dict(dir_or_list="/nonexistent/photos"), "/nonexistent/photos"),
            (dict(dir_or_list=self.dir, batch=0), "batch must be"),
            (dict(dir_or_list=self.dir, rank=2, world_size=2), "rank 2 must be less than world_size 2"),
            (dict(dir_or_list=self.dir, budget="lots"), "budget"),
            (dict(dir_or_list=self.dir, budget=0), "budget must be positive"),
            (dict(dir_or_list=self.dir, size="big"), "size must be"),
            (dict(dir_or_list=self.dir, scale="1/3"), "1/3"),
            (dict(dir_or_list=self.dir, readahead=-1), "readahead must be"),
            (dict(dir_or_list=[]), "empty list"),
            (dict(dir_or_list=self.dir, budget=1000, size=(WIDTH, HEIGHT)),
             "no image could be read (%d skipped: over_budget %d)" % (COUNT, COUNT)),
        ]
        for kwargs, message in cases:
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}):
                with self.assertRaises(oomguard.Error) as e:
                    list(Loader(**kwargs))
                self.assertIn(message, str(e.exception))
                self.assertEqual(len(str(e.exception).splitlines()), 1)

    def test_a_corrupt_image_is_skipped_or_raised(self):
        bad_dir = os.path.join(self.tmp.name, "bad")
        os.makedirs(bad_dir, exist_ok=True)
        with open(os.path.join(bad_dir, "broken.jpg"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0 not a jpeg")
        files = [os.path.join(self.dir, "000", n) for n in sorted(os.listdir(os.path.join(self.dir, "000")))]
        mixed = files[:3] + [os.path.join(bad_dir, "broken.jpg")]
        loader = Loader(mixed, budget="4MiB", batch=2, size=(WIDTH, HEIGHT))
        self.assertEqual(sum(len(a) for a in loader), 3)
        self.assertEqual(loader.stats()["skipped"], 1)
        with self.assertRaisesRegex(oomguard.Error, "broken.jpg"):
            list(Loader(mixed, budget="4MiB", batch=2, size=(WIDTH, HEIGHT), skip_errors=False))


if __name__ == "__main__":
    unittest.main()
