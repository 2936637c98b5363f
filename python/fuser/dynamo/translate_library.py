"""Translators of matrix products (mm, bmm, addmm), embedding and flash
attention to fd.ops, for aten_table.py.

fuser's Matmul scheduler takes half and bfloat16 products (with the
elementwise ops after them, the epilogue) on sm_90; the products it
declines run with ATen inside the fusion. Embedding and flash attention
are fuser's library ops: ATen's kernels in a segment of their own
(doc/ops.md, "Library ops"), so that the ops around them still fuse."""


def translate_matmul(ctx, a, b):
    """mm and bmm."""
    return ctx.fd.ops.matmul(a, b)


def translate_addmm(ctx, bias, a, b, *, beta=1, alpha=1):
    """beta * bias + alpha * (a @ b): the product, then the epilogue."""
    product = ctx.fd.ops.matmul(a, b)
    if alpha != 1:
        product = ctx.fd.ops.mul(product, alpha)
    if beta == 0:
        return product
    bias = ctx.with_rank(bias, 2)
    if beta != 1:
        bias = ctx.fd.ops.mul(bias, beta)
    (product,) = ctx.as_dtype([product], ctx.result_dtype())
    return ctx.fd.ops.add(product, ctx.cast(bias, ctx.result_dtype()))


def translate_embedding(
    ctx, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False
):
    """aten.embedding(weight, indices, ...), in nvFuser's argument order.
    padding_idx and scale_grad_by_freq matter to the backward only, which
    ATen runs (embedding_dense_backward)."""
    return ctx.fd.ops.embedding_fwd(
        indices,
        weight,
        None if padding_idx == -1 else padding_idx,
        None,
        None,
        bool(scale_grad_by_freq),
        bool(sparse),
    )


def translate_flash_attention(
    ctx, query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None
):
    """_scaled_dot_product_flash_attention: of its nine results fuser gives
    the output, the log-sum-exp and the random state (seed, offset); the
    table's check makes sure nothing reads the others (cumulative sequence
    lengths, maximal lengths, debug mask)."""
    output, logsumexp, seed, offset = ctx.fd.ops.sdpfa_fwd(
        query, key, value, float(dropout_p), bool(is_causal), scale
    )
    return (output, logsumexp, None, None, None, None, seed, offset, None)


def translate_flash_attention_backward(
    ctx,
    grad_output,
    query,
    key,
    value,
    output,
    logsumexp,
    cum_seq_q,
    cum_seq_k,
    max_q,
    max_k,
    dropout_p,
    is_causal,
    philox_seed,
    philox_offset,
    *,
    scale=None,
):
    """_scaled_dot_product_flash_attention_backward for dense batches (the
    check refuses cumulative sequence lengths)."""
    return ctx.fd.ops.sdpfa_bwd(
        grad_output,
        query,
        key,
        value,
        output,
        logsumexp,
        float(dropout_p),
        bool(is_causal),
        philox_seed,
        philox_offset,
        scale,
    )
