// Scheduling utilities shared by the schedulers.
#pragma once

#include <fusion.h>
#include <ir/interface_nodes.h>
#include <ir/internal_nodes.h>
#include <scheduler/runtime_info.h>

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace fuser::scheduler_utils {

using ::fuser::rankOf; // ir/interface_nodes.h

// `from` and every tensor it is computed from.
std::unordered_set<Val*> upstreamOf(Val* from);

// Whether `tv` lies in memory as it would without an allocation domain:
// none, or its logical IDs in order, every one contiguous (how the
// segmenter fixes the layout of an intermediate between two segments).
bool hasDefaultLayout(const TensorView* tv);

// Whether `expr` computes each output element from its inputs' elements at
// the same (or a broadcast) position: an elementwise op, a copy or a
// broadcast; scalar exprs count too. The pointwise scheduler takes only
// these; the others take them around their reductions or products.
bool isPointwiseExpr(const Expr* expr);

// The fusion's reductions, in expr order, those of one element last: the
// schedulers take the first one's input and extents for their reference
// and heuristics, which a loop of one does not describe.
std::vector<ReductionOp*> reductionsOf(Fusion* fusion);

// Whether every axis `rop` reduces is a broadcast of its input (a keepdim
// result's size-1 axis summed again): it reduces one element, over axes
// the ID graph joins to no other (ReductionOp::mappedAxes).
bool reducesOneElement(ReductionOp* rop);

// The logical positions `rop` reduces.
std::vector<int64_t> reducedPositions(ReductionOp* rop);

// Whether the first reduction's input is empty for this run (`reason`
// says so): the schedulers that reduce decline it, and ExprEval runs it.
bool reductionInputIsEmpty(
    Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason);

// The fusion's tensor inputs, in input order.
std::vector<TensorView*> tensorInputs(Fusion* fusion);

// The fusion outputs of rank `rank` (reductions left out): those of a
// persistent kernel's full shape, written in vectors.
std::vector<TensorView*> outputsOfRank(Fusion* fusion, int64_t rank);

// The tensor inputs with uses and a rank below `rank` (a weight or a bias
// broadcast along some axes; a statistic): a persistent kernel reads those
// along the vectorized axis by their broadcasts.
std::vector<TensorView*> inputsBelowRank(Fusion* fusion, int64_t rank);

// Vectorizes the last axis, when it is `vectorize` long, of the copies a
// persistent kernel's loop domains of `n_dims` axes make: the input
// caches' loads, the outputs' stores, and the broadcasts of inputs of a
// rank below `rank` (a weight read along the vectorized axis).
void vectorizeLastAxes(
    Fusion* fusion, const std::vector<TensorView*>& input_caches,
    int64_t n_dims, int64_t rank, int64_t vectorize);

// The fusion's tensors in two groups: those, neither inputs nor outputs,
// whose loop domain has `n_dims` axes and is broadcast at every position
// in [first, last) (one value per row or column of a persistent kernel,
// computed once at the loops above `first`), and the others.
std::pair<std::vector<TensorView*>, std::vector<TensorView*>>
splitByBroadcastAxes(
    Fusion* fusion, int64_t n_dims, int64_t first, int64_t last);

// Whether no tensor but the inputs has a loop domain other than its logical
// one (schedulers start from unscheduled fusions); otherwise `reason` names
// the first that has.
bool isUnscheduled(Fusion* fusion, std::string* reason);

// `from` and every value computed from it, in the fusion's expr order.
std::unordered_set<Val*> downstreamOf(Fusion* fusion, Val* from);

// Whether every axis an ExpandOp expands shares its loops with each fusion
// output not computed from that expand: exact-mapped (IdModel) to an axis
// of it. Through the broadcast it expands an expanded axis maps to nothing
// exactly, and a schedule propagated from another output does not reach
// it: lowering found no loop for it (an expand written beside x + x, and
// beside x + broadcast(w) whose broadcast it expands). Otherwise `reason`
// names the expand and the output.
bool expandsShareLoopsWithOutputs(Fusion* fusion, std::string* reason);

// A tensor two of whose axes the fusion's ops join (exact-mapped: in
// x[:, None] >= x[None, :] both axes of the result come from x's one axis),
// described; empty when there is none. One loop nest cannot index both
// axes from one loop, so no kernel scheduler takes such a fusion and
// segmentation splits it where the axes part.
std::string selfMappedTensor(Fusion* fusion);

// Caches every tensor input that has uses (cacheAfter) and returns the
// caches, in input order; slices, pads and cats read the input itself
// (isReadOnlyThroughResize: an input only they read has no cache). `unroll`
// selects the cache op for loads that will be unrolled.
//
// replay_allocation gives each cache its input's allocation layout
// (doc/replay.md). Only the matmul scheduler passes true: the bulk copy
// engine fills its shared-memory operand caches in the operands' memory
// order, so their layout must be the operands' (doc/matmul.md §4). The
// other schedulers' caches are registers, where a layout means nothing; the
// pointwise scheduler reads the stride order from the inputs themselves. A
// cache is a different tensor with its own parallel splits; copying a
// layout onto it unasked surprised people.
std::vector<TensorView*> cacheInputs(
    Fusion* fusion, bool unroll, bool replay_allocation = false);

// Whether a kernel over `reference`'s logical domain reads each element of
// the fusion input `input` once: the input spans every axis of the
// reference and broadcasts none. Such inputs are loaded with the streaming
// policy the scheduler chooses (evict-first while they are small next to
// the L2, doc/reduction.md §5.6). An input broadcast along an axis is read
// again by other threads.
bool isReadOnce(TensorView* input, TensorView* reference);

// Removes the tensor exprs no output needs (a backward op's weight
// gradient when only the input gradient is an output): their tensors
// would still be uses of live ones, consumers that no schedule reaches.
void removeDeadExprs(Fusion* fusion);

// Bytes of the fusion inputs a kernel over `reference` reads once
// (isReadOnce), for the run `runtime_info` describes.
int64_t readOnceInputBytes(
    Fusion* fusion, TensorView* reference, RuntimeInfo& runtime_info);

// Caches in registers the inputs a kernel over `reference` reads once
// (isReadOnce), loaded with `policy`, and returns the caches.
// An input broadcast along some axes is read by its broadcast directly: a
// cache before the broadcast would lack those axes, and where they are the
// reference's outer loops it could not share them (nor hold a buffer of
// constant size); the broadcast's output has every axis and is inlined with
// the reference (doc/reduction.md §5).
std::vector<TensorView*> cacheInputsReadOnce(
    Fusion* fusion, TensorView* reference, CacheOp policy);

// Inlines every tensor as far as allowed but the input caches `caches`,
// which are inlined at `unrolled_axis` (or as far as allowed when that is
// less): each fills one buffer for all iterations of the unrolled loop
// before any iteration consumes it, so all its loads are in flight at
// once. Inside that loop, a load would wait for the previous iteration's
// accumulation or store (the pointers may alias). The caches must be of
// inputs read once (isReadOnce): their loops are the reference's.
void inlineMostLoadingFirst(
    Fusion* fusion, const std::vector<TensorView*>& caches,
    int64_t unrolled_axis);

// For each output: if it is also used inside the fusion, fork it
// (cacheFork) so the computed value lives in a register and the output is a
// plain copy; then cache it (cacheBefore). Returns (cache, output) pairs.
// Outputs keep the allocation the user gave them.
std::vector<std::pair<TensorView*, TensorView*>> cacheAndForkOutputs(
    Fusion* fusion, bool unroll);

// Gives every tensor in `tvs` (all tensors when empty) the parallel types of
// `reference`'s loop IDs that map to their loop IDs (IdModel loop map).
// Only types in `parallel_types` are copied when it is non-empty.
void parallelizeAllLike(
    TensorView* reference, const std::vector<TensorView*>& tvs = {},
    const std::unordered_set<ParallelType>& parallel_types = {});

} // namespace fuser::scheduler_utils
