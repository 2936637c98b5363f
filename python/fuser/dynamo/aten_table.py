"""The aten ops the fuser backend fuses: one row per op overload, saying how
it becomes fd.ops calls (its translator) and when it may (its check).

This table is the one source of truth: the operator support
(support.py) accepts a node iff its op has a row here and the row's
check passes, the decomposition table (decompositions.py) keeps every op
that has a row whole, and the translation (translation.py) looks up the
same row. Adding an op is adding a row.

A row's `kind` tells the partitioner what the op is in eager ATen:

* "view": a view (no kernel): a partition is not made of views alone, and
  views at a partition's edges stay outside it (the eager view is free);
* "matmul": a matrix product, kept out of fusions unless the option
  ``"fuser.fuse_matmul": True`` puts it in;
* "compute": everything else.
"""

import dataclasses
import operator
from typing import Callable, Optional

import torch

from .. import _C
from . import rng
from . import translate_library as library
from . import translate_pointwise as pointwise
from . import translate_reduction as reduction
from . import translate_shape as shape

aten = torch.ops.aten
prims = torch.ops.prims

COMPUTE, VIEW, MATMUL = "compute", "view", "matmul"


@dataclasses.dataclass(frozen=True)
class Row:
    translate: Callable
    # node -> None when the node may be fused, else why not (a phrase).
    check: Optional[Callable] = None
    kind: str = COMPUTE
    # Flash attention's random state is a fake tensor on the meta device
    # at compile time (its device is chosen at run time): allowed here.
    meta_tensors: bool = False


# --- checks -----------------------------------------------------------------------


def _argument(node, index, name, default=None):
    """A node's argument, given by position or by name."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _to_copy_stays_on_device(node):
    """_to_copy fuses as a cast or copy on one device, strided."""
    source = node.args[0].meta.get("val")
    device = node.kwargs.get("device")
    if device is not None and source is not None:
        target = torch.device(device)
        if target.type != source.device.type or target.index not in (None, source.device.index):
            return f"a copy to another device ({source.device} to {target})"
    layout = node.kwargs.get("layout")
    if layout not in (None, torch.strided):
        return f"layout {layout}"
    return None


def _integral_correction(node):
    correction = node.kwargs.get("correction")
    if correction is not None and correction != int(correction):
        return f"a non-integral correction {correction}"
    return None


_MATMUL_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _matmul_operands(node):
    """Half, bfloat16 or float operands of one dtype (fuser's matmul)."""
    tensors = [a for a in node.args if isinstance(a, torch.fx.Node)]
    dtypes = {t.meta["val"].dtype for t in tensors if "val" in t.meta}
    if len(dtypes) != 1 or not dtypes <= set(_MATMUL_DTYPES):
        return f"operands of dtypes {sorted(str(d) for d in dtypes)}"
    return None


def _slice_scatter_of_steps_of_one(node):
    """slice_scatter with step 1 along an axis of a known size."""
    if _argument(node, 5, "step", 1) != 1:
        return "a slice_scatter with a step other than 1"
    value = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    dim = _argument(node, 2, "dim", 0)
    if value is None or not isinstance(value.shape[dim], int):
        return "a slice_scatter along an axis of symbolic size"
    return None


def _dense_embedding(node):
    if _argument(node, 4, "sparse", False):
        return "a sparse embedding"
    return None


# Results of _scaled_dot_product_flash_attention fuser does not give.
_FLASH_UNSUPPORTED_RESULTS = (2, 3, 4, 5, 8)


def _flash_attention_results(node):
    if _argument(node, 5, "return_debug_mask", False):
        return "return_debug_mask=True"
    for user in node.users:
        if user.target is not operator.getitem:
            return f"a use of the whole result by {user.name}"
        if user.args[1] in _FLASH_UNSUPPORTED_RESULTS:
            return f"a use of result {user.args[1]} (fuser gives 0, 1, 6 and 7)"
    return None


def _flash_attention_dense(node):
    cumulative = (_argument(node, 6, "cum_seq_q"), _argument(node, 7, "cum_seq_k"))
    if cumulative != (None, None):
        return "cumulative sequence lengths (nested tensors)"
    return None


def _integer_arange(node):
    """arange of ints (a floating-point arange's length depends on
    rounding), with a step other than 1 only when all are known."""
    if node.target == aten.arange.default:
        start, end, step = 0, _argument(node, 0, "end"), 1
    else:
        start, end = _argument(node, 0, "start"), _argument(node, 1, "end")
        step = _argument(node, 2, "step", 1)
    if not node.meta["val"].dtype.is_floating_point and isinstance(step, int):
        if step == 1 or all(isinstance(v, int) for v in (start, end)):
            return None
    return f"arange({start}, {end}, {step}) of {node.meta['val'].dtype}"


def _gelu_approximation(node):
    approximate = node.kwargs.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        return f"approximate={approximate!r}"
    return None


# --- the table ----------------------------------------------------------------------

# fuser's unary ops (csrc/ir/unary_ops.def, through fuser._C) that ATen has
# under the same name with the same meaning; these are not: gelu has its
# own row (its `approximate`), and real, imag and conj of a complex tensor
# are views or lazy conjugates in ATen.
_UNARY_OWN_MEANING = {"gelu", "real", "imag", "conj"}
UNARY_PREDICATES = list(_C.unary_predicates)
UNARY_MATH = [
    name
    for name in _C.unary_ops
    if name not in _UNARY_OWN_MEANING
    and name not in UNARY_PREDICATES
    and hasattr(torch.ops.aten, name)
]
BINARY_ARITHMETIC = {
    # aten packet: fd.ops name; for its Tensor, Scalar and default overloads
    "add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "maximum",
    "minimum": "minimum", "remainder": "remainder", "fmod": "fmod", "atan2": "atan2",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
}  # fmt: skip
BINARY_COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"]


def _tensor_overloads(packet_name):
    """The Tensor, Scalar and default overloads of an aten packet that take
    a tensor first and return one (aten.add.default adds two numbers)."""
    packet = getattr(aten, packet_name)
    ops = []
    for name in ("Tensor", "Scalar", "default"):
        if name not in packet.overloads():
            continue
        op = getattr(packet, name)
        schema = op._schema
        first = schema.arguments[0].type if schema.arguments else None
        returns = [r.type for r in schema.returns]
        if str(first) == "Tensor" and [str(r) for r in returns] == ["Tensor"]:
            ops.append(op)
    return ops


def _build_table():
    table = {}

    def row(ops, translate, check=None, kind=COMPUTE, meta_tensors=False):
        for op in ops if isinstance(ops, (list, tuple)) else [ops]:
            assert op not in table, f"two rows for {op}"
            table[op] = Row(translate, check, kind, meta_tensors)

    # Elementwise.
    for name in UNARY_MATH:
        row(getattr(aten, name).default, pointwise.unary_math(name))
    for name in UNARY_PREDICATES:
        row(getattr(aten, name).default, pointwise.unary_predicate(name))
    for packet, name in BINARY_ARITHMETIC.items():
        row(_tensor_overloads(packet), pointwise.binary_arithmetic(name))
    for name in BINARY_COMPARISONS:
        row(_tensor_overloads(name), pointwise.binary_comparison(name))
    row(aten.div.Tensor_mode, pointwise.translate_div_mode)
    row([aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar], pointwise.translate_pow)
    row(aten.where.self, pointwise.translate_where)
    row(aten.clamp.default, pointwise.translate_clamp)
    row(aten.clamp.Tensor, pointwise.translate_clamp_tensor)
    row(aten.hardtanh.default, pointwise.translate_hardtanh)
    row(aten.leaky_relu.default, pointwise.translate_leaky_relu)
    row(aten.threshold_backward.default, pointwise.translate_threshold_backward)
    row(aten.gelu.default, pointwise.translate_gelu, _gelu_approximation)

    # Casts, copies, constants.
    row(aten._to_copy.default, pointwise.translate_to_copy, _to_copy_stays_on_device)
    row(prims.convert_element_type.default, pointwise.translate_convert_element_type)
    row(aten.clone.default, pointwise.translate_copy)
    row(
        [aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default],
        pointwise.translate_copy,
        kind=VIEW,
    )
    row(aten.full.default, pointwise.translate_full)
    row(aten.scalar_tensor.default, pointwise.translate_scalar_tensor)
    row(aten.fill.Scalar, pointwise.translate_fill)
    row(aten.full_like.default, pointwise.translate_full_like)
    row([aten.arange.default, aten.arange.start_step], pointwise.translate_arange, _integer_arange)

    # Reductions and normalizations.
    row(aten.sum.dim_IntList, reduction.translate_sum)
    row(aten.sum.default, reduction.translate_sum_all)
    row(aten.mean.dim, reduction.translate_mean)
    row(aten.mean.default, reduction.translate_mean_all)
    row(aten.amax.default, reduction.translate_amax)
    row(aten.amin.default, reduction.translate_amin)
    row(aten.prod.dim_int, reduction.translate_prod)
    row(aten.var_mean.correction, reduction.translate_var_mean, _integral_correction)
    row(aten.var.correction, reduction.translate_var, _integral_correction)
    row(aten._softmax.default, reduction.translate_softmax)
    row(aten._log_softmax.default, reduction.translate_log_softmax)
    row(aten._softmax_backward_data.default, reduction.translate_softmax_backward)
    row(aten._log_softmax_backward_data.default, reduction.translate_log_softmax_backward)
    row(aten.native_layer_norm.default, reduction.translate_native_layer_norm)

    # Views and data movement.
    row(
        [aten.view.default, aten._unsafe_view.default, aten.reshape.default],
        shape.translate_reshape,
        kind=VIEW,
    )
    row(aten.permute.default, shape.translate_permute, kind=VIEW)
    row(aten.transpose.int, shape.translate_transpose, kind=VIEW)
    row(aten.t.default, shape.translate_t, kind=VIEW)
    row(aten.expand.default, shape.translate_expand, kind=VIEW)
    row(
        [aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims],
        shape.translate_squeeze,
        kind=VIEW,
    )
    row(aten.unsqueeze.default, shape.translate_unsqueeze, kind=VIEW)
    row(aten.slice.Tensor, shape.translate_slice, kind=VIEW)
    row(aten.select.int, shape.translate_select, kind=VIEW)
    # Not a view kind: its results are getitems, which must stay with it.
    row(aten.split_with_sizes.default, shape.translate_split_with_sizes)
    row(aten.cat.default, shape.translate_cat)
    row(aten.constant_pad_nd.default, shape.translate_constant_pad_nd)
    row(
        aten.slice_scatter.default,
        shape.translate_slice_scatter,
        _slice_scatter_of_steps_of_one,
    )

    # Matrix products and library ops.
    row([aten.mm.default, aten.bmm.default], library.translate_matmul, _matmul_operands, MATMUL)
    row(aten.addmm.default, library.translate_addmm, _matmul_operands, MATMUL)
    row(aten.embedding.default, library.translate_embedding, _dense_embedding)
    row(
        aten._scaled_dot_product_flash_attention.default,
        library.translate_flash_attention,
        _flash_attention_results,
        meta_tensors=True,
    )
    row(
        aten._scaled_dot_product_flash_attention_backward.default,
        library.translate_flash_attention_backward,
        _flash_attention_dense,
        meta_tensors=True,
    )

    # Random ops (rng.py).
    row(aten.native_dropout.default, rng.translate_native_dropout, rng.dropout_probability_in_range)
    row(aten.bernoulli.p, rng.translate_bernoulli_p, rng.no_explicit_generator)
    row(aten.rand_like.default, rng.translate_rand_like)
    row(aten.randn_like.default, rng.translate_randn_like)
    row(aten.rand.default, rng.translate_rand, rng.no_explicit_generator)
    row(aten.randn.default, rng.translate_randn, rng.no_explicit_generator)
    return table


ATEN_TABLE = _build_table()


def op_names(op):
    """(overload name, packet name) of an aten op: ("aten.mm.default",
    "aten.mm"), as "fuser.eager_ops" takes them."""
    overload = str(op)
    return overload, overload.rsplit(".", 1)[0]
