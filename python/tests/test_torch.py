"""oomguard.torch: a misspelled OOMGUARD_ALLOC_CONF key is an error at once, and
use_allocator says clearly why it cannot install the allocator."""

import ctypes
import os
import subprocess
import sys
import unittest

import torch

import oomguard
import oomguard.torch as og_torch


class AllocatorConf(unittest.TestCase):
    def test_a_misspelled_key_is_an_error_naming_it(self):
        with self.assertRaisesRegex(oomguard.Error, "fracton"):
            og_torch.check_conf("fracton=0.5")
        with self.assertRaisesRegex(oomguard.Error, "fracton"):
            og_torch.use_allocator("fracton=0.5")
        og_torch.check_conf("fraction=0.5,growth=regions")
        og_torch.check_conf("")

    def test_the_plugin_checks_a_text_and_says_a_bad_conf_when_loaded(self):
        path = og_torch.plugin_path()
        lib = ctypes.CDLL(path)
        check = lib.oomguard_check_conf
        check.restype = ctypes.c_size_t
        check.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        buf = ctypes.create_string_buffer(256)
        self.assertEqual(check(b"limit=1GiB", buf, 256), 0)
        self.assertGreater(check(b"limt=1GiB", buf, 256), 0)
        self.assertIn(b"limt", buf.value)
        # Loading the plug-in with a bad conf says so on stderr (PyTorch would report an OOM).
        env = dict(os.environ, OOMGUARD_ALLOC_CONF="fracton=0.5,simulate=1GiB")
        p = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", path],
                           env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("fracton", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        env["OOMGUARD_ALLOC_CONF"] = "fraction=0.5,simulate=1GiB"
        p = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", path],
                           env=env, capture_output=True, text=True)
        self.assertEqual(p.stderr, "")

    def test_use_allocator_says_what_is_missing(self):
        memory = getattr(torch.cuda, "memory", None)
        if memory is None or not hasattr(memory, "CUDAPluggableAllocator"):
            with self.assertRaisesRegex(oomguard.Error, "CUDAPluggableAllocator"):
                og_torch.use_allocator("fraction=0.5")
        elif not torch.cuda.is_available():
            with self.assertRaisesRegex(oomguard.Error, "no CUDA device"):
                og_torch.use_allocator("fraction=0.5")
        else:
            self.skipTest("a CUDA device is present: tools/gpu_guard_check covers the installed allocator")

    def test_stats_before_install_is_an_error(self):
        with self.assertRaisesRegex(oomguard.Error, "not installed"):
            og_torch.stats()


if __name__ == "__main__":
    unittest.main()
