"""Random ops in fusions: dropout and the random factories, and how they
keep PyTorch's generator and the backward in step.

The approach:

* AOTAutograd runs with ``functionalize_rng_ops`` off (its default): a
  random op stays a node of the forward graph, and its partitioner never
  recomputes a random node in the backward (min-cut marks them as not
  recomputable). So the backward does not draw numbers at all.
* ``aten.native_dropout`` is kept whole (it is not in the decomposition
  table) and translated here to uniform numbers, a comparison and a
  scaling. Its second result, the boolean mask, is a result of the forward
  partition; AOTAutograd saves it for the backward, whose
  ``native_dropout_backward`` (decomposed to ``grad * mask * scale``) reads
  that very mask. Forward and backward agree by construction, whatever the
  random numbers were.
* The numbers come from fuser's random ops defined without ``rng_seed`` and
  ``rng_offset`` (fd.ops.uniform): each execute() reads the seed of torch's
  default CUDA generator and reserves offsets from it, advancing it as
  torch's own random ops do (``_with_generator_values`` in
  python/fuser/_execution.py). So torch.manual_seed makes a compiled
  program repeatable, two runs draw different masks, and the eager ops
  after a fused dropout draw numbers of their own. The masks are not the
  ones eager PyTorch draws for the same seed (another Philox stream
  layout), only distributed alike: tests compare training with dropout
  against eager statistically, or with p = 0 exactly.
* Ops given an explicit ``generator=`` stay eager (the table's checks):
  fuser draws from the default generator only.
"""

import torch


def _uniform_like(ctx, x):
    """Uniform numbers in [0, 1) of x's shape, in float."""
    return ctx.fd.ops.uniform(0.0, 1.0, ctx.fd.ops.shape(x), dtype=ctx.fd_dtype(torch.float32))


def translate_native_dropout(ctx, x, p, train):
    """(output, mask): mask = u < 1 - p for u uniform in [0, 1), output =
    x * mask / (1 - p), computed in float. Outside training: x and a mask
    of ones, as ATen."""
    if train is False or p == 0:
        ones = ctx.fd.ops.full(ctx.fd.ops.shape(x), True, ctx.fd_dtype(torch.bool))
        return ctx.fd.ops.set(x), ones
    keep = 1.0 - float(p)
    mask = ctx.fd.ops.lt(_uniform_like(ctx, x), keep)
    scaled = ctx.fd.ops.mul(ctx.cast(x, torch.float32), 1.0 / keep)
    output = ctx.fd.ops.mul(scaled, ctx.cast(mask, torch.float32))
    return output, mask


def translate_bernoulli_p(ctx, x, p=0.5, *, generator=None):
    """1 with probability p, else 0, in x's shape and the result's dtype."""
    return ctx.fd.ops.lt(_uniform_like(ctx, x), float(p))


def translate_rand_like(ctx, x, **kwargs):
    return ctx.fd.ops.uniform(0.0, 1.0, ctx.fd.ops.shape(x), dtype=ctx.fd_dtype(ctx.result_dtype()))


def translate_randn_like(ctx, x, **kwargs):
    return ctx.fd.ops.normal(0.0, 1.0, ctx.fd.ops.shape(x), dtype=ctx.fd_dtype(ctx.result_dtype()))


def translate_rand(ctx, size, **kwargs):
    return ctx.fd.ops.uniform(0.0, 1.0, list(size), dtype=ctx.fd_dtype(ctx.result_dtype()))


def translate_randn(ctx, size, **kwargs):
    return ctx.fd.ops.normal(0.0, 1.0, list(size), dtype=ctx.fd_dtype(ctx.result_dtype()))


def no_explicit_generator(node):
    """The check of the random rows: a `generator=` argument stays eager."""
    if node.kwargs.get("generator") is not None:
        return "an explicit generator= (fuser draws from torch's default CUDA generator)"
    return None


def dropout_probability_in_range(node):
    p = node.args[1]
    if not isinstance(p, (int, float)):
        return f"a dropout probability known only at run time ({p})"
    if not 0 <= p < 1:
        return f"dropout probability {p} (fused for 0 <= p < 1)"
    return None
