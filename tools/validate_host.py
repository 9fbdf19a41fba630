#!/usr/bin/python3
"""Checks the host side of `oomguard plan` against real PyTorch DataLoader pipelines (Debian's torch, CPU).

Each configuration runs in a fresh process (`--run-one`): import torch, numpy and PIL, build a
Dataset of JPEG photos (generated here with PIL, deterministic), decode each with PIL and turn it
into a CHW tensor (uint8, or float32 / 255), optionally preload the decoded items, then iterate a
DataLoader (workers, prefetch factor, batch) while a training loop "steps" for 30 ms per batch, its
first step long enough for every prefetched batch to be ready: the loader's queues fill as they do
when the GPU is the bottleneck, the case the plan predicts.

A monitor (this process, without torch) samples every 10 ms the whole process tree (the pipeline
and its workers, found through /proc/PID/task/*/children):

    footprint = RssFile(main) + sum over the tree of Pss_Anon + the shared-memory files the tree holds

Pss_Anon splits the copy-on-write pages the forked workers share with the main process, so the sum
counts them once. File pages (torch's libraries) are taken in full from the main process: their Pss
would depend on unrelated processes mapping the same libraries. Batches in shared memory are
counted by the files the tree holds open or maps (each inode once): a batch a worker has sent but
the main process has not yet received is mapped by no one (torch passes the file descriptor). The peak drop of
MemAvailable is recorded too; it is noisy on a shared machine (other processes allocate).

The configurations are a fixed list (CONFIGS, below), written before the tool's answers were seen;
every 3rd one (index % 3 == 2) is held out: never used to set the model's constants, reported apart.

    /usr/bin/python3 tools/validate_host.py --oomguard build/oomguard [--out bench/results/host_validation.json]
        [--reuse FILE]   # compare against measurements already in FILE instead of measuring again
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_step import machine, now_utc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEP_SECONDS = 0.03
FIRST_STEP_SECONDS = 0.5
PHOTOS_PER_SIZE = 48

# (workers, prefetch_factor) pairs, each run in three variants: 36 configurations.
LOADER = [(0, 2), (1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (2, 4), (3, 2), (3, 3), (4, 1), (4, 2), (4, 4)]
VARIANTS = [
    # float32 items streamed from JPEG, batch 16, 240x320
    {"dtype": "float32", "preload": 0, "batch": 16, "height": 240, "width": 320},
    # uint8 items streamed, batch 32, 240x320
    {"dtype": "uint8", "preload": 0, "batch": 32, "height": 240, "width": 320},
    # float32 items preloaded (400 decoded items held in memory), batch 24, 160x200
    {"dtype": "float32", "preload": 400, "batch": 24, "height": 160, "width": 200},
]


def configs() -> list[dict]:
    out = []
    for v in VARIANTS:
        for w, p in LOADER:
            c = dict(v, workers=w, prefetch=p)
            c["index"] = len(out)
            c["held_out"] = len(out) % 3 == 2
            out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# The pipeline (runs in a child process).


def make_photos(folder: str, height: int, width: int) -> list[str]:
    from PIL import Image, ImageFilter
    import random

    os.makedirs(folder, exist_ok=True)
    paths = []
    rng = random.Random(height * 10007 + width)
    for i in range(PHOTOS_PER_SIZE):
        path = os.path.join(folder, "photo_%03d.jpg" % i)
        paths.append(path)
        if os.path.exists(path):
            continue
        small = Image.new("RGB", (8, 6))
        small.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(48)])
        img = small.resize((width, height), Image.BICUBIC).filter(ImageFilter.DETAIL)
        img.save(path, quality=90)
    return paths


def run_one(spec: dict) -> None:
    import warnings

    import numpy as np
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    paths = spec["paths"]
    as_float = spec["dtype"] == "float32"

    def load(i: int):
        with Image.open(paths[i % len(paths)]) as img:
            t = torch.from_numpy(np.asarray(img.convert("RGB"))).permute(2, 0, 1)
        if as_float:
            t = t.float().div(255)
        return t

    class Photos(Dataset):
        def __init__(self, n, items=None):
            self.n, self.items = n, items

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            x = self.items[i % len(self.items)] if self.items else load(i)
            return x, i % 10

    batches = max(10, spec["workers"] * spec["prefetch"] + 8)
    items = [load(i) for i in range(spec["preload"])] if spec["preload"] else None
    import gc; gc.collect()
    n = spec["batch"] * batches
    loader = DataLoader(Photos(n, items), batch_size=spec["batch"], shuffle=False,
                        num_workers=spec["workers"],
                        prefetch_factor=spec["prefetch"] if spec["workers"] > 0 else 2,
                        persistent_workers=False)
    print("ready", flush=True)
    sys.stdin.readline()  # the monitor has its "before" figures
    seen = 0
    for x, y in loader:
        # The first step waits until every prefetched batch can be ready (as a first CUDA step with
        # cuDNN autotuning does): the measured peak is the one of a GPU-bound run, queues full.
        time.sleep(STEP_SECONDS if seen else FIRST_STEP_SECONDS + 0.25 * spec["workers"] * spec["prefetch"])
        seen += x.shape[0]
    print(json.dumps({"items": seen}), flush=True)


# ---------------------------------------------------------------------------------------------
# The monitor.


def tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def rollup(pid: int) -> dict:
    vals = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "kB":
                    vals[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except OSError:
        pass
    return vals


def meminfo() -> dict:
    vals = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            vals[k] = int(v.split()[0]) * 1024
    return vals


def status_bytes(pid: int, key: str) -> int:
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def shared_memory_bytes(pids: list[int]) -> int:
    """Bytes of the shared-memory files (torch's batches in /dev/shm, unlinked) the tree holds open or
    maps, each file once: a batch a worker has sent but the main process has not yet received is
    mapped by no one, only held by a file descriptor."""
    seen = {}
    for p in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % p)
        except OSError:
            continue
        for fd in fds:
            path = "/proc/%d/fd/%s" % (p, fd)
            try:
                target = os.readlink(path)
                if not (target.startswith("/dev/shm/") or target.startswith("/memfd:")):
                    continue
                st = os.stat(path)
                seen[(st.st_dev, st.st_ino)] = st.st_blocks * 512
            except OSError:
                continue
        try:
            with open("/proc/%d/maps" % p) as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and (parts[5].startswith("/dev/shm/") or parts[5].startswith("/memfd:")):
                        key = ("map", int(parts[4]))
                        if any(k[1] == key[1] for k in seen if k[0] != "map"):
                            continue
                        lo, hi = (int(x, 16) for x in parts[0].split("-"))
                        seen[key] = max(seen.get(key, 0), hi - lo)
        except OSError:
            continue
    return sum(seen.values())


def footprint(pid: int) -> tuple[int, int, int]:
    """(footprint, summed Pss, processes).

    footprint = the main process's file-backed resident pages (libraries, in full: Pss would share
    them with unrelated processes that map the same libraries) + the tree's anonymous pages by Pss
    (copy-on-write pages shared between the main process and its forked workers count once) + the
    shared-memory files the tree holds (batches in flight, each once)."""
    pids = tree(pid)
    pss = anon = 0
    for p in pids:
        r = rollup(p)
        pss += r.get("Pss", 0)
        anon += r.get("Pss_Anon", 0)
    return status_bytes(pid, "RssFile") + anon + shared_memory_bytes(pids), pss, len(pids)


def measure(c: dict, photo_root: str) -> dict:
    spec = dict(c, paths=make_photos(os.path.join(photo_root, "%dx%d" % (c["height"], c["width"])),
                                     c["height"], c["width"]))
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--run-one", json.dumps(spec)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    before = meminfo()
    base, base_pss, _ = footprint(child.pid)
    child.stdin.write("\n")
    child.stdin.flush()
    peak = base
    peak_pss = base_pss
    peak_procs = 1
    min_avail = before["MemAvailable"]
    while child.poll() is None:
        f, pss, procs = footprint(child.pid)
        if f > peak:
            peak, peak_procs = f, procs
        peak_pss = max(peak_pss, pss)
        min_avail = min(min_avail, meminfo()["MemAvailable"])
        time.sleep(0.01)
    out = child.stdout.read()
    if child.returncode != 0:
        raise SystemExit("validate_host: configuration %d failed" % c["index"])
    return {"baseline_bytes": base, "peak_bytes": peak, "peak_pss_bytes": peak_pss, "processes": peak_procs,
            "mem_available_drop_bytes": before["MemAvailable"] - min_avail,
            "items": json.loads(out.strip().splitlines()[-1])["items"]}


# ---------------------------------------------------------------------------------------------
# The plan.


def plan(exe: str, c: dict) -> dict:
    cmd = [exe, "plan", "resnet18", "--batch", str(c["batch"]), "--json",
           "--sample", "3x%dx%d:%s" % (c["height"], c["width"], c["dtype"]),
           "--loader-workers", str(c["workers"]), "--host-memory", "64GiB"]
    if c["workers"]:
        cmd += ["--prefetch-factor", str(c["prefetch"])]
    if c["preload"]:
        cmd += ["--dataset-in-memory", str(c["preload"])]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit("validate_host: %s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    h = json.loads(p.stdout)["host"]
    # The measured process runs on the CPU only: compare without the CUDA runtime's host share.
    return {"predicted_bytes": h["peak_bytes"] - h["cuda_runtime_bytes"], "host": h, "command": " ".join(cmd)}


def plan_timing(exe: str, runs: int = 15) -> dict:
    """CPU seconds (user + sys) and wall seconds of one `oomguard plan` with and without the host flags
    (medians): the host section's cost, as a ratio to the device plan measured in the same run."""
    import resource

    base = [exe, "plan", "resnet18", "--batch", "16", "--memory", "24GiB", "--json"]
    host = base + ["--sample", "3x480x640:float32", "--loader-workers", "4", "--prefetch-factor", "4",
                   "--pin-memory", "--queue", "5100", "--dataset-in-memory", "1000", "--host-memory", "16GB"]
    out = {}
    for name, cmd in (("device_only", base), ("with_host", host)):
        cpu, wall = [], []
        for _ in range(runs):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, capture_output=True)
            wall.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        out[name] = {"cpu_seconds_median": statistics.median(cpu), "wall_seconds_median": statistics.median(wall),
                     "command": " ".join(cmd)}
    out["cpu_ratio"] = out["with_host"]["cpu_seconds_median"] / max(out["device_only"]["cpu_seconds_median"], 1e-9)
    return out


def summary(rows: list[dict]) -> dict:
    errs = [abs(r["error"]) for r in rows]
    if not errs:
        return {}
    return {"configurations": len(rows), "median_abs_error": statistics.median(errs), "worst_abs_error": max(errs),
            "within_10_percent": sum(e <= 0.10 for e in errs)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oomguard", default=os.path.join(ROOT, "build", "oomguard"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "host_validation.json"))
    ap.add_argument("--reuse", help="a previous result file: compare its measurements, measure nothing")
    ap.add_argument("--only", help="comma-separated configuration indices")
    ap.add_argument("--measure-only", action="store_true", help="measure, do not ask oomguard")
    ap.add_argument("--run-one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run_one:
        run_one(json.loads(a.run_one))
        return

    chosen = configs()
    if a.only:
        keep = {int(i) for i in a.only.split(",")}
        chosen = [c for c in chosen if c["index"] in keep]
    measured = {}
    source = None
    if a.reuse:
        with open(a.reuse) as f:
            source = json.load(f)
        measured = {r["config"]["index"]: r["measured"] for r in source["rows"]}
        source = source.get("measurement") or {k: source.get(k) for k in
                                                 ("date", "machine", "command", "load_average_before",
                                                  "load_average_after")}
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="oomguard_photos_") as photos:
        # A private copy of the binary: a rebuild during the (long) measurement must not change or block it.
        exe = os.path.join(photos, "oomguard")
        if not a.measure_only:
            shutil.copy2(a.oomguard, exe)
        for c in chosen:
            if c["index"] not in measured:
                measured[c["index"]] = measure(c, photos)
                print("measured %d: %s" % (c["index"], json.dumps(measured[c["index"]])), flush=True)
        for c in chosen:
            m = measured[c["index"]]
            if a.measure_only:
                rows.append({"config": c, "measured": m})
                continue
            p = plan(exe, c)
            p["command"] = p["command"].replace(exe, a.oomguard)
            err = (p["predicted_bytes"] - m["peak_bytes"]) / m["peak_bytes"]
            rows.append({"config": c, "measured": m, "predicted_bytes": p["predicted_bytes"], "error": err,
                         "host": p["host"], "plan_command": p["command"]})
            print("%2d %-8s w%d p%d b%-3d %3dx%-3d pre%-4d measured %7.1f MiB predicted %7.1f MiB %+6.1f%%%s" % (
                c["index"], c["dtype"], c["workers"], c["prefetch"], c["batch"], c["height"], c["width"],
                c["preload"], m["peak_bytes"] / 2**20, p["predicted_bytes"] / 2**20, 100 * err,
                "  (held out)" if c["held_out"] else ""), flush=True)
        timing = None if a.measure_only else plan_timing(exe)
    if a.measure_only:
        with open(a.out, "w") as f:
            json.dump({"date": now_utc(), "machine": machine(), "command": " ".join(sys.argv), "rows": rows}, f, indent=1)
        return
    dev = [r for r in rows if not r["config"]["held_out"]]
    held = [r for r in rows if r["config"]["held_out"]]
    result = {
        "date": now_utc(), "machine": machine(), "load_average_before": load_before,
        "load_average_after": os.getloadavg(), "command": " ".join(sys.argv),
        "torch": subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                                capture_output=True, text=True).stdout.strip(),
        "measure": "RssFile(main) + sum over the process tree of Pss_Anon + shared-memory files held by the tree (each once); peak of 10 ms samples",
        "plan_timing": timing,
        "measurement": source,  # when --reuse: where the measured figures come from
        "summary": {"all": summary(rows), "development": summary(dev), "held_out": summary(held)},
        "rows": rows,
    }
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    t = result["plan_timing"]
    print("plan: %.1f ms CPU with the host section, %.1f ms without (wall %.0f / %.0f ms)" % (
        1e3 * t["with_host"]["cpu_seconds_median"], 1e3 * t["device_only"]["cpu_seconds_median"],
        1e3 * t["with_host"]["wall_seconds_median"], 1e3 * t["device_only"]["wall_seconds_median"]))
    for k, s in result["summary"].items():
        if s:
            print("%-12s n=%2d  |error| median %5.1f%%  worst %5.1f%%  within 10%%: %d" % (
                k, s["configurations"], 100 * s["median_abs_error"], 100 * s["worst_abs_error"],
                s["within_10_percent"]))


if __name__ == "__main__":
    main()
