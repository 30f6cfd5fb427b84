"""Benchmark PyTorch graph capture + write: ``tb_graph_plugin.torch.add_graph`` vs torch's own
``SummaryWriter.add_graph`` on a 24-layer LLaMA-shaped Hugging Face model (tiny widths).

Usage::

    python -m bench.bench_torch_capture [--layers 24] [--repeat 5]

Same process, alternating, each run into a fresh logdir, wall seconds (median, min-max) and
process-CPU seconds. torch's ``add_graph`` cannot capture ``LlamaForCausalLM`` as called
(``Tracer cannot infer type of CausalLMOutputWithPast``), so it gets what a user must write for
it: ``use_cache=False`` and a wrapper returning the logits (``use_strict_trace=False``); ours
gets the model as called. The work differs: torch writes a JIT graph (names are JIT values),
ours a torch.export program named by module calls; both write one GraphDef event. Also
printed: the node counts of both graphs and, for ours, the time of the export alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))  # no TF import
    warnings.filterwarnings("ignore")
    import torch
    import transformers
    from torch.utils.tensorboard import SummaryWriter

    from tb_graph_plugin.torch import add_graph
    from tb_graph_plugin.torch.capture import capture_model

    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=args.layers,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                                      max_position_embeddings=64, bos_token_id=0, eos_token_id=0)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 100, (1, 16))

    class Logits(torch.nn.Module):  # what torch's add_graph needs
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    wrapped = Logits(model).eval()
    times: dict[str, list] = {"ours": [], "torch": [], "ours_cpu": [], "torch_cpu": [], "export": []}
    nodes = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as d:
            t, c = time.perf_counter(), time.process_time()
            g = add_graph(d, model, (ids,))
            times["ours"].append(time.perf_counter() - t)
            times["ours_cpu"].append(time.process_time() - c)
            nodes["ours"] = len(g.node)
        with tempfile.TemporaryDirectory() as d:
            t, c = time.perf_counter(), time.process_time()
            with SummaryWriter(d) as w:
                w.add_graph(wrapped, ids, use_strict_trace=False)
            times["torch"].append(time.perf_counter() - t)
            times["torch_cpu"].append(time.process_time() - c)
        t = time.perf_counter()
        capture_model(model, (ids,), {})
        times["export"].append(time.perf_counter() - t)
    from torch.utils.tensorboard._pytorch_graph import graph

    nodes["torch"] = len(graph(wrapped, ids, use_strict_trace=False)[0].node)
    model.config.use_cache = True

    def fmt(xs):
        return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"

    print(f"LlamaForCausalLM, {args.layers} layers, hidden 32, seq 16, {args.repeat} runs, torch {torch.__version__}")
    print(f"  ours  tb_graph_plugin.torch.add_graph: {fmt(times['ours'])}, cpu {statistics.median(times['ours_cpu']):.2f} s, "
          f"{nodes['ours']} nodes (export + retry with use_cache off alone: {fmt(times['export'])})")
    print(f"  torch SummaryWriter.add_graph (wrapper, use_cache=False): {fmt(times['torch'])}, "
          f"cpu {statistics.median(times['torch_cpu']):.2f} s, {nodes['torch']} nodes")
    print(f"  ratio ours/torch (median wall): {statistics.median(times['ours']) / statistics.median(times['torch']):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
