"""Translators of the aten ops that move data without computing
(view/reshape, permute and transposes, expand, squeeze/unsqueeze, slice,
select, cat, pad, slice_scatter) to fd.ops, for aten_table.py.

Sizes may be ints or fuser Scalars: a symbolic size of Dynamo's graph
reaches the partition as an Int scalar input, so one definition serves
every value of it."""


def translate_reshape(ctx, x, size):
    """view, _unsafe_view, reshape. The axes of size 1 are made broadcast
    axes (a reshape to the other sizes, then fd.ops.broadcast): an axis of
    extent 1 that fuser's reshape made would not broadcast against a full
    one in the ops after it, as it does in PyTorch."""
    size = list(size)
    ones = [isinstance(s, int) and s == 1 for s in size]
    if not any(ones):
        return ctx.fd.ops.reshape(x, size)
    kept = [s for s, one in zip(size, ones) if not one]
    return ctx.fd.ops.broadcast(ctx.fd.ops.reshape(x, kept), ones)


def translate_permute(ctx, x, dims):
    return ctx.fd.ops.permute(x, [ctx.normalized_dim(d, x.ndim) for d in dims])


def translate_transpose(ctx, x, dim0, dim1):
    rank = x.ndim
    if rank < 2:
        return ctx.fd.ops.set(x)
    dims = list(range(rank))
    a, b = ctx.normalized_dim(dim0, rank), ctx.normalized_dim(dim1, rank)
    dims[a], dims[b] = dims[b], dims[a]
    return ctx.fd.ops.permute(x, dims)


def translate_t(ctx, x):
    return translate_transpose(ctx, x, 0, 1)


def translate_expand(ctx, x, size, implicit=False):
    """torch.expand: new leading axes, then the axes of size 1 (broadcast
    axes in fuser) take their new sizes; fuser takes -1 for the others."""
    size = list(size)
    x = ctx.with_rank(x, len(size))
    source = ctx.input_sizes(0)
    leading = len(size) - len(source)
    extents = []
    for axis, target in enumerate(size):
        was_one = axis < leading or source[axis - leading] == 1
        if was_one and not (isinstance(target, int) and target in (1, -1)):
            extents.append(target)
        else:
            extents.append(-1)
    if all(isinstance(e, int) and e == -1 for e in extents):
        return ctx.fd.ops.set(x)
    return ctx.fd.ops.expand(x, extents)


def _squeezable(ctx, dims):
    """The axes among `dims` of size 1 in eager ATen (squeeze leaves other
    axes alone)."""
    sizes = ctx.input_sizes(0)
    rank = len(sizes)
    dims = range(rank) if dims is None else dims
    return sorted({ctx.normalized_dim(d, rank) for d in dims if sizes[d] == 1})


def translate_squeeze(ctx, x, dims=None):
    """squeeze.default, squeeze.dim and squeeze.dims."""
    if isinstance(dims, int):
        dims = [dims]
    dims = _squeezable(ctx, dims)
    if not dims:
        return ctx.fd.ops.set(x)
    return ctx.fd.ops.squeeze(x, dims)


def translate_unsqueeze(ctx, x, dim):
    return ctx.fd.ops.unsqueeze(x, ctx.normalized_dim(dim, x.ndim + 1))


def _slice_axis(ctx, x, dim, start, end, step, length):
    """x sliced along `dim` (fuser clamps the bounds and counts negative
    ones from the end, as torch), the other axes whole. `length` is the
    eager result's size along `dim`: a slice of length 1 is made a
    broadcast axis, as it broadcasts in PyTorch."""
    rank = x.ndim
    starts = [0] * rank
    ends = [ctx.size(x, d) for d in range(rank)]
    steps = [1] * rank
    starts[dim] = start
    if end is not None:
        ends[dim] = end
    steps[dim] = step
    sliced = ctx.fd.ops.slice(x, starts, ends, steps)
    if isinstance(length, int) and length == 1 and ctx.input_sizes(0)[dim] != 1:
        flags = [d == dim for d in range(rank)]
        sliced = ctx.fd.ops.broadcast(ctx.fd.ops.squeeze(sliced, [dim]), flags)
    return sliced


def translate_slice(ctx, x, dim=0, start=None, end=None, step=1):
    """slice.Tensor of one axis."""
    dim = ctx.normalized_dim(dim, x.ndim)
    start = 0 if start is None else start
    return _slice_axis(ctx, x, dim, start, end, step, ctx.result().shape[dim])


def translate_split_with_sizes(ctx, x, split_sizes, dim=0):
    """The pieces, as slices (torch.split's results are views)."""
    dim = ctx.normalized_dim(dim, x.ndim)
    pieces = []
    start = 0
    for index, size in enumerate(split_sizes):
        end = start + size
        length = ctx.result(index).shape[dim]
        pieces.append(_slice_axis(ctx, x, dim, start, end, 1, length))
        start = end
    return pieces


def translate_select(ctx, x, dim, index):
    return ctx.fd.ops.select(x, index, ctx.normalized_dim(dim, x.ndim))


def translate_cat(ctx, tensors, dim=0):
    rank = ctx.result_rank()
    tensors = ctx.as_dtype(list(tensors), ctx.result_dtype())
    return ctx.fd.ops.cat(tensors, ctx.normalized_dim(dim, rank))


def _scattered_range(size, start, end):
    """slice_scatter's [start, end) along an axis of `size`, clamped and
    with negative bounds counted from the end, as torch's slice."""
    start = 0 if start is None else start
    end = size if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def translate_slice_scatter(ctx, x, src, dim=0, start=None, end=None, step=1):
    """slice_scatter.default with step 1 (the backward of a slice, as
    AOTAutograd writes it: src written into zeros): x with src along
    `dim` at [start, end), as where(start <= i < end, pad(src), x) with i
    the position along `dim`, so that one kernel writes the result (a
    rotary embedding's backward scatters the gradients of the halves)."""
    rank = x.ndim
    dim = ctx.normalized_dim(dim, rank)
    size = ctx.input_sizes(0)[dim]
    start, end = _scattered_range(size, start, end)
    widths = [0] * (2 * rank)
    # torch's pad order: the last axis's pair first.
    widths[2 * (rank - 1 - dim)] = start
    widths[2 * (rank - 1 - dim) + 1] = size - end
    dtype = ctx.result_dtype()
    [x, src] = ctx.as_dtype([x, src], dtype)
    placed = ctx.fd.ops.pad(src, widths, 0)
    positions = ctx.fd.ops.broadcast_in_dim(
        ctx.fd.ops.iota(size), [ctx.size(x, d) for d in range(rank)], [dim]
    )
    inside = ctx.fd.ops.logical_and(
        ctx.fd.ops.ge(positions, start), ctx.fd.ops.lt(positions, end)
    )
    return ctx.fd.ops.where(inside, placed, x)


def translate_constant_pad_nd(ctx, x, pad, value=0):
    return ctx.fd.ops.pad(x, list(pad), value)
