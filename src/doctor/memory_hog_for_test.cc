// A child process for the watch tests: it starts in a millisecond (unlike
// Python, whose start-up alone can take a second on a loaded machine) and
// grows its resident memory on a wall-clock schedule.
//   memory_hog leak CHUNK_MIB PERIOD_MS [steps]      + CHUNK every PERIOD until SIGINT/SIGTERM;
//                                                    with "steps", prints "step N" after chunk N
//   memory_hog plateau CHUNK_MIB PERIOD_MS N HOLD_MS  N chunks (warm-up), then hold, exit 0
// Chunks are mmap(MAP_POPULATE)ed: resident at once, without a page fault
// per page (which on a loaded VM is slower than the schedule). On SIGINT it
// prints "checkpoint saved after N chunks, grew R bytes/s" (R measured from
// its own allocation times) and exits 0, as a training script that catches
// KeyboardInterrupt would.
#include <signal.h>
#include <sys/mman.h>

#include <csignal>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {
volatile sig_atomic_t g_stop = 0;
extern "C" void OnSignal(int) { g_stop = 1; }

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: memory_hog leak|plateau CHUNK_MIB PERIOD_MS [N HOLD_MS]\n");
    return 2;
  }
  std::signal(SIGINT, OnSignal);
  const bool leak = std::strcmp(argv[1], "leak") == 0;
  const size_t chunk = std::strtoull(argv[2], nullptr, 10) << 20;
  const double period = std::atof(argv[3]) / 1000;
  const size_t limit = leak ? SIZE_MAX : std::strtoull(argv[4], nullptr, 10);
  const double hold = leak ? 0 : std::atof(argv[5]) / 1000;
  const bool print_steps = leak && argc > 4 && std::strcmp(argv[4], "steps") == 0;
  std::vector<void*> chunks;
  const double t0 = Now();
  double first_at = 0, last_at = 0;
  while (!g_stop) {
    size_t due = static_cast<size_t>((Now() - t0) / period) + 1;
    while (chunks.size() < due && chunks.size() < limit) {
      void* p = mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (p == MAP_FAILED) return 3;
      last_at = Now();
      if (chunks.empty()) first_at = last_at;
      chunks.push_back(p);
      if (print_steps) {
        std::printf("step %zu loss 0.5\n", chunks.size());
        std::fflush(stdout);
      }
    }
    if (!leak && chunks.size() >= limit) {
      double until = Now() + hold;
      while (!g_stop && Now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double rate = last_at > first_at ? (chunks.size() - 1) * double(chunk) / (last_at - first_at) : 0;
  std::printf("checkpoint saved after %zu chunks, grew %.0f bytes/s\n", chunks.size(), rate);
  return 0;
}
