"""The installed Python package imports, plans and finds its PyTorch plug-in (run by the install test)."""
import os

import oomguard
import oomguard.torch

assert oomguard.plan("resnet18", batch=2, memory="8GiB").fits
print(os.path.isfile(oomguard.torch.plugin_path()))
