"""From one fused partition (an FX GraphModule of aten ops) and an input
signature to a FusionDefinition, through the public Python frontend.

The walk is generic; what each aten op becomes is its row in the table
(aten_table.py). A row's translator gets a TranslationContext and the
node's arguments with every FX node replaced by its fuser value (Tensor or
Scalar); it returns the fuser value of the node (a tuple for an op with
several results). The context then conforms each result to what eager ATen
gives (Dynamo's fake value of the node: dtype and rank), so that a row
need not restate PyTorch's type promotion, and any disagreement in rank is
caught here, at compile time, rather than as wrong numbers.

Nothing here runs on a GPU: building a definition only records it, so the
whole translation is testable on a machine without one."""

import operator

import torch
from torch.fx.node import map_arg

from .. import FusionDefinition
from .._C import DataType
from .signatures import ScalarSignature, data_type, output_stride_order


class UntranslatableError(Exception):
    """A partition that cannot become a FusionDefinition (with the node and
    why); the partition then runs with eager ATen."""


def fake_value(node):
    """Dynamo's example value of an FX node (a fake tensor, a SymInt, or a
    tuple of them), or None."""
    return node.meta.get("val", node.meta.get("example_value"))


def is_fake_tensor(value):
    return isinstance(value, torch.Tensor)


class TranslationContext:
    """What a row's translator uses: the definition being built (`fd`),
    the fake values of the node's results, and the helpers that express
    PyTorch semantics with fd.ops (broadcasting lower ranks, casts)."""

    def __init__(self, fd):
        self.fd = fd
        self.node = None  # the node being translated

    # --- the node's expected results (eager ATen's, from the fake values) ------
    def result(self, index=None):
        value = fake_value(self.node)
        return value if index is None else value[index]

    def result_dtype(self, index=None):
        return self.result(index).dtype

    def result_rank(self, index=None):
        return self.result(index).dim()

    # --- PyTorch semantics -----------------------------------------------------------
    def cast(self, value, dtype):
        """`value` (a Tensor) as the torch dtype `dtype`; no op when it is."""
        target = data_type(dtype)
        if value.dtype == target:
            return value
        return self.fd.ops.cast(value, target)

    def with_rank(self, value, rank):
        """A Tensor given leading broadcast axes up to `rank` (PyTorch aligns
        shapes from the right); numbers and Scalars pass."""
        if not isinstance(value, self.tensor_type) or value.ndim >= rank:
            return value
        missing = rank - value.ndim
        return self.fd.ops.broadcast(value, [True] * missing + [False] * value.ndim)

    def aligned(self, operands, rank=None):
        """Tensor operands broadcast to one rank (the result's by default)."""
        rank = self.result_rank() if rank is None else rank
        return [self.with_rank(v, rank) for v in operands]

    def as_dtype(self, operands, dtype):
        """Tensor operands cast to `dtype`; numbers and Scalars pass."""
        return [self.cast(v, dtype) if isinstance(v, self.tensor_type) else v for v in operands]

    def normalized_dim(self, dim, rank):
        return dim + rank if dim < 0 else dim

    def size(self, value, dim):
        return self.fd.ops.size(value, dim)

    @property
    def tensor_type(self):
        from .. import Tensor

        return Tensor


def _define_input(fd, signature):
    if isinstance(signature, ScalarSignature):
        return fd.define_scalar(None, dtype=signature.dtype)
    if signature.is_cpu_scalar:
        return fd.define_tensor(shape=[], is_cpu=True, dtype=data_type(signature.dtype))
    stride_order = list(signature.stride_order)
    if stride_order == list(range(signature.ndim - 1, -1, -1)):
        stride_order = None
    return fd.define_tensor(
        shape=list(signature.shape),
        contiguity=list(signature.contiguity),
        dtype=data_type(signature.dtype),
        stride_order=stride_order,
    )


def _conform(ctx, node, produced):
    """The node's results, cast to the dtypes eager ATen gives them; checks
    the ranks."""
    expected = fake_value(node)
    if isinstance(expected, (tuple, list)):
        if not isinstance(produced, (tuple, list)) or len(produced) != len(expected):
            raise UntranslatableError(
                f"{node.format_node()}: its translation gave {produced!r}, expected "
                f"{len(expected)} results."
            )
        return tuple(
            _conform_one(ctx, node, p, e) if e is not None else p
            for p, e in zip(produced, expected)
        )
    return _conform_one(ctx, node, produced, expected)


def _conform_one(ctx, node, produced, expected):
    if not is_fake_tensor(expected):
        return produced
    if not isinstance(produced, ctx.tensor_type):
        raise UntranslatableError(
            f"{node.format_node()}: its translation gave {produced!r}, not a tensor."
        )
    if produced.ndim != expected.dim():
        raise UntranslatableError(
            f"{node.format_node()}: its translation has rank {produced.ndim}, eager ATen's "
            f"result has rank {expected.dim()} (shape {tuple(expected.shape)})."
        )
    return ctx.cast(produced, expected.dtype)


def build_definition(graph_module, input_signatures, table):
    """The FusionDefinition of a partition for inputs of these signatures
    (one per placeholder, in order). Raises UntranslatableError."""
    fd = FusionDefinition()
    ctx = TranslationContext(fd)
    values = {}
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(input_signatures):
        raise UntranslatableError(
            f"the partition takes {len(placeholders)} inputs, {len(input_signatures)} "
            "signatures were given."
        )
    with fd:
        for node, signature in zip(placeholders, input_signatures):
            values[node] = _define_input(fd, signature)
        for node in graph_module.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                _add_outputs(fd, node, values)
                break
            values[node] = _translate_node(ctx, node, values, table)
    return fd


def _translate_node(ctx, node, values, table):
    if node.op != "call_function":
        raise UntranslatableError(f"{node.format_node()}: only call_function nodes are fused.")
    if node.target is operator.getitem:
        source, index = node.args
        return values[source][index]
    row = table.get(node.target)
    if row is None:
        raise UntranslatableError(f"{node.format_node()}: {node.target} has no translation.")
    args = map_arg(node.args, lambda n: values[n])
    kwargs = map_arg(node.kwargs, lambda n: values[n])
    ctx.node = node
    try:
        produced = row.translate(ctx, *args, **kwargs)
    except UntranslatableError:
        raise
    except (RuntimeError, TypeError, ValueError) as error:
        # fd.ops reject what fuser cannot express (FuserError is a
        # RuntimeError): the partition stays eager, with the reason.
        raise UntranslatableError(f"{node.format_node()}: {error}") from error
    return _conform(ctx, node, produced)


def _add_outputs(fd, output_node, values):
    (results,) = output_node.args
    if not isinstance(results, (tuple, list)):
        results = (results,)
    for result in results:
        value = values[result]
        expected = fake_value(result)
        if not is_fake_tensor(expected):
            raise UntranslatableError(
                f"partition output {result.name} is {expected!r}, not a tensor."
            )
        stride_order = output_stride_order(expected)
        if stride_order is None:
            fd.add_output(value)
        else:
            fd.add_output(value, stride_order=stride_order)


def int_data_type():
    return DataType.Int
