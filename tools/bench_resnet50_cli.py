#!/usr/bin/env python3
"""Times `oomguard plan resnet50 --batch 64` and `oomguard fit resnet50 --gpu rtx-3090` as whole processes
(start, import of the embedded model, the plan or the search with its what-if advice) against a baseline
binary, the two interleaved, and writes the best wall and user milliseconds of REPS runs as JSON.

    tools/bench_resnet50_cli.py build/oomguard BASELINE_EXE bench/results/resnet50_cli.json [REPS]
"""
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time

COMMANDS = {"plan": ["plan", "resnet50", "--batch", "64"], "fit": ["fit", "resnet50", "--gpu", "rtx-3090"]}


def run(exe, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([exe] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall * 1e3, (after.ru_utime - before.ru_utime) * 1e3


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "?"


def main():
    exe, base, out = sys.argv[1:4]
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 9
    times = {tag: {name: [] for name in COMMANDS} for tag in ("this", "baseline")}
    for _ in range(reps):
        for tag, e in (("this", exe), ("baseline", base)):
            for name, args in COMMANDS.items():
                times[tag][name].append(run(e, args))
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} CPUs, {cpu_model()}",
        "load_avg_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "command": " ".join(["tools/bench_resnet50_cli.py"] + sys.argv[1:]),
        "note": f"best of {reps} runs each, milliseconds (whole process); targets: plan <= 20 ms, fit <= 100 ms",
    }
    for tag in times:
        result[tag] = {name: {"wall_ms": round(min(w for w, _ in v), 1), "user_ms": round(min(u for _, u in v), 1)}
                       for name, v in times[tag].items()}
    result["this_over_baseline_wall"] = {
        name: round(result["this"][name]["wall_ms"] / result["baseline"][name]["wall_ms"], 2) for name in COMMANDS}
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
