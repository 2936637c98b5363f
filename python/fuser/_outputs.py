"""Outputs of a FusionDefinition: add_output, the outputs that update an
input in place (add_output(alias_input=...)), and the list execute()
returns.

nvFuser lets a value be added as an output more than once, and lets an
output that updates an input in place also be returned. The C++ Fusion
holds each output once, so the definition keeps three things apart:

* ``_outputs``: the C++ fusion's outputs, each tensor once, in the order
  they were first added;
* ``_returned_outputs``: for each position of the list execute() returns,
  the index of the C++ output returned there (an index appears once per
  plain add_output of that tensor);
* ``_aliases``: C++ output index -> the input position it is written into.

An output added only with alias_input is hidden (not returned). A later
plain add_output of it makes it returned at that later position, and the
input is still updated, as in nvFuser.

OutputBookkeeping is one of FusionDefinition's bases (fusion_definition.py)."""

from . import _records as rec
from ._C import FuserError
from ._layouts import allocation_order, check_stride_order
from ._values import Tensor


class OutputBookkeeping:
    """FusionDefinition's outputs and in-place updates."""

    def _init_outputs(self):
        self._outputs = []
        self._returned_outputs = []
        self._aliases = {}
        # C++ output index -> the stride_order it was added with (None:
        # none given), to check a repeated add_output against the first.
        self._output_stride_orders = {}

    def add_output(self, output, stride_order=None, *, alias_input=None):
        """Makes a tensor an output of the fusion. With ``stride_order`` (as
        in define_tensor: ``stride_order[i]`` ranks dimension i's stride, 0
        the innermost) the output is allocated dense in that order, as
        torch.empty_strided would lay it out. With ``alias_input`` (a tensor
        input of the same type and rank) the output is an in-place update:
        execute() writes it into that input's memory and does not return
        it (an optimizer step's parameter update), unless the same tensor
        is also added without alias_input, before or after.

        The same tensor may be added more than once: execute() returns it
        at each position it was added at."""
        what = "fd.add_output"
        self._check_defining(what)
        tensor = self._operand(output, what, 1)
        if not isinstance(tensor, Tensor):
            raise FuserError(f"{what}: only tensors can be outputs; {tensor.name} is a scalar.")
        index = self._output_index(tensor)
        if alias_input is not None:
            self._check_alias(tensor, alias_input, stride_order, what)
            if index is not None and self._output_stride_orders.get(index) is not None:
                raise FuserError(
                    f"{what}: {tensor.name} is already an output with stride_order="
                    f"{self._output_stride_orders[index]}; an output written into "
                    f"{alias_input.name} is laid out as that input."
                )
            self._add_alias_output(tensor, alias_input)
            self._records.append(rec.AddOutput(tensor, None, alias_input))
            return
        ids = tensor.logical_domain()
        dims = [d for d, i in enumerate(ids) if not i.is_reduction()]
        # Row-major comes back as None: whether an order was asked for is
        # kept apart, for a repeated output.
        explicit = stride_order is not None
        stride_order = check_stride_order(stride_order, len(dims), what)
        row_major = list(range(len(dims) - 1, -1, -1))
        # Printed as asked: an explicit row-major order lays the output
        # out (it is then never a view of an input with other strides).
        recorded = stride_order if stride_order is not None else (row_major if explicit else None)
        if index is not None:
            self._check_repeated_output(tensor, index, explicit, stride_order, what)
        else:
            if stride_order is not None and tensor._val.has_allocation():
                raise FuserError(
                    f"{what}: {tensor.name} already has an allocation domain; give "
                    "either it or stride_order."
                )
            if stride_order is not None:
                self._allocate_dense_in_order(tensor, stride_order)
            elif explicit and not tensor._val.has_allocation():
                # Row-major asked for: written so, never returned as a view
                # of an input with other strides (doc/segmentation.md §8).
                self._allocate_dense_in_order(tensor, row_major)
            index = self._add_fusion_output(tensor)
            self._output_stride_orders[index] = stride_order
        self._returned_outputs.append(index)
        self._records.append(rec.AddOutput(tensor, recorded))

    def _output_index(self, tensor):
        """The C++ output index of `tensor`, or None if it is no output yet."""
        return next((j for j, t in enumerate(self._outputs) if t._val.same_as(tensor._val)), None)

    def _add_fusion_output(self, tensor):
        self._fusion.add_output(tensor._val)
        self._outputs.append(tensor)
        return len(self._outputs) - 1

    def _check_repeated_output(self, tensor, index, explicit, stride_order, what):
        first = self._output_stride_orders.get(index)
        if index in self._aliases:
            if explicit:
                position = self._aliases[index]
                raise FuserError(
                    f"{what}: {tensor.name} is written into input {position} "
                    f"({self._inputs[position].name}) and is laid out as it; give no "
                    "stride_order."
                )
        elif explicit and stride_order != first:
            first = "row-major" if first is None else f"stride_order={first}"
            asked = "row-major" if stride_order is None else f"stride_order={stride_order}"
            raise FuserError(
                f"{what}: {tensor.name} is already an output, {first}; one tensor has one "
                f"layout, so it cannot be added again {asked}. Add it without "
                "stride_order, or add fd.ops.set of it for a second layout."
            )

    def _allocate_dense_in_order(self, tensor, stride_order):
        """Gives `tensor` an allocation domain dense in `stride_order` (a
        checked permutation), outermost first; reduction axes (no memory)
        after the others."""
        ids = tensor.logical_domain()
        dims = [d for d, i in enumerate(ids) if not i.is_reduction()]
        alloc = [ids[dims[k]] for k in allocation_order(stride_order, len(dims))]
        alloc += [i for i in ids if i.is_reduction()]
        flags = [None if i.is_broadcast() else True for i in alloc]
        self._fusion.set_allocation_domain(tensor._val, [i._val for i in alloc], flags)

    def outputs(self):
        """The fusion's output tensors, each once, in the order they were
        first added (outputs that only update an input included)."""
        return list(self._outputs)

    # --- outputs that update inputs (add_output(alias_input=)) -------------------
    def _check_alias_target(self, target, what, role):
        """`target` (given as `role`) can take an output in place: a tensor
        input (not a CPU scalar) that no other output updates."""
        if (
            not isinstance(target, Tensor)
            or not any(target is t for t in self._inputs)
            or self._is_cpu_scalar_input(target)
        ):
            raise FuserError(
                f"{what}: {role} must be a tensor input of this definition (not a CPU "
                f"scalar tensor); got {target!r}."
            )
        if any(target is self._inputs[i] for i in self._aliases.values()):
            raise FuserError(f"{what}: {target.name} is already the alias of an output.")

    def _check_alias(self, tensor, alias_input, stride_order, what):
        self._check_alias_target(alias_input, what, "alias_input")
        if stride_order is not None:
            raise FuserError(
                f"{what}: an output aliasing {alias_input.name} is laid out as that "
                "input; give no stride_order."
            )
        if tensor.dtype != alias_input.dtype or tensor.ndim != alias_input.ndim:
            raise FuserError(
                f"{what}: {tensor.name} ({tensor.dtype.name}, rank {tensor.ndim}) "
                f"cannot be written into {alias_input.name} ({alias_input.dtype.name}, "
                f"rank {alias_input.ndim}); cast or reshape it to the input's type "
                "and rank."
            )
        index = self._output_index(tensor)
        if index in self._aliases:
            written = self._inputs[self._aliases[index]].name
            raise FuserError(
                f"{what}: {tensor.name} is already written into {written}; one output "
                f"updates one input. Add fd.ops.set({tensor.name}) as the output for "
                f"{alias_input.name}."
            )

    def _add_alias_output(self, tensor, alias_input):
        """Makes checked `tensor` an output written into `alias_input`; it
        stays returned if it already was."""
        position = next(i for i, t in enumerate(self._inputs) if t is alias_input)
        index = self._output_index(tensor)
        if index is None:
            index = self._add_fusion_output(tensor)
            self._output_stride_orders[index] = None
        self._aliases[index] = position

    def _returned(self, inputs, outputs):
        """The outputs execute() returns, in add_output order: those that
        update an input are first copied into it (their sizes checked), and
        where also returned, the updated input is returned (nvFuser writes
        such an output into the input's memory)."""
        for k, i in self._aliases.items():
            target = inputs[i]
            if tuple(target.shape) != tuple(outputs[k].shape):
                raise FuserError(
                    f"execute(): output {k} has shape {list(outputs[k].shape)}, but "
                    f"the input {i} it updates in place has shape "
                    f"{list(target.shape)}."
                )
            target.copy_(outputs[k])
        return [
            inputs[self._aliases[k]] if k in self._aliases else outputs[k]
            for k in self._returned_outputs
        ]
