/* The trampolines with the engine's signatures (class, method, virtual, Callable and property
 * callbacks) and the structs that register a class with them. */

/* ---- trampolines with the engine's signatures ---- */
static void tr_initialize(void *ud, GDExtensionInitializationLevel level) { gdb_take_queued(); gdb_py_initialize((int)level); }
static void tr_deinitialize(void *ud, GDExtensionInitializationLevel level) { gdb_take_queued(); gdb_py_deinitialize((int)level); }
/* The main loop's per-frame callback (Godot 4.5+): after every node's _process, owned by no node, so
 * no game code can remove it. 0 when the engine has no such interface function. It calls the hooks'
 * runner (set_frame_hook) through the C API: no cffi callback's set-up, once a frame. Its whole time
 * is kept (frame_seconds): the queued calls' hand-over and the wait for the GIL come before Python's
 * own clock starts. */
static double gdb_frame_seconds;
static PyObject *gdb_frame_hook; /* owned: set_frame_hook's callable, or NULL */
static void tr_frame(void) {
    double started = gdb_monotonic();
    if (!gdb_fast_frame() && !gdb_rest_frame()) {
        gdb_take_queued();
        if (gdb_frame_hook) {
            PyGILState_STATE gil = PyGILState_Ensure();
            PyObject *done = PyObject_CallNoArgs(gdb_frame_hook);
            if (!done) gdb_report_pending();
            Py_XDECREF(done);
            gdb_settle();
            PyGILState_Release(gil);
        }
    }
    gdb_frame_seconds = gdb_monotonic() - started;
}
static PyObject *gdb_fast_set_frame_hook(PyObject *self, PyObject *hook) {
    if (hook != Py_None && !PyCallable_Check(hook)) {
        PyErr_SetString(PyExc_TypeError, "set_frame_hook(hook) takes a callable or None");
        return NULL;
    }
    Py_XSETREF(gdb_frame_hook, hook == Py_None ? NULL : Py_NewRef(hook));
    Py_RETURN_NONE;
}
static PyObject *gdb_fast_frame_seconds(PyObject *self, PyObject *unused) { return PyFloat_FromDouble(gdb_frame_seconds); }
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
    if (mid < chosen_methods_cap && gdb_choice_call(mid, inst, (const void *const *)args, n, 1, ret)) return;
    gdb_take_queued_before(mid);
    if (mid < fast_methods_cap && fast_methods[mid].func && gdb_fast_varcall(&fast_methods[mid], inst, args, n, ret))
        return;
    gdb_py_call((intptr_t)mud, (intptr_t)inst, (const void *const *)args, n, ret, err);
}
static void tr_method_ptrcall(void *mud, GDExtensionClassInstancePtr inst, const GDExtensionConstTypePtr *args,
                              GDExtensionTypePtr ret) {
    intptr_t mid = (intptr_t)mud;
    if (mid < queued_methods_cap && gdb_queue_call(mid, inst, (const void *const *)args, -1, 0)) return;
    if (mid < answered_methods_cap && gdb_answer_call(mid, inst, (const void *const *)args, 1, 0, ret)) return;
    if (mid < chosen_methods_cap && gdb_choice_call(mid, inst, (const void *const *)args, 1, 0, ret)) return;
    gdb_take_queued_before(mid);
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
