#include <runtime/handed_views.h>

#include <base/exceptions.h>
#include <ir/all_nodes.h>
#include <layout/vectorization.h>
#include <runtime/aten_evaluator.h>
#include <runtime/aten_types.h>
#include <runtime/segment_scheduling.h>
#include <runtime/tensor_layout.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>

namespace fuser {

namespace {

// Meta tensors standing for the values of one run, with the alignment
// class of the memory each storage begins at in that run.
class MetaRun {
 public:
  MetaRun(
      Fusion* complete, const std::vector<c10::IValue>& inputs,
      ExpressionEvaluator& ee)
      : complete_(complete), inputs_(inputs), ee_(ee) {}

  // The value `in` of the run: a fusion input as a meta tensor of its
  // sizes and strides, a size, or an intermediate (what an ATen group
  // computed, else a dense tensor as a kernel writes it).
  c10::IValue value(Val* in) {
    auto it = tensors_.find(in);
    if (it != tensors_.end()) {
      return it->second;
    }
    std::optional<c10::IValue> given =
        groupInputValue(complete_, inputs_, in, ee_);
    if (given.has_value() && !given->isTensor()) {
      return *given;
    }
    at::Tensor meta;
    int64_t base_alignment = kMaxVectorBytes;
    if (given.has_value()) {
      const at::Tensor& tensor = given->toTensor();
      meta = at::empty_strided(
          tensor.sizes(), tensor.strides(), tensor.options().device(at::kMeta));
      if (!tensor.is_meta()) {
        base_alignment = pointerAlignment(tensor.data_ptr());
      }
    } else {
      auto* tv = in->as<TensorView>();
      meta = allocateTensor(
          denseLayout(tv, ee_),
          at::TensorOptions().device(at::kMeta).dtype(toAtenType(tv->dtype())));
    }
    base_alignment_[meta.storage().unsafeGetStorageImpl()] = base_alignment;
    tensors_.emplace(in, meta);
    return meta;
  }

  void computed(const Val* out, const at::Tensor& meta) {
    tensors_.insert_or_assign(out, meta);
  }

  // The alignment class of `meta`'s data pointer in the run.
  int64_t alignment(const at::Tensor& meta) const {
    auto it = base_alignment_.find(meta.storage().unsafeGetStorageImpl());
    const int64_t base =
        it == base_alignment_.end() ? kMaxVectorBytes : it->second;
    return std::min(
        base, alignmentOf(static_cast<uint64_t>(
                  meta.storage_offset() * meta.element_size())));
  }

 private:
  Fusion* complete_;
  const std::vector<c10::IValue>& inputs_;
  ExpressionEvaluator& ee_;
  std::unordered_map<const Val*, at::Tensor> tensors_;
  std::unordered_map<const c10::StorageImpl*, int64_t> base_alignment_;
};

// Whether the executor lays out `tv` as setGroups fixed it: an
// intermediate no user gave a layout, logical order, dense.
bool isPlannable(const SegmentedFusion& segmented, const TensorView* tv) {
  return segmented.isIntermediate(tv) && !tv->isFusionOutput() &&
         !tv->hasReduction() &&
         tv->getMaybeAllocationDomain() == tv->getLogicalDomain() &&
         tv->getContiguity() == TensorDomain::getContiguityFilledWith(
                                    tv->getLogicalDomain(), true);
}

// The allocation domain and contiguity that describe `view` for `tv`:
// axes of one element outermost (in logical order), the others by
// decreasing stride; each contiguous where its stride is the next inner
// one's extent times stride. Nullopt where no allocation describes it
// (a zero or negative stride, two axes overlapping).
std::optional<std::pair<std::vector<IterDomain*>, Contiguity>> describeView(
    const TensorView* tv, const at::Tensor& view) {
  const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
  if (static_cast<int64_t>(logical.size()) != view.dim()) {
    return std::nullopt;
  }
  std::vector<size_t> ones;
  std::vector<size_t> strided;
  for (size_t d = 0; d < logical.size(); ++d) {
    const auto i = static_cast<int64_t>(d);
    if (view.size(i) == 1) {
      ones.push_back(d);
    } else if (view.stride(i) <= 0 || logical[d]->isBroadcast()) {
      return std::nullopt;
    } else {
      strided.push_back(d);
    }
  }
  std::stable_sort(strided.begin(), strided.end(), [&](size_t a, size_t b) {
    return view.stride(static_cast<int64_t>(a)) >
           view.stride(static_cast<int64_t>(b));
  });
  std::vector<IterDomain*> order;
  Contiguity contiguity;
  for (size_t d : ones) {
    order.push_back(logical[d]);
    contiguity.push_back(
        logical[d]->isBroadcast() ? std::nullopt : std::optional<bool>(false));
  }
  for (size_t k = 0; k < strided.size(); ++k) {
    const auto d = static_cast<int64_t>(strided[k]);
    int64_t inner_span = 1; // stride * size of the next inner axis
    if (k + 1 < strided.size()) {
      const auto next = static_cast<int64_t>(strided[k + 1]);
      inner_span = view.stride(next) * view.size(next);
    }
    if (view.stride(d) < inner_span) {
      return std::nullopt; // overlaps the next inner axis
    }
    order.push_back(logical[strided[k]]);
    contiguity.push_back(view.stride(d) == inner_span);
  }
  return std::make_pair(order, contiguity);
}

// Plans `out`, computed as `view` by an ATen group: true where it is
// handed on as a view (its allocation set to describe it).
bool planOne(
    TensorView* tv, const at::Tensor& view, int64_t alignment,
    ExpressionEvaluator& ee, HandedViews& planned) {
  const TensorLayout dense = denseLayout(tv, ee);
  if (alignment == kMaxVectorBytes && view.sizes().vec() == dense.sizes &&
      view.strides().vec() == dense.strides) {
    return false; // dense already: nothing to hand on differently
  }
  auto described = describeView(tv, view);
  if (!described.has_value()) {
    return false;
  }
  const std::vector<IterDomain*> old_allocation =
      tv->getMaybeAllocationDomain();
  const Contiguity old_contiguity = tv->getContiguity();
  tv->setAllocationDomain(described->first, described->second);
  try {
    planned[tv] = HandedView{inputLayout(tv, view, ee, -1), alignment};
    return true;
  } catch (const UserError&) {
    tv->setAllocationDomain(old_allocation, old_contiguity);
    return false;
  }
}

bool readsATensor(const SegmentedGroup& group) {
  return std::any_of(
      group.inputs().begin(), group.inputs().end(),
      [](const Val* in) { return in->isA<TensorView>(); });
}

} // namespace

HandedViews planHandedViews(
    SegmentedFusion& segmented, const std::vector<c10::IValue>& inputs,
    ExpressionEvaluator& ee,
    const std::function<bool(const SegmentedGroup&)>& run_by_aten) {
  HandedViews planned;
  if (!segmented.isSegmented()) {
    return planned;
  }
  Fusion* complete = segmented.completeFusion();
  MetaRun run(complete, inputs, ee);
  for (SegmentedGroup* group : segmented.groups()) {
    const bool hands_on = std::any_of(
        group->outputs().begin(), group->outputs().end(), [&](Val* out) {
          auto* tv = dynamic_cast<TensorView*>(out);
          return tv != nullptr && isPlannable(segmented, tv);
        });
    // A group without a tensor input would evaluate its factories on the
    // CPU: it hands on fresh tensors, which need no plan.
    if (!hands_on || !run_by_aten(*group) || !readsATensor(*group)) {
      continue;
    }
    std::vector<c10::IValue> values;
    for (Val* in : group->inputs()) {
      values.push_back(run.value(in));
    }
    std::vector<at::Tensor> outputs;
    try {
      std::unique_ptr<Fusion> part = group->makeFusion();
      ExpressionEvaluator part_ee;
      outputs =
          evaluateFusionWithATen(part.get(), values, part_ee, AtenViews::Alias);
    } catch (const std::exception&) {
      // An op without a meta kernel: its outputs are laid out densely.
      continue;
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      Val* out = group->outputs()[o];
      auto* tv = dynamic_cast<TensorView*>(out);
      if (tv != nullptr && isPlannable(segmented, tv) &&
          planOne(tv, outputs[o], run.alignment(outputs[o]), ee, planned)) {
        run.computed(out, outputs[o]);
      }
    }
  }
  return planned;
}

at::Tensor allocateHandedView(
    const HandedView& view, const at::TensorOptions& options) {
  const TensorLayout& layout = view.layout;
  const int64_t item = static_cast<int64_t>(
      c10::elementSize(c10::typeMetaToScalarType(options.dtype())));
  // Elements before the first, so that the pointer has the alignment class.
  const int64_t offset =
      view.alignment < kMaxVectorBytes ? view.alignment / item : 0;
  int64_t span = 1;
  for (size_t d = 0; d < layout.sizes.size(); ++d) {
    if (layout.sizes[d] == 0) {
      span = 0;
      break;
    }
    span += (layout.sizes[d] - 1) * layout.strides[d];
  }
  return at::empty({offset + span}, options)
      .as_strided(layout.sizes, layout.strides, offset);
}

std::string handedViewsToString(const HandedViews& views) {
  std::vector<const Val*> tensors;
  for (const auto& [tv, view] : views) {
    tensors.push_back(tv);
  }
  std::sort(tensors.begin(), tensors.end(), [](const Val* a, const Val* b) {
    return a->name() < b->name();
  });
  auto join = [](const std::vector<int64_t>& values) {
    std::string text;
    for (int64_t v : values) {
      text += (text.empty() ? "" : ", ") + std::to_string(v);
    }
    return "[" + text + "]";
  };
  std::string text;
  for (const Val* tv : tensors) {
    const HandedView& view = views.at(tv);
    text += "  handed on as a view: T" + std::to_string(tv->name()) +
            " sizes " + join(view.layout.sizes) + " strides " +
            join(view.layout.strides) + ", pointer aligned to " +
            std::to_string(view.alignment) + " bytes\n";
  }
  return text;
}

bool matchesHandedView(const at::Tensor& tensor, const HandedView& view) {
  const TensorLayout& layout = view.layout;
  if (tensor.sizes().vec() != layout.sizes ||
      pointerAlignment(tensor.data_ptr()) < view.alignment) {
    return false;
  }
  for (size_t d = 0; d < layout.sizes.size(); ++d) {
    if (layout.sizes[d] != 1 &&
        tensor.stride(static_cast<int64_t>(d)) != layout.strides[d]) {
      return false;
    }
  }
  return true;
}

} // namespace fuser
