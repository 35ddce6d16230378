"""Issue 17's hostile inputs, re-run: each case is one CLI call in a child process with a time and memory cap.

Prints one line per case (exit status, lines on stderr, seconds) and flags what breaks the contract:
exit 0, or exit 2 with exactly one line on stderr; no traceback; done within the time limit.
Run it from the repository root: ``python dev/hostile_inputs.py [--timeout 60] [--memory-gb 3] [NAME ...]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOOD_CSV = "id,event_time,arrival_time\na,1,2\nb,2,3\nc,12,13\nd,25,26\n"


def cases(tmp: Path) -> dict[str, list[str]]:
    """name → argv after ``python -m explorer``; the files they need are written into ``tmp``."""
    def file(name: str, content: str | bytes) -> str:
        path = tmp / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return str(path)

    good = file("good.csv", GOOD_CSV)
    yaml = {
        "timeconfig-scalar": "timeConfig: 5\n",
        "timeconfig-list": "timeConfig: [1, 2]\n",
        "emitter-scalar": "emitter: 5\n",
        "emitter-list": "emitter: [tumbling-time-window]\n",
        "windowspan-zero": "emitter:\n  tumbling-time-window:\n    windowSpan: 0s\n",
        "slide-zero": "emitter:\n  sliding-time-window:\n    windowSpan: 10s\n    slide: 0s\n",
        "heartbeat-zero": "timeConfig:\n  idleTimeout: 5s\n  heartbeat: 0s\n",
        "heartbeat-negative": "timeConfig:\n  idleTimeout: 5s\n  heartbeat: -10s\n",
        "huge-integer": "timeConfig:\n  delayWindowClose: " + "9" * 400 + "\n",
        "window-not-text": "window: [1, 2]\n",
        "alias-bomb": "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
            f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(8)),
    }
    out = {f"yaml-{name}": ["run", good, "--config", file(f"{name}.yaml", text)] for name, text in yaml.items()}
    out["yaml-utf16"] = ["run", good, "--config", file("utf16.yaml", "timeConfig:\n  delayWindowClose: 3s\n"
                                                       .encode("utf-16"))]
    out["yaml-directory"] = ["run", good, "--config", str(tmp)]
    out |= {
        "window-overflow": ["run", good, "--window", "tumbling:99999999999999d"],
        "delay-overflow": ["run", good, "--delay", "99999999999999999999"],
        "batches-superscript": ["run", good, "--batches", "count:²"],
        "sliding-1us": ["run", good, "--window", "sliding:1h:1us"],
        "argparse-unknown": ["run", good, "--nope"],
        "argparse-choice": ["run", good, "--preset", "nope"],
        "argparse-int": ["compare", good, "--presets", "voltsp", "--limit", "x"],
        "compare-limit": ["compare", good, "--presets", "voltsp,flink", "--limit", "-1"],
        "textbook-mean-delay": ["generate", "textbook", "--mean-delay", "0", "--out", str(tmp / "g1.csv")],
        "textbook-spacing": ["generate", "textbook", "--spacing", "-1", "--out", str(tmp / "g2.csv")],
        "mobile-seed": ["generate", "mobile-bursts", "--seed", "-1", "--out", str(tmp / "g3.csv")],
        "skewed-partitions": ["generate", "skewed-partitions", "--partitions", "0", "--out", str(tmp / "g4.csv")],
        "generate-existing-dir": ["generate", "textbook", "--out", str(tmp)],
        "generate-existing-file": ["generate", "textbook", "--out", file("exists.csv", GOOD_CSV)],
        "run-out-existing-file": ["run", good, "--out", file("exists.txt", "x")],
        "run-out-proc": ["run", good, "--out", "/proc/nope"],
        "utf16-events": ["run", file("utf16.csv", GOOD_CSV.encode("utf-16"))],
        "binary-csv": ["run", file("binary.csv", bytes(range(256)) * 4)],
        "extra-fields": ["run", file("extra.csv", "id,event_time,arrival_time\na,1,2\nb,2,3,4\nc,3,4\n")],
        "corrupt-parquet": ["run", file("corrupt.parquet", b"PAR1" + b"\x00" * 64 + b"PAR1")],
        "directory-bad-file": ["run", str(tmp / "dir")],
        "symlink-loop": ["run", str(tmp / "loop.csv")],
        "commit-not-monotone": ["run", file("batch.csv", "id,event_time,arrival_time,batch\na,10,12,1\nb,1,3,2\n"
                                            "c,11,13,2\n"), "--preset", "bytewax", "--batches", "interval:5"],
    }
    (tmp / "dir").mkdir()
    (tmp / "dir" / "a.csv").write_text(GOOD_CSV)
    (tmp / "dir" / "b.csv").write_text("id,event_time,arrival_time\nx,1,2\ny,oops,3\n")
    if not (tmp / "loop.csv").is_symlink():
        os.symlink(tmp / "loop.csv", tmp / "loop.csv")
    return out


def run_case(argv: list[str], timeout: float, memory_gb: float) -> tuple[str, float, str]:
    def limit() -> None:
        cap = int(memory_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "explorer", *argv], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return "HANG", time.monotonic() - start, ""
    seconds = time.monotonic() - start
    lines = done.stderr.strip().splitlines()
    if "Traceback" in done.stderr:
        return "TRACEBACK", seconds, lines[-1] if lines else ""
    if done.returncode == 0 or (done.returncode == 2 and len(lines) == 1):
        return f"ok {done.returncode}", seconds, lines[0] if lines else done.stdout.strip().splitlines()[0][:100]
    return f"BAD exit {done.returncode}, {len(lines)} lines", seconds, " | ".join(lines)[:200]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="only these cases")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--memory-gb", type=float, default=3)
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in cases(Path(tmp)).items():
            if args.names and name not in args.names:
                continue
            outcome, seconds, line = run_case(argv, args.timeout, args.memory_gb)
            failed += not outcome.startswith("ok")
            print(f"{name:<24} {outcome:<22} {seconds:5.1f}s  {line}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
