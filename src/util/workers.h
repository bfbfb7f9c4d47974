// A pool of kept threads for splitting a call's work (Batch::step, the observations, the
// equity agent's decisions). Generic: it knows nothing of poker.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace stud {

// Threads that stay: Workers::run(parts, fn) calls fn(0) on the caller and fn(1..parts-1) on
// threads started once and kept. The evaluator's rank-count memo is per thread
// (nonflush_score_memo), so a thread started for each call began with an empty memo every time
// and made two threads slower than one; these keep theirs. A kept thread waits for its next
// job spinning for SPIN_US, then asleep on a condition variable; the caller waits for the
// others the same way. A training step makes its calls (the learner's step, each opponent
// round, the equity agent's decisions, the new hands' observations) tens to a few hundred
// microseconds apart, and SB3's forward pass between steps takes about as long; waking a
// sleeping thread takes tens of microseconds a call. A millisecond's spin keeps the thread
// awake through a rollout's collection (on the core that the env's second thread was given)
// and lets it sleep through the gradient updates: 256 slots on two threads step 10-15%
// faster than with 50 us (docs/results.md, session 10). Threads are started on first use, and again in a forked
// child, which has none of its parent's threads: there the parent's threads, mutex and
// condition variables (which may count the parent's waiters) are left alone, never used or
// destroyed, and new ones are made.
class Workers {
 public:
  static constexpr int SPIN_US = 1000;

  Workers() = default;
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() {
    if (!s_ || owner_ != getpid()) return;  // a forked child's copy: the parent's to end
    try { settle(); } catch (...) {}        // (a launched job's error: nobody left to tell)
    {
      std::lock_guard<std::mutex> lock(s_->m);
      s_->quit.store(true);
    }
    s_->wake.notify_all();
    for (auto& t : s_->threads) t.join();
  }

  void run(int parts, const std::function<void(int)>& fn) {
    settle();
    if (parts <= 1) { fn(0); return; }
    start(parts - 1);
    State& st = *s_;
    st.job = &fn;
    st.parts = parts;
    st.pending.store(parts - 1);
    {
      std::lock_guard<std::mutex> lock(st.m);
      st.generation.fetch_add(1, std::memory_order_release);
    }
    st.wake.notify_all();
    std::exception_ptr mine;
    try { fn(0); } catch (...) { mine = std::current_exception(); }
    wait_pending(st);
    st.job = nullptr;
    if (mine) std::rethrow_exception(mine);
    std::lock_guard<std::mutex> lock(st.m);
    if (st.error) { auto e = st.error; st.error = nullptr; std::rethrow_exception(e); }
  }

  // Work known before the caller needs it: launch(fn) calls fn(1) on the first kept thread and
  // returns at once; settle() calls fn(0) on the caller, then waits for fn(1) to end (and
  // rethrows an error of either). fn takes its pieces one by one as run_chunks' does, so the
  // caller takes over whatever is left when it settles. run(), run_chunks(), the next launch()
  // and the destructor settle first, so a launched job never overlaps another call's work; what else
  // the job reads must stay untouched until it is settled (it is its launcher's to keep so).
  // The local best response's target rows at the learner's spots (arena/lbr_play.h, ahead()),
  // computed while Python picks the learner's actions.
  void launch(std::function<void(int)> fn) {
    settle();
    start(1);
    State& st = *s_;
    launched_ = std::move(fn);
    st.job = &launched_;
    st.parts = 2;
    st.pending.store(1);
    {
      std::lock_guard<std::mutex> lock(st.m);
      st.generation.fetch_add(1, std::memory_order_release);
    }
    st.wake.notify_all();
    in_flight_ = true;
  }

  void settle() {
    if (!in_flight_) return;
    in_flight_ = false;
    if (!s_ || owner_ != getpid()) {  // a forked child: the job was the parent's thread's
      launched_ = nullptr;
      return;
    }
    State& st = *s_;
    std::exception_ptr mine;
    try { launched_(0); } catch (...) { mine = std::current_exception(); }
    wait_pending(st);
    st.job = nullptr;
    launched_ = nullptr;
    if (mine) std::rethrow_exception(mine);
    std::lock_guard<std::mutex> lock(st.m);
    if (st.error) { auto e = st.error; st.error = nullptr; std::rethrow_exception(e); }
  }

  // fn(begin, end) over [0, count) in pieces of `chunk`, each piece taken by the next free one
  // of `parts` threads: for work whose pieces cost unevenly (a fixed split leaves one thread
  // waiting for the other). The pieces' results must not depend on which thread runs them.
  void run_chunks(int parts, std::ptrdiff_t count, std::ptrdiff_t chunk,
                  const std::function<void(std::ptrdiff_t, std::ptrdiff_t)>& fn) {
    settle();
    if (count <= 0) return;
    chunk = std::max<std::ptrdiff_t>(1, chunk);
    const std::ptrdiff_t pieces = (count + chunk - 1) / chunk;
    parts = (int)std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(parts, pieces));
    if (parts == 1) {
      for (std::ptrdiff_t k = 0; k < pieces; ++k) fn(k * chunk, std::min(count, (k + 1) * chunk));
      return;
    }
    std::atomic<std::ptrdiff_t> next{0};
    run(parts, [&](int) {
      for (std::ptrdiff_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < pieces;)
        fn(k * chunk, std::min(count, (k + 1) * chunk));
    });
  }

 private:
  struct State {
    std::mutex m;
    std::condition_variable wake, done;
    std::atomic<uint64_t> generation{0};
    std::atomic<int> pending{0};
    std::atomic<bool> quit{false};
    // Set before generation moves on; atomic because a thread that sits out a call may read
    // them while the caller sets up the next.
    std::atomic<const std::function<void(int)>*> job{nullptr};
    std::atomic<int> parts{0};
    std::exception_ptr error;  // under m
    std::vector<std::thread> threads;
  };

  static void wait_pending(State& st) {
    if (!spin_until([&] { return st.pending.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(st.m);
      st.done.wait(lock, [&] { return st.pending.load(std::memory_order_acquire) == 0; });
    }
  }

  template <typename F>
  static bool spin_until(F ready) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(SPIN_US);
    for (int i = 1;; ++i) {
      if (ready()) return true;
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return ready();
    }
  }

  void start(int wanted) {
    if (s_ && owner_ != getpid()) s_.release();  // the parent's, after a fork: left as it is
    if (!s_) {
      s_ = std::make_unique<State>();
      owner_ = getpid();
    }
    while ((int)s_->threads.size() < wanted) {
      int index = (int)s_->threads.size() + 1;
      State* st = s_.get();
      s_->threads.emplace_back([st, index] { loop(*st, index); });
    }
  }

  static void loop(State& st, int index) {
    uint64_t seen = 0;
    while (true) {
      auto moved = [&] { return st.quit.load() || st.generation.load(std::memory_order_acquire) != seen; };
      if (!spin_until(moved)) {
        std::unique_lock<std::mutex> lock(st.m);
        st.wake.wait(lock, moved);
      }
      if (st.quit.load()) return;
      seen = st.generation.load(std::memory_order_acquire);
      if (index >= st.parts.load()) continue;  // this call needs fewer threads than there are
      try {
        (*st.job.load())(index);
      } catch (...) {
        std::lock_guard<std::mutex> lock(st.m);
        if (!st.error) st.error = std::current_exception();
      }
      if (st.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(st.m);
        st.done.notify_one();
      }
    }
  }

  std::unique_ptr<State> s_;
  pid_t owner_ = 0;
  std::function<void(int)> launched_;  // the launched job, until settled
  bool in_flight_ = false;
};

}  // namespace stud
