#include <device_lower/analysis/thread_mapping.h>

#include <ir/all_nodes.h>

namespace fuser {

void validateRegisterThreadMapping(Fusion* fusion, IdModel& id_model) {
  for (TensorView* producer : fusion->allTvs()) {
    if (producer->getMemoryType() != MemoryType::Local ||
        producer->definition() == nullptr) {
      continue;
    }
    const auto& loop = producer->getLoopDomain();
    for (size_t i = static_cast<size_t>(producer->getComputeAtPosition());
         i < loop.size(); ++i) {
      IterDomain* id = loop[i];
      // Along a broadcast axis every thread computes the one element; a
      // reduced one leaves its result where it is read (with its leaders,
      // or in every thread when they use it again, doc/reduction.md §2).
      if (!id->isThreadDim() || id->isBroadcast() || id->isReduction()) {
        continue;
      }
      for (Expr* use : producer->uses()) {
        for (Val* out : use->outputs()) {
          auto* consumer = dynamic_cast<TensorView*>(out);
          if (consumer == nullptr) {
            continue;
          }
          for (IterDomain* other : consumer->getLoopDomain()) {
            FUSER_CHECK(
                other->getParallelType() != id->getParallelType() ||
                    id_model.exactMapped(id, other),
                producer->toString(), " (a register tensor) is computed on ",
                id->getParallelType(), " over ", id->toString(),
                " outside its inline position (",
                producer->getComputeAtPosition(), "), and ",
                consumer->toString(), " reads it on ", other->getParallelType(),
                " over ", other->toString(),
                ", another axis: a thread would read registers that another "
                "thread computed. Inline ",
                producer->toString(),
                " past that axis, or give both the same axis.");
          }
        }
      }
    }
  }
}

} // namespace fuser
