/* Engine values as Python objects: the text caches, Arrays and Dictionaries (by identity), raw
 * values of a known type. */

/* A pointer's slot in a power-of-two table of `cap` slots (Fibonacci hashing: allocations'
 * addresses differ mostly in their middle bits). */
static uintptr_t gdb_pointer_slot(const void *key, intptr_t cap) {
    uintptr_t i = (uintptr_t)key * (uintptr_t)0x9E3779B97F4A7C15u;
    return (i ^ (i >> 29)) & ((uintptr_t)cap - 1);
}

/* ---- the text caches: engine text <-> Python str, by identity ----
 * Two fixed tables of 256 slots, one entry a slot (a new entry replaces the old one), for texts up
 * to 64 code points. An entry keeps what its key points to alive and unchanged: an engine copy of
 * the text (`held`) and a reference to the Python object, so neither address can be freed and
 * given to another text while the entry is cached.
 * - engine -> Python (gdb_py_texts): a String by its characters (a String shares its copy-on-write
 *   characters with its copies: Dictionary keys, constants in scripts; a shared buffer is copied
 *   before any write, and `held` shares it, so the characters at that address cannot change), a
 *   StringName by its one pointer to the engine's entry for its name. A hit is the str (hash
 *   already computed: the dict it goes into, and the lookups in it, are fast too) or the Python
 *   StringName, with no decoding and no Python constructor call.
 * - Python -> engine (gdb_engine_texts): an interned str (the keys and short constants of Python
 *   code: dict literals, names) as its String, a StringName object (a behavior's name kept in a
 *   table) as its StringName, by the object's identity (str and StringName are immutable). A
 *   returned `{"entity": ...}` then copies a String (a reference count) per key instead of
 *   decoding UTF-8 into a new one, and a StringName result skips the engine's name table.
 * Used with the GIL; emptied at shutdown (forget_texts), after which nothing more is kept (no
 * engine String may outlive the engine's teardown). */
#define GDB_TEXT_SLOTS 256
#define GDB_TEXT_MAX 64
typedef struct {
    const void *key;  /* NULL: empty slot */
    int type;         /* STRING or STRING_NAME: the engine type of `held` */
    gdb_variant held; /* the engine text */
    PyObject *text;   /* owned: the str or StringName */
} gdb_text_slot;
static gdb_text_slot gdb_py_texts[GDB_TEXT_SLOTS];
static gdb_text_slot gdb_engine_texts[GDB_TEXT_SLOTS];
static int gdb_texts_open; /* set when _gdbridge_fast is installed, cleared by forget_texts */

static gdb_text_slot *gdb_text_slot_of(gdb_text_slot *table, const void *key) {
    return &table[gdb_pointer_slot(key, GDB_TEXT_SLOTS)];
}
static int gdb_text_found(const gdb_text_slot *slot, const void *key, int type) {
    return slot->key == key && slot->type == type;
}
static void gdb_text_drop(gdb_text_slot *slot) {
    if (!slot->key) return;
    slot->key = NULL;
    gdb_vdestroy(&slot->held);
    Py_CLEAR(slot->text);
}
/* `text` for `key` into `slot`, holding a copy of `raw` (the engine text, of `type`). */
static void gdb_text_keep(gdb_text_slot *slot, const void *key, int type, const void *raw, PyObject *text) {
    if (!gdb_texts_open) return;
    Py_INCREF(text);
    gdb_text_drop(slot);
    g_from_type[type](&slot->held, (void *)raw);
    slot->key = key;
    slot->type = type;
    slot->text = text;
}

/* The `n` characters of String `s` (at `chars`) as a new str: straight from UTF-32 (no UTF-8 round
 * trip), or through UTF-8 with replacement when they hold code points str does not take as they
 * are (surrogates, beyond U+10FFFF). */
static PyObject *gdb_string_decode(const void *s, const uint32_t *chars, int64_t n) {
    int64_t i = 0;
    while (i < n && (chars[i] < 0xD800 || (chars[i] >= 0xE000 && chars[i] <= 0x10FFFF))) i++;
    if (i == n) return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, chars, (Py_ssize_t)n);
    char stack[512];
    char *buf = stack;
    int64_t len = gdb_string_utf8(s, stack, sizeof(stack));
    if (len > (int64_t)sizeof(stack)) {
        if (!(buf = malloc((size_t)len))) return PyErr_NoMemory();
        gdb_string_utf8(s, buf, len);
    }
    PyObject *text = PyUnicode_DecodeUTF8(buf, len, "replace");
    if (buf != stack) free(buf);
    return text;
}

/* A String as str, from the cache when its characters were read before. An empty String has no
 * characters (NULL) or a length of 0. */
static PyObject *gdb_string_to_py(const void *s) {
    const uint32_t *chars = (const uint32_t *)i_string_index_const((GDExtensionConstStringPtr)s, 0);
    if (!chars) return PyUnicode_New(0, 0);
    gdb_text_slot *slot = gdb_text_slot_of(gdb_py_texts, chars);
    if (gdb_text_found(slot, chars, GDEXTENSION_VARIANT_TYPE_STRING)) return Py_NewRef(slot->text);
    int64_t n = i_string_to_utf32((GDExtensionConstStringPtr)s, NULL, 0);
    if (n <= 0) return PyUnicode_New(0, 0);
    PyObject *text = gdb_string_decode(s, chars, n);
    if (text && n <= GDB_TEXT_MAX) gdb_text_keep(slot, chars, GDEXTENSION_VARIANT_TYPE_STRING, s, text);
    return text;
}

/* A StringName or NodePath as a gdbridge StringName or NodePath, through a temporary String. */
static PyObject *gdb_name_to_py(const void *value, int type) {
    uint64_t s = 0;
    GDExtensionConstTypePtr args[1] = {value};
    g_string_from[type](&s, args);
    const uint32_t *chars = (const uint32_t *)i_string_index_const((GDExtensionConstStringPtr)&s, 0);
    int64_t n = chars ? i_string_to_utf32((GDExtensionConstStringPtr)&s, NULL, 0) : 0;
    PyObject *text = n > 0 ? gdb_string_decode(&s, chars, n) : PyUnicode_New(0, 0);
    g_destructor[GDEXTENSION_VARIANT_TYPE_STRING](&s);
    if (!text || !gdb_text_cls[type]) return text;
    PyObject *wrapped = PyObject_CallOneArg(gdb_text_cls[type], text);
    Py_DECREF(text);
    return wrapped;
}

/* A String, StringName or NodePath (raw) as str, StringName or NodePath. */
static PyObject *gdb_text_to_py(const void *value, int type) {
    if (type == GDEXTENSION_VARIANT_TYPE_STRING) return gdb_string_to_py(value);
    if (type != GDEXTENSION_VARIANT_TYPE_STRING_NAME) return gdb_name_to_py(value, type);
    const void *data = *(const void *const *)value; /* NULL: the empty StringName */
    gdb_text_slot *slot = data ? gdb_text_slot_of(gdb_py_texts, data) : NULL;
    if (slot && gdb_text_found(slot, data, type)) return Py_NewRef(slot->text);
    PyObject *text = gdb_name_to_py(value, type);
    if (slot && text && Py_TYPE(text) == (PyTypeObject *)gdb_text_cls[type] && PyUnicode_GET_LENGTH(text) <= GDB_TEXT_MAX)
        gdb_text_keep(slot, data, type, value, text);
    return text;
}

/* The containers one conversion has read, by the engine's shared data pointer (an Array or a
 * Dictionary is one pointer to data its copies share). A container reached again through another
 * path becomes the same Python object: shared references stay shared, and a small Array of shared
 * Arrays cannot unfold into an exponential tree. A NULL value marks a container still being read,
 * so one holding itself is refused. Per thread: a callback into Python mid-conversion can let
 * another thread convert. */
typedef struct {
    const void *key;
    PyObject *value; /* owned */
} gdb_seen_slot;
typedef struct {
    const void *root; /* the outermost container: not in the table */
    gdb_seen_slot *slots;
    intptr_t cap, used; /* cap 0: no table yet */
    gdb_seen_slot inline_slots[16];
} gdb_seen;
static _Thread_local gdb_seen *gdb_seen_now;

/* The open-addressing table both identity tables use (gdb_seen, gdb_made): slots of `stride`
 * bytes whose first member is the key pointer (NULL: free), `cap` a power of two. The slot of
 * `key`, or the free slot where it goes. */
static void *gdb_key_slot(void *slots, size_t stride, intptr_t cap, const void *key) {
    uintptr_t mask = (uintptr_t)cap - 1;
    for (uintptr_t i = gdb_pointer_slot(key, cap);; i = (i + 1) & mask) {
        const void **at = (const void **)((char *)slots + i * stride);
        if (*at == key || !*at) return at;
    }
}

/* Room for one more key: the table doubled (slots moved as their bytes) when it would be more
 * than half full; 0 when out of memory. `inline_slots`: the first table, never freed. */
static int gdb_key_room(void **slots, intptr_t *cap, intptr_t used, size_t stride, const void *inline_slots) {
    if ((used + 1) * 2 <= *cap) return 1;
    intptr_t old_cap = *cap, new_cap = old_cap * 2;
    char *old = *slots, *grown = calloc((size_t)new_cap, stride);
    if (!grown) return 0;
    for (intptr_t i = 0; i < old_cap; i++)
        if (*(void **)(old + i * stride))
            memcpy(gdb_key_slot(grown, stride, new_cap, *(void **)(old + i * stride)), old + i * stride, stride);
    if (old != inline_slots) free(old);
    *slots = grown;
    *cap = new_cap;
    return 1;
}

static gdb_seen_slot *gdb_seen_find(gdb_seen *seen, const void *key) {
    return gdb_key_slot(seen->slots, sizeof(gdb_seen_slot), seen->cap, key);
}

/* The empty slot for `key`, growing the table to stay at most half full; NULL when out of memory. */
static gdb_seen_slot *gdb_seen_claim(gdb_seen *seen, const void *key) {
    if (!gdb_key_room((void **)&seen->slots, &seen->cap, seen->used, sizeof(gdb_seen_slot), seen->inline_slots))
        return NULL;
    seen->used++;
    gdb_seen_slot *slot = gdb_seen_find(seen, key);
    slot->key = key;
    slot->value = NULL;
    return slot;
}

static PyObject *gdb_array_read(void *array) {
    int64_t n = gdb_seq_size(GDEXTENSION_VARIANT_TYPE_ARRAY, array);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list && i < n; i++) {
        PyObject *item = gdb_variant_to_py(i_array_index(array, i));
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *gdb_dict_read(void *dict) {
    uint64_t keys = 0, values = 0;
    g_default_constructor[GDEXTENSION_VARIANT_TYPE_ARRAY](&keys, NULL);
    g_default_constructor[GDEXTENSION_VARIANT_TYPE_ARRAY](&values, NULL);
    g_dict_keys(dict, NULL, &keys, 0);
    g_dict_values(dict, NULL, &values, 0);
    int64_t n = gdb_seq_size(GDEXTENSION_VARIANT_TYPE_ARRAY, &keys);
    PyObject *out = PyDict_New();
    for (int64_t i = 0; out && i < n; i++) {
        PyObject *k = gdb_variant_to_py(i_array_index(&keys, i));
        PyObject *v = k ? gdb_variant_to_py(i_array_index(&values, i)) : NULL;
        if (!v || PyDict_SetItem(out, k, v) < 0) Py_CLEAR(out);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    g_destructor[GDEXTENSION_VARIANT_TYPE_ARRAY](&keys);
    g_destructor[GDEXTENSION_VARIANT_TYPE_ARRAY](&values);
    return out;
}

/* An Array or Dictionary (raw, by its internal pointer) as a list or dict. The outermost one owns
 * the table of containers already read; Python's recursion limit still bounds the nesting depth. */
static PyObject *gdb_container_to_py(int type, void *p) {
    int array = type == GDEXTENSION_VARIANT_TYPE_ARRAY;
    if (Py_EnterRecursiveCall(array ? " while converting an Array" : " while converting a Dictionary")) return NULL;
    const void *key = *(void *const *)p;
    gdb_seen outer, *seen = gdb_seen_now;
    PyObject *out = NULL;
    gdb_seen_slot *slot = NULL;
    if (!seen) {
        /* The table is set up at the first nested container: a flat one (the common argument)
         * costs nothing more. The outermost container is still being read until the end. */
        outer.slots = NULL;
        outer.cap = outer.used = 0;
        outer.root = key;
        seen = gdb_seen_now = &outer;
    } else if (key) {
        if (!seen->cap) {
            seen->cap = (intptr_t)(sizeof(seen->inline_slots) / sizeof(seen->inline_slots[0]));
            seen->slots = memset(seen->inline_slots, 0, sizeof(seen->inline_slots));
        }
        slot = gdb_seen_find(seen, key);
    }
    if (key && seen != &outer && (key == seen->root || (slot && slot->key))) {
        if (key != seen->root && slot->value)
            out = Py_NewRef(slot->value);
        else
            PyErr_SetString(PyExc_RecursionError, array ? "an Array that contains itself cannot be converted to Python"
                                                        : "a Dictionary that contains itself cannot be converted to Python");
    } else if (slot && !gdb_seen_claim(seen, key)) {
        PyErr_NoMemory();
    } else {
        out = array ? gdb_array_read(p) : gdb_dict_read(p);
        if (out && slot) gdb_seen_find(seen, key)->value = Py_NewRef(out); /* found again: the table may have grown */
    }
    if (seen == &outer) {
        for (intptr_t i = 0; i < outer.cap; i++) Py_XDECREF(outer.slots[i].value);
        if (outer.slots != outer.inline_slots) free(outer.slots);
        gdb_seen_now = NULL;
    }
    Py_LeaveRecursiveCall();
    return out;
}

/* A call into Python from inside a conversion starts its own: its containers may be freed and
 * their memory reused before the outer conversion ends. */
static PyObject *gdb_convert_in_python(PyObject *func, const char *format, int type, intptr_t address) {
    gdb_seen *seen = gdb_seen_now;
    gdb_seen_now = NULL;
    PyObject *out = type < 0 ? PyObject_CallFunction(func, format, (Py_ssize_t)address)
                             : PyObject_CallFunction(func, format, type, (Py_ssize_t)address);
    gdb_seen_now = seen;
    return out;
}

static const int gdb_packed_item[GDB_TYPES] = {
    [GDEXTENSION_VARIANT_TYPE_PACKED_BYTE_ARRAY] = 1,    [GDEXTENSION_VARIANT_TYPE_PACKED_INT32_ARRAY] = 4,
    [GDEXTENSION_VARIANT_TYPE_PACKED_INT64_ARRAY] = 8,   [GDEXTENSION_VARIANT_TYPE_PACKED_FLOAT32_ARRAY] = 4,
    [GDEXTENSION_VARIANT_TYPE_PACKED_FLOAT64_ARRAY] = 8, [GDEXTENSION_VARIANT_TYPE_PACKED_VECTOR2_ARRAY] = 8,
    [GDEXTENSION_VARIANT_TYPE_PACKED_VECTOR3_ARRAY] = 12, [GDEXTENSION_VARIANT_TYPE_PACKED_COLOR_ARRAY] = 16,
    [GDEXTENSION_VARIANT_TYPE_PACKED_VECTOR4_ARRAY] = 16,
};

/* A raw value of a known type (a ptrcall argument) as a new Python reference, or NULL on error. */
static PyObject *gdb_raw_to_py(int type, const void *p) {
    static char empty[1];
    switch (type) {
    case GDEXTENSION_VARIANT_TYPE_NIL: Py_RETURN_NONE;
    case GDEXTENSION_VARIANT_TYPE_BOOL: return PyBool_FromLong(*(const uint8_t *)p);
    case GDEXTENSION_VARIANT_TYPE_INT: return PyLong_FromLongLong(*(const int64_t *)p);
    case GDEXTENSION_VARIANT_TYPE_FLOAT: return PyFloat_FromDouble(*(const double *)p);
    case GDEXTENSION_VARIANT_TYPE_STRING:
    case GDEXTENSION_VARIANT_TYPE_STRING_NAME:
    case GDEXTENSION_VARIANT_TYPE_NODE_PATH: return gdb_text_to_py(p, type);
    case GDEXTENSION_VARIANT_TYPE_ARRAY:
    case GDEXTENSION_VARIANT_TYPE_DICTIONARY: return gdb_container_to_py(type, (void *)p);
    default: break;
    }
    if (gdb_vector_width(type) && gdb_vector_cls[type]) return gdb_vector_to_py(type, (const float *)p);
    if (type > 0 && type < GDB_TYPES && gdb_packed_item[type]) {
        int64_t n = gdb_seq_size(type, p);
        char *data = n ? gdb_packed_data(type, (void *)p) : empty;
        if (gdb_np_empty && gdb_np_dtype[type]) {
            /* numpy.empty(n, dtype) filled with one copy: an owned, writable array. */
            PyObject *size = PyLong_FromLongLong(n);
            if (!size) return NULL;
            PyObject *argv[2] = {size, gdb_np_dtype[type]};
            PyObject *array = PyObject_Vectorcall(gdb_np_empty, argv, 2, NULL);
            Py_DECREF(size);
            if (!array || !n) return array;
            Py_buffer buffer;
            if (PyObject_GetBuffer(array, &buffer, PyBUF_CONTIG) < 0) {
                Py_DECREF(array);
                return NULL;
            }
            memcpy(buffer.buf, data, (size_t)(n * gdb_packed_item[type]));
            PyBuffer_Release(&buffer);
            return array;
        }
        PyObject *view = PyMemoryView_FromMemory(data, (Py_ssize_t)(n * gdb_packed_item[type]), PyBUF_READ);
        if (!view) return NULL;
        PyObject *vt = PyLong_FromLong(type);
        PyObject *out = PyObject_CallFunctionObjArgs(gdb_packed_cb, vt, view, NULL);
        Py_DECREF(vt);
        Py_DECREF(view);
        return out;
    }
    return gdb_convert_in_python(gdb_read_raw_cb, "in", type, (intptr_t)p);
}

static PyObject *gdb_variant_to_py(const void *v) {
    int type = gdb_vtype(v);
    switch (type) {
    case GDEXTENSION_VARIANT_TYPE_NIL: Py_RETURN_NONE;
    case GDEXTENSION_VARIANT_TYPE_BOOL: return PyBool_FromLong(gdb_as_bool(v));
    case GDEXTENSION_VARIANT_TYPE_INT: return PyLong_FromLongLong(gdb_as_int(v));
    case GDEXTENSION_VARIANT_TYPE_FLOAT: return PyFloat_FromDouble(gdb_as_float(v));
    case GDEXTENSION_VARIANT_TYPE_STRING:
    case GDEXTENSION_VARIANT_TYPE_STRING_NAME:
    case GDEXTENSION_VARIANT_TYPE_NODE_PATH:
    case GDEXTENSION_VARIANT_TYPE_ARRAY:
    case GDEXTENSION_VARIANT_TYPE_DICTIONARY: return gdb_raw_to_py(type, g_internal_ptr[type]((void *)v));
    default: break;
    }
    if (type > 0 && type < GDB_TYPES && gdb_packed_item[type])
        return gdb_raw_to_py(type, g_internal_ptr[type]((void *)v));
    if (gdb_vector_width(type) && gdb_vector_cls[type]) {
        float raw[4];
        gdb_as_raw(v, type, raw);
        return gdb_vector_to_py(type, raw);
    }
    return gdb_convert_in_python(gdb_read_var_cb, "n", -1, (intptr_t)v);
}

static int gdb_is_scalar(int type) {
    return type == GDEXTENSION_VARIANT_TYPE_INT || type == GDEXTENSION_VARIANT_TYPE_FLOAT ||
           type == GDEXTENSION_VARIANT_TYPE_BOOL;
}
