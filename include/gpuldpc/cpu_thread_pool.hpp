// A fixed pool of worker threads that runs "task i of N" callbacks.
//
// The CPU decoders split a batch into chunks of SIMD-interleaved frames and
// hand the chunks out through Run(); the calling thread works too, so a pool
// of T threads owns T - 1 std::threads.  Run() calls are serialised by a
// mutex: two Python threads decoding through one decoder take turns, each
// getting every worker (and every per-worker workspace) for its batch.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuldpc {
namespace cpu {

class ThreadPool {
 public:
  // threads >= 1: total workers including the caller of Run().
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // Runs task(i, worker) for i in [0, tasks), worker in [0, threads()) names
  // the thread (for per-worker scratch).  Returns when every task is done.
  void Run(size_t tasks, const std::function<void(size_t, int)>& task);

 private:
  void WorkerLoop(int worker);
  void Drain(int worker);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;   // one Run() at a time
  std::mutex mutex_;       // guards the fields below
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t, int)>* task_ = nullptr;
  size_t tasks_ = 0;
  size_t next_ = 0;
  size_t finished_ = 0;
  unsigned long generation_ = 0;
  bool stop_ = false;
};

// Worker count for "threads=None": every core std::thread reports (>= 1).
int DefaultThreads();

}  // namespace cpu
}  // namespace gpuldpc
