// Bindings of the IR: Fusion (owned by Python), handles to its nodes, and
// the op builders. No ATen here: this file compiles against the core only.
#include "bindings.h"

#include <base/exceptions.h>
#include <fusion.h>
#include <ir/all_nodes.h>
#include <ir/builder.h>
#include <ops/all_ops.h>
#include <transform/inlining.h>

#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace fuser::python {

namespace {

// Nodes belong to their Fusion; Python only holds references.
template <typename T>
using Handle = std::unique_ptr<T, py::nodelete>;

constexpr auto kRef = py::return_value_policy::reference_internal;

// The Python names of the unary ops: those of ir/unary_ops.def but the
// Internal rows.
const std::unordered_map<std::string, UnaryOpType>& unaryOps() {
  static const std::unordered_map<std::string, UnaryOpType> ops = [] {
    std::unordered_map<std::string, UnaryOpType> names;
#define FUSER_UNARY_OP(e, name, result, complex)      \
  if (UnaryResult::result != UnaryResult::Internal) { \
    names.emplace(#name, UnaryOpType::e);             \
  }
#include <ir/unary_ops.def>
#undef FUSER_UNARY_OP
    return names;
  }();
  return ops;
}

// The Python names of the binary ops: those of ir/binary_ops.def but the
// Internal rows, and fmod, torch's name of mod.
const std::unordered_map<std::string, BinaryOpType>& binaryOps() {
  static const std::unordered_map<std::string, BinaryOpType> ops = [] {
    std::unordered_map<std::string, BinaryOpType> names;
#define FUSER_BINARY_OP(e, name, types, complex, kernel, host, aten) \
  if (BinaryTypes::types != BinaryTypes::Internal) {                 \
    names.emplace(#name, BinaryOpType::e);                           \
  }
#include <ir/binary_ops.def>
#undef FUSER_BINARY_OP
    names.emplace("fmod", BinaryOpType::Mod);
    return names;
  }();
  return ops;
}

template <typename Map>
std::vector<std::string> sortedKeys(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& entry : map) {
    keys.push_back(entry.first);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The value of a constant scalar as a Python object (None when symbolic).
py::object scalarValue(const Val* val) {
  if (!val->isConst()) {
    return py::none();
  }
  const ScalarValue& value = val->value();
  if (value.isBool()) {
    return py::bool_(value.asBool());
  }
  if (value.isInt()) {
    return py::int_(value.asInt());
  }
  return py::float_(value.asDouble());
}

ScalarValue toScalarValue(const py::handle& value) {
  // bool before int: a Python bool is an int.
  if (py::isinstance<py::bool_>(value)) {
    return ScalarValue(value.cast<bool>());
  }
  if (py::isinstance<py::int_>(value)) {
    return ScalarValue(value.cast<int64_t>());
  }
  if (py::isinstance<py::float_>(value)) {
    return ScalarValue(value.cast<double>());
  }
  if (PyComplex_Check(value.ptr())) {
    return ScalarValue(std::complex<double>(
        PyComplex_RealAsDouble(value.ptr()),
        PyComplex_ImagAsDouble(value.ptr())));
  }
  FUSER_CHECK(
      false,
      "A scalar value must be a bool, an int, a float or a complex; got ",
      py::str(py::type::handle_of(value)).cast<std::string>(), ".");
  return ScalarValue();
}

// A fusion input tensor. `shape`: -1 symbolic, 1 broadcast, else a constant
// extent. `contiguity` is in allocation order (one entry per axis, none for
// broadcast axes). `stride_order[i]` ranks the stride of axis i (0: the
// smallest); empty or the identity order means row-major.
TensorView* defineTensor(
    Fusion& fusion, const std::vector<int64_t>& shape,
    const Contiguity& contiguity, DataType dtype,
    const std::vector<int64_t>& stride_order) {
  FusionGuard fg(&fusion);
  const auto rank = static_cast<int64_t>(shape.size());
  FUSER_CHECK(
      dtype != DataType::Null && dtype != DataType::Index,
      "define_tensor: ", dtype, " is not a tensor data type.");
  std::vector<IterDomain*> logical;
  for (int64_t size : shape) {
    FUSER_CHECK(
        size == -1 || size >= 0, "define_tensor: size ", size,
        " must be -1 (symbolic) or non-negative.");
    if (size == 1) {
      logical.push_back(IrBuilder::create<IterDomain>(
          fusion.zeroVal(), fusion.oneVal(), IterType::Broadcast));
      continue;
    }
    Val* extent =
        size == -1 ? IrBuilder::create<Val>(DataType::Index)
                   : IrBuilder::create<Val>(ScalarValue(size), DataType::Index);
    logical.push_back(IrBuilder::create<IterDomain>(fusion.zeroVal(), extent));
  }
  std::vector<IterDomain*> allocation;
  if (!stride_order.empty()) {
    FUSER_CHECK(
        static_cast<int64_t>(stride_order.size()) == rank,
        "define_tensor: stride_order needs one entry per dimension (", rank,
        "), got ", stride_order.size(), ".");
    // Outermost first: the axis with the largest stride rank.
    allocation.assign(static_cast<size_t>(rank), nullptr);
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t order = stride_order[static_cast<size_t>(i)];
      FUSER_CHECK(
          order >= 0 && order < rank, "define_tensor: stride_order ",
          "entries must be in [0, ", rank, "), got ", order, ".");
      IterDomain*& slot = allocation[static_cast<size_t>(rank - 1 - order)];
      FUSER_CHECK(
          slot == nullptr, "define_tensor: stride_order must be a ",
          "permutation of 0..", rank - 1, "; ", order, " appears twice.");
      slot = logical[static_cast<size_t>(i)];
    }
    if (allocation == logical) {
      allocation.clear();
    }
  }
  auto* domain = IrBuilder::create<TensorDomain>(
      std::vector<IterDomain*>{}, logical, allocation,
      std::vector<IterDomain*>{}, contiguity);
  auto* tv = IrBuilder::create<TensorView>(domain, dtype);
  fusion.addInput(tv);
  return tv;
}

Val* defineScalar(Fusion& fusion, const py::object& value, DataType dtype) {
  FusionGuard fg(&fusion);
  if (value.is_none()) {
    FUSER_CHECK(
        dtype != DataType::Null,
        "define_scalar: a scalar input (value None) needs a dtype.");
    Val* val = IrBuilder::create<Val>(dtype);
    fusion.addInput(val);
    return val;
  }
  ScalarValue scalar = toScalarValue(value);
  if (dtype == DataType::Null) {
    return IrBuilder::create<Val>(scalar);
  }
  // Keep the value's kind consistent with its type.
  if (isComplexType(dtype)) {
    scalar = ScalarValue(scalar.asComplex());
  } else if (isFloatingPointType(dtype)) {
    scalar = ScalarValue(scalar.asDouble());
  } else if (isIntegralType(dtype)) {
    scalar = ScalarValue(scalar.asInt());
  } else if (isBooleanType(dtype)) {
    scalar = ScalarValue(scalar.asBool());
  }
  return IrBuilder::create<Val>(scalar, dtype);
}

TensorView* asTensor(Val* val, const char* op) {
  auto* tv = dynamic_cast<TensorView*>(val);
  FUSER_CHECK(
      tv != nullptr, op, ": needs a tensor, got the scalar ", val->toString(),
      ".");
  return tv;
}

Val* reduction(
    Fusion& fusion, const std::string& op, TensorView* tv,
    const std::vector<int64_t>& axes, bool keep_dim, DataType dtype) {
  FusionGuard fg(&fusion);
  if (op == "sum") {
    return sum(tv, axes, keep_dim, dtype);
  }
  if (op == "prod") {
    return prod(tv, axes, keep_dim, dtype);
  }
  TensorView* out = nullptr;
  if (op == "max") {
    out = max(tv, axes, keep_dim);
  } else if (op == "min") {
    out = min(tv, axes, keep_dim);
  } else if (op == "mean") {
    out = mean(tv, axes, keep_dim);
  } else {
    FUSER_CHECK(false, "Unknown reduction '", op, "'.");
  }
  if (dtype != DataType::Null && dtype != out->dtype()) {
    out = castOp(dtype, out);
  }
  return out;
}

std::pair<IterDomain*, IterDomain*> splitId(
    Fusion& fusion, IterDomain* id, const py::object& factor,
    bool inner_split) {
  FusionGuard fg(&fusion);
  Val* factor_val = nullptr;
  if (py::isinstance<Val>(factor)) {
    factor_val = factor.cast<Val*>();
    FUSER_CHECK(
        factor_val->isScalar() && isIntegralType(factor_val->dtype()),
        "split: the factor must be an integer scalar, got ",
        factor_val->toString(), ".");
  } else {
    FUSER_CHECK(
        py::isinstance<py::int_>(factor) && !py::isinstance<py::bool_>(factor),
        "split: the factor must be an int or an integer scalar.");
    const auto value = factor.cast<int64_t>();
    FUSER_CHECK(value > 0, "split: the factor must be positive, got ", value);
    factor_val = IrBuilder::create<Val>(ScalarValue(value), DataType::Index);
  }
  return IterDomain::split(id, factor_val, inner_split);
}

std::vector<py::object> contiguityList(const Contiguity& contiguity) {
  std::vector<py::object> flags;
  for (const auto& flag : contiguity) {
    flags.push_back(
        flag.has_value() ? py::bool_(*flag) : py::object(py::none()));
  }
  return flags;
}

} // namespace

void bindIr(py::module_& m) {
  py::class_<Val, Handle<Val>>(m, "Val")
      .def_property_readonly("name", &Val::name)
      .def_property_readonly("dtype", &Val::dtype)
      .def("is_const", &Val::isConst)
      .def("value", &scalarValue, "The value of a constant scalar, else None.")
      .def("is_tensor", [](const Val& v) { return v.isA<TensorView>(); })
      .def("same_as", [](const Val& a, const Val* b) { return &a == b; })
      .def("__str__", [](const Val& v) { return v.toString(); })
      .def("inline_string", [](const Val& v) { return v.toInlineString(); });

  py::class_<IterDomain, Val, Handle<IterDomain>>(m, "IterDomain")
      .def("extent", &IterDomain::extent, kRef)
      .def("is_broadcast", &IterDomain::isBroadcast)
      .def("is_reduction", &IterDomain::isReduction)
      .def_property_readonly("parallel_type", &IterDomain::getParallelType)
      .def("parallelize", &IterDomain::parallelize, py::arg("parallel_type"));

  py::class_<TensorView, Val, Handle<TensorView>>(m, "TensorView")
      .def_property_readonly(
          "ndim",
          [](const TensorView& tv) {
            return TensorDomain::noReductions(tv.getLogicalDomain()).size();
          })
      .def("axis", &TensorView::axis, py::arg("i"), kRef)
      .def("logical_domain", &TensorView::getLogicalDomain, kRef)
      .def("root_domain", &TensorView::getMaybeRootDomain, kRef)
      .def("allocation_domain", &TensorView::getMaybeAllocationDomain, kRef)
      .def("loop_domain", &TensorView::getLoopDomain, kRef)
      .def("has_allocation", &TensorView::hasAllocation)
      .def(
          "contiguity",
          [](const TensorView& tv) {
            return contiguityList(tv.getContiguity());
          })
      .def("domain_string", [](const TensorView& tv) {
        return tv.domainsToString();
      });

  py::class_<Fusion>(m, "Fusion")
      .def(py::init<>())
      .def("inputs", &Fusion::inputs, kRef)
      .def("outputs", &Fusion::outputs, kRef)
      .def("__str__", &Fusion::toString)
      .def("math_string", &Fusion::mathToString)
      .def(
          "generate_cuda",
          [](const Fusion& fusion) {
            // A copy, serial (no parallel schedule) with every tensor
            // inlined as far as allowed so that register buffers have
            // constant sizes; lowered and printed without a GPU.
            Fusion copy(fusion);
            inlineMost(&copy);
            std::ostringstream os;
            return copy.printKernel(os);
          },
          "The CUDA C++ of the fusion as defined: serial, every tensor "
          "inlined; lowered without a GPU.")
      .def(
          "define_tensor", &defineTensor, py::arg("shape"),
          py::arg("contiguity"), py::arg("dtype"), py::arg("stride_order"),
          kRef)
      .def(
          "define_scalar", &defineScalar, py::arg("value"), py::arg("dtype"),
          kRef)
      .def(
          "add_output",
          [](Fusion& fusion, Val* val) {
            FusionGuard fg(&fusion);
            // Fusion::addOutput checks what an output may be.
            fusion.addOutput(val);
          })
      .def(
          "unary",
          [](Fusion& fusion, const std::string& op, Val* in) {
            FusionGuard fg(&fusion);
            auto it = unaryOps().find(op);
            FUSER_CHECK(it != unaryOps().end(), "Unknown unary op '", op, "'.");
            return unaryOp(it->second, in);
          },
          kRef)
      .def(
          "binary",
          [](Fusion& fusion, const std::string& op, Val* lhs, Val* rhs) {
            FusionGuard fg(&fusion);
            auto it = binaryOps().find(op);
            FUSER_CHECK(
                it != binaryOps().end(), "Unknown binary op '", op, "'.");
            return binaryOp(it->second, lhs, rhs);
          },
          kRef)
      .def(
          "trunc_div",
          [](Fusion& fusion, Val* lhs, Val* rhs) {
            FusionGuard fg(&fusion);
            return truncDiv(lhs, rhs);
          },
          kRef)
      .def(
          "where",
          [](Fusion& fusion, Val* condition, Val* a, Val* b) {
            FusionGuard fg(&fusion);
            return where(condition, a, b);
          },
          kRef)
      .def(
          "clamp",
          [](Fusion& fusion, Val* x, Val* min_value, Val* max_value) {
            FusionGuard fg(&fusion);
            return clamp(x, min_value, max_value);
          },
          py::arg("x"), py::arg("min_value").none(true),
          py::arg("max_value").none(true), kRef)
      .def(
          "addcmul",
          [](Fusion& fusion, Val* x, Val* t1, Val* t2, Val* value) {
            FusionGuard fg(&fusion);
            return addcmul(x, t1, t2, value);
          },
          kRef)
      .def(
          "lerp",
          [](Fusion& fusion, Val* start, Val* end, Val* weight) {
            FusionGuard fg(&fusion);
            return lerp(start, end, weight);
          },
          kRef)
      .def(
          "cast",
          [](Fusion& fusion, Val* in, DataType dtype) {
            FusionGuard fg(&fusion);
            return castOp(dtype, in);
          },
          kRef)
      .def(
          "set",
          [](Fusion& fusion, Val* in) -> Val* {
            FusionGuard fg(&fusion);
            return set(asTensor(in, "set"));
          },
          kRef)
      .def(
          "segment_set",
          [](Fusion& fusion, Val* in) -> Val* {
            FusionGuard fg(&fusion);
            return segment_set(asTensor(in, "segment_set"));
          },
          kRef)
      .def(
          "broadcast",
          [](Fusion& fusion, Val* in, const std::vector<bool>& flags) -> Val* {
            FusionGuard fg(&fusion);
            return broadcast(asTensor(in, "broadcast"), flags);
          },
          kRef)
      .def(
          "expand",
          [](Fusion& fusion, Val* in,
             const std::vector<Val*>& extents) -> Val* {
            FusionGuard fg(&fusion);
            return expand(asTensor(in, "expand"), extents);
          },
          kRef)
      .def(
          "squeeze",
          [](Fusion& fusion, Val* in,
             const std::vector<int64_t>& dims) -> Val* {
            FusionGuard fg(&fusion);
            return squeeze(asTensor(in, "squeeze"), dims);
          },
          kRef)
      .def(
          "unsqueeze",
          [](Fusion& fusion, Val* in, int64_t dim) -> Val* {
            FusionGuard fg(&fusion);
            return unsqueeze(asTensor(in, "unsqueeze"), dim);
          },
          kRef)
      .def(
          "permute",
          [](Fusion& fusion, Val* in,
             const std::vector<int64_t>& dims) -> Val* {
            FusionGuard fg(&fusion);
            return permute(asTensor(in, "permute"), dims);
          },
          kRef)
      .def(
          "reshape",
          [](Fusion& fusion, Val* in, const std::vector<Val*>& sizes) -> Val* {
            FusionGuard fg(&fusion);
            return reshape(asTensor(in, "reshape"), sizes);
          },
          kRef)
      .def(
          "full",
          [](Fusion& fusion, const std::vector<Val*>& shape, Val* fill_value,
             DataType dtype) -> Val* {
            FusionGuard fg(&fusion);
            return full(shape, fill_value, dtype);
          },
          kRef)
      .def(
          "iota",
          [](Fusion& fusion, Val* length, Val* start, Val* step,
             DataType dtype) -> Val* {
            FusionGuard fg(&fusion);
            return iota(length, start, step, dtype);
          },
          py::arg("length"), py::arg("start").none(true),
          py::arg("step").none(true), py::arg("dtype"), kRef)
      .def(
          "random",
          [](Fusion& fusion, const std::string& op,
             const std::vector<Val*>& shape, Val* a, Val* b, Val* seed,
             Val* offset, DataType dtype) -> Val* {
            FusionGuard fg(&fusion);
            return op == "uniform" ? uniform(shape, a, b, seed, offset, dtype)
                                   : normal(shape, a, b, seed, offset, dtype);
          },
          kRef)
      .def(
          "slice",
          [](Fusion& fusion, Val* in, const std::vector<Val*>& starts,
             const std::vector<Val*>& stops,
             const std::vector<Val*>& steps) -> Val* {
            FusionGuard fg(&fusion);
            FUSER_CHECK(
                starts.size() == stops.size() && stops.size() == steps.size(),
                "slice: ", starts.size(), " starts, ", stops.size(),
                " stops and ", steps.size(),
                " steps; give one of each per axis.");
            std::vector<SliceRange> ranges;
            for (size_t i = 0; i < starts.size(); ++i) {
              ranges.push_back({starts[i], stops[i], steps[i]});
            }
            return slice(asTensor(in, "slice"), ranges);
          },
          kRef)
      .def(
          "pad",
          [](Fusion& fusion, Val* in, const std::vector<Val*>& widths,
             Val* value) -> Val* {
            FusionGuard fg(&fusion);
            return pad(asTensor(in, "pad"), widths, value);
          },
          py::arg("in"), py::arg("widths"), py::arg("value").none(true), kRef)
      .def(
          "cat",
          [](Fusion& fusion, const std::vector<Val*>& ins,
             int64_t dim) -> Val* {
            FusionGuard fg(&fusion);
            std::vector<TensorView*> tensors;
            for (Val* v : ins) {
              tensors.push_back(asTensor(v, "cat"));
            }
            return cat(tensors, dim);
          },
          kRef)
      .def(
          "select",
          [](Fusion& fusion, Val* in, int64_t dim, Val* index) -> Val* {
            FusionGuard fg(&fusion);
            return select(asTensor(in, "select"), dim, index);
          },
          kRef)
      .def(
          "indexing",
          [](Fusion& fusion, const std::string& op, Val* in, int64_t dim,
             Val* index, Val* src) -> Val* {
            FusionGuard fg(&fusion);
            TensorView* tv = asTensor(in, op.c_str());
            TensorView* idx = asTensor(index, op.c_str());
            if (op == "index_select") {
              return indexSelect(tv, dim, idx);
            }
            if (op == "gather") {
              return gather(tv, dim, idx);
            }
            return scatter(tv, dim, idx, asTensor(src, op.c_str()));
          },
          py::arg("op"), py::arg("in"), py::arg("dim"), py::arg("index"),
          py::arg("src").none(true), kRef)
      .def(
          "scan",
          [](Fusion& fusion, const std::string& op, Val* in, int64_t dim,
             DataType dtype) -> Val* {
            FusionGuard fg(&fusion);
            TensorView* tv = asTensor(in, op.c_str());
            return op == "cumsum" ? cumsum(tv, dim, dtype)
                                  : cumprod(tv, dim, dtype);
          },
          kRef)
      .def(
          "scan_with_indices",
          [](Fusion& fusion, const std::string& op, Val* in,
             int64_t dim) -> std::vector<Val*> {
            FusionGuard fg(&fusion);
            TensorView* tv = asTensor(in, op.c_str());
            const ScanWithIndices r =
                op == "cummax" ? cummax(tv, dim) : cummin(tv, dim);
            return {r.values, r.indices};
          },
          kRef)
      .def(
          "triangle",
          [](Fusion& fusion, const std::string& op, Val* in,
             int64_t diagonal) -> Val* {
            FusionGuard fg(&fusion);
            TensorView* tv = asTensor(in, op.c_str());
            return op == "triu" ? triu(tv, diagonal) : tril(tv, diagonal);
          },
          kRef)
      .def(
          "index_constant",
          [](Fusion& fusion, int64_t value) -> Val* {
            FusionGuard fg(&fusion);
            return IrBuilder::indexConst(value);
          },
          kRef)
      .def(
          "reduction",
          [](Fusion& fusion, const std::string& op, Val* in,
             const std::vector<int64_t>& axes, bool keep_dim, DataType dtype) {
            return reduction(
                fusion, op, asTensor(in, op.c_str()), axes, keep_dim, dtype);
          },
          kRef)
      .def(
          "welford",
          [](Fusion& fusion, Val* in, const std::vector<int64_t>& axes) {
            FusionGuard fg(&fusion);
            WelfordResult w = welford(asTensor(in, "welford"), axes);
            return std::vector<Val*>{w.avg, w.var_sum, w.n};
          },
          kRef)
      .def(
          "var_mean",
          [](Fusion& fusion, Val* in, const std::vector<int64_t>& axes,
             int64_t correction, bool keep_dim) {
            FusionGuard fg(&fusion);
            VarMeanResult r = varianceMean(
                asTensor(in, "var_mean"), axes, correction, keep_dim);
            return std::vector<Val*>{r.var, r.mean};
          },
          kRef)
      .def(
          "softmax",
          [](Fusion& fusion, Val* in, int64_t dim, bool log) -> Val* {
            FusionGuard fg(&fusion);
            TensorView* x = asTensor(in, log ? "log_softmax" : "softmax");
            return log ? log_softmax(x, dim) : softmax(x, dim);
          },
          kRef)
      .def(
          "softmax_backward",
          [](Fusion& fusion, Val* dy, Val* y, int64_t dim, bool log) -> Val* {
            FusionGuard fg(&fusion);
            const char* op = log ? "log_softmax_backward" : "softmax_backward";
            TensorView* g = asTensor(dy, op);
            TensorView* out = asTensor(y, op);
            return log ? log_softmax_backward(g, out, dim)
                       : softmax_backward(g, out, dim);
          },
          kRef)
      .def(
          "layer_norm",
          [](Fusion& fusion, Val* x, const std::vector<int64_t>& shape,
             Val* weight, Val* bias, double eps) -> Val* {
            FusionGuard fg(&fusion);
            return layer_norm(
                       asTensor(x, "layer_norm"), shape,
                       weight == nullptr ? nullptr
                                         : asTensor(weight, "layer_norm"),
                       bias == nullptr ? nullptr : asTensor(bias, "layer_norm"),
                       IrBuilder::create<Val>(eps, DataType::Double))
                .output;
          },
          kRef)
      .def(
          "batch_norm",
          [](Fusion& fusion, Val* x, Val* weight, Val* bias, Val* running_mean,
             Val* running_var, bool training, Val* momentum, Val* eps,
             bool channels_last) {
            FusionGuard fg(&fusion);
            const char* op = "batch_norm";
            auto maybe = [op](Val* v) {
              return v == nullptr ? nullptr : asTensor(v, op);
            };
            BatchNormResult r = batch_norm(
                asTensor(x, op), maybe(weight), maybe(bias),
                maybe(running_mean), maybe(running_var), training, momentum,
                eps, channels_last);
            return std::vector<Val*>{
                r.output, r.mean, r.invstd, r.running_mean, r.running_var};
          },
          kRef)
      .def(
          "batch_norm_backward",
          [](Fusion& fusion, Val* dy, Val* x, Val* weight, Val* running_mean,
             Val* running_var, Val* save_mean, Val* save_invstd, bool training,
             Val* eps, bool channels_last) {
            FusionGuard fg(&fusion);
            const char* op = "batch_norm_backward";
            auto maybe = [op](Val* v) {
              return v == nullptr ? nullptr : asTensor(v, op);
            };
            BackwardNormResult g = batch_norm_backward(
                asTensor(dy, op), asTensor(x, op), maybe(weight),
                maybe(running_mean), maybe(running_var), maybe(save_mean),
                maybe(save_invstd), training, eps, channels_last);
            return std::vector<Val*>{g.grad_input, g.grad_weight, g.grad_bias};
          },
          kRef)
      .def(
          "rms_norm",
          [](Fusion& fusion, Val* x, const std::vector<int64_t>& shape,
             Val* weight, double eps) -> Val* {
            FusionGuard fg(&fusion);
            return rms_norm(
                       asTensor(x, "rms_norm"), shape,
                       weight == nullptr ? nullptr
                                         : asTensor(weight, "rms_norm"),
                       IrBuilder::create<Val>(eps, DataType::Double))
                .output;
          },
          kRef)
      .def(
          "matmul",
          [](Fusion& fusion, Val* a, Val* b) -> Val* {
            FusionGuard fg(&fusion);
            return matmul(asTensor(a, "matmul"), asTensor(b, "matmul"));
          },
          kRef)
      .def(
          "linear",
          [](Fusion& fusion, Val* x, Val* weight, Val* bias) -> Val* {
            FusionGuard fg(&fusion);
            return linear(
                asTensor(x, "linear"), asTensor(weight, "linear"),
                bias == nullptr ? nullptr : asTensor(bias, "linear"));
          },
          py::arg("x"), py::arg("weight"), py::arg("bias") = nullptr, kRef)
      .def("split", &splitId, kRef)
      .def(
          "merge",
          [](Fusion& fusion, IterDomain* outer, IterDomain* inner) {
            FusionGuard fg(&fusion);
            return IterDomain::merge(outer, inner);
          },
          kRef)
      .def(
          "set_allocation_domain",
          [](Fusion& fusion, TensorView* tv, std::vector<IterDomain*> ids,
             const Contiguity& contiguity) {
            FusionGuard fg(&fusion);
            tv->setAllocationDomain(std::move(ids), contiguity);
          });

  m.attr("unary_ops") = py::cast(sortedKeys(unaryOps()));
  // Those of them whose bool result is a property of the input's value
  // (UnaryResult::Predicate): computed on the input as it is.
  std::vector<std::string> predicates;
  for (const std::string& name : sortedKeys(unaryOps())) {
    if (unaryResult(unaryOps().at(name)) == UnaryResult::Predicate) {
      predicates.push_back(name);
    }
  }
  m.attr("unary_predicates") = py::cast(predicates);
  m.attr("binary_ops") = py::cast(sortedKeys(binaryOps()));
}

} // namespace fuser::python
