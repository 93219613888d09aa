/* Start-up: the addon's own Python runtime, and the entry symbol the .gdextension file names. */

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
    gdb_main_thread = pthread_self(); /* the engine loads extensions on its main thread */
    gdb_main_thread_known = 1;
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
