/* The engine's interface: its functions (resolved in gdbridge_entry), errors and printing,
 * Variants, Strings, Arrays, calls into the engine and objects by instance id. */

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
