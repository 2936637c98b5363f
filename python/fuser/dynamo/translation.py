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

from .. import FusionDefinition, Tensor
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

    tensor_type = Tensor  # what fd.ops return for tensors

    def __init__(self, fd):
        self.fd = fd
        self.node = None  # the node being translated
        # fuser tensor name -> its sizes in eager ATen (see aligned()).
        self.eager_sizes = {}

    # --- the node's expected results (eager ATen's, from the fake values) ------
    def result(self, index=None):
        value = fake_value(self.node)
        return value if index is None else value[index]

    def result_dtype(self, index=None):
        return self.result(index).dtype

    def result_rank(self, index=None):
        return self.result(index).dim()

    def input_sizes(self, position):
        """The sizes of the node's argument `position` in eager ATen: ints,
        None for a symbolic size (never 1: Dynamo specializes sizes 0 and 1)."""
        value = fake_value(self.node.args[position])
        return [s if isinstance(s, int) else None for s in value.shape]

    def fd_dtype(self, dtype):
        """fuser's DataType of a torch dtype."""
        return data_type(dtype)

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
        result = self.fd.ops.broadcast(value, [True] * missing + [False] * value.ndim)
        if value.name in self.eager_sizes:
            self.record_eager_sizes(result, [1] * missing + self.eager_sizes[value.name])
        return result

    def aligned(self, operands, rank=None):
        """Tensor operands broadcast to one rank (the result's by default),
        checked to broadcast as in PyTorch."""
        result = self.result()
        rank = result.dim() if rank is None else rank
        aligned = [self.with_rank(v, rank) for v in operands]
        if is_fake_tensor(result) and rank == result.dim():
            for position, value in enumerate(aligned):
                self._check_broadcasts(value, position)
        return aligned

    def _check_broadcasts(self, value, position):
        """PyTorch broadcasts an axis of size 1 against a longer one; fuser
        does so only for its broadcast axes. An operand whose eager size is
        1 where the result's is not, on an axis that is not a broadcast axis
        in fuser (a length-1 slice, say), would lend the result its extent:
        such a node is not translated."""
        if not isinstance(value, self.tensor_type):
            return
        eager = self.eager_sizes.get(value.name)
        if eager is None:
            return
        axes = [d for d in value.logical_domain() if not d.is_reduction()]
        result_sizes = self.result().shape
        for axis, (domain, size, result_size) in enumerate(zip(axes, eager, result_sizes)):
            if size != 1 or domain.is_broadcast():
                continue
            if not (isinstance(result_size, int) and result_size == 1):
                raise UntranslatableError(
                    f"{self.node.format_node()}: operand {position} has an axis {axis} of "
                    "size 1 that is not a broadcast axis in fuser, where the result has "
                    f"size {result_size}."
                )

    def record_eager_sizes(self, value, sizes):
        """Notes the eager sizes of a fuser tensor (ints; None for symbolic
        ones); a tensor given leading broadcast axes by with_rank has 1s
        there."""
        self.eager_sizes[value.name] = [s if isinstance(s, int) else None for s in sizes]

    def as_dtype(self, operands, dtype):
        """Tensor operands cast to `dtype`; numbers and Scalars pass."""
        return [self.cast(v, dtype) if isinstance(v, self.tensor_type) else v for v in operands]

    def normalized_dim(self, dim, rank):
        return dim + rank if dim < 0 else dim

    def size(self, value, dim):
        return self.fd.ops.size(value, dim)


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
        # A None stands for a result the row's check made sure is unused.
        return tuple(
            None if p is None else _conform_one(ctx, node, p, e) for p, e in zip(produced, expected)
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
            if not isinstance(signature, ScalarSignature):
                ctx.record_eager_sizes(
                    values[node], [1 if s == 1 else None for s in signature.shape]
                )
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
    produced = _conform(ctx, node, produced)
    expected = fake_value(node)
    pairs = zip(produced, expected) if isinstance(produced, tuple) else [(produced, expected)]
    for value, fake in pairs:
        if isinstance(value, ctx.tensor_type) and is_fake_tensor(fake):
            ctx.record_eager_sizes(value, list(fake.shape))
    return produced


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
