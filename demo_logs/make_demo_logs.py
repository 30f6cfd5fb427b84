"""Regenerate the committed demo logs: ``python demo_logs/make_demo_logs.py`` (from the repo root).

Each kind is written by the real writers in its own process (``python -m tests.logwriters``), into
``demo_logs/<kind>/``; old event files of that kind are removed first. Point TensorBoard at
``demo_logs/`` to see all of them as runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
REPO_ROOT = DEMO_DIR.parent

#: Kinds in the demo, and the directory passed as OUTDIR (the run lands in DEMO_DIR/<kind>/).
DEMO_KINDS = (
    "tf2_keras_trace",
    "tf1_graph",
    "torch_cnn",
    "torch_transformer",
    "keras_callback",
    "tf2_multi_function_trace",
    "hf_llama_export",
    "torch_node_data",
    "torch_train_step",
    "torch_compiled",
)


def outdir_for(kind: str) -> Path:
    # keras_callback writes its own `train/` run under the dir it is given; the others write `<kind>/`.
    return DEMO_DIR / kind if kind == "keras_callback" else DEMO_DIR


def make(kinds: tuple[str, ...] = DEMO_KINDS) -> dict[str, float]:
    """Rewrite ``DEMO_DIR/<kind>`` for each kind; returns seconds taken per kind."""
    seconds = {}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    for kind in kinds:
        shutil.rmtree(DEMO_DIR / kind, ignore_errors=True)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tests.logwriters", kind, str(outdir_for(kind))],
            cwd=REPO_ROOT,
            env=env,
            check=True,
        )
        seconds[kind] = time.perf_counter() - start
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", help=f"subset of: {' '.join(DEMO_KINDS)} (default: all)")
    args = parser.parse_args()
    unknown = set(args.kinds) - set(DEMO_KINDS)
    if unknown:
        parser.error(f"not demo kinds: {sorted(unknown)}")
    for kind, secs in make(tuple(args.kinds) or DEMO_KINDS).items():
        print(f"{kind}: {secs:.1f}s")
    total = sum(p.stat().st_size for p in DEMO_DIR.rglob("events.out.tfevents.*"))
    print(f"demo_logs event files: {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
