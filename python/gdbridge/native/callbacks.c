/* The Python side the C layer calls: the `extern "Python"` callbacks (gdbridge._runtime),
 * the fast-path registry of methods and virtuals, Vector2/Vector3, error reporting and the
 * RefCounted objects that arrived during a callback. */

/* ---- Python callbacks (extern "Python", defined in gdbridge._runtime) ---- */
static void gdb_py_initialize(int level);
static void gdb_py_deinitialize(int level);
static void *gdb_py_create(intptr_t cls, int notify);
static void gdb_py_free(intptr_t cls, intptr_t inst);
static intptr_t gdb_py_recreate(intptr_t cls, void *obj);
static intptr_t gdb_py_get_virtual(intptr_t cls, const void *name);
static void gdb_py_virtual(intptr_t inst, intptr_t fid, const void *const *args, void *ret);
static void gdb_py_virtual0(intptr_t inst, intptr_t fid);
static void gdb_py_virtual_f(intptr_t inst, intptr_t fid, double x);
static void gdb_py_notification(intptr_t inst, int what, int reversed);
static void gdb_py_call(intptr_t mid, intptr_t inst, const void *const *args, int64_t n, void *ret, GDExtensionCallError *err);
static void gdb_py_ptrcall(intptr_t mid, intptr_t inst, const void *const *args, void *ret);
static int gdb_py_validate_property(intptr_t inst, GDExtensionPropertyInfo *info);
static void gdb_py_to_string(intptr_t inst, GDExtensionBool *valid, void *out);
static void gdb_py_reference(intptr_t inst, int up);
static void gdb_py_callable_call(intptr_t id, const void *const *args, int64_t n, void *ret, GDExtensionCallError *err);
static int gdb_py_property(intptr_t inst, int op, const void *name, void *value);
static const GDExtensionPropertyInfo *gdb_py_property_list(intptr_t inst, uint32_t *count);
static void gdb_py_free_property_list(intptr_t inst, const GDExtensionPropertyInfo *list);
static void gdb_py_callable_free(intptr_t id);
static int64_t gdb_py_callable_info(intptr_t id, int what, intptr_t other);
static void gdb_py_callable_to_string(intptr_t id, GDExtensionBool *valid, void *out);

/* ---- fast paths: methods and the common virtuals, straight through the C API ----
 * The instance pointer the engine hands back is the address of the Python object (kept alive by
 * gdbridge.objects.instances), so these box the arguments in C (scalars, strings, Arrays,
 * Dictionaries, numeric packed arrays; anything else through a Python reader) and call the
 * Python function with vectorcall, skipping cffi's generic argument handling. */
#define GDB_ANY (-1) /* a Variant argument */
typedef struct {
    PyObject *func;   /* borrowed: gdbridge.classdb keeps it alive */
    PyObject *writer; /* borrowed; writer(address, value) for returns that are not scalars */
    int nargs;
    int types[8];     /* variant type of each argument, or GDB_ANY */
    int ret;          /* variant type of the result, GDB_ANY, or -2 for none */
    int is_static;
} gdb_fast_method;

static gdb_fast_method *fast_methods;
static intptr_t fast_methods_cap;
static PyObject **fast_virtuals;
static intptr_t fast_virtuals_cap;
static PyObject *gdb_report_cb;     /* report(type, value, traceback) */
static PyObject *gdb_read_raw_cb;   /* read_raw(vtype, address) for the types C does not box */
static PyObject *gdb_read_var_cb;   /* read_variant(address) */
static PyObject *gdb_packed_cb;     /* packed(vtype, memoryview) -> numpy array */
static PyObject *gdb_text_cls[GDB_TYPES]; /* StringName, NodePath */
static GDExtensionPtrBuiltInMethod g_dict_keys, g_dict_values;
static PyObject *gdb_np_empty;                /* numpy.empty */
static PyObject *gdb_np_dtype[GDB_TYPES];     /* dtype of the one-number-per-item packed arrays */

/* numpy.empty and the dtype of a packed type whose items are single numbers (borrowed: kept alive
 * by gdbridge._variant); those arrays are then made here, without the Python packed callback. */
static void gdb_set_numpy(intptr_t empty, int type, intptr_t dtype) {
    gdb_np_empty = (PyObject *)empty;
    if (type > 0 && type < GDB_TYPES) gdb_np_dtype[type] = (PyObject *)dtype;
}

/* gdbridge.types.Vector2 / Vector3 (borrowed: module-level classes): those values are made and
 * read here, without the Python conversion callbacks (a Vector2 read cost five times a float's). */
static PyObject *gdb_vector_cls[GDB_TYPES];
static PyObject *gdb_axis_names[3];

static int gdb_vector_width(int type) {
    return type == GDEXTENSION_VARIANT_TYPE_VECTOR2 ? 2 : type == GDEXTENSION_VARIANT_TYPE_VECTOR3 ? 3 : 0;
}

static void gdb_set_vector_class(int type, intptr_t cls) {
    if (!gdb_vector_width(type)) return;
    if (!gdb_axis_names[0]) {
        gdb_axis_names[0] = PyUnicode_InternFromString("x");
        gdb_axis_names[1] = PyUnicode_InternFromString("y");
        gdb_axis_names[2] = PyUnicode_InternFromString("z");
    }
    gdb_vector_cls[type] = (PyObject *)cls;
}

/* A raw Vector2/Vector3 (real_t float components) as a new Python Vector2/Vector3. */
static PyObject *gdb_vector_to_py(int type, const float *raw) {
    int n = gdb_vector_width(type);
    PyObject *argv[3] = {NULL, NULL, NULL};
    PyObject *out = NULL;
    for (int i = 0; i < n; i++)
        if (!(argv[i] = PyFloat_FromDouble((double)raw[i]))) goto done;
    out = PyObject_Vectorcall(gdb_vector_cls[type], argv, (size_t)n, NULL);
done:
    for (int i = 0; i < n; i++) Py_XDECREF(argv[i]);
    return out;
}

/* A Python Vector2/Vector3's components into `raw`; 0 with a Python exception set. */
static int gdb_vector_from_py(int type, PyObject *value, float *raw) {
    for (int i = 0; i < gdb_vector_width(type); i++) {
        PyObject *axis = PyObject_GetAttr(value, gdb_axis_names[i]);
        if (!axis) return 0;
        double x = PyFloat_AsDouble(axis);
        Py_DECREF(axis);
        if (x == -1.0 && PyErr_Occurred()) return 0;
        raw[i] = (float)x;
    }
    return 1;
}

static void *gdb_grow(void *table, intptr_t *cap, intptr_t need, size_t item) {
    if (need < *cap) return table;
    intptr_t n = *cap ? *cap : 64;
    while (n <= need) n *= 2;
    table = realloc(table, (size_t)n * item);
    memset((char *)table + (size_t)*cap * item, 0, (size_t)(n - *cap) * item);
    *cap = n;
    return table;
}

static PyObject *gdb_to_variant_cb;
static void gdb_set_callbacks(intptr_t report, intptr_t read_raw, intptr_t read_var, intptr_t packed,
                              intptr_t string_name, intptr_t node_path, void *keys, void *values, intptr_t to_var) {
    gdb_to_variant_cb = (PyObject *)to_var;
    gdb_report_cb = (PyObject *)report;
    gdb_read_raw_cb = (PyObject *)read_raw;
    gdb_read_var_cb = (PyObject *)read_var;
    gdb_packed_cb = (PyObject *)packed;
    gdb_text_cls[GDEXTENSION_VARIANT_TYPE_STRING_NAME] = (PyObject *)string_name;
    gdb_text_cls[GDEXTENSION_VARIANT_TYPE_NODE_PATH] = (PyObject *)node_path;
    g_dict_keys = (GDExtensionPtrBuiltInMethod)keys;
    g_dict_values = (GDExtensionPtrBuiltInMethod)values;
}

static void gdb_set_fast_method(intptr_t mid, intptr_t func, intptr_t writer, const int *types, int nargs, int ret,
                                int is_static) {
    if (nargs > 7) return;
    fast_methods = gdb_grow(fast_methods, &fast_methods_cap, mid, sizeof(gdb_fast_method));
    gdb_fast_method *m = &fast_methods[mid];
    m->nargs = nargs;
    memcpy(m->types, types, sizeof(int) * (size_t)nargs);
    m->ret = ret;
    m->is_static = is_static;
    m->writer = (PyObject *)writer;
    m->func = (PyObject *)func;
}

static void gdb_set_fast_virtual(intptr_t vid, intptr_t func) {
    fast_virtuals = gdb_grow(fast_virtuals, &fast_virtuals_cap, vid, sizeof(PyObject *));
    fast_virtuals[vid] = (PyObject *)func;
}

/* The pending Python exception goes to gdbridge's reporter (an engine error with the traceback). */
static void gdb_report_pending(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (gdb_report_cb && type) {
        PyObject *r = PyObject_CallFunctionObjArgs(gdb_report_cb, type, value ? value : Py_None,
                                                   tb ? tb : Py_None, NULL);
        Py_XDECREF(r);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
}

/* Python-defined RefCounted objects that arrived during a callback (gdbridge.objects.arrivals),
 * those Python holds an engine reference for while `instances` holds them too (objects.held), and
 * the function that settles both at the callback's end; all borrowed, module-level in Python. */
static PyObject *gdb_arrivals;
static PyObject *gdb_held;
static PyObject *gdb_settle_cb;
static int gdb_held_on; /* `held` has members (a flag beside gdb_arrivals: no extra load per callback) */
static void gdb_set_arrivals(intptr_t arrivals, intptr_t held, intptr_t settle) {
    gdb_arrivals = (PyObject *)arrivals;
    gdb_held = (PyObject *)held;
    gdb_settle_cb = (PyObject *)settle;
}
static void gdb_watch_held(int on) { gdb_held_on = on; }

/* Whether Python let go of a held object: nothing refers to it but `instances` and `held`. */
static int gdb_held_dropped(void) {
    PyObject *key, *obj;
    Py_ssize_t pos = 0;
    while (PyDict_Next(gdb_held, &pos, &key, &obj))
        if (Py_REFCNT(obj) <= 2) return 1;
    return 0;
}

static void gdb_settle(void) {
    if (!gdb_arrivals) return;
    if (PyList_GET_SIZE(gdb_arrivals) == 0 && (!gdb_held_on || !gdb_held_dropped())) return;
    PyObject *r = PyObject_CallNoArgs(gdb_settle_cb);
    if (!r) gdb_report_pending();
    Py_XDECREF(r);
}

/* settle(): what gdb_settle does at the end of a callback, for the callbacks written in Python. */
static PyObject *gdb_fast_settle(PyObject *self, PyObject *unused) {
    gdb_settle();
    Py_RETURN_NONE;
}

/* dropped(): the instance ids of the held objects Python let go of (see gdb_held_dropped). */
static PyObject *gdb_fast_dropped(PyObject *self, PyObject *unused) {
    PyObject *out = PyList_New(0), *key, *obj;
    Py_ssize_t pos = 0;
    while (out && gdb_held && PyDict_Next(gdb_held, &pos, &key, &obj))
        if (Py_REFCNT(obj) <= 2 && PyList_Append(out, key) < 0) Py_CLEAR(out);
    return out;
}

static PyObject *gdb_variant_to_py(const void *v);
