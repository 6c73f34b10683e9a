#include "gpuforecast/farm.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "farm/lost_ranks.hpp"
#include "farm/mpi_messages.hpp"
#include "farm/wire.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace detail::farm {
namespace {
std::atomic<bool> g_lost{false};
}
void note_rank_lost() noexcept { g_lost = true; }
bool ranks_lost() noexcept { return g_lost; }
}  // namespace detail::farm

namespace {
using clock = std::chrono::steady_clock;
constexpr auto idle_pause = std::chrono::microseconds(100);
}  // namespace

struct FarmCoordinator::Impl {
  struct Worker {
    FarmRankReport report;
    bool ready = false;      // said hello and may take work
    std::optional<std::uint64_t> job;  // the job it holds
    clock::time_point last_heard;
  };
  struct Job {
    Candidate candidate;
    std::size_t attempts = 0;
    std::string reasons;
  };

  FarmCoordinatorOptions options;
  std::string device;
  std::vector<Worker> workers;  // index = rank - 1
  bool stopped = false;
  ResultHook hook;
  LostHook lost_hook;
  detail::mpi::Outbox outbox;
  std::uint64_t next_id = 0;

  // Where MPI allows it (MPI_THREAD_SERIALIZED or better), a thread of rank 0 does all of the
  // farm's MPI after the hellos: it hands out work and takes results while the strategy is busy
  // choosing (a surrogate refit), so ranks that finish then start their next job at once. The
  // caller's thread then only queues candidates and takes results, under the lock.
  std::mutex mutex;
  std::condition_variable landed_cv;
  std::thread pumper;
  bool quit = false;
  std::exception_ptr pump_error;

  ~Impl() { stop(); }

  void start_pumping() {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED) return;  // the caller's thread pumps in wait_any()
    pumper = std::thread([this] {
      std::unique_lock lock(mutex);
      while (!quit) {
        bool busy = false;
        try {
          busy = pump();
        } catch (...) {
          pump_error = std::current_exception();
          quit = true;
        }
        if (!landed.empty() || pump_error) landed_cv.notify_all();
        // Let the caller's thread in between messages too (std::mutex is not fair).
        lock.unlock();
        if (busy) std::this_thread::yield();
        else std::this_thread::sleep_for(idle_pause);
        lock.lock();
      }
      landed_cv.notify_all();
    });
  }

  void lose(Worker& w, std::string reason, const Job* held = nullptr, HeldWork went = HeldWork::none) {
    w.report.lost = true;
    w.report.reason = std::move(reason);
    w.ready = false;
    detail::farm::note_rank_lost();
    const char* fate = went == HeldWork::failed ? "failed" : "went to another rank";
    fmt::print(stderr, "farm: rank {} lost: {}{}\n", w.report.rank, w.report.reason,
               held ? fmt::format(" (its candidate {})", fate) : "");
    if (lost_hook)
      lost_hook(FarmRankLost{w.report, held ? std::optional<Config>(held->candidate.config) : std::nullopt, went});
  }

  void handle_hello(Worker& w, const std::string& body) {
    w.report.device = body;
    w.last_heard = clock::now();
    if (!device.empty() && !body.empty() && body != device) {
      w.report.reason = fmt::format("measures on {}, the search targets {}: takes no work", body, device);
      fmt::print(stderr, "farm: rank {} {}\n", w.report.rank, w.report.reason);
      outbox.send(w.report.rank, detail::wire::stop, {});
      return;
    }
    w.ready = true;
  }

  void wait_for_hellos() {
    std::size_t pending = workers.size();
    std::vector<std::optional<std::string>> hellos(workers.size());
    const auto deadline = clock::now() + std::chrono::duration<double>(options.heartbeat_timeout_s);
    while (pending > 0 && clock::now() < deadline) {
      auto m = detail::mpi::poll();
      if (!m) {
        std::this_thread::sleep_for(idle_pause);
        continue;
      }
      if (m->source < 1 || static_cast<std::size_t>(m->source) > workers.size()) continue;
      Worker& w = workers[static_cast<std::size_t>(m->source - 1)];
      if (m->tag == detail::wire::refuse) {
        w.report.reason = m->body;
        w.last_heard = clock::now();
        fmt::print(stderr, "farm: rank {} takes no work: {}\n", w.report.rank, m->body);
        --pending;
      } else if (m->tag == detail::wire::hello && !hellos[static_cast<std::size_t>(m->source - 1)]) {
        hellos[static_cast<std::size_t>(m->source - 1)] = m->body;
        --pending;
      }
    }
    // Without a target given, the search runs on the device of the lowest rank that has one,
    // whatever order the hellos came in.
    if (device.empty())
      for (const auto& h : hellos)
        if (h && !h->empty()) {
          device = *h;
          break;
        }
    for (std::size_t i = 0; i < workers.size(); ++i)
      if (hellos[i]) handle_hello(workers[i], *hellos[i]);
    for (auto& w : workers)
      if (!w.ready && w.report.device.empty() && w.report.reason.empty())
        lose(w, fmt::format("no hello within {} s", options.heartbeat_timeout_s));
    if (std::none_of(workers.begin(), workers.end(), [](const Worker& w) { return w.ready; })) {
      std::string why;
      for (const auto& w : workers) why += fmt::format("; rank {}: {}", w.report.rank, w.report.reason);
      throw error(fmt::format("farm: no worker rank can measure{}", why));
    }
  }

  // Work outstanding: queued (no rank yet) or held by a rank; and results not yet handed back.
  std::deque<std::uint64_t> queue;
  std::unordered_map<std::uint64_t, Job> jobs;
  std::vector<Landed> landed;
  std::vector<Landed> carried;  // taken by measure() for other callers: the caller's thread only

  void finish(std::uint64_t id, Measurement m) {
    const auto it = jobs.find(id);
    if (it == jobs.end()) return;  // answered already (a rank thought lost came back)
    if (hook) hook(it->second.candidate, m);
    landed.push_back(Landed{id, std::move(m)});
    jobs.erase(it);
  }
  void fail(std::uint64_t id, std::string reason) {
    Measurement m;
    m.status = Status::runtime_failed;
    m.reason = std::move(reason);
    finish(id, std::move(m));
  }

  std::uint64_t submit(const Candidate& c) {
    std::lock_guard lock(mutex);
    const auto id = next_id++;
    jobs.emplace(id, Job{c, 0, {}});
    queue.push_back(id);
    if (!pumper.joinable()) dispatch();
    return id;
  }

  // Hands queued work to every free rank.
  void dispatch() {
    for (auto& w : workers) {
      if (queue.empty()) break;
      if (!w.ready || w.job) continue;
      const auto id = queue.front();
      queue.pop_front();
      w.job = id;
      w.last_heard = clock::now();
      Job& job = jobs.at(id);
      ++job.attempts;
      outbox.send(w.report.rank, detail::wire::job, detail::wire::encode_job(id, job.candidate.config));
    }
  }

  // One step: hand out work, take one message, give up on silent ranks. False when idle.
  bool pump() {
    dispatch();
    outbox.collect();
    auto m = detail::mpi::poll();
    if (m && m->source >= 1 && static_cast<std::size_t>(m->source) <= workers.size()) {
      Worker& w = workers[static_cast<std::size_t>(m->source - 1)];
      if (w.report.lost) return true;  // a rank given up on stays given up on
      w.last_heard = clock::now();
      if (m->tag == detail::wire::result) {
        std::uint64_t id = 0;
        Measurement r = detail::wire::decode_result(m->body, id);
        if (w.job == id) w.job.reset();
        if (jobs.count(id) != 0) ++w.report.measured;
        finish(id, std::move(r));
      } else if (m->tag == detail::wire::hello) {
        handle_hello(w, m->body);
      }
      return true;  // heartbeats only refresh last_heard
    }
    // Silent ranks holding work are lost; their candidate goes back in the queue.
    const auto timeout = std::chrono::duration<double>(options.heartbeat_timeout_s);
    const auto now = clock::now();
    for (auto& w : workers) {
      if (!w.job || now - w.last_heard < timeout) continue;
      const auto id = *w.job;
      w.job.reset();
      Job& job = jobs.at(id);
      const bool gives_up = job.attempts >= options.max_attempts;
      lose(w, fmt::format("no heartbeat for {} s while measuring", options.heartbeat_timeout_s), &job,
           gives_up ? HeldWork::failed : HeldWork::requeued);
      job.reasons += fmt::format("{}rank {}: {}", job.reasons.empty() ? "" : "; ", w.report.rank, w.report.reason);
      if (gives_up)
        fail(id, fmt::format("farm: lost on {} ranks ({})", job.attempts, job.reasons));
      else
        queue.push_front(id);
    }
    bool any_busy = false, any_ready = false;
    for (const auto& w : workers) any_busy |= w.job.has_value(), any_ready |= w.ready;
    if (!any_ready && !any_busy) {
      const auto left = std::move(queue);
      queue.clear();
      for (auto id : left) {
        const std::string reasons = jobs.at(id).reasons;
        fail(id, reasons.empty() ? "farm: no worker rank left" : fmt::format("farm: no worker rank left ({})", reasons));
      }
    }
    return false;
  }

  // Everything that has come back, not only the first: results that arrived while rank 0 was
  // choosing are all handed over at once, so a strategy sees how many ranks are free and
  // chooses for all of them in one go instead of making one decision per result.
  std::vector<Landed> wait_any() {
    if (!carried.empty()) return std::exchange(carried, {});
    std::vector<Landed> out;
    {
      std::unique_lock lock(mutex);
      if (pumper.joinable()) {
        landed_cv.wait(lock, [&] { return !landed.empty() || jobs.empty() || pump_error; });
        if (pump_error) std::rethrow_exception(pump_error);
      } else {
        while (landed.empty() && !jobs.empty())
          if (!pump()) {
            lock.unlock();
            std::this_thread::sleep_for(idle_pause);
            lock.lock();
          }
        while (!jobs.empty() && pump()) {
        }
      }
      out = std::exchange(landed, {});
    }
    return out;
  }

  std::vector<Measurement> measure(std::span<const Candidate> candidates) {
    std::unordered_map<std::uint64_t, std::size_t> position;
    for (std::size_t i = 0; i < candidates.size(); ++i) position.emplace(submit(candidates[i]), i);
    std::vector<Measurement> out(candidates.size());
    std::vector<Landed> others;  // landed from submit() calls outside this batch: kept for wait_any()
    while (!position.empty()) {
      for (auto& l : wait_any()) {
        if (auto it = position.find(l.ticket); it != position.end()) {
          out[it->second] = std::move(l.measurement);
          position.erase(it);
        } else {
          others.push_back(std::move(l));
        }
      }
    }
    carried = std::move(others);
    return out;
  }

  void stop() {
    if (pumper.joinable()) {
      {
        std::lock_guard lock(mutex);
        quit = true;
      }
      pumper.join();  // from here on this thread does the MPI again
    }
    if (stopped) return;
    stopped = true;
    for (auto& w : workers)
      if (!w.report.lost && w.ready) outbox.send(w.report.rank, detail::wire::stop, {});
    const bool delivered = outbox.drain([this](int rank) { return workers[static_cast<std::size_t>(rank - 1)].report.lost; },
                                        options.heartbeat_timeout_s);
    if (!delivered) {
      // A rank that stopped answering while idle: MPI_Finalize would wait for it forever.
      detail::farm::note_rank_lost();
      fmt::print(stderr, "farm: a rank did not take its stop message within {} s\n", options.heartbeat_timeout_s);
    }
  }
};

FarmCoordinator::FarmCoordinator(std::string device, FarmCoordinatorOptions options)
    : m_impl(std::make_shared<Impl>()) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) throw invalid_argument_error(fmt::format("FarmCoordinator: runs on rank 0, this is rank {}", rank));
  if (size < 2) throw invalid_argument_error("farm: no worker rank (start it with mpirun -np 2 or more)");
  if (!(options.heartbeat_timeout_s > 0)) throw invalid_argument_error("farm: heartbeat_timeout_s must be > 0");
  if (options.max_attempts == 0) throw invalid_argument_error("farm: max_attempts must be at least 1");
  m_impl->options = options;
  m_impl->device = std::move(device);
  for (int r = 1; r < size; ++r) m_impl->workers.push_back({FarmRankReport{r, {}, 0, false, {}}, false, {}, clock::now()});
  m_impl->wait_for_hellos();
  m_impl->start_pumping();
}

std::vector<Measurement> FarmCoordinator::measure(std::span<const Candidate> candidates) {
  return m_impl->measure(candidates);
}

std::size_t FarmCoordinator::workers() const { return live_workers() * (1 + m_impl->options.queued_per_rank); }

std::uint64_t FarmCoordinator::submit(const Candidate& candidate) { return m_impl->submit(candidate); }

std::vector<Landed> FarmCoordinator::wait_any() { return m_impl->wait_any(); }

void FarmCoordinator::stop() { m_impl->stop(); }

std::string FarmCoordinator::device() const { return m_impl->device; }

void FarmCoordinator::on_result(ResultHook hook) {
  std::lock_guard lock(m_impl->mutex);
  m_impl->hook = std::move(hook);
}

void FarmCoordinator::on_rank_lost(LostHook hook) {
  std::lock_guard lock(m_impl->mutex);
  m_impl->lost_hook = std::move(hook);
}

std::vector<FarmRankReport> FarmCoordinator::ranks() const {
  std::lock_guard lock(m_impl->mutex);
  std::vector<FarmRankReport> r;
  for (const auto& w : m_impl->workers) r.push_back(w.report);
  return r;
}

std::size_t FarmCoordinator::live_workers() const {
  std::lock_guard lock(m_impl->mutex);
  std::size_t n = 0;
  for (const auto& w : m_impl->workers) n += w.ready ? 1 : 0;
  return n;
}

}  // namespace gpuforecast
