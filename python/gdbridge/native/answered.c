/* ---- answered reads: an int read of (instance key, int argument) answered from a table in C ----
 * A method declared answered (gdbridge.declare.answered) takes one int and returns an int. Python
 * publishes, once a frame, a table that it keeps true: the answer of (key, argument) pairs and, per
 * key, for how many more queued calls of the linked writer (a queued method whose first argument is
 * the same kind of value) they hold (`writes_left`), and the answer for an argument such a call
 * names (`after_write`; -1: Python answers it). This file applies that table as data: a queued call
 * of the writer spends one of its key's `writes_left` (a key with none left is closed) and gives
 * its argument the key's `after_write`; a read on an instance whose key is open gets its
 * argument's answer when there is one (>= 0), logged (key, argument) for Python (`answers_asked`:
 * the pairs its next table holds, so a read answered as written, whose next frame may not write,
 * is logged too). Anything else runs the Python method. Python closes a key whose
 * state it changes another way, and clears everything when the answers no longer hold. */
#define GDB_ANSWER_WRITTEN 8 /* distinct written arguments kept a key; one more closes it */
typedef struct {
    int64_t key, arg;
    int64_t value;
    uint32_t stamp; /* the table's stamp when set: an entry of an older stamp is empty */
} gdb_answer_pair;
typedef struct {
    int64_t key;
    int64_t writes_left, after_write;
    int open, nwritten;
    uint32_t stamp; /* as gdb_answer_pair's */
    int64_t args[GDB_ANSWER_WRITTEN]; /* the arguments queued calls named: answered `after_write` */
} gdb_answer_stream;
typedef struct {
    gdb_answer_pair *pairs;
    intptr_t pairs_cap;
    gdb_answer_stream *streams;
    intptr_t streams_cap;
    int64_t *asked;
    intptr_t asked_cap, asked_used;
    uint32_t stamp; /* the entries of this stamp are the table; a new table takes the next (no clearing) */
    int on;
} gdb_answers;
static gdb_answers *answered_methods;
static intptr_t answered_methods_cap;
static uint64_t answered_total; /* calls answered here since start */

static uintptr_t gdb_int_slot(int64_t a, int64_t b, intptr_t cap) {
    uintptr_t i = ((uintptr_t)a * (uintptr_t)0x9E3779B97F4A7C15u) ^ ((uintptr_t)b * (uintptr_t)0xC2B2AE3D27D4EB4Fu);
    return (i ^ (i >> 31)) & ((uintptr_t)cap - 1);
}
static gdb_answer_stream *gdb_answer_stream_of(gdb_answers *a, int64_t key) {
    if (!a->streams_cap) return NULL;
    uintptr_t mask = (uintptr_t)a->streams_cap - 1;
    for (uintptr_t at = gdb_int_slot(key, 0, a->streams_cap);; at = (at + 1) & mask) {
        gdb_answer_stream *st = &a->streams[at];
        if (st->stamp != a->stamp) return NULL;
        if (st->key == key) return st;
    }
}
static gdb_answer_pair *gdb_answer_pair_of(gdb_answers *a, int64_t key, int64_t arg) {
    if (!a->pairs_cap) return NULL;
    uintptr_t mask = (uintptr_t)a->pairs_cap - 1;
    for (uintptr_t at = gdb_int_slot(key, arg, a->pairs_cap);; at = (at + 1) & mask) {
        gdb_answer_pair *pair = &a->pairs[at];
        if (pair->stamp != a->stamp) return NULL;
        if (pair->key == key && pair->arg == arg) return pair;
    }
}
/* A queued call of the linked writer under `key`, first argument `arg`. */
static void gdb_answers_written(intptr_t mid, int64_t key, int64_t arg) {
    gdb_answers *a = mid < answered_methods_cap ? &answered_methods[mid] : NULL;
    gdb_answer_stream *st = a && a->on ? gdb_answer_stream_of(a, key) : NULL;
    if (!st || !st->open) return;
    if (--st->writes_left < 0) {
        st->open = 0;
        return;
    }
    for (int i = 0; i < st->nwritten; i++)
        if (st->args[i] == arg) return;
    if (st->nwritten == GDB_ANSWER_WRITTEN) st->open = 0;
    else st->args[st->nwritten++] = arg;
}
static int gdb_answer_log(gdb_answers *a, int64_t key, int64_t arg) {
    if (a->asked_used + 2 > a->asked_cap) {
        intptr_t cap = a->asked_cap ? a->asked_cap * 2 : 1024;
        int64_t *grown = realloc(a->asked, (size_t)cap * sizeof(int64_t));
        if (!grown) return 0;
        a->asked = grown;
        a->asked_cap = cap;
    }
    a->asked[a->asked_used++] = key;
    a->asked[a->asked_used++] = arg;
    return 1;
}
/* The table's answer to the call (see above); 1 when there is one, the int written to `ret`. */
static int gdb_answer_call(intptr_t mid, void *inst, const void *const *args, GDExtensionInt n, int variant,
                           void *ret) {
    gdb_answers *a = &answered_methods[mid];
    if (!a->on || (variant && (n != 1 || gdb_vtype(args[0]) != GDEXTENSION_VARIANT_TYPE_INT)) ||
        !gdb_on_main_thread())
        return 0;
    gdb_queue_key *slot = gdb_queue_key_slot(inst);
    gdb_answer_stream *st = slot && slot->key ? gdb_answer_stream_of(a, slot->key) : NULL;
    if (!st || !st->open) return 0;
    int64_t arg = variant ? gdb_as_int(args[0]) : *(const int64_t *)args[0];
    int64_t value = -1;
    int written = 0;
    for (int i = 0; i < st->nwritten; i++) written |= st->args[i] == arg;
    if (written) {
        value = st->after_write;
        if (value < 0 || !gdb_answer_log(a, slot->key, arg)) return 0;
    } else {
        gdb_answer_pair *pair = gdb_answer_pair_of(a, slot->key, arg);
        if (!pair || pair->value < 0 || !gdb_answer_log(a, slot->key, arg)) return 0;
        value = pair->value;
    }
    if (value < 0) return 0;
    answered_total++;
    if (variant) gdb_vint(ret, value);
    else *(int64_t *)ret = value;
    return 1;
}
static void gdb_answers_drop(gdb_answers *a) {
    free(a->pairs);
    free(a->streams);
    a->pairs = NULL;
    a->streams = NULL;
    a->pairs_cap = a->streams_cap = 0;
    a->on = 0;
}
/* No entry holds: the next stamp (the memory is kept for the next table, which a frame sets anew:
 * no allocation, no clearing of a table that may be larger than the caches). */
static void gdb_answers_clear(gdb_answers *a) {
    a->on = 0;
    if (++a->stamp == 0) { /* wrapped: an entry may hold the stamp from long ago */
        if (a->pairs) memset(a->pairs, 0, (size_t)a->pairs_cap * sizeof(gdb_answer_pair));
        if (a->streams) memset(a->streams, 0, (size_t)a->streams_cap * sizeof(gdb_answer_stream));
        a->stamp = 1;
    }
}
/* Room for a table of `n` entries of `size` bytes at `*table` (`*cap` slots): kept when large
 * enough and not 8 times too large, else made anew (zeroed); 0 when out of memory. */
static int gdb_answers_room(void **table, intptr_t *cap, Py_ssize_t n, size_t size) {
    intptr_t wanted = gdb_table_cap(n);
    if (*table && *cap >= wanted && *cap <= wanted * 8) return 1;
    void *made = calloc((size_t)wanted, size);
    if (!made) return 0;
    free(*table);
    *table = made;
    *cap = wanted;
    return 1;
}
/* answers_set(mid, pair_keys, pair_args, values, keys, writes_left, after_write): int64 buffers;
 * replaces the answers (the asked log stays until read). */
static PyObject *gdb_fast_answers_set(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "answers_set(mid, pair_keys, pair_args, values, keys, writes_left, after_write)");
        return NULL;
    }
    Py_ssize_t mid = PyLong_AsSsize_t(args[0]);
    if (mid == -1 && PyErr_Occurred()) return NULL;
    if (mid <= 0 || mid >= answered_methods_cap) {
        PyErr_SetString(PyExc_ValueError, "answers_set: not an answered method");
        return NULL;
    }
    Py_buffer views[6];
    int got = 0;
    for (; got < 6; got++) {
        if (PyObject_GetBuffer(args[got + 1], &views[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) break;
        if (views[got].itemsize != 8) {
            PyErr_SetString(PyExc_TypeError, "answers_set takes int64 arrays");
            PyBuffer_Release(&views[got]);
            break;
        }
    }
    PyObject *result = NULL;
    if (got == 6) {
        Py_ssize_t pairs = views[0].len / 8, streams = views[3].len / 8;
        if (views[1].len / 8 != pairs || views[2].len / 8 != pairs || views[4].len / 8 != streams ||
            views[5].len / 8 != streams) {
            PyErr_SetString(PyExc_ValueError, "answers_set: the pair arrays and the stream arrays must match");
        } else {
            gdb_answers *a = &answered_methods[mid];
            gdb_answers_clear(a);
            if (!gdb_answers_room((void **)&a->pairs, &a->pairs_cap, pairs, sizeof(gdb_answer_pair)) ||
                !gdb_answers_room((void **)&a->streams, &a->streams_cap, streams, sizeof(gdb_answer_stream))) {
                gdb_answers_drop(a);
                PyErr_NoMemory();
            } else {
                const int64_t *pk = views[0].buf, *pa = views[1].buf, *pv = views[2].buf;
                const int64_t *sk = views[3].buf, *sb = views[4].buf, *sw = views[5].buf;
                uintptr_t pmask = (uintptr_t)a->pairs_cap - 1, smask = (uintptr_t)a->streams_cap - 1;
                for (Py_ssize_t i = 0; i < pairs; i++) {
                    uintptr_t at = gdb_int_slot(pk[i], pa[i], a->pairs_cap);
                    while (a->pairs[at].stamp == a->stamp && !(a->pairs[at].key == pk[i] && a->pairs[at].arg == pa[i]))
                        at = (at + 1) & pmask;
                    a->pairs[at] = (gdb_answer_pair){pk[i], pa[i], pv[i], a->stamp};
                }
                for (Py_ssize_t i = 0; i < streams; i++) {
                    uintptr_t at = gdb_int_slot(sk[i], 0, a->streams_cap);
                    while (a->streams[at].stamp == a->stamp && a->streams[at].key != sk[i]) at = (at + 1) & smask;
                    gdb_answer_stream *st = &a->streams[at];
                    st->key = sk[i];
                    st->writes_left = sb[i];
                    st->after_write = sw[i];
                    st->nwritten = 0;
                    st->open = 1;
                    st->stamp = a->stamp;
                }
                a->on = 1;
                result = Py_NewRef(Py_None);
            }
        }
    }
    for (int i = 0; i < got && i < 6; i++) PyBuffer_Release(&views[i]);
    return result;
}
static gdb_answers *gdb_answers_arg(PyObject *arg) {
    Py_ssize_t mid = PyLong_AsSsize_t(arg);
    if (mid == -1 && PyErr_Occurred()) return NULL;
    if (mid <= 0 || mid >= answered_methods_cap) {
        PyErr_SetString(PyExc_ValueError, "not an answered method");
        return NULL;
    }
    return &answered_methods[mid];
}
/* answers_close(mid, key): the key's calls run in Python until the next answers_set. */
static PyObject *gdb_fast_answers_close(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    gdb_answers *a = nargs == 2 ? gdb_answers_arg(args[0]) : NULL;
    if (!a) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "answers_close(mid, key)");
        return NULL;
    }
    long long key = PyLong_AsLongLong(args[1]);
    if (key == -1 && PyErr_Occurred()) return NULL;
    gdb_answer_stream *st = a->on ? gdb_answer_stream_of(a, key) : NULL;
    if (st) st->open = 0;
    Py_RETURN_NONE;
}
/* answers_clear(mid): every call runs in Python until the next answers_set. */
static PyObject *gdb_fast_answers_clear(PyObject *self, PyObject *arg) {
    gdb_answers *a = gdb_answers_arg(arg);
    if (!a) return NULL;
    gdb_answers_clear(a);
    Py_RETURN_NONE;
}
/* answers_asked(mid) -> bytes: the (key, argument) int64 pairs answered from the table since the
 * last read, in call order; the log is emptied. */
static PyObject *gdb_fast_answers_asked(PyObject *self, PyObject *arg) {
    gdb_answers *a = gdb_answers_arg(arg);
    if (!a) return NULL;
    PyObject *out = PyBytes_FromStringAndSize((const char *)a->asked, (Py_ssize_t)(a->asked_used * 8));
    if (out) a->asked_used = 0;
    return out;
}
static PyObject *gdb_fast_answered_total(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(answered_total);
}
/* Link answered method `mid` (one int argument, an int result) to queued method `writes`. */
static void gdb_set_answered_method(intptr_t mid, intptr_t writes) {
    answered_methods = gdb_grow(answered_methods, &answered_methods_cap, mid, sizeof(gdb_answers));
    gdb_answers_drop(&answered_methods[mid]);
    if (writes > 0 && writes < queued_methods_cap) queued_methods[writes].answers = mid;
}
