#!/usr/bin/python3
"""oomguard.feed.Loader against torch.utils.data.DataLoader with PIL decoding, from Python.

Both read the same generated photos (oomguard_make_photos), with the same number of decoder
workers, and deliver the same thing: uint8 batches of N x 224 x 224 x 3 (a centre crop of the
full-resolution decode) as torch tensors. Each runs in its own process, after one pass over the
files has put them in the page cache; the runs are interleaved (A B A B ...) for --repeat rounds
so that a shared machine's changing load hits both sides alike. Measured from outside the process:
  - images/s over the whole epoch (first batch included),
  - CPU seconds per image of the timed part (the process and the workers it joined),
  - peak memory as PSS summed over the process and its children (the DataLoader's workers),
    sampled every 20 ms from /proc/PID/smaps_rollup.
Ratios are taken within each round; the medians are reported.
Goal: feed >= 2x the DataLoader's images/s at no more summed PSS.

    /usr/bin/python3 tools/feed_vs_dataloader.py --build build [--count 2000] [--workers 2] [--repeat 3]

Writes bench/results/feed_python.json (date, machine, load, command, figures, ratios).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SIZE = 224


# What each side does per image, by mode:
#   crop: decode at full resolution, centre crop 224x224 (the same work on both sides);
#   half: half the resolution, then the centre crop. PIL decodes fully and halves with
#         Image.reduce(2) (the cheapest PIL resize); feed scales by 1/2 inside the JPEG decoder
#         (DCT scaling). "pil-draft" is PIL asking libjpeg for that same DCT scaling (Image.draft),
#         what a PIL user who knows the trick can do.
MODES = {"crop": ("dataloader", "feed"), "half": ("dataloader", "dataloader-draft", "feed")}


def run_dataloader(files, batch, workers, mode, draft):
    import numpy as np
    import torch
    from PIL import Image

    class Photos(torch.utils.data.Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            with Image.open(files[i]) as im:
                if mode == "half" and draft:
                    im.draft("RGB", (im.size[0] // 2, im.size[1] // 2))
                im = im.convert("RGB")
                if mode == "half" and not draft:
                    im = im.reduce(2)
                w, h = im.size
                left, top = (w - SIZE) // 2, (h - SIZE) // 2
                # A copy, as torchvision's PILToTensor makes.
                return torch.from_numpy(np.array(im.crop((left, top, left + SIZE, top + SIZE))))

    loader = torch.utils.data.DataLoader(Photos(), batch_size=batch, num_workers=workers, shuffle=True)
    images = checksum = 0
    for x in loader:
        images += x.shape[0]
        checksum += int(x[:, SIZE // 2, SIZE // 2, 0].sum())
    return images, checksum


def run_feed(files, batch, workers, budget, mode):
    import torch
    import oomguard

    loader = oomguard.feed.Loader(files, budget=budget, batch=batch, workers=workers, size=(SIZE, SIZE),
                                  scale="1/2" if mode == "half" else "1")
    images = checksum = 0
    for a in loader:
        x = torch.from_numpy(a)
        images += x.shape[0]
        checksum += int(x[:, SIZE // 2, SIZE // 2, 0].sum())
    return images, checksum


def child(args):
    with open(args.list) as f:
        files = [line.strip() for line in f if line.strip()]
    if args.run == "feed":
        import oomguard  # noqa: F401  (imported before the clock starts, like torch below)
    import torch  # noqa: F401
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.perf_counter()
    cpu_start = _cpu_seconds()
    if args.run == "feed":
        images, checksum = run_feed(files, args.batch, args.workers, args.budget, args.mode)
    else:
        images, checksum = run_dataloader(files, args.batch, args.workers, args.mode, args.run == "dataloader-draft")
    seconds = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu_start
    print(json.dumps({"images": images, "seconds": seconds, "checksum": checksum, "cpu_seconds": cpu}), flush=True)


def _cpu_seconds():
    """User + system CPU of this process and its children that ended (the DataLoader joins its workers
    before the loop ends)."""
    import resource
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def tree_pss_bytes(pid):
    """PSS of pid and all its descendants, in bytes."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
    return total


def measure(kind, mode, args, list_path):
    load = os.getloadavg()[0]
    cmd = [sys.executable, os.path.abspath(__file__), "--run", kind, "--mode", mode, "--list", list_path, "--batch",
           str(args.batch), "--workers", str(args.workers), "--budget", args.budget]
    env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "python"), OMP_NUM_THREADS="1")
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "ready"
    idle_pss = tree_pss_bytes(p.pid)
    peak = [idle_pss]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_bytes(p.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    p.stdin.write("go\n")
    p.stdin.flush()
    line = p.stdout.readline()
    done.set()
    if not line:
        sampler.join()
        sys.exit("feed_vs_dataloader: the %s run (%s) failed; its error is above" % (kind, mode))
    result = json.loads(line)
    sampler.join()
    p.wait()
    result.update(kind=kind, mode=mode, images_per_second=result["images"] / result["seconds"], peak_pss_bytes=peak[0],
                  pss_before_start_bytes=idle_pss, cpu_ms_per_image=1000 * result["cpu_seconds"] / result["images"],
                  load_1min_at_start=load)
    return result


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"uname": " ".join(platform.uname()), "cpu": model, "nproc": os.cpu_count()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--budget", default="96MiB")
    ap.add_argument("--photos", help="a folder of photos to use (default: generate --count 640x480 photos)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "bench", "results",
                                                  "feed_python.json"))
    ap.add_argument("--modes", default="crop,half", help="comma-separated: crop, half (see MODES)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of interleaved runs; medians of per-round ratios")
    ap.add_argument("--run", choices=["dataloader", "dataloader-draft", "feed"], help=argparse.SUPPRESS)
    ap.add_argument("--mode", choices=sorted(MODES), help=argparse.SUPPRESS)
    ap.add_argument("--list", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        return child(args)

    with tempfile.TemporaryDirectory() as tmp:
        photos = args.photos
        if photos is None:
            photos = os.path.join(tmp, "photos")
            subprocess.run([os.path.join(args.build, "oomguard_make_photos"), "--out", photos, "--count",
                            str(args.count), "--seed", "1"], check=True, stdout=subprocess.DEVNULL)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(photos) for f in fs if f.endswith(".jpg"))
        list_path = os.path.join(tmp, "files.txt")
        with open(list_path, "w") as f:
            f.write("\n".join(files) + "\n")
        for path in files:  # both runs read from the page cache
            with open(path, "rb") as f:
                f.read()
        photo_bytes = sum(os.path.getsize(p) for p in files)
        load_before = os.getloadavg()
        runs = []
        for round_ in range(1, args.repeat + 1):
            for mode in args.modes.split(","):
                for kind in MODES[mode]:
                    runs.append(dict(measure(kind, mode, args, list_path), round=round_))
        load_after = os.getloadavg()
    comparisons = []
    for mode in args.modes.split(","):
        for kind in MODES[mode]:
            if kind == "feed":
                continue
            speedups, pss_ratios, cpu_ratios = [], [], []
            for round_ in range(1, args.repeat + 1):
                by_kind = {r["kind"]: r for r in runs if r["mode"] == mode and r["round"] == round_}
                feed, base = by_kind["feed"], by_kind[kind]
                speedups.append(feed["images_per_second"] / base["images_per_second"])
                pss_ratios.append(feed["peak_pss_bytes"] / base["peak_pss_bytes"])
                cpu_ratios.append(base["cpu_ms_per_image"] / feed["cpu_ms_per_image"])
            speedup, pss = statistics.median(speedups), statistics.median(pss_ratios)
            comparisons.append({"mode": mode, "baseline": kind, "speedup": speedup, "pss_ratio": pss,
                                "cpu_per_image_ratio": statistics.median(cpu_ratios),
                                "speedup_per_round": speedups, "pss_ratio_per_round": pss_ratios,
                                "goal_met": speedup >= 2 and pss <= 1})
    summary = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "method": "%d rounds, each running every configuration once in turn; ratios per round, medians reported"
                  % args.repeat,
        "command": " ".join([sys.executable] + sys.argv),
        "photos": {"count": len(files), "bytes": photo_bytes, "source": args.photos or "oomguard_make_photos 640x480"},
        "setup": {"workers": args.workers, "batch": args.batch, "output": "uint8 N x %d x %d x 3 centre crop" %
                  (SIZE, SIZE), "feed_budget": args.budget, "modes": {m: MODES[m] for m in args.modes.split(",")},
                  "baseline": "torch %s DataLoader, PIL %s decode + crop" % (_version("torch"), _version("PIL"))},
        "runs": runs,
        "comparisons": comparisons,
        "goal": "feed images/s >= 2x the baseline's at pss_ratio <= 1 (PSS summed over process and workers)",
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    for r in runs:
        print("%d %-5s %-17s %7.1f images/s  %5.2f CPU ms/image  peak PSS %6.1f MiB  (%d images in %.2f s, load %.1f)" % (
            r["round"], r["mode"], r["kind"], r["images_per_second"], r["cpu_ms_per_image"], r["peak_pss_bytes"] / 2**20,
            r["images"], r["seconds"], r["load_1min_at_start"]))
    for c in comparisons:
        print("%-5s feed / %-17s median %.2fx images/s, %.2fx PSS, %.2fx less CPU per image" % (
            c["mode"], c["baseline"], c["speedup"], c["pss_ratio"], c["cpu_per_image_ratio"]))
    print("load %.2f -> %.2f; wrote %s" % (load_before[0], load_after[0], args.out))


def _version(module):
    try:
        return __import__(module).__version__
    except (ImportError, AttributeError):
        return "?"


if __name__ == "__main__":
    main()
