"""Normalization bandwidth of fuser against nvFuser, PyTorch eager and
torch.compile (doc/normalization.md).

Softmax, layer norm and RMS norm forward, and the input gradients of
softmax, layer norm and RMS norm, over hidden sizes from 1024 to 16384 and
odd ones (1000, 4097), fp32 and bf16 (fp32 math); batch norm forward in
training over NHWC inputs (C = 64 to 512) with its running statistics. Each row: (bytes read +
bytes written) / median time of each frontend, and a device-to-device copy
of the same bytes (half read, half written) as the ceiling. The definitions
are written with the primitives both frontends share (max, sum, var_mean,
broadcast_in_dim, ...), so that fuser and nvFuser compile the same fusion.
Results go to benchmarks/results/normalization.{csv,md,png}.

    python3 benchmarks/bench_normalization.py [--sizes-mib 64,256,1024] [--cases a,b]
"""

import sys

import torch

from harness import Case, define_input, run_benchmark

EPS = 1e-5


def nbytes(t):
    return t.numel() * t.element_size()


def rows_for(mib, hidden, dtype):
    element = torch.tensor([], dtype=dtype).element_size()
    return max(1, mib * 1024 * 1024 // (hidden * element))


def to_float(fd, m, t, dtype):
    return t if dtype == torch.float32 else fd.ops.cast(t, m.DataType.Float)


def to_dtype(fd, m, t, dtype):
    if dtype == torch.float32:
        return t
    return fd.ops.cast(t, m.DataType.BFloat16)


def along_rows(fd, stat, like):
    """stat [rows] broadcast to like's [rows, hidden]."""
    return fd.ops.broadcast_in_dim(stat, list(like.shape), [0])


def along_hidden(fd, vec, like):
    """vec [hidden] broadcast to [rows, hidden]."""
    return fd.ops.broadcast_in_dim(vec, list(like.shape), [1])


def case_list():
    f32, bf16 = torch.float32, torch.bfloat16
    cases = []

    def rows_of(hidden, dtype, extra=()):
        """x [rows, hidden] for a size in MiB of x, and vectors [hidden]
        or [rows] after it ("w" / "r"), or more [rows, hidden] ("x")."""

        def make(mib):
            rows = rows_for(mib, hidden, dtype)
            x = torch.randn(rows, hidden, device="cuda", dtype=dtype)
            out = [x]
            for kind in extra:
                if kind == "x":
                    out.append(torch.randn_like(x))
                elif kind == "w":
                    out.append(torch.randn(hidden, device="cuda", dtype=dtype))
                elif kind == "r":
                    out.append(torch.rand(rows, device="cuda") + 0.5)
            return out

        return make

    def moved(outputs_like_x=1):
        return lambda ins: sum(nbytes(t) for t in ins) + outputs_like_x * nbytes(ins[0])

    # ---- softmax over the last axis.
    def d_softmax(dtype):
        def define(fd, m, ins):
            x = define_input(fd, m, ins[0])
            xf = to_float(fd, m, x, dtype)
            mx = along_rows(fd, fd.ops.max(xf, [1]), ins[0])
            e = fd.ops.exp(fd.ops.sub(xf, mx))
            s = along_rows(fd, fd.ops.sum(e, [1]), ins[0])
            fd.add_output(to_dtype(fd, m, fd.ops.div(e, s), dtype))

        return define

    for dtype, hidden in (
        (f32, 1024),
        (f32, 4096),
        (f32, 8192),
        (f32, 16384),
        (f32, 1000),
        (bf16, 4096),
    ):
        tag = "bf16_" if dtype == bf16 else ""
        cases.append(
            Case(
                f"{tag}softmax_Nx{hidden}",
                rows_of(hidden, dtype),
                lambda x: torch.softmax(x.float(), -1).to(x.dtype),
                d_softmax(dtype),
                moved(),
            )
        )

    # ---- layer norm with weight and bias.
    def d_layer_norm(dtype):
        def define(fd, m, ins):
            x = define_input(fd, m, ins[0])
            w = define_input(fd, m, ins[1])
            b = define_input(fd, m, ins[2])
            xf = to_float(fd, m, x, dtype)
            var, mean = fd.ops.var_mean(xf, [1], 0)
            invstd = fd.ops.rsqrt(fd.ops.add(var, EPS))
            y = fd.ops.mul(
                fd.ops.sub(xf, along_rows(fd, mean, ins[0])), along_rows(fd, invstd, ins[0])
            )
            y = fd.ops.mul(y, along_hidden(fd, to_float(fd, m, w, dtype), ins[0]))
            y = fd.ops.add(y, along_hidden(fd, to_float(fd, m, b, dtype), ins[0]))
            fd.add_output(to_dtype(fd, m, y, dtype))

        return define

    def t_layer_norm(x, w, b):
        return torch.nn.functional.layer_norm(
            x.float(), [x.shape[1]], w.float(), b.float(), EPS
        ).to(x.dtype)

    for dtype, hidden in (
        (bf16, 1024),
        (bf16, 4096),
        (bf16, 5120),
        (bf16, 8192),
        (bf16, 12288),
        (bf16, 4097),
        (f32, 4096),
    ):
        tag = "bf16_" if dtype == bf16 else ""
        cases.append(
            Case(
                f"{tag}layer_norm_Nx{hidden}",
                rows_of(hidden, dtype, "ww"),
                t_layer_norm,
                d_layer_norm(dtype),
                moved(),
                tol=3e-2 if dtype == bf16 else 1e-3,
            )
        )

    # ---- RMS norm with weight.
    def d_rms_norm(dtype):
        def define(fd, m, ins):
            x = define_input(fd, m, ins[0])
            w = define_input(fd, m, ins[1])
            xf = to_float(fd, m, x, dtype)
            ms = fd.ops.mul(fd.ops.sum(fd.ops.mul(xf, xf), [1]), 1.0 / ins[0].shape[1])
            invstd = fd.ops.rsqrt(fd.ops.add(ms, EPS))
            y = fd.ops.mul(xf, along_rows(fd, invstd, ins[0]))
            y = fd.ops.mul(y, along_hidden(fd, to_float(fd, m, w, dtype), ins[0]))
            fd.add_output(to_dtype(fd, m, y, dtype))

        return define

    def t_rms_norm(x, w):
        return torch.nn.functional.rms_norm(x.float(), [x.shape[1]], w.float(), EPS).to(x.dtype)

    for hidden in (4096, 8192, 16384):
        cases.append(
            Case(
                f"bf16_rms_norm_Nx{hidden}",
                rows_of(hidden, bf16, "w"),
                t_rms_norm,
                d_rms_norm(bf16),
                moved(),
                tol=3e-2,
            )
        )

    # ---- input gradients: softmax (dy, y), layer norm (dy, x, mean,
    # invstd, w) and RMS norm (dy, x, invstd, w).
    def d_softmax_bwd(fd, m, ins):
        dy = define_input(fd, m, ins[0])
        y = define_input(fd, m, ins[1])
        dot = along_rows(fd, fd.ops.sum(fd.ops.mul(dy, y), [1]), ins[0])
        fd.add_output(fd.ops.mul(y, fd.ops.sub(dy, dot)))

    def t_softmax_bwd(dy, y):
        return y * (dy - (dy * y).sum(-1, keepdim=True))

    cases.append(
        Case("softmax_bwd_Nx4096", rows_of(4096, f32, "x"), t_softmax_bwd, d_softmax_bwd, moved())
    )

    def d_layer_norm_bwd(fd, m, ins, weight_grads=False):
        dy = to_float(fd, m, define_input(fd, m, ins[0]), bf16)
        x = to_float(fd, m, define_input(fd, m, ins[1]), bf16)
        w = to_float(fd, m, define_input(fd, m, ins[2]), bf16)
        mean = define_input(fd, m, ins[3])
        invstd = define_input(fd, m, ins[4])
        n = float(ins[0].shape[1])
        xhat = fd.ops.mul(
            fd.ops.sub(x, along_rows(fd, mean, ins[0])), along_rows(fd, invstd, ins[0])
        )
        g = fd.ops.mul(dy, along_hidden(fd, w, ins[0]))
        mean_g = along_rows(fd, fd.ops.div(fd.ops.sum(g, [1]), n), ins[0])
        mean_gx = along_rows(fd, fd.ops.div(fd.ops.sum(fd.ops.mul(g, xhat), [1]), n), ins[0])
        dx = fd.ops.mul(
            along_rows(fd, invstd, ins[0]),
            fd.ops.sub(fd.ops.sub(g, mean_g), fd.ops.mul(xhat, mean_gx)),
        )
        fd.add_output(fd.ops.cast(dx, m.DataType.BFloat16))
        if weight_grads:
            dw = fd.ops.sum(fd.ops.mul(dy, xhat), [0])
            fd.add_output(fd.ops.cast(dw, m.DataType.BFloat16))
            fd.add_output(fd.ops.cast(fd.ops.sum(dy, [0]), m.DataType.BFloat16))

    def t_layer_norm_bwd(dy, x, w, mean, invstd):
        xhat = (x.float() - mean[:, None]) * invstd[:, None]
        g = dy.float() * w.float()
        dx = invstd[:, None] * (
            g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True)
        )
        return dx.to(x.dtype)

    def t_layer_norm_bwd_weight_grads(dy, x, w, mean, invstd):
        xhat = (x.float() - mean[:, None]) * invstd[:, None]
        dw = (dy.float() * xhat).sum(0)
        db = dy.float().sum(0)
        dx = t_layer_norm_bwd(dy, x, w, mean, invstd)
        return dx, dw.to(x.dtype), db.to(x.dtype)

    def ln_bwd_inputs(mib, hidden=4096):
        dy, x, w = rows_of(hidden, bf16, "xw")(mib)
        xf = x.float()
        return [dy, x, w, xf.mean(-1), torch.rsqrt(xf.var(-1, unbiased=False) + EPS)]

    cases.append(
        Case(
            "bf16_layer_norm_bwd_Nx4096",
            ln_bwd_inputs,
            t_layer_norm_bwd,
            d_layer_norm_bwd,
            moved(),
            tol=5e-2,
        )
    )

    for hidden in (1024, 4096):
        cases.append(
            Case(
                f"bf16_layer_norm_bwd_dw_db_Nx{hidden}",
                lambda mib, hidden=hidden: ln_bwd_inputs(mib, hidden),
                t_layer_norm_bwd_weight_grads,
                lambda fd, m, ins: d_layer_norm_bwd(fd, m, ins, weight_grads=True),
                moved(),
                tol=5e-2,
            )
        )

    def d_rms_norm_bwd(fd, m, ins, weight_grads=False):
        dy = to_float(fd, m, define_input(fd, m, ins[0]), bf16)
        x = to_float(fd, m, define_input(fd, m, ins[1]), bf16)
        w = to_float(fd, m, define_input(fd, m, ins[2]), bf16)
        invstd = along_rows(fd, define_input(fd, m, ins[3]), ins[0])
        n = float(ins[0].shape[1])
        xhat = fd.ops.mul(x, invstd)
        g = fd.ops.mul(dy, along_hidden(fd, w, ins[0]))
        mean_gx = along_rows(fd, fd.ops.div(fd.ops.sum(fd.ops.mul(g, xhat), [1]), n), ins[0])
        dx = fd.ops.mul(invstd, fd.ops.sub(g, fd.ops.mul(xhat, mean_gx)))
        fd.add_output(fd.ops.cast(dx, m.DataType.BFloat16))
        if weight_grads:
            dw = fd.ops.sum(fd.ops.mul(dy, xhat), [0])
            fd.add_output(fd.ops.cast(dw, m.DataType.BFloat16))

    def t_rms_norm_bwd(dy, x, w, invstd):
        xhat = x.float() * invstd[:, None]
        g = dy.float() * w.float()
        dx = invstd[:, None] * (g - xhat * (g * xhat).mean(-1, keepdim=True))
        return dx.to(x.dtype)

    def t_rms_norm_bwd_weight_grad(dy, x, w, invstd):
        dw = (dy.float() * x.float() * invstd[:, None]).sum(0)
        return t_rms_norm_bwd(dy, x, w, invstd), dw.to(x.dtype)

    def rms_bwd_inputs(mib):
        dy, x, w = rows_of(4096, bf16, "xw")(mib)
        xf = x.float()
        return [dy, x, w, torch.rsqrt((xf * xf).mean(-1) + EPS)]

    cases.append(
        Case(
            "bf16_rms_norm_bwd_Nx4096",
            rms_bwd_inputs,
            t_rms_norm_bwd,
            d_rms_norm_bwd,
            moved(),
            tol=5e-2,
        )
    )
    cases.append(
        Case(
            "bf16_rms_norm_bwd_dw_Nx4096",
            rms_bwd_inputs,
            t_rms_norm_bwd_weight_grad,
            lambda fd, m, ins: d_rms_norm_bwd(fd, m, ins, weight_grads=True),
            moved(),
            tol=5e-2,
        )
    )

    # ---- batch norm forward in training, NHWC memory (channels_last), with
    # the running statistics updated in place (both frontends' batch_norm).
    def bn_inputs(channels, dtype):
        def make(mib):
            element = torch.tensor([], dtype=dtype).element_size()
            n = max(1, mib * 1024 * 1024 // (channels * 32 * 32 * element))
            x = torch.randn(n, channels, 32, 32, device="cuda", dtype=dtype)
            vec = lambda: torch.randn(channels, device="cuda")  # noqa: E731
            return [
                x.contiguous(memory_format=torch.channels_last),
                vec().to(dtype),
                vec().to(dtype),
                vec(),
                torch.rand(channels, device="cuda") + 0.5,
            ]

        return make

    def d_batch_norm(dtype):
        # With the primitives both frontends share (nvFuser's direct
        # bindings have no batch_norm): statistics over N, H, W of the
        # logical NCHW input, the running statistics written back in place.
        def define(fd, m, ins):
            x, w, b, rm, rv = (define_input(fd, m, t) for t in ins)
            n, c, h, wd = ins[0].shape
            xf = to_float(fd, m, x, dtype)
            var, mean = fd.ops.var_mean(xf, [0, 2, 3], 0)
            invstd = fd.ops.rsqrt(fd.ops.add(var, EPS))

            def per_channel(v):
                return fd.ops.broadcast_in_dim(v, list(ins[0].shape), [1])

            y = fd.ops.mul(fd.ops.sub(xf, per_channel(mean)), per_channel(invstd))
            y = fd.ops.mul(y, per_channel(to_float(fd, m, w, dtype)))
            y = fd.ops.add(y, per_channel(to_float(fd, m, b, dtype)))
            fd.add_output(to_dtype(fd, m, y, dtype))
            count = n * h * wd
            unbiased = fd.ops.mul(var, count / (count - 1))
            for running, batch in ((rm, mean), (rv, unbiased)):
                updated = fd.ops.add(fd.ops.mul(running, 0.9), fd.ops.mul(batch, 0.1))
                fd.add_output(updated, alias_input=running)

        return define

    def t_batch_norm(x, w, b, rm, rv):
        y = torch.nn.functional.batch_norm(x.float(), rm, rv, w.float(), b.float(), True, 0.1, EPS)
        return y.to(x.dtype)

    for dtype, channels in ((f32, 64), (f32, 256), (f32, 512), (bf16, 256)):
        tag = "bf16_" if dtype == bf16 else ""
        cases.append(
            Case(
                f"{tag}batch_norm_nhwc_C{channels}",
                bn_inputs(channels, dtype),
                t_batch_norm,
                d_batch_norm(dtype),
                lambda ins: 2 * nbytes(ins[0]),
                tol=3e-2 if dtype == bf16 else 1e-3,
            )
        )
    return cases


def main():
    return run_benchmark(
        "normalization",
        "Normalization bandwidth",
        "GB/s = (bytes read + bytes written) / median time; `copy` is a "
        "device-to-device copy moving the same number of bytes (half read, "
        "half written) in the same run. MiB is the size of x; the inputs are "
        "x (and dy) of that size plus vectors; the output is of x's size.",
        case_list,
        "64,256",
    )


if __name__ == "__main__":
    sys.exit(main())
