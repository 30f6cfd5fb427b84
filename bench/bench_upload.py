"""Upload of a big event file: the ``/upload`` route and the parse function alone, before/after.

Usage::

    python -m bench.bench_upload write [--out bench/_out/upload]       # ~50 MB, needs TensorFlow
    python -m bench.bench_upload compare --before DIR [--after DIR] [--repeats 3] FILE [FILE ...]

``write`` builds Keras' EfficientNetB3 (random weights, 12M parameters), freezes its forward
``tf.function`` (``convert_variables_to_constants_v2``: the weights become ``Const`` tensors, as
in a frozen model people upload) and writes that GraphDef as the run graph of an event file with
``tf.summary.graph``: about 50 MB in one record. Other real event files (e.g. the trace corpus of
``bench.corpus``: a RunMetadata of function graphs) can be given to ``compare`` as well.

``compare`` times, per file, in a fresh process each time (so no cache is warm and the
TensorFlow-free import of the plugin is not counted), alternating before/after for ``--repeats``
rounds:

* ``route``: ``POST /data/plugin/graph_explorer/upload`` through a real TensorBoard WSGI app
  (``tests.tb_app.TbApp`` over an empty logdir, werkzeug test client), answer checked (200, op
  count);
* ``parse``: ``ingest.event_file.graph_from_event_file`` alone.

``--before``/``--after`` are checkouts of the package (``git worktree add /tmp/main main``);
``--after`` defaults to this one. Prints one line per measurement and the medians as JSON.

Where the time goes: ``python -m bench.bench_upload measure route FILE --code DIR --profile 12``
runs one measurement under ``cProfile`` and prints its 12 costliest functions (own time) to
stderr; the profiler's overhead inflates code that makes many calls (the old numpy CRC).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "_out" / "upload"


def write(out: Path) -> Path:
    """Write the frozen EfficientNetB3 run graph with ``tf.summary.graph``; return the event file."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    keras.utils.set_random_seed(0)
    model = keras.applications.EfficientNetB3(weights=None)
    forward = tf.function(lambda x: model(x, training=False))
    concrete = forward.get_concrete_function(tf.TensorSpec([1, 300, 300, 3], tf.float32))
    frozen = convert_variables_to_constants_v2(concrete).graph.as_graph_def()
    run = out / "efficientnetb3_frozen"
    run.mkdir(parents=True, exist_ok=True)
    for old in run.glob("events.out.tfevents.*"):
        old.unlink()
    writer = tf.summary.create_file_writer(str(run))
    with writer.as_default():
        tf.summary.graph(frozen)
    writer.close()
    (path,) = run.glob("events.out.tfevents.*")
    print(f"{path} {path.stat().st_size / 1e6:.1f} MB, {len(frozen.node)} ops")
    return path


def measure(kind: str, path: Path, code: Path, profile: int = 0) -> dict:
    """One timing of ``kind`` (route | parse) on ``path`` with the package found in ``code``;
    with ``profile`` > 0, the timed call runs under cProfile and its ``profile`` costliest
    functions are printed to stderr."""
    sys.path.insert(0, str(code))
    import tempfile

    from tb_graph_plugin.ingest import event_file

    assert Path(event_file.__file__).resolve().is_relative_to(code.resolve()), event_file.__file__
    blob = path.read_bytes()
    if kind == "parse":
        found, seconds = _timed(lambda: event_file.graph_from_event_file(blob, path.name), profile)
        return {"seconds": seconds, "ops": len(found.graph.node)}
    from tests.tb_app import OURS, TbApp

    with tempfile.TemporaryDirectory() as logdir:
        app = TbApp(logdir, upload_limit_mb=1024)
        response, seconds = _timed(lambda: app.post(OURS + "/upload", blob, filename=path.name), profile)
        app.ours.pool.close()
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return {"seconds": seconds, "ops": json.loads(response.get_data())["ops"]}


def _timed(call, profile: int):
    """``(call(), seconds)``; under cProfile when ``profile`` > 0 (then slower: see the docstring)."""
    if not profile:
        start = time.perf_counter()
        result = call()
        return result, time.perf_counter() - start
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    start = time.perf_counter()
    result = profiler.runcall(call)
    seconds = time.perf_counter() - start
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(profile)
    return result, seconds


def _child(kind: str, path: Path, code: Path) -> dict:
    cmd = [sys.executable, "-m", "bench.bench_upload", "measure", kind, str(path), "--code", str(code)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(files: list[Path], before: Path, after: Path, repeats: int) -> dict:
    results: dict = {}
    for path in files:
        for kind in ("route", "parse"):
            runs: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(repeats):
                for label, code in (("before", before), ("after", after)):
                    got = _child(kind, path, code)
                    runs[label].append(got["seconds"])
                    print(f"{path.name} {kind} {label}: {got['seconds']:.3f} s ({got['ops']} ops)", flush=True)
            med = {label: statistics.median(values) for label, values in runs.items()}
            med["speedup"] = med["before"] / med["after"]
            results[f"{path.parent.name}/{path.name} {path.stat().st_size / 1e6:.1f} MB {kind}"] = med
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("write", help="write the ~50 MB frozen-model event file (TensorFlow)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p = sub.add_parser("compare", help="time before/after, alternating, fresh process each")
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--before", type=Path, required=True, help="checkout of the old code")
    p.add_argument("--after", type=Path, default=REPO, help="checkout of the new code (default: this one)")
    p.add_argument("--repeats", type=int, default=3)
    p = sub.add_parser("measure", help="(internal) one timing, printed as JSON")
    p.add_argument("kind", choices=("route", "parse"))
    p.add_argument("file", type=Path)
    p.add_argument("--code", type=Path, required=True)
    p.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's N costliest functions")
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.out)
    elif args.command == "measure":
        print(json.dumps(measure(args.kind, args.file, args.code, args.profile)))
    else:
        print(json.dumps(compare(args.files, args.before, args.after, args.repeats), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
