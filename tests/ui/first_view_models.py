"""Write real logs of the models whose first views issue 23 shows (tall views, one-level-too-
shallow ViTs), in a process of their own:

    python -m tests.ui.first_view_models OUTDIR

Hugging Face models from small configs (random init), each written as a user writes it:

- ``hf_vit``: ``ViTModel`` at ViT-B's depth (12 layers, width 32), by ``tb_graph_plugin.torch.add_graph``;
- ``hf_swin``: ``SwinModel`` at Swin-T's depths (2, 2, 6, 2), by ``tb_graph_plugin.torch.add_graph``;
- ``hf_gpt2_12``: ``GPT2Model`` at GPT-2's depth (12 layers, width 32), by torch's
  ``SummaryWriter.add_graph`` (the JIT trace).

The Keras InceptionV3 trace and UNet come from ``tests/logwriters.py``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

MODELS = ("hf_vit", "hf_swin", "hf_gpt2_12")


def write(outdir: Path) -> None:
    import torch
    import transformers as T
    from torch.utils.tensorboard import SummaryWriter

    from tb_graph_plugin.torch import add_graph

    torch.manual_seed(0)
    outdir.mkdir(parents=True, exist_ok=True)
    vit = T.ViTModel(T.ViTConfig(hidden_size=32, num_hidden_layers=12, num_attention_heads=2, intermediate_size=64,
                                 image_size=32, patch_size=8)).eval()
    swin = T.SwinModel(T.SwinConfig(image_size=32, patch_size=2, embed_dim=8, depths=[2, 2, 6, 2],
                                    num_heads=[1, 1, 2, 2], window_size=2)).eval()
    gpt2 = T.GPT2Model(T.GPT2Config(vocab_size=100, n_embd=32, n_layer=12, n_head=2, n_positions=32,
                                          use_cache=False, return_dict=False)).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        add_graph(str(outdir / "hf_vit"), vit, (torch.rand(1, 3, 32, 32),))
        add_graph(str(outdir / "hf_swin"), swin, (torch.rand(1, 3, 32, 32),))
        with SummaryWriter(str(outdir / "hf_gpt2_12")) as writer:
            writer.add_graph(gpt2, torch.randint(0, 100, (1, 8)), use_strict_trace=False)


if __name__ == "__main__":
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))
    write(Path(sys.argv[1]))
