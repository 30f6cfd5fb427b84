"""Write real logs with ``tb_graph_plugin.torch.add_graph`` (and ``.pt2`` files with
``torch.export.save``) of real models, in a process of their own:

    python -m tests.pytorch.export_logs OUTDIR

Models (random init, configs in code): a hand-written ResNet-like CNN whose ``BasicBlock``
calls its ``relu`` twice (through a ``SummaryWriter``), and Hugging Face GPT-2, LLaMA, Qwen2, T5,
Whisper, Mixtral, BERT and ViT, each as a user calls it (no wrapper, no ``use_cache`` set).
Beside each run, ``expected.json``: the module path and class of every block (from
``named_modules``, the authoring framework, not our rules), and how it was captured.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

BLOCK_CLASSES = {"BasicBlock", "GPT2Block", "LlamaDecoderLayer", "Qwen2DecoderLayer", "T5Block", "WhisperEncoderLayer",
                 "WhisperDecoderLayer", "MixtralDecoderLayer", "BertLayer", "ViTLayer"}


def cnn():
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.down = nn.Conv2d(c_in, c_out, 1, stride, bias=False) if stride != 1 or c_in != c_out else None

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (self.down(x) if self.down is not None else x))  # relu, second call

    class SmallResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU())
            self.layer1 = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 8, 1))
            self.layer2 = nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16, 1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.layer2(self.layer1(self.stem(x)))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    return SmallResNet().eval(), (torch.rand(1, 3, 16, 16),), {}


def hf(name):
    import torch
    import transformers as T

    ids = torch.randint(0, 100, (1, 8))
    if name == "gpt2":
        return T.GPT2LMHeadModel(T.GPT2Config(n_embd=32, n_layer=3, n_head=2, vocab_size=100, n_positions=64,
                                              bos_token_id=0, eos_token_id=0)), (ids,), {}
    if name == "llama":
        return T.LlamaForCausalLM(T.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                                num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                                                max_position_embeddings=64, bos_token_id=0, eos_token_id=0)), (ids,), {}
    if name == "qwen2":  # its mask is built in a dict entry: "full_attention": create_causal_mask(...)
        return T.Qwen2ForCausalLM(T.Qwen2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                                num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                                                max_position_embeddings=64, bos_token_id=0, eos_token_id=0)), (ids,), {}
    if name == "t5":
        return T.T5ForConditionalGeneration(T.T5Config(d_model=32, d_ff=64, num_layers=2, num_heads=2, d_kv=16,
                                                       vocab_size=100)), (), {"input_ids": ids, "decoder_input_ids": ids[:, :6]}
    if name == "whisper":
        return T.WhisperForConditionalGeneration(T.WhisperConfig(
            d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
            encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16, max_target_positions=32,
            vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)), \
            (torch.rand(1, 16, 32),), {"decoder_input_ids": ids[:, :4]}
    if name == "mixtral":
        return T.MixtralForCausalLM(T.MixtralConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                                    num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                                                    num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=64,
                                                    bos_token_id=0, eos_token_id=0)), (ids,), {}
    if name == "bert":
        return T.BertModel(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                        intermediate_size=37, vocab_size=100)), (ids,), {}
    if name == "vit":
        return T.ViTModel(T.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                                      image_size=32, patch_size=8)), (torch.rand(1, 3, 32, 32),), {}
    raise KeyError(name)


MODELS = ("cnn", "gpt2", "llama", "qwen2", "t5", "whisper", "mixtral", "bert", "vit")


def write(outdir: Path) -> None:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    from tb_graph_plugin.torch import add_graph

    torch.manual_seed(0)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "files").mkdir(exist_ok=True)
    for name in MODELS:
        model, args, kwargs = cnn() if name == "cnn" else hf(name)
        model.eval()
        run = outdir / name
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if name == "cnn":  # through a SummaryWriter, at step 3
                with SummaryWriter(str(run)) as writer:
                    add_graph(writer, model, args, kwargs, step=3)
            else:
                add_graph(str(run), model, args, kwargs)
        blocks = [[path, type(m).__name__] for path, m in model.named_modules() if type(m).__name__ in BLOCK_CLASSES]
        notes = [str(w.message) for w in caught if "tb_graph_plugin" in str(w.message)]
        (run / "expected.json").write_text(json.dumps({"blocks": blocks, "notes": notes}))
        if name in ("cnn", "bert"):
            program = torch.export.export(model, args, kwargs or None, strict=False)
            torch.export.save(program, str(outdir / "files" / f"{name}.pt2"))


if __name__ == "__main__":
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))
    write(Path(sys.argv[1]))
