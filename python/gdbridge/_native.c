/* gdbridge's C layer, compiled by cffi (embedding mode) against the engine's own
 * gdextension_interface.h. It holds the entry point, the engine callbacks (thin trampolines
 * that forward to a few `extern "Python"` functions with integer ids instead of handles), and
 * small helpers that do several interface calls per Python->C crossing (each crossing costs
 * ~0.1-0.3 us, so fewer of them is the main speed lever). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t opaque[3]; } gdb_variant;

static GDExtensionInterfaceGetProcAddress gdb_gpa;
static GDExtensionClassLibraryPtr gdb_library;
static char gdb_self_path[4096];
static char gdb_libpython_path[4096];

/* The engine loads extensions with RTLD_LOCAL; Python's own extension modules (numpy,
 * _cffi_backend, _ctypes) need libpython's symbols global, so re-open it that way. */
__attribute__((constructor)) static void gdb_on_load(void) {
    Dl_info info;
    if (dladdr((void *)&Py_Initialize, &info) && info.dli_fname) {
        strncpy(gdb_libpython_path, info.dli_fname, sizeof(gdb_libpython_path) - 1);
        dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    }
    if (dladdr((void *)&gdb_on_load, &info) && info.dli_fname)
        strncpy(gdb_self_path, info.dli_fname, sizeof(gdb_self_path) - 1);
}

static const char *gdb_library_path(void) { return gdb_self_path; }
static const char *gdb_libpython(void) { return gdb_libpython_path; }
static void *gdb_get_proc(const char *name) { return (void *)gdb_gpa(name); }
static void *gdb_get_library(void) { return gdb_library; }

/* ---- interface functions used by the helpers below (resolved in gdbridge_entry) ---- */
static GDExtensionInterfacePrintErrorWithMessage i_print_error;
static GDExtensionInterfacePrintWarningWithMessage i_print_warning;
static GDExtensionInterfaceVariantGetType i_variant_get_type;
static GDExtensionInterfaceVariantDestroy i_variant_destroy;
static GDExtensionInterfaceVariantNewCopy i_variant_new_copy;
static GDExtensionInterfaceVariantNewNil i_variant_new_nil;
static GDExtensionInterfaceStringNewWithUtf8CharsAndLen2 i_string_new_utf8;
static GDExtensionInterfaceStringToUtf8Chars i_string_to_utf8;
static GDExtensionInterfaceStringNameNewWithUtf8CharsAndLen i_string_name_new_utf8;
static GDExtensionInterfaceStringToUtf32Chars i_string_to_utf32;
static GDExtensionInterfaceStringOperatorIndexConst i_string_index_const;
static GDExtensionInterfaceObjectMethodBindCall i_method_bind_call;
static GDExtensionInterfaceObjectMethodBindPtrcall i_method_bind_ptrcall;
static GDExtensionInterfaceObjectGetInstanceBinding i_get_instance_binding;
static GDExtensionInterfaceArrayOperatorIndex i_array_index;
static GDExtensionInterfaceDictionaryOperatorIndex i_dictionary_index;
static GDExtensionInterfaceVariantGetPtrConstructor i_get_ptr_constructor;
static GDExtensionInterfaceVariantGetPtrDestructor i_get_ptr_destructor;
static GDExtensionInterfaceGetVariantFromTypeConstructor i_get_from_type;
static GDExtensionInterfaceGetVariantToTypeConstructor i_get_to_type;
static GDExtensionInterfaceGetVariantGetInternalPtrFunc i_get_internal_ptr;

#define GDB_TYPES GDEXTENSION_VARIANT_TYPE_VARIANT_MAX
static GDExtensionVariantFromTypeConstructorFunc g_from_type[GDB_TYPES];
static GDExtensionTypeFromVariantConstructorFunc g_to_type[GDB_TYPES];
static GDExtensionVariantGetInternalPtrFunc g_internal_ptr[GDB_TYPES];
static GDExtensionPtrDestructor g_destructor[GDB_TYPES];
static GDExtensionPtrConstructor g_default_constructor[GDB_TYPES];
/* String <- StringName / NodePath and back (constructor index 2 of String is from StringName). */
static GDExtensionPtrConstructor g_string_from[GDB_TYPES];
static GDExtensionPtrConstructor g_from_string[GDB_TYPES];
/* size() and resize() of Array and the packed arrays; set from Python (hashes live in the API). */
static GDExtensionPtrBuiltInMethod g_size_method[GDB_TYPES];
static GDExtensionPtrBuiltInMethod g_resize_method[GDB_TYPES];
static void *g_packed_index[GDB_TYPES];
static GDExtensionInstanceBindingCallbacks gdb_binding_callbacks;

static void gdb_set_builtin(int type, int which, void *fn) {
    if (which == 0) g_size_method[type] = (GDExtensionPtrBuiltInMethod)fn;
    else if (which == 1) g_resize_method[type] = (GDExtensionPtrBuiltInMethod)fn;
    else if (which == 2) g_string_from[type] = (GDExtensionPtrConstructor)fn;
    else if (which == 3) g_from_string[type] = (GDExtensionPtrConstructor)fn;
    else if (which == 4) g_packed_index[type] = fn;
}

/* ---- errors and printing ---- */
/* The engine prints the message when there is one, so the summary line leads it: "text\ndetail". */
static void gdb_report(int warning, const char *text, const char *detail) {
    size_t n = strlen(text) + strlen(detail) + 2;
    char *both = malloc(n);
    snprintf(both, n, *detail ? "%s\n%s" : "%s%s", text, detail);
    if (warning && i_print_warning) i_print_warning(text, both, "gdbridge", "python", 0, 1);
    else if (!warning && i_print_error) i_print_error(text, both, "gdbridge", "python", 0, 1);
    else fprintf(stderr, "%s: %s\n", warning ? "WARNING" : "ERROR", both);
    free(both);
}
static void gdb_error(const char *text, const char *detail) { gdb_report(0, text, detail); }
static void gdb_warning(const char *text, const char *detail) { gdb_report(1, text, detail); }

/* ---- variants ---- */
static int gdb_vtype(const void *v) { return (int)i_variant_get_type((GDExtensionConstVariantPtr)v); }
static void gdb_vdestroy(void *v) { i_variant_destroy(v); }
static void gdb_vcopy(void *dst, const void *src) { i_variant_new_copy(dst, src); }
static void gdb_vnil(void *v) { i_variant_new_nil(v); }
static void gdb_vbool(void *v, int b) { GDExtensionBool x = b != 0; g_from_type[GDEXTENSION_VARIANT_TYPE_BOOL](v, &x); }
static void gdb_vint(void *v, int64_t i) { g_from_type[GDEXTENSION_VARIANT_TYPE_INT](v, &i); }
static void gdb_vfloat(void *v, double d) { g_from_type[GDEXTENSION_VARIANT_TYPE_FLOAT](v, &d); }
static int64_t gdb_as_int(const void *v) { int64_t x = 0; g_to_type[GDEXTENSION_VARIANT_TYPE_INT](&x, (void *)v); return x; }
static double gdb_as_float(const void *v) { double x = 0; g_to_type[GDEXTENSION_VARIANT_TYPE_FLOAT](&x, (void *)v); return x; }
static int gdb_as_bool(const void *v) { GDExtensionBool x = 0; g_to_type[GDEXTENSION_VARIANT_TYPE_BOOL](&x, (void *)v); return x; }
static void gdb_vobject(void *v, void *obj) { g_from_type[GDEXTENSION_VARIANT_TYPE_OBJECT](v, &obj); }
static void *gdb_as_object(const void *v) { void *o = NULL; g_to_type[GDEXTENSION_VARIANT_TYPE_OBJECT](&o, (void *)v); return o; }
/* Raw value of a plain-data type (vectors, colors, transforms, RID) in and out of a variant. */
static void gdb_vraw(void *v, int type, const void *raw) { g_from_type[type](v, (void *)raw); }
static void gdb_as_raw(const void *v, int type, void *raw) { g_to_type[type](raw, (void *)v); }
static void *gdb_vinternal(void *v, int type) { return g_internal_ptr[type](v); }
/* An empty value of `type` (Array, Dictionary, packed arrays...) as a variant; returns its internal pointer. */
static void *gdb_vnew(void *v, int type) {
    uint64_t value[8];
    g_default_constructor[type](value, NULL);
    g_from_type[type](v, value);
    if (g_destructor[type]) g_destructor[type](value);
    return g_internal_ptr[type](v);
}

/* Strings: String, StringName and NodePath all go through a String and UTF-8. */
static void gdb_string_new(void *s, const char *utf8, int64_t len) { i_string_new_utf8(s, utf8, len); }
static int64_t gdb_string_utf8(const void *s, char *buf, int64_t cap) {
    int64_t n = i_string_to_utf8((GDExtensionConstStringPtr)s, NULL, 0);
    if (n <= cap) i_string_to_utf8((GDExtensionConstStringPtr)s, buf, n);
    return n;
}
static void gdb_string_destroy(void *s) { g_destructor[GDEXTENSION_VARIANT_TYPE_STRING](s); }
/* value of `type` (String, StringName, NodePath) <- UTF-8, written into uninitialized `dst`. */
static void gdb_text_new(void *dst, int type, const char *utf8, int64_t len) {
    if (type == GDEXTENSION_VARIANT_TYPE_STRING) { i_string_new_utf8(dst, utf8, len); return; }
    if (type == GDEXTENSION_VARIANT_TYPE_STRING_NAME) { i_string_name_new_utf8(dst, utf8, len); return; }
    uint64_t s = 0;
    i_string_new_utf8(&s, utf8, len);
    GDExtensionConstTypePtr args[1] = {&s};
    g_from_string[type](dst, args);
    g_destructor[GDEXTENSION_VARIANT_TYPE_STRING](&s);
}
/* UTF-8 of a String/StringName/NodePath value; returns the length (call again if > cap). */
static int64_t gdb_text_utf8(const void *src, int type, char *buf, int64_t cap) {
    if (type == GDEXTENSION_VARIANT_TYPE_STRING) return gdb_string_utf8(src, buf, cap);
    uint64_t s = 0;
    GDExtensionConstTypePtr args[1] = {src};
    g_string_from[type](&s, args);
    int64_t n = gdb_string_utf8(&s, buf, cap);
    g_destructor[GDEXTENSION_VARIANT_TYPE_STRING](&s);
    return n;
}
static void gdb_vtext(void *v, int type, const char *utf8, int64_t len) {
    uint64_t value[2] = {0, 0};
    gdb_text_new(value, type, utf8, len);
    g_from_type[type](v, value);
    g_destructor[type](value);
}
static int64_t gdb_as_text(const void *v, int type, char *buf, int64_t cap) {
    return gdb_text_utf8(g_internal_ptr[type]((void *)v), type, buf, cap);
}
static void gdb_value_destroy(int type, void *value) { if (g_destructor[type]) g_destructor[type](value); }

/* Arrays: size, resize and element pointers of Array and packed arrays (by internal pointer). */
static int64_t gdb_seq_size(int type, const void *seq) {
    int64_t n = 0;
    g_size_method[type]((void *)seq, NULL, &n, 0);
    return n;
}
static void gdb_seq_resize(int type, void *seq, int64_t n) {
    int64_t r = 0;
    GDExtensionConstTypePtr args[1] = {&n};
    g_resize_method[type](seq, args, &r, 1);
}
static void *gdb_array_at(void *array, int64_t i) { return i_array_index(array, i); }
static void *gdb_dict_at(void *dict, const void *key) { return i_dictionary_index(dict, key); }
typedef void *(*gdb_index_fn)(void *, GDExtensionInt);
static void *gdb_packed_data(int type, void *seq) {
    if (gdb_seq_size(type, seq) == 0) return NULL;
    return ((gdb_index_fn)g_packed_index[type])(seq, 0);
}

/* ---- calls into the engine ---- */
static inline void gdb_take_queued(void); /* queued calls, below */
static int gdb_call(const void *mb, void *obj, const gdb_variant *args, int64_t n, void *ret) {
    const void *ptrs[16];
    GDExtensionCallError err = {GDEXTENSION_CALL_OK, 0, 0};
    if (n > 16) return -1;
    for (int64_t i = 0; i < n; i++) ptrs[i] = &args[i];
    i_method_bind_call(mb, obj, (const GDExtensionConstVariantPtr *)ptrs, n, ret, &err);
    gdb_take_queued();
    return (int)err.error * 1000 + err.argument;
}
static void gdb_ptrcall(const void *mb, void *obj, const void **args, void *ret) {
    i_method_bind_ptrcall(mb, obj, args, ret);
    gdb_take_queued();
}
static int64_t gdb_utility(void *fn, const gdb_variant *args, int32_t n, void *ret) {
    const void *ptrs[16];
    if (n > 16) return -1;
    for (int32_t i = 0; i < n; i++) ptrs[i] = &args[i];
    ((GDExtensionPtrUtilityFunction)fn)(ret, (const GDExtensionConstTypePtr *)ptrs, n);
    gdb_take_queued();
    return 0;
}
/* Our instance id stored on an engine object, 0 when the object is not one of ours. */
static intptr_t gdb_instance_of(void *obj) {
    if (!obj) return 0;
    return (intptr_t)i_get_instance_binding(obj, gdb_library, NULL);
}
static const GDExtensionInstanceBindingCallbacks *gdb_binding_callbacks_ptr(void) { return &gdb_binding_callbacks; }

/* Objects by instance id: a pointer is only used after ObjectDB says the id is still alive, so a
 * freed object (whose memory may hold another object by now) is never read. Resolved by
 * gdb_resolve_objects (called from Python at attach time, outside the entry point). */
static GDExtensionInterfaceObjectGetInstanceFromId i_object_from_id;
static GDExtensionInterfaceObjectGetInstanceId i_object_get_id;
static GDExtensionPtrUtilityFunction g_is_instance_valid;
static void gdb_resolve_objects(void *is_instance_valid) {
    i_object_from_id = (GDExtensionInterfaceObjectGetInstanceFromId)gdb_gpa("object_get_instance_from_id");
    i_object_get_id = (GDExtensionInterfaceObjectGetInstanceId)gdb_gpa("object_get_instance_id");
    g_is_instance_valid = (GDExtensionPtrUtilityFunction)is_instance_valid;
}
/* The live object an Object Variant holds, or NULL (null or freed); its instance id into `id`. */
static void *gdb_variant_object(const void *v, uint64_t *id) {
    GDExtensionBool valid = 0;
    const void *args[1] = {v};
    *id = 0;
    g_is_instance_valid(&valid, (const GDExtensionConstTypePtr *)args, 1);
    if (!valid) return NULL;
    void *obj = gdb_as_object(v);
    if (obj) *id = i_object_get_id(obj);
    return obj;
}
static uint64_t gdb_object_id(void *obj) { return obj ? i_object_get_id(obj) : 0; }
static void *gdb_object_from_id(uint64_t id) { return id ? i_object_from_id(id) : NULL; }

/* ---- Python callbacks (extern "Python", defined in gdbridge._runtime) ---- */
static void gdb_py_initialize(int level);
static void gdb_py_deinitialize(int level);
static void gdb_py_frame(void);
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

/* Store a scalar Python result as a raw value; returns 0 on a conversion error. */
static int gdb_unbox(int type, PyObject *r, void *out) {
    switch (type) {
    case GDEXTENSION_VARIANT_TYPE_INT: *(int64_t *)out = PyLong_AsLongLong(r); break;
    case GDEXTENSION_VARIANT_TYPE_FLOAT: *(double *)out = PyFloat_AsDouble(r); break;
    case GDEXTENSION_VARIANT_TYPE_BOOL: *(uint8_t *)out = (uint8_t)(PyObject_IsTrue(r) == 1); break;
    default: break;
    }
    if (!PyErr_Occurred()) return 1;
    /* Not a number of that kind: the caller gets the type's default, not the error marker (-1). */
    switch (type) {
    case GDEXTENSION_VARIANT_TYPE_INT: *(int64_t *)out = 0; break;
    case GDEXTENSION_VARIANT_TYPE_FLOAT: *(double *)out = 0; break;
    default: break;
    }
    return 0;
}

/* Whether a Variant argument is one the fast path converts for a number parameter without asking
 * classdb._coerced: a bool, an int, or a float (a whole one for an int parameter); Nil too. */
static int gdb_plain_number(int want, const void *arg) {
    int have = gdb_vtype(arg);
    /* null is not a number: the general path refuses it with the engine's call error */
    if (have == GDEXTENSION_VARIANT_TYPE_BOOL || have == GDEXTENSION_VARIANT_TYPE_INT) return 1;
    if (have != GDEXTENSION_VARIANT_TYPE_FLOAT) return 0;
    if (want != GDEXTENSION_VARIANT_TYPE_INT) return 1;
    double x = gdb_as_float(arg);
    return isfinite(x) && floor(x) == x; /* as float.is_integer() */
}

/* Declared int/float/bool parameters get that Python type from an untyped call (2 -> 2.0). */
static PyObject *gdb_coerce(int want, PyObject *value) {
    if (!value || !gdb_is_scalar(want)) return value;
    PyObject *out = NULL;
    if (want == GDEXTENSION_VARIANT_TYPE_FLOAT && !PyFloat_CheckExact(value)) out = PyNumber_Float(value);
    else if (want == GDEXTENSION_VARIANT_TYPE_INT && !PyLong_CheckExact(value)) out = PyNumber_Long(value);
    else if (want == GDEXTENSION_VARIANT_TYPE_BOOL && !PyBool_Check(value)) out = PyBool_FromLong(PyObject_IsTrue(value));
    else return value;
    Py_DECREF(value);
    return out;
}

static int gdb_py_to_variant(void *v, PyObject *value);
static int gdb_py_fill(void *target, int dict, PyObject *items);
static int gdb_str_to_raw(void *raw, PyObject *value, int type);

/* Call and store the result; `variant_ret` says whether `ret` is a Variant (call) or raw (ptrcall). */
static void gdb_fast_finish(gdb_fast_method *m, void *inst, PyObject **boxed, int ok, void *ret, int variant_ret) {
    PyObject *argv[9];
    PyObject *r = NULL;
    if (ok) {
        argv[0] = m->is_static ? Py_None : (PyObject *)inst;
        for (int i = 0; i < m->nargs; i++) argv[i + 1] = boxed[i];
        r = PyObject_Vectorcall(m->func, argv, (size_t)(m->nargs + 1), NULL);
    }
    for (int i = 0; i < m->nargs; i++) Py_XDECREF(boxed[i]);
    if (r && m->ret != -2) {
        if (gdb_is_scalar(m->ret)) {
            union { int64_t i; double f; uint8_t b; } out;
            if (!gdb_unbox(m->ret, r, variant_ret ? (void *)&out : ret)) {
                Py_CLEAR(r);
            } else if (variant_ret) {
                if (m->ret == GDEXTENSION_VARIANT_TYPE_INT) gdb_vint(ret, out.i);
                else if (m->ret == GDEXTENSION_VARIANT_TYPE_FLOAT) gdb_vfloat(ret, out.f);
                else gdb_vbool(ret, out.b);
            }
        } else if (variant_ret || m->ret == GDB_ANY) {
            /* A Variant result: written in C (containers included), as to_variant would. */
            i_variant_destroy(ret);
            if (!gdb_py_to_variant(ret, r)) Py_CLEAR(r);
        } else if ((m->ret == GDEXTENSION_VARIANT_TYPE_STRING || m->ret == GDEXTENSION_VARIANT_TYPE_STRING_NAME ||
                    m->ret == GDEXTENSION_VARIANT_TYPE_NODE_PATH) && PyUnicode_Check(r)) {
            if (!gdb_str_to_raw(ret, r, m->ret)) Py_CLEAR(r);
        } else if ((m->ret == GDEXTENSION_VARIANT_TYPE_DICTIONARY && PyDict_Check(r)) ||
                   (m->ret == GDEXTENSION_VARIANT_TYPE_ARRAY && (PyList_Check(r) || PyTuple_Check(r)))) {
            if (!gdb_py_fill(ret, m->ret == GDEXTENSION_VARIANT_TYPE_DICTIONARY, r)) Py_CLEAR(r);
        } else {
            PyObject *done = PyObject_CallFunction(m->writer, "nOi", (Py_ssize_t)(intptr_t)ret, r, variant_ret);
            if (!done) Py_CLEAR(r);
            Py_XDECREF(done);
        }
    }
    if (!r) gdb_report_pending();
    Py_XDECREF(r);
    gdb_settle();
}

static void gdb_fast_ptrcall(gdb_fast_method *m, void *inst, const GDExtensionConstTypePtr *args, void *ret) {
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *boxed[8];
    int ok = 1;
    for (int i = 0; i < m->nargs; i++) {
        boxed[i] = m->types[i] == GDB_ANY ? gdb_variant_to_py(args[i]) : gdb_raw_to_py(m->types[i], args[i]);
        if (!boxed[i]) ok = 0;
    }
    gdb_fast_finish(m, inst, boxed, ok, ret, 0);
    PyGILState_Release(gil);
}

/* Variant call: returns 0 (general path, which applies Python defaults) when the count differs. */
static int gdb_fast_varcall(gdb_fast_method *m, void *inst, const GDExtensionConstVariantPtr *args,
                            GDExtensionInt n, void *ret) {
    if (n != m->nargs) return 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *boxed[8];
    int ok = 1;
    for (int i = 0; i < n; i++) {
        /* Anything but a plain number for a number parameter goes to the general path, whose
         * classdb._coerced decides (and reports the call error the engine names). */
        if (gdb_is_scalar(m->types[i]) && !gdb_plain_number(m->types[i], args[i])) {
            for (int j = 0; j < i; j++) Py_XDECREF(boxed[j]);
            PyGILState_Release(gil);
            return 0;
        }
        boxed[i] = gdb_coerce(m->types[i], gdb_variant_to_py(args[i]));
        if (!boxed[i]) ok = 0;
    }
    gdb_fast_finish(m, inst, boxed, ok, ret, 1);
    PyGILState_Release(gil);
    return 1;
}

/* ---- queued calls: a method's calls kept in C, handed to Python in call order ----
 * A method declared queued (gdbridge.declare.queued) is called from the engine very often and
 * returns nothing. Its call is appended here as a row (method, key, arguments) and returns at once,
 * without the GIL or Python, when it comes from the main thread, on an instance Python gave a key
 * (objects.queue_calls), with plain numbers of the declared types (an int within its declared
 * bounds, a finite float). Any other call runs the Python method, as before. Python receives the
 * rows (take(rows, raw): a list of (key, *arguments) tuples, and the same as bytes) before any
 * other Python code of the main thread runs: on entering any callback of ours,
 * and when an engine call made from Python returns (gdb_take_queued), so Python never sees a state
 * the calls have not reached. Bounded: past GDB_QUEUE_ROWS rows a call runs in Python. */
#define GDB_QUEUE_ARGS 4
#define GDB_QUEUE_ROWS (1 << 20)
typedef struct {
    PyObject *take; /* borrowed (gdbridge.classdb keeps it): take(rows, raw) */
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

/* ---- answered reads: an int read of (instance key, int argument) answered from a table in C ----
 * A method declared answered (gdbridge.declare.answered) takes one int and returns an int. Python
 * sets, once a frame, the answers of (key, argument) pairs and, per key, how many queued calls of
 * the linked queued method (its first argument being the same kind of value) the answers survive
 * (`budget`), and the answer for an argument such a call was made with (`written`; -1: Python
 * answers it). A call from the main thread on an instance with that key is answered here when the
 * key is open, its queued calls since the answers were set are within the budget, and the argument
 * was written (`written`) or has an answer; each answer from the table is logged (key, argument)
 * for Python (`answers_asked`). Anything else runs the Python method. Python closes a key whose
 * state it changes another way, and clears everything when the answers no longer hold. */
#define GDB_ANSWER_WRITTEN 8 /* distinct written arguments kept a key; one more closes it */
typedef struct {
    int64_t key, arg;
    int64_t value;
    int used;
} gdb_answer_pair;
typedef struct {
    int64_t key;
    int64_t budget, written;
    int64_t count;
    int open, nwritten, used;
    int64_t args[GDB_ANSWER_WRITTEN];
} gdb_answer_stream;
typedef struct {
    gdb_answer_pair *pairs;
    intptr_t pairs_cap;
    gdb_answer_stream *streams;
    intptr_t streams_cap;
    int64_t *asked;
    intptr_t asked_cap, asked_used;
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
        if (!st->used) return NULL;
        if (st->key == key) return st;
    }
}
static gdb_answer_pair *gdb_answer_pair_of(gdb_answers *a, int64_t key, int64_t arg) {
    if (!a->pairs_cap) return NULL;
    uintptr_t mask = (uintptr_t)a->pairs_cap - 1;
    for (uintptr_t at = gdb_int_slot(key, arg, a->pairs_cap);; at = (at + 1) & mask) {
        gdb_answer_pair *pair = &a->pairs[at];
        if (!pair->used) return NULL;
        if (pair->key == key && pair->arg == arg) return pair;
    }
}
/* A queued call of the linked method under `key`, first argument `arg`. */
static void gdb_answers_written(intptr_t mid, int64_t key, int64_t arg) {
    gdb_answers *a = mid < answered_methods_cap ? &answered_methods[mid] : NULL;
    gdb_answer_stream *st = a && a->on ? gdb_answer_stream_of(a, key) : NULL;
    if (!st || !st->open) return;
    st->count++;
    for (int i = 0; i < st->nwritten; i++)
        if (st->args[i] == arg) return;
    if (st->nwritten == GDB_ANSWER_WRITTEN) st->open = 0;
    else st->args[st->nwritten++] = arg;
}
/* Answer the call when it qualifies (see above); 1 when it did, the int written to `ret`. */
static int gdb_answer_call(intptr_t mid, void *inst, const void *const *args, GDExtensionInt n, int variant,
                           void *ret) {
    gdb_answers *a = &answered_methods[mid];
    if (!a->on || (variant && (n != 1 || gdb_vtype(args[0]) != GDEXTENSION_VARIANT_TYPE_INT)) ||
        !gdb_on_main_thread())
        return 0;
    gdb_queue_key *slot = gdb_queue_key_slot(inst);
    if (!slot || !slot->key) return 0;
    gdb_answer_stream *st = gdb_answer_stream_of(a, slot->key);
    if (!st || !st->open || st->count > st->budget) return 0;
    int64_t arg = variant ? gdb_as_int(args[0]) : *(const int64_t *)args[0];
    int64_t value = -1;
    int written = 0;
    for (int i = 0; i < st->nwritten; i++) written |= st->args[i] == arg;
    if (written) {
        value = st->written;
    } else {
        gdb_answer_pair *pair = gdb_answer_pair_of(a, slot->key, arg);
        if (!pair) return 0;
        if (a->asked_used + 2 > a->asked_cap) {
            intptr_t cap = a->asked_cap ? a->asked_cap * 2 : 1024;
            int64_t *grown = realloc(a->asked, (size_t)cap * sizeof(int64_t));
            if (!grown) return 0;
            a->asked = grown;
            a->asked_cap = cap;
        }
        a->asked[a->asked_used++] = slot->key;
        a->asked[a->asked_used++] = arg;
        value = pair->value;
    }
    if (value < 0) return 0;
    answered_total++;
    if (variant) gdb_vint(ret, value);
    else *(int64_t *)ret = value;
    return 1;
}
static void gdb_answers_clear(gdb_answers *a) {
    free(a->pairs);
    free(a->streams);
    a->pairs = NULL;
    a->streams = NULL;
    a->pairs_cap = a->streams_cap = 0;
    a->on = 0;
}
static intptr_t gdb_table_cap(Py_ssize_t n) {
    intptr_t cap = 64;
    while (cap < (intptr_t)n * 2 + 2) cap *= 2;
    return cap;
}
/* answers_set(mid, pair_keys, pair_args, values, stream_keys, budgets, written): int64 buffers;
 * replaces the answers (the asked log stays until read). */
static PyObject *gdb_fast_answers_set(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "answers_set(mid, pair_keys, pair_args, values, stream_keys, budgets, written)");
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
            a->pairs_cap = gdb_table_cap(pairs);
            a->streams_cap = gdb_table_cap(streams);
            a->pairs = calloc((size_t)a->pairs_cap, sizeof(gdb_answer_pair));
            a->streams = calloc((size_t)a->streams_cap, sizeof(gdb_answer_stream));
            if (!a->pairs || !a->streams) {
                gdb_answers_clear(a);
                PyErr_NoMemory();
            } else {
                const int64_t *pk = views[0].buf, *pa = views[1].buf, *pv = views[2].buf;
                const int64_t *sk = views[3].buf, *sb = views[4].buf, *sw = views[5].buf;
                uintptr_t pmask = (uintptr_t)a->pairs_cap - 1, smask = (uintptr_t)a->streams_cap - 1;
                for (Py_ssize_t i = 0; i < pairs; i++) {
                    uintptr_t at = gdb_int_slot(pk[i], pa[i], a->pairs_cap);
                    while (a->pairs[at].used && !(a->pairs[at].key == pk[i] && a->pairs[at].arg == pa[i]))
                        at = (at + 1) & pmask;
                    a->pairs[at] = (gdb_answer_pair){pk[i], pa[i], pv[i], 1};
                }
                for (Py_ssize_t i = 0; i < streams; i++) {
                    uintptr_t at = gdb_int_slot(sk[i], 0, a->streams_cap);
                    while (a->streams[at].used && a->streams[at].key != sk[i]) at = (at + 1) & smask;
                    gdb_answer_stream *st = &a->streams[at];
                    memset(st, 0, sizeof(*st));
                    st->key = sk[i];
                    st->budget = sb[i];
                    st->written = sw[i];
                    st->open = st->used = 1;
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
    gdb_answers_clear(&answered_methods[mid]);
    if (writes > 0 && writes < queued_methods_cap) queued_methods[writes].answers = mid;
}

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

/* Hand the queued rows to Python, each run of one method's rows in one take(rows) call. The GIL is
 * held. The rows are taken out first, so a call queued while Python takes them (a take that calls
 * the engine) waits for this loop's next round, after the rows before it. A take that raises is
 * reported; the runs after it still go. */
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
            PyObject *list = PyList_New(end - start);
            /* the same rows as numbers: key, then each argument, 8 bytes each (int64 or double) */
            Py_ssize_t width = (Py_ssize_t)sizeof(gdb_number) * (m->nargs + 1);
            PyObject *raw = list ? PyBytes_FromStringAndSize(NULL, width * (end - start)) : NULL;
            if (!raw) Py_CLEAR(list);
            /* a number equal to the row before's in its column is that row's object (a node's
             * calls in a row share their key; a constant argument is boxed once) */
            PyObject *last[GDB_QUEUE_ARGS + 1] = {NULL};
            int64_t last_bits[GDB_QUEUE_ARGS + 1];
            for (intptr_t r = start; list && r < end; r++) {
                char *at = PyBytes_AS_STRING(raw) + width * (r - start);
                memcpy(at, &rows[r].key, sizeof(int64_t));
                memcpy(at + sizeof(gdb_number), rows[r].args, sizeof(gdb_number) * (size_t)m->nargs);
                PyObject *item = PyTuple_New(m->nargs + 1);
                if (!item) { Py_CLEAR(list); break; }
                PyList_SET_ITEM(list, r - start, item);
                for (int c = 0; c <= m->nargs; c++) {
                    int64_t bits = c ? rows[r].args[c - 1].i : rows[r].key;
                    PyObject *boxed;
                    if (last[c] && last_bits[c] == bits) {
                        boxed = Py_NewRef(last[c]);
                    } else {
                        boxed = c && m->types[c - 1] == GDEXTENSION_VARIANT_TYPE_FLOAT
                                    ? PyFloat_FromDouble(rows[r].args[c - 1].f)
                                    : PyLong_FromLongLong(bits);
                        last[c] = boxed; /* borrowed: the tuple holds it */
                        last_bits[c] = bits;
                    }
                    if (!boxed) { Py_CLEAR(list); break; }
                    PyTuple_SET_ITEM(item, c, boxed);
                }
            }
            PyObject *argv[2] = {list, raw};
            PyObject *done = list ? PyObject_Vectorcall(m->take, argv, 2, NULL) : NULL;
            if (!done) gdb_report_pending();
            Py_XDECREF(done);
            Py_XDECREF(list);
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
static PyObject *gdb_fast_forget_texts(PyObject *self, PyObject *unused) {
    gdb_texts_open = 0;
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

/* The same call as a CPython builtin (module _gdbridge_fast): no cffi wrapper around it, so the
 * GIL is only released around the engine call itself. call(method_bind, instance_id, *args): the
 * method bind's address and the object's instance id (0 for a static method) as ints; an engine
 * call error raises `gdb_call_error_cls(code)`, a freed object `gdb_call_error_cls(-1)`. */
static PyObject *gdb_call_error_cls;
static PyObject *gdb_name_set, *gdb_name_get; /* interned "_set", "_get", for tr_set / tr_get */

static PyObject *gdb_fast_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 18) {
        PyErr_SetString(PyExc_TypeError, "call(method_bind, object, *args) takes 0 to 16 arguments");
        return NULL;
    }
    void *mb = PyLong_AsVoidPtr(args[0]);
    uint64_t id = PyLong_AsUnsignedLongLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    void *obj = gdb_object_from_id(id);
    if (id && !obj) {
        /* The object was freed: code -1 (never an engine call error). */
        PyObject *code = PyLong_FromLong(-1);
        if (code) PyErr_SetObject(gdb_call_error_cls, code);
        Py_XDECREF(code);
        return NULL;
    }
    gdb_variant ret;
    GDExtensionCallError err;
    if (!gdb_bind_call(mb, obj, args + 2, nargs - 2, &ret, &err)) return NULL;
    PyObject *result = NULL;
    if (err.error != GDEXTENSION_CALL_OK) {
        PyObject *code = PyLong_FromLong((long)err.error * 1000 + err.argument);
        if (code) PyErr_SetObject(gdb_call_error_cls, code);
        Py_XDECREF(code);
    } else {
        result = gdb_variant_to_py(&ret);
    }
    i_variant_destroy(&ret);
    return result;
}

/* emit_all(method_bind, calls): `call`'s engine call for many objects in one crossing (the
 * server's signals of a frame: Object.emit_signal's bind, each call a tuple (instance id, *args)).
 * The GIL is released around each engine call, as in `call`. A freed object is skipped; a call
 * that fails does not stop the others. Returns the (position, code) of each call not made: -1 a
 * freed object, -2 arguments that could not be converted, else the engine's call error. */
static PyObject *gdb_fast_emit_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "emit_all(method_bind, calls: list) takes two arguments");
        return NULL;
    }
    void *mb = PyLong_AsVoidPtr(args[0]);
    if (PyErr_Occurred()) return NULL;
    PyObject *calls = args[1], *failed = PyList_New(0);
    if (!failed) return NULL;
    for (Py_ssize_t c = 0; c < PyList_GET_SIZE(calls); c++) {
        PyObject *item = PyList_GET_ITEM(calls, c);
        long code = 0;
        Py_ssize_t n = PyTuple_Check(item) ? PyTuple_GET_SIZE(item) - 1 : -1;
        uint64_t id = n >= 0 ? PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(item, 0)) : 0;
        void *obj = n >= 0 && n <= 16 && !PyErr_Occurred() ? gdb_object_from_id(id) : NULL;
        PyErr_Clear();
        if (!obj) {
            code = n >= 0 && n <= 16 ? -1 : -2;
        } else {
            gdb_variant ret;
            GDExtensionCallError err;
            if (!gdb_bind_call(mb, obj, &PyTuple_GET_ITEM(item, 1), n, &ret, &err)) {
                PyErr_Clear();
                code = -2;
            } else {
                if (err.error != GDEXTENSION_CALL_OK) code = (long)err.error * 1000 + err.argument;
                i_variant_destroy(&ret);
            }
        }
        if (code) {
            PyObject *entry = Py_BuildValue("(nl)", c, code);
            if (!entry || PyList_Append(failed, entry) < 0) {
                Py_XDECREF(entry);
                Py_DECREF(failed);
                return NULL;
            }
            Py_DECREF(entry);
        }
    }
    return failed;
}

/* fill(address, vtype, items): a dict into the Dictionary, or a sequence into the Array, at
 * `address` (an internal pointer); what gdbridge._variant.fill_dict / fill_array run. */
static PyObject *gdb_fast_fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "fill(address, vtype, items) takes 3 arguments");
        return NULL;
    }
    void *target = PyLong_AsVoidPtr(args[0]);
    long type = PyLong_AsLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    int ok;
    if (type == GDEXTENSION_VARIANT_TYPE_DICTIONARY) {
        if (!PyDict_Check(args[2])) {
            PyErr_Format(PyExc_TypeError, "a Dictionary needs a dict, not %.100s", Py_TYPE(args[2])->tp_name);
            return NULL;
        }
        ok = gdb_py_fill(target, 1, args[2]);
    } else if (type == GDEXTENSION_VARIANT_TYPE_ARRAY) {
        ok = gdb_py_fill(target, 0, args[2]);
    } else {
        PyErr_SetString(PyExc_ValueError, "fill() takes an Array or a Dictionary");
        return NULL;
    }
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

/* read(address, vtype): the Array or Dictionary at `address` (an internal pointer) as a list or
 * dict, elements converted here; what gdbridge._variant.read_array / read_dict run. */
static PyObject *gdb_fast_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "read(address, vtype) takes 2 arguments");
        return NULL;
    }
    void *source = PyLong_AsVoidPtr(args[0]);
    long type = PyLong_AsLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    if (type == GDEXTENSION_VARIANT_TYPE_ARRAY || type == GDEXTENSION_VARIANT_TYPE_DICTIONARY)
        return gdb_container_to_py(type, source);
    PyErr_SetString(PyExc_ValueError, "read() takes an Array or a Dictionary");
    return NULL;
}

static PyMethodDef gdb_fast_methods[] = {
    {"call", (PyCFunction)(void (*)(void))gdb_fast_call, METH_FASTCALL, "Call an engine method bind."},
    {"emit_all", (PyCFunction)(void (*)(void))gdb_fast_emit_all, METH_FASTCALL, "Call a method bind on many objects."},
    {"fill", (PyCFunction)(void (*)(void))gdb_fast_fill, METH_FASTCALL, "Fill a Dictionary or an Array."},
    {"read", (PyCFunction)(void (*)(void))gdb_fast_read, METH_FASTCALL, "An Array or a Dictionary as list or dict."},
    {"settle", gdb_fast_settle, METH_NOARGS, "Settle the RefCounted objects of the callback ending."},
    {"dropped", gdb_fast_dropped, METH_NOARGS, "Ids of the held RefCounted objects Python let go of."},
    {"forget_texts", gdb_fast_forget_texts, METH_NOARGS, "Empty the cache of Strings made for interned strs."},
    {"take_queued", gdb_fast_take_queued, METH_NOARGS, "Hand the queued calls to Python now."},
    {"queued_total", gdb_fast_queued_total, METH_NOARGS, "How many calls were queued since start."},
    {"answers_set", (PyCFunction)(void (*)(void))gdb_fast_answers_set, METH_FASTCALL, "Set an answered method's answers."},
    {"answers_close", (PyCFunction)(void (*)(void))gdb_fast_answers_close, METH_FASTCALL, "Close a key's answers."},
    {"answers_clear", gdb_fast_answers_clear, METH_O, "Clear an answered method's answers."},
    {"answers_asked", gdb_fast_answers_asked, METH_O, "The pairs answered from the table since the last read."},
    {"answered_total", gdb_fast_answered_total, METH_NOARGS, "How many calls were answered in C since start."},
    {"queue_key", (PyCFunction)(void (*)(void))gdb_fast_queue_key, METH_FASTCALL, "Set an instance's queue key."},
    {NULL, NULL, 0, NULL},
};
static struct PyModuleDef gdb_fast_module = {PyModuleDef_HEAD_INIT, "_gdbridge_fast", NULL, -1, gdb_fast_methods};

/* Put _gdbridge_fast into sys.modules; returns 0 on failure. */
static int gdb_install_fast(intptr_t call_error_cls) {
    PyGILState_STATE gil = PyGILState_Ensure();
    gdb_call_error_cls = (PyObject *)call_error_cls;
    gdb_name_set = PyUnicode_InternFromString("_set");
    gdb_name_get = PyUnicode_InternFromString("_get");
    PyObject *module = PyModule_Create(&gdb_fast_module);
    int ok = module && PyDict_SetItemString(PyImport_GetModuleDict(), "_gdbridge_fast", module) == 0;
    gdb_texts_open = ok;
    Py_XDECREF(module);
    if (!ok) PyErr_Clear();
    PyGILState_Release(gil);
    return ok;
}

static void gdb_fast_virtual(PyObject *func, void *inst, PyObject *arg) {
    PyObject *argv[2] = {(PyObject *)inst, arg};
    PyObject *r = PyObject_Vectorcall(func, argv, arg ? 2 : 1, NULL);
    if (!r) gdb_report_pending();
    Py_XDECREF(r);
    gdb_settle();
}

/* ---- trampolines with the engine's signatures ---- */
static void tr_initialize(void *ud, GDExtensionInitializationLevel level) { gdb_take_queued(); gdb_py_initialize((int)level); }
static void tr_deinitialize(void *ud, GDExtensionInitializationLevel level) { gdb_take_queued(); gdb_py_deinitialize((int)level); }
/* The main loop's per-frame callback (Godot 4.5+): after every node's _process, owned by no node, so
 * no game code can remove it. 0 when the engine has no such interface function. */
static void tr_frame(void) { gdb_take_queued(); gdb_py_frame(); }
static const GDExtensionMainLoopCallbacks gdb_main_loop_callbacks = {NULL, NULL, tr_frame};
static int gdb_register_frame_callback(void) {
    GDExtensionInterfaceRegisterMainLoopCallbacks fn =
        (GDExtensionInterfaceRegisterMainLoopCallbacks)gdb_gpa("register_main_loop_callbacks");
    if (!fn) return 0;
    fn(gdb_library, &gdb_main_loop_callbacks);
    return 1;
}
static GDExtensionObjectPtr tr_create(void *cls, GDExtensionBool notify) { gdb_take_queued(); return gdb_py_create((intptr_t)cls, notify); }
static void tr_free(void *cls, GDExtensionClassInstancePtr inst) {
    gdb_take_queued();
    gdb_set_queue_key(inst, 0); /* its address may be another instance's next */
    gdb_py_free((intptr_t)cls, (intptr_t)inst);
}
static GDExtensionClassInstancePtr tr_recreate(void *cls, GDExtensionObjectPtr obj) { gdb_take_queued(); return (GDExtensionClassInstancePtr)gdb_py_recreate((intptr_t)cls, obj); }
static void *tr_get_virtual(void *cls, GDExtensionConstStringNamePtr name, uint32_t hash) {
    gdb_take_queued();
    return (void *)gdb_py_get_virtual((intptr_t)cls, name);
}
/* Virtual userdata: low 2 bits are the shape (0 generic, 1 no args, 2 one float), the rest the id. */
static void tr_call_virtual(GDExtensionClassInstancePtr inst, GDExtensionConstStringNamePtr name, void *ud,
                            const GDExtensionConstTypePtr *args, GDExtensionTypePtr ret) {
    gdb_take_queued();
    intptr_t u = (intptr_t)ud;
    intptr_t fid = u >> 2;
    int shape = (int)(u & 3);
    if (shape != 0 && fid < fast_virtuals_cap && fast_virtuals[fid]) {
        PyGILState_STATE gil = PyGILState_Ensure();
        PyObject *arg = shape == 2 ? PyFloat_FromDouble(*(const double *)args[0]) : NULL;
        gdb_fast_virtual(fast_virtuals[fid], inst, arg);
        Py_XDECREF(arg);
        PyGILState_Release(gil);
        return;
    }
    switch (shape) {
    case 1: gdb_py_virtual0((intptr_t)inst, fid); break;
    case 2: gdb_py_virtual_f((intptr_t)inst, fid, *(const double *)args[0]); break;
    default: gdb_py_virtual((intptr_t)inst, fid, (const void *const *)args, ret); break;
    }
}
static void tr_notification(GDExtensionClassInstancePtr inst, int32_t what, GDExtensionBool reversed) {
    gdb_take_queued();
    gdb_py_notification((intptr_t)inst, what, reversed);
}
static GDExtensionBool tr_validate_property(GDExtensionClassInstancePtr inst, GDExtensionPropertyInfo *info) {
    gdb_take_queued();
    return (GDExtensionBool)gdb_py_validate_property((intptr_t)inst, info);
}
static void tr_to_string(GDExtensionClassInstancePtr inst, GDExtensionBool *valid, GDExtensionStringPtr out) {
    gdb_take_queued();
    gdb_py_to_string((intptr_t)inst, valid, out);
}
static void tr_method_call(void *mud, GDExtensionClassInstancePtr inst, const GDExtensionConstVariantPtr *args,
                           GDExtensionInt n, GDExtensionVariantPtr ret, GDExtensionCallError *err) {
    intptr_t mid = (intptr_t)mud;
    err->error = GDEXTENSION_CALL_OK;
    if (gdb_queue_call(mid, inst, (const void *const *)args, n, 1)) return;
    if (mid < answered_methods_cap && gdb_answer_call(mid, inst, (const void *const *)args, n, 1, ret)) return;
    if (!(mid < apart_methods_cap && apart_methods[mid])) gdb_take_queued();
    if (mid < fast_methods_cap && fast_methods[mid].func && gdb_fast_varcall(&fast_methods[mid], inst, args, n, ret))
        return;
    gdb_py_call((intptr_t)mud, (intptr_t)inst, (const void *const *)args, n, ret, err);
}
static void tr_method_ptrcall(void *mud, GDExtensionClassInstancePtr inst, const GDExtensionConstTypePtr *args,
                              GDExtensionTypePtr ret) {
    intptr_t mid = (intptr_t)mud;
    if (mid < queued_methods_cap && gdb_queue_call(mid, inst, (const void *const *)args, -1, 0)) return;
    if (mid < answered_methods_cap && gdb_answer_call(mid, inst, (const void *const *)args, 1, 0, ret)) return;
    if (!(mid < apart_methods_cap && apart_methods[mid])) gdb_take_queued();
    if (mid < fast_methods_cap && fast_methods[mid].func) {
        gdb_fast_ptrcall(&fast_methods[mid], inst, args, ret);
        return;
    }
    gdb_py_ptrcall((intptr_t)mud, (intptr_t)inst, (const void *const *)args, ret);
}
static void tr_callable_call(void *ud, const GDExtensionConstVariantPtr *args, GDExtensionInt n,
                             GDExtensionVariantPtr ret, GDExtensionCallError *err) {
    gdb_take_queued();
    err->error = GDEXTENSION_CALL_OK;
    gdb_py_callable_call((intptr_t)ud, (const void *const *)args, n, ret, err);
}
static void tr_callable_free(void *ud) { gdb_take_queued(); gdb_py_callable_free((intptr_t)ud); }
/* Identity of a Python callable: two Callables made from equal Python callables (the same bound
 * method made twice) are equal, so is_connected/disconnect find a connection made earlier. */
static uint32_t tr_callable_hash(void *ud) { gdb_take_queued(); return (uint32_t)gdb_py_callable_info((intptr_t)ud, 0, 0); }
static GDExtensionBool tr_callable_equal(void *a, void *b) {
    gdb_take_queued();
    return a == b || gdb_py_callable_info((intptr_t)a, 1, (intptr_t)b) != 0;
}
static GDExtensionBool tr_callable_less(void *a, void *b) { gdb_take_queued(); return gdb_py_callable_info((intptr_t)a, 2, (intptr_t)b) != 0; }
static GDExtensionInt tr_callable_argc(void *ud, GDExtensionBool *valid) {
    gdb_take_queued();
    int64_t n = gdb_py_callable_info((intptr_t)ud, 3, 0);
    *valid = n >= 0;
    return n < 0 ? 0 : n;
}
/* str() of the Callable is str() of the Python callable (its __str__). */
static void tr_callable_to_string(void *ud, GDExtensionBool *valid, GDExtensionStringPtr out) {
    gdb_take_queued();
    gdb_py_callable_to_string((intptr_t)ud, valid, out);
}
/* A Callable that calls a Python function (id `id`); invalid once object `object_id` is freed. */
static void gdb_fill_callable_info(GDExtensionCallableCustomInfo2 *info, intptr_t id, uint64_t object_id) {
    info->callable_userdata = (void *)id;
    info->token = gdb_library;
    info->object_id = object_id;
    info->call_func = tr_callable_call;
    info->free_func = tr_callable_free;
    info->hash_func = tr_callable_hash;
    info->equal_func = tr_callable_equal;
    info->less_than_func = tr_callable_less;
    info->get_argument_count_func = tr_callable_argc;
    info->to_string_func = tr_callable_to_string;
}
static void tr_reference(GDExtensionClassInstancePtr inst) { gdb_take_queued(); gdb_py_reference((intptr_t)inst, 1); }
static void tr_unreference(GDExtensionClassInstancePtr inst) { gdb_take_queued(); gdb_py_reference((intptr_t)inst, 0); }
static void *tr_binding_create(void *token, void *instance) { return NULL; }
static void tr_binding_free(void *token, void *instance, void *binding) {}
static GDExtensionBool tr_binding_reference(void *token, void *binding, GDExtensionBool reference) { return 1; }

/* Dynamic properties: `_property_can_revert`, `_property_get_revert` of a Python class (one Python
 * callback, `op` says which), `_get_property_list`, and `_set`/`_get` (below, in C). */
enum { GDB_PROP_CAN_REVERT = 2, GDB_PROP_GET_REVERT = 3 };
/* `_set` and `_get` run for every property set or read by name (the declared ones too), so they are
 * called here, straight through the C API, like the fast methods: the instance pointer is the
 * Python object, the name a StringName, the value boxed in C; an exception is reported. */
static GDExtensionBool tr_set(GDExtensionClassInstancePtr inst, GDExtensionConstStringNamePtr name,
                              GDExtensionConstVariantPtr value) {
    gdb_take_queued();
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *key = gdb_text_to_py(name, GDEXTENSION_VARIANT_TYPE_STRING_NAME);
    PyObject *boxed = key ? gdb_variant_to_py(value) : NULL;
    PyObject *r = boxed ? PyObject_CallMethodObjArgs((PyObject *)inst, gdb_name_set, key, boxed, NULL) : NULL;
    int handled = r ? PyObject_IsTrue(r) : 0;
    if (!r || handled < 0) gdb_report_pending();
    Py_XDECREF(r);
    Py_XDECREF(boxed);
    Py_XDECREF(key);
    gdb_settle();
    PyGILState_Release(gil);
    return handled == 1;
}
static GDExtensionBool tr_get(GDExtensionClassInstancePtr inst, GDExtensionConstStringNamePtr name,
                              GDExtensionVariantPtr ret) {
    gdb_take_queued();
    PyGILState_STATE gil = PyGILState_Ensure();
    int handled = 0;
    PyObject *key = gdb_text_to_py(name, GDEXTENSION_VARIANT_TYPE_STRING_NAME);
    PyObject *r = key ? PyObject_CallMethodOneArg((PyObject *)inst, gdb_name_get, key) : NULL;
    if (r && r != Py_None) {
        /* None: not handled (GDScript's convention); a value that cannot cross is reported. */
        i_variant_destroy(ret);
        handled = gdb_py_to_variant(ret, r);
    }
    if (!r || (r != Py_None && !handled)) gdb_report_pending();
    Py_XDECREF(r);
    Py_XDECREF(key);
    gdb_settle();
    PyGILState_Release(gil);
    return (GDExtensionBool)handled;
}
static GDExtensionBool tr_can_revert(GDExtensionClassInstancePtr inst, GDExtensionConstStringNamePtr name) {
    gdb_take_queued();
    return (GDExtensionBool)gdb_py_property((intptr_t)inst, GDB_PROP_CAN_REVERT, name, NULL);
}
static GDExtensionBool tr_get_revert(GDExtensionClassInstancePtr inst, GDExtensionConstStringNamePtr name,
                                     GDExtensionVariantPtr ret) {
    gdb_take_queued();
    return (GDExtensionBool)gdb_py_property((intptr_t)inst, GDB_PROP_GET_REVERT, name, ret);
}
static const GDExtensionPropertyInfo *tr_get_property_list(GDExtensionClassInstancePtr inst, uint32_t *count) {
    gdb_take_queued();
    *count = 0; /* stays 0 (with a NULL list) when the Python side fails */
    return gdb_py_property_list((intptr_t)inst, count);
}
static void tr_free_property_list(GDExtensionClassInstancePtr inst, const GDExtensionPropertyInfo *list,
                                  uint32_t count) {
    gdb_take_queued();
    gdb_py_free_property_list((intptr_t)inst, list);
}
/* Bits of `which`: 1 _set, 2 _get, 4 _get_property_list, 8 _property_can_revert/_property_get_revert. */
static void gdb_fill_class_properties(GDExtensionClassCreationInfo5 *info, int which) {
    info->set_func = (which & 1) ? tr_set : NULL;
    info->get_func = (which & 2) ? tr_get : NULL;
    info->get_property_list_func = (which & 4) ? tr_get_property_list : NULL;
    info->free_property_list_func = (which & 4) ? tr_free_property_list : NULL;
    info->property_can_revert_func = (which & 8) ? tr_can_revert : NULL;
    info->property_get_revert_func = (which & 8) ? tr_get_revert : NULL;
}

/* Fill a class creation struct with our trampolines; Python sets the flags and icon. */
static void gdb_fill_class_info(GDExtensionClassCreationInfo5 *info, intptr_t cls, int has_notification,
                                int has_validate, int refcounted) {
    info->reference_func = refcounted ? tr_reference : NULL;
    info->unreference_func = refcounted ? tr_unreference : NULL;
    info->create_instance_func = tr_create;
    info->free_instance_func = tr_free;
    info->recreate_instance_func = tr_recreate;
    info->get_virtual_call_data_func = tr_get_virtual;
    info->call_virtual_with_data_func = tr_call_virtual;
    info->notification_func = has_notification ? tr_notification : NULL;
    info->validate_property_func = has_validate ? tr_validate_property : NULL;
    info->to_string_func = tr_to_string;
    info->class_userdata = (void *)cls;
}
static void gdb_fill_method_info(GDExtensionClassMethodInfo *info, intptr_t mid) {
    info->method_userdata = (void *)mid;
    info->call_func = tr_method_call;
    info->ptrcall_func = tr_method_ptrcall;
}

/* The addon's own Python runtime, a prefix folder `python/` beside this library (in the addon's
 * bin/, or beside an exported game's binary). When it is there, Python is started here, before
 * cffi would: isolated (no PYTHON* variables, no user site, no current directory on sys.path),
 * UTF-8, home = that folder, Python's signal handlers left to the engine. cffi's embedding start
 * then finds Python running. Without it cffi starts Python the default way (and the init code says
 * what is missing unless NPC_MIND_PYTHON names an interpreter). */
static char gdb_runtime_home[4096];
static const char *gdb_bundled_home(void) { return gdb_runtime_home; }

static void gdb_start_bundled_python(void) {
    char real[PATH_MAX], probe[PATH_MAX + 64];
    if (Py_IsInitialized() || !gdb_self_path[0] || !realpath(gdb_self_path, real)) return;
    char *slash = strrchr(real, '/');
    if (!slash) return;
    *slash = 0;
    /* The landmark: the runtime's standard library, zipped bytecode (tools/provision/package.py). */
    snprintf(probe, sizeof(probe), "%s/python/lib/python%d%d.zip", real, PY_MAJOR_VERSION, PY_MINOR_VERSION);
    if (access(probe, R_OK) != 0) return;
    int length = snprintf(gdb_runtime_home, sizeof(gdb_runtime_home), "%s/python", real);
    if (length < 0 || (size_t)length >= sizeof(gdb_runtime_home)) { gdb_runtime_home[0] = 0; return; }
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    PyStatus status = Py_PreInitialize(&pre);
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    if (!PyStatus_Exception(status)) status = PyConfig_SetBytesString(&config, &config.home, gdb_runtime_home);
    if (!PyStatus_Exception(status)) status = PyConfig_SetBytesString(&config, &config.program_name, "godot");
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        char text[5120];
        snprintf(text, sizeof(text), "gdbridge: Python could not start from %s: %s", gdb_runtime_home,
                 status.err_msg ? status.err_msg : "unknown error");
        gdb_runtime_home[0] = 0;
        if (i_print_error) i_print_error(text, text, "gdbridge", "python", 0, 1);
        else fprintf(stderr, "ERROR: %s\n", text);
        return;
    }
    PyEval_SaveThread(); /* cffi and every callback take the GIL with PyGILState_Ensure */
}

#define GDB_RESOLVE(var, name) var = (void *)gdb_gpa(name)

/* The entry symbol named in the .gdextension file. */
__attribute__((visibility("default"))) GDExtensionBool gdbridge_entry(GDExtensionInterfaceGetProcAddress gpa,
                                                                      GDExtensionClassLibraryPtr library,
                                                                      GDExtensionInitialization *init) {
    gdb_gpa = gpa;
    gdb_library = library;
    GDB_RESOLVE(i_print_error, "print_error_with_message");
    GDB_RESOLVE(i_print_warning, "print_warning_with_message");
    GDB_RESOLVE(i_variant_get_type, "variant_get_type");
    GDB_RESOLVE(i_variant_destroy, "variant_destroy");
    GDB_RESOLVE(i_variant_new_copy, "variant_new_copy");
    GDB_RESOLVE(i_variant_new_nil, "variant_new_nil");
    GDB_RESOLVE(i_string_new_utf8, "string_new_with_utf8_chars_and_len2");
    GDB_RESOLVE(i_string_to_utf8, "string_to_utf8_chars");
    GDB_RESOLVE(i_string_name_new_utf8, "string_name_new_with_utf8_chars_and_len");
    GDB_RESOLVE(i_string_to_utf32, "string_to_utf32_chars");
    GDB_RESOLVE(i_string_index_const, "string_operator_index_const");
    GDB_RESOLVE(i_method_bind_call, "object_method_bind_call");
    GDB_RESOLVE(i_method_bind_ptrcall, "object_method_bind_ptrcall");
    GDB_RESOLVE(i_get_instance_binding, "object_get_instance_binding");
    GDB_RESOLVE(i_array_index, "array_operator_index");
    GDB_RESOLVE(i_dictionary_index, "dictionary_operator_index");
    GDB_RESOLVE(i_get_ptr_constructor, "variant_get_ptr_constructor");
    GDB_RESOLVE(i_get_ptr_destructor, "variant_get_ptr_destructor");
    GDB_RESOLVE(i_get_from_type, "get_variant_from_type_constructor");
    GDB_RESOLVE(i_get_to_type, "get_variant_to_type_constructor");
    GDB_RESOLVE(i_get_internal_ptr, "variant_get_ptr_internal_getter");
    for (int t = 1; t < GDB_TYPES; t++) {
        g_from_type[t] = i_get_from_type((GDExtensionVariantType)t);
        g_to_type[t] = i_get_to_type((GDExtensionVariantType)t);
        g_internal_ptr[t] = i_get_internal_ptr((GDExtensionVariantType)t);
        g_destructor[t] = i_get_ptr_destructor((GDExtensionVariantType)t);
        g_default_constructor[t] = i_get_ptr_constructor((GDExtensionVariantType)t, 0);
    }
    gdb_start_bundled_python();
    gdb_binding_callbacks.create_callback = tr_binding_create;
    gdb_binding_callbacks.free_callback = tr_binding_free;
    gdb_binding_callbacks.reference_callback = tr_binding_reference;
    init->minimum_initialization_level = GDEXTENSION_INITIALIZATION_SCENE;
    init->userdata = NULL;
    init->initialize = tr_initialize;
    init->deinitialize = tr_deinitialize;
    return 1;
}
