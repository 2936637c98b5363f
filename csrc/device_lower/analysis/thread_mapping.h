// A register tensor is private to each thread: a consumer may only read
// the elements its own thread computed. When a register tensor's loop
// axis bound to a thread index lies outside its inline position (the
// consumer does not run inside that loop), the consumer's axis of the same
// thread index must be the same axis (exact-mapped), or a thread would read
// registers that another thread holds: values it never computed
// (doc/indexing.md §1). A shared-memory tensor is read without a barrier
// after its writes (no pass inserts one), so the same holds for all its
// thread axes. Checked in the analysis phase; a user error, since a
// schedule by hand can do it.
#pragma once

#include <fusion.h>
#include <id_model/id_model.h>

namespace fuser {

void validateThreadMapping(Fusion* fusion, IdModel& id_model);

} // namespace fuser
