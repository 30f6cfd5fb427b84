"""What one op costs, by op type: the formula tables of ``graph.cost`` (PyTorch aten, TensorFlow,
ONNX, JAX primitives).

A rule turns what the graph records of one op (:class:`OpFacts`: its output shapes, its inputs'
shapes in argument order, its attrs) into FLOPs, or ``None`` when those facts do not say
(a shape unknown, an attr missing): the op is then counted as unknown, never as 0.

Counting follows ``torch.utils.flop_counter`` ([TORCH-FLOPS] in docs/references.md) where it
counts: a multiply-add is 2 FLOPs; a matmul ``[.., M, K] @ [.., K, N]`` is ``2·M·K·N`` per batch
element, a bias add is not counted (``addmm`` is ``mm``); a convolution is ``2 · prod(output) ·
prod(weight[1:])`` (groups and depthwise included: the weight holds ``C_in / groups``), a
transposed one ``2 · prod(input) · prod(weight[1:])``; attention (``scaled_dot_product_attention``)
its two matmuls, ``2·B·H·Sq·Sk·(D + Dv)``, nothing for the softmax. Where torch counts nothing
(element-wise ops, norms, reductions), this counts what a plain kernel does, the figures in the
tables: 1 FLOP per output element for an element-wise op (``ELEMENTWISE``), 5 per element for a
norm or a softmax (``NORM``: mean, variance, normalise, scale and shift), 1 per input element for a
reduction or a pooling (``REDUCE``), 0 for ops that only move or view data (``MOVE``).

Keys are op types as the graph records them: ``aten::linear`` (``tb_graph_plugin.torch``,
``.pt2``; an in-place ``aten::add_`` and an overload ``aten::add.Tensor`` are looked up as
``aten::add``), ``onnx::MatMul`` (``.onnx``), ``MatMul`` (TensorFlow), ``jax::dot_general``
(``tb_graph_plugin.jax``; its parameters are ``jax::parameter`` ops; ``dot_general`` reads its
contracting dims from attr ``dimension_numbers``, ``conv_general_dilated`` its kernel's output-feature
dim from the same attr).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
from typing import Any, Callable, Optional

__all__ = ["OpFacts", "Rule", "RULES", "PARAMETER_OPS", "rule_of", "prod"]

Shape = Optional[tuple]


def prod(shape) -> int:
    return math.prod(shape) if shape else 1


@dataclasses.dataclass
class OpFacts:
    """One op as its rule sees it. ``outs``/``ins``: shapes (tuples of dims, every dim known) or
    None where not known; ``attr(key)`` reads the op's attr (None if absent)."""

    op: str
    outs: list
    ins: list
    attr: Callable[[str], Any]

    def out(self, k: int = 0) -> Shape:
        return self.outs[k] if k < len(self.outs) else None

    def inp(self, k: int) -> Shape:
        return self.ins[k] if k < len(self.ins) else None


Rule = Callable[[OpFacts], Optional[int]]


def _zero(f: OpFacts) -> Optional[int]:
    return 0


def _per_out(k: int) -> Rule:
    def rule(f: OpFacts) -> Optional[int]:
        s = f.out(0)
        return None if s is None else k * prod(s)
    return rule


def _per_in(f: OpFacts) -> Optional[int]:
    s = f.inp(0)
    return None if s is None else prod(s)


def _matmul_k(a: Shape, transposed: bool = False) -> Optional[int]:
    if a is None or not a:
        return None
    if len(a) == 1:
        return a[0]
    return a[-2] if transposed else a[-1]


def _matmul(a_index: int = 0, transpose_attr: Optional[str] = None) -> Rule:
    """``2 · prod(output) · K``, K the contracted size read off input ``a_index``."""
    def rule(f: OpFacts) -> Optional[int]:
        out = f.out(0)
        t = bool(f.attr(transpose_attr)) if transpose_attr else False
        k = _matmul_k(f.inp(a_index), t)
        return None if out is None or k is None else 2 * prod(out) * k
    return rule


def _linear(f: OpFacts) -> Optional[int]:
    out, w = f.out(0), f.inp(1)
    return None if out is None or not w else 2 * prod(out) * w[-1]


def _gemm(f: OpFacts) -> Optional[int]:  # ONNX Gemm: A' (M x K) times B'
    return _matmul(0, "transA")(f)


def _torch_conv(f: OpFacts) -> Optional[int]:
    transposed = bool(f.attr("transposed")) or "transpose" in f.op
    x, w, out = f.inp(0), f.inp(1), f.out(0)
    if w is None or (x if transposed else out) is None:
        return None
    return 2 * prod(x if transposed else out) * prod(w[1:])


def _tf_conv(f: OpFacts) -> Optional[int]:  # filter [kh, kw, (kd,) C_in / groups, C_out]
    w, out = f.inp(1), f.out(0)
    return None if w is None or out is None else 2 * prod(out) * prod(w[:-1])


def _tf_depthwise(f: OpFacts) -> Optional[int]:  # filter [kh, kw, C_in, multiplier]
    w, out = f.inp(1), f.out(0)
    return None if w is None or out is None else 2 * prod(out) * prod(w[:-2])


def _tf_conv_transpose(f: OpFacts) -> Optional[int]:  # Conv2DBackpropInput(sizes, filter, out_backprop)
    w, dy = f.inp(1), f.inp(2)
    return None if w is None or dy is None else 2 * prod(dy) * prod(w[:-1])


def _sdpa(f: OpFacts) -> Optional[int]:
    q, k, v = f.inp(0), f.inp(1), f.inp(2)
    if q is None or k is None or v is None or len(q) < 2:
        return None
    return 2 * prod(q[:-1]) * k[-2] * (q[-1] + v[-1])


_EINSUM_TERM = re.compile(r"^[A-Za-z.]*$")


def _einsum(f: OpFacts) -> Optional[int]:
    """``2 · prod(size of every index)`` for two operands (one: each index once), as a plain loop
    nest computes it; ellipsis terms are taken from the output's leading dims."""
    eq = f.attr("equation")
    if isinstance(eq, bytes):
        eq = eq.decode("utf-8", "replace")
    if not isinstance(eq, str) or "->" not in eq:
        return None
    lhs, _ = eq.replace(" ", "").split("->", 1)
    terms = lhs.split(",")
    if not all(_EINSUM_TERM.match(t) for t in terms):
        return None
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, f.ins):
        if shape is None:
            return None
        letters = term.replace("...", "")
        dims = shape[len(shape) - len(letters):] if "..." in term else shape
        if len(dims) != len(letters):
            return None
        if "..." in term:
            sizes.setdefault("...", prod(shape[:len(shape) - len(letters)]))
        sizes.update(zip(letters, dims))
    if len(terms) > len([s for s in f.ins if s is not None]):
        return None
    return (2 if len(terms) > 1 else 1) * prod(sizes.values())


def _addn(f: OpFacts) -> Optional[int]:
    s = f.out(0)
    return None if s is None else max(len(f.ins) - 1, 1) * prod(s)


def _jax_dot_general(f: OpFacts) -> Optional[int]:
    """``2 · prod(out) · K``, K the product of the lhs contracting dims of attr
    ``dimension_numbers`` (``(((lhs_contract), (rhs_contract)), ((lhs_batch), (rhs_batch)))``, as
    ``jax.lax.dot_general`` takes it, written as text)."""
    a, out, dims = f.inp(0), f.out(0), f.attr("dimension_numbers")
    if isinstance(dims, bytes):
        dims = dims.decode("utf-8", "replace")
    if a is None or out is None or not isinstance(dims, str):
        return None
    try:
        (contract, _), _ = ast.literal_eval(dims)
        return 2 * prod(out) * prod([a[d] for d in contract])
    except (ValueError, SyntaxError, TypeError, IndexError):
        return None


_RHS_SPEC = re.compile(r"rhs_spec=\((\d+)")


def _jax_conv(f: OpFacts) -> Optional[int]:
    """``jax.lax.conv_general_dilated``: ``2 · prod(out) · prod(kernel) / O``, O the kernel's
    output-feature dim (the first of ``rhs_spec`` in attr ``dimension_numbers``, written as
    ``ConvDimensionNumbers(lhs_spec=..., rhs_spec=(3, 2, 0, 1), ...)``): each output element is a
    sum over one output channel's kernel, whatever the feature groups (depthwise), strides or
    kernel dilations; a transposed convolution (``lhs_dilation`` > 1: zeros inserted between the
    inputs) divided by the dilation's product, the multiplies by those zeros not counted, as
    ``torch.utils.flop_counter`` counts a transposed convolution and XLA's cost analysis does."""
    kernel, out, dims = f.inp(1), f.out(0), f.attr("dimension_numbers")
    if isinstance(dims, bytes):
        dims = dims.decode("utf-8", "replace")
    m = _RHS_SPEC.search(dims) if isinstance(dims, str) else None
    if kernel is None or out is None or m is None or int(m.group(1)) >= len(kernel) or not kernel[int(m.group(1))]:
        return None
    dilation = f.attr("lhs_dilation")
    spread = prod(dilation) if isinstance(dilation, (list, tuple)) and all(isinstance(d, int) and d > 0 for d in dilation) else 1
    return 2 * prod(out) * prod(kernel) // kernel[int(m.group(1))] // spread


ELEMENTWISE = 1
NORM = 5

_ATEN_MOVE = """view reshape _unsafe_view transpose t permute expand expand_as slice select unsqueeze squeeze
flatten unflatten contiguous clone cat concat concatenate stack split split_with_sizes chunk unbind narrow
index_select gather index embedding dropout alias detach to _to_copy type_as arange zeros ones full zeros_like
ones_like full_like new_zeros new_ones new_full new_empty empty empty_like scalar_tensor lift_fresh_copy repeat
tile roll flip pad constant_pad_nd copy masked_select tril triu sym_size item lift_fresh movedim swapaxes
as_strided diagonal fill scatter index_put slice_scatter select_scatter unfold _assert_tensor_metadata
block_diag meshgrid one_hot""".split()
_ATEN_ELEMENTWISE = """add sub mul div neg abs relu relu6 gelu silu sigmoid tanh exp log log1p sqrt rsqrt pow erf
clamp clamp_min clamp_max maximum minimum where masked_fill eq ne lt le gt ge logical_not logical_and logical_or
bitwise_not bitwise_and bitwise_or reciprocal sin cos hardtanh hardswish hardsigmoid leaky_relu elu selu celu
softplus mish floor ceil round sign square lerp rsub addcmul addcdiv isnan isinf exp2 expm1 floor_divide
remainder fmod trunc frac prelu glu logit sgn cumprod __and__ __or__ __xor__ __invert__ diff bitwise_xor""".split()
_ATEN_NORM = """layer_norm native_layer_norm rms_norm group_norm native_group_norm batch_norm
_native_batch_norm_legit_no_training _native_batch_norm_legit instance_norm softmax _softmax log_softmax
_log_softmax _safe_softmax""".split()
_ATEN_REDUCE = """sum mean amax amin max min argmax argmin prod var std var_mean std_mean norm linalg_vector_norm
cumsum logsumexp all any count_nonzero max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d
adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool2d max_pool2d_with_indices
topk sort""".split()
_ATEN_MATMUL: dict[str, Rule] = {
    "linear": _linear, "matmul": _matmul(0), "mm": _matmul(0), "bmm": _matmul(0), "addmm": _matmul(1),
    "baddbmm": _matmul(1), "addbmm": _matmul(1), "dot": _matmul(0), "mv": _matmul(0), "einsum": _einsum,
    "conv1d": _torch_conv, "conv2d": _torch_conv, "conv3d": _torch_conv, "convolution": _torch_conv,
    "_convolution": _torch_conv, "conv_transpose1d": _torch_conv, "conv_transpose2d": _torch_conv,
    "conv_transpose3d": _torch_conv, "scaled_dot_product_attention": _sdpa,
    "_scaled_dot_product_flash_attention": _sdpa, "_scaled_dot_product_efficient_attention": _sdpa,
    "_scaled_dot_product_flash_attention_for_cpu": _sdpa, "_scaled_dot_product_cudnn_attention": _sdpa,
}

_TF_MOVE = """Identity IdentityN Reshape Transpose ExpandDims Squeeze ConcatV2 Concat Pack Unpack Split SplitV
StridedSlice Slice GatherV2 Gather ResourceGather Shape ShapeN Size Rank Fill Range Const Placeholder
PlaceholderWithDefault NoOp StopGradient Cast Tile Pad PadV2 MirrorPad ZerosLike OnesLike ReadVariableOp _Arg
_Retval _Recv _Send Assign AssignVariableOp VarIsInitializedOp IsVariableInitialized Enter Exit Merge Switch
NextIteration LoopCond BroadcastTo BroadcastArgs OneHot Snapshot PreventGradient CheckNumerics EnsureShape
TensorListFromTensor TensorListStack TensorListReserve TensorListSetItem TensorListGetItem
SaveV2 RestoreV2 MergeV2Checkpoints StringJoin ShardedFilename""".split()
_TF_ELEMENTWISE = """Add AddV2 Sub Mul RealDiv Div DivNoNan FloorDiv FloorMod Mod Maximum Minimum Relu Relu6 Elu
Selu Gelu Sigmoid Tanh Exp Log Log1p Sqrt Rsqrt Square SquaredDifference Pow Neg Abs Erf Erfc BiasAdd LeakyRelu
Softplus Softsign Floor Ceil Round Sign Reciprocal Inv Greater GreaterEqual Less LessEqual Equal NotEqual
LogicalAnd LogicalOr LogicalNot Select SelectV2 Sin Cos IsNan IsFinite Expm1 ClipByValue Relu6Grad ReluGrad
SigmoidGrad TanhGrad RsqrtGrad SqrtGrad BiasAddGrad RandomUniform RandomStandardNormal TruncatedNormal""".split()
_TF_NORM = "FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3 Softmax LogSoftmax LRN".split()
_TF_REDUCE = "Sum Mean Max Min Prod ArgMax ArgMin All Any MaxPool MaxPoolV2 AvgPool MaxPool3D AvgPool3D".split()
_TF_MATMUL: dict[str, Rule] = {
    "MatMul": _matmul(0, "transpose_a"), "_FusedMatMul": _matmul(0, "transpose_a"),
    "BatchMatMul": _matmul(0, "adj_x"), "BatchMatMulV2": _matmul(0, "adj_x"), "BatchMatMulV3": _matmul(0, "adj_x"),
    "Conv2D": _tf_conv, "Conv3D": _tf_conv, "_FusedConv2D": _tf_conv, "DepthwiseConv2dNative": _tf_depthwise,
    "Conv2DBackpropInput": _tf_conv_transpose, "Conv3DBackpropInputV2": _tf_conv_transpose,
    "Einsum": _einsum, "AddN": _addn,
}

_ONNX_MOVE = """Reshape Transpose Unsqueeze Squeeze Slice Gather GatherElements GatherND Concat Expand Shape Cast
CastLike Constant ConstantOfShape Identity Flatten Split Range Tile Pad Dropout Size ScatterND ScatterElements
Trilu OneHot SplitToSequence SequenceAt""".split()
_ONNX_ELEMENTWISE = """Add Sub Mul Div Relu Sigmoid Tanh Erf Sqrt Pow Exp Log Neg Abs Gelu Where Equal Less
LessOrEqual Greater GreaterOrEqual Not And Or Xor Max Min Clip LeakyRelu HardSigmoid HardSwish Reciprocal
Softplus Sin Cos IsNaN IsInf Floor Ceil Round Sign Elu Selu Mod PRelu Mish BitwiseAnd BitwiseOr BitwiseNot""".split()
_ONNX_NORM = """LayerNormalization BatchNormalization InstanceNormalization GroupNormalization
SimplifiedLayerNormalization RMSNormalization Softmax LogSoftmax""".split()
_ONNX_REDUCE = """ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceL2 ReduceL1 ReduceSumSquare
ReduceLogSumExp ArgMax ArgMin GlobalAveragePool GlobalMaxPool MaxPool AveragePool CumSum TopK""".split()
_ONNX_MATMUL: dict[str, Rule] = {"MatMul": _matmul(0), "Gemm": _gemm, "Conv": _torch_conv,
                                 "ConvTranspose": lambda f: _torch_conv(dataclasses.replace(f, op="transpose")),
                                 "Einsum": _einsum}

# JAX primitives (jax.core.Primitive names: ``tb_graph_plugin.jax`` names op types ``jax::<primitive>``).
_JAX_MOVE = """reshape transpose broadcast_in_dim squeeze expand_dims concatenate slice dynamic_slice
dynamic_update_slice gather scatter convert_element_type iota select_n copy pad rev pjit custom_jvp_call
custom_vjp_call stop_gradient""".split()
_JAX_ELEMENTWISE = """add sub mul div neg abs max min exp log sqrt rsqrt pow integer_pow tanh logistic erf
erf_inv sin cos eq ne lt le gt ge and or not sign floor ceil round square add_any is_finite log1p expm1 exp2
clamp rem atan2 tan""".split()
_JAX_REDUCE = "reduce_sum reduce_max reduce_min reduce_prod argmax argmin reduce_and reduce_or cumsum".split()
_JAX_MATMUL: dict[str, Rule] = {"dot_general": _jax_dot_general, "conv_general_dilated": _jax_conv}


def _table() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    move, elementwise, norm = _zero, _per_out(ELEMENTWISE), _per_out(NORM)
    for prefix, table in (
        ("aten::", (_ATEN_MOVE, _ATEN_ELEMENTWISE, _ATEN_NORM, _ATEN_REDUCE, _ATEN_MATMUL)),
        ("", (_TF_MOVE, _TF_ELEMENTWISE, _TF_NORM, _TF_REDUCE, _TF_MATMUL)),
        ("onnx::", (_ONNX_MOVE, _ONNX_ELEMENTWISE, _ONNX_NORM, _ONNX_REDUCE, _ONNX_MATMUL)),
        ("jax::", (_JAX_MOVE, _JAX_ELEMENTWISE, [], _JAX_REDUCE, _JAX_MATMUL)),
    ):
        moves, elems, norms, reduces, matmuls = table
        rules.update({prefix + o: move for o in moves})
        rules.update({prefix + o: elementwise for o in elems})
        rules.update({prefix + o: norm for o in norms})
        rules.update({prefix + o: _per_in for o in reduces})
        rules.update({prefix + o: r for o, r in matmuls.items()})
    # graph plumbing every front end shares: inputs, outputs, constants, parameters
    for op in ("IO Node", "Const", "Parameter", "torch::parameter", "torch::buffer", "torch::constant", "jax::parameter",
               "VariableV2", "Variable", "VarHandleOp", "prim::GetAttr", "prim::Constant", "prim::ListConstruct",
               "prim::TupleConstruct", "prim::TupleUnpack", "prim::ListUnpack", "python::getitem"):
        rules[op] = move
    return rules


RULES: dict[str, Rule] = _table()

#: Op types whose output is a parameter (its elements are ``params``, never ``output_bytes``).
PARAMETER_OPS = frozenset({"torch::parameter", "Parameter", "VariableV2", "Variable", "VarHandleOp", "jax::parameter"})

_OVERLOAD = re.compile(r"\.[A-Za-z_]+$")


def rule_of(op: str) -> Optional[Rule]:
    """The rule of op type ``op``: exact, else without an overload (``aten::add.Tensor``) or an
    in-place ``_`` (``aten::relu_``). None: an op these tables do not know.

    >>> f = OpFacts(op="aten::relu_", outs=[(2, 8)], ins=[(2, 8)], attr=lambda key: None)
    >>> rule_of("aten::relu_")(f), rule_of("aten::linear.default") is rule_of("aten::linear"), rule_of("Mystery")
    (16, True, None)
    """
    rule = RULES.get(op)
    if rule is None and "::" in op:
        base = _OVERLOAD.sub("", op)
        rule = RULES.get(base) or (RULES.get(base[:-1]) if base.endswith("_") and not base.endswith("__") else None)
    return rule
