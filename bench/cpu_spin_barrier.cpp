// Cost of splitting one frame's layers over two cores (docs/cpu.md, "Intra-frame path"):
// two threads, pinned to cores 0 and 1, cross a spin barrier once per layer, as a layered
// decoder whose z rows are shared by two threads must (12 layers x 10 iterations = 120
// barriers per WiMAX 2304 r1/2 frame).  Per crossing each thread first writes `lines`
// 64-byte cache lines of posteriors and, after the barrier, reads the lines the other
// wrote (the next layer reads what the other core's rows of this layer wrote), so the
// figure includes moving those lines between the two L1 caches.
//
//   g++ -O2 -std=c++17 -pthread bench/cpu_spin_barrier.cpp -o /tmp/cpu_spin_barrier
//   /tmp/cpu_spin_barrier            # median ns per crossing for 0, 4, 8, 16 lines
//
// Sense-reversing barrier: each thread flips its sense, increments the count; the last
// one resets it and publishes the sense; the other spins on the sense (its own cache
// line) with a pause instruction.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

struct alignas(64) Line {
  float v[16];
};

struct Barrier {
  alignas(64) std::atomic<int> count{0};
  alignas(64) std::atomic<bool> sense{false};

  void Wait(bool& local) {
    local = !local;
    if (count.fetch_add(1, std::memory_order_acq_rel) == 1) {
      count.store(0, std::memory_order_relaxed);
      sense.store(local, std::memory_order_release);
    } else {
      while (sense.load(std::memory_order_acquire) != local) __builtin_ia32_pause();
    }
  }
};

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Median over `reps` runs of the ns per crossing of `crossings` crossings.
double NsPerCrossing(int lines, int crossings, int reps) {
  std::vector<Line> data(2 * static_cast<size_t>(std::max(lines, 1)));
  std::vector<double> runs;
  for (int r = 0; r < reps; ++r) {
    Barrier barrier;
    float sink[2] = {0, 0};
    auto body = [&](int me) {
      Pin(me);
      bool local = false;
      Line* mine = data.data() + me * lines;
      const Line* other = data.data() + (1 - me) * lines;
      for (int c = 0; c < crossings; ++c) {
        for (int l = 0; l < lines; ++l) mine[l].v[0] = static_cast<float>(c);
        barrier.Wait(local);
        for (int l = 0; l < lines; ++l) sink[me] += other[l].v[0];
      }
    };
    const auto t0 = std::chrono::steady_clock::now();
    std::thread helper(body, 1);
    body(0);
    helper.join();
    const auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / crossings);
    if (sink[0] + sink[1] < 0) std::puts("");
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main() {
  for (int lines : {0, 4, 8, 16}) {
    std::printf("%2d lines handed over per crossing: %.0f ns per crossing (median of 15 x 200000)\n", lines,
                NsPerCrossing(lines, 200000, 15));
  }
  return 0;
}
