"""Cutting an aten graph into partitions fuser runs and nodes ATen runs,
with torch's CapabilityBasedPartitioner and FuserOperatorSupport.

What the partitioner is told, from the table's row kinds:

* views (rows of kind "view") are not compute: a partition needs two
  compute nodes at least (one op alone is one kernel either way, and
  fuser's would add host overhead), and views at a partition's edges are
  left to ATen, where they cost nothing;
* partitions are named by where they start, in graph order:
  ``<graph name>.fused_<k>`` (e.g. ``graph0.forward.fused_1``), the names
  "fuser.dump" prints and "fuser.eager_partitions" takes.
"""

import dataclasses
import operator
from typing import List, Tuple

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from .aten_table import VIEW, op_names

FUSED_PREFIX = "fused_"


@dataclasses.dataclass
class PartitionInfo:
    """What "fuser.eager_partitions" predicates see of a partition."""

    name: str  # "<graph name>.fused_<k>"
    graph_name: str  # e.g. "graph0.forward"
    graph_module: torch.fx.GraphModule  # the partition's aten ops
    aten_ops: Tuple[str, ...]  # the overload names, sorted, e.g. "aten.mul.Tensor"


def _view_op_names(table):
    """The qualified names the partitioner compares node targets with."""
    from torch.fx.node import _get_qualified_name

    return [_get_qualified_name(op) for op, row in table.items() if row.kind == VIEW]


def partition_graph(graph_module, support, graph_name) -> Tuple[torch.fx.GraphModule, List]:
    """The graph with each partition replaced by a call of a submodule
    ``fused_<k>`` (an FX GraphModule of its nodes), and the partitions'
    PartitionInfos in graph order. The input graph is changed in place."""
    partitioner = CapabilityBasedPartitioner(
        graph_module,
        support,
        allows_single_node_partition=False,
        non_compute_ops=_view_op_names(support.table),
    )
    partitions = partitioner.propose_partitions()
    partitioner.remove_bookend_non_compute_ops(partitions)
    partitions = [p for p in partitions if _has_compute(p, support.table)]
    if not partitions:
        return graph_module, []
    # fuse_by_partitions names the submodules by their position in the
    # list: sorted by first node, fused_0 is the first to run.
    position = {node: i for i, node in enumerate(graph_module.graph.nodes)}
    partitions.sort(key=lambda p: min(position[n] for n in p.nodes))
    fused = partitioner.fuse_partitions(partitions, prefix=FUSED_PREFIX)
    infos = []
    for k in range(len(partitions)):
        submodule = getattr(fused, f"{FUSED_PREFIX}{k}")
        infos.append(
            PartitionInfo(
                name=f"{graph_name}.{FUSED_PREFIX}{k}",
                graph_name=graph_name,
                graph_module=submodule,
                aten_ops=_aten_ops(submodule),
            )
        )
    return fused, infos


def _has_compute(partition, table):
    """Whether a partition holds an op that is not a view or a getitem:
    views alone would become a copy kernel where ATen makes no copy."""
    for node in partition.nodes:
        row = table.get(node.target) if node.op == "call_function" else None
        if row is not None and row.kind != VIEW:
            return True
    return False


def _aten_ops(graph_module):
    names = set()
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            names.add(op_names(node.target)[0])
    return tuple(sorted(names))


def eager_nodes(graph_module, support):
    """(node name, why it runs eagerly) for the aten calls left outside the
    partitions of a partitioned graph, for the dumps."""
    result = []
    for node in graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target is operator.getitem and node.args[0].op == "call_module":
            continue  # a result of a partition
        reason = support.reason_unsupported(node)
        result.append((node.name, reason or "left out of every partition (too small, or a view)"))
    return result
