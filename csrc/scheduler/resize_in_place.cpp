#include <scheduler/resize_in_place.h>

#include <id_model/id_model.h>
#include <ir/all_nodes.h>

#include <algorithm>

namespace fuser::scheduler_utils {

bool isReadOnlyThroughResize(const TensorView* input) {
  const auto& uses = input->uses();
  return !uses.empty() && std::all_of(uses.begin(), uses.end(), [](Expr* e) {
    return e->isA<ResizeOp>();
  });
}

bool onlySlices(const std::vector<Expr*>& tensor_exprs) {
  return std::all_of(tensor_exprs.begin(), tensor_exprs.end(), [](Expr* e) {
    auto* resize = dynamic_cast<ResizeOp*>(e);
    return resize != nullptr && resize->opType() == ResizeOpType::Slice;
  });
}

namespace {

// The first logical axis of a tensor computed in the fusion that no axis of
// `output` is exact-mapped to (broadcasts aside), or null.
IterDomain* axisOffTheLoop(
    Fusion* fusion, IdModel& model, TensorView* output, TensorView** owner) {
  const auto loop = TensorDomain::noReductions(output->getLogicalDomain());
  for (TensorView* tv : fusion->allTvs()) {
    if (tv->isFusionInput()) {
      continue;
    }
    for (IterDomain* id : TensorDomain::noReductions(tv->getLogicalDomain())) {
      const bool joined =
          id->isBroadcast() ||
          std::any_of(loop.begin(), loop.end(), [&](IterDomain* o) {
            return model.exactMapped(id, o);
          });
      if (!joined) {
        *owner = tv;
        return id;
      }
    }
  }
  return nullptr;
}

} // namespace

bool resizesReadInPlace(Fusion* fusion, std::string* reason) {
  std::vector<Expr*> tensor_exprs;
  bool any = false;
  for (Expr* expr : fusion->exprs()) {
    if (!expr->output(0)->isA<TensorView>()) {
      continue;
    }
    tensor_exprs.push_back(expr);
    auto* resize = dynamic_cast<ResizeOp*>(expr);
    if (resize == nullptr) {
      continue;
    }
    any = true;
    for (Val* v : resize->tensors()) {
      auto* in = v->as<TensorView>();
      if (!in->isFusionInput()) {
        *reason = "its " + toString(resize->opType()) + " reads " +
                  in->toString() +
                  ", which the fusion computes; a kernel reads a resized "
                  "tensor's input in place from global memory only (the "
                  "segmenter puts the producer in a kernel before)";
        return false;
      }
    }
  }
  if (!any) {
    return true;
  }
  if (onlySlices(tensor_exprs)) {
    *reason = "it only slices; ATen's slices are views, which need no kernel";
    return false;
  }
  IdModel model(fusion);
  TensorView* owner = nullptr;
  auto* output = fusion->outputs().at(0)->as<TensorView>();
  if (IterDomain* id = axisOffTheLoop(fusion, model, output, &owner)) {
    *reason = "axis " + id->toString() + " of " + owner->toString() +
              " is not joined to the axes of output " + output->toString() +
              ": its slices, pads or cats make loops of different shapes";
    return false;
  }
  return true;
}

} // namespace fuser::scheduler_utils
