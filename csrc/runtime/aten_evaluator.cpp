#include <runtime/aten_evaluator.h>

// The random ops' generator of the top-level runtime/ folder (the CUDA
// headers, not csrc/runtime/), compiled on the host (doc/ops.md).
#include "../../runtime/random.h"

#include <ir/all_nodes.h>
#include <ir/domain_traversal.h>
#include <runtime/aten_external_ops.h>
#include <runtime/aten_types.h>
#include <runtime/input_binding.h>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>

#include <algorithm>
#include <unordered_map>

namespace fuser {

namespace {

at::Scalar toAtenScalar(const ScalarValue& value) {
  if (value.isComplex()) {
    return at::Scalar(c10::complex<double>(
        value.asComplex().real(), value.asComplex().imag()));
  }
  if (value.isDouble()) {
    return at::Scalar(value.asDouble());
  }
  if (value.isBool()) {
    return at::Scalar(value.asBool());
  }
  return at::Scalar(value.asInt());
}

// a >> b filling zeros (ATen shifts arithmetically): the arithmetic shift
// with its sign fill masked off; 0 for amounts outside [0, width), as the
// kernels' fuserLogicalRightShift (runtime/math.h).
at::Tensor logicalRightShift(const at::Tensor& a, const at::Tensor& b) {
  const int64_t width = static_cast<int64_t>(a.element_size()) * 8;
  at::Tensor shifted = at::bitwise_right_shift(a, b);
  // ~(-1 << (width - b)): the low width - b bits (all of them for b = 0,
  // where ATen's shift by the width gives 0).
  at::Tensor mask = at::bitwise_not(
      at::bitwise_left_shift(at::full_like(shifted, -1), at::rsub(b, width)));
  at::Tensor in_range = at::logical_and(at::ge(b, 0), at::lt(b, width));
  return at::where(
      in_range, at::bitwise_and(shifted, mask), at::zeros_like(shifted));
}

class AtenEvaluator {
 public:
  AtenEvaluator(
      ExpressionEvaluator& ee, at::TensorOptions options, AtenViews views)
      : ee_(ee), options_(options), views_(views) {}

  void bindTensor(const Val* tv, const at::Tensor& tensor) {
    tensors_[tv] = tensor;
  }

  void evaluate(Expr* expr) {
    // Scalar exprs are evaluated on demand by the ExpressionEvaluator.
    if (!expr->output(0)->isA<TensorView>()) {
      return;
    }
    if (auto* op = dynamic_cast<ExternalOp*>(expr)) {
      const std::vector<at::Tensor> results = evaluateExternalOp(
          op, [this](const Val* v) { return tensorOf(v); }, ee_);
      for (size_t i = 0; i < results.size(); ++i) {
        // Dense, as a kernel would write it (the library may pad rows).
        store(op->output(i)->as<TensorView>(), results[i].contiguous(), op);
      }
      return;
    }
    auto* out = expr->output(0)->as<TensorView>();
    if (auto* mma = dynamic_cast<MmaOp*>(expr);
        mma != nullptr && onlyNarrowingCast(mma) != nullptr &&
        tensorOf(mma->a()).is_cuda()) {
      // Rounded to the operands' type by its only reader: cuBLAS writes
      // it so, in half the bytes; the cast then has nothing to do.
      tensors_[out] = computeMma(mma, /*narrow_output=*/true);
      return;
    }
    store(out, compute(expr, out), expr);
  }

  at::Tensor output(Val* val) {
    if (val->isA<TensorView>()) {
      return tensorOf(val);
    }
    return scalarTensor(val);
  }

 private:
  // Records `result` as `out`'s tensor, in out's type, checking its rank.
  void store(TensorView* out, at::Tensor result, const Expr* expr) {
    // A Welford state has one more axis (computeUnary).
    const bool is_state = isWelfordType(out->dtype());
    if (!is_state) {
      const at::ScalarType type = toAtenType(out->dtype());
      if (result.scalar_type() != type) {
        result = result.to(type);
      }
    }
    const auto rank =
        TensorDomain::noReductions(out->getLogicalDomain()).size() +
        (is_state ? 1 : 0);
    FUSER_INTERNAL_ASSERT(
        result.dim() == static_cast<int64_t>(rank), "ATen evaluation of ",
        expr->toString(), " gave a tensor of rank ", result.dim(), " for ",
        out->toString(), ", whose rank is ", rank);
    tensors_[out] = result;
  }

  at::Tensor tensorOf(const Val* val) const {
    auto it = tensors_.find(val);
    FUSER_INTERNAL_ASSERT(
        it != tensors_.end(), "ATen evaluation: ", val->toString(),
        " is used before it is computed");
    return it->second;
  }

  at::Tensor scalarTensor(const Val* val) {
    return at::scalar_tensor(
        toAtenScalar(ee_.evaluateOrThrow(val)),
        options_.dtype(toAtenType(val->dtype())));
  }

  // A tensor for an operand: the computed tensor of a TensorView, or a
  // 0-dim tensor of a scalar's value and type (ATen promotes a 0-dim
  // operand like a Python scalar, and the result is cast to the IR's type).
  at::Tensor operand(const Val* val) {
    return val->isA<TensorView>() ? tensorOf(val) : scalarTensor(val);
  }

  at::Tensor compute(Expr* expr, TensorView* out) {
    if (auto* op = dynamic_cast<LoadStoreOp*>(expr)) {
      at::Tensor in = tensorOf(op->in());
      if (out->hasRoot()) {
        // A permute (or another root -> logical transform of a copy).
        at::Tensor view = replayAxes(
            in, TensorDomain::noReductions(out->getRootDomain()),
            TensorDomain::noReductions(out->getLogicalDomain()), at::Scalar(0));
        return views_ == AtenViews::Alias ? view : view.clone();
      }
      if (auto* mma = dynamic_cast<MmaOp*>(op->in()->definition());
          views_ == AtenViews::Alias && mma != nullptr &&
          onlyResultExpr(mma) == op) {
        // The copy a float product is handed on through: the product,
        // which nothing else reads, is that tensor.
        return in;
      }
      return in.clone();
    }
    if (auto* op = dynamic_cast<UnaryOp*>(expr)) {
      return computeUnary(op->opType(), operand(op->in()), out);
    }
    if (auto* op = dynamic_cast<BinaryOp*>(expr)) {
      return computeBinary(
          op->opType(), operand(op->lhs()), operand(op->rhs()), out);
    }
    if (auto* op = dynamic_cast<TernaryOp*>(expr)) {
      FUSER_INTERNAL_ASSERT(op->opType() == TernaryOpType::Where);
      return at::where(
          operand(op->input(0)).to(at::ScalarType::Bool), operand(op->input(1)),
          operand(op->input(2)));
    }
    if (auto* op = dynamic_cast<BroadcastOp*>(expr)) {
      at::Tensor result = tensorOf(op->in());
      const auto& flags = op->getBroadcastDimFlags();
      for (size_t i = 0; i < flags.size(); ++i) {
        if (flags[i]) {
          result = result.unsqueeze(static_cast<int64_t>(i));
        }
      }
      return result;
    }
    if (auto* op = dynamic_cast<ExpandOp*>(expr)) {
      // Materialized, as a kernel writes it (a later segment binding this
      // tensor expects the dense layout its TensorView declares), unless
      // the views are kept.
      std::vector<int64_t> sizes;
      for (IterDomain* id : out->getLogicalDomain()) {
        sizes.push_back(
            id->isBroadcast() ? -1 : ee_.evaluateOrThrow(id->extent()).asInt());
      }
      at::Tensor view = tensorOf(op->in()).expand(sizes);
      return views_ == AtenViews::Alias ? view : view.contiguous();
    }
    if (auto* op = dynamic_cast<ReductionOp*>(expr)) {
      return computeReduction(op, out);
    }
    if (auto* op = dynamic_cast<MmaOp*>(expr)) {
      return computeMma(op);
    }
    if (auto* op = dynamic_cast<ViewOp*>(expr)) {
      return computeView(op);
    }
    if (auto* op = dynamic_cast<FullOp*>(expr)) {
      std::vector<int64_t> sizes;
      for (IterDomain* id : out->getLogicalDomain()) {
        sizes.push_back(ee_.evaluateOrThrow(id->extent()).asInt());
      }
      return at::full(
          sizes, toAtenScalar(ee_.evaluateOrThrow(op->fillValue())),
          options_.dtype(toAtenType(out->dtype())));
    }
    if (auto* op = dynamic_cast<IotaOp*>(expr)) {
      return computeIota(op, out);
    }
    if (auto* op = dynamic_cast<RNGOp*>(expr)) {
      return computeRandom(op, out);
    }
    if (auto* op = dynamic_cast<IndexOp*>(expr)) {
      return computeIndex(op);
    }
    if (auto* op = dynamic_cast<ResizeOp*>(expr)) {
      return computeResize(op);
    }
    if (auto* op = dynamic_cast<ScanOp*>(expr)) {
      return computeScan(op, out);
    }
    FUSER_ERROR(
        "ATen evaluation of ", expr->getOpString(),
        " is not implemented: ", expr->toString());
  }

  at::Tensor computeScan(ScanOp* op, TensorView* out) {
    const at::Tensor& in = tensorOf(op->in());
    const at::ScalarType type = toAtenType(out->dtype());
    switch (op->opType()) {
      case ScanOpType::Sum:
        return at::cumsum(in, op->dim(), type);
      case ScanOpType::Prod:
        return at::cumprod(in, op->dim(), type);
      case ScanOpType::Max:
        return std::get<0>(at::cummax(in, op->dim()));
      case ScanOpType::Min:
        return std::get<0>(at::cummin(in, op->dim()));
      case ScanOpType::MaxIndex:
        return std::get<1>(at::cummax(in, op->dim()));
      case ScanOpType::MinIndex:
        return std::get<1>(at::cummin(in, op->dim()));
    }
    FUSER_ERROR("unknown scan ", op->opType());
  }

  // start + step * i, in double (int64 for integer types) as the kernel's
  // scalar arithmetic computes it, then converted to the output type.
  at::Tensor computeIota(IotaOp* op, TensorView* out) {
    const at::ScalarType wide = isFloatingPointType(out->dtype())
                                    ? at::ScalarType::Double
                                    : at::ScalarType::Long;
    const int64_t length = ee_.evaluateOrThrow(op->length()).asInt();
    at::Tensor positions = at::arange(length, options_.dtype(wide));
    return positions * toAtenScalar(ee_.evaluateOrThrow(op->step())) +
           toAtenScalar(ee_.evaluateOrThrow(op->start()));
  }

  // torch's slicing (a view), constant_pad_nd and cat.
  at::Tensor computeResize(ResizeOp* op) {
    std::vector<at::Tensor> ins;
    for (Val* v : op->tensors()) {
      ins.push_back(tensorOf(v));
    }
    const std::vector<Val*> scalars = op->scalars();
    auto integer = [&](size_t i) {
      return ee_.evaluateOrThrow(scalars.at(i)).asInt();
    };
    switch (op->opType()) {
      case ResizeOpType::Slice: {
        at::Tensor result = ins[0];
        for (size_t axis = 0; axis * 3 < scalars.size(); ++axis) {
          const int64_t step = integer(3 * axis + 2);
          FUSER_CHECK(
              step > 0, "slice: the step along axis ", axis, " is ", step,
              "; steps must be positive.");
          result = result.slice(
              static_cast<int64_t>(axis), integer(3 * axis),
              integer(3 * axis + 1), step);
        }
        return result;
      }
      case ResizeOpType::Pad: {
        std::vector<int64_t> widths;
        for (size_t i = 1; i < scalars.size(); ++i) {
          widths.push_back(integer(i));
        }
        return at::constant_pad_nd(
            ins[0], widths, toAtenScalar(ee_.evaluateOrThrow(scalars[0])));
      }
      case ResizeOpType::Cat:
        return at::cat(ins, op->dim());
    }
    FUSER_ERROR("unreachable ResizeOp kind ", toString(op->opType()));
  }

  // torch's select, index_select, gather and scatter, after checking the
  // indices (out of range, CUDA would stop at a device assert and leave the
  // context unusable).
  at::Tensor computeIndex(IndexOp* op) {
    const at::Tensor& in = tensorOf(op->in());
    const int64_t dim = op->dim();
    const int64_t size = in.size(dim);
    const std::string name = toString(op->opType());
    if (op->opType() == IndexOpType::Select) {
      const int64_t i = ee_.evaluateOrThrow(op->index()).asInt();
      FUSER_CHECK(
          i >= -size && i < size, "select: index ", i,
          " is out of range for axis ", dim, " of size ", size, " (expected -",
          size, " <= index < ", size, ").");
      return in.select(dim, i).clone();
    }
    const at::Tensor index = tensorOf(op->index()).to(at::kLong);
    // Reading the range synchronizes, which a stream being captured into a
    // CUDA graph does not allow: the check is skipped then.
    const bool capturing =
        index.is_cuda() && c10::cuda::currentStreamCaptureStatusMayInitCtx() !=
                               c10::cuda::CaptureStatus::None;
    if (index.numel() > 0 && !capturing) {
      const int64_t low = index.min().item<int64_t>();
      const int64_t high = index.max().item<int64_t>();
      FUSER_CHECK(
          low >= 0 && high < size, name, ": the index holds ",
          low < 0 ? low : high, ", out of range for axis ", dim, " of size ",
          size, " (indices must lie in [0, ", size, ")).");
    }
    switch (op->opType()) {
      case IndexOpType::IndexSelect:
        return at::index_select(in, dim, index);
      case IndexOpType::Gather:
        return at::gather(in, dim, index);
      case IndexOpType::Scatter:
        return in.scatter(dim, index, tensorOf(op->src()));
      case IndexOpType::Select:
        break;
    }
    FUSER_ERROR("unreachable IndexOp kind ", name);
  }

  // The kernel's values: runtime/random.h compiled on the host, element by
  // element in logical order, in the type the kernel computes in.
  at::Tensor computeRandom(RNGOp* op, TensorView* out) {
    std::vector<int64_t> sizes;
    for (IterDomain* id : out->getLogicalDomain()) {
      sizes.push_back(ee_.evaluateOrThrow(id->extent()).asInt());
    }
    const auto seed = static_cast<unsigned long long>(
        ee_.evaluateOrThrow(op->seed()).asInt());
    const auto offset = static_cast<unsigned long long>(
        ee_.evaluateOrThrow(op->offset()).asInt());
    const double a = ee_.evaluateOrThrow(op->a()).asDouble();
    const double b = ee_.evaluateOrThrow(op->b()).asDouble();
    const bool in_float =
        op->opType() == RNGOpType::Uniform && out->dtype() != DataType::Double;
    at::Tensor values = at::empty(
        sizes, at::TensorOptions().dtype(
                   in_float ? at::ScalarType::Float : at::ScalarType::Double));
    const int64_t n = values.numel();
    for (int64_t i = 0; i < n; ++i) {
      const auto index = static_cast<unsigned long long>(i);
      if (op->opType() == RNGOpType::Normal) {
        values.data_ptr<double>()[i] =
            fuserNormalDouble(seed, offset, index, a, b);
      } else if (in_float) {
        values.data_ptr<float>()[i] = fuserUniformFloat(
            seed, offset, index, static_cast<float>(a), static_cast<float>(b));
      } else {
        values.data_ptr<double>()[i] =
            fuserUniformDouble(seed, offset, index, a, b);
      }
    }
    return values.to(options_.device());
  }

  // The sizes asked for, checked against the input's element count (a
  // symbolic reshape can only be checked here).
  at::Tensor computeView(ViewOp* op) {
    const at::Tensor& in = tensorOf(op->in());
    std::vector<int64_t> sizes;
    int64_t product = 1;
    for (Val* size : op->sizes()) {
      sizes.push_back(ee_.evaluateOrThrow(size).asInt());
      product *= sizes.back();
    }
    FUSER_CHECK(
        product == in.numel() &&
            std::all_of(
                sizes.begin(), sizes.end(), [](int64_t s) { return s >= 0; }),
        "reshape of ", op->in()->toString(), ": the tensor of sizes ",
        in.sizes(), " has ", in.numel(), " elements, but the sizes asked for, ",
        c10::IntArrayRef(sizes), ", hold ", product,
        ". Ask for sizes whose product is the element count (one may be -1).");
    return in.reshape(sizes);
  }

  at::Tensor computeUnary(
      UnaryOpType op, const at::Tensor& x, TensorView* out) {
    switch (op) {
      case UnaryOpType::Neg:
        return at::neg(x);
      case UnaryOpType::Abs:
        return at::abs(x);
      case UnaryOpType::Exp:
        return at::exp(x);
      case UnaryOpType::Log:
        return at::log(x);
      case UnaryOpType::Sqrt:
        return at::sqrt(x);
      case UnaryOpType::Rsqrt:
        return at::rsqrt(x);
      case UnaryOpType::Reciprocal:
        return at::reciprocal(x);
      case UnaryOpType::Relu:
        return at::relu(x);
      case UnaryOpType::Sigmoid:
        return at::sigmoid(x);
      case UnaryOpType::Tanh:
        return at::tanh(x);
      case UnaryOpType::Gelu:
        // The exact (erf) form, as UnaryOpType::Gelu means.
        return at::gelu(x, "none");
      case UnaryOpType::Silu:
        return at::silu(x);
      case UnaryOpType::Sin:
        return at::sin(x);
      case UnaryOpType::Cos:
        return at::cos(x);
#define FUSER_UNARY_OP(e, name, result, complex)
#define FUSER_UNARY_MATH(e, name, result, complex, host, aten) \
  case UnaryOpType::e:                                         \
    return aten(x);
#include <ir/unary_ops.def>
#undef FUSER_UNARY_MATH
#undef FUSER_UNARY_OP
      case UnaryOpType::Erfinv:
        return at::erfinv(x);
      case UnaryOpType::Erfcinv:
        // ATen has no erfcinv: erfcinv(x) = -ndtri(x / 2) / sqrt(2), in
        // double (accurate for tiny x, where erfinv(1 - x) is not).
        return at::special_ndtri(x.to(at::kDouble) * 0.5) * -M_SQRT1_2;
      case UnaryOpType::Round:
        return at::round(x);
      case UnaryOpType::Frac:
        return at::frac(x);
      case UnaryOpType::Sign:
        return at::sign(x);
      case UnaryOpType::Signbit:
        return at::signbit(x);
      case UnaryOpType::IsNan:
        return at::isnan(x);
      case UnaryOpType::IsInf:
        return at::isinf(x);
      case UnaryOpType::IsFinite:
        return at::isfinite(x);
      case UnaryOpType::LogicalNot:
        return at::logical_not(x);
      case UnaryOpType::BitwiseNot:
        return at::bitwise_not(x);
      case UnaryOpType::Cast:
        // A complex value cast to a real type keeps its real part, as
        // Tensor.to does (without its warning).
        return (x.is_complex() && !isComplexType(out->dtype()) ? at::real(x)
                                                               : x)
            .to(toAtenType(out->dtype()));
      case UnaryOpType::Real:
        return at::real(x).clone();
      case UnaryOpType::Imag:
        return at::imag(x).clone();
      case UnaryOpType::Conj:
        return at::conj_physical(x);
      // A Welford state is a double tensor with a last axis of 3: mean,
      // var_sum, count.
      case UnaryOpType::WelfordInit: {
        at::Tensor v = x.to(at::kDouble);
        return at::stack({v, at::zeros_like(v), at::ones_like(v)}, -1);
      }
      case UnaryOpType::WelfordAvg:
        return x.select(-1, 0).to(toAtenType(out->dtype()));
      case UnaryOpType::WelfordVarSum:
        return x.select(-1, 1).to(toAtenType(out->dtype()));
      case UnaryOpType::WelfordCount:
        return x.select(-1, 2).to(toAtenType(out->dtype()));
    }
    FUSER_ERROR("unknown unary op ", op);
  }

  at::Tensor computeBinary(
      BinaryOpType op, const at::Tensor& a, const at::Tensor& b,
      TensorView* out) {
    // The rows of ir/binary_ops.def whose ATen form is Call(f).
#define FUSER_ATEN_Call(f) return f(a, b);
#define FUSER_ATEN_Own break;
    switch (op) {
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  case BinaryOpType::e:                                              \
    FUSER_ATEN_##aten
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
    }
#undef FUSER_ATEN_Own
#undef FUSER_ATEN_Call
    return computeOwnBinary(op, a, b, out);
  }

  // The rows of ir/binary_ops.def of an Own ATen form.
  at::Tensor computeOwnBinary(
      BinaryOpType op, const at::Tensor& a, const at::Tensor& b,
      TensorView* out) {
    const bool integral =
        isIntegralType(out->dtype()) || isBooleanType(out->dtype());
    switch (op) {
      case BinaryOpType::Div:
        // True division for floating-point results; an integer result
        // truncates, as C++ (and the generated kernel) does.
        return integral ? at::div(a, b, "trunc") : at::div(a, b);
      case BinaryOpType::CeilDiv:
        return integral ? at::neg(at::div(at::neg(a), b, "floor"))
                        : at::ceil(at::div(a, b));
      case BinaryOpType::LogicalRightShift:
        return logicalRightShift(a, b);
      default:
        FUSER_ERROR("unknown binary op ", op);
    }
  }

  // A matrix product as one batched product: each operand permuted to
  // [batch, rows or columns, K] (or [batch, K, columns]) with its batch
  // axes expanded to the output's and its M (N) axes flattened. Half and
  // bfloat16 operands on the GPU accumulate in float (bmm with out_dtype,
  // cuBLAS); otherwise the operands are widened first.
  at::Tensor computeMma(MmaOp* op, bool narrow_output = false) {
    const at::Tensor a = tensorOf(op->a());
    const at::Tensor b = tensorOf(op->b());
    auto dims_of = [&](TensorView* operand, MmaRole role) {
      std::vector<int64_t> dims;
      const auto& roles = op->roles(operand);
      for (size_t i = 0; i < roles.size(); ++i) {
        if (roles[i] == role) {
          dims.push_back(static_cast<int64_t>(i));
        }
      }
      return dims;
    };
    const auto a_batch = dims_of(op->a(), MmaRole::Batch);
    const auto b_batch = dims_of(op->b(), MmaRole::Batch);
    std::vector<int64_t> batch_sizes;
    for (size_t i = 0; i < a_batch.size(); ++i) {
      batch_sizes.push_back(std::max(a.size(a_batch[i]), b.size(b_batch[i])));
    }
    auto arrange = [&](const at::Tensor& t, TensorView* operand,
                       MmaRole outer_role, bool k_last) {
      const auto batch = dims_of(operand, MmaRole::Batch);
      const auto rows = dims_of(operand, outer_role);
      const auto k = dims_of(operand, MmaRole::K);
      std::vector<int64_t> order = batch;
      int64_t flat = 1;
      for (int64_t d : rows) {
        flat *= t.size(d);
      }
      if (k_last) {
        order.insert(order.end(), rows.begin(), rows.end());
        order.push_back(k[0]);
      } else {
        order.push_back(k[0]);
        order.insert(order.end(), rows.begin(), rows.end());
      }
      at::Tensor p = t.permute(order);
      std::vector<int64_t> expanded = batch_sizes;
      for (size_t i = batch.size(); i < order.size(); ++i) {
        expanded.push_back(p.size(static_cast<int64_t>(i)));
      }
      p = p.expand(expanded);
      int64_t batches = 1;
      for (int64_t size : batch_sizes) {
        batches *= size;
      }
      const int64_t k_size = t.size(k[0]);
      return k_last ? p.reshape({batches, flat, k_size})
                    : p.reshape({batches, k_size, flat});
    };
    const at::Tensor a3 = arrange(a, op->a(), MmaRole::M, true);
    const at::Tensor b3 = arrange(b, op->b(), MmaRole::N, false);
    const at::ScalarType accumulate = toAtenType(op->out()->dtype());
    const bool narrow =
        a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16;
    at::Tensor product = narrow_output ? at::bmm(a3, b3)
                         : a.is_cuda() && narrow
                             ? at::bmm(a3, b3, accumulate)
                             : at::bmm(a3.to(accumulate), b3.to(accumulate));
    std::vector<int64_t> sizes = batch_sizes;
    for (int64_t d : dims_of(op->a(), MmaRole::M)) {
      sizes.push_back(a.size(d));
    }
    for (int64_t d : dims_of(op->b(), MmaRole::N)) {
      sizes.push_back(b.size(d));
    }
    return product.reshape(sizes);
  }

  // The input of a reduction holds the output's root axes (reduced ones
  // included). After an rFactor the output's logical domain splits some of
  // them, so the tensor is reshaped along root -> logical first; then the
  // logical Reduction axes are reduced and dropped.
  at::Tensor computeReduction(ReductionOp* op, TensorView* out) {
    const std::vector<IterDomain*>& logical = out->getLogicalDomain();
    if (op->opType() == ReductionOpType::Welford) {
      FUSER_INTERNAL_ASSERT(
          !out->hasRoot(), "ATen evaluation of an rFactor of a Welford");
      std::vector<int64_t> dims;
      for (size_t i = 0; i < logical.size(); ++i) {
        if (logical[i]->isReduction()) {
          dims.push_back(static_cast<int64_t>(i));
        }
      }
      return mergeWelfordStates(tensorOf(op->in()), dims);
    }
    const ScalarValue init = ee_.evaluateOrThrow(op->init());
    at::Tensor x = tensorOf(op->in());
    if (out->hasRoot()) {
      x = replayAxes(x, out->getRootDomain(), logical, toAtenScalar(init));
    }
    FUSER_INTERNAL_ASSERT(
        x.dim() == static_cast<int64_t>(logical.size()),
        "ATen evaluation: ", out->toString(), " has ", logical.size(),
        " logical axes but its reduction input has rank ", x.dim());
    std::vector<int64_t> dims;
    std::vector<int64_t> kept_sizes;
    for (size_t i = 0; i < logical.size(); ++i) {
      if (logical[i]->isReduction()) {
        dims.push_back(static_cast<int64_t>(i));
      } else {
        kept_sizes.push_back(x.size(static_cast<int64_t>(i)));
      }
    }
    if (dims.empty()) {
      return x;
    }
    const at::ScalarType type = toAtenType(out->dtype());
    const at::Tensor init_tensor =
        at::scalar_tensor(toAtenScalar(init), options_.dtype(type));
    switch (op->opType()) {
      case ReductionOpType::Sum: {
        at::Tensor total = at::sum(x, dims, /*keepdim=*/false, type);
        return init.asDouble() == 0.0 ? total : at::add(total, init_tensor);
      }
      case ReductionOpType::Prod: {
        at::Tensor product = x.to(type);
        for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
          product = at::prod(product, *it, /*keepdim=*/false, type);
        }
        return init.asDouble() == 1.0 ? product : at::mul(product, init_tensor);
      }
      case ReductionOpType::Max:
      case ReductionOpType::Min: {
        // amax/amin reject empty reductions; the result is then the init.
        if (x.numel() == 0) {
          return at::full(kept_sizes, toAtenScalar(init), options_.dtype(type));
        }
        const bool is_max = op->opType() == ReductionOpType::Max;
        at::Tensor reduced = is_max ? at::amax(x, dims, /*keepdim=*/false)
                                    : at::amin(x, dims, /*keepdim=*/false);
        return is_max ? at::maximum(reduced, init_tensor)
                      : at::minimum(reduced, init_tensor);
      }
      case ReductionOpType::Welford:
        break; // merged above
    }
    FUSER_ERROR("unknown reduction ", op->opType());
  }

  // The merge of the Welford states `x` (a last axis of 3, see
  // computeUnary) over `dims`: the count-weighted mean, and the var_sums
  // plus each part's squared distance to that mean (exact; an empty
  // reduction gives mean NaN, var_sum 0, count 0, as torch.var_mean).
  static at::Tensor mergeWelfordStates(
      const at::Tensor& x, const std::vector<int64_t>& dims) {
    const at::Tensor avg = x.select(-1, 0);
    const at::Tensor var_sum = x.select(-1, 1);
    const at::Tensor n = x.select(-1, 2);
    const at::Tensor total_n = at::sum(n, dims, /*keepdim=*/true);
    const at::Tensor total_avg = at::sum(avg * n, dims, true) / total_n;
    const at::Tensor total_var_sum = at::sum(
        var_sum + n * at::square(avg - total_avg).nan_to_num(0.0), dims, true);
    return at::stack(
        {total_avg.squeeze(dims), total_var_sum.squeeze(dims),
         total_n.squeeze(dims)},
        -1);
  }

  // `t`'s axes are `from`, in order. Applies the Split/Merge exprs between
  // `from` and `to` as reshapes (a non-divisible split pads the end of the
  // axis with `pad_value`) and returns the tensor with the axes of `to`, in
  // that order.
  at::Tensor replayAxes(
      at::Tensor t, std::vector<IterDomain*> axes,
      const std::vector<IterDomain*>& to, const at::Scalar& pad_value) {
    FUSER_INTERNAL_ASSERT(
        t.dim() == static_cast<int64_t>(axes.size()), "ATen evaluation: a ",
        "tensor of rank ", t.dim(), " for the axes ", idsToString(axes));
    auto position = [&](IterDomain* id) {
      auto it = std::find(axes.begin(), axes.end(), id);
      FUSER_INTERNAL_ASSERT(
          it != axes.end(), "ATen evaluation: ", id->toString(),
          " is not among ", idsToString(axes));
      return static_cast<int64_t>(it - axes.begin());
    };
    for (Expr* expr : getExprsBetween(axes, to)) {
      if (auto* split = dynamic_cast<Split*>(expr)) {
        const int64_t p = position(split->in());
        const int64_t size = t.size(p);
        const int64_t factor = ee_.evaluateOrThrow(split->factor()).asInt();
        const int64_t rest = (size + factor - 1) / factor;
        const int64_t outer = split->innerSplit() ? rest : factor;
        const int64_t inner = split->innerSplit() ? factor : rest;
        if (outer * inner != size) {
          std::vector<int64_t> padding(2 * static_cast<size_t>(t.dim() - p), 0);
          padding.back() = outer * inner - size;
          t = at::constant_pad_nd(t, padding, pad_value);
        }
        std::vector<int64_t> sizes = t.sizes().vec();
        sizes[static_cast<size_t>(p)] = inner;
        sizes.insert(sizes.begin() + p, outer);
        t = t.reshape(sizes);
        axes[static_cast<size_t>(p)] = split->inner();
        axes.insert(axes.begin() + p, split->outer());
        continue;
      }
      auto* merge = expr->as<Merge>();
      // Bring the inner axis right after the outer one, then fuse them.
      const int64_t inner_position = position(merge->inner());
      std::vector<int64_t> order;
      std::vector<IterDomain*> reordered;
      for (int64_t i = 0; i < t.dim(); ++i) {
        if (i == inner_position) {
          continue;
        }
        order.push_back(i);
        reordered.push_back(axes[static_cast<size_t>(i)]);
        if (axes[static_cast<size_t>(i)] == merge->outer()) {
          order.push_back(inner_position);
          reordered.push_back(merge->inner());
        }
      }
      t = t.permute(order);
      axes = reordered;
      const int64_t p = position(merge->outer());
      std::vector<int64_t> sizes = t.sizes().vec();
      sizes[static_cast<size_t>(p)] *= sizes[static_cast<size_t>(p) + 1];
      sizes.erase(sizes.begin() + p + 1);
      t = t.reshape(sizes);
      axes.erase(axes.begin() + p + 1);
      axes[static_cast<size_t>(p)] = merge->out();
    }
    std::vector<int64_t> order;
    for (IterDomain* id : to) {
      order.push_back(position(id));
    }
    FUSER_INTERNAL_ASSERT(
        order.size() == axes.size(), "ATen evaluation: ", idsToString(to),
        " does not cover ", idsToString(axes));
    return t.permute(order);
  }

  ExpressionEvaluator& ee_;
  at::TensorOptions options_;
  AtenViews views_;
  std::unordered_map<const Val*, at::Tensor> tensors_;
};

} // namespace

std::vector<at::Tensor> evaluateFusionWithATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs) {
  ExpressionEvaluator ee;
  return evaluateFusionWithATen(fusion, inputs, ee);
}

std::vector<at::Tensor> evaluateFusionWithATen(
    Fusion* fusion, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee, AtenViews views) {
  FUSER_CHECK(fusion != nullptr, "evaluateFusionWithATen: the fusion is null.");
  bindFusionInputs(fusion, inputs, ee, /*require_cuda=*/false);

  at::TensorOptions options = at::TensorOptions().device(at::kCPU);
  for (const c10::IValue& input : inputs) {
    if (input.isTensor() && input.toTensor().dim() > 0) {
      options = options.device(input.toTensor().device());
      break;
    }
  }
  AtenEvaluator evaluator(ee, options, views);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (fusion->inputs()[i]->isA<TensorView>()) {
      evaluator.bindTensor(fusion->inputs()[i], inputs[i].toTensor());
    }
  }
  for (Expr* expr : fusion->exprs()) {
    evaluator.evaluate(expr);
  }
  std::vector<at::Tensor> outputs;
  for (Val* out : fusion->outputs()) {
    outputs.push_back(evaluator.output(out));
  }
  return outputs;
}

} // namespace fuser
