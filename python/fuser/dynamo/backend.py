"""The "fuser" TorchDynamo backend: ``torch.compile(model, backend="fuser")``.

How a graph travels (doc/torch_compile.md tells it at length):

1. Dynamo captures an FX graph of torch calls and hands it to
   `fuser_backend` with example inputs (fake tensors, symbolic sizes when
   shapes are dynamic).
2. AOTAutograd (torch._dynamo.backends.common.aot_autograd) traces it to
   aten ops, functionalized, with the decompositions of decompositions.py,
   and splits forward from backward with the min-cut partitioner (which
   recomputes cheap elementwise ops in the backward rather than saving
   them, and never recomputes random ops).
3. `compile_graph` gets each of the forward, backward or inference graphs:
   CapabilityBasedPartitioner cuts it with FuserOperatorSupport
   (partitioner.py, support.py), each partition becomes a FusedPartition
   (fused_partition.py) that builds FusionDefinitions through the public
   frontend (translation.py, aten_table.py) and executes them; every other
   node runs as eager ATen.
"""

import itertools

from .aten_table import ATEN_TABLE
from .decompositions import decomposition_table
from .dump import Dumper
from .fused_partition import FusedPartition
from .options import BackendOptions, parse_options
from .partitioner import partition_graph
from .support import FuserOperatorSupport
from .translation import fake_value

# Graph names ("graph<k>.forward", ...) are unique in the process.
_graph_ids = itertools.count()


class CompiledGraph:
    """A compiled aten graph: call it with the graph's inputs (a list, as
    AOTAutograd's boxed convention). `graph_module` is the partitioned
    graph; `partitions` maps each partition's name to its FusedPartition
    (or, for one kept eager by "fuser.eager_partitions", its FX module)."""

    def __init__(self, name, graph_module, partitions, infos):
        # AOTAutograd passes the inputs as one list. An instance attribute:
        # the wrapper Dynamo puts around a backward compiler's result
        # copies the instance's __dict__, not its class's attributes.
        self._boxed_call = True
        self.name = name
        self.graph_module = graph_module
        self.partitions = partitions
        self.infos = infos

    def __call__(self, args):
        values = list(args)
        args.clear()  # the boxed convention: the caller's list is consumed
        return self.graph_module(*values)


def compile_graph(graph_module, example_inputs, options=None, graph_name="graph", support=None):
    """Partitions an aten graph (AOTAutograd's forward, backward or
    inference graph, or one traced with make_fx) and builds the
    FusionDefinitions of its partitions for inputs like the example ones.
    Nothing runs: the result is called later with real inputs.
    (`example_inputs` is AOTAutograd's compiler argument; the example
    values are read from the graph's nodes, which carry them all, the
    partitions' inputs included.)"""
    options = options if options is not None else BackendOptions()
    support = support if support is not None else FuserOperatorSupport(options)
    dumper = Dumper(options)
    split, infos = partition_graph(graph_module, support, graph_name)
    partitions = {}
    eager_names = set()
    call_nodes = {n.target: n for n in split.graph.nodes if n.op == "call_module"}
    for info in infos:
        submodule_name = info.name.rsplit(".", 1)[1]
        if options.keeps_partition_eager(info):
            eager_names.add(info.name)
            partitions[info.name] = info.graph_module
            continue
        partition = FusedPartition(info.name, info.graph_module, support.table, options, dumper)
        setattr(split, submodule_name, partition)
        partitions[info.name] = partition
        partition.prepare([fake_value(a) for a in call_nodes[submodule_name].args])
    if options.dumps("partitions"):
        from .partitioner import eager_nodes

        dumper.partitions(graph_name, split, infos, eager_nodes(split, support), eager_names)
    return CompiledGraph(graph_name, split, partitions, infos)


def fuser_backend(graph_module, example_inputs, options=None, mode=None):
    """The TorchDynamo backend "fuser". `options` and `mode` come from
    torch.compile(..., options=..., mode=...) (options.py lists the
    options; fuser has no modes)."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    options = parse_options(options, mode)
    graph_id = next(_graph_ids)

    def compiler(kind):
        def compile_(aten_graph, aten_inputs):
            return compile_graph(aten_graph, aten_inputs, options, f"graph{graph_id}.{kind}")

        compile_.__name__ = f"fuser_{kind}_compiler"
        return compile_

    backend = aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions=decomposition_table(ATEN_TABLE),
        partition_fn=min_cut_rematerialization_partition,
        keep_inference_input_mutations=True,
    )
    return backend(graph_module, example_inputs)
