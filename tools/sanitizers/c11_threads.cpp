// C11 threads (thrd_*, mtx_*, cnd_*, call_once) on pthreads, preloaded into every process of
// a ThreadSanitizer run (tools/dev.sh sanitize thread; docs/sanitizers.md).
//
// librdkafka creates its threads and takes its locks through C11 <threads.h>. glibc 2.36
// implements those by calling pthread's internals directly, which the sanitizer runtimes of
// clang 14 and gcc 12 do not intercept: a librdkafka thread starts unknown to TSan (its first
// calloc crashes in TSan's allocator) and its locks order nothing. Defined here on the public
// pthread functions, which TSan does intercept, the threads are known and the locks are seen.
// Built without instrumentation, so a process that is not sanitized can load it too.
#include <pthread.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

namespace {

// <threads.h>'s codes and mutex types (glibc).
enum { thrd_success = 0, thrd_busy = 1, thrd_error = 2, thrd_nomem = 3, thrd_timedout = 4 };
constexpr int mtx_recursive = 1;

int code(int rc) {
  switch (rc) {
    case 0: return thrd_success;
    case ENOMEM: return thrd_nomem;
    case ETIMEDOUT: return thrd_timedout;
    case EBUSY: return thrd_busy;
    default: return thrd_error;
  }
}

using thrd_start = int (*)(void*);
struct start {
  thrd_start f;
  void* arg;
};

void* trampoline(void* p) {
  const start s = *static_cast<start*>(p);
  delete static_cast<start*>(p);
  return reinterpret_cast<void*>(static_cast<std::intptr_t>(s.f(s.arg)));
}

}  // namespace

// glibc's thrd_t is a pthread_t, mtx_t and cnd_t share pthread_mutex_t's and pthread_cond_t's
// layout, once_flag is a pthread_once_t.
extern "C" {

int thrd_create(pthread_t* t, thrd_start f, void* arg) {
  auto* s = new start{f, arg};
  const int rc = pthread_create(t, nullptr, trampoline, s);
  if (rc != 0)
    delete s;
  return code(rc);
}
int thrd_join(pthread_t t, int* res) {
  void* r = nullptr;
  const int rc = pthread_join(t, &r);
  if (rc == 0 && res)
    *res = static_cast<int>(reinterpret_cast<std::intptr_t>(r));
  return code(rc);
}
int thrd_detach(pthread_t t) { return code(pthread_detach(t)); }

int mtx_init(pthread_mutex_t* m, int type) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  if (type & mtx_recursive)
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  const int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  return code(rc);
}
int mtx_lock(pthread_mutex_t* m) { return code(pthread_mutex_lock(m)); }
int mtx_trylock(pthread_mutex_t* m) { return code(pthread_mutex_trylock(m)); }
int mtx_timedlock(pthread_mutex_t* m, const timespec* at) { return code(pthread_mutex_timedlock(m, at)); }
int mtx_unlock(pthread_mutex_t* m) { return code(pthread_mutex_unlock(m)); }
void mtx_destroy(pthread_mutex_t* m) { pthread_mutex_destroy(m); }

int cnd_init(pthread_cond_t* c) { return code(pthread_cond_init(c, nullptr)); }
int cnd_signal(pthread_cond_t* c) { return code(pthread_cond_signal(c)); }
int cnd_broadcast(pthread_cond_t* c) { return code(pthread_cond_broadcast(c)); }
int cnd_wait(pthread_cond_t* c, pthread_mutex_t* m) { return code(pthread_cond_wait(c, m)); }
int cnd_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const timespec* at) {
  return code(pthread_cond_timedwait(c, m, at));
}
void cnd_destroy(pthread_cond_t* c) { pthread_cond_destroy(c); }

void call_once(pthread_once_t* flag, void (*f)()) { pthread_once(flag, f); }

}  // extern "C"
