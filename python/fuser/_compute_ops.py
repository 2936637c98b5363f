"""fd.ops.* that compute values: elementwise ops (with clamp, where and
cast), factories (full, iota and the random ops), scans, triangles,
reductions, matmul and linear, softmax and its backward, layer and RMS
norms, welford and var/var_mean. fd.ops (_ops.py) calls these.

ComputeOps is one of FusionDefinition's bases (fusion_definition.py)."""

from ._C import DataType, FuserError
from ._operands import _is_int
from .dtypes import to_data_type


class ComputeOps:
    """FusionDefinition's computing ops."""

    def _elementwise(self, name, operands, call, kwargs=None):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        args = [self._operand(v, what, i + 1) for i, v in enumerate(operands)]
        out = self._wrap(call(*[a._val for a in args]))
        return self._record_op(name, args, kwargs or {}, out)

    def _unary(self, name, arg):
        return self._elementwise(name, [arg], lambda a: self._fusion.unary(name, a))

    def _binary(self, name, lhs, rhs):
        return self._elementwise(name, [lhs, rhs], lambda a, b: self._fusion.binary(name, a, b))

    def _clamp(self, arg, min_value, max_value):
        what = "fd.ops.clamp"
        self._check_defining(what)
        if min_value is None and max_value is None:
            raise FuserError(f"{what}: give min, max or both (torch.clamp needs a bound).")
        x = self._tensor_operand(arg, what)
        lo = None if min_value is None else self._operand(min_value, what, 2)
        hi = None if max_value is None else self._operand(max_value, what, 3)
        out = self._wrap(
            self._fusion.clamp(
                x._val, None if lo is None else lo._val, None if hi is None else hi._val
            )
        )
        return self._record_op("clamp", [x], {"min": lo, "max": hi}, out)

    def _where(self, pred, value1, value2):
        return self._elementwise("where", [pred, value1, value2], self._fusion.where)

    def _cast(self, arg, dtype):
        dtype = to_data_type(dtype)
        return self._elementwise(
            "cast", [arg], lambda a: self._fusion.cast(a, dtype), {"dtype": dtype}
        )

    def _full(self, shape, fill_value, dtype):
        what = "fd.ops.full"
        self._check_defining(what)
        sizes, vals = self._sizes_operand(shape, what, "shape")
        value = self._scalar_operand(fill_value, what, 2)
        dtype = to_data_type(dtype)
        out = self._wrap(self._fusion.full(vals, value._val, dtype))
        kwargs = {"shape": sizes, "fill_value": value, "dtype": dtype}
        return self._record_op("full", [], kwargs, out)

    def _iota(self, length, start, step, dtype):
        what = "fd.ops.iota"
        self._check_defining(what)
        (size,), (length_val,) = self._sizes_operand([length], what, "length")
        dtype = to_data_type(dtype)
        ends = []
        for position, value in ((2, start), (3, step)):
            ends.append(None if value is None else self._scalar_operand(value, what, position))
        out = self._wrap(
            self._fusion.iota(
                length_val,
                None if ends[0] is None else ends[0]._val,
                None if ends[1] is None else ends[1]._val,
                dtype,
            )
        )
        kwargs = {"length": size, "start": ends[0], "step": ends[1], "dtype": dtype}
        return self._record_op("iota", [], kwargs, out)

    def _random(self, name, a, b, shape, rng_seed, rng_offset, dtype):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        if (rng_seed is None) != (rng_offset is None):
            raise FuserError(
                f"{what}: give both rng_seed and rng_offset, or neither (then "
                "each execute() draws them from torch's default CUDA generator)."
            )
        # The parameters first, as the printed definition lists them.
        a = self._scalar_operand(a, what, 1)
        b = self._scalar_operand(b, what, 2)
        sizes, vals = self._sizes_operand(shape, what, "shape")
        dtype = to_data_type(dtype)
        if rng_seed is None:
            seed = offset = None
            seed_val, offset_val = self._generator_input(), self._generator_input()
        else:
            seed = self._scalar_operand(rng_seed, what, "rng_seed")
            offset = self._scalar_operand(rng_offset, what, "rng_offset")
            seed_val, offset_val = seed._val, offset._val
        out = self._wrap(
            self._fusion.random(name, vals, a._val, b._val, seed_val, offset_val, dtype)
        )
        kwargs = {"shape": sizes, "rng_seed": seed, "rng_offset": offset, "dtype": dtype}
        return self._record_op(name, [a, b], kwargs, out)

    def _scan(self, name, arg, dim, dtype):
        _, tensor = self._dim_op_operand(name, arg, dim)
        dtype = DataType.Null if dtype is None else to_data_type(dtype)
        out = self._wrap(self._fusion.scan(name, tensor._val, int(dim), dtype))
        kwargs = {"dim": int(dim)}
        if dtype != DataType.Null:
            kwargs["dtype"] = dtype
        return self._record_op(name, [tensor], kwargs, out)

    def _scan_with_indices(self, name, arg, dim):
        _, tensor = self._dim_op_operand(name, arg, dim)
        vals = self._fusion.scan_with_indices(name, tensor._val, int(dim))
        outs = tuple(self._wrap(v) for v in vals)
        self._record_op(name, [tensor], {"dim": int(dim)}, outs)
        return outs

    def _triangle(self, name, arg, diagonal):
        _, tensor = self._dim_op_operand(name, arg, diagonal, "diagonal")
        out = self._wrap(self._fusion.triangle(name, tensor._val, int(diagonal)))
        return self._record_op(name, [tensor], {"diagonal": int(diagonal)}, out)

    def _reduction(self, name, arg, dims, keepdim, dtype):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = self._reduction_dims(tensor, dims, what)
        dtype = DataType.Null if dtype is None else to_data_type(dtype)
        out = self._wrap(self._fusion.reduction(name, tensor._val, dims, bool(keepdim), dtype))
        return self._record_op(
            name,
            [tensor],
            {"dims": dims, "keepdim": bool(keepdim), "dtype": dtype},
            out,
        )

    def _matmul(self, arg1, arg2):
        what = "fd.ops.matmul"
        self._check_defining(what)
        a = self._tensor_operand(arg1, what, 1)
        b = self._tensor_operand(arg2, what, 2)
        out = self._wrap(self._fusion.matmul(a._val, b._val))
        return self._record_op("matmul", [a, b], {}, out)

    def _linear(self, arg1, arg2, bias):
        what = "fd.ops.linear"
        self._check_defining(what)
        x = self._tensor_operand(arg1, what, 1)
        weight = self._tensor_operand(arg2, what, 2)
        operands = [x, weight]
        bias_val = None
        if bias is not None:
            bias = self._tensor_operand(bias, what, 3)
            operands.append(bias)
            bias_val = bias._val
        out = self._wrap(self._fusion.linear(x._val, weight._val, bias_val))
        return self._record_op("linear", operands, {}, out)

    def _softmax(self, name, arg, dim):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        if not _is_int(dim):
            raise TypeError(f"{what}: dim must be an int, got {dim!r}.")
        out = self._wrap(self._fusion.softmax(tensor._val, int(dim), name == "log_softmax"))
        return self._record_op(name, [tensor], {"dim": int(dim)}, out)

    def _softmax_backward(self, name, grad, output, dim):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        dy = self._tensor_operand(grad, what, 1)
        y = self._tensor_operand(output, what, 2)
        if not _is_int(dim):
            raise TypeError(f"{what}: dim must be an int, got {dim!r}.")
        log = name == "log_softmax_backward"
        out = self._wrap(self._fusion.softmax_backward(dy._val, y._val, int(dim), log))
        return self._record_op(name, [dy, y], {"dim": int(dim)}, out)

    def _norm(self, name, arg, normalized_shape, weight, bias, eps):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        x = self._tensor_operand(arg, what, 1)
        if _is_int(normalized_shape):
            normalized_shape = [normalized_shape]
        shape = [int(s) for s in normalized_shape]
        named = [("weight", weight)] + ([("bias", bias)] if name == "layer_norm" else [])
        tensors = self._optional_tensor_operands(what, named, 2)
        vals = {key: None if t is None else t._val for key, t in tensors.items()}
        kwargs = {"normalized_shape": shape}
        kwargs.update((key, t) for key, t in tensors.items() if t is not None)
        if not isinstance(eps, (int, float)) or isinstance(eps, bool):
            raise TypeError(f"{what}: eps must be a Python number, got {eps!r}.")
        kwargs["eps"] = float(eps)
        if name == "layer_norm":
            val = self._fusion.layer_norm(x._val, shape, vals["weight"], vals["bias"], float(eps))
        else:
            val = self._fusion.rms_norm(x._val, shape, vals["weight"], float(eps))
        return self._record_op(name, [x], kwargs, self._wrap(val))

    def _batch_norm(
        self, arg, weight, bias, running_mean, running_var, momentum, eps, training, channels_last
    ):
        what = "fd.ops.batch_norm"
        self._check_defining(what)
        x = self._tensor_operand(arg, what, 1)
        tensors = self._optional_tensor_operands(
            what,
            [
                ("weight", weight),
                ("bias", bias),
                ("running_mean", running_mean),
                ("running_var", running_var),
            ],
            2,
        )
        momentum = self._scalar_operand(momentum, what, 6)
        eps = self._scalar_operand(eps, what, 7)
        self._check_bools(what, training=training, channels_last=channels_last)
        if training and tensors["running_mean"] is not None:
            # The updates are written into the running statistics: checked
            # before the op is added, so that a bad call adds nothing.
            for key in ("running_mean", "running_var"):
                self._check_alias_target(tensors[key], what, f"{key}, updated in place,")
        vals = self._fusion.batch_norm(
            x._val,
            *[None if t is None else t._val for t in tensors.values()],
            training,
            momentum._val,
            eps._val,
            channels_last,
        )
        outs = tuple(self._wrap(v) for v in vals[:3])
        kwargs = dict(tensors)
        kwargs.update(momentum=momentum, eps=eps, training=training, channels_last=channels_last)
        self._record_op("batch_norm", [x], kwargs, outs)
        for key, val in zip(("running_mean", "running_var"), vals[3:]):
            if val is not None:
                self._add_alias_output(self._wrap(val), tensors[key])
        return outs

    def _batch_norm_backward(
        self,
        grad,
        arg,
        weight,
        running_mean,
        running_var,
        save_mean,
        save_invstd,
        eps,
        training,
        channels_last,
    ):
        what = "fd.ops.batch_norm_backward"
        self._check_defining(what)
        dy = self._tensor_operand(grad, what, 1)
        x = self._tensor_operand(arg, what, 2)
        tensors = self._optional_tensor_operands(
            what,
            [
                ("weight", weight),
                ("running_mean", running_mean),
                ("running_var", running_var),
                ("save_mean", save_mean),
                ("save_invstd", save_invstd),
            ],
            3,
        )
        eps = self._scalar_operand(eps, what, 8)
        self._check_bools(what, training=training, channels_last=channels_last)
        vals = self._fusion.batch_norm_backward(
            dy._val,
            x._val,
            *[None if t is None else t._val for t in tensors.values()],
            training,
            eps._val,
            channels_last,
        )
        outs = tuple(self._wrap(v) for v in vals)
        kwargs = dict(tensors)
        kwargs.update(eps=eps, training=training, channels_last=channels_last)
        self._record_op("batch_norm_backward", [dy, x], kwargs, outs)
        return outs

    def _welford(self, arg, dims):
        what = "fd.ops.welford"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = self._reduction_dims(tensor, dims, what)
        outs = tuple(self._wrap(v) for v in self._fusion.welford(tensor._val, dims))
        self._record_op("welford", [tensor], {"dims": dims}, outs)
        return outs

    def _var_mean(self, name, arg, dims, correction, keepdim):
        what = f"fd.ops.{name}"
        self._check_defining(what)
        tensor = self._tensor_operand(arg, what)
        dims = self._reduction_dims(tensor, dims, what)
        if not _is_int(correction):
            raise TypeError(f"{what}: correction must be an int, got {correction!r}.")
        vals = self._fusion.var_mean(tensor._val, dims, int(correction), bool(keepdim))
        # fd.ops.var names only the variance.
        outs = tuple(self._wrap(v) for v in (vals[:1] if name == "var" else vals))
        kwargs = {"dims": dims, "correction": int(correction), "keepdim": bool(keepdim)}
        self._record_op(name, [tensor], kwargs, outs if len(outs) > 1 else outs[0])
        return outs if len(outs) > 1 else outs[0]
