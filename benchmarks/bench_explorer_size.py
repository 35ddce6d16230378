"""The explorer on big files (issue 31: "opens a 10M-event file and steps a slider as fast as at 1M"): the
kernel's side of opening a file and of delay-slider steps, cold and with the neighbouring frames computed ahead.

    .venv/bin/python benchmarks/bench_explorer_size.py FILE [FILE ...] [--preset spark] [--steps 4]

Run one process per file (each is timed alone, its peak RSS its own). For each file it prints: the time to open it
and draw the first frame; for each step, the time until the setter returned with the light frame drawn and until
the full frame settled (``SETTLE_SECONDS`` included); whether the frames ahead were computed (``frames_to_keep``
decides from the memory free) and kept their Results (``results_fit``); the time a click in the inspector then
waits for the Result of the frame shown (none where it was kept, a whole run where it was not); the process's peak
RSS. Steps 0 and 1 compute their frame in the step; before step 2 the neighbours are computed ahead, so steps 2
and 3 read theirs from memory where it allowed.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time


def one_file(path: str, preset: str, steps: int) -> None:
    from explorer.ui.app import Explorer
    from explorer.ui.frames_ahead import results_fit

    start = time.perf_counter()
    explorer = Explorer(path, preset_name=preset)
    explorer.wait_until_settled(1200)
    kept = explorer.ahead.frames.size if explorer.ahead.frames is not None else 0
    events = len(explorer.stream.events)
    print(f"{path}: {events:,} events, opened and drawn in {time.perf_counter() - start:.1f} s; frames kept {kept}"
          f"{', with their Results' if results_fit(events) else ', without their Results'}", flush=True)
    delay = explorer.controls.delay
    for step in range(steps):
        if step == 2:
            explorer.prefetch_neighbours()
            explorer.wait_for_prefetch(1200)
        start = time.perf_counter()
        delay.value = delay.value + delay.step
        light = time.perf_counter() - start
        explorer.wait_until_settled(1200)
        print(f"  step {step} ({'ahead' if step >= 2 and kept > 1 else 'cold'}): light frame {light:.2f} s, "
              f"settled {time.perf_counter() - start:.2f} s", flush=True)
    start = time.perf_counter()
    explorer.inspect_event(0)
    print(f"  a click in the inspector: {time.perf_counter() - start:.2f} s", flush=True)
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--preset", default="spark")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # the child process for one file
    args = parser.parse_args()
    if args.one:
        one_file(args.files[0], args.preset, args.steps)
        return
    for path in args.files:
        subprocess.run([sys.executable, __file__, "--one", path, "--preset", args.preset, "--steps", str(args.steps)],
                       check=True)


if __name__ == "__main__":
    main()
