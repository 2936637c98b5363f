// Persistent buffers (doc/normalization.md §1): the tensors of a fusion
// with reductions that must stay on chip across a reduction, and the
// rewrites that make them few and small before a persistent schedule.
#pragma once

#include <fusion.h>
#include <ir/interface_nodes.h>
#include <ir/internal_nodes.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace fuser {

// The tensors held across a reduction: each feeds a reduction and has
// another consumer that meets the reduction's result (x - max(x), or
// (x + bias) - sum(x)); a row of values each (one value per row, a
// broadcast statistic, takes no buffer).
std::vector<TensorView*> persistentBuffers(Fusion* fusion);

// Recomputes each held tensor, where it is used after its reduction,
// from the fusion inputs and reduction results it derives from through
// pointwise ops, when those inputs take no more bytes per element than the
// tensor: softmax then holds its input (its own type) instead of the input
// in float and exp(x - max) (doc/normalization.md §1).
void projectPersistentBuffersToInputs(Fusion* fusion);

// Whether `tv` holds one value per row of the reduction `rop`: its axes at
// the reduced positions are broadcast or reduced (or it lacks them).
bool constantAlongReducedAxes(TensorView* tv, ReductionOp* rop);

// Divisions of a row by one value per row (softmax's exp(x - max) / sum)
// become multiplications by the value's reciprocal, computed once per row
// (within 1.5 ulp of the quotient; a division per element costs about ten
// instructions and a branch to its slow path).
void multiplyByRowReciprocals(Fusion* fusion);

// Welford over a held row becomes two sums: the mean, then the squared
// deviations from it read again from the registers. A Welford update per
// element costs a count conversion and a division; the two passes cost an
// add and a multiply-add, and are as accurate (doc/normalization.md §4).
void welfordToTwoPasses(Fusion* fusion);

// A tensor of fewer axes read through unary ops and then a broadcast (a
// weight cast to float, then broadcast over the rows) is broadcast first
// and the unary ops applied after it, so that it is read by its broadcast
// inside the loops of the row instead of computed in a loop nest of its
// own into a buffer of a row's length per thread.
void broadcastSideInputsFirst(Fusion* fusion);

// Inner-outer (doc/normalization.md §9): the reductions in `reductions`
// read their own copy (one for all of them) of the pointwise exprs they
// are computed through, back to the fusion inputs or to tensors computed
// after a reduction not among them. The columns' reductions get one: a
// tensor shared by a row's reduction and a column's would have its
// consumers share the row's batch loop, which the row's reduction ends;
// recomputing (a cast, x - mean, a product) costs less than holding it in
// registers. With the rows' buffers in shared memory each row reduction
// gets one too (§11): `dy * w`, read by both sums of a layer norm
// backward, then is not held as floats beside the partials.
void recomputeReductionInputs(
    Fusion* fusion, const std::vector<ReductionOp*>& reductions);

// The rewrites before a persistent schedule, in order
// (doc/normalization.md §1, §5): dead exprs removed, side inputs broadcast
// first, Welford as two sums, buffers projected to inputs, divisions by a
// row's value as products.
void prepareForPersistence(Fusion* fusion);

// The buffers a persistent schedule of `fusion` holds: persistentBuffers
// of a copy after prepareForPersistence (the heuristics' view of what
// schedule() will make of it).
struct HeldBuffers {
  std::vector<std::string> names;
  // Per buffer: its bytes per element, and its position among the fusion's
  // inputs (-1 for a computed one). An input's buffer is its cache, which
  // may live in shared memory (doc/normalization.md §11).
  std::vector<int64_t> element_bytes;
  std::vector<int64_t> input_positions;
  // Bytes per element, summed over the buffers.
  int64_t bytes() const {
    return std::accumulate(
        element_bytes.begin(), element_bytes.end(), int64_t{0});
  }
  // Every buffer narrower than float (true when there is none).
  bool narrow() const {
    return std::all_of(
        element_bytes.begin(), element_bytes.end(),
        [](int64_t b) { return b < 4; });
  }
};
HeldBuffers heldBuffers(const Fusion* fusion);

} // namespace fuser
