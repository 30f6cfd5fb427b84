"""Write real logs of held-out architectures (issue 40: first sight on any architecture), in a
process of their own:

    python -m tests.ui.held_out_models OUTDIR [NAME ...]

Models from ``transformers`` and ``diffusers`` built from tiny configs (random init) that no other
test uses, each captured as a user captures it, with ``tb_graph_plugin.torch.add_graph``:
Gemma 3, Qwen3-MoE, Mamba, Jamba, Pegasus, SigLIP, LLaVA, PatchTST, a ConvNeXt (a stage model),
diffusers' ``UNet2DConditionModel`` and ``AutoencoderKL``, and a Llama-3-70B-shaped model (80
layers at its real widths) built on the meta device (no memory: its tensors have no data).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

MODELS = ("gemma3", "qwen3_moe", "mamba", "jamba", "pegasus", "siglip", "llava", "patchtst", "convnext",
          "unet2d", "vae", "llama70b")


def _builders():
    import torch
    import transformers as T

    ids = torch.randint(0, 100, (1, 8))

    def gemma3():
        cfg = T.Gemma3TextConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                                 num_attention_heads=2, num_key_value_heads=1, head_dim=16, sliding_window=4)
        return T.Gemma3ForCausalLM(cfg), (ids,), {}

    def qwen3_moe():
        cfg = T.Qwen3MoeConfig(vocab_size=100, hidden_size=32, intermediate_size=64, moe_intermediate_size=16,
                               num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                               num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1)
        return T.Qwen3MoeForCausalLM(cfg), (ids,), {}

    def mamba():
        cfg = T.MambaConfig(vocab_size=100, hidden_size=32, state_size=8, num_hidden_layers=3, expand=2)
        return T.MambaForCausalLM(cfg), (ids,), {}

    def jamba():
        cfg = T.JambaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                            num_attention_heads=2, num_key_value_heads=1, num_experts=2, num_experts_per_tok=1,
                            expert_layer_period=2, expert_layer_offset=1, attn_layer_period=2, attn_layer_offset=1,
                            mamba_d_state=8, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=4, use_mamba_kernels=False)
        return T.JambaForCausalLM(cfg), (ids,), {}

    def pegasus():
        cfg = T.PegasusConfig(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2,
                              encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                              decoder_ffn_dim=64, max_position_embeddings=32)
        return T.PegasusForConditionalGeneration(cfg), (ids,), {"decoder_input_ids": ids}

    def siglip():
        cfg = T.SiglipConfig(text_config=dict(vocab_size=100, hidden_size=32, intermediate_size=64,
                                              num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=16),
                             vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                                num_attention_heads=2, image_size=32, patch_size=8))
        return T.SiglipModel(cfg), (ids, torch.rand(1, 3, 32, 32)), {}

    def llava():
        cfg = T.LlavaConfig(
            vision_config=T.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                             num_attention_heads=2, image_size=32, patch_size=8, projection_dim=32),
            text_config=T.LlamaConfig(vocab_size=120, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1),
            image_token_index=110, vision_feature_layer=-1)
        n_img = (32 // 8) ** 2
        tokens = torch.cat([torch.tensor([[1]]), torch.full((1, n_img), 110), torch.randint(0, 100, (1, 6))], 1)
        return T.LlavaForConditionalGeneration(cfg), (), {"input_ids": tokens, "pixel_values": torch.rand(1, 3, 32, 32)}

    def patchtst():
        cfg = T.PatchTSTConfig(num_input_channels=3, context_length=32, patch_length=8, patch_stride=8,
                               prediction_length=8, d_model=32, num_attention_heads=2, num_hidden_layers=2,
                               ffn_dim=64)
        return T.PatchTSTForPrediction(cfg), (torch.rand(1, 32, 3),), {}

    def convnext():
        cfg = T.ConvNextConfig(num_channels=3, hidden_sizes=[8, 16, 32, 64], depths=[2, 2, 3, 2], image_size=32)
        return T.ConvNextModel(cfg), (torch.rand(1, 3, 32, 32),), {}

    def unet2d():
        import diffusers as D
        unet = D.UNet2DConditionModel(sample_size=16, in_channels=4, out_channels=4, layers_per_block=1,
                                      block_out_channels=(8, 16), norm_num_groups=4, cross_attention_dim=16,
                                      attention_head_dim=4,
                                      down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                      up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"))
        return unet, (torch.rand(1, 4, 16, 16), torch.tensor([10]), torch.rand(1, 4, 16)), {}

    def vae():
        import diffusers as D
        vae = D.AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 16),
                              layers_per_block=1, norm_num_groups=4, sample_size=16,
                              down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2)
        return vae, (torch.rand(1, 3, 16, 16),), {}

    def llama70b():
        cfg = T.LlamaConfig(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                            num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=8192,
                            rope_theta=500000.0)
        with torch.device("meta"):
            model = T.LlamaForCausalLM(cfg)
        return model, (torch.zeros(1, 8, dtype=torch.long, device="meta"),), {}

    return {name: f for name, f in locals().items() if name in MODELS}


def write(outdir: Path, names=MODELS) -> None:
    """Each model's run, and ``facts.json``: what torch says of each model (its parameters'
    elements, ``sum(p.numel())``; ``FlopCounterMode``'s total FLOPs of the same call, which counts
    matmuls and convolutions only, and not the attention kernel CPU runs), for the cost tests."""
    import json

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from tb_graph_plugin.torch import add_graph

    torch.manual_seed(0)
    outdir.mkdir(parents=True, exist_ok=True)
    builders = _builders()
    facts = {}
    for name in names:
        model, args, kwargs = builders[name]()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            add_graph(str(outdir / name), model.eval(), args, kwargs=kwargs or None)
            facts[name] = {"params": sum(p.numel() for p in model.parameters())}
            if name != "llama70b":  # on the meta device: nothing runs
                with FlopCounterMode(display=False) as counter, torch.no_grad():
                    model(*args, **(kwargs or {}))
                facts[name]["flop_counter"] = counter.get_total_flops()
    (outdir / "facts.json").write_text(json.dumps(facts, indent=1))


if __name__ == "__main__":
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))
    write(Path(sys.argv[1]), sys.argv[2:] or MODELS)
