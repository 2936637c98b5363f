#include <device_lower/analysis/thread_mapping.h>

#include <ir/all_nodes.h>

namespace fuser {

void validateThreadMapping(Fusion* fusion, IdModel& id_model) {
  for (TensorView* producer : fusion->allTvs()) {
    const MemoryType memory = producer->getMemoryType();
    if (memory == MemoryType::Global || producer->definition() == nullptr) {
      continue;
    }
    // A shared tensor is written and read without a barrier between
    // (nothing inserts one): each thread reads only what it wrote, on every
    // thread axis (the matrix product's operand tiles are the pipeline's,
    // with its own barriers).
    const bool shared = memory == MemoryType::Shared;
    const auto& loop = producer->getLoopDomain();
    for (size_t i =
             shared ? 0 : static_cast<size_t>(producer->getComputeAtPosition());
         i < loop.size(); ++i) {
      IterDomain* id = loop[i];
      // Along a broadcast axis every thread computes the one element; a
      // reduced one leaves its result where it is read (with its leaders,
      // or in every thread when they use it again, doc/reduction.md §2).
      if (!id->isThreadDim() || id->isBroadcast() || id->isReduction()) {
        continue;
      }
      for (Expr* use : producer->uses()) {
        if (shared && use->isA<MmaOp>()) {
          continue;
        }
        for (Val* out : use->outputs()) {
          auto* consumer = dynamic_cast<TensorView*>(out);
          if (consumer == nullptr) {
            continue;
          }
          for (IterDomain* other : consumer->getLoopDomain()) {
            FUSER_CHECK(
                other->getParallelType() != id->getParallelType() ||
                    id_model.exactMapped(id, other),
                producer->toString(), " (a ",
                shared ? "shared-memory" : "register",
                " tensor) is computed on ", id->getParallelType(), " over ",
                id->toString(), " outside its inline position (",
                producer->getComputeAtPosition(), "), and ",
                consumer->toString(), " reads it on ", other->getParallelType(),
                " over ", other->toString(),
                ", another axis: a thread would read ",
                shared ? "shared memory" : "registers",
                " that another thread computed. ",
                shared ? "Give both the same axis."
                       : "Inline " + producer->toString() +
                             " past that axis, or give both the same axis.");
          }
        }
      }
    }
  }
}

} // namespace fuser
