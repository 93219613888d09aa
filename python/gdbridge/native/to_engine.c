/* Python -> engine calls: arguments and result converted here, one crossing per call. */

/* ---- Python -> engine calls: arguments and result converted here, one crossing per call ---- */
/* gdb_to_variant_cb: to_variant_address(address, value) for the types C does not write. */

static int gdb_py_fill_dict(void *dict, PyObject *items);
static int gdb_py_fill_array(void *array, PyObject *items);

/* The other direction of gdb_seen: the lists and dicts one conversion has written, by identity,
 * each with the Variant made for it. The same Python object reached again becomes the same Array
 * or Dictionary (shared, as Python shares it), so `[[x] * 30] * 30`... nested cannot
 * unfold into an exponential tree; one still being written (a list holding itself) is refused
 * before the engine sees it. Entered by gdb_py_container_to_variant and gdb_py_fill (the root of a
 * conversion that writes into an existing container: a typed result, _gdbridge_fast.fill). */
typedef struct {
    PyObject *key; /* owned while in the table: its address cannot be reused mid-conversion */
    int done;      /* 0 while being written */
    gdb_variant value;
} gdb_made_slot;
typedef struct {
    PyObject *root; /* the outermost container: not in the table */
    gdb_made_slot *slots;
    intptr_t cap, used; /* cap 0: no table yet */
    gdb_made_slot inline_slots[16];
} gdb_made;
static _Thread_local gdb_made *gdb_made_now;

static gdb_made_slot *gdb_made_find(gdb_made *made, PyObject *key) {
    return gdb_key_slot(made->slots, sizeof(gdb_made_slot), made->cap, key);
}

/* Claim `key` (not in the table) as being written; 0 when out of memory. A Variant moves as its
 * bytes when the table grows. */
static int gdb_made_claim(gdb_made *made, PyObject *key) {
    if (!gdb_key_room((void **)&made->slots, &made->cap, made->used, sizeof(gdb_made_slot), made->inline_slots))
        return 0;
    made->used++;
    gdb_made_slot *slot = gdb_made_find(made, key);
    slot->key = Py_NewRef(key);
    slot->done = 0;
    return 1;
}

static void gdb_made_start(gdb_made *outer, PyObject *root) {
    outer->root = root;
    outer->slots = NULL;
    outer->cap = outer->used = 0;
    gdb_made_now = outer;
}

static void gdb_made_end(gdb_made *outer) {
    for (intptr_t i = 0; i < outer->cap; i++) {
        if (!outer->slots[i].key) continue;
        if (outer->slots[i].done) i_variant_destroy(&outer->slots[i].value);
        Py_DECREF(outer->slots[i].key);
    }
    if (outer->slots != outer->inline_slots) free(outer->slots);
    gdb_made_now = NULL;
}

static int gdb_self_containing(PyObject *value) {
    PyErr_Format(PyExc_RecursionError, "a %.50s that contains itself cannot be converted to %s", Py_TYPE(value)->tp_name,
                 PyDict_Check(value) ? "a Dictionary" : "an Array");
    return 0;
}

/* The dict, list or tuple `items` into the existing Dictionary or Array at `target` (an internal
 * pointer), as the root of its own conversion (a typed result, _gdbridge_fast.fill from Python,
 * which a conversion under way calls with its own table set aside); not inlined: its table stays
 * off the fast call path's stack frame. */
static __attribute__((noinline)) int gdb_py_fill(void *target, int dict, PyObject *items) {
    gdb_made outer, *inside = gdb_made_now;
    gdb_made_start(&outer, items);
    int ok = dict ? gdb_py_fill_dict(target, items) : gdb_py_fill_array(target, items);
    if (!ok && dict) {
        /* Empty, not half filled: what a failed result leaves is the type's default. */
        g_destructor[GDEXTENSION_VARIANT_TYPE_DICTIONARY](target);
        g_default_constructor[GDEXTENSION_VARIANT_TYPE_DICTIONARY](target, NULL);
    } else if (!ok) {
        gdb_seq_resize(GDEXTENSION_VARIANT_TYPE_ARRAY, target, 0);
    }
    gdb_made_end(&outer);
    gdb_made_now = inside;
    return ok;
}

/* A new Dictionary or Array in uninitialized `v` holding `value`'s items; Nil on failure. */
static int gdb_py_container_new(void *v, PyObject *value) {
    int dict = PyDict_CheckExact(value);
    void *inner = gdb_vnew(v, dict ? GDEXTENSION_VARIANT_TYPE_DICTIONARY : GDEXTENSION_VARIANT_TYPE_ARRAY);
    if (dict ? gdb_py_fill_dict(inner, value) : gdb_py_fill_array(inner, value)) return 1;
    i_variant_destroy(v);
    gdb_vnil(v);
    return 0;
}

/* The outermost container of a conversion owns the table (kept out of the nested frames' stack). */
static __attribute__((noinline)) int gdb_py_container_root(void *v, PyObject *value) {
    gdb_made outer;
    gdb_made_start(&outer, value);
    int ok = gdb_py_container_new(v, value);
    gdb_made_end(&outer);
    return ok;
}

/* A dict, list or tuple as a new Dictionary or Array in uninitialized `v`: once per conversion. */
static int gdb_py_container_to_variant(void *v, PyObject *value) {
    /* Python's recursion limit bounds the nesting depth. */
    if (Py_EnterRecursiveCall(" while converting to a Variant")) { gdb_vnil(v); return 0; }
    gdb_made *made = gdb_made_now;
    int ok = 0;
    if (!made) {
        ok = gdb_py_container_root(v, value);
    } else if (value == made->root) {
        gdb_self_containing(value);
        gdb_vnil(v);
    } else if (PyTuple_CheckExact(value)) {
        /* A tuple is a value: each place gets its own Array, though Python shares equal constant
         * tuples and the empty one (only a list or dict can hold a tuple holding it: refused there). */
        ok = gdb_py_container_new(v, value);
    } else {
        /* The table is set up at the first nested container: a flat one (the common argument)
         * costs nothing more. */
        if (!made->cap) {
            made->cap = (intptr_t)(sizeof(made->inline_slots) / sizeof(made->inline_slots[0]));
            made->slots = memset(made->inline_slots, 0, sizeof(made->inline_slots));
        }
        gdb_made_slot *slot = gdb_made_find(made, value);
        if (slot->key && !slot->done) {
            gdb_self_containing(value);
            gdb_vnil(v);
        } else if (slot->key) {
            gdb_vcopy(v, &slot->value); /* the same Array or Dictionary again */
            ok = 1;
        } else if (!gdb_made_claim(made, value)) {
            PyErr_NoMemory();
            gdb_vnil(v);
        } else if ((ok = gdb_py_container_new(v, value))) {
            slot = gdb_made_find(made, value); /* found again: the table may have grown */
            gdb_vcopy(&slot->value, v);
            slot->done = 1;
        }
    }
    Py_LeaveRecursiveCall();
    return ok;
}

/* The gdb_engine_texts slot for `value` as `type` when it may be cached there (found or to
 * fill), else NULL: an exact interned str as a String, a gdbridge StringName as a StringName. */
static gdb_text_slot *gdb_str_slot(PyObject *value, int type) {
    PyTypeObject *kind = Py_TYPE(value);
    if (type == GDEXTENSION_VARIANT_TYPE_STRING ? kind != &PyUnicode_Type || !PyUnicode_CHECK_INTERNED(value)
        : type != GDEXTENSION_VARIANT_TYPE_STRING_NAME || (PyObject *)kind != gdb_text_cls[type])
        return NULL;
    if (PyUnicode_GET_LENGTH(value) > GDB_TEXT_MAX) return NULL;
    return gdb_text_slot_of(gdb_engine_texts, value);
}

/* The engine text cached for the str or StringName `value`, or NULL (not cached, or another type). */
static const gdb_variant *gdb_str_cached(PyObject *value) {
    PyObject *kind = (PyObject *)Py_TYPE(value);
    int type = kind == (PyObject *)&PyUnicode_Type ? GDEXTENSION_VARIANT_TYPE_STRING
               : kind == gdb_text_cls[GDEXTENSION_VARIANT_TYPE_STRING_NAME] ? GDEXTENSION_VARIANT_TYPE_STRING_NAME
                                                                             : 0;
    gdb_text_slot *slot = type ? gdb_str_slot(value, type) : NULL;
    return slot && gdb_text_found(slot, value, type) ? &slot->held : NULL;
}

/* The str `value` as a new Variant of `type` (String, StringName, NodePath) in uninitialized `v`. */
static int gdb_str_to_variant(void *v, PyObject *value, int type) {
    gdb_text_slot *slot = gdb_str_slot(value, type);
    if (slot && gdb_text_found(slot, value, type)) {
        gdb_vcopy(v, &slot->held);
        return 1;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(value, &n);
    if (!utf8) { gdb_vnil(v); return 0; }
    gdb_vtext(v, type, utf8, n);
    if (slot) gdb_text_keep(slot, value, type, g_internal_ptr[type](v), value);
    return 1;
}

/* The str `value` into the initialized raw String/StringName/NodePath `raw` (a ptrcall result). */
static int gdb_str_to_raw(void *raw, PyObject *value, int type) {
    gdb_text_slot *slot = gdb_str_slot(value, type);
    if (slot && gdb_text_found(slot, value, type)) {
        g_destructor[type](raw);
        g_to_type[type](raw, &slot->held);
        return 1;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(value, &n);
    if (!utf8) return 0;
    g_destructor[type](raw);
    gdb_text_new(raw, type, utf8, n);
    if (slot) gdb_text_keep(slot, value, type, raw, value);
    return 1;
}

/* forget_texts(): empty the text caches (the engine's Strings go before it shuts down). */
static void gdb_fast_frame_forget(void); /* (fast_frame.c) */
static PyObject *gdb_fast_forget_texts(PyObject *self, PyObject *unused) {
    gdb_texts_open = 0;
    gdb_queued_names_forget(); /* the queued methods' names too */
    gdb_fast_frame_forget();   /* and the signals an update armed with */
    for (size_t i = 0; i < GDB_TEXT_SLOTS; i++) {
        gdb_text_drop(&gdb_py_texts[i]);
        gdb_text_drop(&gdb_engine_texts[i]);
    }
    Py_RETURN_NONE;
}

/* Write `value` as a new Variant into uninitialized `v`: None, bool, int, float, str, StringName,
 * NodePath, dict, list and tuple here (containers element by element, without Python calls);
 * anything else through to_variant_address. Returns 0 with a Python exception set and `v` Nil. */
static int gdb_py_to_variant(void *v, PyObject *value) {
    if (value == Py_None) { gdb_vnil(v); return 1; }
    if (PyBool_Check(value)) { gdb_vbool(v, value == Py_True); return 1; }
    PyTypeObject *kind = Py_TYPE(value);
    if (kind == &PyLong_Type) {
        long long x = PyLong_AsLongLong(value);
        if (x == -1 && PyErr_Occurred()) { gdb_vnil(v); return 0; }
        gdb_vint(v, x);
        return 1;
    }
    if (kind == &PyFloat_Type) { gdb_vfloat(v, PyFloat_AS_DOUBLE(value)); return 1; }
    int text = kind == &PyUnicode_Type ? GDEXTENSION_VARIANT_TYPE_STRING
               : (PyObject *)kind == gdb_text_cls[GDEXTENSION_VARIANT_TYPE_STRING_NAME]
                   ? GDEXTENSION_VARIANT_TYPE_STRING_NAME
               : (PyObject *)kind == gdb_text_cls[GDEXTENSION_VARIANT_TYPE_NODE_PATH]
                   ? GDEXTENSION_VARIANT_TYPE_NODE_PATH
                   : 0;
    if (text) return gdb_str_to_variant(v, value, text);
    if (kind == &PyDict_Type || kind == &PyList_Type || kind == &PyTuple_Type) return gdb_py_container_to_variant(v, value);
    int vector = (PyObject *)kind == gdb_vector_cls[GDEXTENSION_VARIANT_TYPE_VECTOR2]   ? GDEXTENSION_VARIANT_TYPE_VECTOR2
                 : (PyObject *)kind == gdb_vector_cls[GDEXTENSION_VARIANT_TYPE_VECTOR3] ? GDEXTENSION_VARIANT_TYPE_VECTOR3
                                                                                        : 0;
    if (vector) {
        float raw[4];
        if (!gdb_vector_from_py(vector, value, raw)) { gdb_vnil(v); return 0; }
        g_from_type[vector](v, raw);
        return 1;
    }
    gdb_vnil(v);
    /* Python code converting on its own (a list subclass, a typed container) starts its own table,
     * with its own root: a loop through it is still refused there. */
    gdb_made *made = gdb_made_now;
    gdb_made_now = NULL;
    PyObject *r = PyObject_CallFunction(gdb_to_variant_cb, "nO", (Py_ssize_t)(intptr_t)v, value);
    gdb_made_now = made;
    Py_XDECREF(r);
    return r != NULL;
}

/* Entries of the dict `items` into the Dictionary `dict` (by internal pointer), in order. */
static int gdb_py_fill_dict(void *dict, PyObject *items) {
    PyObject *k, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(items, &pos, &k, &value)) {
        gdb_variant key;
        Py_INCREF(k);
        Py_INCREF(value);
        /* A cached key is looked up as it is in the cache: the Dictionary copies it, and nothing
         * runs between (the value is converted after), so the entry cannot be replaced meanwhile. */
        const gdb_variant *cached = gdb_str_cached(k);
        int ok = cached || gdb_py_to_variant(&key, k);
        if (ok) {
            void *slot = i_dictionary_index(dict, cached ? cached : &key);
            i_variant_destroy(slot);
            ok = gdb_py_to_variant(slot, value);
        }
        if (!cached) i_variant_destroy(&key);
        Py_DECREF(k);
        Py_DECREF(value);
        if (!ok) return 0;
    }
    return 1;
}

/* Items of the list or tuple `items` into the Array `array` (by internal pointer), resized to fit. */
static int gdb_py_fill_array(void *array, PyObject *items) {
    PyObject *seq = PySequence_Fast(items, "an Array needs a sequence");
    if (!seq) return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    gdb_seq_resize(GDEXTENSION_VARIANT_TYPE_ARRAY, array, n);
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < n && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(item);
        void *slot = i_array_index(array, i);
        i_variant_destroy(slot);
        ok = gdb_py_to_variant(slot, item);
        Py_DECREF(item);
    }
    Py_DECREF(seq);
    return ok;
}

/* Call method bind `mb` on `obj` with the n (<= 16) Python values `items` as Variant arguments,
 * the GIL released around the engine call itself. Returns 0 with a Python exception set (an
 * argument that does not convert; nothing was called), else 1 with `*ret` holding the result (the
 * caller destroys it) and `*err` the engine's call error. */
static int gdb_bind_call(const void *mb, void *obj, PyObject *const *items, Py_ssize_t n, gdb_variant *ret,
                         GDExtensionCallError *err) {
    gdb_variant vars[16];
    const void *ptrs[16];
    Py_ssize_t made = 0;
    for (; made < n; made++) {
        if (!gdb_py_to_variant(&vars[made], items[made])) break;
        ptrs[made] = &vars[made];
    }
    if (made == n) {
        *err = (GDExtensionCallError){GDEXTENSION_CALL_OK, 0, 0};
        Py_BEGIN_ALLOW_THREADS
        i_method_bind_call(mb, obj, (const GDExtensionConstVariantPtr *)ptrs, n, ret, err);
        Py_END_ALLOW_THREADS
        gdb_take_queued_held();
    }
    for (Py_ssize_t i = 0; i < made; i++) i_variant_destroy(&vars[i]);
    return made == n;
}

/* Call method bind `mb` on `obj` with the tuple `args`; append the result to the list `out`.
 * Returns 0, the engine's call error (error * 1000 + argument), or -2 with a Python exception set
 * (re-raised by the caller). The GIL is released during the engine call itself. */
static int gdb_call_py(const void *mb, void *obj, intptr_t args_addr, intptr_t out_addr) {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *args = (PyObject *)args_addr;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int result = 0;
    if (n > 16) { PyGILState_Release(gil); return -1; }
    gdb_variant ret;
    GDExtensionCallError err;
    if (!gdb_bind_call(mb, obj, &PyTuple_GET_ITEM(args, 0), n, &ret, &err)) {
        result = -2;
    } else {
        if (err.error != GDEXTENSION_CALL_OK) {
            result = (int)err.error * 1000 + err.argument;
        } else {
            PyObject *r = gdb_variant_to_py(&ret);
            if (!r || PyList_Append((PyObject *)out_addr, r) < 0) result = -2;
            Py_XDECREF(r);
        }
        i_variant_destroy(&ret);
    }
    if (result == -2) {
        /* Hand the exception to the caller through the out list (cffi clears pending errors). */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (value) {
            if (tb) PyException_SetTraceback(value, tb);
            PyList_Append((PyObject *)out_addr, value);
        }
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    PyGILState_Release(gil);
    return result;
}
