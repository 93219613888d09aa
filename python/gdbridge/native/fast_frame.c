/* ---- the update thread's frame: a frame of the main loop that runs no Python on the main thread ----
 * With npc_mind's update on its thread, the frame callback runs Python on the main thread: the
 * clock's reads, the last update's signals, the senses, the next update's start (at 1,000 mobs
 * 130-250 us a frame, its caches cold). When an update finds that the next frame needs nothing of
 * that from the main thread (NpcMindServer._frame_apart decides), it arms this before it lowers
 * the update flag, the signals it owes converted to Variants here (arm). The next frame callback
 * then, without the GIL: emits those signals, reads the frame's delta, time scale and pause by ptrcall,
 * hands the queued calls and those values to the update thread and wakes it (frame_wait), which
 * runs the rest of the frame there and may arm again. Any main-thread Python before that, at a
 * door (gdb_wait_update: after the update, so after its arm), disarms: the frame is Python's, as
 * that code may have changed anything, and Python emits the signals still held first
 * (emit_prepared). The update flag is raised here as Python raises it, so the doors wait as ever. */
#define GDB_EMIT_ARGS 8
typedef struct {
    uint64_t id;
    int count;                       /* the Variants in args: the signal's name, then its arguments */
    gdb_variant args[GDB_EMIT_ARGS];
} gdb_emission;
static gdb_emission *fast_emissions;
static intptr_t fast_emissions_used, fast_emissions_cap;
static pthread_cond_t fast_wake = PTHREAD_COND_INITIALIZER; /* (with gdb_update_lock) */
static int fast_ready;                                     /* a frame handed over, not yet taken */
static double fast_delta, fast_scale, fast_wall, fast_emitted;
static int fast_paused;
static gdb_queued_row *fast_rows; /* the queued calls handed over with the frame */
static intptr_t fast_rows_used;
static const void *fast_emit_bind;  /* Object.emit_signal */
static const void *fast_reads[3];   /* Node.get_process_delta_time, Engine.get_time_scale, SceneTree.is_paused */
static uint64_t fast_read_ids[3];   /* the root Window, the Engine singleton, the SceneTree */
static uint64_t fast_frames_total;  /* frames run on the update thread since start (a count for tests and benchmarks) */

static void gdb_fast_frame_disarm(void) {
    pthread_mutex_lock(&gdb_update_lock);
    __atomic_store_n(&gdb_fast_armed, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gdb_resting, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&fast_wake);
    pthread_mutex_unlock(&gdb_update_lock);
}

static void gdb_emissions_destroy(gdb_emission *rows, intptr_t used) {
    for (intptr_t r = 0; r < used; r++)
        for (int i = 0; i < rows[r].count; i++) i_variant_destroy(&rows[r].args[i]);
}

/* The signals held, emitted in order on the main thread (a freed object's skipped), then let go. Taken
 * out first: a handler that makes Python emit them (emit_prepared) finds none. */
static void gdb_emit_prepared(void) {
    gdb_emission *rows = fast_emissions;
    intptr_t used = fast_emissions_used, cap = fast_emissions_cap;
    if (!used) return;
    fast_emissions = NULL;
    fast_emissions_used = fast_emissions_cap = 0;
    for (intptr_t r = 0; r < used; r++) {
        void *obj = gdb_object_from_id(rows[r].id);
        if (!obj) continue;
        const void *ptrs[GDB_EMIT_ARGS];
        for (int i = 0; i < rows[r].count; i++) ptrs[i] = &rows[r].args[i];
        gdb_variant ret;
        GDExtensionCallError err = {GDEXTENSION_CALL_OK, 0, 0};
        i_method_bind_call(fast_emit_bind, obj, (const GDExtensionConstVariantPtr *)ptrs, rows[r].count, &ret, &err);
        i_variant_destroy(&ret);
    }
    gdb_emissions_destroy(rows, used);
    if (!fast_emissions) {
        fast_emissions = rows; /* none was armed meanwhile: keep the buffer */
        fast_emissions_cap = cap;
    } else {
        free(rows);
    }
}

/* The frame's delta (the root's process delta), time scale and pause, by ptrcall; 0 when one of the
 * objects read is gone (or frame_setup did not run). */
static int gdb_frame_reads(double *delta, double *scale, int *paused) {
    void *objects[3];
    for (int i = 0; i < 3; i++) {
        objects[i] = gdb_object_from_id(fast_read_ids[i]);
        if (!objects[i] || !fast_reads[i]) return 0;
    }
    GDExtensionBool held = 0;
    *delta = *scale = 0.0;
    i_method_bind_ptrcall(fast_reads[0], objects[0], NULL, delta);
    i_method_bind_ptrcall(fast_reads[1], objects[1], NULL, scale);
    i_method_bind_ptrcall(fast_reads[2], objects[2], NULL, &held);
    *paused = held != 0;
    return 1;
}

/* The frame callback's start: 1 when this frame went to the update thread (no Python runs here). */
static int gdb_fast_frame(void) {
    gdb_wait_update_done(); /* the update first (Python's frame would wait for it too): it may arm as it ends */
    if (!__atomic_load_n(&gdb_fast_armed, __ATOMIC_ACQUIRE)) return 0;
    double emitting = gdb_monotonic();
    gdb_emit_prepared();
    double emitted = gdb_monotonic() - emitting;
    if (!__atomic_load_n(&gdb_fast_armed, __ATOMIC_ACQUIRE)) return 0; /* a handler ran Python */
    double delta, scale;
    int paused;
    if (!gdb_frame_reads(&delta, &scale, &paused)) {
        gdb_fast_frame_disarm();
        return 0;
    }
    pthread_mutex_lock(&gdb_update_lock);
    fast_rows = queued_rows; /* the update thread hands them to Python before anything else */
    fast_rows_used = queued_rows_used;
    queued_rows = NULL;
    queued_rows_cap = queued_rows_used = 0;
    fast_delta = delta;
    fast_scale = scale;
    fast_paused = paused;
    fast_wall = gdb_monotonic();
    fast_emitted = emitted;
    fast_ready = 1;
    __atomic_store_n(&gdb_fast_armed, 0, __ATOMIC_RELEASE); /* the update arms again, or not */
    __atomic_store_n(&gdb_update_busy, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&fast_wake);
    pthread_mutex_unlock(&gdb_update_lock);
    fast_frames_total++;
    return 1;
}

/* frame_setup(emit_signal, delta_bind, root, scale_bind, engine, paused_bind, tree): what the frame
 * emits with and reads (method binds and instance ids, as ints). Main thread. */
static PyObject *gdb_fast_frame_setup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "frame_setup(emit_signal, delta, root, scale, engine, paused, tree)");
        return NULL;
    }
    const void *emit = PyLong_AsVoidPtr(args[0]);
    const void *reads[3];
    uint64_t ids[3];
    for (int i = 0; i < 3; i++) {
        reads[i] = PyLong_AsVoidPtr(args[1 + 2 * i]);
        ids[i] = PyLong_AsUnsignedLongLong(args[2 + 2 * i]);
    }
    if (PyErr_Occurred()) return NULL;
    fast_emit_bind = emit;
    for (int i = 0; i < 3; i++) {
        fast_reads[i] = reads[i];
        fast_read_ids[i] = ids[i];
    }
    Py_RETURN_NONE;
}

/* arm(calls): the next frame may run on the update thread, emitting `calls` first (each a tuple
 * (instance id, signal name, *arguments), as emit_signals takes them). Called by the update before
 * it lowers the flag. Nothing is armed (nor kept) when one does not convert. */
static PyObject *gdb_fast_frame_arm(PyObject *self, PyObject *calls) {
    if (!PyList_Check(calls)) {
        PyErr_SetString(PyExc_TypeError, "arm(calls: list)");
        return NULL;
    }
    if (!fast_emit_bind) {
        PyErr_SetString(PyExc_RuntimeError, "arm(): frame_setup() was not called");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(calls);
    if (fast_emissions_used + n > fast_emissions_cap) {
        intptr_t cap = fast_emissions_cap ? fast_emissions_cap : 64;
        while (cap < fast_emissions_used + n) cap *= 2;
        gdb_emission *grown = realloc(fast_emissions, (size_t)cap * sizeof(gdb_emission));
        if (!grown) return PyErr_NoMemory();
        fast_emissions = grown;
        fast_emissions_cap = cap;
    }
    intptr_t first = fast_emissions_used;
    for (Py_ssize_t c = 0; c < n; c++) {
        PyObject *call = PyList_GET_ITEM(calls, c);
        Py_ssize_t count = PyTuple_Check(call) ? PyTuple_GET_SIZE(call) - 1 : -1;
        gdb_emission *row = &fast_emissions[first + c];
        row->count = 0;
        int ok = count >= 1 && count <= GDB_EMIT_ARGS;
        if (!ok) PyErr_SetString(PyExc_TypeError, "arm(): a call is (instance id, signal name, up to 7 arguments)");
        if (ok) row->id = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(call, 0));
        ok = ok && !PyErr_Occurred();
        for (Py_ssize_t i = 0; ok && i < count; i++) {
            ok = gdb_py_to_variant(&row->args[i], PyTuple_GET_ITEM(call, i + 1));
            if (ok) row->count++;
            else i_variant_destroy(&row->args[i]);
        }
        if (!ok) {
            gdb_emissions_destroy(&fast_emissions[first], c + 1);
            return NULL;
        }
    }
    fast_emissions_used = first + n;
    pthread_mutex_lock(&gdb_update_lock);
    __atomic_store_n(&gdb_fast_armed, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&gdb_update_lock);
    Py_RETURN_NONE;
}

/* frame_wait(): on the update thread, after an update that armed: until the main loop hands it a
 * frame, (delta, time scale, paused, monotonic seconds, seconds the signals took) with the queued
 * calls handed to Python first (the flag is up: the update thread owns Python's state until it
 * lowers it), or None once disarmed (main-thread Python ran: the frame is Python's). */
static PyObject *gdb_fast_frame_wait(PyObject *self, PyObject *unused) {
    int ready;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&gdb_update_lock);
    while (gdb_fast_armed && !fast_ready) pthread_cond_wait(&fast_wake, &gdb_update_lock);
    ready = fast_ready;
    fast_ready = 0;
    pthread_mutex_unlock(&gdb_update_lock);
    Py_END_ALLOW_THREADS
    if (!ready) Py_RETURN_NONE;
    gdb_queued_row *rows = fast_rows;
    intptr_t used = fast_rows_used;
    fast_rows = NULL;
    fast_rows_used = 0;
    gdb_hand_rows(rows, used);
    free(rows);
    return Py_BuildValue("(ddOdd)", fast_delta, fast_scale, fast_paused ? Py_True : Py_False, fast_wall,
                         fast_emitted);
}

static PyObject *gdb_fast_frame_disarm_py(PyObject *self, PyObject *unused) {
    gdb_fast_frame_disarm();
    Py_RETURN_NONE;
}
static PyObject *gdb_fast_emit_prepared(PyObject *self, PyObject *unused) {
    if (!gdb_on_main_thread()) {
        PyErr_SetString(PyExc_RuntimeError, "emit_prepared is for the main thread");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    gdb_emit_prepared();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}
static PyObject *gdb_fast_frames(PyObject *self, PyObject *unused) { return PyLong_FromUnsignedLongLong(fast_frames_total); }

/* ---- a resting server's frames ----
 * With no node and nothing under way (NpcMindServer._rest_wanted), a frame only moves npc_mind's
 * clock, and the Python that does so is all the frame callback runs (at 1,000 mobs 40-50 us a
 * frame, its caches cold). Resting (rest(take): the frame or the update that found it so), the
 * callback keeps each frame's delta, time scale, pause and monotonic time here and runs no Python,
 * until a call is queued, GDB_REST_FRAMES frames are kept, or main-thread Python runs: that door
 * (gdb_wait_update) ends the rest and hands the frames to take(raw) first, which runs each one's
 * clock rule in order, as its frame would have, before any Python reads the clock. */
#define GDB_REST_FRAMES 256
static double rest_frames[GDB_REST_FRAMES][4]; /* delta, time scale, paused (0 or 1), monotonic seconds */
static PyObject *rest_take;
static uint64_t rest_frames_total; /* frames kept here since start (a count for tests and benchmarks) */

/* The frame callback, when no update thread took the frame: 1 when it was kept (no Python runs). */
static int gdb_rest_frame(void) {
    if (!__atomic_load_n(&gdb_resting, __ATOMIC_ACQUIRE)) return 0;
    double delta, scale;
    int paused;
    if (queued_rows_used || gdb_rest_kept == GDB_REST_FRAMES || !gdb_frame_reads(&delta, &scale, &paused)) {
        __atomic_store_n(&gdb_resting, 0, __ATOMIC_RELEASE); /* the frame is Python's (its door hands the kept) */
        return 0;
    }
    double *kept = rest_frames[gdb_rest_kept++];
    kept[0] = delta;
    kept[1] = scale;
    kept[2] = paused;
    kept[3] = gdb_monotonic();
    rest_frames_total++;
    return 1;
}

/* The frames kept, to take(raw) (raw: 4 doubles a frame, native order), at a main-thread door. */
static void gdb_rest_hand(void) {
    int kept = gdb_rest_kept;
    gdb_rest_kept = 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *raw = PyBytes_FromStringAndSize((const char *)rest_frames, (Py_ssize_t)sizeof(rest_frames[0]) * kept);
    PyObject *done = raw && rest_take ? PyObject_CallOneArg(rest_take, raw) : NULL;
    if (!done && PyErr_Occurred()) gdb_report_pending();
    Py_XDECREF(done);
    Py_XDECREF(raw);
    PyGILState_Release(gil);
}

/* rest(take): the server rests from the next frame on (above). Any thread: the update thread rests
 * before it lowers the update flag, so a door after it waits for that first. */
static PyObject *gdb_fast_frame_rest(PyObject *self, PyObject *take) {
    if (!PyCallable_Check(take)) {
        PyErr_SetString(PyExc_TypeError, "rest(take) takes a callable");
        return NULL;
    }
    if (!fast_emit_bind) {
        PyErr_SetString(PyExc_RuntimeError, "rest(): frame_setup() was not called");
        return NULL;
    }
    Py_XSETREF(rest_take, Py_NewRef(take));
    __atomic_store_n(&gdb_resting, 1, __ATOMIC_RELEASE);
    Py_RETURN_NONE;
}
static PyObject *gdb_fast_rested_frames(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(rest_frames_total);
}

/* Before the engine shuts down: the signals still held go unsent (their Variants are the engine's),
 * and a resting server's frames are dropped. */
static void gdb_fast_frame_forget(void) {
    gdb_fast_frame_disarm();
    gdb_emissions_destroy(fast_emissions, fast_emissions_used);
    fast_emissions_used = 0;
    gdb_rest_kept = 0;
    Py_CLEAR(rest_take);
}
