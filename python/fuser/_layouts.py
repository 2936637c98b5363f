"""How a tensor's layout is described to FusionDefinition: stride orders,
contiguity flags in allocation order, and both read off sizes and strides
(nvFuser's conventions)."""

from ._C import FuserError


def allocation_order(stride_order, rank):
    """The dimensions outermost first for `stride_order` (stride_order[i]
    ranks dimension i's stride, 0 the innermost; None: row-major)."""
    if stride_order is None:
        return list(range(rank))
    return sorted(range(rank), key=lambda d: -stride_order[d])


def check_stride_order(stride_order, rank, what):
    if stride_order is None:
        return None
    stride_order = [int(s) for s in stride_order]
    if sorted(stride_order) != list(range(rank)):
        raise FuserError(
            f"{what}: stride_order must be a permutation of 0..{rank - 1}; " f"got {stride_order}."
        )
    # Row-major is the default and is printed as such.
    if stride_order == list(range(rank - 1, -1, -1)):
        return None
    return stride_order


def normalize_contiguity(shape, contiguity, stride_order, what):
    """One flag per axis in allocation order; None exactly for broadcasts."""
    rank = len(shape)
    alloc = allocation_order(stride_order, rank)
    if contiguity is None or isinstance(contiguity, bool):
        fill = bool(contiguity)
        return [None if shape[d] == 1 else fill for d in alloc]
    flags = list(contiguity)
    if len(flags) != rank:
        raise FuserError(
            f"{what}: contiguity needs one entry per dimension ({rank}), got "
            f"{len(flags)}: {flags}."
        )
    result = []
    for position, (d, flag) in enumerate(zip(alloc, flags)):
        if shape[d] == 1:
            result.append(None)
        elif isinstance(flag, bool):
            result.append(flag)
        elif flag is None:
            # An expanded dimension, as nvFuser spells it: any size, stride 0
            # in the tensors passed. Read through its stride, as from_pytorch
            # declares an expanded tensor.
            result.append(False)
        else:
            raise FuserError(
                f"{what}: contiguity[{position}] is {flag!r}: use True, False "
                "or None (None: a broadcast or expanded dimension)."
            )
    return result


def describe_strides(sizes, strides, static_sizes, what):
    """(shape, contiguity, stride_order) of a tensor with these sizes and
    strides. Axes of size 1 are broadcasts and keep their place in the
    allocation order; the others go outermost first by decreasing stride
    (ties keep their order)."""
    rank = len(sizes)
    if len(strides) != rank:
        raise FuserError(f"{what}: sizes {sizes} and strides {strides} differ in length.")
    broadcast = [s == 1 for s in sizes]
    ordered = iter(sorted((d for d in range(rank) if not broadcast[d]), key=lambda d: -strides[d]))
    alloc = [d if broadcast[d] else next(ordered) for d in range(rank)]
    contiguity = []
    for position, d in enumerate(alloc):
        if broadcast[d]:
            contiguity.append(None)
            continue
        inner = [q for q in alloc[position + 1 :] if not broadcast[q]]
        expected = strides[inner[0]] * sizes[inner[0]] if inner else 1
        contiguity.append(strides[d] == expected)
    stride_order = [0] * rank
    for position, d in enumerate(alloc):
        stride_order[d] = rank - 1 - position
    shape = [s if (static_sizes or s == 1) else -1 for s in sizes]
    return shape, contiguity, stride_order
