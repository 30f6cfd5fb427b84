"""Hugging Face models from small configs captured with ``tb_graph_plugin.torch.add_graph``, and what
torch itself says they cost, for ``tests/hierarchy/test_cost.py``; in a process of its own:

    python -m tests.pytorch.cost_models OUTDIR          # torch (and the .onnx of BERT)
    python -m tests.pytorch.cost_models OUTDIR keras    # Keras (TensorFlow), apart

Writes ``OUTDIR/<model>/`` (a run graph) for BERT, GPT-2 and LLaMA (random init, no download), a
BERT with a wider MLP (``bert_wide``), a tied-weights GPT-2 LM head model, a CNN with every kind
of convolution (``convnet``), ``OUTDIR/bert.onnx`` and ``OUTDIR/convnet.onnx`` (those two, exported),
and ``OUTDIR/truth.json``: per model, ``modules`` (module path ->
``sum(p.numel())`` of its parameters, ``named_modules``), ``params`` (``sum(p.numel() for p in
model.parameters())``: tied weights once) and ``flops`` (``torch.utils.flop_counter.FlopCounterMode``'s
total on the same input; attention through the math kernel, whose matmuls it counts: on CPU the
fused kernel it would pick is not in its table and counts 0).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

SEQ = 16


def convnet():
    """Convolutions of every kind torch counts: plain, grouped, depthwise, transposed (and grouped),
    1-d; then a linear head."""
    import torch
    from torch import nn

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1)
            self.bn = nn.BatchNorm2d(16)
            self.grouped = nn.Conv2d(16, 16, 3, padding=1, groups=4, bias=False)
            self.depthwise = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
            self.up = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
            self.up_grouped = nn.ConvTranspose2d(8, 8, 3, padding=1, groups=2)
            self.line = nn.Conv1d(8, 4, 5)
            self.head = nn.Linear(4 * 252, 10)

        def forward(self, x):
            x = torch.relu(self.bn(self.stem(x)))
            x = self.up_grouped(self.up(self.depthwise(self.grouped(x))))
            x = self.line(x.flatten(2))  # [1, 8, 256] -> [1, 4, 252]
            return self.head(x.flatten(1))

    torch.manual_seed(0)
    return ConvNet(), torch.randn(1, 3, 16, 16)


def models():
    import torch
    from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, GPT2Model, LlamaConfig,
                              LlamaModel)

    torch.manual_seed(0)
    ids = torch.randint(0, 100, (1, SEQ))
    gpt2 = dict(n_embd=128, n_layer=2, n_head=4, vocab_size=100, n_positions=64, bos_token_id=0, eos_token_id=0)
    return {
        "bert": (BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=512, vocab_size=100)), ids),
        "bert_wide": (BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=768, vocab_size=100)), ids),  # for tb-graph diff
        "gpt2": (GPT2Model(GPT2Config(**gpt2)), ids),
        "llama": (LlamaModel(LlamaConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                         num_key_value_heads=2, intermediate_size=256, vocab_size=100,
                                         bos_token_id=0, eos_token_id=0)), ids),
        "gpt2_lm_tied": (GPT2LMHeadModel(GPT2Config(**gpt2)), ids),
        "convnet": convnet(),
    }


def write(out: Path) -> dict:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from tb_graph_plugin.torch import add_graph

    warnings.filterwarnings("ignore")
    truth = {}
    for name, (model, ids) in models().items():
        model.eval()
        add_graph(str(out / name), model, (ids,))
        with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
            model(ids)
        truth[name] = {
            "modules": {path: sum(p.numel() for p in m.parameters()) for path, m in model.named_modules()},
            "params": sum(p.numel() for p in model.parameters()),
            "flops": counter.get_total_flops(),
        }
        if name == "convnet":
            torch.onnx.export(model, (ids,), str(out / "convnet.onnx"), dynamo=True, input_names=["x"], verbose=False)
        if name == "bert":  # the same model as an .onnx file (default exporter); weights all distinct, as
            # trained ones are (the exporter stores equal initializers once: the ones and zeros of a fresh init)
            with torch.no_grad():
                for p in model.parameters():
                    p.normal_(0, 0.02)
            torch.onnx.export(model, (ids,), str(out / "bert.onnx"), dynamo=True, input_names=["input_ids"],
                              verbose=False)
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    return truth


def write_keras(out: Path) -> dict:
    """``<model>.json`` (``model.to_json()``, what the Keras callback writes as the conceptual graph)
    and ``keras_truth.json`` (``model.count_params()``) for a small CNN and a BERT-shaped encoder."""
    from tests import logwriters

    logwriters._quiet_tf()
    truth = {}
    for name, model in (("keras_cnn", logwriters._small_keras_model()),
                        ("keras_bert", logwriters._bert_encoder(2))):
        (out / f"{name}.json").write_text(model.to_json())
        truth[name] = model.count_params()
    (out / "keras_truth.json").write_text(json.dumps(truth))
    return truth


if __name__ == "__main__":
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))
    if sys.argv[2:] == ["keras"]:
        write_keras(Path(sys.argv[1]))
    else:
        write(Path(sys.argv[1]))
