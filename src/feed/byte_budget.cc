#include "oomguard/feed/byte_budget.h"

#include <algorithm>

#include "oomguard/units.h"

namespace oomguard::feed {

std::string DescribeBytes(uint64_t bytes) {
  return FormatBytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

ByteBudget::ByteBudget(uint64_t capacity, uint64_t resume_slack)
    : capacity_(capacity), resume_slack_(resume_slack) {}

bool ByteBudget::FitsLocked(uint64_t bytes, bool with_slack) const {
  if (in_use_ + bytes > capacity_) return false;
  if (!with_slack) return true;
  // Cap the slack so a request always fits an empty budget.
  uint64_t slack = std::min(resume_slack_, capacity_ - bytes);
  return in_use_ + bytes + slack <= capacity_;
}

void ByteBudget::TakeLocked(uint64_t bytes) {
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
}

void ByteBudget::GrantLocked(bool with_slack) {
  bool any = false;
  while (!waiters_.empty() && FitsLocked(waiters_.front()->bytes, with_slack)) {
    Waiter* w = waiters_.front();
    waiters_.pop_front();
    TakeLocked(w->bytes);
    w->granted = true;
    any = true;
  }
  if (any) cv_.notify_all();
}

Status ByteBudget::Reserve(uint64_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (bytes > capacity_) {
    return MakeError("needs " + DescribeBytes(bytes) + ", more than the whole budget of " +
                     DescribeBytes(capacity_));
  }
  MutexLock lock(mu_);
  if (closed_) return MakeError("the budget is closed");
  if (waiters_.empty() && FitsLocked(bytes, /*with_slack=*/false)) {
    TakeLocked(bytes);
    return Status::Ok();
  }
  ++waits_;
  Waiter me{bytes};
  waiters_.push_back(&me);
  while (!me.granted && !closed_) lock.Wait(cv_);
  if (me.granted) return Status::Ok();
  waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), &me), waiters_.end());
  return MakeError("the budget is closed");
}

Result<bool> ByteBudget::ReserveWithin(uint64_t bytes, std::chrono::nanoseconds timeout) {
  if (bytes == 0) return true;
  if (bytes > capacity_) {
    return MakeError("needs " + DescribeBytes(bytes) + ", more than the whole budget of " +
                     DescribeBytes(capacity_));
  }
  // A deadline a year away at most, so now() + timeout cannot overflow.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::min<std::chrono::nanoseconds>(timeout, std::chrono::hours(24 * 365));
  MutexLock lock(mu_);
  if (closed_) return MakeError("the budget is closed");
  if (waiters_.empty() && FitsLocked(bytes, false)) {
    TakeLocked(bytes);
    return true;
  }
  ++waits_;
  Waiter me{bytes};
  waiters_.push_back(&me);
  while (!me.granted && !closed_) {
    if (lock.WaitUntil(cv_, deadline) == std::cv_status::timeout) break;
  }
  if (me.granted) return true;
  waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), &me), waiters_.end());
  if (closed_) return MakeError("the budget is closed");
  GrantLocked(true);  // the next waiter may fit now that this one stepped aside
  return false;
}

bool ByteBudget::TryReserve(uint64_t bytes) {
  if (bytes == 0) return true;
  MutexLock lock(mu_);
  if (closed_ || !waiters_.empty() || !FitsLocked(bytes, false)) return false;
  TakeLocked(bytes);
  return true;
}

void ByteBudget::Release(uint64_t bytes) {
  if (bytes == 0) return;
  MutexLock lock(mu_);
  in_use_ = bytes > in_use_ ? 0 : in_use_ - bytes;
  GrantLocked(/*with_slack=*/true);
}

void ByteBudget::ResumeWaiters() {
  MutexLock lock(mu_);
  GrantLocked(/*with_slack=*/false);
}

bool ByteBudget::Stalled(uint64_t* needed) const {
  MutexLock lock(mu_);
  if (waiters_.empty()) return false;
  if (needed != nullptr) *needed = waiters_.front()->bytes;
  return !FitsLocked(waiters_.front()->bytes, false);
}

void ByteBudget::Close() {
  MutexLock lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

size_t ByteBudget::waiting() const {
  MutexLock lock(mu_);
  return waiters_.size();
}

uint64_t ByteBudget::in_use() const {
  MutexLock lock(mu_);
  return in_use_;
}

uint64_t ByteBudget::peak() const {
  MutexLock lock(mu_);
  return peak_;
}

uint64_t ByteBudget::waits() const {
  MutexLock lock(mu_);
  return waits_;
}

}  // namespace oomguard::feed
