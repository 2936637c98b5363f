#include <ops/normalization.h>

#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/alias.h>
#include <ops/arith.h>
#include <ops/reduction.h>
#include <ops/utils.h>

#include <initializer_list>
#include <numeric>
#include <utility>

namespace fuser {

namespace {

TensorView* inType(TensorView* tv, DataType dtype) {
  return tv->dtype() == dtype ? tv : castOp(dtype, tv);
}

void checkSameRank(TensorView* a, TensorView* b, const char* op) {
  FUSER_CHECK(
      rankOf(a) == rankOf(b), op, ": ", a->toString(), " and ", b->toString(),
      " must have the same rank; got ", rankOf(a), " and ", rankOf(b), ".");
}

// The last normalized_shape.size() axes of x.
std::vector<int64_t> normalizedAxes(
    TensorView* x, const std::vector<int64_t>& normalized_shape,
    const char* op) {
  const int64_t rank = rankOf(x);
  const auto k = static_cast<int64_t>(normalized_shape.size());
  FUSER_CHECK(
      k >= 1 && k <= rank, op, " of ", x->toString(), " (rank ", rank,
      "): normalized_shape names ", k,
      " trailing axes; give between 1 and the rank.");
  std::vector<int64_t> axes(static_cast<size_t>(k));
  std::iota(axes.begin(), axes.end(), rank - k);
  return axes;
}

std::vector<int64_t> outerAxes(TensorView* x, int64_t normalized) {
  std::vector<int64_t> axes(static_cast<size_t>(rankOf(x) - normalized));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// `tv` with new broadcast axes at [begin, end) of a result of `rank` axes.
TensorView* broadcastAlong(
    TensorView* tv, int64_t rank, int64_t begin, int64_t end) {
  std::vector<bool> flags(static_cast<size_t>(rank), false);
  for (int64_t i = begin; i < end; ++i) {
    flags[static_cast<size_t>(i)] = true;
  }
  return broadcast(tv, flags);
}

// A tensor of the normalized axes (a weight or bias), broadcast along the
// outer axes of x, in `dtype`.
TensorView* overNormalizedAxes(
    TensorView* tv, TensorView* x, int64_t normalized, DataType dtype,
    const char* op, const char* what) {
  FUSER_CHECK(
      rankOf(tv) == normalized, op, ": the ", what, " ", tv->toString(),
      " must have the rank of the normalized axes (", normalized, "); got ",
      rankOf(tv), ".");
  return broadcastAlong(
      inType(tv, dtype), rankOf(x), 0, rankOf(x) - normalized);
}

// A statistic (mean, invstd) as the forward returns it (x's rank, the
// normalized axes broadcast) or of the outer axes only (broadcast here).
TensorView* statistic(
    TensorView* tv, TensorView* x, int64_t normalized, DataType dtype,
    const char* op, const char* what) {
  FUSER_CHECK(tv != nullptr, op, ": the ", what, " is null.");
  const int64_t rank = rankOf(x);
  if (rankOf(tv) == rank) {
    return inType(tv, dtype);
  }
  FUSER_CHECK(
      rankOf(tv) == rank - normalized, op, ": the ", what, " ", tv->toString(),
      " must have the input's rank (", rank,
      ", the normalized axes of size 1) or that of its outer axes (",
      rank - normalized, "); got ", rankOf(tv), ".");
  return broadcastAlong(inType(tv, dtype), rank, rank - normalized, rank);
}

// Sums over `axes`; no axes: the tensor itself (nothing to reduce).
TensorView* sumOver(TensorView* tv, const std::vector<int64_t>& axes) {
  return axes.empty() ? tv : sum(tv, axes);
}

void checkEps(Val* eps, const char* op) {
  FUSER_CHECK(
      eps != nullptr && eps->isScalar(), op,
      ": eps must be a scalar (e.g. IrBuilder::create<Val>(1e-5)).");
}

// What the forward ops share: the type and eps checked, the normalized
// axes, x in the compute type.
struct ForwardOperands {
  DataType dtype;
  std::vector<int64_t> axes;
  int64_t normalized;
  TensorView* x;
};

ForwardOperands forwardOperands(
    TensorView* x, const std::vector<int64_t>& normalized_shape, Val* eps,
    const char* op) {
  ForwardOperands f;
  f.dtype = ops::statisticsType(x, op);
  checkEps(eps, op);
  f.axes = normalizedAxes(x, normalized_shape, op);
  f.normalized = static_cast<int64_t>(f.axes.size());
  f.x = inType(x, f.dtype);
  return f;
}

// What the backward ops share: the types checked, the normalized axes, dy
// in the compute type.
struct BackwardOperands {
  DataType dtype;
  std::vector<int64_t> axes;
  int64_t normalized;
  TensorView* dy;
};

BackwardOperands backwardOperands(
    TensorView* dy, TensorView* x, const std::vector<int64_t>& normalized_shape,
    const char* op) {
  BackwardOperands b;
  b.dtype = ops::statisticsType(x, op);
  ops::statisticsType(dy, op);
  checkSameRank(dy, x, op);
  b.axes = normalizedAxes(x, normalized_shape, op);
  b.normalized = static_cast<int64_t>(b.axes.size());
  b.dy = inType(dy, b.dtype);
  return b;
}

} // namespace

TensorView* softmax(TensorView* x, int64_t dim) {
  const DataType dtype = ops::statisticsType(x, "softmax");
  TensorView* xf = inType(x, dtype);
  TensorView* shifted = sub(xf, max(xf, {dim}, /*keep_dim=*/true));
  TensorView* e = exp(shifted);
  return inType(div(e, sum(e, {dim}, /*keep_dim=*/true)), x->dtype());
}

TensorView* log_softmax(TensorView* x, int64_t dim) {
  const DataType dtype = ops::statisticsType(x, "log_softmax");
  TensorView* xf = inType(x, dtype);
  TensorView* shifted = sub(xf, max(xf, {dim}, /*keep_dim=*/true));
  TensorView* log_total = log(sum(exp(shifted), {dim}, /*keep_dim=*/true));
  return inType(sub(shifted, log_total), x->dtype());
}

namespace {

// dy and y of a softmax backward, checked, in the compute type.
std::pair<TensorView*, TensorView*> softmaxBackwardOperands(
    TensorView* dy, TensorView* y, const char* op) {
  const DataType dtype = ops::statisticsType(dy, op);
  ops::statisticsType(y, op);
  checkSameRank(dy, y, op);
  return {inType(dy, dtype), inType(y, dtype)};
}

} // namespace

TensorView* softmax_backward(TensorView* dy, TensorView* y, int64_t dim) {
  const auto [dyf, yf] = softmaxBackwardOperands(dy, y, "softmax_backward");
  TensorView* dot = sum(mul(dyf, yf), {dim}, /*keep_dim=*/true);
  return inType(mul(yf, sub(dyf, dot)), dy->dtype());
}

TensorView* log_softmax_backward(TensorView* dy, TensorView* y, int64_t dim) {
  const auto [dyf, yf] = softmaxBackwardOperands(dy, y, "log_softmax_backward");
  TensorView* total = sum(dyf, {dim}, /*keep_dim=*/true);
  return inType(sub(dyf, mul(exp(yf), total)), dy->dtype());
}

ForwardNormResult layer_norm(
    TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* weight, TensorView* bias, Val* eps) {
  const auto [dtype, axes, k, xf] =
      forwardOperands(x, normalized_shape, eps, "layer_norm");
  // The biased variance (correction 0), as layer_norm normalizes by it.
  VarMeanResult stats =
      varianceMean(xf, axes, /*correction=*/0, /*keep_dim=*/true);
  ForwardNormResult result;
  result.mean = stats.mean;
  result.invstd = rsqrt(add(stats.var, eps));
  TensorView* y = mul(sub(xf, stats.mean), result.invstd);
  if (weight != nullptr) {
    y = mul(y, overNormalizedAxes(weight, x, k, dtype, "layer_norm", "weight"));
  }
  if (bias != nullptr) {
    y = add(y, overNormalizedAxes(bias, x, k, dtype, "layer_norm", "bias"));
  }
  result.output = inType(y, x->dtype());
  return result;
}

ForwardNormResult rms_norm(
    TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* weight, Val* eps) {
  const auto [dtype, axes, k, xf] =
      forwardOperands(x, normalized_shape, eps, "rms_norm");
  ForwardNormResult result;
  result.invstd = rsqrt(add(mean(mul(xf, xf), axes, /*keep_dim=*/true), eps));
  TensorView* y = mul(xf, result.invstd);
  if (weight != nullptr) {
    y = mul(y, overNormalizedAxes(weight, x, k, dtype, "rms_norm", "weight"));
  }
  result.output = inType(y, x->dtype());
  return result;
}

namespace {

// A per-channel tensor ([C]) of batch_norm, broadcast along x's other axes
// in `dtype`.
TensorView* perChannel(
    TensorView* tv, int64_t rank, int64_t channel, DataType dtype) {
  std::vector<bool> flags(static_cast<size_t>(rank), true);
  flags[static_cast<size_t>(channel)] = false;
  return broadcast(inType(tv, dtype), flags);
}

// What batch_norm and its backward share: x's channel axis, the axes its
// statistics reduce, and their element count (a Double scalar).
struct ChannelAxes {
  int64_t rank;
  int64_t channel;
  std::vector<int64_t> reduced;
  Val* count;
};

// Checks x and the per-channel tensors (nullptr allowed), before any op
// is added, so that a bad call adds nothing.
ChannelAxes channelAxes(
    TensorView* x, bool channels_last, const char* op,
    std::initializer_list<std::pair<TensorView*, const char*>> per_channel) {
  ChannelAxes c;
  c.rank = rankOf(x);
  FUSER_CHECK(
      c.rank >= 2, op, " of ", x->toString(), " (rank ", c.rank,
      "): the input needs a batch and a channel axis.");
  for (auto [tv, what] : per_channel) {
    FUSER_CHECK(
        tv == nullptr || rankOf(tv) == 1, op, ": the ", what, " ",
        tv->toString(), " must have one axis, the channels; got rank ",
        rankOf(tv), ".");
  }
  c.channel = channels_last ? c.rank - 1 : 1;
  c.count = IrBuilder::create<Val>(1.0);
  const auto logical = TensorDomain::noReductions(x->getLogicalDomain());
  for (int64_t a = 0; a < c.rank; ++a) {
    if (a != c.channel) {
      c.reduced.push_back(a);
      c.count = mul(c.count, logical[static_cast<size_t>(a)]->extent());
    }
  }
  return c;
}

// (1 - momentum) * running + momentum * batch, in running's type.
TensorView* runningUpdate(
    TensorView* running, TensorView* batch, Val* momentum, DataType dtype) {
  Val* keep = sub(IrBuilder::create<Val>(1.0), momentum);
  TensorView* updated =
      add(mul(inType(running, dtype), keep), mul(batch, momentum));
  return inType(updated, running->dtype());
}

} // namespace

BatchNormResult batch_norm(
    TensorView* x, TensorView* weight, TensorView* bias,
    TensorView* running_mean, TensorView* running_var, bool training,
    Val* momentum, Val* eps, bool channels_last) {
  const char* op = "batch_norm";
  const DataType dtype = ops::statisticsType(x, op);
  checkEps(eps, op);
  FUSER_CHECK(
      (running_mean == nullptr) == (running_var == nullptr),
      "batch_norm: give both running_mean and running_var, or neither.");
  const ChannelAxes c = channelAxes(
      x, channels_last, op,
      {{weight, "weight"},
       {bias, "bias"},
       {running_mean, "running_mean"},
       {running_var, "running_var"}});
  FUSER_CHECK(
      !training || running_mean == nullptr ||
          (momentum != nullptr && momentum->isScalar()),
      "batch_norm: updating the running statistics needs momentum, a "
      "scalar.");
  const int64_t rank = c.rank;
  const int64_t channel = c.channel;
  TensorView* xf = inType(x, dtype);
  BatchNormResult result;
  TensorView* var = nullptr;
  if (training) {
    VarMeanResult stats = varianceMean(xf, c.reduced, /*correction=*/0, false);
    result.mean = stats.mean;
    var = stats.var;
    if (running_mean != nullptr) {
      TensorView* unbiased =
          div(mul(var, c.count), sub(c.count, IrBuilder::create<Val>(1.0)));
      result.running_mean =
          runningUpdate(running_mean, result.mean, momentum, dtype);
      result.running_var =
          runningUpdate(running_var, unbiased, momentum, dtype);
    }
  } else {
    FUSER_CHECK(
        running_mean != nullptr,
        "batch_norm in evaluation (training=false) normalizes by "
        "running_mean and running_var; give both.");
    result.mean = inType(running_mean, dtype);
    var = inType(running_var, dtype);
  }
  result.invstd = rsqrt(add(var, eps));
  TensorView* y =
      mul(sub(xf, perChannel(result.mean, rank, channel, dtype)),
          perChannel(result.invstd, rank, channel, dtype));
  if (weight != nullptr) {
    y = mul(y, perChannel(weight, rank, channel, dtype));
  }
  if (bias != nullptr) {
    y = add(y, perChannel(bias, rank, channel, dtype));
  }
  result.output = inType(y, x->dtype());
  return result;
}

BackwardNormResult batch_norm_backward(
    TensorView* dy, TensorView* x, TensorView* weight, TensorView* running_mean,
    TensorView* running_var, TensorView* save_mean, TensorView* save_invstd,
    bool training, Val* eps, bool channels_last) {
  const char* op = "batch_norm_backward";
  const DataType dtype = ops::statisticsType(x, op);
  ops::statisticsType(dy, op);
  checkSameRank(dy, x, op);
  TensorView* mean_in = training ? save_mean : running_mean;
  TensorView* spread_in = training ? save_invstd : running_var;
  FUSER_CHECK(
      mean_in != nullptr && spread_in != nullptr, op,
      training ? ": training needs save_mean and save_invstd (batch_norm's "
                 "mean and invstd)."
               : ": evaluation (training=false) needs running_mean and "
                 "running_var.");
  if (!training) {
    checkEps(eps, op);
  }
  const ChannelAxes c = channelAxes(
      x, channels_last, op,
      {{weight, "weight"},
       {mean_in, training ? "save_mean" : "running_mean"},
       {spread_in, training ? "save_invstd" : "running_var"}});
  auto along = [&](TensorView* tv) {
    return perChannel(tv, c.rank, c.channel, dtype);
  };
  TensorView* mean = inType(mean_in, dtype);
  TensorView* invstd = training ? inType(spread_in, dtype)
                                : rsqrt(add(inType(spread_in, dtype), eps));
  TensorView* dyf = inType(dy, dtype);
  TensorView* centered = sub(inType(x, dtype), along(mean));
  // The per-channel sums of dy and of dy * (x - mean).
  TensorView* sum_dy = sum(dyf, c.reduced);
  TensorView* dot = sum(mul(dyf, centered), c.reduced);
  TensorView* scale =
      weight == nullptr ? invstd : mul(invstd, inType(weight, dtype));
  TensorView* dx = dyf;
  if (training) {
    // dx = (dy - mean(dy) - (x - mean) * dot * invstd^2 / n) * invstd * w.
    TensorView* mean_dy = div(sum_dy, c.count);
    TensorView* proj = div(mul(dot, mul(invstd, invstd)), c.count);
    dx = sub(sub(dyf, along(mean_dy)), mul(centered, along(proj)));
  }
  const DataType param_type = weight != nullptr ? weight->dtype() : x->dtype();
  BackwardNormResult grads;
  grads.grad_input = inType(mul(dx, along(scale)), x->dtype());
  grads.grad_weight = inType(mul(dot, invstd), param_type);
  grads.grad_bias = inType(sum_dy, param_type);
  return grads;
}

BackwardNormResult layer_norm_backward(
    TensorView* dy, TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* mean, TensorView* invstd, TensorView* weight,
    TensorView* bias) {
  const char* op = "layer_norm_backward";
  const auto [dtype, axes, k, dyf] =
      backwardOperands(dy, x, normalized_shape, op);
  TensorView* xhat =
      mul(sub(inType(x, dtype), statistic(mean, x, k, dtype, op, "mean")),
          statistic(invstd, x, k, dtype, op, "invstd"));
  TensorView* g =
      weight == nullptr
          ? dyf
          : mul(dyf, overNormalizedAxes(weight, x, k, dtype, op, "weight"));
  // dx = invstd * (g - mean(g) - xhat * mean(g * xhat)), the means over
  // the normalized axes.
  TensorView* mean_g = fuser::mean(g, axes, /*keep_dim=*/true);
  TensorView* mean_gx = fuser::mean(mul(g, xhat), axes, /*keep_dim=*/true);
  BackwardNormResult grads;
  grads.grad_input = inType(
      mul(statistic(invstd, x, k, dtype, op, "invstd"),
          sub(sub(g, mean_g), mul(xhat, mean_gx))),
      x->dtype());
  const std::vector<int64_t> outer = outerAxes(x, k);
  if (weight != nullptr) {
    grads.grad_weight = inType(sumOver(mul(dyf, xhat), outer), weight->dtype());
  }
  if (bias != nullptr) {
    grads.grad_bias = inType(sumOver(dyf, outer), bias->dtype());
  }
  return grads;
}

BackwardNormResult rms_norm_backward(
    TensorView* dy, TensorView* x, const std::vector<int64_t>& normalized_shape,
    TensorView* invstd, TensorView* weight) {
  const char* op = "rms_norm_backward";
  const auto [dtype, axes, k, dyf] =
      backwardOperands(dy, x, normalized_shape, op);
  TensorView* rstd = statistic(invstd, x, k, dtype, op, "invstd");
  TensorView* xhat = mul(inType(x, dtype), rstd);
  TensorView* g =
      weight == nullptr
          ? dyf
          : mul(dyf, overNormalizedAxes(weight, x, k, dtype, op, "weight"));
  // dx = invstd * (g - xhat * mean(g * xhat)).
  TensorView* mean_gx = mean(mul(g, xhat), axes, /*keep_dim=*/true);
  BackwardNormResult grads;
  grads.grad_input = inType(mul(rstd, sub(g, mul(xhat, mean_gx))), x->dtype());
  if (weight != nullptr) {
    grads.grad_weight =
        inType(sumOver(mul(dyf, xhat), outerAxes(x, k)), weight->dtype());
  }
  return grads;
}

} // namespace fuser
