// Work run at once on the calling thread, with no Python between its steps (the CPython module pytc.runtime._immediate).
// What it needs is handed to it when it is made or armed; of the objects handed to it, it reads only the public
// attributes named below.
//
// ExecutionLock(): the CPU queue's execution lock, a plain lock (acquire(blocking=True), release()) that this module's C
// takes without calling Python, and `outstanding`, how many buffers were submitted to the queue and have not finished
// (the queue counts them). It may be released by another thread than the one that acquired it, as threading.Lock.
//
// Immediate(command_buffer, run, execution, device, changed, stopped, show=None, brief=False): calling it executes the
// buffer with pytc_queue_run (`run`, its address) when the CPU queue is idle: `device.error` None (an HCQDevice that did
// not stop), `execution` (the queue's ExecutionLock) free and nothing outstanding. It returns whether it ran; it
// declines (False) otherwise, leaving the buffer to a submission. `show` (or None) is called before each run. A `brief`
// buffer runs holding the GIL (its work is shorter than letting go of the GIL and taking it back, and no packet of it
// waits); others let other Python threads run meanwhile. After each SIGNAL, when `changed` (the device's Changes) counts
// threads `waiting`, its notify_waiters() wakes them; a packet that fails is handed to stopped(command_buffer, offset,
// status), which raises.
//
// Replay(fallback), TinyJit's base: arm(...) gives it a replay to run, disarm() takes it back, `armed` says whether it
// has one. A call whose positional arguments are `input_type` instances whose `input_attribute` is, one by one, the
// object in `inputs` (and no keywords), while `captures_attribute` of `captures` is empty (no capture in progress on this
// thread), runs `run` (an Immediate), adds each (name, amount) pair of `counts` to that attribute of `counters` and
// returns `result`. Any other call, or one the queue declines, goes to fallback(*args, **kwargs). The graph's own lock is
// not taken: the queue's execution lock already keeps any other run of the buffer out while this one executes, and a
// graph run elsewhere that finds the queue busy submits.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <structmember.h>

#include "hcq_codes.h"

typedef int (*queue_run_fn)(const uint8_t *buffer, uint64_t nbytes, uint64_t *offset, int64_t timeout_ns);
enum { RUN, RESULT, INPUT_TYPE, INPUT_ATTRIBUTE, INPUTS, CAPTURES, CAPTURES_ATTRIBUTE, COUNTERS, COUNTS, ARMED_FIELDS };

static PyObject *s_error, *s_waiting, *s_notify_waiters;

typedef struct {
  PyObject_HEAD
  PyThread_type_lock lock;
  int held;                 // read and written holding the GIL
  Py_ssize_t outstanding;  // read and written holding the GIL
} ExecutionLock;

static PyObject *execution_lock_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "ExecutionLock() takes no arguments");
    return NULL;
  }
  ExecutionLock *self = (ExecutionLock *)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  if ((self->lock = PyThread_allocate_lock()) == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

// Takes the lock without blocking: whether it did.
static int execution_lock_try(ExecutionLock *self) {
  if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) return 0;
  self->held = 1;
  return 1;
}

static void execution_lock_release_held(ExecutionLock *self) {
  self->held = 0;
  PyThread_release_lock(self->lock);
}

static PyObject *execution_lock_acquire(ExecutionLock *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"blocking", NULL};
  int blocking = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:acquire", names, &blocking)) return NULL;
  if (execution_lock_try(self)) Py_RETURN_TRUE;
  if (!blocking) Py_RETURN_FALSE;
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS
  self->held = 1;
  Py_RETURN_TRUE;
}

static PyObject *execution_lock_release(ExecutionLock *self, PyObject *unused) {
  if (!self->held) {
    PyErr_SetString(PyExc_RuntimeError, "release of an ExecutionLock that is not held");
    return NULL;
  }
  execution_lock_release_held(self);
  Py_RETURN_NONE;
}

static void execution_lock_dealloc(ExecutionLock *self) {
  if (self->lock != NULL) PyThread_free_lock(self->lock);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef execution_lock_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))execution_lock_acquire, METH_VARARGS | METH_KEYWORDS,
     "acquire(blocking=True): take the lock, waiting for it without the GIL; with blocking=False only if free. Whether taken."},
    {"release", (PyCFunction)execution_lock_release, METH_NOARGS, "release(): let go of the lock (RuntimeError when not held)."},
    {NULL},
};

static PyMemberDef execution_lock_members[] = {
    {"outstanding", T_PYSSIZET, offsetof(ExecutionLock, outstanding), 0,
     "How many buffers were submitted to the queue and have not finished (an immediate run needs none)."},
    {NULL},
};

static PyTypeObject ExecutionLockType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pytc.runtime._immediate.ExecutionLock",
    .tp_basicsize = sizeof(ExecutionLock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The CPU queue's execution lock, taken by C without calling Python, and its count of outstanding buffers.",
    .tp_new = execution_lock_new,
    .tp_dealloc = (destructor)execution_lock_dealloc,
    .tp_methods = execution_lock_methods,
    .tp_members = execution_lock_members,
};

typedef struct {
  PyObject_HEAD
  PyObject *buffer, *execution, *device, *changed, *stopped, *show;
  queue_run_fn run;
  int brief;
} Immediate;

static int immediate_init(Immediate *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"command_buffer", "run", "execution", "device", "changed", "stopped", "show", "brief", NULL};
  PyObject *buffer, *execution, *device, *changed, *stopped, *show = Py_None;
  unsigned long long run;
  int brief = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "SKO!OOO|Op", names, &buffer, &run, &ExecutionLockType, &execution, &device,
                                   &changed, &stopped, &show, &brief))
    return -1;
  if (run == 0) {
    PyErr_SetString(PyExc_ValueError, "Immediate needs the address of pytc_queue_run");
    return -1;
  }
  if (!PyCallable_Check(stopped) || (show != Py_None && !PyCallable_Check(show))) {
    PyErr_SetString(PyExc_TypeError, "Immediate needs a callable `stopped`, and a callable or None `show`");
    return -1;
  }
  Py_XSETREF(self->buffer, Py_NewRef(buffer));
  Py_XSETREF(self->execution, Py_NewRef(execution));
  Py_XSETREF(self->device, Py_NewRef(device));
  Py_XSETREF(self->changed, Py_NewRef(changed));
  Py_XSETREF(self->stopped, Py_NewRef(stopped));
  Py_XSETREF(self->show, Py_NewRef(show));
  self->run = (queue_run_fn)(uintptr_t)run;
  self->brief = brief;
  return 0;
}

static int wake_waiters(Immediate *self) {
  PyObject *waiting = PyObject_GetAttr(self->changed, s_waiting);
  if (waiting == NULL) return -1;
  int any = PyObject_IsTrue(waiting);
  Py_DECREF(waiting);
  if (any <= 0) return any;
  PyObject *done = PyObject_CallMethodNoArgs(self->changed, s_notify_waiters);
  if (done == NULL) return -1;
  Py_DECREF(done);
  return 0;
}

// Executes the buffer, the execution lock held and nothing outstanding: 1 ran, -1 error (a failing packet raised).
static int execute(Immediate *self) {
  if (self->show != Py_None) {
    PyObject *shown = PyObject_CallNoArgs(self->show);
    if (shown == NULL) return -1;
    Py_DECREF(shown);
  }
  const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(self->buffer);
  uint64_t nbytes = (uint64_t)PyBytes_GET_SIZE(self->buffer), offset = 0;
  int status;
  for (;;) {
    if (self->brief) status = self->run(data, nbytes, &offset, 0);
    else {
      Py_BEGIN_ALLOW_THREADS
      status = self->run(data, nbytes, &offset, 0);
      Py_END_ALLOW_THREADS
    }
    if (status != SIGNALED) break;
    if (wake_waiters(self) < 0) return -1;
    if (offset >= nbytes) return 1;
  }
  if (status == DONE) return 1;
  PyObject *raised = PyObject_CallFunction(self->stopped, "OKi", self->buffer, (unsigned long long)offset, status);
  if (raised != NULL) {
    Py_DECREF(raised);
    PyErr_SetString(PyExc_RuntimeError, "Immediate's `stopped` returned instead of raising");
  }
  return -1;
}

// 1 ran, 0 declined (stopped, busy or outstanding work), -1 error.
static int immediate_run(Immediate *self) {
  PyObject *error = PyObject_GetAttr(self->device, s_error);
  if (error == NULL) return -1;
  int stopped = error != Py_None;
  Py_DECREF(error);
  if (stopped) return 0;
  ExecutionLock *execution = (ExecutionLock *)self->execution;
  if (!execution_lock_try(execution)) return 0;
  int result = execution->outstanding ? 0 : execute(self);
  execution_lock_release_held(execution);
  return result;
}

static PyObject *immediate_call(Immediate *self, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "Immediate() takes no arguments");
    return NULL;
  }
  if (self->buffer == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Immediate was not initialized");
    return NULL;
  }
  int ran = immediate_run(self);
  return ran < 0 ? NULL : PyBool_FromLong(ran);
}

static int immediate_traverse(Immediate *self, visitproc visit, void *arg) {
  Py_VISIT(self->buffer);
  Py_VISIT(self->execution);
  Py_VISIT(self->device);
  Py_VISIT(self->changed);
  Py_VISIT(self->stopped);
  Py_VISIT(self->show);
  return 0;
}

static int immediate_clear(Immediate *self) {
  Py_CLEAR(self->buffer);
  Py_CLEAR(self->execution);
  Py_CLEAR(self->device);
  Py_CLEAR(self->changed);
  Py_CLEAR(self->stopped);
  Py_CLEAR(self->show);
  return 0;
}

static void immediate_dealloc(Immediate *self) {
  PyObject_GC_UnTrack(self);
  immediate_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject ImmediateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pytc.runtime._immediate.Immediate",
    .tp_basicsize = sizeof(Immediate),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A CPU queue's command buffer, run on the calling thread when the queue is idle (returns whether it ran).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)immediate_init,
    .tp_call = (ternaryfunc)immediate_call,
    .tp_traverse = (traverseproc)immediate_traverse,
    .tp_clear = (inquiry)immediate_clear,
    .tp_dealloc = (destructor)immediate_dealloc,
};

typedef struct {
  PyObject_HEAD
  PyObject *fallback, *armed;  // armed: NULL, or the tuple arm() was given, in the order of the enum above
} Replay;

static int replay_init(Replay *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"fallback", NULL};
  PyObject *fallback;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Replay", names, &fallback)) return -1;
  if (!PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "Replay needs a callable fallback");
    return -1;
  }
  Py_XSETREF(self->fallback, Py_NewRef(fallback));
  return 0;
}

static PyObject *replay_arm(Replay *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"run", "result", "input_type", "input_attribute", "inputs", "captures", "captures_attribute", "counters",
                          "counts", NULL};
  PyObject *run, *result, *input_type, *input_attribute, *inputs, *captures, *captures_attribute, *counters, *counts;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO!UO!OUOO!:arm", names, &ImmediateType, &run, &result, &PyType_Type, &input_type,
                                   &input_attribute, &PyTuple_Type, &inputs, &captures, &captures_attribute, &counters, &PyTuple_Type,
                                   &counts))
    return NULL;
  if (((Immediate *)run)->buffer == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Immediate was not initialized");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(counts); i++) {
    PyObject *pair = PyTuple_GET_ITEM(counts, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0))) {
      PyErr_SetString(PyExc_TypeError, "counts must be a tuple of (name, amount) pairs");
      return NULL;
    }
  }
  PyObject *armed = PyTuple_Pack(ARMED_FIELDS, run, result, input_type, input_attribute, inputs, captures, captures_attribute, counters, counts);
  if (armed == NULL) return NULL;
  Py_XSETREF(self->armed, armed);
  Py_RETURN_NONE;
}

static PyObject *replay_disarm(Replay *self, PyObject *unused) {
  Py_CLEAR(self->armed);
  Py_RETURN_NONE;
}

static PyObject *replay_is_armed(Replay *self, void *closure) { return PyBool_FromLong(self->armed != NULL); }

// Whether the positional arguments are the armed inputs, with no capture in progress on this thread.
static int same_inputs(PyObject *armed, PyObject *args) {
  PyObject *inputs = PyTuple_GET_ITEM(armed, INPUTS), *attribute = PyTuple_GET_ITEM(armed, INPUT_ATTRIBUTE);
  PyTypeObject *type = (PyTypeObject *)PyTuple_GET_ITEM(armed, INPUT_TYPE);
  Py_ssize_t count = PyTuple_GET_SIZE(args);
  if (PyTuple_GET_SIZE(inputs) != count) return 0;
  for (Py_ssize_t i = 0; i < count; i++) {
    PyObject *arg = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(arg, type)) return 0;
    PyObject *input = PyObject_GetAttr(arg, attribute);
    if (input == NULL) return -1;
    Py_DECREF(input);
    if (input != PyTuple_GET_ITEM(inputs, i)) return 0;
  }
  PyObject *captures = PyObject_GetAttr(PyTuple_GET_ITEM(armed, CAPTURES), PyTuple_GET_ITEM(armed, CAPTURES_ATTRIBUTE));
  if (captures == NULL) return -1;
  Py_ssize_t capturing = PyObject_Length(captures);
  Py_DECREF(captures);
  return capturing < 0 ? -1 : capturing == 0;
}

static int add_counts(PyObject *armed) {
  PyObject *counters = PyTuple_GET_ITEM(armed, COUNTERS), *counts = PyTuple_GET_ITEM(armed, COUNTS);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(counts); i++) {
    PyObject *pair = PyTuple_GET_ITEM(counts, i);
    PyObject *name = PyTuple_GET_ITEM(pair, 0), *count = PyObject_GetAttr(counters, name);
    if (count == NULL) return -1;
    PyObject *sum = PyNumber_Add(count, PyTuple_GET_ITEM(pair, 1));
    Py_DECREF(count);
    if (sum == NULL) return -1;
    int result = PyObject_SetAttr(counters, name, sum);
    Py_DECREF(sum);
    if (result < 0) return -1;
  }
  return 0;
}

// 1 replayed, 0 declined, -1 error.
static int replay_armed(PyObject *armed, PyObject *args) {
  int same = same_inputs(armed, args);
  if (same <= 0) return same;
  int ran = immediate_run((Immediate *)PyTuple_GET_ITEM(armed, RUN));
  if (ran == 1 && add_counts(armed) < 0) ran = -1;
  return ran;
}

static PyObject *replay_call(Replay *self, PyObject *args, PyObject *kwargs) {
  PyObject *armed = self->armed;
  if (armed != NULL && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0)) {
    Py_INCREF(armed);  // the Python it calls may disarm
    int ran = replay_armed(armed, args);
    PyObject *result = ran == 1 ? Py_NewRef(PyTuple_GET_ITEM(armed, RESULT)) : NULL;
    Py_DECREF(armed);
    if (ran != 0) return result;
  }
  if (self->fallback == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Replay was not initialized");
    return NULL;
  }
  PyObject *fallback = Py_NewRef(self->fallback);
  PyObject *result = PyObject_Call(fallback, args, kwargs);
  Py_DECREF(fallback);
  return result;
}

static int replay_traverse(Replay *self, visitproc visit, void *arg) {
  Py_VISIT(self->fallback);
  Py_VISIT(self->armed);
  return 0;
}

static int replay_clear(Replay *self) {
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->armed);
  return 0;
}

static void replay_dealloc(Replay *self) {
  PyObject_GC_UnTrack(self);
  replay_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef replay_methods[] = {
    {"arm", (PyCFunction)(void (*)(void))replay_arm, METH_VARARGS | METH_KEYWORDS,
     "arm(run, result, input_type, input_attribute, inputs, captures, captures_attribute, counters, counts): what a call of the "
     "same inputs replays without Python (see the module's description)."},
    {"disarm", (PyCFunction)replay_disarm, METH_NOARGS, "disarm(): every call goes to the fallback."},
    {NULL},
};

static PyGetSetDef replay_getset[] = {
    {"armed", (getter)replay_is_armed, NULL, "Whether a call of the armed inputs replays without Python.", NULL},
    {NULL},
};

static PyTypeObject ReplayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pytc.runtime._immediate.Replay",
    .tp_basicsize = sizeof(Replay),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Replay(fallback): a callable replaying its armed capture in C when called with the same inputs, else calling fallback.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)replay_init,
    .tp_call = (ternaryfunc)replay_call,
    .tp_methods = replay_methods,
    .tp_getset = replay_getset,
    .tp_traverse = (traverseproc)replay_traverse,
    .tp_clear = (inquiry)replay_clear,
    .tp_dealloc = (destructor)replay_dealloc,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "pytc.runtime._immediate", .m_size = -1};

static int intern(PyObject **slot, const char *name) { return (*slot = PyUnicode_InternFromString(name)) == NULL ? -1 : 0; }

PyMODINIT_FUNC PyInit__immediate(void) {
  if (intern(&s_error, "error") || intern(&s_waiting, "waiting") || intern(&s_notify_waiters, "notify_waiters")) return NULL;
  if (PyType_Ready(&ExecutionLockType) < 0 || PyType_Ready(&ImmediateType) < 0 || PyType_Ready(&ReplayType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (m == NULL) return NULL;
  if (PyModule_AddObjectRef(m, "ExecutionLock", (PyObject *)&ExecutionLockType) < 0 ||
      PyModule_AddObjectRef(m, "Immediate", (PyObject *)&ImmediateType) < 0 || PyModule_AddObjectRef(m, "Replay", (PyObject *)&ReplayType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
