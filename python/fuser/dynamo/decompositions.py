"""The decompositions AOTAutograd applies while tracing for the fuser
backend: PyTorch's own tables, less the ops fuser translates whole.

* torch._decomp.core_aten_decompositions(): to core ATen, the op set the
  table (aten_table.py) is written against (e.g. native_layer_norm_backward,
  gelu_backward, silu_backward, native_dropout_backward, addcmul, ... become
  the elementwise ops and reductions they are made of, which fuse);
* batch norm in training and evaluation (its functional variant, which
  AOTAutograd emits and the core table leaves whole): var_mean and
  elementwise ops, so that a normalization fuses with the ReLU after it;
* minus every op with a row in the table: an op fuser takes whole
  (softmax and its backward, layer norm, GELU, SiLU, dropout, flash
  attention, ...) reaches the partitioner as one node, and runs as ATen's
  own kernel when it is not fused.
"""

import functools

import torch

aten = torch.ops.aten

_EXTRA = (
    aten._native_batch_norm_legit_functional,
    aten._native_batch_norm_legit,
    aten._native_batch_norm_legit_no_training,
    aten.native_batch_norm,
    aten.native_batch_norm_backward,
)


@functools.lru_cache(maxsize=None)
def _decomposition_table(translated_ops):
    from torch._decomp import core_aten_decompositions, get_decompositions

    core = core_aten_decompositions()
    table = {op: core[op] for op in core.keys()}
    table.update(get_decompositions(list(_EXTRA)))
    for op in translated_ops:
        table.pop(op, None)
    return table


def decomposition_table(aten_table):
    """{op overload: decomposition} for AOTAutograd."""
    return dict(_decomposition_table(frozenset(aten_table)))
