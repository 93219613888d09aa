/* gdbridge's C layer, compiled by cffi (embedding mode) against the engine's own
 * gdextension_interface.h. It holds the entry point, the engine callbacks (thin trampolines
 * that forward to a few `extern "Python"` functions with integer ids instead of handles), and
 * small helpers that do several interface calls per Python->C crossing (each crossing costs
 * ~0.1-0.3 us, so fewer of them is the main speed lever).
 *
 * One translation unit, by concern (each part's header says what it holds; they are included in
 * dependency order and share static helpers, so cffi compiles them as one source): */
#include "native/engine.c"
#include "native/callbacks.c"
#include "native/to_python.c"
#include "native/fast_calls.c"
#include "native/queued.c"
#include "native/answered.c"
#include "native/chosen.c"
#include "native/poses.c"
#include "native/moves.c"
#include "native/to_engine.c"
#include "native/fast_frame.c"
#include "native/fast_module.c"
#include "native/classes.c"
#include "native/entry.c"
