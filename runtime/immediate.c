// Work run at once on the calling thread, with no Python between its steps (the CPython module pytc.runtime._immediate).
//
// ExecutionLock: the CPU queue's execution lock, a plain lock (acquire(blocking=True), release()) that this module's C takes
// without calling Python. It may be released by another thread than the one that acquired it, as threading.Lock.
//
// Immediate(queue, command_buffer, run, show, brief): calling it executes the buffer with pytc_queue_run (`run`, its
// address) when the CPU queue is idle: its device not stopped, its execution lock (an ExecutionLock) free, nothing
// outstanding. It returns whether it ran; it declines (False) otherwise, leaving the buffer to a submission. `show` (or
// None) is called before each run. A `brief` buffer runs holding the GIL (its work is shorter than letting go of the GIL
// and taking it back, and no packet of it waits); others let other Python threads run meanwhile. After each SIGNAL the
// device's waiters are woken; a packet that fails hands the stop to queue._immediate_stopped(epoch, command_buffer, offset,
// status), which raises.
//
// Replay, TinyJit's base: its `_armed` is None or (Tensor, nodes, result, immediate, captures, counters, counts).
// A call whose positional arguments are Tensors of exactly `nodes` (no keywords), outside any capture on this thread
// (captures.jits empty), runs `immediate`, adds each (name, amount) pair of `counts` to that attribute of `counters` and
// returns `result`. Any other call, or
// one the queue declines, goes to self._call. The graph's own lock is not taken: the queue's execution lock already keeps
// any other run of the buffer out while this one executes, and a graph run elsewhere that finds the queue busy submits.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <structmember.h>

#include "hcq_codes.h"

typedef int (*queue_run_fn)(const uint8_t *buffer, uint64_t nbytes, uint64_t *offset, int64_t timeout_ns);
enum { TENSOR, NODES, RESULT, IMMEDIATE, CAPTURES, COUNTERS, COUNTS, ARMED_FIELDS };

static PyObject *s_device, *s_executing, *s_error, *s_outstanding, *s_epoch, *s_changed, *s_waiting,
    *s_notify_waiters, *s_lazydata, *s_jits, *s_call;

typedef struct {
  PyObject_HEAD
  PyThread_type_lock lock;
  int held;  // read and written holding the GIL
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

static PyTypeObject ExecutionLockType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pytc.runtime._immediate.ExecutionLock",
    .tp_basicsize = sizeof(ExecutionLock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The CPU queue's execution lock, taken by C without calling Python.",
    .tp_new = execution_lock_new,
    .tp_dealloc = (destructor)execution_lock_dealloc,
    .tp_methods = execution_lock_methods,
};

typedef struct {
  PyObject_HEAD
  PyObject *queue, *device, *executing, *buffer, *show;
  queue_run_fn run;
  int brief;
} Immediate;

static int immediate_init(Immediate *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"queue", "command_buffer", "run", "show", "brief", NULL};
  PyObject *queue, *buffer, *show;
  unsigned long long run;
  int brief = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OSKO|p", names, &queue, &buffer, &run, &show, &brief)) return -1;
  if (run == 0) {
    PyErr_SetString(PyExc_ValueError, "Immediate needs the address of pytc_queue_run");
    return -1;
  }
  PyObject *device = PyObject_GetAttr(queue, s_device);
  if (device == NULL) return -1;
  PyObject *executing = PyObject_GetAttr(queue, s_executing);
  if (executing == NULL || !Py_IS_TYPE(executing, &ExecutionLockType)) {
    if (executing != NULL) PyErr_SetString(PyExc_TypeError, "Immediate needs a queue whose _executing is an ExecutionLock");
    Py_DECREF(device);
    Py_XDECREF(executing);
    return -1;
  }
  Py_XSETREF(self->queue, Py_NewRef(queue));
  Py_XSETREF(self->device, device);
  Py_XSETREF(self->executing, executing);
  Py_XSETREF(self->buffer, Py_NewRef(buffer));
  Py_XSETREF(self->show, Py_NewRef(show));
  self->run = (queue_run_fn)(uintptr_t)run;
  self->brief = brief;
  return 0;
}

// 1 when `object`.`name` is true, 0 when false, -1 with an exception set.
static int attribute_true(PyObject *object, PyObject *name) {
  PyObject *value = PyObject_GetAttr(object, name);
  if (value == NULL) return -1;
  int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  return truth;
}

static int wake_waiters(Immediate *self) {
  PyObject *changed = PyObject_GetAttr(self->device, s_changed);
  if (changed == NULL) return -1;
  int waiting = attribute_true(changed, s_waiting), result = waiting;
  if (waiting > 0) {
    PyObject *done = PyObject_CallMethodNoArgs(changed, s_notify_waiters);
    result = done == NULL ? -1 : 0;
    Py_XDECREF(done);
  }
  Py_DECREF(changed);
  return result;
}

// Executes the buffer, the execution lock held and nothing outstanding: 1 ran, -1 error (a failing packet raised).
static int execute(Immediate *self) {
  if (self->show != Py_None) {
    PyObject *shown = PyObject_CallNoArgs(self->show);
    if (shown == NULL) return -1;
    Py_DECREF(shown);
  }
  PyObject *epoch = PyObject_GetAttr(self->device, s_epoch);
  if (epoch == NULL) return -1;
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
    if (wake_waiters(self) < 0) {
      Py_DECREF(epoch);
      return -1;
    }
    if (offset >= nbytes) {
      status = DONE;
      break;
    }
  }
  if (status == DONE) {
    Py_DECREF(epoch);
    return 1;
  }
  PyObject *raised = PyObject_CallMethod(self->queue, "_immediate_stopped", "OOKi", epoch, self->buffer, (unsigned long long)offset, status);
  Py_DECREF(epoch);
  if (raised != NULL) {
    Py_DECREF(raised);
    PyErr_SetString(PyExc_RuntimeError, "queue._immediate_stopped returned instead of raising");
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
  ExecutionLock *executing = (ExecutionLock *)self->executing;
  if (!execution_lock_try(executing)) return 0;
  int busy = attribute_true(self->queue, s_outstanding), result = busy < 0 ? -1 : busy ? 0 : execute(self);
  execution_lock_release_held(executing);
  return result;
}

static PyObject *immediate_call(Immediate *self, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "Immediate() takes no arguments");
    return NULL;
  }
  if (self->queue == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Immediate was not initialized");
    return NULL;
  }
  int ran = immediate_run(self);
  return ran < 0 ? NULL : PyBool_FromLong(ran);
}

static int immediate_traverse(Immediate *self, visitproc visit, void *arg) {
  Py_VISIT(self->queue);
  Py_VISIT(self->device);
  Py_VISIT(self->executing);
  Py_VISIT(self->buffer);
  Py_VISIT(self->show);
  return 0;
}

static int immediate_clear(Immediate *self) {
  Py_CLEAR(self->queue);
  Py_CLEAR(self->device);
  Py_CLEAR(self->executing);
  Py_CLEAR(self->buffer);
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
  PyObject *armed;
} Replay;

// Whether the positional arguments are Tensors of exactly the armed nodes, with no capture running on this thread.
static int same_inputs(PyObject *armed, PyObject *args) {
  PyObject *nodes = PyTuple_GET_ITEM(armed, NODES), *tensor = PyTuple_GET_ITEM(armed, TENSOR);
  Py_ssize_t count = PyTuple_GET_SIZE(args);
  if (!PyTuple_Check(nodes) || PyTuple_GET_SIZE(nodes) != count || !PyType_Check(tensor)) return 0;
  for (Py_ssize_t i = 0; i < count; i++) {
    PyObject *arg = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(arg, (PyTypeObject *)tensor)) return 0;
    PyObject *node = PyObject_GetAttr(arg, s_lazydata);
    if (node == NULL) return -1;
    Py_DECREF(node);
    if (node != PyTuple_GET_ITEM(nodes, i)) return 0;
  }
  PyObject *jits = PyObject_GetAttr(PyTuple_GET_ITEM(armed, CAPTURES), s_jits);
  if (jits == NULL) return -1;
  Py_ssize_t nested = PyObject_Length(jits);
  Py_DECREF(jits);
  return nested < 0 ? -1 : nested == 0;
}

static int add_counts(PyObject *armed) {
  PyObject *counters = PyTuple_GET_ITEM(armed, COUNTERS), *counts = PyTuple_GET_ITEM(armed, COUNTS);
  if (!PyTuple_Check(counts)) {
    PyErr_SetString(PyExc_TypeError, "armed counts must be a tuple of (name, amount) pairs");
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(counts); i++) {
    PyObject *pair = PyTuple_GET_ITEM(counts, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "armed counts must be a tuple of (name, amount) pairs");
      return -1;
    }
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
  PyObject *immediate = PyTuple_GET_ITEM(armed, IMMEDIATE);
  if (!Py_IS_TYPE(immediate, &ImmediateType) || ((Immediate *)immediate)->queue == NULL) return 0;
  int same = same_inputs(armed, args);
  if (same <= 0) return same;
  int ran = immediate_run((Immediate *)immediate);
  if (ran == 1 && add_counts(armed) < 0) ran = -1;
  return ran;
}

static PyObject *replay_call(Replay *self, PyObject *args, PyObject *kwargs) {
  PyObject *armed = self->armed;
  if (armed != NULL && PyTuple_Check(armed) && PyTuple_GET_SIZE(armed) == ARMED_FIELDS && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0)) {
    Py_INCREF(armed);  // the Python it calls may disarm
    int ran = replay_armed(armed, args);
    PyObject *result = ran == 1 ? Py_NewRef(PyTuple_GET_ITEM(armed, RESULT)) : NULL;
    Py_DECREF(armed);
    if (ran != 0) return result;
  }
  PyObject *call = PyObject_GetAttr((PyObject *)self, s_call);
  if (call == NULL) return NULL;
  PyObject *result = PyObject_Call(call, args, kwargs);
  Py_DECREF(call);
  return result;
}

static int replay_traverse(Replay *self, visitproc visit, void *arg) {
  Py_VISIT(self->armed);
  return 0;
}

static int replay_clear(Replay *self) {
  Py_CLEAR(self->armed);
  return 0;
}

static void replay_dealloc(Replay *self) {
  PyObject_GC_UnTrack(self);
  replay_clear(self);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef replay_members[] = {
    {"_armed", T_OBJECT, offsetof(Replay, armed), 0, "None, or what a call of the same inputs replays without Python"},
    {NULL},
};

static PyTypeObject ReplayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pytc.runtime._immediate.Replay",
    .tp_basicsize = sizeof(Replay),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A callable replaying its armed capture in C when called with the same input tensors, else calling self._call.",
    .tp_new = PyType_GenericNew,
    .tp_call = (ternaryfunc)replay_call,
    .tp_members = replay_members,
    .tp_traverse = (traverseproc)replay_traverse,
    .tp_clear = (inquiry)replay_clear,
    .tp_dealloc = (destructor)replay_dealloc,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "pytc.runtime._immediate", .m_size = -1};

static int intern(PyObject **slot, const char *name) { return (*slot = PyUnicode_InternFromString(name)) == NULL ? -1 : 0; }

PyMODINIT_FUNC PyInit__immediate(void) {
  if (intern(&s_device, "device") || intern(&s_executing, "_executing") || intern(&s_error, "error") || intern(&s_outstanding, "_outstanding") ||
      intern(&s_epoch, "epoch") || intern(&s_changed, "changed") || intern(&s_waiting, "waiting") || intern(&s_notify_waiters, "notify_waiters") ||
      intern(&s_lazydata, "lazydata") || intern(&s_jits, "jits") || intern(&s_call, "_call"))
    return NULL;
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
