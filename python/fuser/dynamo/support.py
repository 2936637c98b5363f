"""Which FX nodes fuser takes: an OperatorSupport for torch's
CapabilityBasedPartitioner, derived from the table (aten_table.py).

A node is supported iff its op has a row, the options do not keep it
eager, its values are tensors fuser can hold where fuser runs them (CUDA
tensors, and 0-dim CPU tensors taken by value), and the row's own check
passes. `reason_unsupported` says why not, for the dumps and the tests."""

import operator

import torch
from torch.fx.passes.operator_support import OperatorSupport

from .aten_table import ATEN_TABLE, MATMUL, op_names
from .signatures import is_fuser_dtype
from .translation import fake_value


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


class FuserOperatorSupport(OperatorSupport):
    """`device_types`: where fused tensors must live ("cuda"; the tests
    also pass "meta", to partition graphs traced without a GPU)."""

    def __init__(self, options, table=ATEN_TABLE, device_types=("cuda",)):
        super().__init__()
        self.options = options
        self.table = table
        self.device_types = tuple(device_types)

    def is_node_supported(self, submodules, node):
        return self.reason_unsupported(node) is None

    def reason_unsupported(self, node):
        """None for a node fuser takes; else why it runs eagerly."""
        if node.op != "call_function":
            return f"a {node.op} node"
        if node.target is operator.getitem:
            # A result of a multi-result op: with its op.
            source = node.args[0]
            if not isinstance(source, torch.fx.Node):
                return "getitem of a non-node"
            if not isinstance(fake_value(node), torch.Tensor):
                return "a non-tensor result"
            return self.reason_unsupported(source)
        row = self.table.get(node.target)
        if row is None:
            return f"{node.target} has no translation to fuser"
        overload, packet = op_names(node.target)
        if self.options.keeps_op_eager(overload, packet):
            return f"{overload} is in 'fuser.eager_ops'"
        if row.kind == MATMUL and not self.options.fuse_matmul:
            return "'fuser.fuse_matmul' is False"
        reason = self._values_reason(node, row)
        if reason is None and row.check is not None:
            reason = row.check(node)
        return reason

    def _values_reason(self, node, row):
        inputs = [fake_value(n) for n in node.all_input_nodes]
        if any(v is None for v in inputs) or fake_value(node) is None:
            return "a value without example (no fake value)"
        for position, value in enumerate(inputs):
            for tensor in _tensors(value):
                reason = self._tensor_reason(tensor, row, f"input {position}", may_be_cpu=True)
                if reason:
                    return reason
        for tensor in _tensors(fake_value(node)):
            reason = self._tensor_reason(tensor, row, "its result", may_be_cpu=False)
            if reason:
                return reason
        return None

    def _tensor_reason(self, tensor, row, what, may_be_cpu):
        if tensor.dtype.is_complex or not is_fuser_dtype(tensor.dtype):
            return f"{what} has dtype {tensor.dtype}"
        device = tensor.device.type
        if device in self.device_types:
            return None
        if device == "meta" and row.meta_tensors:
            return None
        if device == "cpu" and may_be_cpu and tensor.dim() == 0:
            return None  # a 0-dim CPU tensor, taken by value
        return f"{what} is on {tensor.device}"
