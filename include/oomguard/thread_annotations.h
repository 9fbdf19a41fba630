// Thread-safety annotations that clang checks (-Wthread-safety), and a mutex
// it can check them against.
//
// Mark each field a mutex protects GUARDED_BY(mu_) (PT_GUARDED_BY for what a
// pointer field points to) and each function that needs the lock held
// REQUIRES(mu_); lock with MutexLock. The clang build turns a violation into
// an error; with other compilers the macros expand to nothing. Names follow
// clang's documentation and abseil's thread_annotations.h.
//
// std::mutex itself is not a "capability" clang knows, so guarded fields use
// oomguard::Mutex, a std::mutex with the annotations. MutexLock is the scoped
// lock (std::lock_guard / std::unique_lock are not annotated); it also waits
// on a std::condition_variable. Wait in a loop that re-checks the guarded
// condition in the function itself: clang does not see a lambda predicate
// run under the lock.
//
// Thread safety: Mutex and MutexLock are what std::mutex and
// std::unique_lock are.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define OOMGUARD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define OOMGUARD_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) OOMGUARD_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY OOMGUARD_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) OOMGUARD_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) OOMGUARD_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_AFTER(...) OOMGUARD_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) OOMGUARD_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define REQUIRES(...) OOMGUARD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) OOMGUARD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) OOMGUARD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) OOMGUARD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) OOMGUARD_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) OOMGUARD_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) OOMGUARD_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS OOMGUARD_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace oomguard {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction (or Unlock()).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Releases the lock early; the destructor then does nothing.
  void Unlock() RELEASE() { lock_.unlock(); }

  // Waits for a notification (or a spurious wake-up): the lock is released
  // while waiting and held again on return.
  void Wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Rep, typename Period>
  std::cv_status WaitFor(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout) {
    return cv.wait_for(lock_, timeout);
  }
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(std::condition_variable& cv, std::chrono::time_point<Clock, Duration> deadline) {
    return cv.wait_until(lock_, deadline);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace oomguard
