// ByteBudget: one hard limit on bytes in flight, shared by every stage of a
// pipeline (bytes being read, decoded images, assembled batches, batches the
// consumer still holds).
//
// Promises:
//  - in_use() never exceeds capacity(): a reservation that does not fit blocks
//    (Reserve) or fails (TryReserve); peak() is the high-water mark of in_use().
//  - A request larger than capacity() fails at once with an error that names
//    both numbers; it never waits forever.
//  - Hysteresis: once a reservation has had to wait, the budget counts as
//    "throttled" and waiting reservations resume only when they fit with
//    `resume_slack` bytes to spare (or when ResumeWaiters() says so). This keeps
//    producers from waking for every small release.
//  - Waiters are served in arrival order (FIFO): a small late request cannot
//    overtake a large early one, so the oldest work always gets the bytes first.
//  - Close() wakes every waiter with an error; later Reserve() calls fail.
// Thread safety: every method may be called from any thread.
// REQUIRES: Release(n) only for bytes this budget granted and not yet released.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "oomguard/result.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::feed {

class ByteBudget {
 public:
  // resume_slack: bytes that must be free beyond a waiting request before it
  // resumes (capped so a request can always resume once the budget is empty).
  explicit ByteBudget(uint64_t capacity, uint64_t resume_slack = 0);
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Blocks until `bytes` fit, then counts them as in use. Fails when bytes >
  // capacity() ("needs X, more than the whole budget of Y") or the budget is
  // closed. Reserving 0 bytes always succeeds at once.
  Status Reserve(uint64_t bytes);

  // Takes the bytes only if they fit now and nobody is waiting.
  bool TryReserve(uint64_t bytes);

  // Like Reserve(), but gives up after `timeout`: true when granted, false on
  // timeout, an error as Reserve() would give.
  Result<bool> ReserveWithin(uint64_t bytes, std::chrono::nanoseconds timeout);

  // Returns bytes to the budget and wakes waiters that now fit.
  void Release(uint64_t bytes);

  // Grants waiting requests that fit now, ignoring the hysteresis slack.
  // For a caller that knows no other release is coming (the only bytes in use
  // are held by someone who is waiting on the waiters).
  void ResumeWaiters();

  // True when a request is waiting and cannot fit even ignoring hysteresis;
  // *needed (if non-null) gets the first waiting request's size.
  bool Stalled(uint64_t* needed = nullptr) const;

  // Wakes all waiters with an error; later reservations fail.
  void Close();

  // Reservations waiting right now.
  size_t waiting() const;

  uint64_t capacity() const { return capacity_; }
  uint64_t in_use() const;
  uint64_t peak() const;
  // How many times a reservation had to wait (each ReserveWithin() that
  // waits counts, also when it times out).
  uint64_t waits() const;

 private:
  struct Waiter {
    uint64_t bytes;
    bool granted = false;
  };
  bool FitsLocked(uint64_t bytes, bool with_slack) const REQUIRES(mu_);
  void GrantLocked(bool with_slack) REQUIRES(mu_);
  void TakeLocked(uint64_t bytes) REQUIRES(mu_);

  const uint64_t capacity_;
  const uint64_t resume_slack_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<Waiter*> waiters_ GUARDED_BY(mu_);  // each Waiter's `granted` too
  uint64_t in_use_ GUARDED_BY(mu_) = 0;
  uint64_t peak_ GUARDED_BY(mu_) = 0;
  uint64_t waits_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
};

// "1.50 GiB (1610612736 bytes)": how budget errors name a byte count.
std::string DescribeBytes(uint64_t bytes);

}  // namespace oomguard::feed
