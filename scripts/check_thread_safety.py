#!/usr/bin/env python3
"""Clang's thread-safety analysis over every source that takes a lock, errors fatal.

The main build is GCC, which ignores GUARDED_BY / REQUIRES (include/oomguard/thread_annotations.h). This
compiles (syntax only, no object files) each .cc file that locks or annotates — MutexLock, GUARDED_BY,
REQUIRES(, EXCLUDES( — with clang++ -Wthread-safety -Werror=thread-safety, using the flags the main build
recorded in its compile_commands.json, so tests and the CLI are checked too.
Usage: scripts/check_thread_safety.py [BUILD_DIR]   (default: build; exit 1 on any violation)
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

MARKERS = re.compile(r"\bMutexLock\b|\bGUARDED_BY\(|\bREQUIRES\(|\bEXCLUDES\(")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    jobs = []
    seen = set()
    for e in entries:
        path = os.path.realpath(e["file"])
        if not path.endswith(".cc") or path in seen or not path.startswith(root + os.sep):
            continue
        with open(path, errors="replace") as src:
            if not MARKERS.search(src.read()):
                continue
        seen.add(path)
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        # Keep the include paths, definitions and language flags; drop compiler, output and launcher.
        flags = [a for a in args[1:] if a.startswith(("-I", "-D", "-std=")) or (a.startswith("-isystem") and a != "-isystem")]
        for i, a in enumerate(args[1:], 1):
            if a == "-isystem" and i + 1 < len(args):
                flags += ["-isystem", args[i + 1]]
        cmd = ["clang++", "-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety", *flags, path]
        jobs.append((os.path.relpath(path, root), cmd, e.get("directory", build)))
    if not jobs:
        print("check_thread_safety: no annotated sources in the compile database", file=sys.stderr)
        return 1
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("JOBS", os.cpu_count() or 2))) as pool:
        runs = {pool.submit(subprocess.run, cmd, cwd=cwd, capture_output=True, text=True): rel
                for rel, cmd, cwd in jobs}
        for run in concurrent.futures.as_completed(runs):
            r = run.result()
            if r.returncode != 0:
                failed += 1
                print(f"check_thread_safety: {runs[run]}:\n{r.stderr}", file=sys.stderr)
    print(f"check_thread_safety: {len(jobs) - failed} of {len(jobs)} annotated sources pass clang -Wthread-safety")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
