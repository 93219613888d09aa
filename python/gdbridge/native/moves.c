/* Moves of many CharacterBody2D/3D in one crossing (the MoveActions' physics pass): each body's
 * velocity set, its facing turned and move_and_slide called, by ptrcall with the engine's own
 * methods, with no Variant and no script between (a script loop costs about a microsecond and a
 * half a body). Included after poses.c, whose class tags and casts it shares. */

enum { GDB_MOVE_SKIP = 0, GDB_MOVE_HALT = 1, GDB_MOVE_GO = 2, GDB_MOVE_FACE = 4, GDB_MOVE_KEEP_VERTICAL = 8 };

/* A float64 buffer of exactly `count` numbers (`what` names it in the error). */
static int gdb_doubles(PyObject *from, Py_buffer *view, Py_ssize_t count, const char *what) {
    if (PyObject_GetBuffer(from, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->itemsize == 8 && view->format && strcmp(view->format, "d") == 0 && view->len == count * 8) return 0;
    PyBuffer_Release(view);
    PyErr_Format(PyExc_ValueError, "moves(): %s must be float64, %zd numbers", what, count);
    return -1;
}

/* moves(dimension, binds, ids, velocities, yaws, modes): binds is (set_velocity, get_velocity,
 * move_and_slide, set_global_rotation, get_global_rotation) of CharacterBody2D/Node2D or of
 * CharacterBody3D/Node3D; per body (ids: 8-byte instance ids; velocities: float64, dimension a
 * body; yaws: float64; modes: uint8) the mode says what: HALT sets the velocity only, GO sets it,
 * turns the body to the yaw with FACE (2D: its rotation; 3D: its rotation about y) and calls
 * move_and_slide; KEEP_VERTICAL keeps a 3D body's own vertical velocity. A body that is 0,
 * freed or not a CharacterBody of the dimension is skipped. Main thread only, as physics is. */
static PyObject *gdb_fast_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "moves(dimension, binds, ids, velocities, yaws, modes) takes 6 arguments");
        return NULL;
    }
    long dimension = PyLong_AsLong(args[0]);
    if (PyErr_Occurred()) return NULL;
    void *binds[5];
    if (!PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != 5 || (dimension != 2 && dimension != 3)) {
        PyErr_SetString(PyExc_ValueError, "moves(): a dimension of 2 or 3 and a tuple of 5 method binds");
        return NULL;
    }
    for (int k = 0; k < 5; k++) {
        binds[k] = PyLong_AsVoidPtr(PyTuple_GET_ITEM(args[1], k));
        if (!binds[k]) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "moves(): a method bind is 0");
            return NULL;
        }
    }
    if (!gdb_on_main_thread()) {
        PyErr_SetString(PyExc_RuntimeError, "moves(): main thread only (physics is not thread-safe)");
        return NULL;
    }
    gdb_tags_ready();
    void *tag = dimension == 2 ? gdb_body2d_tag : gdb_body3d_tag;
    Py_buffer ids, velocities, yaws, modes;
    if (PyObject_GetBuffer(args[2], &ids, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    Py_ssize_t count = ids.len / 8;
    if (ids.itemsize != 8 || !tag) {
        PyBuffer_Release(&ids);
        PyErr_SetString(PyExc_ValueError, "moves(): ids must be 8-byte integers");
        return NULL;
    }
    if (gdb_doubles(args[3], &velocities, count * dimension, "velocities (ids x dimension)") < 0) {
        PyBuffer_Release(&ids);
        return NULL;
    }
    if (gdb_doubles(args[4], &yaws, count, "yaws (one a body)") < 0) {
        PyBuffer_Release(&ids);
        PyBuffer_Release(&velocities);
        return NULL;
    }
    if (PyObject_GetBuffer(args[5], &modes, PyBUF_C_CONTIGUOUS) < 0 || modes.len != count) {
        if (!PyErr_Occurred()) {
            PyBuffer_Release(&modes);
            PyErr_SetString(PyExc_ValueError, "moves(): modes must be one byte a body");
        }
        PyBuffer_Release(&ids);
        PyBuffer_Release(&velocities);
        PyBuffer_Release(&yaws);
        return NULL;
    }
    const uint64_t *id = (const uint64_t *)ids.buf;
    const double *velocity = (const double *)velocities.buf, *yaw = (const double *)yaws.buf;
    const uint8_t *mode = (const uint8_t *)modes.buf;
    for (Py_ssize_t i = 0; i < count; i++, velocity += dimension) {
        int what = mode[i] & 3;
        void *body = what == GDB_MOVE_SKIP ? NULL : gdb_object_from_id(id[i]);
        if (!body || !i_cast_to(body, tag)) continue;
        float set[3] = {(float)velocity[0], (float)velocity[1], dimension == 3 ? (float)velocity[2] : 0.0f};
        if (dimension == 3 && (mode[i] & GDB_MOVE_KEEP_VERTICAL)) {
            float own[3];
            i_method_bind_ptrcall(binds[1], body, NULL, own);
            set[1] = own[1];
        }
        const void *velocity_arg[1] = {set};
        i_method_bind_ptrcall(binds[0], body, velocity_arg, NULL);
        if (what != GDB_MOVE_GO) continue;
        if (mode[i] & GDB_MOVE_FACE) {
            if (dimension == 2) {
                double angle = yaw[i]; /* a float argument goes by ptrcall as a double */
                const void *angle_arg[1] = {&angle};
                i_method_bind_ptrcall(binds[3], body, angle_arg, NULL);
            } else {
                float turned[3];
                i_method_bind_ptrcall(binds[4], body, NULL, turned);
                turned[1] = (float)yaw[i];
                const void *turned_arg[1] = {turned};
                i_method_bind_ptrcall(binds[3], body, turned_arg, NULL);
            }
        }
        uint8_t slid = 0;
        i_method_bind_ptrcall(binds[2], body, NULL, &slid);
    }
    PyBuffer_Release(&ids);
    PyBuffer_Release(&velocities);
    PyBuffer_Release(&yaws);
    PyBuffer_Release(&modes);
    Py_RETURN_NONE;
}
