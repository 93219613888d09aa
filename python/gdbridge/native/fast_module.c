/* The CPython module `_gdbridge_fast`: the calls Python makes into this layer without cffi's
 * wrappers (engine calls, conversions, the queued and answered tables). */

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

static PyObject *gdb_fast_frame_seconds(PyObject *self, PyObject *unused); /* (classes.c) */
static PyObject *gdb_fast_set_frame_hook(PyObject *self, PyObject *hook); /* (classes.c) */
static PyMethodDef gdb_fast_methods[] = {
    {"call", (PyCFunction)(void (*)(void))gdb_fast_call, METH_FASTCALL, "Call an engine method bind."},
    {"emit_all", (PyCFunction)(void (*)(void))gdb_fast_emit_all, METH_FASTCALL, "Call a method bind on many objects."},
    {"fill", (PyCFunction)(void (*)(void))gdb_fast_fill, METH_FASTCALL, "Fill a Dictionary or an Array."},
    {"poses", (PyCFunction)(void (*)(void))gdb_fast_poses, METH_FASTCALL, "Many nodes' positions and facings."},
    {"moves", (PyCFunction)(void (*)(void))gdb_fast_moves, METH_FASTCALL, "Many CharacterBodies' moves."},
    {"read", (PyCFunction)(void (*)(void))gdb_fast_read, METH_FASTCALL, "An Array or a Dictionary as list or dict."},
    {"settle", gdb_fast_settle, METH_NOARGS, "Settle the RefCounted objects of the callback ending."},
    {"dropped", gdb_fast_dropped, METH_NOARGS, "Ids of the held RefCounted objects Python let go of."},
    {"forget_texts", gdb_fast_forget_texts, METH_NOARGS, "Empty the cache of Strings made for interned strs."},
    {"take_queued", gdb_fast_take_queued, METH_NOARGS, "Hand the queued calls to Python now."},
    {"queued_total", gdb_fast_queued_total, METH_NOARGS, "How many calls were queued since start."},
    {"frame_seconds", gdb_fast_frame_seconds, METH_NOARGS, "The last main-loop frame callback's whole time (s)."},
    {"queued_names_add", (PyCFunction)(void (*)(void))gdb_fast_queued_names_add, METH_FASTCALL,
     "Number names for a queued method's StringName parameter."},
    {"answers_set", (PyCFunction)(void (*)(void))gdb_fast_answers_set, METH_FASTCALL, "Set an answered method's answers."},
    {"answers_close", (PyCFunction)(void (*)(void))gdb_fast_answers_close, METH_FASTCALL, "Close a key's answers."},
    {"answers_clear", gdb_fast_answers_clear, METH_O, "Clear an answered method's answers."},
    {"answers_asked", gdb_fast_answers_asked, METH_O, "The pairs answered from the table since the last read."},
    {"choices_put", (PyCFunction)(void (*)(void))gdb_fast_choices_put, METH_FASTCALL, "Put a chosen method's answers."},
    {"choices_close", (PyCFunction)(void (*)(void))gdb_fast_choices_close, METH_FASTCALL, "Close a key's answers."},
    {"choices_clear", gdb_fast_choices_clear, METH_O, "Clear a chosen method's answers."},
    {"choices_moved", (PyCFunction)(void (*)(void))gdb_fast_choices_moved, METH_FASTCALL,
     "A key's newest numbers, when its check answered other ones."},
    {"checked_total", gdb_fast_checked_total, METH_NOARGS, "How many calls a check answered since start."},
    {"answered_total", gdb_fast_answered_total, METH_NOARGS, "How many calls were answered in C since start."},
    {"update_busy", gdb_fast_update_busy, METH_O, "Raise (1) or lower (0) the update thread's flag."},
    {"update_waited", gdb_fast_update_waited, METH_NOARGS, "The main thread's seconds of waiting for the flag, since the last read."},
    {"set_frame_hook", gdb_fast_set_frame_hook, METH_O, "hook(): what the main loop's frame callback calls (None: nothing)."},
    {"queue_key", (PyCFunction)(void (*)(void))gdb_fast_queue_key, METH_FASTCALL, "Set an instance's queue key."},
    {"frame_setup", (PyCFunction)(void (*)(void))gdb_fast_frame_setup, METH_FASTCALL,
     "What the update thread's frame emits with and reads."},
    {"frame_arm", gdb_fast_frame_arm, METH_O, "The next frame may run on the update thread, emitting these first."},
    {"frame_wait", gdb_fast_frame_wait, METH_NOARGS, "On the update thread: the next frame handed to it, or None."},
    {"frame_disarm", gdb_fast_frame_disarm_py, METH_NOARGS, "The next frame is Python's."},
    {"emit_prepared", gdb_fast_emit_prepared, METH_NOARGS, "Emit the signals an update armed with, now."},
    {"fast_frames", gdb_fast_frames, METH_NOARGS, "How many frames ran on the update thread since start."},
    {"frame_rest", gdb_fast_frame_rest, METH_O, "The server rests: frames are kept in C, handed to take at the next door."},
    {"rested_frames", gdb_fast_rested_frames, METH_NOARGS, "How many frames a resting server kept in C since start."},
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
