/* Engine -> Python method calls on the fast path: arguments boxed here, the Python function
 * called with vectorcall, the result stored as the engine wants it. */

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
