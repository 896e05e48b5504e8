"""A small native thread pool: the threads that execute a read or write plan without the GIL.

:func:`run_tasks` (``cdef``, for the other kernels) runs ``fn(ctx, i)`` for every ``i`` of a
job on up to ``nthreads`` threads: the calling thread and the pool's.  The caller works on its
own job too, so a job always progresses, however many other threads (a user's own thread pool
reading at once) have jobs queued; idle pool threads take tasks from the oldest job that has
tasks left and fewer threads than its limit.  Tasks are claimed one at a time under one mutex
(a task is a chunk: its read, decode and copy dwarf the claim).

Threads are started on demand, up to the largest ``nthreads`` asked for, and never stop; they
wait on a condition variable when there is nothing to do, costing nothing.  After ``fork`` the
child starts with an empty pool (its parent's threads do not exist there): the reason for a
pool of our own rather than OpenMP, whose GNU runtime hangs in a child that forked after using
it (Dask's and multiprocessing's fork workers).

Per-thread state lives in one ``pthread`` key whose destructor frees it when the thread ends:
:func:`thread_buffer` (scratch buffers that grow and are reused from task to task: no
allocation per chunk once warm) and :func:`thread_value` (a value with its free function, such
as a thread's zstd context).

POSIX only (pthreads); zarr3c's Python paths serve other systems.  Its reference is running
the tasks one after another (:func:`zarr3c._kernels._reference.spread`).
"""

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memset

import numpy as np

__all__ = ["spread", "threads_started"]

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_t:
        pass
    ctypedef struct pthread_attr_t:
        pass
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    ctypedef struct pthread_key_t:
        pass
    int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                       void* (*start)(void*) noexcept nogil, void* arg)
    int pthread_detach(pthread_t thread)
    int pthread_mutex_init(pthread_mutex_t* mutex, const void* attr)
    int pthread_mutex_lock(pthread_mutex_t* mutex)
    int pthread_mutex_unlock(pthread_mutex_t* mutex)
    int pthread_cond_init(pthread_cond_t* cond, const void* attr)
    int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex)
    int pthread_cond_signal(pthread_cond_t* cond)
    int pthread_cond_broadcast(pthread_cond_t* cond)
    int pthread_key_create(pthread_key_t* key, void (*destructor)(void*) noexcept nogil)
    void* pthread_getspecific(pthread_key_t key)
    int pthread_setspecific(pthread_key_t key, const void* value)
    int pthread_atfork(void (*prepare)() noexcept nogil, void (*parent)() noexcept nogil,
                       void (*child)() noexcept nogil)

cdef enum:
    # The most threads the pool starts, whatever a caller asks for.
    MAX_THREADS = 1024


cdef struct Job:
    task_fn fn
    void* ctx
    Py_ssize_t n         # tasks
    Py_ssize_t next      # the next task not yet claimed
    Py_ssize_t finished  # tasks done
    int limit            # the most threads working on it at once, its caller included
    int active           # threads working on it now
    Job* link            # the next job in the queue


cdef struct ThreadState:
    uint8_t* buf[SLOTS]
    size_t cap[SLOTS]
    void* value[SLOTS]
    value_free_fn free_fn[SLOTS]
    int64_t serial       # this thread's number, in the order threads first asked for state


# The pool, guarded by _lock.  Jobs live on their callers' stacks, queued while they have
# tasks nobody has claimed.
cdef pthread_mutex_t _lock
cdef pthread_cond_t _work       # idle pool threads wait here for a job
cdef pthread_cond_t _done       # callers wait here for their job's last task
cdef Job* _head = NULL
cdef int _threads = 0           # pool threads started
cdef int _idle = 0              # pool threads waiting on _work
cdef int64_t _serials = 0
cdef bint _ready = False
cdef pthread_key_t _state_key


cdef void _reset() noexcept nogil:
    """A fresh, empty pool (at import, and in a child after fork)."""
    global _head, _threads, _idle
    memset(&_lock, 0, sizeof(_lock))
    memset(&_work, 0, sizeof(_work))
    memset(&_done, 0, sizeof(_done))
    pthread_mutex_init(&_lock, NULL)
    pthread_cond_init(&_work, NULL)
    pthread_cond_init(&_done, NULL)
    _head = NULL
    _threads = 0
    _idle = 0


cdef void _before_fork() noexcept nogil:
    # Nobody holds the lock while the process forks, so the child's copy is consistent.
    if _ready:
        pthread_mutex_lock(&_lock)


cdef void _after_fork_parent() noexcept nogil:
    if _ready:
        pthread_mutex_unlock(&_lock)


cdef void _after_fork_child() noexcept nogil:
    if _ready:
        _reset()


cdef void _free_state(void* p) noexcept nogil:
    cdef ThreadState* st = <ThreadState*>p
    cdef int i
    for i in range(SLOTS):
        free(st.buf[i])
        if st.value[i] != NULL and st.free_fn[i] != NULL:
            st.free_fn[i](st.value[i])
    free(st)


cdef ThreadState* _state() noexcept nogil:
    """This thread's state, made on first use (NULL when memory runs out)."""
    global _serials
    cdef ThreadState* st = <ThreadState*>pthread_getspecific(_state_key)
    if st != NULL:
        return st
    st = <ThreadState*>calloc(1, sizeof(ThreadState))
    if st == NULL:
        return NULL
    if pthread_setspecific(_state_key, st) != 0:
        free(st)
        return NULL
    pthread_mutex_lock(&_lock)
    st.serial = _serials
    _serials += 1
    pthread_mutex_unlock(&_lock)
    return st


cdef uint8_t* thread_buffer(int slot, size_t nbytes) noexcept nogil:
    """This thread's scratch buffer ``slot``, at least ``nbytes`` long (grown as needed and
    kept: valid until this thread's next call for the slot); NULL when memory runs out."""
    cdef ThreadState* st = _state()
    cdef uint8_t* grown
    if st == NULL or slot < 0 or slot >= SLOTS:
        return NULL
    if st.cap[slot] < nbytes or st.buf[slot] == NULL:
        grown = <uint8_t*>realloc(st.buf[slot], nbytes if nbytes else 1)
        if grown == NULL:
            return NULL
        st.buf[slot] = grown
        st.cap[slot] = nbytes
    return st.buf[slot]


cdef void* thread_value(int slot) noexcept nogil:
    """This thread's value ``slot`` (NULL if none was set)."""
    cdef ThreadState* st = _state()
    if st == NULL or slot < 0 or slot >= SLOTS:
        return NULL
    return st.value[slot]


cdef int set_thread_value(int slot, void* value, value_free_fn free_fn) noexcept nogil:
    """Keep ``value`` as this thread's ``slot``, freed by ``free_fn`` when the thread ends;
    -1 (nothing kept) when there is no state."""
    cdef ThreadState* st = _state()
    if st == NULL or slot < 0 or slot >= SLOTS:
        return -1
    if st.value[slot] != NULL and st.free_fn[slot] != NULL:
        st.free_fn[slot](st.value[slot])
    st.value[slot] = value
    st.free_fn[slot] = free_fn
    return 0


cdef void _unlink(Job* job) noexcept nogil:
    """Take ``job`` out of the queue (under the lock)."""
    global _head
    cdef Job* p
    if _head == job:
        _head = job.link
        return
    p = _head
    while p != NULL and p.link != job:
        p = p.link
    if p != NULL:
        p.link = job.link


cdef void _work_on(Job* job) noexcept nogil:
    """Claim and run tasks of ``job`` until none is left (entered and left under the lock)."""
    cdef Py_ssize_t i
    while job.next < job.n:
        i = job.next
        job.next += 1
        if job.next == job.n:
            _unlink(job)
        pthread_mutex_unlock(&_lock)
        job.fn(job.ctx, i)
        pthread_mutex_lock(&_lock)
        job.finished += 1
        if job.finished == job.n:
            pthread_cond_broadcast(&_done)


cdef void* _worker(void* arg) noexcept nogil:
    global _idle
    cdef Job* job
    pthread_mutex_lock(&_lock)
    while True:
        job = _head
        while job != NULL and job.active >= job.limit:
            job = job.link
        if job == NULL:
            _idle += 1
            pthread_cond_wait(&_work, &_lock)
            _idle -= 1
            continue
        job.active += 1
        _work_on(job)
        # (the job's caller cannot return before this thread lets go of the lock)
        job.active -= 1
    return NULL


cdef int run_tasks(task_fn fn, void* ctx, Py_ssize_t n, int nthreads) noexcept nogil:
    """Run ``fn(ctx, i)`` for ``0 <= i < n`` on up to ``nthreads`` threads (this one
    included) and return when every task is done.  Returns how many threads the job may use
    (1: it ran here, one task after another)."""
    global _head, _threads
    cdef Job job
    cdef Job* p
    cdef pthread_t thread
    cdef int k, wake
    cdef Py_ssize_t i
    if n <= 0:
        return 1
    if nthreads > n:
        nthreads = <int>n
    if nthreads > MAX_THREADS:
        nthreads = MAX_THREADS
    if nthreads <= 1 or not _ready:
        for i in range(n):
            fn(ctx, i)
        return 1
    job.fn, job.ctx, job.n, job.next, job.finished = fn, ctx, n, 0, 0
    job.limit, job.active, job.link = nthreads, 1, NULL
    pthread_mutex_lock(&_lock)
    while _threads < nthreads - 1:
        if pthread_create(&thread, NULL, _worker, NULL) != 0:
            break  # (fewer threads: the job still runs, on those there are)
        pthread_detach(thread)
        _threads += 1
    if _head == NULL:
        _head = &job
    else:
        p = _head
        while p.link != NULL:
            p = p.link
        p.link = &job
    wake = min(nthreads - 1, _idle)
    for k in range(wake):
        pthread_cond_signal(&_work)
    _work_on(&job)
    job.active -= 1
    while job.finished < job.n:
        pthread_cond_wait(&_done, &_lock)
    pthread_mutex_unlock(&_lock)
    return nthreads


cdef struct _SpreadCtx:
    int64_t* serial
    int64_t* runs
    int64_t spin


cdef void _spread_task(void* ctx, Py_ssize_t i) noexcept nogil:
    cdef _SpreadCtx* c = <_SpreadCtx*>ctx
    cdef ThreadState* st = _state()
    cdef volatile int64_t k = 0
    while k < c.spin:
        k += 1
    c.serial[i] = st.serial if st != NULL else -1
    c.runs[i] += 1


def spread(Py_ssize_t n, int nthreads, int64_t spin=0):
    """Run ``n`` tasks on up to ``nthreads`` threads (as a read's chunks are) and say which
    thread ran each: ``(serials, runs)``, each thread's number and how many times each task
    ran (always 1).  Each task first spins ``spin`` iterations.  For tests of the pool."""
    if n < 0:
        raise ValueError("spread: n must be >= 0")
    serial = np.full(n, -1, dtype=np.int64)
    runs = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] s = serial
    cdef int64_t[::1] r = runs
    cdef _SpreadCtx ctx
    ctx.serial = &s[0] if n else NULL
    ctx.runs = &r[0] if n else NULL
    ctx.spin = spin
    with nogil:
        run_tasks(_spread_task, &ctx, n, nthreads)
    return serial, runs


def threads_started():
    """How many pool threads this process has started (they are kept)."""
    return _threads


def _init():
    global _ready
    if pthread_key_create(&_state_key, _free_state) != 0:
        return
    _reset()
    pthread_atfork(_before_fork, _after_fork_parent, _after_fork_child)
    _ready = True


_init()
