"""Benchmark the training-step capture (issue 41): ``add_graph(..., loss_fn=, optimizer=AdamW)``.

Usage::

    python -m bench.bench_torch_train_step [--layers 24] [--repeat 3]
    python -m bench.bench_torch_train_step --meta --repeat 1     # Llama-3-70B shape on the meta device

Default: a LLaMA-shaped Hugging Face model with ``--layers`` layers (hidden 32: tiny widths),
after one real AdamW step (so the optimizer has state), input 1x16; wall and process-CPU
seconds per capture + write (median, min-max), the forward-only ``add_graph`` of the same model
beside it (equal model, less work: no backward, no optimizer), op counts of both, and the peak
RSS of the process. ``--meta``: a ``LlamaForCausalLM`` built under ``torch.device("meta")``
with Llama-3-70B's config (80 layers, hidden 8192, 64 heads, 8 KV heads, MLP 28672, vocab
128256) and a fresh AdamW (no state: the trace shows its first step, the state made inside it);
no weights are allocated, the capture traces on fake tensors.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
import warnings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--meta", action="store_true")
    args = ap.parse_args(argv)
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))  # no TF import
    warnings.filterwarnings("ignore")
    import torch
    import transformers

    from tb_graph_plugin.torch import add_graph

    torch.manual_seed(0)
    if args.meta:
        config = transformers.LlamaConfig(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                                          num_attention_heads=64, num_key_value_heads=8, vocab_size=128256,
                                          max_position_embeddings=8192, rope_theta=500000.0)
        with torch.device("meta"):
            model = transformers.LlamaForCausalLM(config)
        ids = torch.randint(0, 100, (1, 16), device="meta")
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        label = "Llama-3-70B shape, meta device, fresh AdamW"
    else:
        config = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=args.layers,
                                          num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                                          max_position_embeddings=64, bos_token_id=0, eos_token_id=0)
        model = transformers.LlamaForCausalLM(config)
        ids = torch.randint(0, 100, (1, 16))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        model(ids, labels=ids).loss.backward()
        optimizer.step()
        label = f"{args.layers} layers, hidden 32, after one AdamW step"

    def loss_fn(out):
        return out.logits.float().square().mean()

    times, cpu, fwd_times, ops = [], [], [], {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as d:
            t, c = time.perf_counter(), time.process_time()
            g = add_graph(d, model, (ids,), loss_fn=loss_fn, optimizer=optimizer)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            ops["step"] = len(g.node)
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            g = add_graph(d, model, (ids,))
            fwd_times.append(time.perf_counter() - t)
            ops["forward"] = len(g.node)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def fmt(xs):
        return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"

    print(f"LlamaForCausalLM, {label}, {args.repeat} runs, torch {torch.__version__}")
    print(f"  training step (forward, loss, backward, AdamW): {fmt(times)}, cpu {statistics.median(cpu):.2f} s, "
          f"{ops['step']} nodes")
    print(f"  forward only add_graph: {fmt(fwd_times)}, {ops['forward']} nodes")
    print(f"  peak RSS of the process: {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
