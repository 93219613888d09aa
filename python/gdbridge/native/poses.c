/* Poses of many nodes in one crossing (the senses' eyes): each node's global position and unit
 * facing (2D: the transform's x axis; 3D: -z), read with the engine's own getter by ptrcall, with
 * no Variant and no script between. A per-node script loop costs about a microsecond a node in a
 * debug engine; this costs a few tens of nanoseconds. */

static GDExtensionInterfaceClassdbGetClassTag i_class_tag;
static GDExtensionInterfaceObjectCastTo i_cast_to;
static void *gdb_node2d_tag, *gdb_node3d_tag, *gdb_body2d_tag, *gdb_body3d_tag;

/* The engine's tag of the class `name` (NULL: no such class). */
static void *gdb_class_tag(const char *name) {
    uint64_t class_name[1] = {0}; /* a StringName is one pointer */
    i_string_name_new_utf8(class_name, name, (GDExtensionInt)strlen(name));
    void *tag = (void *)i_class_tag(class_name);
    g_destructor[GDEXTENSION_VARIANT_TYPE_STRING_NAME](class_name);
    return tag;
}

/* The cast and the class tags of the batched node calls (poses, moves), found on first use. */
static void gdb_tags_ready(void) {
    if (i_class_tag) return;
    i_class_tag = (GDExtensionInterfaceClassdbGetClassTag)gdb_gpa("classdb_get_class_tag");
    i_cast_to = (GDExtensionInterfaceObjectCastTo)gdb_gpa("object_cast_to");
    gdb_node2d_tag = gdb_class_tag("Node2D");
    gdb_node3d_tag = gdb_class_tag("Node3D");
    gdb_body2d_tag = gdb_class_tag("CharacterBody2D");
    gdb_body3d_tag = gdb_class_tag("CharacterBody3D");
}

/* A component of a vector normalized as Vector2/Vector3::normalize do it (a zero vector stays zero). */
static double gdb_normalized(float value, float length_squared) {
    return length_squared != 0.0f ? (double)(value / sqrtf(length_squared)) : 0.0;
}

/* poses(get_global_transform bind, dimension, ids, out): for each instance id (uint64 buffer),
 * 2 x dimension float64s into `out` (position, then unit facing); NaNs for an id that is 0, freed,
 * or not a Node2D (dimension 2) / Node3D (3). The bind is get_global_transform of CanvasItem (a
 * Node2D's) or Node3D, as the dimension says. Main thread only, as the scene tree is. */
static PyObject *gdb_fast_poses(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "poses(method_bind, dimension, ids, out) takes 4 arguments");
        return NULL;
    }
    void *mb = PyLong_AsVoidPtr(args[0]);
    long dimension = PyLong_AsLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    if (!mb || (dimension != 2 && dimension != 3)) {
        PyErr_SetString(PyExc_ValueError, "poses(): a method bind and a dimension of 2 or 3");
        return NULL;
    }
    if (!gdb_on_main_thread()) {
        PyErr_SetString(PyExc_RuntimeError, "poses(): main thread only (the scene tree is not thread-safe)");
        return NULL;
    }
    gdb_tags_ready();
    void *tag = dimension == 2 ? gdb_node2d_tag : gdb_node3d_tag;
    Py_buffer ids, out;
    if (PyObject_GetBuffer(args[2], &ids, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(args[3], &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&ids);
        return NULL;
    }
    Py_ssize_t count = ids.len / 8, width = 2 * dimension;
    int shaped = ids.itemsize == 8 && out.itemsize == 8 && out.format && strcmp(out.format, "d") == 0 &&
                 out.len == count * width * 8 && tag;
    if (!shaped) {
        PyBuffer_Release(&ids);
        PyBuffer_Release(&out);
        PyErr_SetString(PyExc_ValueError, "poses(): ids must be 8-byte integers, out float64 of ids x 2 x dimension");
        return NULL;
    }
    const uint64_t *id = (const uint64_t *)ids.buf;
    double *pose = (double *)out.buf;
    float t[12]; /* Transform2D: x, y, origin; Transform3D: basis rows, origin (real_t is float) */
    for (Py_ssize_t i = 0; i < count; i++, pose += width) {
        void *obj = gdb_object_from_id(id[i]);
        if (!obj || !i_cast_to(obj, tag)) {
            for (Py_ssize_t k = 0; k < width; k++) pose[k] = NAN;
            continue;
        }
        i_method_bind_ptrcall(mb, obj, NULL, t);
        if (dimension == 2) {
            float length_squared = t[0] * t[0] + t[1] * t[1];
            pose[0] = t[4], pose[1] = t[5];
            pose[2] = gdb_normalized(t[0], length_squared), pose[3] = gdb_normalized(t[1], length_squared);
        } else {
            float zx = t[2], zy = t[5], zz = t[8]; /* basis.z: the third column */
            float length_squared = zx * zx + zy * zy + zz * zz;
            pose[0] = t[9], pose[1] = t[10], pose[2] = t[11];
            pose[3] = -gdb_normalized(zx, length_squared), pose[4] = -gdb_normalized(zy, length_squared);
            pose[5] = -gdb_normalized(zz, length_squared);
        }
    }
    PyBuffer_Release(&ids);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}
