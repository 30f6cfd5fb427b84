"""Real ``.onnx`` files written by ``torch.onnx.export``, and torch's own record of each node's
module calls, for the ONNX tests (``tests/conftest.py``: fixture ``onnx_files``).

Run as ``python -m tests.onnx_files OUTDIR`` (a subprocess: the tests themselves import neither
torch nor onnx, as the server does not). Writes, for two models written by hand here:

- ``cnn`` (``TinyResNet``: a stem, ``layer1`` = two ``BasicBlock``s, each calling its ``relu``
  twice, then a ``BasicBlock`` ``mix`` called twice with an op between the calls, a head) and
- ``bert`` (Hugging Face ``BertModel`` from a small config, in a module taking ``input_ids``
  and returning the last hidden state),

``<model>.onnx`` with the default (torch.export-based) exporter, weights in ``<model>.onnx.data``
as it writes them by default, and ``<model>_legacy.onnx`` with ``dynamo=False`` (TorchScript).
``truth.json`` holds what torch and onnx say about each file, for the tests to compare with:

- ``calls[<model>]``: per default-exporter file, each ONNX node name -> the module calls on its
  stack as torch.export recorded them in the program the file was made from
  (``ONNXProgram.exported_program``, ``nn_module_stack``): ``[[module path, class, call
  index], ...]``, the call index the ``@k`` of torch.export's key (0 for the first call);
- ``graphs[<file stem>]``: the file as the ``onnx`` package reads it: ``nodes`` (name ->
  ``[op_type, domain, inputs, outputs]``), ``inputs``, ``outputs``, ``initializers`` (names).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

BERT_CONFIG = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                   vocab_size=100)


def _models():
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + x)

    class TinyResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.layer1 = nn.Sequential(BasicBlock(8), BasicBlock(8))
            self.mix = BasicBlock(8)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            x = self.layer1(self.conv1(x))
            x = self.mix(x) * 0.5
            x = self.mix(x)
            return self.fc(torch.flatten(self.pool(x), 1))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            from transformers import BertConfig, BertModel

            self.bert = BertModel(BertConfig(**BERT_CONFIG))

        def forward(self, input_ids):
            return self.bert(input_ids=input_ids).last_hidden_state

    torch.manual_seed(0)
    return {
        "cnn": (TinyResNet().eval(), (torch.randn(1, 3, 8, 8),), ["x"], ["logits"]),
        "bert": (Bert().eval(), (torch.randint(0, 100, (1, 8)),), ["input_ids"], ["hidden"]),
    }


def _module_calls(program) -> dict[str, list]:
    """ONNX node name -> the module calls torch.export recorded for the FX node it came from."""
    import ast

    stacks = {}
    for node in program.exported_program.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            stacks[node.name] = [[path, cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}",
                                  int(key.rsplit("@", 1)[1]) if "@" in key else 0]
                                 for key, (path, cls) in stack.items()]
    calls = {}
    for node in program.model.graph:
        fx_name = ast.literal_eval(node.metadata_props["pkg.torch.onnx.name_scopes"])[-1]
        calls[node.name] = stacks[fx_name]
    return calls


def _graph(path: Path) -> dict:
    import onnx

    g = onnx.load(str(path), load_external_data=False).graph
    initializers = [t.name for t in g.initializer]
    return {
        "nodes": {n.name: [n.op_type, n.domain, list(n.input), list(n.output)] for n in g.node},
        "inputs": [i.name for i in g.input if i.name not in initializers],
        "outputs": [o.name for o in g.output],
        "initializers": initializers,
    }


def write(out: Path) -> None:
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    out.mkdir(parents=True, exist_ok=True)
    truth = {"calls": {}, "graphs": {}}
    for name, (model, args, inputs, outputs) in _models().items():
        program = torch.onnx.export(model, args, str(out / f"{name}.onnx"), dynamo=True, input_names=inputs,
                                    verbose=False)
        truth["calls"][name] = _module_calls(program)
        torch.onnx.export(model, args, str(out / f"{name}_legacy.onnx"), dynamo=False, input_names=inputs,
                          output_names=outputs)
        for stem in (name, f"{name}_legacy"):
            truth["graphs"][stem] = _graph(out / f"{stem}.onnx")
    (out / "truth.json").write_text(json.dumps(truth, indent=1))


if __name__ == "__main__":
    write(Path(sys.argv[1]))
