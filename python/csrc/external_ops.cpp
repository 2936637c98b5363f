// The library ops (ops/external.h) on fuser._C.Fusion: topk, argsort,
// grouped_mm, embedding, sdpfa_fwd and sdpfa_bwd. Python's fd.ops methods
// (python/fuser/_ops.py) check the operands and call these.
#include "bindings.h"

#include <fusion.h>
#include <ir/all_nodes.h>
#include <ops/external.h>

#include <pybind11/stl.h>

#include <optional>
#include <vector>

namespace py = pybind11;

namespace fuser::python {

namespace {

constexpr auto kRef = py::return_value_policy::reference_internal;

TensorView* tensorOperand(Val* val, const char* op, const char* what) {
  auto* tv = dynamic_cast<TensorView*>(val);
  FUSER_CHECK(
      tv != nullptr, op, ": ", what, " must be a tensor, got ",
      val == nullptr ? std::string("None") : val->toString(), ".");
  return tv;
}

} // namespace

void bindExternalOps(py::module_& m) {
  auto fusion = py::reinterpret_borrow<py::class_<Fusion>>(m.attr("Fusion"));
  fusion
      .def(
          "topk",
          [](Fusion& f, Val* in, Val* k, int64_t dim, bool largest,
             bool sorted) {
            FusionGuard fg(&f);
            TopKResult r = topk(
                tensorOperand(in, "topk", "the input"), k, dim, largest,
                sorted);
            return std::vector<Val*>{r.values, r.indices};
          },
          kRef)
      .def(
          "argsort",
          [](Fusion& f, Val* in, int64_t dim, bool descending,
             bool stable) -> Val* {
            FusionGuard fg(&f);
            return argsort(
                tensorOperand(in, "argsort", "the input"), dim, descending,
                stable);
          },
          kRef)
      .def(
          "grouped_mm",
          [](Fusion& f, Val* a, Val* b, Val* offsets) -> Val* {
            FusionGuard fg(&f);
            return groupedMm(
                tensorOperand(a, "grouped_mm", "a"),
                tensorOperand(b, "grouped_mm", "b"),
                offsets == nullptr
                    ? nullptr
                    : tensorOperand(offsets, "grouped_mm", "offsets"));
          },
          py::arg("a"), py::arg("b"), py::arg("offsets").none(true), kRef)
      .def(
          "embedding",
          [](Fusion& f, Val* indices, Val* weight,
             std::optional<int64_t> padding_idx, Val* max_norm, Val* norm_type,
             bool scale_grad_by_freq, bool sparse) -> Val* {
            FusionGuard fg(&f);
            return embedding(
                tensorOperand(indices, "embedding", "input"),
                tensorOperand(weight, "embedding", "weight"), padding_idx,
                max_norm, norm_type, scale_grad_by_freq, sparse);
          },
          py::arg("indices"), py::arg("weight"),
          py::arg("padding_idx").none(true), py::arg("max_norm").none(true),
          py::arg("norm_type").none(true), py::arg("scale_grad_by_freq"),
          py::arg("sparse"), kRef)
      .def(
          "sdpfa_fwd",
          [](Fusion& f, Val* q, Val* k, Val* v, Val* dropout_p, Val* is_causal,
             Val* scale) {
            FusionGuard fg(&f);
            const char* op = "sdpfa_fwd";
            SdpaForwardResult r = sdpfaForward(
                tensorOperand(q, op, "query"), tensorOperand(k, op, "key"),
                tensorOperand(v, op, "value"), dropout_p, is_causal, scale);
            return std::vector<Val*>{
                r.output, r.logsumexp, r.philox_seed, r.philox_offset};
          },
          py::arg("q"), py::arg("k"), py::arg("v"), py::arg("dropout_p"),
          py::arg("is_causal"), py::arg("scale").none(true), kRef)
      .def(
          "sdpfa_bwd",
          [](Fusion& f, Val* grad_output, Val* q, Val* k, Val* v, Val* output,
             Val* logsumexp, Val* dropout_p, Val* is_causal, Val* philox_seed,
             Val* philox_offset, Val* scale) {
            FusionGuard fg(&f);
            const char* op = "sdpfa_bwd";
            SdpaBackwardResult r = sdpfaBackward(
                tensorOperand(grad_output, op, "grad_output"),
                tensorOperand(q, op, "query"), tensorOperand(k, op, "key"),
                tensorOperand(v, op, "value"),
                tensorOperand(output, op, "output"),
                tensorOperand(logsumexp, op, "logsumexp"), dropout_p, is_causal,
                tensorOperand(philox_seed, op, "philox_seed"),
                tensorOperand(philox_offset, op, "philox_offset"), scale);
            return std::vector<Val*>{r.grad_q, r.grad_k, r.grad_v};
          },
          py::arg("grad_output"), py::arg("q"), py::arg("k"), py::arg("v"),
          py::arg("output"), py::arg("logsumexp"), py::arg("dropout_p"),
          py::arg("is_causal"), py::arg("philox_seed"),
          py::arg("philox_offset"), py::arg("scale").none(true), kRef);
}

} // namespace fuser::python
