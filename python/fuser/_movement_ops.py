"""fd.ops.* that move data without computing new values: copies (set,
segment_set, stride_order), broadcasts, squeeze/unsqueeze, permute,
reshape, slice, pad, cat, and the indexing ops (select, index_select,
gather, scatter). fd.ops (_ops.py) calls these.

MovementOps is one of FusionDefinition's bases (fusion_definition.py)."""

from ._C import FuserError
from ._layouts import check_stride_order
from ._operands import _is_int
from ._values import Scalar


class MovementOps:
    """FusionDefinition's data-movement ops."""

    def _set(self, name, arg):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        make = self._fusion.segment_set if name == "segment_set" else self._fusion.set
        out = self._wrap(make(tensor._val))
        return self._record_op(name, [tensor], {}, out)

    def _stride_order(self, arg, stride_order):
        what = "fd.ops.stride_order"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        rank = len([i for i in tensor.logical_domain() if not i.is_reduction()])
        order = check_stride_order(stride_order, rank, what)
        out = self._wrap(self._fusion.set(tensor._val))
        if order is not None:
            self._allocate_dense_in_order(out, order)
        kwargs = {"stride_order": [int(s) for s in stride_order]}
        return self._record_op("stride_order", [tensor], kwargs, out)

    def _broadcast(self, arg, is_broadcast_dim):
        what = "fd.ops.broadcast"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        flags = [bool(f) for f in is_broadcast_dim]
        out = self._wrap(self._fusion.broadcast(tensor._val, flags))
        return self._record_op("broadcast", [tensor], {"is_broadcast_dim": flags}, out)

    def _squeeze(self, arg, dims):
        what = "fd.ops.squeeze"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = [int(dims)] if _is_int(dims) else [int(d) for d in dims]
        out = self._wrap(self._fusion.squeeze(tensor._val, dims))
        return self._record_op("squeeze", [tensor], {"dims": dims}, out)

    def _unsqueeze(self, arg, dim):
        what = "fd.ops.unsqueeze"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        out = self._wrap(self._fusion.unsqueeze(tensor._val, int(dim)))
        return self._record_op("unsqueeze", [tensor], {"dim": int(dim)}, out)

    def _broadcast_in_dim(self, arg, shape, broadcast_dims):
        what = "fd.ops.broadcast_in_dim"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        sizes, vals = self._sizes_operand(shape, what, "shape")
        broadcast_dims = [int(d) for d in broadcast_dims]
        rank, out_rank = tensor.ndim, len(sizes)
        if len(broadcast_dims) != rank:
            raise FuserError(
                f"{what}: broadcast_dims needs one entry per dimension of "
                f"{tensor.name} ({rank}), got {broadcast_dims}."
            )
        if any(not 0 <= d < out_rank for d in broadcast_dims) or any(
            a >= b for a, b in zip(broadcast_dims, broadcast_dims[1:])
        ):
            raise FuserError(
                f"{what}: broadcast_dims {broadcast_dims} must be increasing "
                f"output dimensions in [0, {out_rank})."
            )
        flags = [d not in broadcast_dims for d in range(out_rank)]
        in_ids = [d for d in tensor._val.logical_domain() if not d.is_reduction()]
        out_ids = [None] * out_rank
        for in_axis, out_axis in enumerate(broadcast_dims):
            out_ids[out_axis] = in_ids[in_axis]
        # Per output axis, what expand is given: -1 where the axis stays as
        # it is (a broadcast to size 1, or an axis of the size asked for).
        extents = []
        for size, val, id in zip(sizes, vals, out_ids):
            if not _is_int(size):
                extents.append(val)
            elif id is None or id.is_broadcast():
                extents.append(-1 if size in (1, -1) else val)
            else:
                extents.append(-1 if size in (-1, id.extent().value()) else val)
        val = tensor._val
        if any(flags):
            val = self._fusion.broadcast(val, flags)
        if any(not _is_int(e) for e in extents):
            val = self._fusion.expand(
                val, [self._fusion.index_constant(e) if _is_int(e) else e for e in extents]
            )
        elif not any(flags):
            val = self._fusion.set(val)
        out = self._wrap(val)
        kwargs = {"shape": sizes, "broadcast_dims": broadcast_dims}
        return self._record_op("broadcast_in_dim", [tensor], kwargs, out)

    def _expand(self, arg, shape):
        what = "fd.ops.expand"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        sizes, vals = self._sizes_operand(shape, what, "shape")
        out = self._wrap(self._fusion.expand(tensor._val, vals))
        return self._record_op("expand", [tensor], {"shape": sizes}, out)

    def _permute(self, arg, dims):
        what = "fd.ops.permute"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = [int(d) for d in dims]
        out = self._wrap(self._fusion.permute(tensor._val, dims))
        return self._record_op("permute", [tensor], {"dims": dims}, out)

    def _reshape(self, arg, new_shape):
        what = "fd.ops.reshape"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        sizes, vals = self._sizes_operand(new_shape, what, "new_shape")
        out = self._wrap(self._fusion.reshape(tensor._val, vals))
        return self._record_op("reshape", [tensor], {"new_shape": sizes}, out)

    def _slice(self, arg, start_indices, end_indices, strides):
        what = "fd.ops.slice"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        if strides is None:
            strides = [1] * len(start_indices)
        if not len(start_indices) == len(end_indices) == len(strides):
            raise FuserError(
                f"{what}: start_indices, end_indices and strides must have one "
                f"entry per axis; got {len(start_indices)}, {len(end_indices)} "
                f"and {len(strides)}."
            )
        starts, start_vals = self._sizes_operand(start_indices, what, "start_indices")
        ends, end_vals = self._sizes_operand(end_indices, what, "end_indices")
        steps, step_vals = self._sizes_operand(strides, what, "strides")
        out = self._wrap(self._fusion.slice(tensor._val, start_vals, end_vals, step_vals))
        kwargs = {"start_indices": starts, "end_indices": ends, "strides": steps}
        return self._record_op("slice", [tensor], kwargs, out)

    def _pad(self, arg, pad_widths, value):
        what = "fd.ops.pad"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        widths, width_vals = self._sizes_operand(pad_widths, what, "pad_widths")
        fill = None if value is None else self._scalar_operand(value, what, 3)
        out = self._wrap(
            self._fusion.pad(tensor._val, width_vals, None if fill is None else fill._val)
        )
        return self._record_op("pad", [tensor], {"pad_widths": widths, "value": fill}, out)

    def _cat(self, tensors, dim):
        what = "fd.ops.cat"
        self._check_defining(what)
        operands = [self._tensor_operand(t, what, i) for i, t in enumerate(tensors)]
        if not _is_int(dim):
            raise FuserError(f"{what}: dim must be an int; got {dim!r}.")
        out = self._wrap(self._fusion.cat([t._val for t in operands], int(dim)))
        return self._record_op("cat", [operands], {"dim": int(dim)}, out)

    def _indexing(self, name, arg, index, dim, src=None):
        what, tensor = self._dim_op_operand(name, arg, dim)
        if name == "select":
            position = self._scalar_operand(index, what, 2)
            out = self._wrap(self._fusion.select(tensor._val, int(dim), position._val))
            return self._record_op(name, [tensor, position], {"dim": int(dim)}, out)
        indices = self._tensor_operand(index, what, 2)
        args = [tensor, indices]
        src_val = None
        if name == "scatter":
            source = self._tensor_operand(src, what, 3)
            args.append(source)
            src_val = source._val
        out = self._wrap(self._fusion.indexing(name, tensor._val, int(dim), indices._val, src_val))
        return self._record_op(name, args, {"dim": int(dim)}, out)
