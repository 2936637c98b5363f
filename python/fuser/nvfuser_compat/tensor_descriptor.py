"""nvFuser's descriptions of a tensor's layout from its sizes and strides:
``compute_tensor_descriptor`` (nvfuser_direct, and the legacy nvfuser
module) and the legacy ``compute_contiguity``.

Programs pass the results straight to define_tensor, so these follow
nvFuser's rules exactly. fuser's own reading of strides
(fuser._layouts.describe_strides) differs on stride-0 axes of size > 1: it
orders them innermost, where nvFuser keeps them at their own index.
"""

from fuser import FuserError


def _checked_pair(sizes, strides, what):
    sizes, strides = [int(s) for s in sizes], [int(s) for s in strides]
    if len(sizes) != len(strides):
        raise FuserError(
            f"{what}: sizes {sizes} and strides {strides} must have the same number of "
            "dimensions."
        )
    return sizes, strides


def compute_tensor_descriptor(sizes, strides):
    """(contiguity, stride_order) of a tensor with these sizes and strides,
    as define_tensor takes them.

    * Axes of stride 0 keep their own index in the allocation order; the
      others are ordered outermost first by decreasing stride (ties keep
      their order).
    * ``stride_order[i]`` ranks axis i in that order, 0 the innermost.
    * ``contiguity`` is in allocation order: None for a broadcast (stride
      0 or size 1), else whether the stride equals stride * size of the
      next non-broadcast axis inward (1 for the innermost).

    Negative strides are an error. For example sizes (2, 3, 4) with strides
    (12, 1, 3) give ([True, True, True], [2, 0, 1])."""
    what = "compute_tensor_descriptor"
    sizes, strides = _checked_pair(sizes, strides, what)
    rank = len(sizes)
    for i, stride in enumerate(strides):
        if stride < 0:
            raise FuserError(
                f"{what}: negative strides are not supported: strides[{i}]={stride} "
                f"(strides {strides}). Pass a copy with .contiguous()."
            )
    order = sorted((d for d in range(rank) if strides[d] != 0), key=lambda d: -strides[d])
    for d in range(rank):
        if strides[d] == 0:
            order.insert(d, d)

    def is_broadcast(d):
        return strides[d] == 0 or sizes[d] == 1

    contiguity = []
    for position, d in enumerate(order):
        if is_broadcast(d):
            contiguity.append(None)
            continue
        inner = next((q for q in order[position + 1 :] if not is_broadcast(q)), None)
        expected = 1 if inner is None else strides[inner] * sizes[inner]
        contiguity.append(strides[d] == expected)
    stride_order = [0] * rank
    for position, d in enumerate(order):
        stride_order[d] = rank - 1 - position
    return contiguity, stride_order


def compute_contiguity(sizes, strides):
    """The legacy nvfuser module's contiguity of a tensor read in its
    logical order (no reordering by stride): per axis, None for a broadcast
    (stride 0 or size 1), else whether its stride equals stride * size of
    the next non-broadcast axis to its right (1 for the last one)."""
    sizes, strides = _checked_pair(sizes, strides, "compute_contiguity")

    def is_broadcast(d):
        return strides[d] == 0 or sizes[d] == 1

    contiguity = [None] * len(sizes)
    kept = [d for d in range(len(sizes)) if not is_broadcast(d)]
    for k, d in enumerate(kept):
        expected = 1 if k + 1 == len(kept) else strides[kept[k + 1]] * sizes[kept[k + 1]]
        contiguity[d] = strides[d] == expected
    return contiguity
