// Worker pool for the CPU decoders (see include/gpuldpc/cpu_thread_pool.hpp).
#include "gpuldpc/cpu_thread_pool.hpp"

namespace gpuldpc {
namespace cpu {

int DefaultThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

// Takes tasks until none are left; counts the ones it finished.
void ThreadPool::Drain(int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_ < tasks_) {
    const size_t i = next_++;
    const auto* task = task_;
    lock.unlock();
    (*task)(i, worker);
    lock.lock();
    if (++finished_ == tasks_) done_.notify_all();
  }
}

void ThreadPool::WorkerLoop(int worker) {
  unsigned long seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    Drain(worker);
  }
}

void ThreadPool::Run(size_t tasks, const std::function<void(size_t, int)>& task) {
  if (tasks == 0) return;
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  if (threads_ == 1 || tasks == 1) {
    for (size_t i = 0; i < tasks; ++i) task(i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    tasks_ = tasks;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  Drain(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return finished_ == tasks_; });
  task_ = nullptr;
  tasks_ = 0;
}

}  // namespace cpu
}  // namespace gpuldpc
