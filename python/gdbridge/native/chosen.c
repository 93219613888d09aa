/* ---- chosen reads: a read returning a StringName, answered in C from a table Python keeps ----
 * A method declared chosen (gdbridge.declare.chosen) either takes one Dictionary (input key ->
 * number) or takes nothing, and returns a StringName. Python keeps a table true, as for the
 * answered reads (answered.c): per instance key the numbers its answer holds for (one per input
 * name of the key's group, as float64; a read of nothing has no input names) and the answer (an
 * index into the group's names). The entries stay from frame to frame; Python puts the ones that
 * change (`choices_put`) and closes those whose state it changes. This file applies it as data: a
 * call from the main thread, on an instance whose key has an open entry, whose Dictionary holds,
 * for every input name of the group, an int or a float equal (bit for bit, an int as the float
 * Python's float() makes of it) to the entry's number gets the answer; Python is not told (the
 * choice it repeats writes nothing Python reads again). Keys the Dictionary has beyond those are
 * not read (the read ignores them too). Anything else (a missing input, another type, another
 * number, a closed key) runs the Python method, which must give the same answer.
 *
 * A group may carry a check (a C function and its data, given by address): for other numbers, all
 * finite, it says whether the entry's answer holds for them. When it does, the call gets that
 * answer, the entry keeps the new numbers and is marked moved, and Python is not told then: it
 * reads the newest numbers of a moved entry when it needs them (`choices_moved`). */
#define GDB_CHOICE_INPUTS 8 /* input names a group has at most (more: Python answers) */
/* A group's check: 1 when `answer` holds for `values` (the group's inputs in order, all finite). */
typedef int32_t (*gdb_choice_check)(void *data, const double *values, int64_t answer);
typedef struct {
    int ninputs, nnames;
    gdb_variant inputs[GDB_CHOICE_INPUTS]; /* Strings, the Dictionary keys read */
    gdb_variant *names;                    /* StringNames, the answers */
    gdb_choice_check check;                /* NULL: answered for the same numbers only */
    void *check_data;
} gdb_choice_group;
typedef struct {
    int64_t key;
    int group, answer, open, used, moved;
    double values[GDB_CHOICE_INPUTS];
} gdb_choice_entry;
typedef struct {
    gdb_choice_group *groups;
    int ngroups;
    gdb_choice_entry *entries;
    intptr_t entries_cap, entries_used;
    int on;
    int nparams; /* 1: the read takes a Dictionary; 0: it takes nothing (its groups have no inputs) */
} gdb_choices;
static gdb_choices *chosen_methods;
static intptr_t chosen_methods_cap;
static GDExtensionInterfaceVariantGetKeyed i_variant_get_keyed;

static gdb_choice_entry *gdb_choice_entry_of(gdb_choices *c, int64_t key) {
    if (!c->entries_cap) return NULL;
    uintptr_t mask = (uintptr_t)c->entries_cap - 1;
    for (uintptr_t at = gdb_int_slot(key, 0, c->entries_cap);; at = (at + 1) & mask) {
        gdb_choice_entry *e = &c->entries[at];
        if (!e->used) return NULL;
        if (e->key == key) return e;
    }
}
static void gdb_choices_clear(gdb_choices *c) {
    for (int g = 0; g < c->ngroups; g++) {
        gdb_choice_group *group = &c->groups[g];
        for (int i = 0; i < group->ninputs; i++) i_variant_destroy(&group->inputs[i]);
        for (int i = 0; i < group->nnames; i++) i_variant_destroy(&group->names[i]);
        free(group->names);
    }
    free(c->groups);
    free(c->entries);
    c->groups = NULL;
    c->entries = NULL;
    c->ngroups = 0;
    c->entries_cap = c->entries_used = 0;
    c->on = 0;
}

static int gdb_choice_inputs_read(const gdb_choice_group *group, const void *arg, int variant, double *got);
static uint64_t checked_total;
/* The table's answer to the call (see above); 1 when there is one, the StringName written to `ret`. */
static int gdb_choice_call(intptr_t mid, void *inst, const void *const *args, GDExtensionInt n, int variant,
                           void *ret) {
    gdb_choices *c = &chosen_methods[mid];
    if (!c->on || (variant && (n != c->nparams || (n && gdb_vtype(args[0]) != GDEXTENSION_VARIANT_TYPE_DICTIONARY))) ||
        !gdb_on_main_thread())
        return 0;
    gdb_queue_key *slot = gdb_queue_key_slot(inst);
    gdb_choice_entry *e = slot && slot->key ? gdb_choice_entry_of(c, slot->key) : NULL;
    if (!e || !e->open) return 0;
    gdb_choice_group *group = &c->groups[e->group];
    if (group->ninputs) {
        double got[GDB_CHOICE_INPUTS];
        if (!gdb_choice_inputs_read(group, args[0], variant, got)) return 0;
        if (memcmp(got, e->values, sizeof(double) * (size_t)group->ninputs) != 0) {
            for (int i = 0; i < group->ninputs; i++)
                if (!(got[i] - got[i] == 0.0)) return 0; /* NaN or infinite: Python says what it does */
            if (!group->check || !group->check(group->check_data, got, e->answer)) return 0;
            memcpy(e->values, got, sizeof(double) * (size_t)group->ninputs);
            e->moved = 1;
            checked_total++;
        }
    }
    answered_total++;
    const gdb_variant *answer = &group->names[e->answer];
    if (variant) {
        i_variant_destroy(ret);
        gdb_vcopy(ret, answer);
    } else {
        gdb_value_destroy(GDEXTENSION_VARIANT_TYPE_STRING_NAME, ret);
        gdb_as_raw(answer, GDEXTENSION_VARIANT_TYPE_STRING_NAME, ret);
    }
    return 1;
}
/* The numbers the Dictionary `arg` (a Variant, or raw when not `variant`) holds for the group's
 * inputs into `got` (an int as a float); 0 when one is missing or no int or float. */
static int gdb_choice_inputs_read(const gdb_choice_group *group, const void *arg, int variant, double *got) {
    gdb_variant held;
    const void *dict = arg;
    if (!variant) { /* a raw Dictionary: read through a Variant holding it (a reference, no copy) */
        gdb_vraw(&held, GDEXTENSION_VARIANT_TYPE_DICTIONARY, arg);
        dict = &held;
    }
    int usable = 1;
    for (int i = 0; usable && i < group->ninputs; i++) {
        gdb_variant value;
        GDExtensionBool valid = 0;
        i_variant_get_keyed(dict, &group->inputs[i], &value, &valid);
        if (!valid) {
            usable = 0;
            break;
        }
        int type = gdb_vtype(&value);
        if (type == GDEXTENSION_VARIANT_TYPE_FLOAT) got[i] = gdb_as_float(&value);
        else if (type == GDEXTENSION_VARIANT_TYPE_INT) got[i] = (double)gdb_as_int(&value);
        else usable = 0;
        i_variant_destroy(&value);
    }
    if (!variant) i_variant_destroy(&held);
    return usable;
}

static gdb_choices *gdb_choices_arg(PyObject *arg) {
    Py_ssize_t mid = PyLong_AsSsize_t(arg);
    if (mid == -1 && PyErr_Occurred()) return NULL;
    if (mid <= 0 || mid >= chosen_methods_cap) {
        PyErr_SetString(PyExc_ValueError, "not a chosen method");
        return NULL;
    }
    return &chosen_methods[mid];
}
/* A list of str as Variants of `type` (String or StringName) into `out`; 0 (an error set) when an
 * item is no str. */
static int gdb_texts_in(PyObject *texts, int type, gdb_variant *out, Py_ssize_t count) {
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t len = 0;
        const char *utf8 = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, i), &len);
        if (!utf8) {
            for (Py_ssize_t j = 0; j < i; j++) i_variant_destroy(&out[j]);
            return 0;
        }
        gdb_vtext(&out[i], type, utf8, len);
    }
    return 1;
}
/* Grow the entries' table for `more` entries (rehashing the ones there); 0 when out of memory. */
static int gdb_choices_room(gdb_choices *c, Py_ssize_t more) {
    if ((c->entries_used + more) * 2 <= c->entries_cap) return 1;
    intptr_t cap = gdb_table_cap(c->entries_used + more);
    gdb_choice_entry *table = calloc((size_t)cap, sizeof(gdb_choice_entry));
    if (!table) return 0;
    uintptr_t mask = (uintptr_t)cap - 1;
    for (intptr_t i = 0; i < c->entries_cap; i++) {
        if (!c->entries[i].used) continue;
        uintptr_t at = gdb_int_slot(c->entries[i].key, 0, cap);
        while (table[at].used) at = (at + 1) & mask;
        table[at] = c->entries[i];
    }
    free(c->entries);
    c->entries = table;
    c->entries_cap = cap;
    return 1;
}
/* choices_put(mid, groups, keys, group_of, values, answers): groups a list of (input names, names)
 * lists of str, the table's groups from the first on (those beyond the ones it has are added; the
 * others must be the same); keys, group_of, answers int64 buffers, values float64 (per key its
 * group's inputs, in order, keys one after another). Each key's entry is put (replaced), open. */
static PyObject *gdb_fast_choices_put(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "choices_put(mid, groups, keys, group_of, values, answers)");
        return NULL;
    }
    gdb_choices *c = gdb_choices_arg(args[0]);
    if (!c) return NULL;
    Py_ssize_t ngroups = PyList_GET_SIZE(args[1]);
    if (ngroups > c->ngroups) {
        gdb_choice_group *grown = realloc(c->groups, (size_t)ngroups * sizeof(gdb_choice_group));
        if (!grown) return PyErr_NoMemory();
        c->groups = grown;
    }
    for (Py_ssize_t g = c->ngroups; g < ngroups; g++) {
        PyObject *pair = PyList_GET_ITEM(args[1], g);
        Py_ssize_t parts = PyTuple_Check(pair) ? PyTuple_GET_SIZE(pair) : 0;
        PyObject *inputs = parts == 2 || parts == 3 ? PyTuple_GET_ITEM(pair, 0) : NULL;
        PyObject *names = inputs ? PyTuple_GET_ITEM(pair, 1) : NULL;
        PyObject *check = parts == 3 ? PyTuple_GET_ITEM(pair, 2) : Py_None;
        void *check_function = NULL, *check_data = NULL;
        if (inputs && check != Py_None) {
            if (!PyTuple_Check(check) || PyTuple_GET_SIZE(check) != 2) inputs = NULL;
            else {
                check_function = PyLong_AsVoidPtr(PyTuple_GET_ITEM(check, 0));
                check_data = PyLong_AsVoidPtr(PyTuple_GET_ITEM(check, 1));
                if (PyErr_Occurred()) return NULL;
                if (!check_function) inputs = NULL;
            }
        }
        if (!inputs || !PyList_Check(inputs) || !PyList_Check(names) || PyList_GET_SIZE(inputs) > GDB_CHOICE_INPUTS ||
            PyList_GET_SIZE(names) == 0 || (!c->nparams && PyList_GET_SIZE(inputs))) {
            PyErr_SetString(PyExc_ValueError, "choices_put: a group is (input names, names[, check]), lists of "
                                              "str, at most 8 inputs (none for a read of nothing), at least one "
                                              "name, and a check None or (function address, data address)");
            return NULL;
        }
        gdb_choice_group *group = &c->groups[g];
        Py_ssize_t nnames = PyList_GET_SIZE(names), ninputs = PyList_GET_SIZE(inputs);
        memset(group, 0, sizeof(*group));
        group->check = (gdb_choice_check)check_function;
        group->check_data = check_data;
        group->names = calloc((size_t)nnames, sizeof(gdb_variant));
        if (!group->names) return PyErr_NoMemory();
        if (!gdb_texts_in(inputs, GDEXTENSION_VARIANT_TYPE_STRING, group->inputs, ninputs)) {
            free(group->names);
            return NULL;
        }
        if (!gdb_texts_in(names, GDEXTENSION_VARIANT_TYPE_STRING_NAME, group->names, nnames)) {
            for (Py_ssize_t i = 0; i < ninputs; i++) i_variant_destroy(&group->inputs[i]);
            free(group->names);
            return NULL;
        }
        group->ninputs = (int)ninputs;
        group->nnames = (int)nnames;
        c->ngroups = (int)g + 1;
    }
    Py_buffer views[4];
    int got = 0;
    for (; got < 4; got++) {
        if (PyObject_GetBuffer(args[got + 2], &views[got], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) break;
        if (views[got].itemsize != 8) {
            PyErr_SetString(PyExc_TypeError, "choices_put takes int64 and float64 arrays");
            PyBuffer_Release(&views[got]);
            break;
        }
    }
    PyObject *result = NULL;
    if (got == 4) {
        Py_ssize_t count = views[0].len / 8, nvalues = views[2].len / 8, need = 0;
        const int64_t *keys = views[0].buf, *group_of = views[1].buf, *answers = views[3].buf;
        const double *values = views[2].buf;
        int ok = views[1].len / 8 == count && views[3].len / 8 == count;
        for (Py_ssize_t i = 0; ok && i < count; i++) { /* checked whole before any is put */
            int g = (int)group_of[i];
            ok = g >= 0 && g < c->ngroups && answers[i] >= 0 && answers[i] < c->groups[g].nnames;
            need += ok ? c->groups[g].ninputs : 0;
        }
        if (!ok || need != nvalues) {
            PyErr_SetString(PyExc_ValueError, "choices_put: keys, group_of and answers must match, each answer "
                                              "a name of its group, and values hold each key's inputs");
        } else if (!gdb_choices_room(c, count)) {
            PyErr_NoMemory();
        } else {
            uintptr_t mask = (uintptr_t)c->entries_cap - 1;
            for (Py_ssize_t i = 0, at_value = 0; i < count; i++) {
                uintptr_t at = gdb_int_slot(keys[i], 0, c->entries_cap);
                while (c->entries[at].used && c->entries[at].key != keys[i]) at = (at + 1) & mask;
                gdb_choice_entry *e = &c->entries[at];
                if (!e->used) c->entries_used++;
                memset(e, 0, sizeof(*e));
                e->key = keys[i];
                e->group = (int)group_of[i];
                e->answer = (int)answers[i];
                memcpy(e->values, values + at_value, sizeof(double) * (size_t)c->groups[e->group].ninputs);
                at_value += c->groups[e->group].ninputs;
                e->open = e->used = 1;
            }
            c->on = 1;
            result = Py_NewRef(Py_None);
        }
    }
    for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    return result;
}
/* choices_close(mid, key): the key's calls run in Python until it is put again. */
static PyObject *gdb_fast_choices_close(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    gdb_choices *c = nargs == 2 ? gdb_choices_arg(args[0]) : NULL;
    if (!c) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "choices_close(mid, key)");
        return NULL;
    }
    long long key = PyLong_AsLongLong(args[1]);
    if (key == -1 && PyErr_Occurred()) return NULL;
    gdb_choice_entry *e = c->on ? gdb_choice_entry_of(c, key) : NULL;
    if (e) e->open = 0;
    Py_RETURN_NONE;
}
/* choices_moved(mid, key): the numbers of the key's open entry as a tuple of floats when a call with
 * other numbers was answered by its group's check since it was put or last read here (the entry
 * keeps the newest), else None. */
static PyObject *gdb_fast_choices_moved(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    gdb_choices *c = nargs == 2 ? gdb_choices_arg(args[0]) : NULL;
    if (!c) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "choices_moved(mid, key)");
        return NULL;
    }
    long long key = PyLong_AsLongLong(args[1]);
    if (key == -1 && PyErr_Occurred()) return NULL;
    gdb_choice_entry *e = c->on ? gdb_choice_entry_of(c, key) : NULL;
    if (!e || !e->open || !e->moved) Py_RETURN_NONE;
    int ninputs = c->groups[e->group].ninputs;
    PyObject *numbers = PyTuple_New(ninputs);
    if (!numbers) return NULL;
    for (int i = 0; i < ninputs; i++) {
        PyObject *number = PyFloat_FromDouble(e->values[i]);
        if (!number) {
            Py_DECREF(numbers);
            return NULL;
        }
        PyTuple_SET_ITEM(numbers, i, number);
    }
    e->moved = 0;
    return numbers;
}
/* checked_total(): how many calls a group's check answered (with other numbers) since start. */
static PyObject *gdb_fast_checked_total(PyObject *self, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(checked_total);
}
/* choices_clear(mid): every call runs in Python until the next choices_put. */
static PyObject *gdb_fast_choices_clear(PyObject *self, PyObject *arg) {
    gdb_choices *c = gdb_choices_arg(arg);
    if (!c) return NULL;
    gdb_choices_clear(c);
    Py_RETURN_NONE;
}
/* Mark method `mid` (a StringName result) as chosen: `shape` 1, it takes one Dictionary; 2, it takes
 * nothing; 0, not chosen. */
static void gdb_set_chosen_method(intptr_t mid, int shape) {
    if (!shape && mid >= chosen_methods_cap) return;
    chosen_methods = gdb_grow(chosen_methods, &chosen_methods_cap, mid, sizeof(gdb_choices));
    gdb_choices_clear(&chosen_methods[mid]);
    chosen_methods[mid].on = 0;
    chosen_methods[mid].nparams = shape == 2 ? 0 : 1;
    if (!i_variant_get_keyed) i_variant_get_keyed = (GDExtensionInterfaceVariantGetKeyed)gdb_gpa("variant_get_keyed");
}
