"""FusedPartition: what runs a partition of a compiled graph. It stands in
the graph for the partition's FX submodule and, on each call, executes the
FusionDefinition built for the signature of its inputs (signatures.py),
building it on the first call with a new signature.

The definition for the signature of Dynamo's example values is built when
the graph is compiled, so that a partition fuser cannot express is known
then. A partition whose definition cannot be built for a signature (or
whose inputs fuser cannot take, such as CPU tensors) runs its FX
submodule, i.e. eager ATen, for that signature, with one warning.

Counts, in TorchDynamo's counters (torch._dynamo.utils.counters["fuser"]):
"definitions" (built), "fused_runs" (executions of a definition) and
"eager_runs" (calls that ran the partition with ATen)."""

import threading
import warnings

import torch

from .signatures import example_signature, runtime_signature
from .translation import UntranslatableError, build_definition

_EAGER = object()  # cached for a signature whose partition runs eagerly


class FusedPartition(torch.nn.Module):
    def __init__(self, name, graph_module, table, options, dumper):
        super().__init__()
        self.name = name
        self.graph_module = graph_module  # the aten ops, also the eager fallback
        self._table = table
        self._options = options
        self._dumper = dumper
        self._definitions = {}  # signature -> FusionDefinition or _EAGER
        self._not_yet_run = set()  # signatures whose CUDA is still to dump
        self._lock = threading.Lock()
        from torch._dynamo.utils import counters

        self._counters = counters["fuser"]
        (results,) = [n for n in graph_module.graph.nodes if n.op == "output"][0].args
        # fuse_by_partitions returns a lone result as is, several as a tuple.
        self._single_result = not isinstance(results, (tuple, list))
        self._run_options = {}
        if options.enable_options:
            self._run_options["_enable_options"] = list(options.enable_options)
        if options.disable_options:
            self._run_options["_disable_options"] = list(options.disable_options)

    # --- definitions -------------------------------------------------------------------
    def prepare(self, example_values):
        """Builds the definition for inputs like Dynamo's example values;
        returns it, or None when the partition runs eagerly for them (or
        their device is known only at run time)."""
        signature = example_signature(example_values)
        if signature is None:
            return None
        definition = self._definition(signature)
        return None if definition is _EAGER else definition

    def definitions(self):
        """The FusionDefinitions built so far, in the order they were built."""
        return [d for d in self._definitions.values() if d is not _EAGER]

    def _definition(self, signature):
        definition = self._definitions.get(signature)
        if definition is not None:
            return definition
        with self._lock:
            definition = self._definitions.get(signature)
            if definition is None:
                definition = self._build(signature)
                self._definitions[signature] = definition
        return definition

    def _build(self, signature):
        try:
            definition = build_definition(self.graph_module, signature, self._table)
        except UntranslatableError as error:
            warnings.warn(
                f"fuser backend: partition {self.name} runs with eager ATen for inputs "
                f"{_describe(signature)}: {error}",
                stacklevel=3,
            )
            return _EAGER
        index = len(self.definitions())
        self._counters["definitions"] += 1
        self._dumper.definition(self.name, index, definition)
        self._not_yet_run.add(signature)
        return definition

    # --- running ----------------------------------------------------------------------
    def forward(self, *args):
        signature = runtime_signature(args)
        definition = _EAGER if signature is None else self._definition(signature)
        if definition is _EAGER:
            self._counters["eager_runs"] += 1
            return self.graph_module(*args)
        self._counters["fused_runs"] += 1
        results = definition.execute(list(args), **self._run_options)
        if signature in self._not_yet_run:
            self._not_yet_run.discard(signature)
            index = self.definitions().index(definition)
            self._dumper.cuda(self.name, index, definition)
        return results[0] if self._single_result else tuple(results)


def _describe(signature):
    return "(" + ", ".join(_describe_one(s) for s in signature) + ")"


def _describe_one(entry):
    if hasattr(entry, "shape"):
        where = "CPU scalar " if entry.is_cpu_scalar else ""
        return f"{where}{entry.dtype} {list(entry.shape)}"
    return f"{entry.dtype.name} scalar"
