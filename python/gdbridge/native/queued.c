/* ---- queued calls: a method's calls kept in C, handed to Python in call order ----
 * A method declared queued (gdbridge.declare.queued) is called from the engine very often and
 * returns nothing. Its call is appended here as a row (method, key, arguments) and returns at once,
 * without the GIL or Python, when it comes from the main thread, on an instance Python gave a key
 * (objects.queue_calls), with plain numbers of the declared types (an int within its declared
 * bounds, a finite float). Any other call runs the Python method, as before. Python receives the
 * rows (take(raw): the rows as bytes, below) before any other Python code of the main thread runs:
 * on entering any callback of ours, and when an engine call made from Python returns
 * (gdb_take_queued), so Python never sees a state the calls have not reached. Bounded: past GDB_QUEUE_ROWS rows a call runs in Python. */
#define GDB_QUEUE_ARGS 4
#define GDB_QUEUE_ROWS (1 << 20)
typedef struct {
    PyObject *take; /* borrowed (gdbridge.fastpath keeps it): take(raw) */
    intptr_t answers; /* the answered method these calls update (0: none) */
    int nargs;
    int types[GDB_QUEUE_ARGS]; /* INT or FLOAT */
    int64_t low[GDB_QUEUE_ARGS], high[GDB_QUEUE_ARGS];
} gdb_queued_method;
typedef union { int64_t i; double f; } gdb_number;
typedef struct {
    intptr_t mid;
    int64_t key;
    gdb_number args[GDB_QUEUE_ARGS];
} gdb_queued_row;
typedef struct {
    void *inst;
    int64_t key; /* 0: none (the slot stays, so a later key for the same instance reuses it) */
} gdb_queue_key;
static gdb_queued_method *queued_methods;
static intptr_t queued_methods_cap;
static gdb_queued_row *queued_rows;
static intptr_t queued_rows_cap, queued_rows_used;
static gdb_queue_key *queue_keys;
static intptr_t queue_keys_cap, queue_keys_used;
static pthread_t gdb_main_thread;
static int gdb_main_thread_known;
static uint64_t queued_total; /* calls queued since start (a count for tests and benchmarks) */

static int gdb_on_main_thread(void) { return gdb_main_thread_known && pthread_equal(pthread_self(), gdb_main_thread); }

static void gdb_set_queued_method(intptr_t mid, intptr_t take, const int *types, const int64_t *low,
                                  const int64_t *high, int nargs) {
    if (nargs > GDB_QUEUE_ARGS) return;
    queued_methods = gdb_grow(queued_methods, &queued_methods_cap, mid, sizeof(gdb_queued_method));
    gdb_queued_method *m = &queued_methods[mid];
    m->nargs = nargs;
    for (int i = 0; i < nargs; i++) {
        m->types[i] = types[i];
        m->low[i] = low[i];
        m->high[i] = high[i];
    }
    m->take = (PyObject *)take;
    gdb_main_thread = pthread_self(); /* classes are registered on the main thread */
    gdb_main_thread_known = 1;
}

static gdb_queue_key *gdb_queue_key_slot(const void *inst) {
    if (!queue_keys_cap) return NULL;
    uintptr_t mask = (uintptr_t)queue_keys_cap - 1;
    for (uintptr_t at = gdb_pointer_slot(inst, queue_keys_cap);; at = (at + 1) & mask) {
        gdb_queue_key *slot = &queue_keys[at];
        if (slot->inst == inst || !slot->inst) return slot;
    }
}

/* Give `inst` (the Python object of an instance) its key; 0 takes it back (its calls run in Python). */
static void gdb_set_queue_key(void *inst, int64_t key) {
    gdb_queue_key *slot = gdb_queue_key_slot(inst);
    if (slot && slot->inst) {
        slot->key = key;
        return;
    }
    if (!key) return;
    if ((queue_keys_used + 1) * 2 > queue_keys_cap) {
        /* grow, dropping the instances without a key */
        gdb_queue_key *old = queue_keys;
        intptr_t old_cap = queue_keys_cap, live = 0;
        for (intptr_t i = 0; i < old_cap; i++) live += old[i].inst && old[i].key;
        intptr_t cap = 64;
        while (cap < (live + 1) * 4) cap *= 2;
        gdb_queue_key *table = calloc((size_t)cap, sizeof(gdb_queue_key));
        if (!table) return; /* no key: the calls stay on the Python path */
        queue_keys = table;
        queue_keys_cap = cap;
        queue_keys_used = 0;
        for (intptr_t i = 0; i < old_cap; i++)
            if (old[i].inst && old[i].key) {
                *gdb_queue_key_slot(old[i].inst) = old[i];
                queue_keys_used++;
            }
        free(old);
    }
    slot = gdb_queue_key_slot(inst);
    slot->inst = inst;
    slot->key = key;
    queue_keys_used++;
}

/* A queued call of the linked answered method's writer (answered.c). */
static void gdb_answers_written(intptr_t mid, int64_t key, int64_t arg);

/* Methods whose Python body never reads what queued calls change (gdbridge.declare.apart): the
 * queued calls are not handed over before them. */
static char *apart_methods;
static intptr_t apart_methods_cap;
static void gdb_set_apart_method(intptr_t mid, int apart) {
    apart_methods = gdb_grow(apart_methods, &apart_methods_cap, mid, 1);
    apart_methods[mid] = (char)(apart != 0);
}

/* Queue the call when it qualifies (see above); 1 when it did. `variant`: args are Variants (call),
 * else raw values of the declared types (ptrcall, `n` unused). */
static int gdb_queue_call(intptr_t mid, void *inst, const void *const *args, GDExtensionInt n, int variant) {
    if (mid >= queued_methods_cap || !queued_methods[mid].take || !queue_keys_cap) return 0;
    gdb_queued_method *m = &queued_methods[mid];
    if ((variant && n != m->nargs) || queued_rows_used >= GDB_QUEUE_ROWS || !gdb_on_main_thread()) return 0;
    gdb_queue_key *slot = gdb_queue_key_slot(inst);
    if (!slot || !slot->key) return 0;
    gdb_number values[GDB_QUEUE_ARGS];
    for (int i = 0; i < m->nargs; i++) {
        if (variant && gdb_vtype(args[i]) != m->types[i]) return 0;
        if (m->types[i] == GDEXTENSION_VARIANT_TYPE_INT) {
            values[i].i = variant ? gdb_as_int(args[i]) : *(const int64_t *)args[i];
            if (values[i].i < m->low[i] || values[i].i > m->high[i]) return 0;
        } else {
            values[i].f = variant ? gdb_as_float(args[i]) : *(const double *)args[i];
            if (!isfinite(values[i].f)) return 0;
        }
    }
    if (queued_rows_used == queued_rows_cap) {
        intptr_t cap = queued_rows_cap ? queued_rows_cap * 2 : 1024;
        gdb_queued_row *rows = realloc(queued_rows, (size_t)cap * sizeof(gdb_queued_row));
        if (!rows) return 0;
        queued_rows = rows;
        queued_rows_cap = cap;
    }
    queued_total++;
    if (m->answers) gdb_answers_written(m->answers, slot->key, values[0].i);
    gdb_queued_row *row = &queued_rows[queued_rows_used++];
    row->mid = mid;
    row->key = slot->key;
    memcpy(row->args, values, sizeof(gdb_number) * (size_t)m->nargs);
    return 1;
}

/* Hand the queued rows to Python, each run of one method's rows in one take(raw) call: `raw` the
 * rows as bytes, the key then each argument, 8 bytes a number in native order (int64, or double for
 * a float parameter). The GIL is held. The rows are taken out first, so a call queued while Python
 * takes them (a take that calls the engine) waits for this loop's next round, after the rows before
 * it. A take that raises is reported; the runs after it still go. */
static int gdb_taking; /* inside a take: rows queued meanwhile wait for its loop, in order */
static void gdb_take_queued_locked(void) {
    if (gdb_taking) return;
    gdb_taking = 1;
    while (queued_rows_used) {
        intptr_t used = queued_rows_used, cap = queued_rows_cap;
        gdb_queued_row *rows = queued_rows;
        queued_rows = NULL;
        queued_rows_cap = queued_rows_used = 0;
        for (intptr_t start = 0; start < used;) {
            intptr_t mid = rows[start].mid, end = start;
            while (end < used && rows[end].mid == mid) end++;
            gdb_queued_method *m = &queued_methods[mid];
            Py_ssize_t width = (Py_ssize_t)sizeof(gdb_number) * (m->nargs + 1);
            PyObject *raw = PyBytes_FromStringAndSize(NULL, width * (end - start));
            for (intptr_t r = start; raw && r < end; r++) {
                char *at = PyBytes_AS_STRING(raw) + width * (r - start);
                memcpy(at, &rows[r].key, sizeof(int64_t));
                memcpy(at + sizeof(gdb_number), rows[r].args, sizeof(gdb_number) * (size_t)m->nargs);
            }
            PyObject *done = raw ? PyObject_CallOneArg(m->take, raw) : NULL;
            if (!done) gdb_report_pending();
            Py_XDECREF(done);
            Py_XDECREF(raw);
            start = end;
        }
        if (!queued_rows) {
            queued_rows = rows; /* nothing was queued meanwhile: keep the buffer */
            queued_rows_cap = cap;
        } else {
            free(rows);
        }
    }
    gdb_taking = 0;
}
/* Rows wait and this is the main thread, the only one that takes them. */
static inline int gdb_queued_waiting(void) { return queued_rows_used && gdb_on_main_thread(); }
static inline void gdb_take_queued_held(void) {
    if (gdb_queued_waiting()) gdb_take_queued_locked();
}
/* The same from C without the GIL (a callback's start, an engine call's end). */
static inline void gdb_take_queued(void) {
    if (gdb_queued_waiting()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        gdb_take_queued_locked();
        PyGILState_Release(gil);
    }
}
static PyObject *gdb_fast_take_queued(PyObject *self, PyObject *unused) {
    gdb_take_queued_held();
    Py_RETURN_NONE;
}
static PyObject *gdb_fast_queued_total(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(queued_total);
}
static PyObject *gdb_fast_queue_key(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "queue_key(instance, key: int) takes two arguments");
        return NULL;
    }
    long long key = PyLong_AsLongLong(args[1]);
    if (key == -1 && PyErr_Occurred()) return NULL;
    if (!gdb_on_main_thread()) {
        PyErr_SetString(PyExc_RuntimeError, "queue_key is for the main thread");
        return NULL;
    }
    gdb_set_queue_key(args[0], key); /* no rows wait: Python only runs after they were taken */
    Py_RETURN_NONE;
}
