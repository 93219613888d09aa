/* ---- queued calls: a method's calls kept in C, handed to Python in call order (per method) ----
 * A method declared queued (gdbridge.declare.queued) is called from the engine very often and
 * returns nothing. Its call is appended here as a row (method, key, arguments) and returns at once,
 * without the GIL or Python, when it comes from the main thread, on an instance Python gave a key
 * (objects.queue_calls), with plain values of the declared types (an int within its declared
 * bounds, a finite float or an int for a float parameter (as its float), a StringName among the names Python numbered for the method: its number;
 * from a Variant call a String of one of those names too). Any other call runs the Python method,
 * as before. Python receives the rows (take(raw): the rows as bytes, below) before any other Python
 * code of the main thread runs:
 * on entering any callback of ours, and when an engine call made from Python returns
 * (gdb_take_queued), so Python never sees a state the calls have not reached. Bounded: past GDB_QUEUE_ROWS rows a call runs in Python. */
#define GDB_QUEUE_ARGS 4
#define GDB_QUEUE_ROWS (1 << 20)
/* The names a method's StringName parameter takes, numbered by Python (queued_names_add): a call
 * naming one is queued with its number. A StringName is found by its one pointer to the engine's
 * entry for its text (the table holds each name, so no other text can get that address); a String
 * (an untyped GDScript call passing "threat") by its characters' address, in a small cache of the
 * Strings met before (each held, so its characters cannot change or be freed), else by comparing
 * its text with the names' (then cached). */
#define GDB_NAME_STRINGS 64
typedef struct {
    const void *chars; /* NULL: empty slot */
    gdb_variant held;  /* the String, held */
    int64_t number;
} gdb_name_string;
typedef struct {
    intptr_t count, cap;
    gdb_variant *held;  /* StringName Variants, by number */
    const void **data;  /* each one's entry pointer */
    uint32_t **text;    /* each one's UTF-32 characters (a String argument is compared with them) */
    int64_t *length;
    intptr_t *slots, slots_cap; /* entry pointer -> number + 1, open addressing */
    gdb_name_string strings[GDB_NAME_STRINGS];
} gdb_queued_names;
typedef struct {
    PyObject *take; /* borrowed (gdbridge.fastpath keeps it): take(raw) */
    intptr_t answers; /* the answered method these calls update (0: none) */
    int nargs;
    int types[GDB_QUEUE_ARGS]; /* INT, FLOAT or STRING_NAME (queued as its number, an int64) */
    int64_t low[GDB_QUEUE_ARGS], high[GDB_QUEUE_ARGS];
    gdb_queued_names names; /* for a STRING_NAME parameter */
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
}

/* Slots of an open-addressing table for `n` entries: a power of two, at most half full. */
static intptr_t gdb_table_cap(Py_ssize_t n) {
    intptr_t cap = 64;
    while (cap < (intptr_t)n * 2 + 2) cap *= 2;
    return cap;
}
static const void *gdb_name_entry(const void *string_name) { return *(const void *const *)string_name; }
/* The number of the StringName whose entry pointer is `data`, or -1. */
static int64_t gdb_name_number(const gdb_queued_names *t, const void *data) {
    if (!data || !t->slots_cap) return -1;
    uintptr_t mask = (uintptr_t)t->slots_cap - 1;
    for (uintptr_t at = gdb_pointer_slot(data, t->slots_cap);; at = (at + 1) & mask) {
        intptr_t found = t->slots[at];
        if (!found) return -1;
        if (t->data[found - 1] == data) return found - 1;
    }
}
/* The number of the name String `s` (raw) spells, or -1 (see gdb_queued_names). */
static int64_t gdb_string_number(gdb_queued_names *t, const void *s) {
    const uint32_t *chars = (const uint32_t *)i_string_index_const((GDExtensionConstStringPtr)s, 0);
    if (!chars || !t->count) return -1;
    gdb_name_string *slot = &t->strings[gdb_pointer_slot(chars, GDB_NAME_STRINGS)];
    if (slot->chars == chars) return slot->number;
    int64_t n = i_string_to_utf32((GDExtensionConstStringPtr)s, NULL, 0);
    for (intptr_t k = 0; k < t->count; k++) {
        if (t->length[k] != n || memcmp(chars, t->text[k], (size_t)n * sizeof(uint32_t)) != 0) continue;
        if (slot->chars) gdb_vdestroy(&slot->held);
        gdb_vraw(&slot->held, GDEXTENSION_VARIANT_TYPE_STRING, s);
        slot->chars = chars;
        slot->number = k;
        return k;
    }
    return -1;
}
/* Every name goes (the engine's StringNames and Strings are released before it shuts down). */
static void gdb_names_drop(gdb_queued_names *t) {
    for (intptr_t k = 0; k < t->count; k++) {
        gdb_vdestroy(&t->held[k]);
        free(t->text[k]);
    }
    for (int i = 0; i < GDB_NAME_STRINGS; i++)
        if (t->strings[i].chars) gdb_vdestroy(&t->strings[i].held);
    free(t->held);
    free(t->data);
    free(t->text);
    free(t->length);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
static int gdb_names_closed; /* after the engine's texts were forgotten: no name is kept */
static void gdb_queued_names_forget(void) {
    gdb_names_closed = 1;
    for (intptr_t mid = 0; mid < queued_methods_cap; mid++) gdb_names_drop(&queued_methods[mid].names);
}
/* Number `name` (a str) next in the method's table, unless it has a number; 0 (an error set) on failure. */
static int gdb_names_add(gdb_queued_names *t, PyObject *name) {
    Py_ssize_t len = 0;
    const char *utf8 = PyUnicode_AsUTF8AndSize(name, &len);
    if (!utf8) return 0;
    gdb_variant held;
    gdb_vtext(&held, GDEXTENSION_VARIANT_TYPE_STRING_NAME, utf8, len);
    const void *data = gdb_name_entry(gdb_vinternal(&held, GDEXTENSION_VARIANT_TYPE_STRING_NAME));
    if (!data || gdb_name_number(t, data) >= 0) { /* the empty name (never queued), or known */
        gdb_vdestroy(&held);
        return 1;
    }
    if (t->count == t->cap) {
        intptr_t cap = t->cap ? t->cap * 2 : 16;
        gdb_variant *held_grown = realloc(t->held, (size_t)cap * sizeof(gdb_variant));
        if (held_grown) t->held = held_grown;
        const void **data_grown = held_grown ? realloc(t->data, (size_t)cap * sizeof(void *)) : NULL;
        if (data_grown) t->data = data_grown;
        uint32_t **text_grown = data_grown ? realloc(t->text, (size_t)cap * sizeof(uint32_t *)) : NULL;
        if (text_grown) t->text = text_grown;
        int64_t *length_grown = text_grown ? realloc(t->length, (size_t)cap * sizeof(int64_t)) : NULL;
        if (!length_grown) {
            gdb_vdestroy(&held);
            PyErr_NoMemory();
            return 0;
        }
        t->length = length_grown;
        t->cap = cap;
    }
    Py_UCS4 *text = PyUnicode_AsUCS4Copy(name);
    if (!text) {
        gdb_vdestroy(&held);
        return 0;
    }
    intptr_t slots_cap = gdb_table_cap(t->count + 1);
    if (slots_cap != t->slots_cap) { /* rehash into a larger table */
        intptr_t *slots = calloc((size_t)slots_cap, sizeof(intptr_t));
        if (!slots) {
            PyMem_Free(text);
            gdb_vdestroy(&held);
            PyErr_NoMemory();
            return 0;
        }
        free(t->slots);
        t->slots = slots;
        t->slots_cap = slots_cap;
        for (intptr_t k = 0; k < t->count; k++) {
            uintptr_t at = gdb_pointer_slot(t->data[k], slots_cap);
            while (slots[at]) at = (at + 1) & ((uintptr_t)slots_cap - 1);
            slots[at] = k + 1;
        }
    }
    intptr_t k = t->count++;
    t->held[k] = held;
    t->data[k] = data;
    t->length[k] = PyUnicode_GET_LENGTH(name);
    t->text[k] = malloc((size_t)(t->length[k] + 1) * sizeof(uint32_t));
    if (t->text[k]) memcpy(t->text[k], text, (size_t)t->length[k] * sizeof(uint32_t));
    else t->length[k] = -1; /* no copy: only its StringName is found */
    PyMem_Free(text);
    uintptr_t at = gdb_pointer_slot(data, t->slots_cap);
    while (t->slots[at]) at = (at + 1) & ((uintptr_t)t->slots_cap - 1);
    t->slots[at] = k + 1;
    return 1;
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
 * queued calls are not handed over before them; -1, or the id of the one queued method whose
 * calls the body does read (those are handed over first, the others wait). 0: not apart. */
static intptr_t *apart_methods;
static intptr_t apart_methods_cap;
static void gdb_set_apart_method(intptr_t mid, intptr_t apart) {
    apart_methods = gdb_grow(apart_methods, &apart_methods_cap, mid, sizeof(intptr_t));
    apart_methods[mid] = apart;
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
        if (m->types[i] == GDEXTENSION_VARIANT_TYPE_STRING_NAME) {
            int type = variant ? gdb_vtype(args[i]) : GDEXTENSION_VARIANT_TYPE_STRING_NAME;
            if (type == GDEXTENSION_VARIANT_TYPE_STRING_NAME) {
                const void *raw = variant ? gdb_vinternal((void *)args[i], type) : args[i];
                values[i].i = gdb_name_number(&m->names, gdb_name_entry(raw));
            } else if (type == GDEXTENSION_VARIANT_TYPE_STRING) {
                values[i].i = gdb_string_number(&m->names, gdb_vinternal((void *)args[i], type));
            } else {
                return 0;
            }
            if (values[i].i < 0) return 0; /* a name without a number: Python takes the call */
            continue;
        }
        int type = variant ? gdb_vtype(args[i]) : m->types[i];
        if (m->types[i] == GDEXTENSION_VARIANT_TYPE_INT && type == GDEXTENSION_VARIANT_TYPE_INT) {
            values[i].i = variant ? gdb_as_int(args[i]) : *(const int64_t *)args[i];
            if (values[i].i < m->low[i] || values[i].i > m->high[i]) return 0;
        } else if (m->types[i] == GDEXTENSION_VARIANT_TYPE_FLOAT && type == GDEXTENSION_VARIANT_TYPE_FLOAT) {
            values[i].f = variant ? gdb_as_float(args[i]) : *(const double *)args[i];
            if (!isfinite(values[i].f)) return 0;
        } else if (m->types[i] == GDEXTENSION_VARIANT_TYPE_FLOAT && type == GDEXTENSION_VARIANT_TYPE_INT) {
            values[i].f = (double)gdb_as_int(args[i]); /* an int for a float (2 -> 2.0), as Python's float() */
        } else {
            return 0;
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

/* Hand the queued rows to Python, each method's rows in one take(raw) call, in call order: `raw` the
 * rows as bytes, the key then each argument, 8 bytes a number in native order (int64, or double for
 * a float parameter; a name's number for a StringName). The methods go in the order of their first
 * row: a method's take changes only what its own method's Python body reads (declare.queued), so
 * the calls of two methods need not be handed over interleaved as they were made (a frame of
 * record_event and set_input calls, one of each per node, is two takes, not two a node). The GIL
 * is held. The rows are taken out first, so a call queued while Python takes them (a take that
 * calls the engine) waits for this loop's next round, after the rows before it. A take that raises
 * is reported; the methods after it still go. */
static int gdb_taking; /* inside a take: rows queued meanwhile wait for its loop, in order */
/* Hand `used` rows to Python as above, each method's in one take(raw), the methods in the order of
 * their first row (the rows are marked handed). The GIL is held. */
static void gdb_hand_rows(gdb_queued_row *rows, intptr_t used) {
    for (intptr_t start = 0; start < used; start++) {
        intptr_t mid = rows[start].mid, count = 0;
        if (!mid) continue; /* handed over with an earlier method's rows */
        for (intptr_t r = start; r < used; r++) count += rows[r].mid == mid;
        gdb_queued_method *m = &queued_methods[mid];
        Py_ssize_t width = (Py_ssize_t)sizeof(gdb_number) * (m->nargs + 1);
        PyObject *raw = PyBytes_FromStringAndSize(NULL, width * count);
        char *at = raw ? PyBytes_AS_STRING(raw) : NULL;
        for (intptr_t r = start; r < used; r++) {
            if (rows[r].mid != mid) continue;
            rows[r].mid = 0;
            if (!at) continue;
            memcpy(at, &rows[r].key, sizeof(int64_t));
            memcpy(at + sizeof(gdb_number), rows[r].args, sizeof(gdb_number) * (size_t)m->nargs);
            at += width;
        }
        PyObject *done = raw ? PyObject_CallOneArg(m->take, raw) : NULL;
        if (!done) gdb_report_pending();
        Py_XDECREF(done);
        Py_XDECREF(raw);
    }
}
static void gdb_take_queued_locked(void) {
    if (gdb_taking) return;
    gdb_taking = 1;
    while (queued_rows_used) {
        intptr_t used = queued_rows_used, cap = queued_rows_cap;
        gdb_queued_row *rows = queued_rows;
        queued_rows = NULL;
        queued_rows_cap = queued_rows_used = 0;
        gdb_hand_rows(rows, used);
        if (!queued_rows) {
            queued_rows = rows; /* nothing was queued meanwhile: keep the buffer */
            queued_rows_cap = cap;
        } else {
            free(rows);
        }
    }
    gdb_taking = 0;
}
/* Hand over the rows of method `mid` only (its take as above), the others staying queued in order:
 * before an apart method that reads those calls. */
static void gdb_take_queued_of_locked(intptr_t mid) {
    if (gdb_taking || mid <= 0 || mid >= queued_methods_cap || !queued_methods[mid].take) return;
    intptr_t count = 0;
    for (intptr_t r = 0; r < queued_rows_used; r++) count += queued_rows[r].mid == mid;
    if (!count) return;
    gdb_taking = 1;
    gdb_queued_method *m = &queued_methods[mid];
    Py_ssize_t width = (Py_ssize_t)sizeof(gdb_number) * (m->nargs + 1);
    PyObject *raw = PyBytes_FromStringAndSize(NULL, width * count);
    char *at = raw ? PyBytes_AS_STRING(raw) : NULL;
    intptr_t kept = 0;
    for (intptr_t r = 0; r < queued_rows_used; r++) {
        if (queued_rows[r].mid != mid) {
            queued_rows[kept++] = queued_rows[r];
        } else if (at) {
            memcpy(at, &queued_rows[r].key, sizeof(int64_t));
            memcpy(at + sizeof(gdb_number), queued_rows[r].args, sizeof(gdb_number) * (size_t)m->nargs);
            at += width;
        }
    }
    queued_rows_used = kept;
    PyObject *done = raw ? PyObject_CallOneArg(m->take, raw) : NULL;
    if (!done) gdb_report_pending();
    Py_XDECREF(done);
    Py_XDECREF(raw);
    gdb_taking = 0;
}
/* ---- the update thread: while Python's batched update runs on its worker (npc_mind's
 * update_on_thread), the main thread waits for it before it enters Python, at the same doors as the
 * queued calls' take (a callback's start, an engine call's end), so no main-thread Python ever meets
 * the update half done. Python raises the flag before it starts the worker (update_busy(1)) and the
 * worker lowers it when the update is done. The wait is here, on a condition, without the GIL: the
 * worker holds the GIL while it runs, and a main thread asking for it would make the worker drop it
 * (after up to a switch interval, 5 ms) only to wait for the worker again. The calls answered here
 * and the queued ones never wait: the update reads no C table and no queue. */
static int gdb_update_busy;
static pthread_mutex_t gdb_update_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gdb_update_done = PTHREAD_COND_INITIALIZER;
static double gdb_update_waited; /* the main thread's seconds of waiting, since update_waited() */
static double gdb_monotonic(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}
static int gdb_fast_armed; /* the next frame may run without Python (fast_frame.c); set under the lock */
static void gdb_fast_frame_disarm(void);
static int gdb_resting;   /* the server rests: the frames are kept in C (fast_frame.c); atomic */
static int gdb_rest_kept; /* the frames kept, handed to Python at the next door (main thread only) */
static void gdb_rest_hand(void);
/* Until the update under way is done (at once when none runs), counted in update_waited. Main thread. */
static inline void gdb_wait_update_done(void) {
    if (!__atomic_load_n(&gdb_update_busy, __ATOMIC_ACQUIRE)) return;
    /* an engine call made from main-thread Python after the start (a C fast call keeps the GIL) */
    PyThreadState *held = PyGILState_Check() ? PyEval_SaveThread() : NULL;
    double started = gdb_monotonic();
    pthread_mutex_lock(&gdb_update_lock);
    while (gdb_update_busy) pthread_cond_wait(&gdb_update_done, &gdb_update_lock);
    pthread_mutex_unlock(&gdb_update_lock);
    gdb_update_waited += gdb_monotonic() - started;
    if (held) PyEval_RestoreThread(held);
}
static inline void gdb_wait_update(void) {
    if (!gdb_on_main_thread()) return;
    gdb_wait_update_done();
    /* main-thread Python runs next, after the update (which armed at its end): the next frame is
     * Python's, as that code may change what the update thread's frame leaves out */
    if (__atomic_load_n(&gdb_fast_armed, __ATOMIC_ACQUIRE)) gdb_fast_frame_disarm();
    /* so is a resting server's, and the frames it kept go to Python before that code sees its clock */
    if (__atomic_load_n(&gdb_resting, __ATOMIC_ACQUIRE)) __atomic_store_n(&gdb_resting, 0, __ATOMIC_RELEASE);
    if (gdb_rest_kept) gdb_rest_hand();
}
static PyObject *gdb_fast_update_busy(PyObject *self, PyObject *flag) {
    int busy = PyObject_IsTrue(flag);
    if (busy < 0) return NULL;
    pthread_mutex_lock(&gdb_update_lock);
    __atomic_store_n(&gdb_update_busy, busy, __ATOMIC_RELEASE);
    if (!busy) pthread_cond_broadcast(&gdb_update_done);
    pthread_mutex_unlock(&gdb_update_lock);
    Py_RETURN_NONE;
}
static PyObject *gdb_fast_update_waited(PyObject *self, PyObject *unused) {
    double waited = gdb_update_waited; /* (main thread only: written and read there) */
    gdb_update_waited = 0.0;
    return PyFloat_FromDouble(waited);
}

/* Before a call of method `mid` enters Python (no GIL held): the queued calls it may read. */
static inline void gdb_take_queued(void);
static inline void gdb_take_queued_before(intptr_t mid) {
    intptr_t apart = mid < apart_methods_cap ? apart_methods[mid] : 0;
    if (!apart) {
        gdb_take_queued(); /* (it waits for the update) */
        return;
    }
    gdb_wait_update();
    if (apart > 0 && queued_rows_used && gdb_on_main_thread()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        gdb_take_queued_of_locked(apart);
        PyGILState_Release(gil);
    }
}
/* Rows wait and this is the main thread, the only one that takes them. */
static inline int gdb_queued_waiting(void) { return queued_rows_used && gdb_on_main_thread(); }
static inline void gdb_take_queued_held(void) {
    if (gdb_queued_waiting()) gdb_take_queued_locked();
}
/* The same from C without the GIL (a callback's start, an engine call's end). */
static inline void gdb_take_queued(void) {
    gdb_wait_update();
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
/* queued_names_add(mid, names) -> int: number the strs of `names` not numbered yet (nor empty), next
 * in order, for the method's StringName parameter (each keeps its number until the engine shuts
 * down); returns how many names are numbered (-1 once the engine's texts were forgotten, -2 off
 * the main thread: nothing numbered). */
static PyObject *gdb_fast_queued_names_add(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "queued_names_add(mid, names: list[str])");
        return NULL;
    }
    Py_ssize_t mid = PyLong_AsSsize_t(args[0]);
    if (mid == -1 && PyErr_Occurred()) return NULL;
    if (mid <= 0 || mid >= queued_methods_cap || !queued_methods[mid].take) {
        PyErr_SetString(PyExc_ValueError, "not a queued method");
        return NULL;
    }
    gdb_queued_names *t = &queued_methods[mid].names;
    if (gdb_names_closed) return PyLong_FromLong(-1); /* shutting down: no engine text is kept */
    if (!gdb_on_main_thread()) return PyLong_FromLong(-2); /* the queue reads the table unlocked */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[1]); i++) {
        PyObject *name = PyList_GET_ITEM(args[1], i);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "queued_names_add: the names must be str");
            return NULL;
        }
        if (!gdb_names_add(t, name)) return NULL;
    }
    return PyLong_FromSsize_t(t->count);
}
