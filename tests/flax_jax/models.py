"""Real Flax models for the JAX front end's tests (issue 42): a linen transformer (blocks by
name), the same with its layers under ``nn.scan`` (+ ``nn.remat``), an NNX transformer, an NNX model
whose layers are scanned (``nnx.vmap`` + ``nnx.scan``), and train steps with ``jax.value_and_grad``
(``nnx.value_and_grad``) and optax. Imported only in the log writer's process (``jax_logs.py``)."""

import jax, jax.numpy as jnp
import flax.linen as nn
from flax import nnx
import optax

class Block(nn.Module):
    width: int = 32
    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        h = nn.SelfAttention(num_heads=2)(h)
        x = x + h
        h = nn.Dense(self.width * 2)(nn.LayerNorm()(x))
        return x + nn.Dense(self.width)(nn.gelu(h))

class Transformer(nn.Module):
    layers: int = 3
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(100, 32)(tokens)
        for i in range(self.layers):
            x = Block(name=f"block_{i}")(x)
        return nn.Dense(100)(nn.LayerNorm()(x))

class ScanBlock(nn.Module):
    @nn.compact
    def __call__(self, x, _):
        return Block()(x), None

class ScanTransformer(nn.Module):
    layers: int = 4
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(100, 32)(tokens)
        x, _ = nn.scan(nn.remat(ScanBlock), variable_axes={"params": 0}, split_rngs={"params": True}, length=self.layers)(name="layers")(x, None)
        return nn.Dense(100)(x)

class NBlock(nnx.Module):
    def __init__(self, rngs):
        self.ln1 = nnx.LayerNorm(32, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=2, in_features=32, decode=False, rngs=rngs)
        self.ln2 = nnx.LayerNorm(32, rngs=rngs)
        self.up = nnx.Linear(32, 64, rngs=rngs)
        self.down = nnx.Linear(64, 32, rngs=rngs)
    def __call__(self, x):
        x = x + self.attn(self.ln1(x))
        with jax.named_scope("mlp"):  # a named scope of the author's, around two module calls
            return x + self.down(jax.nn.gelu(self.up(self.ln2(x))))

class NTransformer(nnx.Module):
    def __init__(self, layers, rngs):
        self.embed = nnx.Embed(100, 32, rngs=rngs)
        self.blocks = nnx.List([NBlock(rngs) for _ in range(layers)])
        self.norm = nnx.LayerNorm(32, rngs=rngs)
        self.head = nnx.Linear(32, 100, rngs=rngs)
    def __call__(self, tokens):
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))

def linen_train_step(model, tx):
    @jax.jit
    def train_step(params, opt_state, tokens):
        def loss_fn(p):
            logits = model.apply(p, tokens)
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss
    return train_step


class ScanNNX(nnx.Module):
    def __init__(self, layers, rngs):
        self.embed = nnx.Embed(100, 32, rngs=rngs)

        @nnx.split_rngs(splits=layers)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def make(rngs):
            return NBlock(rngs)

        self.layers = make(rngs)

    def __call__(self, tokens):
        x = self.embed(tokens)

        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
        def body(x, layer):
            return layer(x)

        return body(x, self.layers)


def nnx_train_step():
    @nnx.jit
    def train_step(model, optimizer, tokens):
        def loss_fn(model):
            logits = model(tokens)
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens).mean()
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss
    return train_step
