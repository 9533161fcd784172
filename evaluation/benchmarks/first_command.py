"""How long the README's first command takes on a fresh clone: the figure the README states, measured.

    python -m cardzoo.evaluation.benchmarks.first_command --out evaluation/results/first_command.json

Reads the first line of the README's first ``bash`` block (the command a new user copies), clones this checkout's
committed ``HEAD`` into a temporary folder (as CI does: nothing uncommitted, no venv), and runs the command's
``&&``-joined steps there one by one with ``bash``, timing each (wall seconds). pip's package cache is whatever the
machine has (say so when citing: a cold cache adds the downloads). Writes the steps, their times, the total, the
commit, the core count and the load average before and after, as JSON; ``test_readme_headline.py`` checks that
the README's stated minutes are this file's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "evaluation" / "results" / "first_command.json"


def first_command(readme: str) -> str:
    """The first line of the README's first ``bash`` block."""
    match = re.search(r"```bash\n(.+)\n", readme)
    if not match:
        raise ValueError("the README has no bash block")
    return match.group(1).strip()


def minutes(seconds: float) -> int:
    """The whole minutes the README states for a measured time."""
    return max(1, round(seconds / 60))


def measure(command: str) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    steps = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "cardzoo"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        for step in command.split(" && "):
            start = time.perf_counter()
            done = subprocess.run(["bash", "-c", step], cwd=clone, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            steps.append({"step": step, "seconds": seconds, "returncode": done.returncode})
            print(f"{seconds / 60:5.1f} min  {step}", flush=True)
            if done.returncode:
                raise SystemExit(f"{step!r} failed:\n{done.stderr[-3000:]}")
    total = sum(s["seconds"] for s in steps)
    return {"command": command, "commit": commit, "cpus": os.cpu_count(), "load_before": load,
            "load_after": os.getloadavg()[0], "steps": steps, "total_seconds": total,
            "total_minutes_stated": minutes(total), "report_seconds": steps[-1]["seconds"],
            "report_minutes_stated": minutes(steps[-1]["seconds"])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    result = measure(first_command((ROOT / "README.md").read_text()))
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"total {result['total_seconds'] / 60:.1f} min -> {args.out}")


if __name__ == "__main__":
    main()
